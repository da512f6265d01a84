"""A GRU run over a whole sequence, with padding, and its backward in time.

The input gates of every step come from one product, gi = X W_ihᵀ + b_ih
(B, T, 3 d_h); the loop then runs :func:`~attention_edu.seq2seq.gru.gru_step`.
Padded steps (``step_mask`` 0) leave the state unchanged,
h_t = h_{t−1} + m_t (h'_t − h_{t−1}), so a backward-direction encoder starts
at each source's own last character and a forward one ends there.
Backpropagation through time walks the steps in reverse order, then forms
the weight gradients with one product each.

Leading axes are welcome: with X (2, B, T, d_in) and weights (2, 3 d_h, ·)
the two directions of a bidirectional encoder run in one loop, each with its
own weights (the backward direction reads a time-flipped X).
"""

from __future__ import annotations

from typing import Any

from ..backend import get_xp
from .gru import gru_step, gru_step_backward

__all__ = ["gru_sequence", "gru_sequence_backward"]


def gru_sequence(X: Any, h0: Any, weights: dict[str, Any], step_mask: Any | None = None) -> dict[str, Any]:
    """Run a GRU over X (..., B, T, d_in) from h0 (..., B, d_h); ``weights`` has W_ih, W_hh, b_ih, b_hh.

    Weights are (..., 3 d_h, d_in), (..., 3 d_h, d_h), (..., 3 d_h) with the
    same leading axes as X before B. ``step_mask`` (..., B, T) is 1.0 on real
    steps and 0.0 on padding. Returns a cache with ``states`` (..., B, T, d_h)
    (the state after each step) and ``last`` (..., B, d_h).

    Examples
    --------
    >>> import numpy as np
    >>> w = {"W_ih": np.zeros((6, 1)), "W_hh": np.zeros((6, 2)), "b_ih": np.zeros(6), "b_hh": np.zeros(6)}
    >>> out = gru_sequence(np.zeros((1, 3, 1)), np.ones((1, 2)), w, np.array([[1.0, 1.0, 0.0]]))
    >>> out["states"][0, :, 0], out["last"]       # halves on real steps, holds on padding
    (array([0.5 , 0.25, 0.25]), array([[0.25, 0.25]]))
    """
    xp = get_xp(X, h0)
    W_ih = xp.expand_dims(weights["W_ih"], axis=-3)  # (..., 1, 3 d_h, d_in): broadcasts over B
    b_ih = xp.expand_dims(xp.expand_dims(weights["b_ih"], axis=-2), axis=-2)  # (..., 1, 1, 3 d_h)
    b_hh = xp.expand_dims(weights["b_hh"], axis=-2)  # (..., 1, 3 d_h)
    gi = X @ xp.matrix_transpose(W_ih) + b_ih  # (..., B, T, 3 d_h)
    h, steps, states = h0, [], []
    for t in range(X.shape[-2]):
        step = gru_step(xp, gi[..., t, :], h, weights["W_hh"], b_hh)
        if step_mask is None:
            h = step.h_new  # (..., B, d_h)
        else:
            h = h + step_mask[..., t:t + 1] * (step.h_new - h)  # (..., B, d_h): padding holds h
        steps.append(step), states.append(h)
    return {"X": X, "steps": steps, "states": xp.stack(states, axis=-2), "last": h,
            "step_mask": step_mask}


def _sum_rows(xp: Any, a: Any) -> Any:
    """(..., B, T, k) → (..., B T, k): every step of every sequence one row."""
    return xp.reshape(a, tuple(a.shape[:-3]) + (a.shape[-3] * a.shape[-2], a.shape[-1]))


def gru_sequence_backward(cache: dict[str, Any], weights: dict[str, Any], d_states: Any | None,
                          d_last: Any | None) -> dict[str, Any]:
    """Gradients of :func:`gru_sequence`: ``{"X", "h0", "W_ih", "W_hh", "b_ih", "b_hh"}``.

    ``d_states`` (..., B, T, d_h) arrives at every step's state, ``d_last``
    (..., B, d_h) at the final one; either may be None (zero).
    """
    xp = get_xp(cache["X"])
    steps, step_mask = cache["steps"], cache["step_mask"]
    T = len(steps)
    W_hh = weights["W_hh"]
    dh = xp.zeros_like(cache["last"]) if d_last is None else d_last  # (..., B, d_h)
    d_gi, d_gh = [None] * T, [None] * T
    for t in range(T - 1, -1, -1):
        if d_states is not None:
            dh = dh + d_states[..., t, :]
        if step_mask is None:
            d_new, d_kept = dh, 0.0
        else:
            m = step_mask[..., t:t + 1]  # (..., B, 1)
            d_new, d_kept = m * dh, (1.0 - m) * dh
        d_gi[t], d_h, d_gh[t] = gru_step_backward(xp, steps[t], d_new, W_hh)
        dh = d_kept + d_h
    d_gi_all = xp.stack(d_gi, axis=-2)  # (..., B, T, 3 d_h)
    d_gi_rows = _sum_rows(xp, d_gi_all)  # (..., B T, 3 d_h)
    d_gh_rows = _sum_rows(xp, xp.stack(d_gh, axis=-2))  # (..., B T, 3 d_h)
    h_prev = _sum_rows(xp, xp.stack([s.inputs["h"] for s in steps], axis=-2))  # (..., B T, d_h)
    return {
        "X": d_gi_all @ xp.expand_dims(weights["W_ih"], axis=-3),  # (..., B, T, d_in)
        "h0": dh,  # (..., B, d_h)
        "W_ih": xp.matrix_transpose(d_gi_rows) @ _sum_rows(xp, cache["X"]),  # (..., 3 d_h, d_in)
        "b_ih": xp.sum(d_gi_rows, axis=-2),  # (..., 3 d_h)
        "W_hh": xp.matrix_transpose(d_gh_rows) @ h_prev,  # (..., 3 d_h, d_h)
        "b_hh": xp.sum(d_gh_rows, axis=-2),  # (..., 3 d_h)
    }
