"""A decoder-only transformer: embeddings, L blocks, a final norm and an output head.

    x₀ = E_tok[ids] + E_pos[0:T]                    (B, T, d)
    x_l = Block_l(x_{l−1})        l = 1..L          (B, T, d)
    logits = LN_f(x_L) W_headᵀ + b_head             (B, T, V)

Trained with teacher forcing: the whole sequence ``|source|target`` goes in
at once, position t predicts token t + 1, and the loss counts only the
answer positions (the target's tokens). Generation writes the target one
token at a time after the prompt ``|source|``, each step rerunning the
prefix (the sequences are short; no key/value cache).
"""

from __future__ import annotations

from typing import Any

from ..backend import Backend, checked_backend, to_numpy
from ..backend import host_numpy as np
from ..layers.embedding import embed, embed_backward
from ..layers.layer_norm import layer_norm, layer_norm_backward
from ..layers.linear import linear, linear_backward
from ..layers.loss import cross_entropy, cross_entropy_backward
from ..masks import causal_mask
from .block import block_backward, block_forward
from .config import TransformerConfig, parameter_shapes
from .tasks import SEPARATOR

__all__ = ["Transformer", "initial_parameters"]


def initial_parameters(config: TransformerConfig, seed: int, backend: Backend) -> dict[str, Any]:
    """Weights drawn from one generator seeded with ``seed``: Glorot matrices, embeddings
    N(0, 1/d), norms γ = 1, β = 0, biases 0."""
    rng = np.random.default_rng(seed)
    params = {}
    for name, shape in parameter_shapes(config).items():
        if name.endswith("embedding"):
            params[name] = backend.normal(shape, rng, scale=config.d_model ** -0.5)
        elif len(shape) == 2:
            params[name] = backend.glorot(shape, rng)
        else:
            params[name] = backend.asarray(np.ones(shape) if name.endswith("gamma") else np.zeros(shape))
    return params


