"""Gradescope's autograder ``results.json`` for one graded submission.

The top-level ``score`` is the number of probes passed and ``max_score`` their number (the row's
``probes_passed``/``probes_total``). ``tests`` has one entry per group of probes (the small
exact case, random shapes, ..., properties, determinism, hidden cases), each worth its number of
probes, ``failed`` with the hints of the mistakes found there; hidden cases are shown to the
student only once the grades are published (``visibility: after_published``).

Examples
--------
>>> from attention_edu.checkers import EXERCISES
>>> from attention_edu.checkers.judge.submission import Row
>>> row = Row("a.py", passed=False, attempted=True, status="failed", probes_passed=3, probes_total=10,
...           mistakes=[{"hint_id": "softmax.wrong-axis", "probe": "random", "hint": "Use axis=-1."}], seed=1)
>>> out = results(EXERCISES["softmax"], row)
>>> out["score"], out["max_score"], [t["status"] for t in out["tests"] if t["name"].startswith("random")]
(3, 10, ['failed'])
"""

from __future__ import annotations

from typing import Any

from ..records import PROBES, Exercise, hidden_cases
from .submission import Row

__all__ = ["results"]


def _groups(exercise: Exercise, seed: int | None) -> dict[str, int]:
    counts: dict[str, int] = {}
    for case in exercise.cases() + hidden_cases(exercise, seed):
        counts[case.probe] = counts.get(case.probe, 0) + 1
    if exercise.properties:
        counts["properties"] = len(exercise.properties)
    counts["determinism"] = 1
    return counts


def results(exercise: Exercise, row: Row) -> dict[str, Any]:
    """The ``results.json`` object for ``row`` (see the module doc)."""
    groups = _groups(exercise, row.seed)
    total = row.probes_total or sum(groups.values())
    found: dict[str, list[str]] = {}
    for mistake in row.mistakes:
        found.setdefault(mistake.get("probe") or "runs", []).append(
            f"{mistake.get('hint_id')}: {mistake.get('hint') or ''}".strip())
    if row.probe and row.probe not in found and not row.passed:
        found[row.probe] = [row.hint_id or row.status]
    tests = []
    for probe in list(groups) + [p for p in found if p not in groups]:
        size = groups.get(probe, 0)
        failed = row.error is not None or probe in found
        test = {"name": f"{probe}: {PROBES.get(probe, probe)}", "score": 0 if failed else size,
                "max_score": size, "status": "failed" if failed else "passed",
                "output": row.error if row.error else "\n".join(found.get(probe, []))}
        if probe == "hidden":
            test["visibility"] = "after_published"
        tests.append(test)
    return {"score": row.probes_passed or 0, "max_score": total, "visibility": "visible",
            "output": row.error or row.message, "tests": tests}
