"""The encoder: embed the source, read it with a GRU in each direction, stack the two states.

h_i = [h→_i ; h←_i]: the forward GRU has read characters 1..i, the backward
one characters i..n, so each encoder state knows its position from both ends
(what reversal needs). The summary [h→_n ; h←_1] is the fixed-size vector of
"Motivation: The Seq2Seq Bottleneck": without attention it is all the decoder gets.

What the attention reads, the *memory*, is either H or, for a kind that reads
the source characters (see :mod:`~attention_edu.seq2seq.kinds`),
M = [H ; emb(x)] (B, n, d + d_e): each position carries the identity of its own
character beside what the GRUs made of its neighbourhood.

Both directions run in one loop: their weights stacked on a leading axis of
size 2, the backward direction reading the time-flipped source (padding then
comes first, where it holds the zero start state).
"""

from __future__ import annotations

from typing import Any

from ..backend import get_xp
from ..layers.embedding import embed, embed_backward
from .recurrence import gru_sequence, gru_sequence_backward

__all__ = ["encode", "encode_backward", "DIRECTIONS"]

DIRECTIONS = ("forward", "backward")
GRU_NAMES = ("W_ih", "W_hh", "b_ih", "b_hh")


def _stacked_weights(params: dict[str, Any]) -> dict[str, Any]:
    xp = get_xp(params["src_embedding"])
    return {k: xp.stack([params[f"encoder.{d}.{k}"] for d in DIRECTIONS]) for k in GRU_NAMES}  # (2, ...)


def encode(params: dict[str, Any], src_ids: Any, step_mask: Any,
           with_characters: bool = False) -> dict[str, Any]:
    """Encoder states H (B, n, d), memory M and summary (B, d) of padded source ids (B, n).

    ``step_mask`` (B, n) is 1.0 on characters, 0.0 on padding; each direction
    has d/2 units. M is H, or [H ; emb(x)] (B, n, d + d_e) ``with_characters``.
    """
    table = params["src_embedding"]
    xp = get_xp(table)
    X = embed(table, src_ids)  # (B, n, d_e)
    weights = _stacked_weights(params)
    X_both = xp.stack([X, xp.flip(X, axis=1)])  # (2, B, n, d_e): backward direction reads flipped
    mask_both = xp.stack([step_mask, xp.flip(step_mask, axis=1)])  # (2, B, n)
    half = weights["W_hh"].shape[-1]
    h0 = xp.zeros((2, X.shape[0], half), dtype=X.dtype, device=getattr(X, "device", None))  # (2, B, d/2)
    run = gru_sequence(X_both, h0, weights, mask_both)
    states = run["states"]  # (2, B, n, d/2)
    H = xp.concat([states[0, ...], xp.flip(states[1, ...], axis=1)], axis=-1)  # (B, n, d)
    summary = xp.concat([run["last"][0, ...], run["last"][1, ...]], axis=-1)  # (B, d)
    M = xp.concat([H, X], axis=-1) if with_characters else H  # (B, n, d [+ d_e])
    return {"src_ids": src_ids, "run": run, "weights": weights, "H": H, "M": M, "summary": summary}


def encode_backward(cache: dict[str, Any], params: dict[str, Any], d_M: Any | None,
                    d_summary: Any | None) -> dict[str, Any]:
    """Gradients of :func:`encode` at its parameters, by name, from those at M and the summary."""
    xp = get_xp(cache["H"])
    d = cache["summary"].shape[-1]
    half = d // 2
    d_H, d_chars = (d_M, None) if d_M is None or d_M.shape[-1] == d else (d_M[..., :d], d_M[..., d:])
    d_states = None if d_H is None else xp.stack(
        [d_H[..., :half], xp.flip(d_H[..., half:], axis=1)])  # (2, B, n, d/2)
    d_last = None if d_summary is None else xp.stack([d_summary[..., :half], d_summary[..., half:]])
    g = gru_sequence_backward(cache["run"], cache["weights"], d_states, d_last)
    grads = {f"encoder.{d}.{k}": g[k][i, ...] for k in GRU_NAMES for i, d in enumerate(DIRECTIONS)}
    d_X = g["X"][0, ...] + xp.flip(g["X"][1, ...], axis=1)  # (B, n, d_e)
    if d_chars is not None:
        d_X = d_X + d_chars  # the characters read directly by the attention
    grads["src_embedding"] = embed_backward(params["src_embedding"], cache["src_ids"], d_X)
    return grads
