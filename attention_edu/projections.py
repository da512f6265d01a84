"""Self- and cross-attention: project inputs to Q, K, V, then scaled dot-product attention.

"Attention Mechanisms: Fundamentals", sections "Projecting to QKV" and
"Self-Attention vs Cross-Attention". Row-vector form, as in the chapter:
Q = X W^Q with W^Q (d_model, d_k). No biases.
"""

from __future__ import annotations

from typing import Any

from .dot_product import scaled_items
from .shapes import Dims
from .steps import Steps

__all__ = ["self_attention", "self_attention_steps", "cross_attention", "cross_attention_steps"]


def _projected_steps(name: str, X_q: Any, X_kv: Any, W_Q: Any, W_K: Any, W_V: Any,
                     mask: Any | None, same_source: bool) -> Steps:
    dims = Dims(name)
    if same_source:
        dims.array("X", X_q, "... n d_model")
        dims.shape("X", tuple(X_q.shape), "... m d_model")  # queries and keys are the same tokens
    else:
        dims.array("X_q", X_q, "... m d_model")
        dims.array("X_kv", X_kv, "... n d_model")
    dims.array("W_Q", W_Q, "d_model d_k")
    dims.array("W_K", W_K, "d_model d_k")
    dims.array("W_V", W_V, "d_model d_v")
    dims.mask("mask", mask, "... m n")
    Q = X_q @ W_Q  # (..., m, d_k)
    K = X_kv @ W_K  # (..., n, d_k)
    V = X_kv @ W_V  # (..., n, d_v)
    source = "X" if same_source else "X_kv"
    items = [("Q", f"{'X' if same_source else 'X_q'} W_Q", Q), ("K", f"{source} W_K", K),
             ("V", f"{source} W_V", V)]
    return Steps(name, items + scaled_items(Q, K, V, mask, dims["d_k"]))


def self_attention_steps(X: Any, W_Q: Any, W_K: Any, W_V: Any, mask: Any | None = None) -> Steps:
    """Single-head self-attention with every intermediate kept (see :func:`self_attention`)."""
    return _projected_steps("self_attention", X, X, W_Q, W_K, W_V, mask, True)


def self_attention(X: Any, W_Q: Any, W_K: Any, W_V: Any, mask: Any | None = None) -> tuple[Any, Any]:
    """Single-head self-attention: softmax((X W_Q)(X W_K)ᵀ / √d_k) (X W_V).

    Parameters
    ----------
    X : array (..., n, d_model)
        Token representations; queries, keys and values all come from X.
    W_Q, W_K : array (d_model, d_k)
    W_V : array (d_model, d_v)
    mask : bool array broadcastable to (..., n, n), optional
        e.g. ``causal_mask(n)`` for a decoder.

    Returns
    -------
    output : array (..., n, d_v)
    weights : array (..., n, n)

    Notes
    -----
    "Attention Mechanisms: Fundamentals", sections "Projecting to QKV"
    (its 5-token example with d_model = 512, d_k = d_v = 64) and
    "Self-Attention vs Cross-Attention".

    Examples
    --------
    "cat sat mat" of "Section 5.2: Dot-Product Attention" uses identity
    projections; that section does not scale, so its 0.42 becomes 0.40 here:

    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> I = np.eye(2)
    >>> output, weights = self_attention(X, I, I, I)
    >>> np.round(weights[0], 2)
    array([0.4, 0.2, 0.4])
    """
    steps = self_attention_steps(X, W_Q, W_K, W_V, mask)
    return steps.output, steps.weights


def cross_attention_steps(X_q: Any, X_kv: Any, W_Q: Any, W_K: Any, W_V: Any,
                          mask: Any | None = None) -> Steps:
    """Cross-attention with every intermediate kept (see :func:`cross_attention`)."""
    return _projected_steps("cross_attention", X_q, X_kv, W_Q, W_K, W_V, mask, False)


def cross_attention(X_q: Any, X_kv: Any, W_Q: Any, W_K: Any, W_V: Any,
                    mask: Any | None = None) -> tuple[Any, Any]:
    """Single-head cross-attention: queries from X_q, keys and values from X_kv.

    softmax((X_q W_Q)(X_kv W_K)ᵀ / √d_k) (X_kv W_V)

    Parameters
    ----------
    X_q : array (..., m, d_model)
        e.g. decoder states.
    X_kv : array (..., n, d_model)
        e.g. encoder outputs.
    W_Q, W_K : array (d_model, d_k)
    W_V : array (d_model, d_v)
    mask : bool array broadcastable to (..., m, n), optional

    Returns
    -------
    output : array (..., m, d_v)
    weights : array (..., m, n)

    Notes
    -----
    "Attention Mechanisms: Fundamentals", section "Self-Attention vs
    Cross-Attention".

    Examples
    --------
    >>> import numpy as np
    >>> out, w = cross_attention(np.ones((2, 4)), np.ones((3, 4)), np.eye(4), np.eye(4), np.ones((4, 5)))
    >>> out.shape, w.shape
    ((2, 5), (2, 3))
    >>> np.round(w[0], 3)
    array([0.333, 0.333, 0.333])
    """
    steps = cross_attention_steps(X_q, X_kv, W_Q, W_K, W_V, mask)
    return steps.output, steps.weights
