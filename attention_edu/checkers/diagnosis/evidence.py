"""Diagnosis by evidence: what a wrong output shows about the mistake that made it.

A mutant names a mistake only when the student's output is identical to its own; real code often spells a mistake
in a way no mutant does, or makes two at once. So the failure itself is read: values rounded, the axis the output sums
to one over, an axis too many, too few or out of place, a constant offset or factor, which outputs are right, which
ranks the function runs on. A mistake is named only when its evidence holds; exercises add readers (:func:`reads`)."""

from typing import Callable

from ...backend import host_numpy as np
from . import HINTS, close

__all__ = ["reads", "READERS", "EVIDENCE_IDS", "diagnose_values", "diagnose_shape", "sums_to_one_axis", "extra_axis",
           "constant_relation", "temperature", "rank_of", "rank_hint", "which_right", "partly"]

Reader = Callable[..., tuple[str, str] | None]
READERS: dict[str, list[Reader]] = {}     #: an exercise's name -> its own readers (:func:`reads`)
EVIDENCE_IDS: set[str] = {"value.rounded"}      #: the hint ids these readers, and the exercises' own, can report
_ROUNDED = "Every value of your {name} is the expected one rounded to {k} decimals: return the values unrounded."


def reads(exercise: str, *ids: str) -> Callable[[Reader], Reader]:
    """Decorator: ``reader(case, mine, expected) -> (hint id, hint) or None`` reads ``exercise``, reporting ``ids``."""
    def register(fn: Reader) -> Reader:
        EVIDENCE_IDS.update(ids)
        READERS.setdefault(exercise, []).append(fn)
        return fn
    return register


def sums_to_one_axis(x: np.ndarray) -> int | None:
    """The one axis over which ``x`` sums to 1 everywhere; None for none, several, or negative or non-finite values."""
    if x.ndim == 0 or x.size == 0 or not np.all(np.isfinite(x)) or np.any(x < 0):
        return None
    found = [a for a in range(x.ndim) if x.shape[a] > 1 and np.allclose(np.sum(x, axis=a), 1.0, atol=1e-5)]
    return found[0] if len(found) == 1 else None


def extra_axis(actual: tuple, expected: tuple) -> tuple[int, int] | None:
    """``(axis, size)`` when ``actual`` is ``expected`` with one axis inserted (the first such axis), else None."""
    return next(((axis, int(actual[axis])) for axis in range(len(actual))
                 if actual[:axis] + actual[axis + 1:] == tuple(expected)), None)


def constant_relation(mine: np.ndarray, want: np.ndarray) -> tuple[str, float] | None:
    """``("offset", c)`` when mine = want + c, ``("factor", r)`` when mine = r · want, else None."""
    a, e = mine.astype(np.float64).ravel(), want.astype(np.float64).ravel()
    ok = np.isfinite(a) & np.isfinite(e)
    # NaN or inf where a finite value is expected is another mistake (overflow), not a relation
    if ok.sum() < 2 or mine.shape != want.shape or not ok[np.isfinite(e)].all():
        return None
    a, e = a[ok], e[ok]
    scale = max(1.0, float(np.max(np.abs(e))))
    offset = float(np.median(a - e))
    if abs(offset) > 1e-6 * scale and np.allclose(a - e, offset, atol=1e-7 * scale):
        return "offset", offset
    big = np.abs(e) > 1e-6 * scale
    if big.sum() >= 2 and np.allclose(a[~big], 0.0, atol=1e-5 * scale):      # tiny where the expected is tiny
        ratio = a[big] / e[big]
        r = float(np.median(ratio))
        if abs(r - 1.0) > 1e-4 and abs(r) > 1e-3 and np.allclose(ratio, r, rtol=1e-6):
            return "factor", r
    return None


