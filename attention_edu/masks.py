"""Boolean attention masks: True = may attend.

Masks broadcast to the scores ``(..., m, n)`` and are applied *before* the
softmax, by replacing disallowed scores with −inf ("Attention Mechanisms:
Fundamentals", section "Masked Attention"; "Neural attention mechanism
vectorization", section 4.1). ``exp(−inf) = 0``, so masked keys get weight
exactly 0; a query whose every key is masked gets all-zero weights and a zero
output (see :func:`attention_edu.softmax`).
"""

from __future__ import annotations

import math
from typing import Any

from .backend import Backend, checked_backend, get_xp
from .shapes import Dims, positive_int

__all__ = ["causal_mask", "padding_mask", "apply_mask"]


def causal_mask(m: int, n: int | None = None, backend: Backend | None = None) -> Any:
    """Causal (autoregressive) mask: query i may attend to key j iff j ≤ i + (n − m).

    With ``n == m`` (the default) this is the lower triangle: no token sees
    the future. With ``n > m`` the *last* query is aligned with the *last* key,
    as when m new tokens are decoded after n − m cached ones: query i sits at
    position i + n − m and sees every key up to there.

    Parameters
    ----------
    m : int
        Number of queries (≥ 1).
    n : int, optional
        Number of keys (≥ 1); defaults to ``m``.
    backend : Backend, optional
        Where to create the mask (namespace and device); NumPy by default.

    Returns
    -------
    bool array (m, n)

    Notes
    -----
    "Attention Mechanisms: Fundamentals", section "Masked Attention": the
    chapter adds M_ij = −inf for j > i; this mask is True exactly where M_ij = 0.

    Examples
    --------
    >>> causal_mask(3).astype(int)
    array([[1, 0, 0],
           [1, 1, 0],
           [1, 1, 1]])
    >>> causal_mask(2, 4).astype(int)
    array([[1, 1, 1, 0],
           [1, 1, 1, 1]])
    """
    m = positive_int("causal_mask", "m", m)
    n = m if n is None else positive_int("causal_mask", "n", n)
    be = checked_backend("causal_mask", backend)
    xp = be.xp
    rows = xp.reshape(xp.arange(m, device=be.device), (m, 1))  # (m, 1)
    cols = xp.reshape(xp.arange(n, device=be.device), (1, n))  # (1, n)
    return cols <= rows + (n - m)  # (m, n)


def padding_mask(lengths: Any, n: int) -> Any:
    """Padding mask: in sequence b, key j is visible iff j < lengths[b].

    Parameters
    ----------
    lengths : int array (B,), or a list or tuple of ints
        True length of each sequence, 0 ≤ lengths[b] ≤ n. The mask is created
        on the same backend and device as ``lengths``; for a list or tuple, with
        NumPy, as :func:`causal_mask` is for its plain ints.
    n : int
        Padded length (number of keys).

    Returns
    -------
    bool array (B, 1, n)
        The middle axis of size 1 broadcasts over the m queries.

    Notes
    -----
    "Neural attention mechanism vectorization", section 4.1 (padding masks).

    Examples
    --------
    >>> import numpy as np
    >>> padding_mask(np.array([2, 3]), 4).astype(int)
    array([[[1, 1, 0, 0]],
    <BLANKLINE>
           [[1, 1, 1, 0]]])
    >>> padding_mask([1], 3)
    array([[[ True, False, False]]])
    """
    n = positive_int("padding_mask", "n", n)
    if lengths is None:
        raise TypeError("padding_mask: lengths is None; pass an int array of shape (B,)")
    if isinstance(lengths, (list, tuple)):
        lengths = _plain_lengths(lengths)
    dims = Dims("padding_mask")
    xp = dims.namespace("lengths", lengths)
    if not xp.isdtype(lengths.dtype, "integral"):
        raise TypeError(f"padding_mask: lengths has dtype {lengths.dtype} but must hold integers")
    dims.shape("lengths", tuple(lengths.shape), "B")
    if bool(xp.any(lengths < 0)) or bool(xp.any(lengths > n)):
        raise ValueError(f"padding_mask: every length must lie in [0, n = {n}]")
    device = getattr(lengths, "device", None)
    positions = xp.reshape(xp.arange(n, device=device), (1, 1, n))  # (1, 1, n)
    limits = xp.reshape(lengths, (lengths.shape[0], 1, 1))  # (B, 1, 1)
    return positions < limits  # (B, 1, n)


def _plain_lengths(lengths: list | tuple) -> Any:
    """A list or tuple of ints as NumPy's int64 array (B,); anything else in it is a TypeError."""
    for length in lengths:
        if isinstance(length, bool) or not hasattr(length, "__index__"):
            raise TypeError(f"padding_mask: lengths is a {type(lengths).__name__} holding {length!r:.40} "
                            f"({type(length).__name__}); every length must be an int")
    xp = checked_backend("padding_mask", None).xp
    return xp.asarray([int(length) for length in lengths], dtype=xp.int64)


def apply_mask(scores: Any, mask: Any | None) -> Any:
    """Scores with disallowed entries replaced by −inf (a new array; ``scores`` is kept).

    Parameters
    ----------
    scores : array (..., m, n)
    mask : bool array broadcastable to (..., m, n), or None (then ``scores`` is returned)

    Examples
    --------
    >>> import numpy as np
    >>> apply_mask(np.array([[1.0, 2.0]]), np.array([[True, False]]))
    array([[  1., -inf]])
    """
    if mask is None:
        return scores
    dims = Dims("apply_mask")
    dims.array("scores", scores, "... m n", finite=False)
    dims.mask("mask", mask, "... m n")
    xp = get_xp(scores, mask)
    return xp.where(mask, scores, xp.full_like(scores, -math.inf))
