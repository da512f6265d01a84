"""The gradebook ``grade`` writes: its rows, a CSV of one per submission, and Gradescope's ``results.json`` for one.

Both are written atomically (:func:`~attention_edu.arguments.written_atomically`), and every text in them that came
from a student's code is already escaped in the :class:`~.Row` (docs/teachers.md, "Gradescope").
"""

import csv
import json
import os
from dataclasses import dataclass, field
from typing import Any

from ...arguments import written_atomically
from ..records import PROBES, Exercise, hidden_cases, probe_counts

__all__ = ["FIELDS", "Row", "csv_cell", "results", "write_gradebook"]


#: The columns of ``--csv`` and the keys of every ``--json`` object, in order.
FIELDS = ("file", "passed", "attempted", "status", "hint_id", "probe", "probes_passed", "probes_total",
          "mistakes", "seed", "sandbox", "seconds", "error")


@dataclass
class Row:
    """One graded submission."""

    file: str
    passed: bool = False
    attempted: bool = False
    status: str = "not graded"
    hint_id: str | None = None
    probe: str | None = None
    probes_passed: int | None = None
    probes_total: int | None = None
    mistakes: list = field(default_factory=list)
    seed: int | None = None
    sandbox: list = field(default_factory=list)
    seconds: float = 0.0
    error: str | None = None
    probes_failed: dict = field(default_factory=dict)     # by group: see CheckResult.probes_failed
    usage: bool = False          # the error is the caller's (no such file/function), not the student's
    message: str = ""            # the full check message

    def record(self) -> dict[str, Any]:
        """The row as ``--json`` prints it: the :data:`FIELDS`, in order."""
        return {key: getattr(self, key) for key in FIELDS}


def csv_cell(value: Any) -> Any:
    r"""A CSV cell: a list as JSON, True and False as text; text a spreadsheet would run as a formula (=, +, -, @)
    after a ', and so is text that starts with a ' already (``-a.py`` and ``'-a.py`` stay two names: red team 63).

    >>> csv_cell('=HYPERLINK("x")'), csv_cell("'=1"), csv_cell(["a"]), csv_cell(3), csv_cell(True)
    ('\'=HYPERLINK("x")', "''=1", '["a"]', 3, 'True')
    """
    value = json.dumps(value) if isinstance(value, list) else str(value) if isinstance(value, bool) else value
    return "'" + value if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "'", "\t", "\r") else value


def results(exercise: Exercise, row: Row) -> dict[str, Any]:
    """Gradescope's ``results.json`` for one row: a test per group of probes, scored by the probes of that group
    passed (they add up to ``score``), hidden ones shown late; text is shown as text, never as HTML."""
    groups = probe_counts(exercise, exercise.cases() + hidden_cases(exercise, row.seed))
    found: dict[str, list[str]] = {}
    for mistake in row.mistakes:
        found.setdefault(mistake.get("probe") or "runs", []).append(
            f"{mistake.get('hint_id')}: {mistake.get('hint') or ''}".strip())
    why_missed = (", with a mistake named under an earlier test (or its hidden twin failed)" if row.attempted
                  else f": {exercise.function} is still a stub")
    tests, order = [], list(PROBES)       # in the order the probes run: "runs" and "returns" come first
    for probe in sorted({**groups, **found}, key=lambda p: order.index(p) if p in order else len(order)):
        size = groups.get(probe, 0)
        missed = size if row.error is not None else min(row.probes_failed.get(probe, 0), size)
        counted = f"{missed} of {size} not passed{why_missed}" if missed else ""
        output = row.error or "\n".join(found.get(probe, [])) or counted
        tests.append({"name": f"{probe}: {PROBES.get(probe, probe)}", "score": size - missed, "max_score": size,
                      "status": "failed" if missed or probe in found else "passed", "output": output,
                      "visibility": "after_published" if probe == "hidden" else "visible"})
    return {"score": row.probes_passed or 0, "max_score": row.probes_total or sum(groups.values()),
            "visibility": "visible", "output_format": "text", "test_output_format": "text",
            "output": row.error or row.message, "tests": tests}


def write_gradebook(csv_file: str | os.PathLike | None, gradescope: str | os.PathLike | None, exercise: Exercise,
                    records: list[dict], row: Row | None) -> tuple[list[tuple[bool, str]], bool]:
    """Write ``records`` to ``csv_file`` and ``row``'s results to ``gradescope`` (where given): the lines to print,
    (on stderr, text), and whether the gradebook could not be written (a full disk, a folder made read-only
    meanwhile: a line says so, and the rows are printed all the same)."""
    wrote = []
    try:
        if csv_file:
            with written_atomically(csv_file) as partial, open(partial, "w", newline="", encoding="utf-8") as handle:
                # text in quotes: a spreadsheet cutting on ';' and tab too keeps its cells (red team 62)
                writer = csv.DictWriter(handle, fieldnames=FIELDS, quoting=csv.QUOTE_NONNUMERIC)
                writer.writeheader()
                writer.writerows({k: csv_cell(v) for k, v in r.items()} for r in records)
            wrote.append((False, f"wrote {len(records)} row{'' if len(records) == 1 else 's'} to {csv_file}"))
        if gradescope and row is not None:
            with written_atomically(gradescope) as partial:
                partial.write_text(json.dumps(results(exercise, row), indent=2), encoding="utf-8")
            wrote.append((True, f"wrote Gradescope results for {row.file} to {gradescope}"))     # not in --json
    except OSError as error:
        wrote.append((True, f"attention-edu grade: the gradebook could not be written ({error.strerror or error})"))
        return wrote, True
    return wrote, False