def factor_cause(r: float, case, advice: bool = True) -> str:
    """What a factor ``r`` (yours / expected) points at where it tells: −1, 1/ln 10 or 1/ln 2 (a logarithm's base), or
    a size above 2 of an input axis (2 is too often a coincidence), its inverse or root; ``advice``: where to look."""
    if abs(r + 1.0) < 1e-6:
        return ": the opposite sign everywhere (a minus sign lost or added, or a difference taken the wrong way round)"
    for base in (10, 2):
        if abs(r * np.log(base) - 1.0) < 1e-6:
            return f", 1/ln {base}: a base-{base} logarithm (np.log{base}) where the natural log, np.log, belongs"
    for power, form in ((0.5, "the square root of the size"), (-0.5, "one over the square root of the size"),
                        (1, "the size"), (-1, "one over the size")):
        axes = [f"axis {axis - arg.ndim} of {name}" for name, arg in zip(case.names, case.args)
                if isinstance(arg, np.ndarray) for axis, size in enumerate(arg.shape)
                if size > 2 and abs(r - size ** power) < 1e-6 * abs(r)]
        if axes:
            return f", {form} of {_names(axes[:2])} ({round(r ** (1 / power))})" + advice * (": look where your code "
                   "divides or multiplies by that size or its square root (a mean over an axis divides by its size)")
    return ""


def which_right(outputs: tuple[str, ...], mine: tuple, expected: tuple, close: Callable) -> list[bool] | None:
    """For a multi-output function, which of its outputs match (None when they cannot be compared)."""
    if len(outputs) < 2 or not all(isinstance(a, np.ndarray) and isinstance(e, np.ndarray) and a.shape == e.shape
                                   for a, e in zip(mine, expected)):
        return None
    return [close(a, e) for a, e in zip(mine, expected)]


