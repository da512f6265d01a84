"""Naming a failure by the known misconceptions, each a deliberately wrong implementation (a *mutant*, registered by
its exercise: :mod:`..exercises`): the failure's output (or exception) is fingerprinted and the exercise's mutants run
on the same inputs; the first with the same fingerprint names the mistake (:func:`match_mistake`), else the evidence
may (:func:`read_evidence`), else the failure keeps its hint."""

import copy
import itertools
import re
from typing import Any, Callable

from ...backend import host_numpy as np
from ..exercises import all_mistakes, mistakes_for, register_mistakes, variant, variants_of
from ..judge import escape
from ..judge.harness import Outcome
from ..records import PROBES, Case, Exercise, Failure, Mistake
from ..result import CheckResult, print_notes
from . import HINTS, as_host, close, describe_difference, explain_error, same_output, show
from .evidence import READERS, diagnose_shape, diagnose_values, rank_of

__all__ = ["Mistake", "register_mistakes", "variant", "variants_of", "mistakes_for", "all_mistakes", "PROBES",
           "fingerprint", "is_stub", "failed", "failed_all", "match_mistake", "read_evidence", "INVERTED"]

_GENERIC = ("error.other", "error.broadcast", "error.matmul-shapes")     # hints that only say NumPy's error again
INVERTED = "Your mask is inverted (True = may attend). "    #: told before a mistake seen on the flipped mask


def normalise(value: Any) -> tuple:
    """A returned value as a tuple of host arrays (or ``("object", type name)`` markers)."""
    parts = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    return tuple(("object", type(p).__name__) if host is None else host for p, host in zip(parts, map(as_host, parts)))


def _error_print(kind: str, message: str) -> tuple:
    """An error's fingerprint, a broadcast's by the set of shapes that met (``s += m`` has s twice, np.where a ())."""
    head, found, shapes = message.partition("broadcast together with shapes ")
    return (("error", kind, head + found + " ".join(sorted(set(shapes.split()) - {"()"})) if found else message),)


def fingerprint(exercise: Exercise | None, thunk: Callable[[], Any]) -> tuple:
    """Run ``thunk`` and normalise what it returns or raises."""
    try:
        return normalise(thunk())       # the reference's or a mutant's: plain arrays, never a student's object
    except Exception as err:
        return _error_print(type(err).__name__, str(err))


def _outcome_print(outcome: Outcome) -> tuple | None:
    """The fingerprint of what the student's call returned or raised; None when the call was lost."""
    if outcome.timed_out or outcome.ended:
        return None
    return normalise(outcome.value) if (err := outcome.error) is None else _error_print(err.type_name, err.message)


def is_stub(outcome: Outcome) -> bool:
    """True for an untouched stub: NotImplementedError raised, or None or Ellipsis returned."""
    if outcome.timed_out or outcome.ended:
        return False
    if outcome.error is not None:
        return outcome.error.is_a("NotImplementedError")
    parts = outcome.value if isinstance(outcome.value, tuple) and outcome.value else (outcome.value,)
    return all(p is None or p is Ellipsis for p in parts)


def match_mistake(exercise: Exercise, failure: Failure, mine: tuple, known: tuple[str, ...] = ()) -> Mistake | None:
    """The first registered mistake whose mutant reproduces ``mine`` on the failure's case and gets right every case of
    its rank the function got right; one matched on an error, no output the function got right on a case it ran on.
    Mistakes in ``known`` (found on earlier probes) are tried first, then those registered for ``probe``, then for the
    case's own: one mistake that explains every probe is named once."""
    mistakes = sorted(mistakes_for(exercise.name), key=lambda m: (m.id not in known, m.probe != failure.probe,
                                                                  m.probe != failure.case.probe))
    raised = len(mine) == 1 and type(mine[0]) is tuple and mine[0][0] == "error"     # NumPy's error: of every rank
    said = getattr(failure.error, "line", "").split("#")[0]      # the student's line that raised, its comment cut
    mistakes = [m for m in mistakes if m.id in known or not (raised and said) or re.search(m.line, said)]  # 36, 77
    checks = [(c, e, e) for c, e in failure.passed if raised or rank_of(c) == rank_of(failure.case)] + [
        (c, e, _outcome_print(o)) for c, o, e in failure.ran if raised]    # (case, right, the function's): red team 78
    for mistake, mutant in ((mistake, mutant) for mistake in mistakes for mutant in variants_of(mistake)):
        theirs = fingerprint(exercise, lambda: mutant(*copy.deepcopy(failure.case.args)))[:len(mine)]   # output alone
        if same_output(mine, theirs, failure.case.float_dtypes) and all(_agrees(fingerprint(exercise, lambda: mutant(
                *copy.deepcopy(c.args))), right, its, c.float_dtypes) for c, right, its in checks):   # of its rank:
            return mistake      # axis=1 is the queries' on 3-D
    return None