class Transformer:
    """A trained (or fresh) decoder-only transformer for one task.

    Examples
    --------
    >>> model = Transformer.initialize(TransformerConfig("sort", layers=1, heads=2, d_model=8), seed=0)
    >>> len(model.predict("5031"))                       # untrained: 4 digits, not yet sorted
    4
    >>> tokens, weights = model.attend("5031")
    >>> tokens[:6], weights.shape                        # (layers, heads, T, T)
    (['|', '5', '0', '3', '1', '|'], (1, 2, 10, 10))
    """

    def __init__(self, config: TransformerConfig, params: dict[str, Any], backend: Backend):
        self.config, self.params, self.backend = config, params, backend

    @classmethod
    def initialize(cls, config: TransformerConfig, seed: int = 0, backend: Backend | None = None) -> Transformer:
        backend = checked_backend("Transformer.initialize", backend)
        return cls(config, initial_parameters(config, seed, backend), backend)

    # -- data -------------------------------------------------------------------
    def encode(self, texts: list[str], who: str = "Transformer") -> np.ndarray:
        """Token ids (B, T) of equally long ``texts`` on the host; unknown characters are an error."""
        index = {c: i for i, c in enumerate(self.config.vocabulary)}
        for text in texts:
            bad = sorted(set(text) - set(index))
            if bad:
                raise ValueError(f"{who}: {text!r} has characters outside the {self.config.task} "
                                 f"vocabulary {self.config.vocabulary[1:]!r}: {''.join(bad)!r}")
        return np.asarray([[index[c] for c in text] for text in texts], dtype=np.int64).reshape(len(texts), -1)

    def batch(self, pairs: list[tuple[str, str]]) -> dict[str, Any]:
        """Inputs ``ids`` (B, T), next tokens ``targets`` (B, T) and the answer ``mask`` (B, T),
        padded with the separator (padding comes last, so the causal mask keeps it unseen)."""
        longest = max(len(s) for s, _ in pairs)
        rows, masks = [], []
        for source, target in pairs:
            text = SEPARATOR + source + SEPARATOR + target
            n = len(source)
            rows.append(text + SEPARATOR * (2 * (longest - n)))
            masks.append([n + 1 <= t < n + 1 + len(target) for t in range(len(rows[-1]) - 1)])
        ids = self.encode(rows, who="Transformer.batch")  # (B, 2n_max + 2)
        be = self.backend
        return {"ids": be.asarray(ids[:, :-1], dtype=np.int64), "targets": be.asarray(ids[:, 1:], dtype=np.int64),
                "mask": be.asarray(np.asarray(masks, dtype=float))}

    # -- forward and backward -----------------------------------------------------
    def block_parameters(self, layer: int, params: dict[str, Any] | None = None) -> dict[str, Any]:
        prefix = f"blocks.{layer}."
        params = self.params if params is None else params
        return {k[len(prefix):]: v for k, v in params.items() if k.startswith(prefix)}

    def forward(self, ids: Any, params: dict[str, Any] | None = None,
                offset: int = 0) -> tuple[Any, dict[str, Any]]:
        """``(logits (B, T, V), cache)`` for token ids (B, T) placed at positions
        ``offset``..``offset + T − 1``; ``params`` default to the model's."""
        p = self.params if params is None else params
        T = ids.shape[-1]
        if offset + T > p["position_embedding"].shape[0]:
            raise ValueError(f"Transformer: {T} tokens from position {offset} exceed the model's "
                             f"{p['position_embedding'].shape[0]} positions")
        mask = causal_mask(T, backend=self.backend) if self.config.causal else None  # (T, T)
        x = embed(p["token_embedding"], ids) + p["position_embedding"][offset:offset + T, :]  # (B, T, d)
        blocks = []
        for layer in range(self.config.layers):
            x, cache = block_forward(x, self.block_parameters(layer, p), self.config.heads, mask)  # (B, T, d)
            blocks.append(cache)
        final, ln_f = layer_norm(x, p["ln_f.gamma"], p["ln_f.beta"])  # (B, T, d)
        logits = linear(final, p["head.W"], p["head.b"])  # (B, T, V)
        return logits, {"ids": ids, "offset": offset, "blocks": blocks, "ln_f": ln_f, "final": final, "params": p}

    def backward(self, cache: dict[str, Any], d_logits: Any) -> dict[str, Any]:
        """Gradients of every parameter from the forward's cache and d_logits (B, T, V)."""
        p, xp = cache["params"], self.backend.xp
        g_head = linear_backward(cache["final"], p["head.W"], d_logits)  # x: (B, T, d)
        g_ln = layer_norm_backward(cache["ln_f"], g_head["x"])
        grads = {"head.W": g_head["W"], "head.b": g_head["b"], "ln_f.gamma": g_ln["gamma"],
                 "ln_f.beta": g_ln["beta"]}
        d_x = g_ln["x"]  # (B, T, d)
        for layer in reversed(range(self.config.layers)):
            d_x, g_block = block_backward(cache["blocks"][layer], d_x)  # (B, T, d)
            grads.update({f"blocks.{layer}.{k}": v for k, v in g_block.items()})
        ids, offset = cache["ids"], cache["offset"]
        (T, d), P = tuple(d_x.shape[1:]), p["position_embedding"].shape[0]
        grads["token_embedding"] = embed_backward(p["token_embedding"], ids, d_x)  # (V, d)
        used = xp.sum(d_x, axis=0)  # (T, d): each position's row, summed over the batch
        before = xp.zeros((offset, d), dtype=used.dtype, device=self.backend.device)
        after = xp.zeros((P - offset - T, d), dtype=used.dtype, device=self.backend.device)
        grads["position_embedding"] = xp.concat([before, used, after], axis=0)  # (P, d)
        return {name: grads[name] for name in p}

    def loss_and_grads(self, batch: dict[str, Any]) -> tuple[float, dict[str, Any], float]:
        """Mean cross-entropy on the answer positions, every gradient, and the share of answer
        tokens predicted right (teacher-forced)."""
        logits, cache = self.forward(batch["ids"], offset=batch.get("offset", 0))
        loss, loss_cache = cross_entropy(logits, batch["targets"], batch["mask"])
        grads = self.backward(cache, cross_entropy_backward(loss_cache))
        return float(loss), grads, answer_accuracy(logits, batch)

    # -- use ----------------------------------------------------------------------
    def generate(self, sources: list[str], who: str = "predict") -> list[str]:
        """Greedy outputs for ``sources`` of one length: as many tokens as the source has."""
        n = len(sources[0])
        if n > self.config.max_source:
            raise ValueError(f"{who}: sources of {n} tokens exceed this model's longest, "
                             f"{self.config.max_source}")
        ids = self.encode([SEPARATOR + s + SEPARATOR for s in sources], who=who)  # (B, n + 2)
        for _ in range(n):
            logits, _ = self.forward(self.backend.asarray(ids, dtype=np.int64))  # (B, T, V)
            last = to_numpy(logits[:, -1, :])  # (B, V)
            last[:, 0] = -np.inf  # the separator is never an answer
            ids = np.concatenate([ids, np.argmax(last, axis=-1)[:, None]], axis=1)  # (B, T + 1)
        vocab = self.config.vocabulary
        return ["".join(vocab[i] for i in row[n + 2:]) for row in ids]

    def _source(self, source: Any, who: str) -> None:
        """A ValueError naming ``who`` unless ``source`` is a non-empty string without the separator."""
        if not isinstance(source, str) or not source:
            raise ValueError(f"{who}: source must be a non-empty string, got {source!r}")
        if SEPARATOR in source:     # it would end the source early: the model reads what follows as the output
            raise ValueError(f"{who}: source {source!r} holds the separator {SEPARATOR!r}, which the model puts "
                             f"around the source itself")

    def predict(self, source: str) -> str:
        """The model's output for one ``source``, written greedily after ``|source|``."""
        self._source(source, "predict")
        return self.generate([source])[0]

    def attend(self, source: str) -> tuple[list[str], np.ndarray]:
        """``(tokens, weights)``: the T tokens ``|source|output`` and every head's attention
        weights over them, (layers, heads, T, T) on the host, each row causal."""
        self._source(source, "attend")
        output = self.generate([source], who="attend")[0]
        text = SEPARATOR + source + SEPARATOR + output
        _, cache = self.forward(self.backend.asarray(self.encode([text], who="attend"), dtype=np.int64))
        weights = np.stack([to_numpy(c["attention"].weights[0]) for c in cache["blocks"]])  # (L, H, T, T)
        return list(text), weights

    def host_parameters(self) -> dict[str, np.ndarray]:
        return {name: to_numpy(value) for name, value in self.params.items()}

    def save(self, path: Any) -> None:
        """Write the model to ``path`` (.npz); :func:`attention_edu.transformer.load` reads it."""
        from .checkpoint import save
        save(self, path)


def answer_accuracy(logits: Any, batch: dict[str, Any]) -> float:
    """Share of answer positions whose most likely next token is the target."""
    guess = np.argmax(to_numpy(logits), axis=-1)  # (B, T)
    mask = to_numpy(batch["mask"]) > 0
    return float(np.mean(guess[mask] == to_numpy(batch["targets"])[mask]))
