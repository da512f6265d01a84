"""Printed numbers as text → value and tolerance, so "0.482" means "rounds to 0.482".

A chapter prints a number at some precision; the catalogue compares its own
computation with that number *at the printed precision*. This module is the
one place where printed text is read. The rules:

* A decimal matches anything within half a unit of its last digit:
  ``"0.482"`` is 0.482 ± 0.0005, ``"≈ 1.3 billion"`` is 1.3e9 ± 0.05e9.
* A plain integer's trailing zeros are not significant (``"800"`` is 800 ± 50,
  ``"1000×"`` is 1000 ± 500): chapters write round figures that way.
  An integer written with thousands separators is an exact count
  (``"262,400"`` and ``"67,000,000"`` are ± 0.5).
* A value printed as approximate (a leading ``≈``, ``~``, "about",
  "approximately", "roughly") matches when it is right at its printed
  precision either way a reader may have cut it: rounded *or* truncated
  (``"~402 MB"`` for 402.65 MB matches).
* Units scale the value: ``%`` (÷100), thousand / million / billion,
  MFLOPs / GFLOPs, ``×`` and "times" (×1). Byte units (KB, MB, GB) need the
  caller to say whether the chapter means 10^3 or 2^10 (``byte_base``),
  because the chapters use both.
* ``"2 × 10^-9"`` is scientific notation; ``"[0.05, 0.82]"`` and nested
  brackets are arrays compared element by element.

A value that does not match is graded (rounding slip or erratum) by
:mod:`.severity`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..backend import host_numpy as np

__all__ = ["Printed", "parse_printed", "matches", "mismatches", "unit_of"]

_APPROX = ("≈", "~", "∼", "approximately", "approx.", "about", "roughly")
_SCALES = {
    "": 1.0, "%": 0.01, "×": 1.0, "x": 1.0, "times": 1.0, "thousand": 1e3, "million": 1e6,
    "billion": 1e9, "flops": 1.0, "mflops": 1e6, "gflops": 1e9, "tflops": 1e12,
    "flops per byte": 1.0, "flops/byte": 1.0, "b": 1.0, "bytes": 1.0, "values": 1.0,
}
_BYTE_POWERS = {"kb": 1, "mb": 2, "gb": 3}
_NUMBER = re.compile(
    r"^(?P<sign>[-−+]?)(?P<int>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<frac>\d+))?"
    r"(?:\s*[×x]\s*10\^\{?(?P<exp>[-−+]?\d+)\}?)?\s*(?P<unit>.*)$"
)


@dataclass(frozen=True)
class Printed:
    """A printed number read as ``value ± tol`` (both in base units; arrays for lists)."""

    text: str
    value: Any
    tol: Any
    approx: Any = False  # printed as approximate (per element for arrays)


def _strip_approx(text: str) -> str:
    s = text.strip()
    changed = True
    while changed:
        changed = False
        for marker in _APPROX:
            if s.lower().startswith(marker):
                s, changed = s[len(marker):].strip(), True
    return s


def _is_approx(text: str) -> bool:
    return _strip_approx(text) != text.strip()


def _scale(unit: str, byte_base: int | None, text: str) -> float:
    key = unit.strip().lower()
    if key in _BYTE_POWERS:
        if byte_base not in (1000, 1024):
            raise ValueError(f"parse_printed: {text!r} is in {unit}; pass byte_base=1000 or 1024 "
                             "to say which the chapter means")
        return float(byte_base) ** _BYTE_POWERS[key]
    if key not in _SCALES:
        raise ValueError(f"parse_printed: unknown unit {unit!r} in {text!r}")
    return _SCALES[key]


def _scalar(text: str, byte_base: int | None) -> tuple[float, float]:
    s = _strip_approx(text)
    found = _NUMBER.match(s)
    if not found:
        raise ValueError(f"parse_printed: cannot read a number from {text!r}")
    digits, frac = found["int"], found["frac"]
    value = float(digits.replace(",", "") + ("." + frac if frac else ""))
    if frac:
        tol = 0.5 * 10.0 ** -len(frac)
    elif "," in digits or digits == "0":
        tol = 0.5
    else:  # round figure: precision ends at the last non-zero digit
        tol = 0.5 * 10.0 ** (len(digits) - len(digits.rstrip("0")))
    if found["exp"]:
        power = 10.0 ** int(found["exp"].replace("−", "-"))
        value, tol = value * power, tol * power
    if found["sign"] in ("-", "−"):
        value = -value
    scale = _scale(found["unit"], byte_base, text)
    return value * scale, tol * scale


def _split_top(inner: str) -> list[str]:
    """Split bracket contents at top-level commas that are not thousands separators."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(inner):
        depth += (ch == "[") - (ch == "]")
        if ch == "," and depth == 0 and not _is_thousands(inner, i):
            parts.append(inner[start:i])
            start = i + 1
    parts.append(inner[start:])
    return [p.strip() for p in parts if p.strip()]


def _is_thousands(s: str, i: int) -> bool:
    """True when the comma at ``s[i]`` separates thousands (``1,000``), not list items."""
    return (re.match(r",\d{3}(?![\d.])", s[i:]) is not None
            and re.search(r"(?<![.\d])\d{1,3}$", s[:i]) is not None)


