"""Every failure of a run, diagnosed and grouped into distinct mistakes.

Each failure is named on its own (:func:`.identity.failed`: a mutant, then evidence, then the
error or the generic message), trying first the mistakes already found on earlier probes, so
that one mistake that explains many probes is named once. Across all probes the ranks the
function runs on are read too: when some ranks always work and the others always fail, a
diagnosis that only repeats NumPy's error becomes "your function works on 3-D input only".
A property's violation is listed only when no input case failed (it is then almost always a
consequence of the cases' mistakes).
"""

from __future__ import annotations

import dataclasses

from ...backend import host_numpy as np
from ..judge.harness import Outcome
from ..records import Case, Exercise
from ..result import CheckResult
from .evidence import rank_hint
from .identity import failed

__all__ = ["rank_of", "report"]


def rank_of(case: Case) -> int | None:
    """The rank of a case's first array argument (None when it has none)."""
    first = next((a for a in case.args if isinstance(a, np.ndarray)), None)
    return None if first is None else first.ndim


#: diagnoses that a clean split of the input ranks (some always work, the others always fail)
#: replaces: they only say what NumPy's error said; the specific ones (.T or np.dot on a batch) stay
_BY_RANK = {None, "error.other", "error.fixed-ndim", "error.matmul-shapes", "error.broadcast", "harness.shape",
            "shape.extra-axis", "shape.broadcast-axis"}


def report(exercise: Exercise, failures: list, runs_by_rank: dict[int, list[bool]], log: list[Outcome],
            total: int, not_run: int = 0) -> CheckResult:
    """The first failure's result, with every distinct mistake (its hint and first probe) listed.

    ``not_run`` probes were skipped after a time limit or a crash (they count as not passed).
    """
    fixed_rank = rank_hint(runs_by_rank)
    broken = {r for r, runs in runs_by_rank.items() if runs and not any(runs)}
    if any(f.probe not in ("properties", "determinism") for f, *_ in failures):
        # a property's violation is then almost always a consequence of the cases' mistakes
        failures_named = [entry for entry in failures if entry[0].probe != "properties"]
    else:
        failures_named = failures
    results: list[CheckResult] = []
    for failure, outcome, expected, hint in failures_named:
        known = tuple(r.hint_id for r in results)
        result = failed(exercise, failure, outcome, expected, log, hint, known)
        by_rank = result.hint_id in _BY_RANK
        if fixed_rank and by_rank and failure.probe in ("runs", "returns") and rank_of(failure.case) in broken:
            result = dataclasses.replace(result, hint_id="error.fixed-ndim", hint=fixed_rank)
        results.append(result)
    mistakes: dict[str, dict] = {}
    for result in results:
        mistakes.setdefault(result.hint_id, {"hint_id": result.hint_id, "probe": result.probe,
                                             "hint": result.hint})
    return dataclasses.replace(results[0], probes_passed=total - len(failures) - not_run, probes_total=total,
                               mistakes=tuple(mistakes.values()))
