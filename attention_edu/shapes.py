"""Runtime shape checks with named dimensions, and errors a beginner can act on.

Every public function starts the same way::

    dims = Dims("scaled_dot_product_attention")
    dims.array("Q", Q, "... m d_k")      # binds m and d_k
    dims.array("K", K, "... n d_k")      # binds n, re-checks d_k
    dims.array("V", V, "... n d_v")      # re-checks n, binds d_v
    dims.mask("mask", mask, "... m n")   # boolean, broadcastable to the scores
    xp = get_xp(Q, K, V, mask)           # after the checks, which name a stray library

A pattern is a space-separated list of dimension names, integers, and an
optional leading ``...`` for batch dimensions (which must broadcast across
arguments). The first argument that shows a name binds it; later arguments
must agree, and a disagreement raises :class:`ShapeError` naming the
function, the argument, the pattern, the actual shape and who bound the
dimension::

    scaled_dot_product_attention: K has shape (5, 4) but pattern (..., n, d_k)
    needs d_k = 3, bound by Q (5, 3)

Why not jaxtyping (its messages omit where a dimension was bound): docs/jaxtyping-evaluation.md.
"""

from __future__ import annotations

import operator
from typing import Any

from .backend import device_of, get_xp

__all__ = ["ShapeError", "Dims", "broadcast_shapes", "positive_int", "positive_sizes"]


class ShapeError(ValueError):
    """An argument's shape does not fit the pattern the function needs (a ``ValueError``).

    Examples
    --------
    >>> import numpy as np
    >>> import attention_edu as ae
    >>> try:
    ...     ae.scaled_dot_product_attention(np.ones((5, 3)), np.ones((5, 4)), np.ones((5, 2)))
    ... except ae.ShapeError as err:
    ...     print(err)
    scaled_dot_product_attention: K has shape (5, 4) but pattern (..., n, d_k) needs d_k = 3, bound by Q (5, 3)
    """


def positive_int(func: str, name: str, value: Any, minimum: int = 1) -> int:
    """``value`` as an int ≥ ``minimum``, 1 or 0 (a seed, a count that may be 0), else a ValueError naming both."""
    try:            # an array has __index__ too, which raises unless it holds one integer
        index = None if isinstance(value, bool) else operator.index(value)
    except TypeError:
        index = None
    if index is not None and index >= minimum:
        return index
    shown = f"an array of shape {tuple(value.shape)}" if getattr(value, "ndim", 0) else repr(value)   # not its values
    raise ValueError(f"{func}: {name} must be {'an int >= 0' if minimum == 0 else 'a positive int'}, got {shown}")


def positive_sizes(func: str, **sizes: Any) -> None:
    """Check that every keyword is a positive int (see :func:`positive_int`)."""
    for name, value in sizes.items():
        positive_int(func, name, value)


def _dimensions(count: int) -> str:
    return f"{count} dimension" + ("" if count == 1 else "s")