def _agrees(mutants: tuple, right: tuple, functions: tuple, dtypes: tuple) -> bool:
    """Each output of the mutant's right, or the function's wrong too (another mistake may make it so)."""
    return len(mutants) == len(right) == len(functions) and all(same_output((m,), (r,), dtypes) or not same_output(
        (f,), (r,), dtypes) for m, r, f in zip(mutants, right, functions))


def read_evidence(exercise, failure, mine: tuple) -> tuple[str, str] | None:
    """The mistake that a failure's evidence names (outputs in another order, a wrong shape's, wrong values' through
    :mod:`.evidence`), or None. ``mine`` is what the function returned, as :func:`fingerprint` gives it."""
    expected, dtypes = failure.expected, failure.case.float_dtypes
    if failure.hint_id in ("harness.shape", "value.mismatch") and len(mine) == len(expected) > 1:
        for order in itertools.permutations(range(len(mine))):       # the right arrays, returned in another order
            if order != tuple(range(len(mine))) and all(
                    isinstance(mine[i], np.ndarray) and isinstance(e, np.ndarray) and mine[i].shape == e.shape
                    and close(mine[i], e, dtypes) for i, e in zip(order, expected)):
                return "value.order", HINTS["value.order"].format(order=", ".join(exercise.outputs))
    if failure.hint_id in ("harness.shape", "harness.dtype"):   # a dtype's failure, its shape wrong too: the shape
        readers = READERS.get(exercise.name, ()) if all(isinstance(a, np.ndarray) for a in mine) else ()  # not text
        if found := next(filter(None, (r(failure.case, mine, expected) for r in readers)), None):     # (red team 80)
            return found            # the exercise's own readers first (no W_O: H·d_v wide, hint study 23)
        for name, a, e in zip(exercise.outputs, mine, expected):
            if isinstance(a, np.ndarray) and isinstance(e, np.ndarray) and a.shape != e.shape:
                found = diagnose_shape(name, a, e, lambda x, y: close(x, y, dtypes))   # (B, 1, 1, n) floats: study 23
                return found and (found[0], found[1] + (" " + exercise.dtype_hint) * ("dtype" in failure.hint_id))
        return None
    if failure.hint_id not in ("value.mismatch", "value.nan") or len(mine) != len(expected):
        return None
    return diagnose_values(exercise, failure.case, mine, expected, lambda a, e: close(a, e, dtypes))


def _inputs(case: Case) -> list[str]:
    """The case's inputs: in full when it is literal (small), else arrays by shape and dtype."""
    return [f"  {name} = " + (show(arg) if isinstance(arg, np.ndarray) else repr(arg)).replace("\n", "\n      ")
            if case.literal or not isinstance(arg, np.ndarray) else f"  {name}: shape {arg.shape}, {arg.dtype}"
            for name, arg in zip(case.names, case.args)]


def _evidence(exercise: Exercise, case: Case, mine: tuple, expected: tuple) -> list[str]:
    """Each output array against the expected one: both in full for a literal case, and how they differ."""
    lines = []
    for name, a, e in zip(exercise.outputs, mine, expected):
        if not (isinstance(a, np.ndarray) and isinstance(e, np.ndarray)):
            continue
        if case.literal:
            lines.append(f"Yours:    {name} = " + show(a).replace("\n", "\n" + " " * 10))
            lines.append(f"Expected: {name} = " + show(e).replace("\n", "\n" + " " * 10))
        lines.extend(describe_difference(name, a, e, row_sums=name in exercise.row_sums))
    return lines


def _read_mutants(exercise: Exercise, failure: Failure, mine: tuple, known: tuple[str, ...]) -> tuple[str, str] | None:
    """The mistake whose mutant reproduces ``mine``, or it cast to the expected dtype, squeezed or flipped, or None."""
    case, expected = failure.case, failure.expected
    mistake = match_mistake(exercise, failure, mine, known)
    cast = mine if failure.hint_id != "harness.dtype" else tuple(    # in the expected dtype, where 0 and 1 are booleans
        a.astype(e.dtype) if isinstance(a, np.ndarray) and isinstance(e, np.ndarray) and a.dtype.kind in "biuf"
        and (e.dtype != bool or np.isin(a, (0, 1)).all()) else a for a, e in zip(mine, expected))   # -1e9 is no True
    if mistake is None and cast is not mine and not same_output(cast, expected, case.float_dtypes):
        mistake = match_mistake(exercise, failure, cast, known)
    squeezed = tuple(a.reshape(e.shape) if isinstance(a, np.ndarray) and isinstance(e, np.ndarray) and a.ndim > e.ndim
                     and np.squeeze(a).shape == np.squeeze(e).shape else a for a, e in zip(cast, expected))
    extra = max((c.ndim - s.ndim for c, s in zip(cast, squeezed) if s is not c), default=0)   # size-1 axes too many
    also = (" Your output also has " + ("an extra axis of size 1: drop it." if extra == 1 else "extra axes of size 1: "
            "drop them.")) * bool(extra) + f" {exercise.dtype_hint}" * (cast is not mine)     # TF's float (B, 1, 1, n)
    right = same_output(squeezed, expected, case.float_dtypes)     # but for the axis or the dtype: no other mistake
    if mistake is None and extra and not right and (found := match_mistake(exercise, failure, squeezed, known)):
        return found.id, found.hint + also
    if mistake is None and not right and squeezed and all(getattr(a, "dtype", None) == bool and 0 < a.sum() < a.size
                                                          for a in squeezed):
        flipped = match_mistake(exercise, failure, tuple(~a for a in squeezed), known)   # a mask of both values (red
        if flipped is not None:     # team 66) inverted, and ...: the inversion told first, every value wrong (study 30)
            return flipped.id, INVERTED + flipped.hint + also
    arity = HINTS["harness.arity"].format(arity=len(expected), order=", ".join(exercise.outputs))  # output alone (32)
    return None if mistake is None else (mistake.id, mistake.hint + f" {arity}" * (failure.hint_id == "harness.arity"))


