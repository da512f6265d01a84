"""Finding the heads: what each head attends to, and what is lost without it.

For every layer and head, over held-out sequences ``|source|target`` (teacher-forced),
the mean attention weight that a query puts on

- ``previous_token``: the key just before it (position t − 1);
- ``induction``: the token *after* the previous occurrence of the query's own token
  (position p + 1, p the last earlier position holding the same token) — the
  pattern of an induction head, which copies what followed last time;
- ``source_of_output``: the source positions holding the token the model is
  writing next (queries on the answer side only) — where a sorting head should look.

A score near 1 means the head does that almost always; a head that attends
uniformly over t keys scores about 1/t. ``accuracy_drop`` ablates the head —
its rows of W_O set to zero, so it adds nothing to the residual stream — and
measures the teacher-forced answer accuracy lost (0–1).
"""

from __future__ import annotations

from typing import Any

from ..backend import to_numpy
from ..backend import host_numpy as np
from ..shapes import positive_int
from .model import Transformer, answer_accuracy
from .tasks import ALPHABETS, LENGTHS, TASKS
from .training import held_out_pairs

__all__ = ["head_scores", "ablate", "pattern_targets"]

PATTERNS = ("previous_token", "induction", "source_of_output")


def pattern_targets(ids: np.ndarray, targets: np.ndarray, answer: np.ndarray) -> dict[str, np.ndarray]:
    """Each pattern as a 0/1 array (B, T, T) of the keys it names for each query, from the
    input ids (B, T), next tokens (B, T) and the answer mask (B, T), all on the host.

    Examples
    --------
    >>> import numpy as np
    >>> ids = np.array([[0, 1, 2, 0, 1]])               # | a b | a
    >>> p = pattern_targets(ids, np.array([[1, 2, 0, 1, 2]]), np.array([[0, 0, 0, 1, 1]]))
    >>> int(p["induction"][0, 3].argmax()), int(p["induction"][0, 4].argmax())  # after the last | and a
    (1, 2)
    """
    B, T = ids.shape
    previous = np.broadcast_to(np.eye(T, k=-1), (B, T, T)).copy()  # (B, T, T): key t − 1
    induction = np.zeros((B, T, T))
    for t in range(1, T):
        same = ids[:, :t] == ids[:, t:t + 1]  # (B, t): earlier keys with the query's token
        last = t - 1 - np.argmax(same[:, ::-1], axis=1)  # (B,): the latest of them
        rows = np.nonzero(same.any(axis=1))[0]
        induction[rows, t, last[rows] + 1] = 1.0
    source = (ids[:, None, :] == targets[:, :, None]) & answer[:, :, None].astype(bool)  # (B, T, T)
    before = np.cumsum(ids == ids[:, :1], axis=1) <= 1  # (B, T): keys up to the second separator
    return {"previous_token": previous, "induction": induction,
            "source_of_output": (source & before[:, None, :] & (np.arange(T) > 0)).astype(float)}


def ablate(model: Transformer, layer: int, head: int) -> Transformer:
    """A copy of ``model`` in which ``head`` of ``layer`` adds nothing: its rows of W_O are zero."""
    config = model.config
    if not (0 <= layer < config.layers and 0 <= head < config.heads):
        raise ValueError(f"ablate: no head {head} in layer {layer}; the model has {config.layers} "
                         f"layers of {config.heads} heads (both counted from 0)")
    size = config.d_model // config.heads
    params = dict(model.params)
    W_O = to_numpy(params[f"blocks.{layer}.W_O"]).copy()  # (H·d_k, d)
    W_O[head * size:(head + 1) * size, :] = 0.0
    params[f"blocks.{layer}.W_O"] = model.backend.asarray(W_O)
    return Transformer(config, params, model.backend)


