"""Printed-versus-computed tables for notebooks, with errata in a marked box.

A notebook shows a worked example's verdict with ``ae.display.verdict(example)``
(or ``verdict("fund.sdpa-example")``): the chapter's printed values next to
the library's, one row per check, and, when the example is an erratum, a
clearly marked box listing each wrong number with the right value and its
cause. The numbers come from the worked-example catalogue, never retyped.
Text for terminals and nbval, HTML for Jupyter.
"""

from __future__ import annotations

import html
from typing import Any

from . import get as get_example
from .render import format_value

__all__ = ["verdict", "Verdict"]


def _short(value: Any, width: int = 60) -> str:
    # format_value, not str(): the text must not depend on NumPy's global print options.
    text = value if isinstance(value, str) else format_value(value)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


class Verdict:
    """The checks of one worked example, displayable as text or HTML."""

    def __init__(self, example: Any):
        self.example = example

    def _rows(self) -> list[tuple[str, str, str, str, str]]:
        return [(c.name, _short(c.printed), _short(c.computed), "yes" if c.ok else "NO", c.note or "")
                for c in self.example.checks]

    def __repr__(self) -> str:
        ex = self.example
        lines = [f"{ex.id} [{ex.status}]  {ex.source}"]
        rows = self._rows()
        if rows:
            widths = [max(len(r[i]) for r in rows + [("check", "printed", "computed", "ok", "")])
                      for i in range(4)]
            header = ("check", "printed", "computed", "ok")
            lines.append("  " + "  ".join(h.ljust(w) for h, w in zip(header, widths)))
            for row in rows:
                lines.append("  " + "  ".join(v.ljust(w) for v, w in zip(row[:4], widths)))
        if ex.status == "erratum":
            lines.append("  +-- ERRATUM " + "-" * 50)
            for c in ex.errata:
                lines.append(f"  | {c.name}: the chapter prints {_short(c.printed)}; "
                             f"the correct value is {_short(c.computed)}")
                if c.note:
                    lines.append(f"  |   cause: {c.note}")
            lines.append("  +" + "-" * 62)
        elif ex.status == "illustrative":
            lines.append("  (illustrative: the chapter gives these numbers without inputs to compute "
                         "them from; only the checks above could be made)")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        ex = self.example
        esc = html.escape
        cells = "".join(
            f"<tr><td>{esc(n)}</td><td>{esc(p)}</td><td>{esc(c)}</td>"
            f"<td style='color:{'green' if ok == 'yes' else 'crimson'}'>{ok}</td></tr>"
            for n, p, c, ok, _ in self._rows())
        out = [f"<p><b>{esc(ex.id)}</b> [{esc(ex.status)}] <i>{esc(ex.source)}</i></p>",
               "<table><tr><th>check</th><th>printed</th><th>computed</th><th>ok</th></tr>",
               cells, "</table>"]
        if ex.status == "erratum":
            items = "".join(
                f"<li><b>{esc(c.name)}</b>: printed {esc(_short(c.printed))}, correct "
                f"{esc(_short(c.computed))}{' (' + esc(c.note) + ')' if c.note else ''}</li>"
                for c in ex.errata)
            out.append("<div style='border:2px solid crimson;padding:6px;margin:6px 0'>"
                       f"<b>Erratum</b><ul>{items}</ul></div>")
        return "".join(out)


def verdict(example: Any) -> Verdict:
    """The printed-vs-computed table of a worked example (an Example or its id)."""
    if isinstance(example, str):
        example = get_example(example)
    return Verdict(example)
