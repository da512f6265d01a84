"""Greedy decoding: feed the model its own most likely character until ``</s>``.

All sources of a batch decode together; a finished sequence keeps stepping
(its extra characters are dropped) until every one has ended or the output
reaches the configuration's ``max_output`` characters.
"""

from __future__ import annotations

from typing import Any

from ..backend import host_numpy as np
from ..backend import to_numpy
from ..layers.embedding import embed
from .encoder import encode
from ..layers.linear import linear
from .vocabulary import BOS, EOS

__all__ = ["greedy_decode"]


def greedy_decode(model: Any, sources: list[str], who: str = "greedy_decode"
                  ) -> tuple[list[str], list[Any]]:
    """Outputs of ``model`` for ``sources`` and their alignments (see ``Seq2Seq.translate``)."""
    p, config, be = model.params, model.config, model.backend
    xp = be.xp
    arrays = model.source_arrays(sources, who=who)
    kind = config.kind
    enc = encode(p, arrays["src_ids"], arrays["step_mask"], kind.reads_characters)
    M, summary, src_mask = enc["M"], enc["summary"], arrays["src_mask"]
    B = len(sources)
    s = summary
    y_ids = be.asarray(np.full((B, 1), BOS), dtype=np.int64)
    chosen, weights = [], []
    finished = np.zeros(B, dtype=bool)
    for _ in range(config.max_output + 1):
        y = embed(p["tgt_embedding"], y_ids)[:, 0, :]  # (B, d_e)
        O, s, w = kind.step(p, y, s, M, summary, src_mask)
        logits = linear(O, p["output.W"], p["output.b"])  # (B, V)
        next_ids = xp.argmax(logits, axis=-1)  # (B,)
        host_ids = to_numpy(next_ids)
        chosen.append(host_ids)
        if w is not None:
            weights.append(to_numpy(w))
        finished |= host_ids == EOS
        if finished.all():
            break
        y_ids = xp.reshape(xp.astype(next_ids, xp.int64), (B, 1))
    ids = np.stack(chosen, axis=1)  # (B, steps)
    vocab = config.target_vocabulary
    outputs = [vocab.decode(row) for row in ids]
    if not weights:
        return outputs, [None] * B
    alignment = np.stack(weights, axis=1)  # (B, steps, n)
    lengths = arrays["src_lengths"]
    return outputs, [alignment[b, :len(outputs[b]), :lengths[b]] for b in range(B)]
