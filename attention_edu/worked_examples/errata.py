"""The errata page (docs/errata.md), generated from the catalogue.

Regenerate it with ``attention-edu examples --errata-md docs/errata.md``; a
test fails when the committed page differs from :func:`errata_markdown`.
"""

from __future__ import annotations

from .catalogue import entries
from .render import format_value

__all__ = ["errata_markdown"]


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def errata_markdown() -> str:
    """The errata page as Markdown: every failing check of every entry."""
    examples = entries()
    counts = {s: sum(e.status == s for e in examples) for s in ("reproduced", "erratum", "illustrative")}
    lines = [
        "# Errata: printed values that the computation does not reproduce",
        "",
        "Generated from the worked-example catalogue (`attention_edu.worked_examples`); do not edit "
        "by hand. Regenerate with `attention-edu examples --errata-md docs/errata.md`.",
        "",
        "Each printed value is compared with the library's computation at the precision printed "
        "(a value printed as 0.482 must round to 0.482). "
        f"Of {len(examples)} entries, {counts['reproduced']} are reproduced, "
        f"{counts['erratum']} contain errata and {counts['illustrative']} are illustrative "
        "(numbers with nothing to compute them from, or exercises without printed answers).",
        "",
    ]
    for example in examples:
        if example.status != "erratum":
            continue
        lines += [f"## `{example.id}` — {example.title}", "", f"Source: {example.source}", "",
                  "| value | printed | computed | cause |", "| --- | --- | --- | --- |"]
        for check in example.errata:
            lines.append(f"| {_cell(check.name)} | {_cell(check.printed)} | "
                         f"{_cell(format_value(check.computed))} | {_cell(check.note)} |")
        lines.append("")
    return "\n".join(lines)
