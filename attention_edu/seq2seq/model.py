"""The seq2seq model: encoder, decoder, output layer and loss, forward and backward.

Teacher forcing: the decoder reads the true previous character
(``<s>`` first), and the loss compares its prediction of every next
character, ``</s>`` included, with the truth.

    M, summary = encode(source)                     (B, n, d or d + d_e), (B, d)
    O = decode(emb(<s> y), M, summary)              (B, T, d + width of M)  the kind's decoder
    logits = O W_outᵀ + b_out                       (B, T, V)
    L = cross_entropy(logits, y </s>)
"""

from __future__ import annotations

import json
from typing import Any

from ..backend import Backend, checked_backend, to_numpy
from ..backend import host_numpy as np
from .config import FORMAT, ModelConfig, initial_parameters
from .decoding import greedy_decode
from ..layers.embedding import embed, embed_backward
from .encoder import encode, encode_backward
from ..layers.linear import linear, linear_backward
from ..layers.loss import cross_entropy, cross_entropy_backward

__all__ = ["Seq2Seq"]


class Seq2Seq:
    """A character-level encoder-decoder with one of :data:`ATTENTIONS`.

    Parameters
    ----------
    config : ModelConfig
    params : dict of str to array
        Every parameter of :func:`parameter_shapes`, on ``backend``.
    backend : Backend

    Examples
    --------
    >>> model = Seq2Seq.initialize(ModelConfig.for_task("reverse", "none"), seed=0)
    >>> batch = model.batch([("abc", "cba"), ("ij", "ji")])
    >>> loss, grads, accuracy = model.loss_and_grads(batch)
    >>> sorted(grads) == sorted(model.params)
    True
    """

    def __init__(self, config: ModelConfig, params: dict[str, Any], backend: Backend):
        self.config, self.params, self.backend = config, dict(params), backend

    @classmethod
    def initialize(cls, config: ModelConfig, seed: int = 0, backend: Backend | None = None) -> Seq2Seq:
        """A fresh model: parameters drawn with ``seed`` (see :func:`initial_parameters`)."""
        backend = checked_backend("Seq2Seq.initialize", backend)
        return cls(config, initial_parameters(config, seed, backend), backend)

    # -- data -----------------------------------------------------------------
    def source_arrays(self, sources: list[str], who: str = "Seq2Seq") -> dict[str, Any]:
        """Padded source ids (B, n), step mask (B, n) float and attention mask (B, 1, n) bool."""
        ids, lengths = self.config.source_vocabulary.encode(sources, who=who)
        valid = np.arange(ids.shape[1])[None, :] < lengths[:, None]  # (B, n)
        be = self.backend
        return {"src_ids": be.asarray(ids, dtype=np.int64), "step_mask": be.asarray(valid),
                "src_mask": be.asarray(valid[:, None, :], dtype=bool), "src_lengths": lengths}

    def batch(self, pairs: list[tuple[str, str]]) -> dict[str, Any]:
        """A training batch of (source, target) pairs, built on the host and moved once."""
        arrays = self.source_arrays([s for s, _ in pairs], who="Seq2Seq.batch")
        vocab = self.config.target_vocabulary
        targets = [t for _, t in pairs]
        tgt_in, _ = vocab.encode(targets, start=True, who="Seq2Seq.batch")
        tgt_out, lengths = vocab.encode(targets, end=True, who="Seq2Seq.batch")
        mask = np.arange(tgt_out.shape[1])[None, :] < lengths[:, None]  # (B, T)
        be = self.backend
        arrays.update(tgt_in=be.asarray(tgt_in, dtype=np.int64),
                      tgt_out=be.asarray(tgt_out, dtype=np.int64), tgt_mask=be.asarray(mask))
        return arrays

    # -- forward and backward ---------------------------------------------------
    def forward(self, batch: dict[str, Any], params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Teacher-forced forward pass; the cache holds ``loss`` (0-d) and ``logits`` (B, T, V)."""
        p = self.params if params is None else params
        kind = self.config.kind
        enc = encode(p, batch["src_ids"], batch["step_mask"], kind.reads_characters)
        Y = embed(p["tgt_embedding"], batch["tgt_in"])  # (B, T, d_e)
        dec = kind.decode(p, Y, enc["M"], enc["summary"], batch["src_mask"])
        logits = linear(dec["O"], p["output.W"], p["output.b"])  # (B, T, V)
        loss, ce = cross_entropy(logits, batch["tgt_out"], batch["tgt_mask"])
        return {"params": p, "batch": batch, "enc": enc, "dec": dec, "ce": ce, "logits": logits,
                "loss": loss}

    def backward(self, cache: dict[str, Any], d_loss: float = 1.0) -> dict[str, Any]:
        """dL/dθ for every parameter θ, from the cache of :meth:`forward`."""
        p, batch = cache["params"], cache["batch"]
        d_logits = cross_entropy_backward(cache["ce"], d_loss)  # (B, T, V)
        out = linear_backward(cache["dec"]["O"], p["output.W"], d_logits)
        grads, d_Y, d_M, d_summary = self.config.kind.backward(cache["dec"], p, out["x"])
        grads.update({"output.W": out["W"], "output.b": out["b"]})
        grads["tgt_embedding"] = embed_backward(p["tgt_embedding"], batch["tgt_in"], d_Y)
        grads.update(encode_backward(cache["enc"], p, d_M, d_summary))
        return grads

    def loss_and_grads(self, batch: dict[str, Any]) -> tuple[float, dict[str, Any], float]:
        """(loss, gradients, share of next characters predicted right) on one batch."""
        cache = self.forward(batch)
        grads = self.backward(cache)
        xp = self.backend.xp
        right = xp.astype(xp.argmax(cache["logits"], axis=-1) == batch["tgt_out"], cache["loss"].dtype)
        accuracy = float(xp.sum(right * batch["tgt_mask"]) / xp.sum(batch["tgt_mask"]))
        return float(cache["loss"]), grads, accuracy

    # -- use ------------------------------------------------------------------
    def translate(self, text: str) -> tuple[str, Any]:
        """Greedy output for one source, and its alignment.

        Returns ``(output, weights)``: weights (len(output), len(text)) as a
        NumPy array, a row per output character and a column per source
        character (end-of-sequence dropped); ``None`` for ``"none"``.
        """
        if not isinstance(text, str):
            raise TypeError(f"Seq2Seq.translate: text must be a str, got {type(text).__name__}")
        outputs, weights = greedy_decode(self, [text], who="Seq2Seq.translate")
        return outputs[0], weights[0]

    def save(self, path: Any) -> None:
        """Write the parameters and the configuration to ``path`` (``.npz``); see :func:`load`.

        The file is a plain NumPy archive: one array per parameter and
        ``config``, the JSON of :class:`ModelConfig` with the format tag
        :data:`~attention_edu.seq2seq.config.FORMAT`.
        """
        header = dict(self.config.to_dict(), format=FORMAT)
        with open(path, "wb") as f:  # an open file keeps numpy from appending a second ".npz"
            np.savez(f, config=np.asarray(json.dumps(header, sort_keys=True)), **self.host_parameters())

    def host_parameters(self) -> dict[str, Any]:
        """Every parameter as a NumPy array on the host."""
        return {k: to_numpy(v) for k, v in self.params.items()}
