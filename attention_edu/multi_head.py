"""Multi-head attention and the reshapes between (..., L, H*d) and (..., H, L, d).

"Neural attention mechanism vectorization", section 3 (multi-head shapes
(B, H, L, d_k) and scores (B, H, L, L)); "Attention Mechanisms: Fundamentals",
section "Projecting to QKV" (d_k = d_model / h). Head h uses columns
h*d_k:(h+1)*d_k of W_Q and W_K (h*d_v:(h+1)*d_v of W_V); the heads' outputs are
concatenated and projected: output = concat(heads) W_O, W_O (H*d_v, d_model).
"""

from __future__ import annotations

import math

from typing import Any

from .backend import get_xp, quiet_overflow
from .dot_product import attend, attend_backward, attended_steps
from .shapes import Dims, positive_int
from .steps import Steps, check_backward_call, results
from .weighting import sum_to_shape

__all__ = ["split_heads", "merge_heads", "multi_head_attention", "multi_head_attention_steps",
           "multi_head_attention_backward"]


def _heads_of(dims: Dims, arg: str, shape: tuple[int, ...], width: str, num_heads: int) -> int:
    """Size per head of dimension ``width`` (= num_heads * d), or a clear error."""
    if dims[width] % num_heads:
        raise dims.error(
            f"{arg} has shape {shape}: its {width} = {dims[width]} does not split into "
            f"num_heads = {num_heads} equal heads; choose num_heads dividing {dims[width]}"
        )
    return dims[width] // num_heads


def split_heads(X: Any, num_heads: int) -> Any:
    """Split the last axis into heads and move heads before the sequence axis.

    (..., L, H*d) → reshape (..., L, H, d) → swap → (..., H, L, d).
    Head h gets columns h*d:(h+1)*d.

    Parameters
    ----------
    X : array (..., L, H*d)
        L positions, each a concatenation of H head vectors of size d.
    num_heads : int
        H; must divide the last axis.

    Returns
    -------
    array (..., H, L, d)

    Examples
    --------
    >>> import numpy as np
    >>> X = np.arange(12.0).reshape(2, 6)          # L = 2, H*d = 6
    >>> split_heads(X, 3).shape
    (3, 2, 2)
    >>> split_heads(X, 3)[1]                        # head 1: columns 2:4
    array([[2., 3.],
           [8., 9.]])
    """
    dims = Dims("split_heads")
    num_heads = positive_int("split_heads", "num_heads", num_heads)
    dims.array("X", X, "... L Hd", finite=False)
    _heads_of(dims, "X", tuple(X.shape), "Hd", num_heads)
    return _split(get_xp(X), X, num_heads)


