"""What a builder function fills in while it computes one worked example."""

from __future__ import annotations

import re
from typing import Any

from ..backend import host_numpy as np
from ..steps import Steps
from .example import KINDS, Check
from .printed import parse_printed
from .severity import classify

__all__ = ["Builder", "parse_shape"]


def parse_shape(text: str, bindings: dict[str, int] | None = None) -> tuple[int, ...]:
    """A printed shape such as ``"10 × 128"``, ``"(B, H, L, d_k)"`` or ``"n × d_v"``.

    Symbols are looked up in ``bindings``.

    Examples
    --------
    >>> parse_shape("10 × 128")
    (10, 128)
    >>> parse_shape("(B, H, L, L)", {"B": 2, "H": 4, "L": 6})
    (2, 4, 6, 6)
    """
    bindings = bindings or {}
    tokens = [t for t in re.split(r"\s[x×]\s|[×,()\[\]\s]+", text.strip()) if t]
    shape = []
    for token in tokens:
        if token.isdigit():
            shape.append(int(token))
        elif token in bindings:
            shape.append(int(bindings[token]))
        else:
            raise ValueError(f"parse_shape: {token!r} in {text!r} is neither a number nor bound "
                             f"(bound: {', '.join(bindings) or 'nothing'})")
    return tuple(shape)


class Builder:
    """What a builder function fills in: inputs, computed values, checks, walkthrough."""

    def __init__(self) -> None:
        self.inputs: dict[str, Any] = {}
        self.computed: dict[str, Any] = {}
        self.printed: dict[str, str] = {}
        self.checks: list[Check] = []
        self.walkthrough: list[str] = []
        self.notes: list[str] = []
        self.steps: Steps | None = None

    def say(self, *lines: str) -> None:
        """Add lines to the step-by-step walkthrough."""
        self.walkthrough.extend(lines)

    def note(self, text: str) -> None:
        """A remark about the entry (conventions, what cannot be checked)."""
        self.notes.append(text)

    def _add(self, check: Check) -> Check:
        if check.kind not in KINDS:
            raise ValueError(f"Builder: check kind must be one of {KINDS}, got {check.kind!r}")
        if any(c.name == check.name for c in self.checks):
            raise ValueError(f"Builder: check {check.name!r} recorded twice")
        self.checks.append(check)
        return check

    def value(self, name: str, printed: str, computed: Any, cause: str = "",
              byte_base: int | None = None, convention: str = "",
              from_rounded: Any = None) -> Check:
        """Compare a printed number (or array) with ``computed`` at the printed precision.

        ``cause`` explains a mismatch (kept only if it occurs); ``convention``
        records how the printed text was read (e.g. "KB = 1000 bytes here").
        ``from_rounded`` is the same quantity recomputed from the chapter's
        already-rounded intermediate numbers: when it matches the printed
        value, a mismatch is a rounding slip with that cause.
        """
        self.printed[name] = printed
        self.computed.setdefault(name, computed)
        reading = parse_printed(printed, byte_base)
        grade = classify(reading, computed, from_rounded)
        if grade.severity == "match":
            note = convention
            if grade.causes:  # "~402 MB" for 402.65 MB
                note = "; ".join(filter(None, [convention, "printed as approximate: the computed "
                                               "value truncated at the printed precision"]))
        else:
            detail = "; ".join(grade.misses[:4]) + ("; ..." if len(grade.misses) > 4 else "")
            if grade.severity == "rounding":
                cause = cause or f"off only by rounding: {', '.join(grade.causes)}"
            if np.ndim(reading.value) == 0:  # printed and computed already say it all
                note = cause or f"no cause found ({detail})"
            else:
                note = f"{cause} ({detail})" if cause else f"no cause found ({detail})"
        rounding = grade.causes if grade.severity == "rounding" else ()
        return self._add(Check(name, printed, computed, grade.severity == "match", note, "printed",
                               byte_base, rounding, from_rounded))

    def shape(self, name: str, printed: str, computed_shape: tuple[int, ...],
              bindings: dict[str, int] | None = None, cause: str = "") -> Check:
        """Compare a printed shape ("10 × 128", "(B, H, L, L)") with a computed one."""
        self.printed[name] = printed
        want = parse_shape(printed, bindings)
        got = tuple(int(d) for d in computed_shape)
        note = "" if got == want else (cause or f"printed {want}, computed {got}")
        bound = f" with {', '.join(f'{k}={v}' for k, v in (bindings or {}).items())}" if bindings else ""
        return self._add(Check(name, printed, got, got == want, note or f"read{bound}", "shape"))

    def given(self, name: str, printed: str, computed: Any, ok: bool, note: str) -> Check:
        """A property of numbers the chapter gives without any way to compute them."""
        self.printed[name] = printed
        return self._add(Check(name, printed, computed, bool(ok), note, "given"))

    def answer(self, name: str, claim: str, computed: Any, ok: bool, note: str = "") -> Check:
        """A property of our own computed answer (the chapter prints no value here)."""
        return self._add(Check(name, claim, computed, bool(ok), note, "answer"))
