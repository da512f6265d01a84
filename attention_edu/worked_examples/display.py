"""Printed-versus-computed tables for notebooks: errata in red, rounding slips in amber.

A notebook shows a worked example's verdict with ``ae.display.verdict(example)``
(or ``verdict("fund.sdpa-example")``): the chapter's printed values next to
the library's, one row per check, the computed value written in the printed
value's unit ("67.8227%" beside "67.8%", "102.4 KB" beside "102 KB"). Values
are never cut: a long one wraps between its numbers. Below the table, a red
ERRATUM box lists each value wrong beyond rounding with the right value and
its cause, and an amber ROUNDING box each value off only by rounding, with
why. The numbers come from the worked-example catalogue, never retyped.
Text for terminals and nbval, HTML for Jupyter.
"""

from __future__ import annotations

import html
from typing import Any

from . import get as get_example
from ..backend import host_numpy as np
from .printed import mismatches, parse_printed
from .render import format_value, in_printed_unit

__all__ = ["verdict", "Verdict", "COLOURS"]

#: Colour of each severity and status in the HTML view (text says it in words).
COLOURS = {"match": "#2e7d32", "reproduced": "#2e7d32", "rounding": "#b26a00",
           "erratum": "#c62828", "illustrative": "#616161"}
_BACKGROUND = {"rounding": "#fff8e1", "erratum": "#ffebee"}
_VERDICT = {"match": "ok", "rounding": "rounding", "erratum": "ERRATUM"}
_WIDTH = 34  # text column width; longer values wrap between numbers


def computed_text(check: Any) -> str:
    """The computed value as text, in the printed value's unit when it has one."""
    if check.kind == "printed":
        try:
            return in_printed_unit(check.printed, check.computed, check.byte_base)
        except ValueError:
            pass
    # format_value, not str(): the text must not depend on NumPy's global print options.
    return check.computed if isinstance(check.computed, str) else format_value(check.computed)


def _brief(check: Any, printed: str, computed: str) -> tuple[str, str]:
    """Long arrays as their shape and how many of their numbers differ (``brief=True``)."""
    if not (_is_long(printed) or _is_long(computed)) or check.kind != "printed":
        return printed, computed
    try:
        reading = parse_printed(check.printed, check.byte_base)
    except ValueError:
        return printed, computed
    shape = np.shape(reading.value)
    size = int(np.prod(shape))
    missed = len(mismatches(reading, check.computed))
    cells = "×".join(str(d) for d in shape)
    return f"{cells} numbers", ("all match" if not missed else f"{missed} of {size} differ")


def _wrap(text: str, width: int = _WIDTH) -> list[str]:
    """Lines of at most ``width`` characters where possible, broken only after ", "."""
    lines, line = [], ""
    for piece in " ".join(str(text).split()).replace(", ", ",\0").split("\0"):
        if line and len(line) + len(piece) + 1 > width:
            lines.append(line)
            line = piece
        else:
            line = f"{line} {piece}" if line else piece
    return lines + [line] if line or not lines else lines


def _is_long(text: str) -> bool:
    return len(text) > _WIDTH


