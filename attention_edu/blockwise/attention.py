"""Exact attention without the m × n matrix: key blocks and the online softmax.

softmax(Q Kᵀ/√d_k) V needs, for each query row, the maximum and the sum of
exp over *all* n keys before any weight is known. The online softmax keeps
three running quantities per row instead, updated one block of keys at a time:

    M ← max(M, max_j s_j)                    running maximum
    ℓ ← ℓ·exp(M_old − M) + Σ_j exp(s_j − M)   running denominator
    A ← A·exp(M_old − M) + Σ_j exp(s_j − M) v_j running weighted sum

and divides at the end: output = A / ℓ. Rescaling by exp(M_old − M) whenever
the maximum grows makes every block's terms comparable, so the result equals
the one-shot softmax exactly (up to rounding). Only a (block_q, block_k) tile of
scores exists at any time: memory O(block·(m + n) + m·d_v) instead of O(m·n).

It is the stable softmax of "Attention Mechanisms: Fundamentals", section "Scaled
Dot-Product Attention", in pieces ("Computational Efficiency" counts the matrix it
avoids). Portable (any array-API backend); NumPy inputs go to :mod:`.fast`.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

from ..backend import device_of, get_xp, is_numpy_namespace, quiet_overflow, to_numpy
from .fast import blockwise_attention_fast
from .memory_model import ACCELERATOR_BLOCK, DEFAULT_BLOCK
from ..shapes import Dims, positive_int
from ..weighting import overflow_error
from ..steps import Steps

__all__ = ["blockwise_attention", "blockwise_attention_steps", "DEFAULT_BLOCK", "ACCELERATOR_BLOCK"]


def _check(func: str, Q: Any, K: Any, V: Any, mask: Any | None, block_size: Any,
           causal: Any) -> tuple[Dims, int, int, Any | None]:
    """The checked dims, the two block sizes, and the mask with at least two axes (a key mask (n,) as (1, n))."""
    dims = Dims(func)
    dims.array("Q", Q, "... m d_k")
    dims.array("K", K, "... n d_k")
    dims.array("V", V, "... n d_v")
    mask = dims.mask("mask", mask, "... m n")
    if not isinstance(causal, bool):
        raise TypeError(f"{func}: causal must be True or False, got {causal!r}")
    on_gpu = "cuda" in str(device_of(Q)).lower()  # CuPy's "<CUDA Device 0>", torch's "cuda:0"
    sizes = (ACCELERATOR_BLOCK if on_gpu else DEFAULT_BLOCK) if block_size is None else block_size
    try:        # an int (NumPy's too, not a bool) or a pair of them
        block_q, block_k = (positive_int(func, "block_size", s) for s in
                            (sizes if isinstance(sizes, (tuple, list)) else (sizes, sizes)))
    except ValueError:        # not positive ints, or not two of them
        raise ValueError(f"{func}: block_size must be a positive int or a pair (block_q, block_k) "
                         f"of positive ints, got {block_size!r}") from None
    return dims, min(block_q, dims["m"]), min(block_k, dims["n"]), mask


def _visible(xp: Any, mask: Any | None, causal: bool, rows: tuple[int, int], offset: int,
             device: Any, j0: int, j1: int) -> Any | None:
    """The boolean (..., i1 − i0, j1 − j0) tile of visible pairs (None when all are visible)."""
    i0, i1 = rows
    tile = None
    if mask is not None:
        tile = mask[..., i0:i1, :] if mask.shape[-2] > 1 else mask  # (..., b or 1, n or 1)
        tile = tile[..., j0:j1] if mask.shape[-1] > 1 else tile  # (..., b or 1, c or 1)
    if causal and j1 - 1 > i0 + offset:  # some key of this tile lies in some query's future
        i = xp.reshape(xp.arange(i0, i1, device=device), (i1 - i0, 1))  # (b, 1)
        j = xp.reshape(xp.arange(j0, j1, device=device), (1, j1 - j0))  # (1, c)
        past = j <= i + offset  # (b, c): query i sees key j iff j ≤ i + n − m
        tile = past if tile is None else xp.logical_and(tile, past)
    return tile


def _attend(xp: Any, q: Any, K: Any, V: Any, batch: tuple[int, ...], tiles: Any, block_k: int,
            limit: int, record: list | None = None) -> tuple[Any, Any, Any]:
    """Online softmax of one block of (already scaled) queries over the key blocks.

    ``tiles(j0, j1)`` gives the visibility tile; keys from ``limit`` on are
    hidden from every query of the block and are skipped. Returns the running
    max M (..., b, 1), denominator ℓ (..., b, 1) and weighted sum A (..., b, d_v).
    """
    device = getattr(q, "device", None)
    b, d_v = q.shape[-2], V.shape[-1]
    row_max = xp.full(batch + (b, 1), -math.inf, dtype=q.dtype, device=device)  # (..., b, 1)
    denom = xp.zeros(batch + (b, 1), dtype=q.dtype, device=device)  # (..., b, 1)
    acc = xp.zeros(batch + (b, d_v), dtype=q.dtype, device=device)  # (..., b, d_v)
    for j0 in range(0, min(limit, K.shape[-2]), block_k):
        j1 = min(j0 + block_k, K.shape[-2])
        scores = q @ xp.matrix_transpose(K[..., j0:j1, :])  # (..., b, c)
        visible = tiles(j0, j1)
        if visible is not None:
            scores = xp.where(visible, scores, xp.full_like(scores, -math.inf))  # (..., b, c)
        new_max = xp.maximum(row_max, xp.max(scores, axis=-1, keepdims=True))  # (..., b, 1)
        # Rows that have seen no visible key yet keep M = −inf; shift them by 0 (no NaN).
        shift = xp.where(xp.isfinite(new_max), new_max, xp.zeros_like(new_max))  # (..., b, 1)
        exps = xp.exp(scores - shift)  # (..., b, c)
        rescale = xp.exp(row_max - shift)  # (..., b, 1): 0 on the first visible block
        denom = denom * rescale + xp.sum(exps, axis=-1, keepdims=True)  # (..., b, 1)
        acc = acc * rescale + exps @ V[..., j0:j1, :]  # (..., b, d_v)
        row_max = new_max
        if record is not None:
            record.append(((j0, j1), scores, row_max, denom, acc))
    return row_max, denom, acc


def _finish(xp: Any, row_max: Any, denom: Any, acc: Any) -> tuple[Any, Any]:
    """output = A / ℓ and log-sum-exp = M + log ℓ; a row with no visible key gives 0 and −inf."""
    seen = denom > 0  # (..., b, 1)
    safe = xp.where(seen, denom, xp.ones_like(denom))  # (..., b, 1)
    output = acc / safe  # (..., b, d_v)
    lse = xp.where(seen, row_max + xp.log(safe), xp.full_like(denom, -math.inf))  # (..., b, 1)
    return output, lse[..., 0]  # (..., b, d_v), (..., b)


def blockwise_attention(Q: Any, K: Any, V: Any, mask: Any | None = None,
                        block_size: int | tuple[int, int] | None = None, *, causal: bool = False,
                        return_lse: bool = False, method: str = "auto") -> Any:
    """Scaled dot-product attention computed block by block, never forming the m × n scores.

    output_i = Σ_j exp(s_ij − M_i) v_j / Σ_j exp(s_ij − M_i), s_ij = q_i·k_j / √d_k,
    with M_i and both sums accumulated over key blocks by the online softmax
    (see the module docstring). Equal to :func:`scaled_dot_product_attention`'s
    output; the weights are never formed, so none are returned.

    Parameters
    ----------
    Q : array (..., m, d_k)
    K : array (..., n, d_k)
    V : array (..., n, d_v)
    mask : bool array broadcastable to (..., m, n), optional
        True where query i may attend to key j (sliced per tile, never expanded).
    block_size : int or (block_q, block_k), optional
        Tile of queries × keys held at once. Default: ``DEFAULT_BLOCK`` on the portable
        path, ``ACCELERATOR_BLOCK`` on a GPU; the fast path picks cache-sized tiles itself.
    causal : bool
        Also hide the future, as :func:`causal_mask` does (query i sees key j
        iff j ≤ i + n − m), without building an m × n mask; combines with ``mask``
        by logical and. Key blocks wholly in every query's future are skipped.
    return_lse : bool
        Also return the per-row log-sum-exp log Σ_j exp(s_ij) (−inf for a fully
        masked row), the quantity a backward pass needs.
    method : {"auto", "portable", "fast"}
        "portable" runs this module's array-API code on any backend; "fast" the
        NumPy host path of :mod:`attention_edu.blockwise_fast` (NumPy only);
        "auto" picks "fast" for NumPy arrays and "portable" otherwise.

    Returns
    -------
    output : array (..., m, d_v)
        Fully masked rows are 0.
    lse : array (..., m)
        Only with ``return_lse=True``.

    Notes
    -----
    "Attention Mechanisms: Fundamentals", sections "Scaled Dot-Product
    Attention" (the formula) and "Masked Attention"; the memory it saves is the
    quadratic attention matrix of "Computational Efficiency".

    Examples
    --------
    The chapter's example (one query, three keys), one key per block:

    >>> import numpy as np
    >>> q = np.array([[1.0, 0.5, -0.3, 0.8]])
    >>> K = np.array([[0.8, 0.2, -0.1, 0.5], [0.3, 0.7, 0.4, -0.2], [-0.5, 0.1, 0.9, 0.6]])
    >>> V = np.array([[0.5, 0.8, -0.2, 0.6, 0.3], [0.2, -0.4, 0.7, 0.1, 0.9],
    ...               [-0.3, 0.5, 0.4, -0.6, 0.2]])
    >>> out, lse = blockwise_attention(q, K, V, block_size=1, return_lse=True, method="portable")
    >>> np.round(out, 3)
    array([[0.235, 0.376, 0.2  , 0.187, 0.457]])

    exp(lse) is the softmax denominator, the chapter's Σ_j exp(score_j) ≈ 4.035:
    >>> np.round(np.exp(lse), 3)
    array([4.035])
    """
    dims, block_q, block_k, mask = _check("blockwise_attention", Q, K, V, mask, block_size, causal)
    xp = get_xp(Q, K, V, mask)
    if method not in ("auto", "portable", "fast"):
        raise ValueError(f"blockwise_attention: method must be 'auto', 'portable' or 'fast', got {method!r}")
    if method == "fast" and not is_numpy_namespace(xp):
        raise TypeError(f"blockwise_attention: method='fast' needs NumPy arrays, got {type(Q).__name__}; "
                        f"use method='portable' (or 'auto') on other backends")
    # |q·k| ≤ d_k max|Q| max|K|: below the dtype's range no score overflows; above, the portable path
    # runs here with NumPy's warnings off and the check below names the cause.
    bound = dims["d_k"] * math.prod(float(to_numpy(xp.max(xp.abs(x)))) for x in (Q, K))   # to_numpy: no grad warning
    safe = bound < float(xp.finfo(Q.dtype).max)
    with quiet_overflow():
        if safe and (method == "fast" or (method == "auto" and is_numpy_namespace(xp))):
            sizes = None if block_size is None else (block_q, block_k)
            output, lse = blockwise_attention_fast(Q, K, V, mask, dims.batch, sizes, causal)
        else:
            output, lse = _portable(xp, dims, Q, K, V, mask, causal, block_q, block_k)
    if not safe and not bool(xp.all(xp.isfinite(output))):
        raise overflow_error("blockwise_attention", Q.dtype)
    return (output, lse) if return_lse else output


def _portable(xp: Any, dims: Dims, Q: Any, K: Any, V: Any, mask: Any | None, causal: bool, block_q: int,
              block_k: int) -> tuple[Any, Any]:
    """The online softmax over query blocks of ``block_q`` rows, on any backend."""
    m, n, d_k = dims["m"], dims["n"], dims["d_k"]
    offset, device = n - m, getattr(Q, "device", None)
    outputs, lses = [], []
    for i0 in range(0, m, block_q):
        i1 = min(i0 + block_q, m)
        q = Q[..., i0:i1, :] / math.sqrt(d_k)  # (..., b, d_k); math.sqrt keeps float32
        limit = i1 + offset if causal else n  # keys ≥ limit are in the future of every row here
        tiles = partial(_visible, xp, mask, causal, (i0, i1), offset, device)
        output, lse = _finish(xp, *_attend(xp, q, K, V, dims.batch, tiles, block_k, limit))
        outputs.append(output)
        lses.append(lse)
    return xp.concat(outputs, axis=-2), xp.concat(lses, axis=-1)  # (..., m, d_v), (..., m)


def blockwise_attention_steps(Q: Any, K: Any, V: Any, mask: Any | None = None,
                              block_size: int = 1, *, causal: bool = False) -> Steps:
    """The online softmax key block by key block, for printing (portable path, all queries at once).

    For each key block t the steps hold its scaled scores ``scores_t``, and the
    running max ``max_t``, denominator ``denominator_t`` and weighted sum
    ``weighted_sum_t`` after it; then ``output`` and ``lse``. Keeps every block,
    so it is for small teaching inputs: use :func:`blockwise_attention` for work.

    Examples
    --------
    >>> import numpy as np
    >>> steps = blockwise_attention_steps(np.zeros((1, 2)), np.zeros((3, 2)), np.eye(3), block_size=2)
    >>> steps.names
    ('scores_1', 'max_1', 'denominator_1', 'weighted_sum_1', 'scores_2', 'max_2', 'denominator_2', 'weighted_sum_2', 'output', 'lse')
    >>> steps.denominator_1, steps.denominator_2
    (array([[2.]]), array([[3.]]))
    """
    block_size = positive_int("blockwise_attention_steps", "block_size", block_size)
    dims, _, block_k, mask = _check("blockwise_attention_steps", Q, K, V, mask, block_size, causal)
    xp = get_xp(Q, K, V, mask)
    m, n = dims["m"], dims["n"]
    record: list = []
    tiles = partial(_visible, xp, mask, causal, (0, m), n - m, getattr(Q, "device", None))
    state = _attend(xp, Q / math.sqrt(dims["d_k"]), K, V, dims.batch, tiles, block_k, n, record)
    items = []
    for t, ((j0, j1), scores, row_max, denom, acc) in enumerate(record, 1):
        keys = f"keys {j0}..{j1 - 1}"
        items += [(f"scores_{t}", f"q·k_j / √d_k, {keys} (−inf where hidden)", scores),
                  (f"max_{t}", f"M = max(M, max over {keys})", row_max),
                  (f"denominator_{t}", "ℓ = ℓ·exp(M_old − M) + Σ exp(s − M)", denom),
                  (f"weighted_sum_{t}", "A = A·exp(M_old − M) + Σ exp(s − M) v", acc)]
    output, lse = _finish(xp, *state)
    items += [("output", "A / ℓ", output), ("lse", "M + log ℓ", lse)]
    return Steps("blockwise_attention", items)