def _names(items: list[str]) -> str:
    """"a", "a and b", "a, b and c"."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def partly(names: tuple[str, ...], right: list[bool]) -> dict[str, str]:
    """``right`` and ``wrong`` phrases for outputs ``names``: "dV is right", "dQ and dK are not"."""
    good = [n for n, r in zip(names, right) if r]
    bad = [n for n, r in zip(names, right) if not r]
    return {"right": f"{_names(good)} {'is' if len(good) == 1 else 'are'} right",
            "wrong": f"{_names(bad)} {'is' if len(bad) == 1 else 'are'} not"}


def _weights_or_mask(name: str, a: np.ndarray, e: np.ndarray, row_sums: tuple, case) -> tuple[str, dict] | None:
    """What a wrong array of weights or a wrong boolean mask shows: weights with negative or infinite entries (scores),
    or weight where the expected gives none on a case with a mask or a −inf (elsewhere a zero is an underflow); a mask
    with one key more or fewer in every row that has room, or the right count of keys in the wrong places."""
    masked = any(isinstance(x, np.ndarray) and (x.dtype == bool or np.any(np.isneginf(x))) for x in case.args)
    if name in row_sums and a.dtype.kind == "f" and np.all(np.isfinite(e)):
        if np.any(np.isinf(a)) or np.any(a < 0):
            return "value.not-weights", {"name": name}
        if masked and np.any((e == 0) & (np.abs(a) > 1e-12) & np.any(e > 0, axis=-1, keepdims=True)):
            return "value.masked-weight", {"name": name}
    if a.dtype == e.dtype == np.bool_:
        wanted = np.sum(e, axis=-1)
        diff = np.sum(a, axis=-1) - wanted
        moved, still = diff[diff != 0], wanted[diff == 0]           # rows with a key more or fewer; rows unchanged
        if moved.size > 1 and np.all(moved == moved.flat[0]) and np.all((still == 0) | (still == e.shape[-1])):
            count = int(abs(moved.flat[0]))
            return "value.mask-count", {"name": name, "count": count, "s": "s" * (count > 1),
                                        "more": "more" if moved.flat[0] > 0 else "fewer"}
        if not diff.any():
            return "value.mask-place", {"name": name}
    return None


def temperature(a: np.ndarray, e: np.ndarray) -> float | None:
    """``c`` where each row of ``a`` is the softmax of ``c`` times the scores whose softmax is that row of ``e``: rows
    that sum alike, zero in the same places, and logs that, centred per row, are ``c`` times the expected ones."""
    if a.dtype.kind != "f" or np.any((a > 0) != (e > 0)) or not np.allclose(a.sum(-1), e.sum(-1), atol=1e-5):
        return None
    kept, count = e > 0, np.maximum(np.sum(e > 0, axis=-1, keepdims=True), 1)
    logs = [np.log(np.where(kept, x, 1.0)) for x in (a, e)]
    mine, want = (np.where(kept, x - np.sum(x * kept, axis=-1, keepdims=True) / count, 0.0) for x in logs)
    relation = constant_relation(mine, want)
    return relation[1] if relation is not None and relation[0] == "factor" else None


def diagnose_values(exercise, case, mine: tuple, expected: tuple, close: Callable) -> tuple[str, str] | None:
    """A named mistake from the values of a wrong output, or None when no evidence holds."""
    found = next(filter(None, (reader(case, mine, expected) for reader in READERS.get(exercise.name, ()))), None)
    if found is not None:
        return found
    for name, a, e in zip(exercise.outputs, mine, expected):
        if isinstance(a, np.ndarray) and isinstance(e, np.ndarray) and a.shape == e.shape and a.ndim:
            grid = [k for k in range(1, 7) if e.dtype.kind == "f" and np.allclose(a, np.round(e, k), 0, 0.01 / 10**k)
                    and not np.allclose(a, np.round(a, k - 1), 0, 0.01 / 10**k)]    # its k-th decimal used: not zeros
            if grid and not np.allclose(a, e, 1e-12, 1e-12):     # rounded to print, not right (study 34's 08, 17, 19)
                return "value.rounded", _ROUNDED.format(name=name, k=grid[0])
            found = _weights_or_mask(name, a, e, exercise.row_sums, case)
            if found is None and name in exercise.row_sums and (c := temperature(a, e)) is not None:
                found = "value.scaled-scores", {"name": name, "value": c, "cause": factor_cause(c, case, False)}
            if found is not None:
                return found[0], HINTS[found[0]].format(**found[1])
    right = which_right(exercise.outputs, mine, expected, close)
    if right is not None and any(right) and not all(right):
        return "value.partly-right", HINTS["value.partly-right"].format(**partly(exercise.outputs, right))
    for name, a, e in zip(exercise.outputs, mine, expected):
        arrays = isinstance(a, np.ndarray) and isinstance(e, np.ndarray)
        if name in exercise.row_sums and arrays and a.shape == e.shape and a.ndim >= 2:
            axis = sums_to_one_axis(a)
            if axis is not None and axis != a.ndim - 1 and sums_to_one_axis(e) == e.ndim - 1:
                what = f"axis {axis - a.ndim}" + ", the rows: for attention weights, the queries" * (axis == a.ndim - 2)
                return "value.wrong-axis", HINTS["value.wrong-axis"].format(name=name, axis=f"axis {axis} of the "
                                                                            f"{a.ndim}-D input ({what})")
    for name, a, e in zip(exercise.outputs, mine, expected):
        if isinstance(a, np.ndarray) and isinstance(e, np.ndarray) and not close(a, e) and (
                relation := constant_relation(a, e)) is not None:
            (kind, value), cause = relation, factor_cause(relation[1], case) if relation[0] == "factor" else ""
            hint = HINTS[f"value.{kind}"].format(name=name, value=value)
            return f"value.{kind}", hint.split(": look for")[0] + cause + "." if cause else hint
    return None


#: hints when a returned shape is the expected one with an axis too many, too few or out of place
_SHAPES = {
    "shape.extra-axis": "Your {name} has shape {shape}, the expected {expected} with an extra axis {axis} of size 1: "
        "a reduction kept its axis (keepdims=True) where the result should drop it, or an index added one ([:, "
        "np.newaxis], None).",
    "shape.broadcast-axis": "Your {name} has shape {shape}, the expected {expected} with an extra axis {axis} of size "
        "{size}: two arrays broadcast against each other, one with an axis kept twice (keepdims=True and [:, "
        "np.newaxis] together); keep the reduced axis one way only.",
    "shape.missing-axis": "Your {name} has shape {shape}, the expected {expected} without its axis {axis} of size 1: "
        "keep that axis (a reduction with keepdims=True, no .squeeze() or [0]); code that handles a single row or "
        "query drops it, and must work on every row at once instead.",
    "shape.square-axis": "Your {name} has shape {shape}, the expected {expected} without its last axis: where yours "
        "has n = {size} values, one per position, the expected holds an n × n matrix, an entry [i, j] for every pair "
        "of positions (as the Jacobian of n weights has). A diagonal or row sums alone are not that matrix: build it "
        "whole (np.diag, np.outer; for a batch, pair w[..., :, None] with w[..., None, :]).",
    "shape.reduced-axis": "Your {name} has shape {shape}: the expected {expected} {size} over its axis {axis}. Return "
        "every value; the .mean() or .sum() over that axis goes a step beyond what the exercise asks.",
    "shape.one-number": "Your {name} is one number where shape {expected} is expected: a reduction with no axis "
        "(np.sum(x), np.mean(x), x.sum()) reduces every axis at once; reduce over axis=-1 only, one value per row.",
    "shape.reshaped": "Your {name} has shape {shape}, not {expected}, but holds the right values in the right order: a "
        "reshape joined or split axes that must stay apart (a batch folded into another axis, (B·H, ...) for (B, H, "
        "...), or a matrix flattened into one).",
    "shape.moved-axis": "Your {name} has shape {shape}, not {expected}, but holds the right values with its axis "
        "{axis} out of place: np.moveaxis(x, {axis}, {size}) gives the expected layout, so build it with its axes in "
        "that order (batch axes first).",
}
EVIDENCE_IDS.update(_SHAPES)


def diagnose_shape(name: str, mine: np.ndarray, want: np.ndarray, same: Callable) -> tuple[str, str] | None:
    """A named extra axis or missing one (of size 1, a matrix of pairs's second, or one averaged or summed away), or
    the right values (``same``) with one axis moved or reshaped."""
    actual, expected = mine.shape, want.shape
    if (found := extra_axis(actual, expected)) is not None:
        key = "shape.extra-axis" if found[1] == 1 else "shape.broadcast-axis"
    elif (found := extra_axis(expected, actual)) is not None and found[1] == 1:
        key = "shape.missing-axis"
    elif actual and expected == actual + actual[-1:]:       # (..., n) where (..., n, n) pairs every two entries
        key, found = "shape.square-axis", (len(actual), actual[-1])
    elif (found := extra_axis(expected, actual)) and (how := next((how for how, reduce in (("averaged", np.mean), (
            "summed", np.sum)) if same(mine, reduce(want, axis=found[0]))), None)):     # found: (axis, how)
        key, found = "shape.reduced-axis", (found[0], how)
    elif not actual and expected:
        key, found = "shape.one-number", (0, 1)
    elif found := next(((i, j) for i in range(mine.ndim) for j in range(mine.ndim) if i != j and mine.ndim == want.ndim
                        and np.moveaxis(mine, i, j).shape == expected and same(np.moveaxis(mine, i, j), want)), None):
        key = "shape.moved-axis"                                                # found: (from, to)
    elif mine.size == want.size and same(mine.reshape(expected), want):
        key, found = "shape.reshaped", (0, 0)
    else:
        return None
    return key, _SHAPES[key].format(name=name, axis=found[0], size=found[1], shape=actual, expected=expected)


def rank_of(case) -> int | None:
    """The rank of a case's first array argument (None when it has none)."""
    return next((a.ndim for a in case.args if isinstance(a, np.ndarray)), None)


#: the text of ``error.fixed-ndim`` when the ranks that run and those that fail are known
_RANKS = ("Your function runs on {works}; it fails on {fails} input, and the exercise passes any number "
          "of leading batch axes: count axes from the end (x.shape[-1], axis=-1, np.swapaxes(K, -1, -2), "
          "reshape(*x.shape[:-1], ...)).")


def rank_hint(runs_by_rank: dict[int, list[bool]]) -> str | None:
    """The fixed-rank hint when every case of some ranks worked and every case of the others did not
    (``runs_by_rank``: an input rank -> for each of its cases, whether the call ran and returned the expected shape)."""
    works = sorted(r for r, runs in runs_by_rank.items() if runs and all(runs))
    fails = sorted(r for r, runs in runs_by_rank.items() if runs and not any(runs))
    if not works or not fails or len(works) + len(fails) != len(runs_by_rank):
        return None
    return _RANKS.format(works=_names([f"{r}-D" for r in works]) + " input" + " only" * (len(works) == 1),
                         fails=_names([f"{r}-D" for r in fails]))
