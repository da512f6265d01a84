"""The backward pass of blockwise attention: gradients without the m × n matrix.

The forward kept, per query row, only its output o_i and its log-sum-exp
lse_i = log Σ_j exp(s_ij). That is enough to rebuild any weight exactly,
p_ij = exp(s_ij − lse_i), one tile at a time, so the backward pass recomputes
the scores block by block instead of storing them (FlashAttention-2's
recomputation). With S = Q Kᵀ/√d_k, P = softmax(S) and the gradient dO
arriving at the output O = P V, per tile:

    D  = rowsum(dO ⊙ O)          (..., m, 1), once: Σ_j p_ij dp_ij = dO_i · o_i
    P  = exp(S − lse)            masked pairs exactly 0
    dV += Pᵀ dO                  the weighted sum's gradient for its values
    dP = dO Vᵀ                   and for its weights
    dS = P ⊙ (dP − D)            the softmax's vector-Jacobian product
    dQ += dS K / √d_k
    dK += dSᵀ Q / √d_k

dS is :func:`attention_edu.softmax_vjp` row by row; D replaces its
rowsum(dP ⊙ P), which would need a whole row of P at once. Only a few
(block_q, block_k) tiles exist at any time. This module is the portable
version (any array-API backend); NumPy inputs go to :mod:`.fast_backward`.
"""

from __future__ import annotations

import math
from typing import Any

from ..backend import get_xp, is_numpy_namespace
from ..weighting import sum_to_shape
from .attention import _check, _visible
from .fast_backward import blockwise_attention_backward_fast

__all__ = ["blockwise_attention_backward"]


def _check_cache(dims: Any, output: Any, lse: Any, d_output: Any) -> None:
    """output, lse and d_output: the forward's shapes for these inputs, same dtype and namespace."""
    m, d_v, batch = dims["m"], dims["d_v"], dims.batch
    for name, x, pattern, core in (("output", output, "... m d_v", (m, d_v)), ("lse", lse, "... m", (m,)),
                                   ("d_output", d_output, "... m d_v", (m, d_v))):
        dims.array(name, x, pattern, finite=name != "lse")
        if tuple(x.shape) != batch + core:
            made_by = "the output's shape" if name == "d_output" else f"what blockwise_attention returns as {name}"
            raise dims.error(f"{name} has shape {tuple(x.shape)} but must have shape {batch + core}, "
                             f"{made_by} for these Q, K, V and mask")
    xp = get_xp(lse)
    if bool(xp.any(xp.isnan(lse))) or bool(xp.any(lse == math.inf)):
        raise ValueError(f"{dims.func}: lse contains NaN or +inf values; pass the lse that "
                         f"blockwise_attention(..., return_lse=True) returned (−inf marks a fully masked row)")


def _kernel(xp: Any, Q: Any, K: Any, V: Any, output: Any, lse: Any, d_output: Any, mask: Any | None,
            causal: bool, batch: tuple[int, ...], block_q: int, block_k: int) -> tuple[Any, Any, Any]:
    """(dQ, dK, dV) over the broadcast batch: key blocks outside, query blocks inside."""
    (m, d_k), n, d_v = Q.shape[-2:], K.shape[-2], V.shape[-1]
    offset, device = n - m, getattr(Q, "device", None)
    q_all = Q / math.sqrt(d_k)  # (..., m, d_k); math.sqrt keeps float32
    D = xp.sum(d_output * output, axis=-1, keepdims=True)  # (..., m, 1)
    seen = xp.reshape(xp.isfinite(lse), lse.shape + (1,))  # (..., m, 1): rows with a visible key
    lse = xp.where(seen, xp.reshape(lse, lse.shape + (1,)), xp.zeros_like(D))  # (..., m, 1)
    starts = range(0, m, block_q)
    d_q = [xp.zeros(batch + (min(block_q, m - i0), d_k), dtype=Q.dtype, device=device)
           for i0 in starts]  # per query block (..., b, d_k), summed over the key blocks
    d_keys, d_values = [], []
    for j0 in range(0, n, block_k):
        j1 = min(j0 + block_k, n)
        k, v = K[..., j0:j1, :], V[..., j0:j1, :]  # (..., c, d_k), (..., c, d_v)
        d_k_block = xp.zeros(batch + (j1 - j0, d_k), dtype=Q.dtype, device=device)  # (..., c, d_k)
        d_v_block = xp.zeros(batch + (j1 - j0, d_v), dtype=Q.dtype, device=device)  # (..., c, d_v)
        for t, i0 in enumerate(starts):
            i1 = min(i0 + block_q, m)
            if causal and j0 > i1 - 1 + offset:
                continue  # every key of this block lies in the future of every query here
            q, d_o = q_all[..., i0:i1, :], d_output[..., i0:i1, :]  # (..., b, d_k), (..., b, d_v)
            scores = q @ xp.matrix_transpose(k)  # (..., b, c)
            keep = seen[..., i0:i1, :]  # (..., b, 1)
            visible = _visible(xp, mask, causal, (i0, i1), offset, device, j0, j1)
            keep = keep if visible is None else xp.logical_and(keep, visible)  # (..., b, c) or (..., b, 1)
            shifted = xp.where(keep, scores - lse[..., i0:i1, :], xp.full_like(scores, -math.inf))  # (..., b, c)
            weights = xp.exp(shifted)  # (..., b, c): P, hidden pairs exactly 0
            d_v_block = d_v_block + xp.matrix_transpose(weights) @ d_o  # (..., c, d_v)
            d_weights = d_o @ xp.matrix_transpose(v)  # (..., b, c)
            d_scores = weights * (d_weights - D[..., i0:i1, :])  # (..., b, c)
            d_q[t] = d_q[t] + d_scores @ k  # (..., b, d_k)
            d_k_block = d_k_block + xp.matrix_transpose(d_scores) @ q  # (..., c, d_k)
        d_keys.append(d_k_block)
        d_values.append(d_v_block)
    d_Q = xp.concat(d_q, axis=-2) / math.sqrt(d_k)  # (..., m, d_k)
    return d_Q, xp.concat(d_keys, axis=-2), xp.concat(d_values, axis=-2)  # (..., n, d_k), (..., n, d_v)


