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
from .steps import Steps
from .weighting import weigh

__all__ = ["bahdanau_attention", "bahdanau_attention_steps", "additive_score_items"]


def additive_score_items(S: Any, H: Any, W1: Any, W2: Any, v: Any) -> list[tuple[str, str, Any]]:
    """The additive score steps on already-checked arguments (shared with Luong's concat)."""
    xp = get_xp(S, H, W1, W2, v)
    W1_s = S @ xp.matrix_transpose(W1)  # (..., m, d_a): row t is W1 s_t
    W2_h = H @ xp.matrix_transpose(W2)  # (..., n, d_a): row i is W2 h_i
    # Every (t, i) pair: (..., m, 1, d_a) + (..., 1, n, d_a) -> (..., m, n, d_a)
    features = xp.tanh(xp.expand_dims(W1_s, axis=-2) + xp.expand_dims(W2_h, axis=-3))
    scores = features @ v  # (..., m, n)
    return [
        ("W1_s", "S W1ᵀ   (row t = W1 s_t)", W1_s),
        ("W2_h", "H W2ᵀ   (row i = W2 h_i)", W2_h),
        ("features", "tanh(W1 s_t + W2 h_i)", features),
        ("scores", "features · v", scores),
    ]


def bahdanau_attention_steps(S: Any, H: Any, W1: Any, W2: Any, v: Any,
                             mask: Any | None = None) -> Steps:
    """Bahdanau attention with every intermediate kept (see :func:`bahdanau_attention`)."""
    dims = Dims("bahdanau_attention")
    dims.array("S", S, "... m d_s")
    dims.array("H", H, "... n d_h")
    dims.array("W1", W1, "d_a d_s")
    dims.array("W2", W2, "d_a d_h")
    dims.array("v", v, "d_a")
    dims.mask("mask", mask, "... m n")
    items = additive_score_items(S, H, W1, W2, v)
    return Steps("bahdanau_attention", items + weigh(items[-1][2], H, mask, "H", "context"))


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
