"""The errata page (docs/errata.md), generated from the catalogue.

Regenerate it with ``attention-edu examples --errata-md docs/errata.md``; a
test fails when the committed page differs from :func:`errata_markdown`.
The page leads with the errata (values wrong beyond rounding), then lists
the rounding slips in a section of their own.
"""

from __future__ import annotations

from .catalogue import entries
from .example import STATUSES
from .render import format_value, in_printed_unit

__all__ = ["errata_markdown", "status_counts"]


def status_counts() -> dict[str, int]:
    """How many catalogue entries have each status, in the order of ``STATUSES``."""
    examples = entries()
    return {s: sum(e.status == s for e in examples) for s in STATUSES}


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _computed(check) -> str:
    """The computed value in the printed value's unit (and raw, when the unit changes it)."""
    raw = format_value(check.computed)
    try:
        shown = in_printed_unit(check.printed, check.computed, check.byte_base)
    except ValueError:
        return raw
    return shown if shown.startswith(raw) else f"{shown} ({raw})"


def _section(status: str, heading: str, checks_of: str, columns: str) -> list[str]:
    lines = [heading, ""]
    for example in (e for e in entries() if e.status == status):
        lines += [f"### `{example.id}` — {example.title}", "", f"Source: {example.source}", "",
                  f"| value | printed | computed | {columns} |", "| --- | --- | --- | --- |"]
        for check in getattr(example, checks_of):
            why = check.note if status == "erratum" else f"{check.cause}: {check.note}"
            lines.append(f"| {_cell(check.name)} | {_cell(check.printed)} | "
                         f"{_cell(_computed(check))} | {_cell(why)} |")
        lines.append("")
    return lines


def errata_markdown() -> str:
    """The errata page as Markdown: the errata first, then the rounding slips."""
    counts = status_counts()
    lines = [
        "# Errata: printed values that the computation does not reproduce",
        "",
        "Generated from the worked-example catalogue (`attention_edu.worked_examples`); do not edit "
        "by hand. Regenerate with `attention-edu examples --errata-md docs/errata.md`.",
        "",
        "Each printed value is compared with the library's computation at the precision printed "
        "(a value printed as 0.482 must round to 0.482; one printed as approximate, \"~402 MB\", may "
        "also be the computed value truncated). A value that misses is a **rounding slip** when "
        "rounding alone explains it — it is what the chapter's own rounded intermediate numbers "
        "give, or the computed value truncated, or within one unit of its last printed digit — "
        "and an **erratum** when it is wrong beyond that (a wrong formula, a dropped factor, a "
        "wrong weight). "
        f"Of {sum(counts.values())} entries, {counts['reproduced']} are reproduced, "
        f"{counts['rounding']} differ only by rounding, {counts['erratum']} contain errata and "
        f"{counts['illustrative']} are illustrative (numbers with nothing to compute them from, "
        "or exercises without printed answers).",
        "",
        "Computed values are shown in the printed value's unit.",
        "",
    ]
    lines += _section("erratum", "## Errata: wrong beyond rounding", "errata", "cause")
    lines += _section("rounding", "## Rounding slips: right up to rounding", "rounding",
                      "rounding cause")
    return "\n".join(lines).rstrip("\n") + "\n"
