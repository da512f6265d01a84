"""Checkers for the exercises: they say what is wrong and why, not just "mismatch".

``check_<exercise>(fn)`` runs the student's function in a child process with a time and memory limit
(:mod:`.judge.harness`) through a fixed sequence of probes and returns a :class:`CheckResult`: a pass, or
the first failure with every distinct mistake found, each named by the deliberately wrong implementation
(a *mutant*) whose output it matches, or by its evidence (:mod:`.diagnosis`). :func:`check_answer` checks
the chapters' pen-and-paper answers. :data:`EXERCISES`, collected from :mod:`.exercises`, is the one
registry of coding exercises: Python, ``attention-edu check`` and ``grade`` all read it. Strict mode
(``strict=True`` or ``ATTENTION_EDU_STRICT=1``) raises :class:`CheckFailed` on anything but a pass, for CI.

>>> import attention_edu as ae
>>> def softmax(x):
...     raise NotImplementedError
>>> ae.checkers.check_softmax(softmax).status
'not attempted'
"""

from collections.abc import Callable

from .answers import ANSWERS, GENERIC_HINT_IDS, check_answer
from .diagnosis.evidence import EVIDENCE_IDS
from .diagnosis import HINTS
from .diagnosis.mutants import PROBES, Mistake, all_mistakes, mistakes_for
from .exercises import collect
from .exercises.entropy import attention_entropy
from .records import Exercise
from .result import STRICT_ENV, CheckFailed, CheckResult
from .runner import run_checker

#: Every coding exercise by name, in the order the exercise notebooks use them.
EXERCISES: dict[str, Exercise] = collect()

__all__ = [
    "CheckResult", "CheckFailed", "STRICT_ENV", "Exercise", "Mistake", "EXERCISES", "CHECKERS",
    "ANSWERS", "HINTS", "PROBES", "all_mistakes", "mistakes_for", "hint_ids", "attention_entropy",
    *(f"check_{name}" for name in EXERCISES), "check_answer",
]

_CHECKER_DOC = """{summary}

    Parameters
    ----------
    fn : callable
        The student's function, ``{signature}``. Every call runs in a child process.
    strict : bool, optional
        Raise :class:`CheckFailed` instead of returning a result that did not pass
        (default: the environment variable ``ATTENTION_EDU_STRICT``).
    timeout : float, optional
        Seconds allowed per call before the child is killed (default 3).
    memory_mb : float, optional
        Megabytes of memory a call may add (default 1024).

    Returns
    -------
    CheckResult
    """


def _checker(exercise: Exercise) -> Callable[..., CheckResult]:
    """The public ``check_<name>`` function of an exercise (its examples are in its module's docstring)."""
    def check(fn: Callable, strict: bool | None = None, timeout: float | None = None,
              memory_mb: float | None = None) -> CheckResult:
        return run_checker(exercise, fn, strict, timeout, memory_mb)

    check.__name__ = check.__qualname__ = f"check_{exercise.name}"
    check.__doc__ = _CHECKER_DOC.format(summary=exercise.summary, signature=exercise.signature)
    return check


#: The public checker of each exercise (``check_softmax`` and so on).
CHECKERS: dict[str, Callable[..., CheckResult]] = {name: _checker(ex) for name, ex in EXERCISES.items()}


def exercise_name(text: str) -> str:
    """The exercise name for what a user typed: ``check_softmax``, ``causal-mask`` and so on.

    >>> exercise_name("check_causal-mask")
    'causal_mask'
    """
    return text.strip().replace("-", "_").removeprefix("check_")


def hint_ids() -> list[str]:
    """Every hint id a checker can report: mistakes, properties, errors and harness findings.

    >>> "softmax.wrong-axis" in hint_ids() and "harness.timeout" in hint_ids()
    True
    """
    ids = [m.id for m in all_mistakes()] + [p.id for ex in EXERCISES.values() for p in ex.properties]
    ids += list(HINTS) + sorted(EVIDENCE_IDS) + ["harness.not-callable"]
    ids += [hint_id for spec in ANSWERS.values() for hint_id in spec.hint_ids()] + list(GENERIC_HINT_IDS)
    return sorted(set(ids))


# check_softmax, check_causal_mask, ...: one public name per exercise, so that adding an
# exercise touches its own module and its notebook only
globals().update({checker.__name__: checker for checker in CHECKERS.values()})