def _split(xp: Any, X: Any, num_heads: int) -> Any:
    """The kernel of :func:`split_heads`."""
    lead, (L, width) = tuple(X.shape[:-2]), tuple(X.shape[-2:])
    split = xp.reshape(X, lead + (L, num_heads, width // num_heads))  # (..., L, H, d)
    k = len(lead)
    return xp.permute_dims(split, tuple(range(k)) + (k + 1, k, k + 2))  # (..., H, L, d)


def merge_heads(X: Any) -> Any:
    """Inverse of :func:`split_heads`: (..., H, L, d) → (..., L, H*d).

    Parameters
    ----------
    X : array (..., H, L, d)
        One (L, d) block per head, e.g. the heads' outputs.

    Returns
    -------
    array (..., L, H*d)
        Row l concatenates the heads' rows l in head order.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.arange(12.0).reshape(2, 6)
    >>> bool((merge_heads(split_heads(X, 3)) == X).all())
    True
    """
    dims = Dims("merge_heads")
    dims.array("X", X, "... H L d", finite=False)
    return _merge(get_xp(X), X)


def _merge(xp: Any, X: Any) -> Any:
    """The kernel of :func:`merge_heads`."""
    k = X.ndim - 3
    lead, (H, L, d) = tuple(X.shape[:k]), tuple(X.shape[k:])
    moved = xp.permute_dims(X, tuple(range(k)) + (k + 1, k, k + 2))  # (..., L, H, d)
    return xp.reshape(moved, lead + (L, H * d))  # (..., L, H*d)


def multi_head_attention_steps(X_q: Any, X_kv: Any, W_Q: Any, W_K: Any, W_V: Any, W_O: Any,
                               num_heads: int, mask: Any | None = None) -> Steps:
    """Multi-head attention with every intermediate kept (see :func:`multi_head_attention`)."""
    name = "multi_head_attention"
    num_heads = positive_int(name, "num_heads", num_heads)
    dims = Dims(name)
    dims.array("X_q", X_q, "... m d_model")
    dims.array("X_kv", X_kv, "... n d_model")
    dims.array("W_Q", W_Q, "d_model Hd_k")
    dims.array("W_K", W_K, "d_model Hd_k")
    dims.array("W_V", W_V, "d_model Hd_v")
    dims.array("W_O", W_O, "Hd_v d_model")
    _heads_of(dims, "W_Q", tuple(W_Q.shape), "Hd_k", num_heads)
    _heads_of(dims, "W_V", tuple(W_V.shape), "Hd_v", num_heads)
    batch = dims.batch
    mask = dims.mask("mask", mask, "... m n")
    if mask is not None and len(mask.shape) - 2 > len(batch) and math.prod(dims.batch) > math.prod(batch):
        # e.g. a (B, 1, 1, n) mask with a head axis: the output's batch would be (B, B)
        raise dims.error(f"mask has shape {tuple(mask.shape)}: more leading axes than the batch {batch} of "
                         f"X_q and X_kv, which would widen the output's batch to {dims.batch}; the mask is "
                         f"(..., m, n), shared by every head, with no head axis (drop it: mask[:, 0]); "
                         f"for several masks on one input, give X_q and X_kv that batch axis")
    xp = get_xp(X_q, X_kv, W_Q, W_K, W_V, W_O, mask)
    head_mask = None if mask is None else xp.expand_dims(mask, axis=-3)  # (..., 1, m, n): shared by the heads
    with quiet_overflow():  # too-large inputs: one clear error from weigh, no RuntimeWarning first
        Q = _split(xp, X_q @ W_Q, num_heads)  # (..., H, m, d_k)
        K = _split(xp, X_kv @ W_K, num_heads)  # (..., H, n, d_k)
        V = _split(xp, X_kv @ W_V, num_heads)  # (..., H, n, d_v)
        attended = attend(xp, name, Q, K, V, head_mask, scaled=True)  # weights (..., H, m, n)
    heads = attended.output  # (..., H, m, d_v)
    concat = _merge(xp, heads)  # (..., m, H*d_v)
    output = concat @ W_O  # (..., m, d_model)
    per_head = attended_steps(attended)
    del per_head["output"]  # called heads here
    return Steps(name, {
        "Q": ("split_heads(X_q W_Q)", Q),
        "K": ("split_heads(X_kv W_K)", K),
        "V": ("split_heads(X_kv W_V)", V),
        **per_head,
        "heads": ("weights V", heads),
        "concat": ("merge_heads(heads)", concat),
        "output": ("concat W_O", output),
    }, dict(X_q=X_q, X_kv=X_kv, W_Q=W_Q, W_K=W_K, W_V=W_V, W_O=W_O, num_heads=num_heads, mask=mask))


def multi_head_attention_backward(steps: Steps, d_output: Any, d_weights: Any | None = None) -> dict[str, Any]:
    """Gradients of multi-head attention, from the forward's steps.

    Backwards through output = concat W_O, concat = merge_heads(heads), then
    each head's scaled dot-product attention (see
    :func:`attention_edu.scaled_dot_product_attention_backward`), then the
    projections Q = split_heads(X_q W_Q) and so on:

    - dW_O = concatᵀ G;  d_heads = split_heads(G W_Oᵀ)
    - dQ, dK, dV per head;  dW_Q = X_qᵀ merge_heads(dQ), dX_q = merge_heads(dQ) W_Qᵀ
    - dX_kv = merge_heads(dK) W_Kᵀ + merge_heads(dV) W_Vᵀ

    Parameters
    ----------
    steps : Steps
        From :func:`multi_head_attention_steps`.
    d_output : array (..., m, d_model)
    d_weights : array (..., H, m, n), optional
        Per-head gradient arriving at the weights.

    Returns
    -------
    dict
        ``{"X_q", "X_kv", "W_Q", "W_K", "W_V", "W_O"}``. When one array was passed
        as both X_q and X_kv, its gradient is the sum of the two entries.

    Examples
    --------
    >>> import numpy as np
    >>> X, I = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), np.eye(2)
    >>> steps = multi_head_attention_steps(X, X, I, I, I, I, num_heads=2)
    >>> grads = multi_head_attention_backward(steps, np.ones((3, 2)))
    >>> sorted(grads)
    ['W_K', 'W_O', 'W_Q', 'W_V', 'X_kv', 'X_q']
    """
    name = "multi_head_attention_backward"
    xp = check_backward_call(name, steps, "multi_head_attention", {"d_output": (d_output, "output"),
                                                                   "d_weights": (d_weights, "weights")})
    X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask = (steps.inputs[key] for key in (
        "X_q", "X_kv", "W_Q", "W_K", "W_V", "W_O", "num_heads", "mask"))
    head_mask = None if mask is None else xp.expand_dims(mask, axis=-3)  # (..., 1, m, n)
    d_concat = d_output @ xp.matrix_transpose(W_O)  # (..., m, H*d_v)
    d_W_O = xp.matrix_transpose(steps.concat) @ d_output  # (..., H*d_v, d_model)
    d_heads = _split(xp, d_concat, num_heads)  # (..., H, m, d_v)
    d_Q, d_K, d_V = attend_backward(xp, steps.Q, steps.K, steps.V, head_mask, steps.weights, d_heads,
                                    d_weights, scaled=True)  # (..., H, m, d_k), (..., H, n, d_k), (..., H, n, d_v)
    d_XW_Q, d_XW_K, d_XW_V = _merge(xp, d_Q), _merge(xp, d_K), _merge(xp, d_V)  # (..., m|n, H*d)
    return {
        "X_q": sum_to_shape(xp, d_XW_Q @ xp.matrix_transpose(W_Q), X_q.shape),
        "X_kv": sum_to_shape(xp, d_XW_K @ xp.matrix_transpose(W_K) + d_XW_V @ xp.matrix_transpose(W_V),
                             X_kv.shape),
        "W_Q": sum_to_shape(xp, xp.matrix_transpose(X_q) @ d_XW_Q, W_Q.shape),
        "W_K": sum_to_shape(xp, xp.matrix_transpose(X_kv) @ d_XW_K, W_K.shape),
        "W_V": sum_to_shape(xp, xp.matrix_transpose(X_kv) @ d_XW_V, W_V.shape),
        "W_O": sum_to_shape(xp, d_W_O, W_O.shape),
    }


def multi_head_attention(X_q: Any, X_kv: Any, W_Q: Any, W_K: Any, W_V: Any, W_O: Any,
                         num_heads: int, mask: Any | None = None) -> tuple[Any, Any]:
    """Multi-head attention: concat_h(softmax(Q_h K_hᵀ / √d_k) V_h) W_O.

    Q_h = (X_q W_Q)[..., h*d_k:(h+1)*d_k], likewise K_h from X_kv W_K and
    V_h from X_kv W_V. Pass the same array as X_q and X_kv for self-attention.

    Parameters
    ----------
    X_q : array (..., m, d_model)
    X_kv : array (..., n, d_model)
    W_Q, W_K : array (d_model, H*d_k)
    W_V : array (d_model, H*d_v)
    W_O : array (H*d_v, d_model)
    num_heads : int
        H; must divide the columns of W_Q and W_V.
    mask : bool array broadcastable to (..., m, n), optional
        Shared by all heads (it has no head axis). Its leading axes broadcast with the
        inputs' batch but may not enlarge it (a (B, 1, 1, n) mask is refused).

    Returns
    -------
    output : array (..., m, d_model)
    weights : array (..., H, m, n)
        Per-head attention weights.

    Notes
    -----
    "Neural attention mechanism vectorization", section 3, and "Attention
    Mechanisms: Fundamentals", section "Projecting to QKV".

    Examples
    --------
    With one head and W_O = I this is single-head self-attention; on
    "cat sat mat" (identity projections) it gives the scaled weights:

    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> I = np.eye(2)
    >>> output, weights = multi_head_attention(X, X, I, I, I, I, num_heads=1)
    >>> weights.shape
    (1, 3, 3)
    >>> np.round(weights[0, 0], 2)
    array([0.4, 0.2, 0.4])
    """
    steps = multi_head_attention_steps(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask)
    return results(steps, "output", "weights")
