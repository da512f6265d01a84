"""Decoders whose state does not depend on the context: no attention, and Luong's.

Under teacher forcing every decoder input is known in advance, so the GRU runs
over the whole target first and the context of all steps comes at once:

- no attention, ``score=None`` (the RNN encoder-decoder of "Motivation: The Seq2Seq Bottleneck"): the
  decoder starts from the encoder summary and reads it again at every step,
  x_t = [emb(y_{t−1}) ; summary]; the context is that same fixed vector.
- Luong's ``score`` "dot", "general" or "concat": s_t = GRU(emb(y_{t−1}),
  s_{t−1}), then c_t = Σ_i α_{t,i} h_i with α from the Luong score of s_t
  against every encoder state, all t in one call of
  :func:`attention_edu.luong_attention_steps` (m = T queries).

Both return the output features O_t = [s_t ; c_t] (B, T, 2d) that the output
layer turns into logits.
"""

from __future__ import annotations

from typing import Any

from .. import luong
from ..backend import get_xp
from .gru import gru_step
from ..layers.linear import linear
from .recurrence import gru_sequence, gru_sequence_backward

__all__ = ["decode_parallel", "decode_parallel_backward", "parallel_step"]

GRU_NAMES = ("W_ih", "W_hh", "b_ih", "b_hh")


def gru_weights(params: dict[str, Any]) -> dict[str, Any]:
    """The decoder GRU's weights, by their short names."""
    return {k: params[f"decoder.{k}"] for k in GRU_NAMES}


def _attend(params: dict[str, Any], score: str, S: Any, H: Any, src_mask: Any) -> Any:
    """Luong attention of every state in S (B, m, d) over H (B, n, d)."""
    return luong.luong_attention_steps(S, H, score, params.get("attention.W"),
                                       params.get("attention.v"), src_mask)


def _inputs(xp: Any, Y: Any, summary: Any) -> Any:
    """Decoder GRU inputs [emb ; summary] (B, T, d_e + d) of the ``none`` decoder."""
    repeated = xp.broadcast_to(xp.expand_dims(summary, axis=1),
                               (Y.shape[0], Y.shape[1], summary.shape[-1]))  # (B, T, d)
    return xp.concat([Y, repeated], axis=-1)  # (B, T, d_e + d)


def decode_parallel(score: str | None, params: dict[str, Any], Y: Any, H: Any, summary: Any,
                    src_mask: Any) -> dict[str, Any]:
    """Teacher-forced decoder features O (B, T, 2d) from target embeddings Y (B, T, d_e).

    ``score`` is Luong's ("dot", "general", "concat") or None for no attention;
    H (B, n, d) encoder states, summary (B, d), src_mask bool (B, 1, n).
    """
    xp = get_xp(Y, H)
    weights = gru_weights(params)
    X = _inputs(xp, Y, summary) if score is None else Y
    run = gru_sequence(X, summary, weights)
    S = run["states"]  # (B, T, d)
    if score is None:
        context, att = xp.broadcast_to(xp.expand_dims(summary, axis=1), S.shape), None  # (B, T, d)
    else:
        att = _attend(params, score, S, H, src_mask)
        context = att.context  # (B, T, d)
    O = xp.concat([S, context], axis=-1)  # (B, T, 2d)
    weights_out = None if att is None else att.weights  # (B, T, n)
    return {"run": run, "attention": att, "O": O, "weights": weights_out, "score": score}


def decode_parallel_backward(cache: dict[str, Any], params: dict[str, Any],
                             d_O: Any) -> tuple[dict[str, Any], Any, Any, Any]:
    """Gradients of :func:`decode_parallel`: (parameter grads, d_Y, d_H, d_summary)."""
    xp = get_xp(d_O)
    d = d_O.shape[-1] // 2
    d_S, d_context = d_O[..., :d], d_O[..., d:]  # (B, T, d) each
    grads: dict[str, Any] = {}
    d_H = None
    if cache["score"] is None:
        d_summary = xp.sum(d_context, axis=1)  # (B, d): the summary is read at every step
    else:
        g = luong.luong_attention_backward(cache["attention"], d_context)
        d_S, d_H, d_summary = d_S + g["S"], g["H"], None
        for k in ("W", "v"):
            if k in g:
                grads[f"attention.{k}"] = g[k]
    weights = gru_weights(params)
    g = gru_sequence_backward(cache["run"], weights, d_S, None)
    grads.update({f"decoder.{k}": g[k] for k in GRU_NAMES})
    d_summary = g["h0"] if d_summary is None else d_summary + g["h0"]
    d_X = g["X"]
    if cache["score"] is None:
        d_e = d_X.shape[-1] - d
        d_summary = d_summary + xp.sum(d_X[..., d_e:], axis=1)
        d_X = d_X[..., :d_e]
    return grads, d_X, d_H, d_summary


def parallel_step(score: str | None, params: dict[str, Any], y: Any, s: Any, H: Any, summary: Any,
                  src_mask: Any) -> tuple[Any, Any, Any]:
    """One greedy-decoding step: (features O_t (B, 2d), new state (B, d), weights (B, n) or None)."""
    xp = get_xp(y, s)
    weights = gru_weights(params)
    x = xp.concat([y, summary], axis=-1) if score is None else y  # (B, d_in)
    s_new = gru_step(xp, linear(x, weights["W_ih"], weights["b_ih"]), s, weights["W_hh"],
                     weights["b_hh"]).h_new  # (B, d)
    if score is None:
        return xp.concat([s_new, summary], axis=-1), s_new, None
    att = _attend(params, score, xp.expand_dims(s_new, axis=1), H, src_mask)
    return xp.concat([s_new, att.context[:, 0, :]], axis=-1), s_new, att.weights[:, 0, :]
