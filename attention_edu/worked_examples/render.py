"""Text and JSON renderings of worked examples (``Example.show`` and ``to_dict``)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..backend import format_array
from ..backend import host_numpy as np
from .printed import unit_of

__all__ = ["jsonable", "format_value", "in_printed_unit", "render_example"]

#: Arrays up to this many numbers are printed in full by ``show()``; larger ones by shape.
SMALL = 80


def jsonable(value: Any) -> Any:
    """Arrays → nested lists, NumPy scalars → Python, non-finite floats → "inf"/"-inf"/"nan"."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, np.generic):
        return jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def _number(x: float, digits: int) -> str:
    if x.is_integer() and abs(x) >= 1e4:
        return f"{x:,.0f}"
    return f"{x:.{digits}g}"


def _nested(array: Any, digits: int) -> str:
    if array.ndim == 0:
        return _number(float(array), digits)
    return "[" + ", ".join(_nested(row, digits) for row in array) + "]"


def format_value(value: Any, digits: int = 5) -> str:
    """A compact text form: numbers (also inside arrays) to ``digits`` significant digits.

    Examples
    --------
    >>> format_value([0.999955, 4.54e-05])
    '[0.99996, 4.54e-05]'
    >>> format_value(2_560_000)
    '2,560,000'
    """
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {format_value(v, digits)}" for k, v in value.items()) + "}"
    if isinstance(value, tuple) and all(isinstance(v, int) for v in value):
        return str(value)  # a shape
    if isinstance(value, (list, tuple, np.ndarray)) and len(value) and not isinstance(value[0], str):
        array = np.asarray(value)
        if array.dtype.kind in "biuf":
            return _nested(array.astype(float), digits)
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        return _number(float(value), digits)
    return str(value)


def in_printed_unit(text: str, computed: Any, byte_base: int | None = None) -> str:
    """``computed`` written in the unit of the printed ``text``, six significant digits.

    Examples
    --------
    >>> in_printed_unit("67.8%", 0.678227)
    '67.8227%'
    >>> in_printed_unit("2.5 MB", 2_560_000, byte_base=1000)
    '2.56 MB'
    >>> in_printed_unit("[0.235, 0.377]", [0.234671, 0.376185])
    '[0.234671, 0.376185]'
    """
    unit, scale = unit_of(text, byte_base)
    return _nested(np.asarray(computed, dtype=float) / scale, 6) + unit


def _indent(text: str, pad: str = "     ") -> str:
    return text.replace("\n", "\n" + pad)


def _computed(check: Any) -> str:
    """A check's computed value, in the printed value's unit when that changes how it reads."""
    raw = format_value(check.computed)
    if check.kind != "printed":
        return raw
    try:
        if not unit_of(check.printed, check.byte_base)[0]:
            return raw  # no unit: the plain number already reads as printed
        shown = in_printed_unit(check.printed, check.computed, check.byte_base)
    except ValueError:
        return raw
    return raw if shown.startswith(raw) else f"{shown} ({raw})"


def render_example(example: Any) -> str:
    """``Example.show()``: header, inputs with shapes, walkthrough, library steps, checks."""
    lines = [f"{example.id}: {example.title}", f"Source: {example.source}"]
    lines.append(f"Status: {example.status} ({example.status_reason})")
    inputs = example.inputs
    if inputs:
        lines.append("\nInputs")
        for name, value in inputs.items():
            if isinstance(value, np.ndarray):
                lines.append(f"  {name}  shape {value.shape}")
                if value.size <= SMALL:
                    lines.append(f"     {_indent(format_array(value, 3))}")
            else:
                lines.append(f"  {name} = {format_value(value)}")
    if example.walkthrough:
        lines.append("\nStep by step")
        lines.extend(f"  {line}" for line in example.walkthrough)
    if example.steps is not None:
        lines.append("\nThe library's steps (attention_edu)")
        small = max(int(np.prod(shape)) for shape in example.steps.shapes.values()) <= SMALL
        lines.append("  " + _indent(example.steps.table(values=small, precision=4), "  "))
    lines.append("\nChecks (printed vs computed, compared at the printed precision)")
    marks = {"match": "ok ", "rounding": "RND", "erratum": "ERR"}
    for c in example.checks:
        mark = marks[c.severity]
        printed = c.printed if c.kind != "answer" else f"(no printed value) {c.printed}"
        lines.append(f"  [{mark}] {c.name} [{c.kind}]")
        lines.append(f"        printed : {printed}")
        lines.append(f"        computed: {_indent(_computed(c), '                  ')}")
        if c.severity == "rounding":
            lines.append(f"        rounding: {c.cause}")
        if c.note:
            lines.append(f"        {'cause' if not c.ok else 'note'}   : {c.note}")
    if example.notes:
        lines.append("\nNotes")
        lines.extend(f"  - {note}" for note in example.notes)
    return "\n".join(lines)
