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

from .additive import additive_scores, additive_scores_backward, additive_steps
from .backend import get_xp, quiet_overflow
from .shapes import Dims, ShapeError
from .steps import Steps, check_backward_call, results
from .weighting import sum_to_shape, weigh, weigh_backward

__all__ = ["luong_attention", "luong_attention_steps", "luong_attention_backward", "LUONG_SCORES"]

LUONG_SCORES = ("dot", "general", "concat")


def _scores(xp: Any, score: str, S: Any, H: Any, W: Any, v: Any) -> dict[str, tuple[str, Any]]:
    """The score steps of each variant, on arguments already checked."""
    if score == "dot":
        scores = S @ xp.matrix_transpose(H)  # (..., m, n)
        return {"scores": ("S Hᵀ   (s_t · h_i)", scores)}
    if score == "general":
        S_W = S @ W  # (..., m, d_h): row t is s_tᵀ W
        scores = S_W @ xp.matrix_transpose(H)  # (..., m, n)
        return {"S_W": ("S W   (row t = s_tᵀ W)", S_W), "scores": ("S W Hᵀ", scores)}
    d_s = S.shape[-1]
    W_s, W_h = W[:, :d_s], W[:, d_s:]  # (d_a, d_s), (d_a, d_h): W [s; h] = W_s s + W_h h
    return additive_steps(*additive_scores(xp, S, H, W_s, W_h, v))


def _scores_backward(xp: Any, steps: Steps, d_scores: Any) -> dict[str, Any]:
    """Gradients of the score step: {"S", "H" (as keys), "W", "v"} as the variant has them."""
    S, H, W, v, score = (steps.inputs[key] for key in ("S", "H", "W", "v", "score"))
    if score == "dot":  # scores = S Hᵀ
        return {"S": d_scores @ H, "H": xp.matrix_transpose(d_scores) @ S}  # (..., m, d_s), (..., n, d_h)
    if score == "general":  # scores = (S W) Hᵀ
        d_S_W = d_scores @ H  # (..., m, d_h)
        return {"S": d_S_W @ xp.matrix_transpose(W),  # (..., m, d_s)
                "H": xp.matrix_transpose(d_scores) @ steps.S_W,  # (..., n, d_h)
                "W": sum_to_shape(xp, xp.matrix_transpose(S) @ d_S_W, W.shape)}  # (d_s, d_h)
    d_s = S.shape[-1]
    d_S, d_H, d_W_s, d_W_h, d_v = additive_scores_backward(xp, S, H, W[:, :d_s], W[:, d_s:], v,
                                                           steps.features, d_scores)
    return {"S": d_S, "H": d_H, "W": xp.concat([d_W_s, d_W_h], axis=1), "v": d_v}  # W (d_a, d_s+d_h)


def luong_attention_steps(S: Any, H: Any, score: str = "dot", W: Any | None = None,
                          v: Any | None = None, mask: Any | None = None) -> Steps:
    """Luong attention with every intermediate kept (see :func:`luong_attention`)."""
    name = "luong_attention"
    if not isinstance(score, str) or score not in LUONG_SCORES:
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
    xp = get_xp(S, H, W, v, mask)
    with quiet_overflow():  # too-large inputs: one clear error from weigh, no RuntimeWarning first
        score_steps = _scores(xp, score, S, H, W, v)
        masked_scores, weights, context = weigh(xp, name, score_steps["scores"][1], H, mask)
    return Steps(f"{name} ({score})", {
        **score_steps,
        "masked_scores": ("scores where mask else −inf", masked_scores),
        "weights": ("softmax over keys (last axis)", weights),
        "context": ("weights H", context),
    }, dict(S=S, H=H, score=score, W=W, v=v, mask=mask))


def luong_attention_backward(steps: Steps, d_context: Any, d_weights: Any | None = None) -> dict[str, Any]:
    """Gradients of Luong attention (dot, general or concat), from the forward's steps.

    With α the weights and G = d_context: dH (as values) = αᵀ G, dα = G Hᵀ
    (+ d_weights), de = α ⊙ (dα − rowsum(dα ⊙ α)); then through the score:

    - dot, e = S Hᵀ: dS = de H, dH += deᵀ S
    - general, e = (S W) Hᵀ: dS = de H Wᵀ, dH += deᵀ (S W), dW = Sᵀ de H
    - concat, e = vᵀ tanh(W_s s_t + W_h h_i): as Bahdanau's backward with W = [W_s | W_h]

    Parameters
    ----------
    steps : Steps
        From :func:`luong_attention_steps`.
    d_context : array (..., m, d_h)
        dL/d context.
    d_weights : array (..., m, n), optional
        dL/d weights arriving directly (None = zero).

    Returns
    -------
    dict
        ``{"S", "H"}``, plus ``"W"`` for general and concat and ``"v"`` for concat.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> grads = luong_attention_backward(luong_attention_steps(X, X, "general", W=np.eye(2)), np.ones((3, 2)))
    >>> sorted(grads), grads["W"].shape
    (['H', 'S', 'W'], (2, 2))
    """
    name = "luong_attention_backward"
    xp = check_backward_call(name, steps, "luong_attention", {"d_context": (d_context, "context"),
                                                              "d_weights": (d_weights, "weights")})
    S, H, mask = steps.inputs["S"], steps.inputs["H"], steps.inputs["mask"]
    d_scores, d_H_values = weigh_backward(xp, steps.weights, H, mask, d_context, d_weights)
    grads = _scores_backward(xp, steps, d_scores)
    return {**grads, "S": sum_to_shape(xp, grads["S"], S.shape),
            "H": sum_to_shape(xp, grads["H"], H.shape) + sum_to_shape(xp, d_H_values, H.shape)}   # H is the keys
    # and the values; each part summed to H's shape alone (concat's is already: added first, it counted per batch entry)


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
    return results(steps, "context", "weights")