def broadcast_shapes(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    """NumPy broadcasting of two shapes, or ``None`` if they do not broadcast."""
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and 1 not in (x, y):
            return None
        out.append(y if x == 1 else x)
    return tuple(reversed(out))


def _fmt(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def _fmt_pattern(tokens: list[str]) -> str:
    return "(" + ", ".join(tokens) + ")"


class Dims:
    """Named dimensions bound while the arguments of one call are checked.

    Parameters
    ----------
    func : str
        Name of the public function, used in every message.

    Examples
    --------
    >>> import numpy as np
    >>> dims = Dims("demo")
    >>> dims.array("Q", np.zeros((5, 3)), "... m d_k")
    >>> dims["d_k"], dims.batch
    (3, ())
    >>> dims.array("K", np.zeros((5, 4)), "... n d_k")
    Traceback (most recent call last):
    ...
    attention_edu.shapes.ShapeError: demo: K has shape (5, 4) but pattern (..., n, d_k) needs d_k = 3, bound by Q (5, 3)
    """

    def __init__(self, func: str):
        self.func = func
        self._bound: dict[str, tuple[int, str]] = {}   # name -> (size, "Q (5, 3)")
        self.batch: tuple[int, ...] = ()
        self._batch_from: list[str] = []
        self._dtype: tuple[Any, str] | None = None
        self._library: tuple | None = None   # (xp, library, device, first argument)

    def __getitem__(self, name: str) -> int:
        return self._bound[name][0]

    def error(self, message: str) -> ShapeError:
        """A :class:`ShapeError` prefixed with the function name."""
        return ShapeError(f"{self.func}: {message}")

    # -- shapes ---------------------------------------------------------------
    def shape(self, arg: str, shape: tuple[int, ...], pattern: str) -> None:
        """Check a bare shape against ``pattern`` and bind its dimensions."""
        tokens = pattern.split()
        batched = bool(tokens) and tokens[0] == "..."
        named = tokens[1:] if batched else tokens
        where = f"{arg} {_fmt(shape)}"
        shown = _fmt_pattern(tokens)
        if len(shape) < len(named) or (not batched and len(shape) != len(named)):
            need = f"at least {len(named)}" if batched else f"exactly {len(named)}"
            raise self.error(f"{arg} has shape {_fmt(shape)} ({_dimensions(len(shape))}) but pattern "
                             f"{shown} needs {need} {'dimension' if len(named) == 1 else 'dimensions'}")
        core = shape[len(shape) - len(named):]
        trial = dict(self._bound)
        for token, size in zip(named, core):
            problem = self._bind(trial, token, size, where)
            if problem:
                hint = self._transpose_hint(named, core, arg)
                raise self.error(f"{arg} has shape {_fmt(shape)} but pattern {shown} needs {problem}{hint}")
        for token, size in zip(named, core):
            if size == 0:
                raise self.error(f"{arg} has shape {_fmt(shape)}: dimension {token} is 0, but attention needs "
                                 f"at least one {'key' if token == 'n' else 'entry'} along it")
        if batched:
            self._merge_batch(arg, shape[: len(shape) - len(named)], where)
        self._bound = trial

    def _merge_batch(self, arg: str, lead: tuple[int, ...], where: str | None) -> None:
        """Broadcast ``lead`` into the batch shape bound so far (``where`` names the source)."""
        merged = broadcast_shapes(self.batch, lead)
        if merged is None:
            raise self.error(f"{arg} has batch dimensions {_fmt(lead)} that do not broadcast with "
                             f"{_fmt(self.batch)} from {', '.join(self._batch_from)}")
        self.batch = merged
        if where is not None:
            self._batch_from.append(where)

    def _bind(self, bound: dict, token: str, size: int, where: str) -> str | None:
        if token.isdigit():
            return None if int(token) == size else f"{token} there, got {size}"
        if token in bound:
            want, source = bound[token]
            return None if want == size else f"{token} = {want}, bound by {source}"
        bound[token] = (size, where)
        return None

    def _transpose_hint(self, named: list[str], core: tuple[int, ...], arg: str) -> str:
        if len(core) < 2:
            return ""
        swapped = core[:-2] + (core[-1], core[-2])
        trial = dict(self._bound)
        if all(self._bind(trial, t, s, "") is None for t, s in zip(named, swapped)):
            return f" (it looks transposed: pass {arg} with its last two axes swapped)"
        return ""

    # -- whole arguments ------------------------------------------------------
    def namespace(self, arg: str, x: Any) -> Any:
        """The namespace of array argument ``arg``; all arguments share one library and device."""
        try:
            xp = get_xp(x)
        except TypeError:
            kind = ("an " if type(x).__name__[0] in "aeiouAEIOU" else "a ") + type(x).__name__     # an int
            raise TypeError(f"{self.func}: {arg} is {kind}, not an array; wrap it "
                            f"with numpy.asarray (or your array library's asarray) first") from None
        library, device = type(x).__module__.split(".")[0], device_of(x)
        if self._library is None:
            self._library = (xp, library, device, arg)
        elif xp is not self._library[0]:
            raise TypeError(f"{self.func}: {arg} is an array from {library} but {self._library[3]} is "
                            f"from {self._library[1]}; move all arrays to one library first")
        elif device != self._library[2]:
            raise ValueError(f"{self.func}: {arg} is on device {device} but {self._library[3]} is on "
                             f"device {self._library[2]}; move all arrays to one device first")
        return xp

    def array(self, arg: str, x: Any, pattern: str, *, finite: bool = True) -> None:
        """Check a floating-point array argument: type, dtype, finiteness, shape.

        All floating arguments of one call must share one dtype (so that the
        dtype in is the dtype out). NaN or infinite values raise ``ValueError``.
        """
        if x is None:
            raise TypeError(f"{self.func}: {arg} is None; pass an array of shape {_fmt_pattern(pattern.split())}")
        xp = self.namespace(arg, x)
        if not xp.isdtype(x.dtype, "real floating"):
            fix = f"{arg}.double()" if hasattr(x, "double") else f"{arg}.astype('float64')"   # torch has no astype
            raise TypeError(f"{self.func}: {arg} has dtype {x.dtype} but attention needs floating-point "
                            f"numbers; convert it, e.g. {fix}")
        if self._dtype is None:
            self._dtype = (x.dtype, arg)
        elif x.dtype != self._dtype[0]:
            raise TypeError(f"{self.func}: {arg} has dtype {x.dtype} but {self._dtype[1]} has dtype "
                            f"{self._dtype[0]}; give all arrays the same floating dtype")
        self.shape(arg, tuple(x.shape), pattern)
        if finite and not bool(xp.all(xp.isfinite(x))):
            kind = "NaN" if bool(xp.any(xp.isnan(x))) else "infinite"
            raise ValueError(f"{self.func}: {arg} {_fmt(tuple(x.shape))} contains {kind} values")

    def mask(self, arg: str, mask: Any, pattern: str = "... m n") -> Any:
        """Check a boolean mask broadcastable to the pattern's (already bound) shape; return it with at least
        the pattern's axes (a key mask (n,) as (1, n), as NumPy broadcasts it).

        The mask joins the batch broadcast, so a mask with extra leading axes
        widens the output's batch shape.
        """
        if mask is None:
            return None
        xp = self.namespace(arg, mask)
        if mask.dtype != xp.bool:
            raise TypeError(f"{self.func}: {arg} has dtype {mask.dtype} but masks are boolean, "
                            f"True = may attend; build one with causal_mask/padding_mask or (x != 0)")
        named = pattern.split()[1:]
        shape = (1,) * (len(named) - len(mask.shape)) + tuple(mask.shape)  # (n,) broadcasts as (1, n)
        target = [self[t] for t in named]
        if any(s not in (1, t) for s, t in zip(shape[len(shape) - len(named):], target)):
            sources = ", ".join(f"{t} = {self[t]} from {self._bound[t][1]}" for t in named)
            raise self.error(f"{arg} has shape {_fmt(tuple(mask.shape))} but must broadcast to "
                             f"{_fmt_pattern(pattern.split())} with {sources}: each of its last {len(named)} axes "
                             f"must be that size or 1")
        self._merge_batch(arg, shape[: len(shape) - len(named)], None)
        return mask if len(shape) == len(mask.shape) else xp.reshape(mask, shape)
