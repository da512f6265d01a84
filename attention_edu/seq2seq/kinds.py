"""The attention kinds as one table: what each needs, and the decoder that runs it.

The kinds are those of "Attention Mechanisms: Fundamentals", sections
"Additive Attention (Bahdanau)" and "Attention Score Computation Methods"
(Luong's dot, general and concat), plus none, the bottleneck of "Motivation:
The Seq2Seq Bottleneck".

A kind is one :class:`AttentionKind` entry of :data:`KINDS`: its attention
parameters, whether it reads the source characters themselves, the width of
its decoder GRU's input, and its decoder (teacher-forced forward, its
backward, and one greedy step). Everything else (the parameter list, the
model, greedy decoding, checkpoints) reads the entry, so a new kind is one
entry plus its decoder. With d the hidden size, d_e the embedding size and
d_a the attention size, the memory the attention reads is H (B, n, d), or
M = [H ; emb(x)] (B, n, d + d_e) for a kind with ``reads_characters``, and
the output layer reads O_t = [s_t ; c_t] of width d + (memory width)::

    kind           attention parameters              decoder input          memory
    none           —                                 [emb(y) ; summary]     (unused)
    bahdanau       W1 (d_a, d+d_e), W2 (d_a, d+d_e), v  [emb(y) ; c_t]      [h_i ; emb(x_i)]
    luong-dot      —                                 emb(y)                 h_i
    luong-general  W (d, d)                          emb(y)                 h_i
    luong-concat   W (d_a, 2d), v (d_a,)             emb(y)                 h_i

Why Bahdanau reads [h_i ; emb(x_i)] is told in :mod:`attention_edu.seq2seq`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Callable

from .decoder import decode_parallel, decode_parallel_backward, parallel_step
from .decoder_additive import additive_step, decode_additive, decode_additive_backward

__all__ = ["AttentionKind", "KINDS", "ATTENTIONS", "kind_of"]


@dataclass(frozen=True)
class AttentionKind:
    """One attention kind: its parameters, its memory and its decoder.

    ``decode(params, Y, M, summary, src_mask)`` returns a cache with ``O``
    (B, T, d + memory width) and ``weights`` (B, T, n) or None;
    ``backward(cache, params, d_O)`` returns (parameter grads, d_Y, d_M,
    d_summary); ``step(params, y, s, M, summary, src_mask)`` returns
    (O_t, new state, weights (B, n) or None).

    Examples
    --------
    >>> kind = KINDS["bahdanau"]
    >>> kind.parameters(32, 16, 16)["attention.W2"], kind.memory_width(32, 16), kind.decoder_input(32, 16)
    ((16, 48), 48, 64)
    >>> KINDS["none"].memory_width(32, 16), KINDS["none"].decoder_input(32, 16)
    (32, 48)
    """

    name: str
    parameters: Callable[[int, int, int], dict[str, tuple[int, ...]]]  # (d, d_e, d_a) -> shapes
    decode: Callable[..., dict[str, Any]]
    backward: Callable[..., tuple[Any, Any, Any, Any]]
    step: Callable[..., tuple[Any, Any, Any]]
    reads_characters: bool = False  # the memory is [h_i ; emb(x_i)], not h_i
    context_in_input: bool = False  # the decoder GRU reads [emb(y) ; context], not emb(y) alone

    def memory_width(self, d: int, d_e: int) -> int:
        """Width of what the attention reads (and of the context)."""
        return d + d_e if self.reads_characters else d

    def decoder_input(self, d: int, d_e: int) -> int:
        """Width of the decoder GRU's input at each step."""
        return d_e + self.memory_width(d, d_e) if self.context_in_input else d_e


def _luong(score: str | None, name: str,
           parameters: Callable[[int, int, int], dict[str, tuple[int, ...]]]) -> AttentionKind:
    return AttentionKind(name, parameters, partial(decode_parallel, score), decode_parallel_backward,
                         partial(parallel_step, score), context_in_input=score is None)


#: Every kind, by the name the command line and the checkpoints use.
KINDS: dict[str, AttentionKind] = {kind.name: kind for kind in (
    _luong(None, "none", lambda d, d_e, d_a: {}),
    AttentionKind("bahdanau",
                  lambda d, d_e, d_a: {"attention.W1": (d_a, d + d_e), "attention.W2": (d_a, d + d_e),
                                       "attention.v": (d_a,)},
                  decode_additive, decode_additive_backward, additive_step,
                  reads_characters=True, context_in_input=True),
    _luong("dot", "luong-dot", lambda d, d_e, d_a: {}),
    _luong("general", "luong-general", lambda d, d_e, d_a: {"attention.W": (d, d)}),
    _luong("concat", "luong-concat",
           lambda d, d_e, d_a: {"attention.W": (d_a, 2 * d), "attention.v": (d_a,)}),
)}
#: The decoders: no attention (the fixed-vector bottleneck), Bahdanau's, Luong's three scores.
ATTENTIONS = tuple(KINDS)


def kind_of(name: str, who: str = "kind_of") -> AttentionKind:
    """The entry of :data:`KINDS` called ``name``, or a ValueError that lists them.

    Examples
    --------
    >>> kind_of("luong-dot").name
    'luong-dot'
    >>> kind_of("dot", who="train")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: train: unknown attention 'dot'; choose one of none, bahdanau, luong-dot, ...
    """
    if name not in KINDS:
        raise ValueError(f"{who}: unknown attention {name!r}; choose one of {', '.join(ATTENTIONS)}")
    return KINDS[name]
