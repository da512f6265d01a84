"""The Bahdanau decoder: attend before updating the state, then update it with the context.

"Attention Mechanisms: Fundamentals", section "Additive Attention (Bahdanau)".
At step t the query is what the decoder knows before it reads the source
again, its previous state and the character it has just written,
q_t = [s_{t−1} ; emb(y_{t−1})]; the keys and values are the memory
m_i = [h_i ; emb(x_i)] (B, n, d + d_e), each encoder state beside its own
source character (:mod:`~attention_edu.seq2seq.encoder`)::

    c_t = Σ_i α_{t,i} m_i,   α_t = softmax_i(vᵀ tanh(W1 q_t + W2 m_i))
    s_t = GRU([emb(y_{t−1}) ; c_t], s_{t−1}),   O_t = [s_t ; c_t]

Why both, in :mod:`attention_edu.seq2seq`'s docstring ("Design").

Because s_t depends on c_t, the steps cannot be batched over t as Luong's
can: one :func:`attention_edu.bahdanau_attention_steps` call per step, over
the whole batch at once (m = 1 query per sequence, mask (B, 1, n)), and its
backward :func:`attention_edu.bahdanau_attention_backward` in reverse order.
"""

from __future__ import annotations

from typing import Any

from .. import additive
from ..backend import get_xp
from .gru import gru_step, gru_step_backward

__all__ = ["decode_additive", "decode_additive_backward", "additive_step"]

ATTENTION_NAMES = ("W1", "W2", "v")


def _attend(xp: Any, params: dict[str, Any], s: Any, y: Any, H: Any, src_mask: Any) -> Any:
    query = xp.expand_dims(xp.concat([s, y], axis=-1), axis=1)  # (B, 1, d + d_e): [s_{t−1} ; emb(y_{t−1})]
    return additive.bahdanau_attention_steps(
        query, H, params["attention.W1"], params["attention.W2"],
        params["attention.v"], src_mask)  # context (B, 1, d_M), weights (B, 1, n)


def decode_additive(params: dict[str, Any], Y: Any, H: Any, summary: Any,
                    src_mask: Any) -> dict[str, Any]:
    """Teacher-forced features O (B, T, d + d_M) from target embeddings Y (B, T, d_e).

    H (B, n, d_M) is the memory the attention reads (d_M = d + d_e here), summary (B, d).
    """
    xp = get_xp(Y, H)
    W_ih, W_hh, b_hh = params["decoder.W_ih"], params["decoder.W_hh"], params["decoder.b_hh"]
    d_e = Y.shape[-1]
    gi_y = Y @ xp.matrix_transpose(W_ih[:, :d_e]) + params["decoder.b_ih"]  # (B, T, 3d)
    W_ic_t = xp.matrix_transpose(W_ih[:, d_e:])  # (d_M, 3d)
    s, atts, steps, contexts, states = summary, [], [], [], []
    for t in range(Y.shape[1]):
        att = _attend(xp, params, s, Y[:, t, :], H, src_mask)
        context = att.context[:, 0, :]  # (B, d_M)
        step = gru_step(xp, gi_y[:, t, :] + context @ W_ic_t, s, W_hh, b_hh)
        s = step.h_new  # (B, d)
        atts.append(att), steps.append(step), contexts.append(context), states.append(s)
    S, C = xp.stack(states, axis=1), xp.stack(contexts, axis=1)  # (B, T, d), (B, T, d_M)
    weights = xp.stack([a.weights[:, 0, :] for a in atts], axis=1)  # (B, T, n)
    return {"Y": Y, "atts": atts, "steps": steps, "C": C, "O": xp.concat([S, C], axis=-1),
            "weights": weights}


def decode_additive_backward(cache: dict[str, Any], params: dict[str, Any],
                             d_O: Any) -> tuple[dict[str, Any], Any, Any, Any]:
    """Gradients of :func:`decode_additive`: (parameter grads, d_Y, d_H, d_summary)."""
    xp = get_xp(d_O)
    W_ih, W_hh = params["decoder.W_ih"], params["decoder.W_hh"]
    d = W_hh.shape[-1]  # the state's width; the context's is H's (d, or d + d_e)
    d_e = cache["Y"].shape[-1]
    W_ic = W_ih[:, d_e:]  # (3d, d_H)
    T = len(cache["steps"])
    ds = xp.zeros_like(d_O[:, 0, :d])  # (B, d): gradient at s_t from later steps
    d_H = None
    g_att = {k: None for k in ATTENTION_NAMES}
    d_gi, d_gh, d_y_query = [None] * T, [None] * T, [None] * T
    for t in range(T - 1, -1, -1):
        ds = ds + d_O[:, t, :d]
        d_gi[t], d_s_prev, d_gh[t] = gru_step_backward(xp, cache["steps"][t], ds, W_hh)
        d_context = d_O[:, t, d:] + d_gi[t] @ W_ic  # (B, d_H): to O_t and into the GRU input
        g = additive.bahdanau_attention_backward(cache["atts"][t], xp.expand_dims(d_context, axis=1))
        ds = d_s_prev + g["S"][:, 0, :d]  # the query was [s_{t−1} ; emb(y_{t−1})]
        d_y_query[t] = g["S"][:, 0, d:]  # (B, d_e)
        d_H = g["H"] if d_H is None else d_H + g["H"]
        for k in ATTENTION_NAMES:
            g_att[k] = g[k] if g_att[k] is None else g_att[k] + g[k]
    d_gi_all = xp.stack(d_gi, axis=1)  # (B, T, 3d)
    rows = xp.reshape(d_gi_all, (-1, W_ih.shape[0]))  # (B T, 3d)
    inputs = xp.concat([cache["Y"], cache["C"]], axis=-1)  # (B, T, d_e + d_H)
    d_gh_rows = xp.reshape(xp.stack(d_gh, axis=1), (-1, W_hh.shape[0]))  # (B T, 3d)
    s_prev = xp.reshape(xp.stack([s.inputs["h"] for s in cache["steps"]], axis=1), (-1, d))  # (B T, d)
    grads = {
        "decoder.W_ih": xp.matrix_transpose(rows) @ xp.reshape(inputs, (-1, inputs.shape[-1])),
        "decoder.b_ih": xp.sum(rows, axis=0),
        "decoder.W_hh": xp.matrix_transpose(d_gh_rows) @ s_prev,
        "decoder.b_hh": xp.sum(d_gh_rows, axis=0),
    }
    grads.update({f"attention.{k}": g_att[k] for k in ATTENTION_NAMES})
    d_Y = d_gi_all @ W_ih[:, :d_e] + xp.stack(d_y_query, axis=1)  # (B, T, d_e)
    return grads, d_Y, d_H, ds


def additive_step(params: dict[str, Any], y: Any, s: Any, H: Any, summary: Any,
                  src_mask: Any) -> tuple[Any, Any, Any]:
    """One greedy-decoding step: (features O_t (B, d + d_M), new state (B, d), weights (B, n))."""
    xp = get_xp(y, s)
    att = _attend(xp, params, s, y, H, src_mask)
    context = att.context[:, 0, :]  # (B, d_M)
    x = xp.concat([y, context], axis=-1)  # (B, d_e + d_M)
    gi = x @ xp.matrix_transpose(params["decoder.W_ih"]) + params["decoder.b_ih"]  # (B, 3d)
    s_new = gru_step(xp, gi, s, params["decoder.W_hh"], params["decoder.b_hh"]).h_new
    return xp.concat([s_new, context], axis=-1), s_new, att.weights[:, 0, :]
