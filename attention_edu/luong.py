"""Multiplicative (Luong) attention: dot, general and concat scores.

"Attention Mechanisms: Fundamentals", section "Attention Score Computation
Methods" (its table lists the general score qᵀ W k). Scores are not scaled.
Keys and values are both the encoder states H.

- ``"dot"``:     e_{t,i} = s_tᵀ h_i                      (needs d_s = d_h)
- ``"general"``: e_{t,i} = s_tᵀ W h_i,  W (d_s, d_h)
- ``"concat"``:  e_{t,i} = vᵀ tanh(W [s_t; h_i]),  W (d_a, d_s + d_h), v (d_a,)

``concat`` is Bahdanau's additive score with W split into [W_s | W_h].
"""

from __future__ import annotations

from typing import Any

from .additive import additive_score_items
from .backend import get_xp
from .shapes import Dims, ShapeError
from .steps import Steps
from .weighting import weigh

__all__ = ["luong_attention", "luong_attention_steps", "LUONG_SCORES"]

LUONG_SCORES = ("dot", "general", "concat")


def _score_items(score: str, S: Any, H: Any, W: Any, v: Any, dims: Dims) -> list:
    xp = get_xp(S, H, W, v)
    H_t = xp.matrix_transpose(H)  # (..., d_h, n)
    if score == "dot":
        return [("scores", "S Hᵀ   (s_t · h_i)", S @ H_t)]  # (..., m, n)
    if score == "general":
        S_W = S @ W  # (..., m, d_h): row t is s_tᵀ W
        return [("S_W", "S W   (row t = s_tᵀ W)", S_W), ("scores", "S W Hᵀ", S_W @ H_t)]
    d_s = dims["d_s"]
    W_s, W_h = W[:, :d_s], W[:, d_s:]  # (d_a, d_s), (d_a, d_h): W [s; h] = W_s s + W_h h
    return additive_score_items(S, H, W_s, W_h, v)


def luong_attention_steps(S: Any, H: Any, score: str = "dot", W: Any | None = None,
                          v: Any | None = None, mask: Any | None = None) -> Steps:
    """Luong attention with every intermediate kept (see :func:`luong_attention`)."""
    name = "luong_attention"
    if score not in LUONG_SCORES:
        raise ValueError(f"{name}: score must be one of {LUONG_SCORES}, got {score!r}")
    needs = {"dot": (), "general": ("W",), "concat": ("W", "v")}[score]
    for arg, value in (("W", W), ("v", v)):
        if arg in needs and value is None:
            raise TypeError(f"{name}: score={score!r} needs {arg}")
        if arg not in needs and value is not None:
            raise TypeError(f"{name}: score={score!r} takes no {arg}; pass {arg}=None")
    dims = Dims(name)
    dims.array("S", S, "... m d_s")
    try:
        dims.array("H", H, "... n d_s" if score == "dot" else "... n d_h")
    except ShapeError as err:
        if score != "dot":
            raise
        raise ShapeError(f"{err} (the dot score needs d_h = d_s; score='general' "
                         f"compares states of different sizes)") from None
    if score == "general":
        dims.array("W", W, "d_s d_h")
    elif score == "concat":
        dims.array("v", v, "d_a")
        dims.array("W", W, "d_a d_s+d_h")
        if W.shape[1] != dims["d_s"] + dims["d_h"]:
            raise dims.error(
                f"W has shape {tuple(W.shape)} but pattern (d_a, d_s+d_h) needs "
                f"{dims['d_s']} + {dims['d_h']} = {dims['d_s'] + dims['d_h']} columns "
                f"(d_s from S {tuple(S.shape)}, d_h from H {tuple(H.shape)})"
            )
    dims.mask("mask", mask, "... m n")
    items = _score_items(score, S, H, W, v, dims)
    return Steps(f"{name} ({score})", items + weigh(items[-1][2], H, mask, "H", "context"))


def luong_attention(S: Any, H: Any, score: str = "dot", W: Any | None = None,
                    v: Any | None = None, mask: Any | None = None) -> tuple[Any, Any]:
    """Luong attention: α = softmax_i(score(s_t, h_i)), c_t = Σ_i α_{t,i} h_i.

    Parameters
    ----------
    S : array (..., m, d_s)
        Decoder states, one row per query.
    H : array (..., n, d_h)
        Encoder states (keys and values).
    score : {"dot", "general", "concat"}
        dot: s_tᵀ h_i (d_s = d_h); general: s_tᵀ W h_i; concat: vᵀ tanh(W [s_t; h_i]).
    W : array, optional
        (d_s, d_h) for "general"; (d_a, d_s + d_h) for "concat".
    v : array (d_a,), optional
        Only for "concat".
    mask : bool array broadcastable to (..., m, n), optional

    Returns
    -------
    context : array (..., m, d_h)
    weights : array (..., m, n)

    Notes
    -----
    "Attention Mechanisms: Fundamentals", table "Attention Score Computation
    Methods" (General (Luong): qᵀ W k). With W = I, "general" equals "dot".

    Examples
    --------
    The dot score on the "cat sat mat" embeddings of "Section 5.2:
    Dot-Product Attention" (Q = K = V = X) gives that section's weights:

    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> context, weights = luong_attention(X, X, "dot")
    >>> np.round(weights[0], 2)
    array([0.42, 0.16, 0.42])
    >>> _, weights_general = luong_attention(X, X, "general", W=np.eye(2))
    >>> bool(np.allclose(weights, weights_general))
    True
    """
    steps = luong_attention_steps(S, H, score, W, v, mask)
    return steps.context, steps.weights