def _nested(text: str, byte_base: int | None, approx: bool) -> tuple[Any, Any, Any]:
    s = text.strip()
    approx = approx or _is_approx(s)
    s = _strip_approx(s)
    if s.startswith("["):
        if not s.endswith("]"):
            raise ValueError(f"parse_printed: unbalanced brackets in {text!r}")
        triples = [_nested(part, byte_base, approx) for part in _split_top(s[1:-1])]
        return tuple([t[i] for t in triples] for i in range(3))
    return (*_scalar(s, byte_base), approx)


def parse_printed(text: str, byte_base: int | None = None) -> Printed:
    """Read a printed number (or bracketed array of numbers) into value and tolerance.

    Parameters
    ----------
    text : str
        The number as the chapter prints it, e.g. ``"≈ 0.185"``, ``"2.5 MB"``,
        ``"[0.42, 0.16, 0.42]"``.
    byte_base : {1000, 1024}, optional
        Required for KB/MB/GB: what the chapter means by a kilobyte there.

    Returns
    -------
    Printed
        ``value`` and ``tol`` in base units (bytes, FLOPs, fractions); NumPy
        arrays for bracketed text.

    Examples
    --------
    >>> p = parse_printed("≈ 1.3 billion")
    >>> p.value, round(p.tol)
    (1300000000.0, 50000000)
    >>> parse_printed("10 KB", byte_base=1000).value
    10000.0
    >>> parse_printed("82%").value
    0.82
    """
    approx = _is_approx(text)
    s = _strip_approx(text)
    if s.startswith("["):
        value, tol, flags = _nested(s, byte_base, approx)
        try:
            return Printed(text, np.asarray(value, dtype=float), np.asarray(tol, dtype=float),
                           np.asarray(flags, dtype=bool))
        except ValueError as err:
            raise ValueError(f"parse_printed: ragged array in {text!r}") from err
    value, tol = _scalar(s, byte_base)
    return Printed(text, value, tol, approx)


def _slack(tol: Any) -> Any:
    # A hair of slack so that 0.45 × 0.55 = 0.24750000000000003 still "rounds to 0.248".
    return tol * (1 + 1e-9) + 1e-15


def _number(x: float) -> str:
    return f"{x:,.0f}" if abs(x) >= 1e4 and float(x).is_integer() else f"{x:.6g}"


def rounds_to(got: Any, want: Any, tol: Any) -> Any:
    """``got`` lies within ``tol`` of ``want`` (elementwise, with a hair of slack)."""
    return np.abs(got - want) <= _slack(tol)


def truncates_to(got: Any, want: Any, tol: Any) -> Any:
    """``got`` cut (towards zero) at the printed precision gives ``want``: 402.65 → 402."""
    unit = 2 * tol  # one unit of the last printed digit
    same_side = (np.sign(got) == np.sign(want)) | (want == 0)
    excess = np.abs(got) - np.abs(want)
    return same_side & (excess >= 0) & (excess < unit * (1 - 1e-9))


def mismatches(printed: Printed, computed: Any) -> list[str]:
    """Where ``computed`` falls outside the printed precision (empty list: it matches)."""
    got = np.asarray(computed, dtype=float)
    want = np.asarray(printed.value, dtype=float)
    if got.shape != want.shape:
        return [f"shape {got.shape} computed, {want.shape} printed"]
    tol = np.asarray(printed.tol, dtype=float)
    bad = ~(rounds_to(got, want, tol) | (np.asarray(printed.approx) & truncates_to(got, want, tol)))
    if want.ndim == 0:
        return [f"printed {printed.text.strip()}, computed {_number(float(got))}"] if bool(bad) else []
    return [f"[{', '.join(str(int(i)) for i in idx)}]: printed {want[idx]:g}, "
            f"computed {_number(float(got[idx]))}" for idx in zip(*np.nonzero(bad))]


def matches(text: str, computed: Any, byte_base: int | None = None) -> bool:
    """True when ``computed`` rounds to the printed ``text`` at its printed precision.

    Examples
    --------
    >>> matches("0.482", 0.48195), matches("0.482", 0.4826)
    (True, False)
    >>> matches("[0.42, 0.16, 0.42]", [0.4223, 0.1554, 0.4223])
    True
    """
    return not mismatches(parse_printed(text, byte_base), computed)


def unit_of(text: str, byte_base: int | None = None) -> tuple[str, float]:
    """The unit printed after the (first) number, as printed ("%", " MB", ""), and its scale."""
    s = _strip_approx(text)
    while s.startswith("[") and s.endswith("]") and _split_top(s[1:-1]):
        s = _strip_approx(_split_top(s[1:-1])[0])
    found = _NUMBER.match(s)
    unit = found["unit"].strip() if found else ""
    if not unit:
        return "", 1.0
    spaced = s[found.start("unit") - 1:found.start("unit")] == " " or found["unit"].startswith(" ")
    return (" " if spaced else "") + unit, _scale(unit, byte_base, text)