def blockwise_attention_backward(Q: Any, K: Any, V: Any, output: Any, lse: Any, d_output: Any,
                                 mask: Any | None = None, *, causal: bool = False,
                                 block_size: int | tuple[int, int] | None = None,
                                 method: str = "auto") -> dict[str, Any]:
    """Gradients of blockwise attention for Q, K and V, recomputing the scores tile by tile.

    With s_ij = q_i·k_j/√d_k and p_ij = exp(s_ij − lse_i) (0 where hidden),
    in the code's order: D = rowsum(dO ⊙ O); then per tile dV += Pᵀ dO,
    dP = dO Vᵀ, dS = P ⊙ (dP − D), dQ += dS K/√d_k, dK += dSᵀ Q/√d_k (see
    the module docstring). No m × n array is formed.

    Parameters
    ----------
    Q, K, V, mask, causal
        Exactly as given to :func:`blockwise_attention`.
    output : array (..., m, d_v)
    lse : array (..., m)
        ``blockwise_attention(Q, K, V, mask, causal=causal, return_lse=True)``;
        −inf marks a fully masked row.
    d_output : array (..., m, d_v)
        Gradient of the loss with respect to ``output``.
    block_size : int or (block_q, block_k), optional
        Tile of queries × keys held at once. Default: ``DEFAULT_BLOCK`` on the portable
        path, ``ACCELERATOR_BLOCK`` on a GPU; the fast path picks its own tiles.
    method : {"auto", "portable", "fast"}
        As in :func:`blockwise_attention`: "auto" takes the threaded NumPy host
        path of :mod:`.fast_backward` for NumPy arrays, the portable code here otherwise.

    Returns
    -------
    dict
        ``{"Q": dL/dQ, "K": dL/dK, "V": dL/dV}``, each with its input's shape
        and dtype (summed over the batch axes that input was broadcast along).
        Hidden pairs pass no gradient; fully masked rows give zeros.

    Notes
    -----
    "Attention Mechanisms: Fundamentals", section "Scaled Dot-Product
    Attention" (the forward and why 1/√d_k keeps gradients alive); the
    recomputation trades the stored m × n weights of "Computational
    Efficiency" for a second pass of matrix products.

    Examples
    --------
    The chapter's example, one key per block, with dL/doutput = 1 everywhere:
    each value's gradient is its weight (0.482, 0.298, 0.220) times 1.

    >>> import numpy as np
    >>> from attention_edu import blockwise_attention
    >>> q = np.array([[1.0, 0.5, -0.3, 0.8]])
    >>> K = np.array([[0.8, 0.2, -0.1, 0.5], [0.3, 0.7, 0.4, -0.2], [-0.5, 0.1, 0.9, 0.6]])
    >>> V = np.array([[0.5, 0.8, -0.2, 0.6, 0.3], [0.2, -0.4, 0.7, 0.1, 0.9],
    ...               [-0.3, 0.5, 0.4, -0.6, 0.2]])
    >>> out, lse = blockwise_attention(q, K, V, block_size=1, return_lse=True)
    >>> grads = blockwise_attention_backward(q, K, V, out, lse, np.ones((1, 5)), block_size=1)
    >>> np.round(grads["V"][:, 0], 3)
    array([0.482, 0.298, 0.22 ])

    Each weight's gradient is its value's sum of entries (2.0, 1.5, 0.2); the
    query's gradient follows through the softmax's Jacobian (compare central
    differences of the loss sum(output) in the tests):

    >>> np.round(grads["Q"], 3)
    array([[ 0.176,  0.017, -0.135, -0.018]])
    """
    func = "blockwise_attention_backward"
    dims, block_q, block_k, mask = _check(func, Q, K, V, mask, block_size, causal)
    xp = get_xp(Q, K, V, mask)
    _check_cache(dims, output, lse, d_output)
    if method not in ("auto", "portable", "fast"):
        raise ValueError(f"{func}: method must be 'auto', 'portable' or 'fast', got {method!r}")
    if method == "fast" and not is_numpy_namespace(xp):
        raise TypeError(f"{func}: method='fast' needs NumPy arrays, got {type(Q).__name__}; "
                        f"use method='portable' (or 'auto') on other backends")
    if method == "fast" or (method == "auto" and is_numpy_namespace(xp)):
        sizes = None if block_size is None else (block_q, block_k)
        grads = blockwise_attention_backward_fast(Q, K, V, output, lse, d_output, mask, dims.batch,
                                                  sizes, causal)
    else:
        grads = _kernel(xp, Q, K, V, output, lse, d_output, mask, causal, dims.batch, block_q, block_k)
    return {name: sum_to_shape(xp, grad, tuple(x.shape)) for name, grad, x in zip("QKV", grads, (Q, K, V))}