class Verdict:
    """The checks of one worked example, displayable as text or HTML."""

    def __init__(self, example: Any, brief: bool = False):
        self.example = example
        self.brief = brief

    def _rows(self) -> list[tuple[str, str, str, str, str]]:
        """(check, printed, computed, verdict, severity) per check."""
        rows = []
        for c in self.example.checks:
            mark = _VERDICT[c.severity] + (f" ({c.cause})" if c.severity == "rounding" else "")
            printed, computed = " ".join(str(c.printed).split()), computed_text(c)
            if self.brief:
                printed, computed = _brief(c, printed, computed)
            rows.append((c.name, printed, computed, mark, c.severity))
        return rows

    def _boxes(self) -> list[tuple[str, str, list[str]]]:
        """(severity, title, lines) for the ERRATUM and ROUNDING boxes."""
        boxes = []
        for severity, checks, title in (
                ("erratum", self.example.errata, "ERRATUM: wrong beyond rounding"),
                ("rounding", self.example.rounding, "ROUNDING: right up to rounding")):
            lines = []
            for c in checks:
                printed, computed = " ".join(str(c.printed).split()), computed_text(c)
                if _is_long(printed) or _is_long(computed):
                    head = (f"{c.name}: too long to repeat (both are in the table above); the next line "
                            f"ends with the elements that differ, as [index]: printed, computed")
                elif c.kind == "given":
                    head = f"{c.name}: the chapter says {printed}; its own numbers give {computed}"
                elif severity == "erratum":
                    head = f"{c.name}: the chapter prints {printed}; the correct value is {computed}"
                else:
                    head = f"{c.name}: the chapter prints {printed}; computed {computed}"
                lines.append(head)
                why = c.note if severity == "erratum" else f"{c.cause}: {c.note}"
                lines.append(f"  {'cause' if severity == 'erratum' else 'why'}: {why}")
            if lines:
                boxes.append((severity, title, lines))
        return boxes

    def __repr__(self) -> str:
        ex = self.example
        lines = [f"{ex.id} [{ex.status}]  {ex.source}"]
        header = ("check", "printed", "computed (printed unit)", "verdict")
        rows = [(n, _wrap(p), _wrap(c), v) for n, p, c, v, _ in self._rows()]
        widths = [max([len(header[0])] + [len(r[0]) for r in rows]),
                  max([len(header[1])] + [len(x) for r in rows for x in r[1]]),
                  max([len(header[2])] + [len(x) for r in rows for x in r[2]])]
        lines.append("  " + "  ".join(h.ljust(w) for h, w in zip(header, widths)) + "  " + header[3])
        for name, printed, computed, mark in rows:
            for i in range(max(len(printed), len(computed))):
                cells = (name if i == 0 else "", printed[i] if i < len(printed) else "",
                         computed[i] if i < len(computed) else "")
                tail = mark if i == 0 else ""
                lines.append(("  " + "  ".join(v.ljust(w) for v, w in zip(cells, widths))
                              + "  " + tail).rstrip())
        for severity, title, box in self._boxes():
            lines.append(f"  +-- {title} " + "-" * max(4, 58 - len(title)))
            lines.extend(f"  | {line}" for line in box)
            lines.append("  +" + "-" * 62)
        if ex.status == "illustrative":
            lines.append("  (illustrative: the chapter gives these numbers without inputs to compute "
                         "them from; only the checks above could be made)")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        ex = self.example
        esc = html.escape
        cells = "".join(
            f"<tr><td>{esc(n)}</td><td>{esc(p)}</td><td>{esc(c)}</td>"
            f"<td style='color:{COLOURS[s]};font-weight:bold'>{esc(v)}</td></tr>"
            for n, p, c, v, s in self._rows())
        badge = (f"<span style='color:white;background:{COLOURS[ex.status]};padding:1px 6px;"
                 f"border-radius:3px'>{esc(ex.status)}</span>")
        out = [f"<p><b>{esc(ex.id)}</b> {badge} <i>{esc(ex.source)}</i></p>",
               "<table><tr><th>check</th><th>printed</th><th>computed (in the printed unit)</th>"
               "<th>verdict</th></tr>", cells, "</table>"]
        for severity, title, box in self._boxes():
            items = "".join(f"<li>{esc(line.strip())}</li>" for line in box)
            out.append(f"<div style='border:2px solid {COLOURS[severity]};background:"
                       f"{_BACKGROUND[severity]};padding:6px;margin:6px 0'>"
                       f"<b style='color:{COLOURS[severity]}'>{esc(title)}</b><ul>{items}</ul></div>")
        return "".join(out)


def verdict(example: Any, brief: bool = False) -> Verdict:
    """The printed-vs-computed table of a worked example (an Example or its id).

    With ``brief=True``, an array too long for its column is shown by its size and by how
    many of its numbers differ (for a notebook that has printed the arrays already); the
    ERRATUM and ROUNDING boxes still list the numbers that differ.

    Examples
    --------
    >>> print(verdict("fund.bahdanau-params"))  # doctest: +NORMALIZE_WHITESPACE
    fund.bahdanau-params [reproduced]  Attention Mechanisms: Fundamentals, section "Additive Attention (Bahdanau)", Parameter Count
      check       printed  computed (printed unit)  verdict
      parameters  262,400  262,400                  ok
    """
    if isinstance(example, str):
        example = get_example(example)
    return Verdict(example, brief)
