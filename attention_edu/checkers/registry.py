"""The one registry of coding exercises: ``check_*``, ``attention-edu check --list`` and ``grade`` read it.

Each module of :mod:`.exercises` defines its :class:`~.records.Exercise` objects (cases,
properties, mistakes) and names them in its ``__all__``; that is all it takes to make an
exercise checkable from Python, the command line and the batch grader.
"""

from __future__ import annotations

from typing import Callable

from .answers import ANSWERS, GENERIC_HINT_IDS
from .diagnosis.evidence import EVIDENCE_IDS
from .diagnosis.hints import HINTS
from .diagnosis.mutants import all_mistakes
from .exercises import collect
from .records import Exercise
from .result import CheckResult
from .runner import run_checker

__all__ = ["EXERCISES", "CHECKERS", "checker", "hint_ids", "exercise_name"]

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


def checker(exercise: Exercise) -> Callable[..., CheckResult]:
    """The public ``check_<name>`` function of an exercise (its examples are in its module's docstring)."""
    def check(fn: Callable, strict: bool | None = None, timeout: float | None = None,
              memory_mb: float | None = None) -> CheckResult:
        return run_checker(exercise, fn, strict, timeout, memory_mb)

    check.__name__ = check.__qualname__ = f"check_{exercise.name}"
    check.__doc__ = _CHECKER_DOC.format(summary=exercise.summary, signature=exercise.signature)
    return check


#: Every coding exercise by name, in the order the exercise notebooks use them.
EXERCISES: dict[str, Exercise] = collect()

#: The public checker of each exercise (``check_softmax`` and so on).
CHECKERS: dict[str, Callable[..., CheckResult]] = {name: checker(ex) for name, ex in EXERCISES.items()}


def exercise_name(text: str) -> str:
    """The exercise name for what a user typed: ``check_softmax``, ``causal-mask`` and so on.

    >>> exercise_name("check_causal-mask")
    'causal_mask'
    """
    name = text.strip().replace("-", "_")
    return name[len("check_"):] if name.startswith("check_") else name


def hint_ids() -> list[str]:
    """Every hint id a checker can report: mistakes, properties, errors and harness findings.

    Examples
    --------
    >>> "softmax.wrong-axis" in hint_ids() and "harness.timeout" in hint_ids()
    True
    """
    ids = [m.id for m in all_mistakes()]
    ids += [p.id for ex in EXERCISES.values() for p in ex.properties]
    ids += list(HINTS) + sorted(EVIDENCE_IDS) + ["harness.not-callable"]
    ids += [hint_id for spec in ANSWERS.values() for hint_id in spec.hint_ids()] + list(GENERIC_HINT_IDS)
    return sorted(set(ids))
