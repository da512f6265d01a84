"""Additive (Bahdanau) attention: e_{t,i} = vᵀ tanh(W1 s_t + W2 h_i).

"Attention Mechanisms: Fundamentals", section "Additive Attention (Bahdanau)",
Steps 1-3. The weights are the chapter's column-vector form, W1 (d_a, d_s) and
W2 (d_a, d_h); with decoder states stacked as rows of S (m, d_s), the
projections of all states at once are S W1ᵀ and H W2ᵀ.
"""

from __future__ import annotations

from typing import Any

from .backend import get_xp
from .shapes import Dims
from .steps import Steps, check_backward_call
from .weighting import sum_to_shape, weigh, weigh_backward

__all__ = ["bahdanau_attention", "bahdanau_attention_steps", "bahdanau_attention_backward",
           "additive_scores", "additive_scores_backward", "additive_steps"]


def additive_scores(xp: Any, S: Any, H: Any, W1: Any, W2: Any, v: Any) -> tuple[Any, Any, Any, Any]:
    """``(W1_s, W2_h, features, scores)`` on arguments already checked (shared with Luong's concat)."""
    W1_s = S @ xp.matrix_transpose(W1)  # (..., m, d_a): row t is W1 s_t
    W2_h = H @ xp.matrix_transpose(W2)  # (..., n, d_a): row i is W2 h_i
    # Every (t, i) pair: (..., m, 1, d_a) + (..., 1, n, d_a) -> (..., m, n, d_a)
    features = xp.tanh(xp.expand_dims(W1_s, axis=-2) + xp.expand_dims(W2_h, axis=-3))
    scores = features @ v  # (..., m, n)
    return W1_s, W2_h, features, scores


def additive_steps(W1_s: Any, W2_h: Any, features: Any, scores: Any) -> dict[str, tuple[str, Any]]:
    """The additive score steps with their equations, for a :class:`Steps`."""
    return {
        "W1_s": ("S W1ᵀ   (row t = W1 s_t)", W1_s),
        "W2_h": ("H W2ᵀ   (row i = W2 h_i)", W2_h),
        "features": ("tanh(W1 s_t + W2 h_i)", features),
        "scores": ("features · v", scores),
    }


def additive_scores_backward(xp: Any, S: Any, H: Any, W1: Any, W2: Any, v: Any, features: Any,
                             d_scores: Any) -> tuple[Any, Any, Any, Any, Any]:
    """``(d_S, d_H, d_W1, d_W2, d_v)`` of :func:`additive_scores`, each summed to its input's shape.

    With F = tanh(P), P_ti = W1 s_t + W2 h_i and scores = F v:
    dF = d_scores vᵀ, dv = Σ_ti d_scores_ti F_ti, dP = dF ⊙ (1 − F²);
    d(W1 s_t) = Σ_i dP_ti, d(W2 h_i) = Σ_t dP_ti; then through the projections.
    """
    d_scores_ = xp.expand_dims(d_scores, axis=-1)  # (..., m, n, 1)
    d_v_terms = d_scores_ * features  # (..., m, n, d_a); the mask may have added batch axes
    d_v = xp.sum(d_v_terms, axis=tuple(range(d_v_terms.ndim - 1)))  # (d_a,)
    d_pre = d_scores_ * v * (1 - features * features)  # (..., m, n, d_a): tanh' = 1 − tanh²
    d_W1_s = xp.sum(d_pre, axis=-2)  # (..., m, d_a)
    d_W2_h = xp.sum(d_pre, axis=-3)  # (..., n, d_a)
    d_S = d_W1_s @ W1  # (..., m, d_s)
    d_H = d_W2_h @ W2  # (..., n, d_h)
    d_W1 = xp.matrix_transpose(d_W1_s) @ S  # (..., d_a, d_s)
    d_W2 = xp.matrix_transpose(d_W2_h) @ H  # (..., d_a, d_h)
    return (sum_to_shape(xp, d_S, S.shape), sum_to_shape(xp, d_H, H.shape), sum_to_shape(xp, d_W1, W1.shape),
            sum_to_shape(xp, d_W2, W2.shape), d_v)


def bahdanau_attention_steps(S: Any, H: Any, W1: Any, W2: Any, v: Any,
                             mask: Any | None = None) -> Steps:
    """Bahdanau attention with every intermediate kept (see :func:`bahdanau_attention`)."""
    name = "bahdanau_attention"
    dims = Dims(name)
    dims.array("S", S, "... m d_s")
    dims.array("H", H, "... n d_h")
    dims.array("W1", W1, "d_a d_s")
    dims.array("W2", W2, "d_a d_h")
    dims.array("v", v, "d_a")
    dims.mask("mask", mask, "... m n")
    xp = get_xp(S, H, W1, W2, v, mask)
    W1_s, W2_h, features, scores = additive_scores(xp, S, H, W1, W2, v)
    masked_scores, weights, context = weigh(xp, name, scores, H, mask)  # (..., m, n), (..., m, d_h)
    return Steps(name, {
        **additive_steps(W1_s, W2_h, features, scores),
        "masked_scores": ("scores where mask else −inf", masked_scores),
        "weights": ("softmax over keys (last axis)", weights),
        "context": ("weights H", context),
    }, dict(S=S, H=H, W1=W1, W2=W2, v=v, mask=mask))