def _details(exercise: Exercise, failure: Failure, mine: tuple | None, telling: bool) -> str:
    """The probe, the error, the inputs, the evidence, NumPy's warnings and what a lost call printed last."""
    case, outcome, expected = failure.case, failure.outcome, failure.expected
    lines = [f'Probe: {PROBES[failure.probe]}; case: {case.title}.' + (f" {case.note}" if case.note else "")]
    if (error := failure.error) is not None:
        lines.append(f"Error: {error.type_name}: {error.message}" + (f" ({error.line})" if error.line else ""))
    if case.args:
        lines.extend(["Inputs:", *_inputs(case)])
    if telling and len(mine) == len(expected):      # (w, w) for w: no element of it is read as the weights
        lines.extend(_evidence(exercise, case, mine, expected))
    if failure.evidence:
        lines.append(failure.evidence)
    if outcome.warnings:
        lines.append("NumPy warned while your function ran: " + "; ".join(outcome.warnings[:3]))
    if (outcome.timed_out or outcome.ended) and outcome.printed.strip():
        lines.append("The last lines it printed:")
        lines.extend("  " + escape(line[:200], newlines=False) for line in outcome.printed.rstrip().splitlines()[-8:])
    return "\n".join(lines)


def failed(exercise: Exercise, failure: Failure, log: list[Outcome], known: tuple[str, ...] = (),
           guess: bool = True) -> CheckResult:
    """The CheckResult for ``failure``: the mistake a mutant (unless ``guess`` is false) or the evidence names, else
    the failure's own hint (or that of its hint id or exception); then the details."""
    mine = _outcome_print(failure.outcome)     # telling: it shows the mistake, unless its values are right ((w,))
    shapes, yours = [np.shape(e) for e in failure.expected], [np.shape(a) for a in mine or ()]   # one array alone: read
    telling = (mine is not None and failure.probe not in ("inputs", "determinism")     # as the output, if so shaped
               and not same_output(mine, failure.expected[:len(mine)], failure.case.float_dtypes) and (failure.error
               or len(yours) >= len(shapes) or yours == shapes[:1] and yours[0] not in shapes[1:]))   # red team 72
    named, said = None, failure.hint_id == "error.where-without-out"     # (hint id, hint); NumPy's warning tells
    if telling and guess and not said and failure.probe != "properties":
        named = _read_mutants(exercise, failure, mine, known)
    if named is None and telling and not said:
        named = read_evidence(exercise, failure, mine)
    if named is not None:
        hint_id, hint = named
    else:
        hint_id = failure.hint_id
        if hint_id is None and failure.error is not None:
            hint_id = explain_error(failure.error, failure.case.args, failure.case.names)
        hint = failure.hint or HINTS[hint_id].format(**{"signature": exercise.signature, **failure.fields})
    return CheckResult(exercise.name, passed=False, attempted=True, summary=failure.summary, hint=hint,
                       hint_id=hint_id, probe=failure.probe, case=failure.case,
                       details=_details(exercise, failure, mine, telling), notes=print_notes(log))


def failed_all(exercise: Exercise, failures: list[Failure], log: list[Outcome]) -> list[CheckResult]:
    """:func:`failed` for each of ``failures``, each knowing the mistakes named before it. A mutant named on one case
    gives way to the evidence's reading of it where the evidence tells there, word for word, the story it tells on
    every other case it reads: the mutant matched by coincidence (a doubled dK is a missing 1/√d_k where d_k = 4)."""
    first: list[CheckResult] = []
    for failure in failures:
        first.append(failed(exercise, failure, log, tuple(r.hint_id for r in first)))
    told = {r.hint_id: {t.hint for t in first if t.hint_id == r.hint_id} for r in first}   # id -> every hint told
    mutant_ids = {m.id for m in mistakes_for(exercise.name)}
    results = []
    for failure, result in zip(failures, first):
        if result.hint_id in mutant_ids:                # only a mutant's naming reads otherwise without the mutants
            plain = failed(exercise, failure, log, guess=False)
            # a story of its own: neither the failure's hint nor a generic one for an error
            if plain.hint_id not in (failure.hint_id, *_GENERIC) and told.get(plain.hint_id) == {plain.hint}:
                result = plain
        results.append(result)
    return results