def _sums(model: Transformer, batches: list[dict[str, Any]]) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """Summed weight per (layer, head) on each pattern, and the number of queries it covers."""
    L, H = model.config.layers, model.config.heads
    sums, counts = {k: np.zeros((L, H)) for k in PATTERNS}, dict.fromkeys(PATTERNS, 0.0)
    for batch in batches:
        _, cache = model.forward(batch["ids"])
        host = {k: to_numpy(batch[k]) for k in ("ids", "targets", "mask")}
        patterns = pattern_targets(host["ids"], host["targets"], host["mask"])
        for name, pattern in patterns.items():
            counts[name] += float(pattern.any(axis=-1).sum())
            for layer, block in enumerate(cache["blocks"]):
                weights = to_numpy(block["attention"].weights)  # (B, H, T, T)
                sums[name][layer] += np.einsum("bhqk,bqk->h", weights, pattern)
    return sums, counts


def _accuracy(model: Transformer, batches: list[dict[str, Any]]) -> float:
    right = total = 0.0
    for batch in batches:
        logits, _ = model.forward(batch["ids"])
        count = float(np.sum(to_numpy(batch["mask"])))
        right += answer_accuracy(logits, batch) * count
        total += count
    return right / total


def _foreign_pairs(model: Transformer, task: str, seed: int, size: int) -> list[tuple[str, str]]:
    """Held-out ``task`` pairs in the tokens of a model trained on another task, as long as it reads."""
    alphabet = ALPHABETS[model.config.task]
    low, high = LENGTHS[task]
    high = min(high, model.config.max_source, len(alphabet) if task == "induction" else high)
    return held_out_pairs(task, seed, size, lengths=(min(low, high), high), alphabet=alphabet)


def head_scores(model: Transformer, task: str | None = None, *, seed: int = 1, size: int = 256,
                ablation: bool = True) -> list[dict[str, Any]]:
    """Per layer and head, the mean weight on each pattern and (``ablation``) the accuracy lost.

    Parameters
    ----------
    model : Transformer
    task : {"sort", "induction"}, optional
        Whose held-out sequences to score on; default the model's task. Another task's
        sequences are drawn in the model's own tokens, with sources no longer than the model
        reads: ``head_scores(sort_model, "induction")`` scores a sort model on strings of
        distinct digits repeated twice, the usual probe for induction heads
        (``accuracy_drop`` is then the accuracy lost at repeating them).
    seed : int
        Seed of the held-out sequences.
    size : int
        Number of sequences.
    ablation : bool
        Also ablate each head in turn and record ``accuracy_drop`` (teacher-forced
        answer accuracy, 0–1; negative when the head was in the way).

    Returns
    -------
    list of dict
        ``{"layer", "head", "previous_token", "induction", "source_of_output",
        "accuracy_drop"}``, layers and heads counted from 0.

    Examples
    --------
    >>> from attention_edu.transformer import Transformer, TransformerConfig
    >>> model = Transformer.initialize(TransformerConfig("sort", layers=1, heads=2, d_model=8), seed=0)
    >>> scores = head_scores(model, seed=1, size=8)
    >>> [(s["layer"], s["head"]) for s in scores], sorted(scores[0])[:3]
    ([(0, 0), (0, 1)], ['accuracy_drop', 'head', 'induction'])
    """
    if not isinstance(model, Transformer):
        raise TypeError(f"head_scores: model must be a Transformer (from train or load), got {type(model).__name__}")
    seed, size = positive_int("head_scores", "seed", seed, minimum=0), positive_int("head_scores", "size", size)
    task = model.config.task if task is None else task
    if task not in TASKS:
        raise ValueError(f"head_scores: unknown task {task!r}; choose one of {', '.join(TASKS)}")
    pairs = held_out_pairs(task, seed, size) if task == model.config.task else _foreign_pairs(model, task, seed, size)
    by_length: dict[int, list] = {}
    for pair in pairs:
        by_length.setdefault(len(pair[0]), []).append(pair)
    batches = [model.batch(group) for group in by_length.values()]
    sums, counts = _sums(model, batches)
    baseline = _accuracy(model, batches) if ablation else None
    scores = []
    for layer in range(model.config.layers):
        for head in range(model.config.heads):
            entry: dict[str, Any] = {"layer": layer, "head": head}
            entry.update({k: float(sums[k][layer, head] / max(1.0, counts[k])) for k in PATTERNS})
            if ablation:
                entry["accuracy_drop"] = baseline - _accuracy(ablate(model, layer, head), batches)
            scores.append(entry)
    return scores