def bahdanau_attention_backward(steps: Steps, d_context: Any, d_weights: Any | None = None) -> dict[str, Any]:
    """Gradients of Bahdanau attention, from the forward's steps.

    With α the weights, G = d_context, F = tanh(W1 s_t + W2 h_i) the features:

    - dH (as values) = αᵀ G;  dα = G Hᵀ (+ d_weights)
    - de = α ⊙ (dα − rowsum(dα ⊙ α))   (softmax backward; 0 where masked)
    - dv = Σ_ti de_ti F_ti;  dP = de vᵀ ⊙ (1 − F²)
    - dS = (Σ_i dP_ti) W1;  dW1 = (Σ_i dP_ti)ᵀ S;  likewise dH (as keys) and dW2 over t

    Parameters
    ----------
    steps : Steps
        From :func:`bahdanau_attention_steps`.
    d_context : array (..., m, d_h)
        dL/d context.
    d_weights : array (..., m, n), optional
        dL/d weights arriving directly (None = zero).

    Returns
    -------
    dict
        ``{"S", "H", "W1", "W2", "v"}``; H collects both its roles (keys and values).

    Notes
    -----
    "Attention Mechanisms: Fundamentals", section "Additive Attention
    (Bahdanau)", Steps 1-3 in reverse.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> S, H = rng.normal(size=(2, 3)), rng.normal(size=(4, 5))
    >>> W1, W2, v = rng.normal(size=(6, 3)), rng.normal(size=(6, 5)), rng.normal(size=6)
    >>> steps = bahdanau_attention_steps(S, H, W1, W2, v)
    >>> grads = bahdanau_attention_backward(steps, np.ones((2, 5)))
    >>> {name: g.shape for name, g in grads.items()}
    {'S': (2, 3), 'H': (4, 5), 'W1': (6, 3), 'W2': (6, 5), 'v': (6,)}
    """
    name = "bahdanau_attention_backward"
    xp = check_backward_call(name, steps, "bahdanau_attention", {"d_context": (d_context, "context"),
                                                                 "d_weights": (d_weights, "weights")})
    S, H, W1, W2, v, mask = (steps.inputs[key] for key in ("S", "H", "W1", "W2", "v", "mask"))
    d_scores, d_H_values = weigh_backward(xp, steps.weights, H, mask, d_context, d_weights)
    d_S, d_H_keys, d_W1, d_W2, d_v = additive_scores_backward(xp, S, H, W1, W2, v, steps.features, d_scores)
    d_H = d_H_keys + sum_to_shape(xp, d_H_values, H.shape)  # H is both the keys and the values
    return {"S": d_S, "H": d_H, "W1": d_W1, "W2": d_W2, "v": d_v}


def bahdanau_attention(S: Any, H: Any, W1: Any, W2: Any, v: Any,
                       mask: Any | None = None) -> tuple[Any, Any]:
    """Additive attention: α = softmax_i(vᵀ tanh(W1 s_t + W2 h_i)), c_t = Σ_i α_{t,i} h_i.

    Keys and values are both the encoder states H.

    Parameters
    ----------
    S : array (..., m, d_s)
        Decoder states s_t, one row per query.
    H : array (..., n, d_h)
        Encoder states h_i, one row per source position.
    W1 : array (d_a, d_s)
    W2 : array (d_a, d_h)
    v : array (d_a,)
    mask : bool array broadcastable to (..., m, n), optional

    Returns
    -------
    context : array (..., m, d_h)
        Context vectors c_t.
    weights : array (..., m, n)
        Attention weights α_{t,i}.

    Notes
    -----
    "Attention Mechanisms: Fundamentals", section "Additive Attention
    (Bahdanau)", Steps 1-3. The intermediate tanh features have shape
    (..., m, n, d_a): that tensor is what makes additive attention costly.

    Examples
    --------
    The chapter's worked example fixes the scores (0.8, 2.1, 0.5) and the
    encoder states. Choosing W2 so that tanh(W2 h_i) is the i-th unit vector
    (and W1 = 0) makes the scores equal v, which reproduces it:

    >>> import numpy as np
    >>> H = np.array([[1.0, 0.5, -0.3, 0.8], [0.3, 0.9, 0.6, -0.2], [-0.4, 0.2, 0.7, 0.5]])
    >>> W2 = 20 * np.linalg.pinv(H.T)          # W2 h_i = 20 e_i, and tanh(20) = 1.0
    >>> W1, S = np.zeros((3, 4)), np.zeros((1, 4))
    >>> v = np.array([0.8, 2.1, 0.5])
    >>> context, weights = bahdanau_attention(S, H, W1, W2, v)
    >>> np.round(weights, 3)
    array([[0.185, 0.678, 0.137]])
    >>> np.round(context, 3)     # the chapter prints 0.333 first: it sums rounded weights
    array([[0.334, 0.73 , 0.447, 0.081]])
    """
    steps = bahdanau_attention_steps(S, H, W1, W2, v, mask)
    return steps.context, steps.weights
