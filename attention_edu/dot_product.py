"""Dot-product and scaled dot-product attention, forward and backward.

"Section 5.2: Dot-Product Attention" derives softmax(Q Kᵀ) V;
"Attention Mechanisms: Fundamentals", section "Scaled Dot-Product Attention",
divides the scores by √d_k; "The matrix formulation of scaled dot-product
attention" walks through the same four steps with their shapes. The backward
passes follow the same steps in reverse; section "Why Scaling Matters:
Variance Analysis" explains why the scale matters for these gradients.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from .backend import get_xp, quiet_overflow
from .shapes import Dims
from .steps import Steps, check_backward_call, results
from .weighting import sum_to_shape, weigh, weigh_backward

__all__ = [
    "dot_product_attention", "dot_product_attention_steps", "dot_product_attention_backward",
    "scaled_dot_product_attention", "scaled_dot_product_attention_steps",
    "scaled_dot_product_attention_backward", "Attended", "attend", "attend_backward", "attended_steps",
]


class Attended(NamedTuple):
    """The named locals of :func:`attend` (``scaled_scores`` and ``masked_scores`` may be None)."""

    scores: Any
    scaled_scores: Any
    masked_scores: Any
    weights: Any
    output: Any


def attend(xp: Any, func: str, Q: Any, K: Any, V: Any, mask: Any | None, scaled: bool) -> Attended:
    """The kernel of (scaled) dot-product attention, on arguments already checked by ``func``."""
    scores = Q @ xp.matrix_transpose(K)  # (..., m, n)
    scaled_scores = scores / math.sqrt(Q.shape[-1]) if scaled else None  # (..., m, n); keeps float32
    masked_scores, weights, output = weigh(xp, func, scores if not scaled else scaled_scores, V, mask)
    return Attended(scores, scaled_scores, masked_scores, weights, output)  # weights (..., m, n), output (..., m, d_v)


def attended_steps(att: Attended) -> dict[str, tuple[str, Any]]:
    """The steps of an :class:`Attended`, with their equations, for a :class:`Steps`."""
    return {
        "scores": ("Q Kᵀ", att.scores),
        "scaled_scores": ("Q Kᵀ / √d_k", att.scaled_scores),
        "masked_scores": (f"{'scores' if att.scaled_scores is None else 'scaled_scores'} where mask else −inf",
                          att.masked_scores),
        "weights": ("softmax over keys (last axis)", att.weights),
        "output": ("weights V", att.output),
    }


def attend_backward(xp: Any, Q: Any, K: Any, V: Any, mask: Any | None, weights: Any, d_output: Any,
                    d_weights: Any | None, scaled: bool) -> tuple[Any, Any, Any]:
    """``(d_Q, d_K, d_V)`` of :func:`attend`, in the broadcast batch shape (not yet summed)."""
    d_scores, d_V = weigh_backward(xp, weights, V, mask, d_output, d_weights)  # (..., m, n), (..., n, d_v)
    if scaled:
        d_scores = d_scores / math.sqrt(Q.shape[-1])  # the scale divides the scores, so their gradient too
    d_Q = d_scores @ K  # (..., m, d_k)
    d_K = xp.matrix_transpose(d_scores) @ Q  # (..., n, d_k)
    return d_Q, d_K, d_V


def _check_qkv(func: str, Q: Any, K: Any, V: Any, mask: Any | None) -> Dims:
    dims = Dims(func)
    dims.array("Q", Q, "... m d_k")
    dims.array("K", K, "... n d_k")
    dims.array("V", V, "... n d_v")
    dims.mask("mask", mask, "... m n")
    return dims


def dot_product_attention_steps(Q: Any, K: Any, V: Any, mask: Any | None = None) -> Steps:
    """Unscaled dot-product attention, every intermediate kept (see :func:`dot_product_attention`)."""
    name = "dot_product_attention"
    _check_qkv(name, Q, K, V, mask)
    with quiet_overflow():  # too-large inputs: one clear error from weigh, no RuntimeWarning first
        attended = attend(get_xp(Q, K, V, mask), name, Q, K, V, mask, scaled=False)
    return Steps(name, attended_steps(attended), dict(Q=Q, K=K, V=V, mask=mask))


def dot_product_attention(Q: Any, K: Any, V: Any, mask: Any | None = None) -> tuple[Any, Any]:
    """Dot-product attention without scaling: softmax(Q Kᵀ) V.

    Parameters
    ----------
    Q : array (..., m, d_k)
        Queries.
    K : array (..., n, d_k)
        Keys.
    V : array (..., n, d_v)
        Values.
    mask : bool array broadcastable to (..., m, n), optional
        True where query i may attend to key j.

    Returns
    -------
    output : array (..., m, d_v)
    weights : array (..., m, n)
        Each row sums to 1 (0 for a fully masked row).

    Notes
    -----
    "Section 5.2: Dot-Product Attention", section "The Complete Formula" and
    its worked example "cat sat mat". Use :func:`dot_product_attention_steps`
    to see the scores and weights.

    Examples
    --------
    "cat sat mat" with identity projections, so queries, keys and values all equal X:

    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> output, weights = dot_product_attention(X, X, X)
    >>> np.round(weights[0], 2)
    array([0.42, 0.16, 0.42])
    """
    steps = dot_product_attention_steps(Q, K, V, mask)
    return results(steps, "output", "weights")


def scaled_dot_product_attention_steps(Q: Any, K: Any, V: Any, mask: Any | None = None) -> Steps:
    """Scaled dot-product attention, every intermediate kept (see :func:`scaled_dot_product_attention`).

    Examples
    --------
    >>> import numpy as np
    >>> steps = scaled_dot_product_attention_steps(np.ones((2, 4)), np.ones((3, 4)), np.ones((3, 5)))
    >>> steps.names
    ('scores', 'scaled_scores', 'weights', 'output')
    """
    name = "scaled_dot_product_attention"
    _check_qkv(name, Q, K, V, mask)
    with quiet_overflow():  # too-large inputs: one clear error from weigh, no RuntimeWarning first
        attended = attend(get_xp(Q, K, V, mask), name, Q, K, V, mask, scaled=True)
    return Steps(name, attended_steps(attended), dict(Q=Q, K=K, V=V, mask=mask))


def scaled_dot_product_attention(Q: Any, K: Any, V: Any, mask: Any | None = None) -> tuple[Any, Any]:
    """Scaled dot-product attention: softmax(Q Kᵀ / √d_k) V.

    Dividing by √d_k keeps the scores' variance near 1 whatever d_k is, so
    the softmax does not saturate.

    Parameters
    ----------
    Q : array (..., m, d_k)
        Queries; leading batch dimensions broadcast against K, V and mask.
    K : array (..., n, d_k)
        Keys.
    V : array (..., n, d_v)
        Values.
    mask : bool array broadcastable to (..., m, n), optional
        True where query i may attend to key j; applied before the softmax.

    Returns
    -------
    output : array (..., m, d_v)
    weights : array (..., m, n)

    Notes
    -----
    "Attention Mechanisms: Fundamentals", section "Scaled Dot-Product
    Attention", Steps 1-4 and its worked example (one query, three keys).

    Examples
    --------
    The chapter's example: q = (1.0, 0.5, −0.3, 0.8) against three keys.

    >>> import numpy as np
    >>> q = np.array([[1.0, 0.5, -0.3, 0.8]])
    >>> K = np.array([[0.8, 0.2, -0.1, 0.5], [0.3, 0.7, 0.4, -0.2], [-0.5, 0.1, 0.9, 0.6]])
    >>> V = np.array([[0.5, 0.8, -0.2, 0.6, 0.3], [0.2, -0.4, 0.7, 0.1, 0.9],
    ...               [-0.3, 0.5, 0.4, -0.6, 0.2]])
    >>> output, weights = scaled_dot_product_attention(q, K, V)
    >>> np.round(weights, 3)
    array([[0.482, 0.298, 0.22 ]])
    >>> output.shape
    (1, 5)
    """
    steps = scaled_dot_product_attention_steps(Q, K, V, mask)
    return results(steps, "output", "weights")


def _backward(name: str, steps: Steps, d_output: Any, d_weights: Any | None, scaled: bool) -> dict[str, Any]:
    forward = name.removesuffix("_backward")
    xp = check_backward_call(name, steps, forward, {"d_output": (d_output, "output"),
                                                    "d_weights": (d_weights, "weights")})
    Q, K, V, mask = (steps.inputs[key] for key in ("Q", "K", "V", "mask"))
    d_Q, d_K, d_V = attend_backward(xp, Q, K, V, mask, steps.weights, d_output, d_weights, scaled)
    return {"Q": sum_to_shape(xp, d_Q, Q.shape), "K": sum_to_shape(xp, d_K, K.shape),
            "V": sum_to_shape(xp, d_V, V.shape)}


def dot_product_attention_backward(steps: Steps, d_output: Any, d_weights: Any | None = None) -> dict[str, Any]:
    """Gradients of unscaled dot-product attention: see :func:`scaled_dot_product_attention_backward`.

    The same equations with the scale 1/√d_k left out.

    Parameters
    ----------
    steps : Steps
        From :func:`dot_product_attention_steps`.
    d_output : array (..., m, d_v)
        dL/d output.
    d_weights : array (..., m, n), optional
        dL/d weights arriving directly (None = zero).

    Returns
    -------
    dict
        ``{"Q", "K", "V"}``, each the shape, namespace, device and dtype of that input.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> grads = dot_product_attention_backward(dot_product_attention_steps(X, X, X), np.ones((3, 2)))
    >>> sorted(grads), grads["V"].sum(axis=0)      # each query's weights sum to 1
    (['K', 'Q', 'V'], array([3., 3.]))
    """
    return _backward("dot_product_attention_backward", steps, d_output, d_weights, scaled=False)


def scaled_dot_product_attention_backward(steps: Steps, d_output: Any,
                                          d_weights: Any | None = None) -> dict[str, Any]:
    """Gradients of scaled dot-product attention, from the forward's steps.

    With W the weights, G = d_output and the forward's S = Q Kᵀ / √d_k:

    - dV = Wᵀ G
    - dW = G Vᵀ (+ d_weights)
    - dS = W ⊙ (dW − rowsum(dW ⊙ W))   (softmax backward; 0 where masked)
    - dQ = dS K / √d_k
    - dK = dSᵀ Q / √d_k

    Gradients of inputs that were broadcast over batch dimensions are summed
    over them.

    Parameters
    ----------
    steps : Steps
        From :func:`scaled_dot_product_attention_steps` (the forward cache).
    d_output : array (..., m, d_v)
        dL/d output, the gradient arriving at the output.
    d_weights : array (..., m, n), optional
        dL/d weights arriving directly (None = zero), e.g. from an entropy penalty.

    Returns
    -------
    dict
        ``{"Q": dL/dQ, "K": dL/dK, "V": dL/dV}``, each with the shape, namespace,
        device and dtype of that input. Masked keys get exactly zero gradient;
        a fully masked query row gives zero gradients.

    Notes
    -----
    "Attention Mechanisms: Fundamentals", section "Why Scaling Matters:
    Variance Analysis": the softmax Jacobian W_i (δ_ij − W_j) vanishes when the
    softmax saturates, and dS carries that factor.

    Examples
    --------
    The chapter's example (one query, three keys), with dL/d output = 1:

    >>> import numpy as np
    >>> q = np.array([[1.0, 0.5, -0.3, 0.8]])
    >>> K = np.array([[0.8, 0.2, -0.1, 0.5], [0.3, 0.7, 0.4, -0.2], [-0.5, 0.1, 0.9, 0.6]])
    >>> V = np.array([[0.5, 0.8, -0.2, 0.6, 0.3], [0.2, -0.4, 0.7, 0.1, 0.9],
    ...               [-0.3, 0.5, 0.4, -0.6, 0.2]])
    >>> steps = scaled_dot_product_attention_steps(q, K, V)
    >>> grads = scaled_dot_product_attention_backward(steps, np.ones((1, 5)))
    >>> np.round(grads["V"][:, 0], 3)      # dV = Wᵀ G: each value row gets its weight
    array([0.482, 0.298, 0.22 ])
    >>> grads["Q"].shape, grads["K"].shape
    ((1, 4), (3, 4))
    """
    return _backward("scaled_dot_product_attention_backward", steps, d_output, d_weights, scaled=True)
