"""Comparing returned arrays with expected ones, and describing the difference.

Arrays are compared as numbers in float64, never through their printed
form. The tolerance follows the coarser of the student's dtype and the
inputs' dtype, so a float32 or einsum solution passes, while every
misconception in the registry misses by far more than the tolerance.
"""

from __future__ import annotations

from typing import Any

from ...backend import host_numpy as np
from ...backend import to_numpy

__all__ = ["tolerance", "as_host", "close", "same_output", "describe_difference", "show"]

# itemsize -> (rtol, atol relative to the largest expected magnitude)
_TOLERANCES = {8: (1e-5, 1e-8), 4: (1e-4, 1e-6), 2: (1e-2, 1e-3)}


def tolerance(*dtypes: Any) -> tuple[float, float]:
    """(rtol, atol) for the least precise floating dtype among ``dtypes``.

    Examples
    --------
    >>> tolerance(np.float64, np.float32)
    (0.0001, 1e-06)
    """
    sizes = [np.dtype(d).itemsize for d in dtypes if d is not None and np.dtype(d).kind == "f"]
    return _TOLERANCES.get(min(sizes, default=8), _TOLERANCES[2])


def as_host(value: Any) -> np.ndarray | None:
    """The value as a NumPy array, or None if it is not array-like (lists and tuples count as not)."""
    if value is None or isinstance(value, (list, tuple, dict, str, set)):
        return None
    if isinstance(value, (bool, int, float)):
        return np.asarray(value)
    try:
        host = to_numpy(value)
    except Exception:  # an object no backend understands
        return None
    return host if isinstance(host, np.ndarray) and host.dtype.kind in "biuf" else None


def close(actual: np.ndarray, expected: np.ndarray, dtypes: tuple = ()) -> bool:
    """Same shape and equal within the dtype-aware tolerance (NaN matches NaN).

    Booleans and integers must match exactly.

    Examples
    --------
    >>> close(np.array([1.0, np.nan]), np.array([1.0 + 1e-9, np.nan]))
    True
    >>> close(np.ones((2, 3)), np.ones((3, 2)))
    False
    """
    if actual.shape != expected.shape:
        return False
    if actual.dtype.kind in "biu" and expected.dtype.kind in "biu":
        return bool(np.array_equal(actual, expected))
    rtol, atol = tolerance(actual.dtype, expected.dtype, *dtypes)
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    with np.errstate(all="ignore"):
        finite = e[np.isfinite(e)]
        scale = max(1.0, float(np.max(np.abs(finite)))) if finite.size else 1.0
        return bool(np.allclose(a, e, rtol=rtol, atol=atol * scale, equal_nan=True))


def same_output(mine: tuple, theirs: tuple, dtypes: tuple = ()) -> bool:
    """True when two normalised outputs (tuples of arrays or errors) are indistinguishable.

    An element is either an array, or ``("error", type name, message)`` when
    the call raised. Arrays must agree in shape, dtype kind (bool, integer,
    float) and value.
    """
    if len(mine) != len(theirs):
        return False
    for a, b in zip(mine, theirs):
        a_array, b_array = isinstance(a, np.ndarray), isinstance(b, np.ndarray)
        if a_array and b_array:
            if _kind(a) != _kind(b) or not close(a, b, dtypes):
                return False
        elif a_array or b_array or a != b:
            return False
    return True


def _kind(x: np.ndarray) -> str:
    return {"u": "i"}.get(x.dtype.kind, x.dtype.kind)


def show(x: Any, max_elements: int = 60) -> str:
    """A short printout: the values when small, otherwise shape and dtype only."""
    host = as_host(x)
    if host is None:
        return f"{type(x).__name__} {x!r}"[:200]
    head = f"shape {host.shape}, {host.dtype}"
    if host.size > max_elements:
        return head
    body = np.array2string(host, precision=4, suppress_small=True, max_line_width=100)
    return f"{head}\n{body}"


def _sums(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.sum(x.astype(np.float64), axis=-1)


def _row_sums(x: np.ndarray) -> str:
    flat = np.ravel(_sums(x))
    text = np.array2string(flat[:8], precision=4, suppress_small=True)
    return text + (" ..." if flat.size > 8 else "")


def describe_difference(name: str, actual: np.ndarray, expected: np.ndarray,
                        row_sums: bool = False) -> list[str]:
    """Evidence for a mismatch: shape and dtype, NaN count, max error, first differing index."""
    lines = []
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        lines.append(f"{name}: yours has shape {actual.shape} and dtype {actual.dtype}; "
                     f"expected shape {expected.shape}, dtype {expected.dtype}")
    if actual.shape != expected.shape:
        if actual.ndim >= 2 and actual.shape[:-2] + actual.shape[-2:][::-1] == expected.shape:
            lines.append(f"{name}: your shape is the expected one with its last two axes swapped")
        return lines
    if actual.dtype.kind == "b" and expected.dtype.kind == "b":
        wrong = np.argwhere(actual != expected)
        if wrong.size:
            first = tuple(int(i) for i in wrong[0])
            lines.append(f"{name}: {len(wrong)} of {actual.size} entries differ; first at index {first}: "
                         f"yours {bool(actual[first])}, expected {bool(expected[first])}")
        return lines
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    with np.errstate(all="ignore"):
        bad = ~np.isclose(a, e, rtol=1e-5, atol=1e-8, equal_nan=True)
        nan = int(np.sum(np.isnan(a) & ~np.isnan(e)))
        err = np.abs(a - e)
        finite_err = err[np.isfinite(err)]
    if nan:
        first = tuple(int(i) for i in np.argwhere(np.isnan(a) & ~np.isnan(e))[0])
        lines.append(f"{name}: {nan} NaN value(s) where finite values are expected, first at index {first}")
    if finite_err.size:
        where = " over the finite entries" if finite_err.size < err.size else ""
        lines.append(f"{name}: max |yours - expected|{where} = {float(np.max(finite_err)):.4g}")
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        lines.append(f"{name}: first difference at index {idx}: yours {a[idx]:.6g}, expected {e[idx]:.6g}")
    if row_sums and a.ndim >= 1:
        lines.append(f"{name}: row sums, yours {_row_sums(a)}; expected {_row_sums(e)}")
        if a.ndim >= 2 and not np.allclose(_sums(a), _sums(e), equal_nan=True):
            columns, expected_columns = np.swapaxes(a, -1, -2), np.swapaxes(e, -1, -2)
            lines.append(f"{name}: column sums, yours {_row_sums(columns)}; expected {_row_sums(expected_columns)}")
    return lines
