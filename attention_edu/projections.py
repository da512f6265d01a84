"""Self- and cross-attention: project inputs to Q, K, V, then scaled dot-product attention; and back.

"Attention Mechanisms: Fundamentals", sections "Projecting to QKV" and
"Self-Attention vs Cross-Attention". Row-vector form, as in the chapter:
Q = X W^Q with W^Q (d_model, d_k). No biases.
"""

from __future__ import annotations

from typing import Any

from .backend import get_xp
from .dot_product import attend, attend_backward, attended_steps
from .shapes import Dims
from .steps import Steps, check_backward_call
from .weighting import sum_to_shape

__all__ = ["self_attention", "self_attention_steps", "self_attention_backward",
           "cross_attention", "cross_attention_steps", "cross_attention_backward"]


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
    xp = get_xp(X_q, X_kv, W_Q, W_K, W_V, mask)
    Q = X_q @ W_Q  # (..., m, d_k)
    K = X_kv @ W_K  # (..., n, d_k)
    V = X_kv @ W_V  # (..., n, d_v)
    attended = attend(xp, name, Q, K, V, mask, scaled=True)
    source = "X" if same_source else "X_kv"
    inputs = dict(X=X_q) if same_source else dict(X_q=X_q, X_kv=X_kv)
    return Steps(name, {
        "Q": (f"{'X' if same_source else 'X_q'} W_Q", Q),
        "K": (f"{source} W_K", K),
        "V": (f"{source} W_V", V),
        **attended_steps(attended),
    }, dict(inputs, W_Q=W_Q, W_K=W_K, W_V=W_V, mask=mask))


def _projected_backward(name: str, steps: Steps, d_output: Any, d_weights: Any | None) -> dict[str, Any]:
    """{"X_q", "X_kv", "W_Q", "W_K", "W_V"}: attention's backward, then through Q = X_q W_Q etc."""
    xp = check_backward_call(name, steps, name.removesuffix("_backward"),
                             {"d_output": (d_output, "output"), "d_weights": (d_weights, "weights")})
    inputs = steps.inputs
    X_q, X_kv = (inputs["X"], inputs["X"]) if "X" in inputs else (inputs["X_q"], inputs["X_kv"])
    W_Q, W_K, W_V = inputs["W_Q"], inputs["W_K"], inputs["W_V"]
    d_Q, d_K, d_V = attend_backward(xp, steps.Q, steps.K, steps.V, inputs["mask"], steps.weights,
                                    d_output, d_weights, scaled=True)  # (..., m, d_k), (..., n, d_k), (..., n, d_v)
    return {
        "X_q": sum_to_shape(xp, d_Q @ xp.matrix_transpose(W_Q), X_q.shape),  # (..., m, d_model)
        "X_kv": sum_to_shape(xp, d_K @ xp.matrix_transpose(W_K) + d_V @ xp.matrix_transpose(W_V), X_kv.shape),
        "W_Q": sum_to_shape(xp, xp.matrix_transpose(X_q) @ d_Q, W_Q.shape),  # (d_model, d_k)
        "W_K": sum_to_shape(xp, xp.matrix_transpose(X_kv) @ d_K, W_K.shape),  # (d_model, d_k)
        "W_V": sum_to_shape(xp, xp.matrix_transpose(X_kv) @ d_V, W_V.shape),  # (d_model, d_v)
    }


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


def self_attention_backward(steps: Steps, d_output: Any, d_weights: Any | None = None) -> dict[str, Any]:
    """Gradients of single-head self-attention, from the forward's steps.

    Scaled dot-product attention's backward gives dQ, dK, dV (see
    :func:`attention_edu.scaled_dot_product_attention_backward`); then, since
    Q = X W_Q, K = X W_K and V = X W_V all read X:

    - dW_Q = Xᵀ dQ, dW_K = Xᵀ dK, dW_V = Xᵀ dV
    - dX = dQ W_Qᵀ + dK W_Kᵀ + dV W_Vᵀ

    Parameters
    ----------
    steps : Steps
        From :func:`self_attention_steps`.
    d_output : array (..., n, d_v)
    d_weights : array (..., n, n), optional

    Returns
    -------
    dict
        ``{"X", "W_Q", "W_K", "W_V"}``.

    Examples
    --------
    >>> import numpy as np
    >>> X, I = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), np.eye(2)
    >>> grads = self_attention_backward(self_attention_steps(X, I, I, I), np.ones((3, 2)))
    >>> sorted(grads)
    ['W_K', 'W_Q', 'W_V', 'X']
    """
    grads = _projected_backward("self_attention_backward", steps, d_output, d_weights)
    return {"X": grads.pop("X_q") + grads.pop("X_kv"), **grads}


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


def cross_attention_backward(steps: Steps, d_output: Any, d_weights: Any | None = None) -> dict[str, Any]:
    """Gradients of single-head cross-attention, from the forward's steps.

    As :func:`self_attention_backward`, with the queries' input apart:
    dX_q = dQ W_Qᵀ, dW_Q = X_qᵀ dQ; dX_kv = dK W_Kᵀ + dV W_Vᵀ,
    dW_K = X_kvᵀ dK, dW_V = X_kvᵀ dV.

    Parameters
    ----------
    steps : Steps
        From :func:`cross_attention_steps`.
    d_output : array (..., m, d_v)
    d_weights : array (..., m, n), optional

    Returns
    -------
    dict
        ``{"X_q", "X_kv", "W_Q", "W_K", "W_V"}``.

    Examples
    --------
    >>> import numpy as np
    >>> steps = cross_attention_steps(np.ones((2, 4)), np.ones((3, 4)), np.eye(4), np.eye(4), np.ones((4, 5)))
    >>> grads = cross_attention_backward(steps, np.ones((2, 5)))
    >>> grads["X_q"].shape, grads["X_kv"].shape
    ((2, 4), (3, 4))
    """
    return _projected_backward("cross_attention_backward", steps, d_output, d_weights)
