"""Teaching versions: attention one query and one key at a time.

"Neural attention mechanism vectorization", section 3, contrasts scoring
pairs one by one with a single matrix product; "Section 5.2: Dot-Product
Attention" shows attention as a soft dictionary lookup. These loops compute
the same results as the vectorized functions (the tests check it) and are
meant to be read and timed, not used. Unbatched 2-D inputs only.
"""

from __future__ import annotations

import math
from typing import Any

from .backend import get_xp, quiet_overflow
from .shapes import Dims
from .softmax import stable_softmax
from .weighting import overflow_error

__all__ = ["attention_loop", "bahdanau_attention_loop"]


def _check_loop_mask(dims: Dims, mask: Any | None) -> Any | None:
    """The mask as (m, n) or (1, n): a (n,) or 0-d one is read as NumPy broadcasts it."""
    checked = dims.mask("mask", mask, "... m n")
    if checked is not None and checked.ndim != 2:
        raise dims.error(f"mask has shape {tuple(mask.shape)}; the loop version takes (m, n), (1, n) or (n,)")
    return checked


def _attend_rows(xp: Any, func: str, score_rows: list[list[Any]], values: Any,
                 mask: Any | None) -> tuple[Any, Any]:
    weights_rows, outputs = [], []
    for i, row in enumerate(score_rows):
        scores = xp.stack(row)  # (n,)
        if not bool(xp.all(xp.isfinite(scores))):
            raise overflow_error(func, scores.dtype)
        if mask is not None:
            allowed = mask[i % mask.shape[0], :]  # mask rows broadcast as (1, n) or (m, n)
            scores = xp.where(allowed, scores, xp.full_like(scores, -math.inf))
        weights = stable_softmax(xp, scores)  # (n,)
        output = xp.zeros_like(values[0, :])  # (d_v,)
        for j in range(values.shape[0]):
            output = output + weights[j] * values[j, :]
        weights_rows.append(weights)
        outputs.append(output)
    return xp.stack(outputs), xp.stack(weights_rows)  # (m, d_v), (m, n)


def attention_loop(Q: Any, K: Any, V: Any, mask: Any | None = None,
                   scaled: bool = True) -> tuple[Any, Any]:
    """Scaled (or plain) dot-product attention with explicit loops over queries and keys.

    score_ij = Σ_a q_ia k_ja / √d_k, one pair at a time; then each row's
    softmax and the weighted sum Σ_j w_ij v_j, one value at a time.

    Parameters
    ----------
    Q : array (m, d_k)
    K : array (n, d_k)
    V : array (n, d_v)
    mask : bool array (m, n), (1, n) or (n,), optional
    scaled : bool
        Divide by √d_k (True) or not ("Section 5.2" style, False).

    Returns
    -------
    output : array (m, d_v)
    weights : array (m, n)

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> output, weights = attention_loop(X, X, X, scaled=False)
    >>> np.round(output[0], 2)
    array([0.84, 0.58])
    """
    dims = Dims("attention_loop")
    dims.array("Q", Q, "m d_k")
    dims.array("K", K, "n d_k")
    dims.array("V", V, "n d_v")
    mask = _check_loop_mask(dims, mask)
    if not isinstance(scaled, bool):
        raise TypeError(f"attention_loop: scaled must be True or False, got {scaled!r}")
    xp = get_xp(Q, K, V, mask)
    scale = math.sqrt(dims["d_k"]) if scaled else 1.0
    with quiet_overflow():  # too-large inputs: one clear error below, no RuntimeWarning first
        rows = [[xp.sum(Q[i, :] * K[j, :]) / scale for j in range(dims["n"])] for i in range(dims["m"])]
        return _attend_rows(xp, "attention_loop", rows, V, mask)


def bahdanau_attention_loop(S: Any, H: Any, W1: Any, W2: Any, v: Any,
                            mask: Any | None = None) -> tuple[Any, Any]:
    """Bahdanau attention one (t, i) pair at a time: e_ti = vᵀ tanh(W1 s_t + W2 h_i).

    Parameters
    ----------
    S : array (m, d_s)
    H : array (n, d_h)
    W1 : array (d_a, d_s)
    W2 : array (d_a, d_h)
    v : array (d_a,)
    mask : bool array (m, n), (1, n) or (n,), optional

    Returns
    -------
    context : array (m, d_h)
    weights : array (m, n)

    Examples
    --------
    >>> import numpy as np
    >>> S, H = np.zeros((1, 2)), np.eye(2)
    >>> context, weights = bahdanau_attention_loop(S, H, np.ones((3, 2)), np.ones((3, 2)), np.ones(3))
    >>> np.round(weights, 2)
    array([[0.5, 0.5]])
    """
    dims = Dims("bahdanau_attention_loop")
    dims.array("S", S, "m d_s")
    dims.array("H", H, "n d_h")
    dims.array("W1", W1, "d_a d_s")
    dims.array("W2", W2, "d_a d_h")
    dims.array("v", v, "d_a")
    mask = _check_loop_mask(dims, mask)
    xp = get_xp(S, H, W1, W2, v, mask)
    rows = []
    with quiet_overflow():  # tanh bounds the scores, but W1 s_t itself may overflow: one clear error
        for t in range(dims["m"]):
            query_part = W1 @ S[t, :]  # (d_a,): computed once per decoder step
            rows.append([xp.sum(v * xp.tanh(query_part + W2 @ H[i, :])) for i in range(dims["n"])])
        return _attend_rows(xp, "bahdanau_attention_loop", rows, H, mask)
