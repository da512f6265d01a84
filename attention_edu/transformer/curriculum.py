"""The induction task's curriculum: suffix copies first, then sources at late positions.

Trained on ``|source|copy`` alone, the 2-layer model may find a route by position (the copy
sits n + 1 tokens after its source, so "read n + 1 back" works without any induction head),
and its layer-0 previous-token head looks one step back only where sources sit (positions
1–12), since the learned position table learns only what the loss asks for. Two phases:

1. **Suffix copies.** Half of the batches are ``|source|source[k:]`` for a random k in
   1 … n − 2, with the loss from the copy's second token on (its first is a guess): the copy
   no longer sits at a fixed distance from its source, so only the previous-token →
   induction circuit predicts every batch.
2. **Late positions.** ``max_lead`` rows are added to the position table and half of the
   batches begin with 1 … ``max_lead`` extra separators, so the rows where the copy sits
   in a plain batch also hold sources and can learn the previous-token pattern. (Shifting the
   whole sequence instead leaves position 0 out of those batches: on a tuning seed the
   layer-0 head then looked at position 0 from the copy's queries, and one step back only
   where position 0 was missing.) Fresh Adam state and schedule, ``late_ratio`` times as
   many steps of half-size batches, a weight decay ``late_decay_factor`` times as strong
   and ``last_layer_decay_factor`` (4) times more on the last block (with less, a second
   layer-1 head kept a partial copy of the induction head, and ablating the best one cost
   under 50 points: with 1, on two tuning seeds; with 2, on seed 8101, one of twelve
   measured; the price of 4: sources led by many separators are answered less well,
   docs/benchmarks.md), none on the position table and layer 0's W_Q and W_K (so that the
   previous-token head stays sharp).

Chosen on tuning seeds 0–3 (and 8101 for the factor 4), then measured on unseen seeds
(docs/benchmarks.md).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Iterator

from ..backend import host_numpy as np
from ..backend import to_numpy
from ..layers.fitting import fit
from .model import Transformer
from .tasks import SEPARATOR, make_dataset

__all__ = ["Curriculum", "DEFAULT_CURRICULA", "curriculum_batches", "suffix_batch", "lead_separators",
           "train_curriculum"]


@dataclass(frozen=True)
class Curriculum:
    """The two phases of :func:`train_curriculum`. The first phase takes ``train``'s steps,
    batch size and weight decay λ; the second ``late_ratio`` times as many steps, batches
    half as large and λ · ``late_decay_factor`` (times ``last_layer_decay_factor`` on the last
    block, 0 on the ``undecayed`` parameters).

    Examples
    --------
    >>> plan = Curriculum()
    >>> plan.late_steps(2500), plan.late_share, plan.max_lead
    (3000, 0.5, 13)
    """

    suffix_share: float = 0.5
    late_ratio: float = 1.2
    late_share: float = 0.5
    max_lead: int = 13
    late_decay_factor: float = 3.0
    last_layer_decay_factor: float = 4.0
    undecayed: tuple[str, ...] = ("position_embedding", "blocks.0.W_Q", "blocks.0.W_K")

    def __post_init__(self) -> None:
        for name, high in (("suffix_share", 1.0), ("late_share", 1.0), ("late_ratio", float("inf")),
                           ("late_decay_factor", float("inf")), ("last_layer_decay_factor", float("inf"))):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= high \
                    or value == float("inf"):
                raise ValueError(f"Curriculum: {name} must be a finite number in [0, {high}], got {value!r}")
        if isinstance(self.max_lead, bool) or not isinstance(self.max_lead, int) or self.max_lead < 0:
            raise ValueError(f"Curriculum: max_lead must be an int >= 0, got {self.max_lead!r}")
        if not isinstance(self.undecayed, tuple) or not all(isinstance(n, str) for n in self.undecayed):
            raise ValueError(f"Curriculum: undecayed must be a tuple of parameter names, got {self.undecayed!r}")

    def late_steps(self, steps: int) -> int:
        """Steps of the second phase after ``steps`` of the first (at least 1)."""
        return max(1, round(steps * self.late_ratio))


#: The curriculum ``train`` uses by default, per task (``sort`` trains in one phase).
DEFAULT_CURRICULA: dict[str, Curriculum | None] = {"sort": None, "induction": Curriculum()}


def suffix_batch(model: Transformer, pairs: list[tuple[str, str]], start: int) -> dict[str, Any]:
    """``|source|source[start:]`` for sources of one length n: ``ids``, ``targets`` (B, 2n + 1 −
    start) and a ``mask`` on the copy's tokens after its first (which nothing predicts).

    Examples
    --------
    >>> from attention_edu.transformer import TransformerConfig
    >>> model = Transformer.initialize(TransformerConfig("induction", layers=1, heads=1, d_model=4))
    >>> batch = suffix_batch(model, [("abcdef", "abcdef")], start=2)   # |abcdef|cdef
    >>> batch["ids"].shape, batch["mask"][0].tolist()[7:]               # from c: d, e, f
    ((1, 11), [0.0, 1.0, 1.0, 1.0])
    """
    n = len(pairs[0][0])
    batch = model.batch([(source, source[start:]) for source, _ in pairs])
    mask = to_numpy(batch["mask"]).copy()  # (B, T)
    mask[:, n + 1] = 0.0  # position n + 1 (the separator) would guess the copy's first token
    return dict(batch, mask=model.backend.asarray(mask))


def curriculum_batches(seed: int, steps: int, batch_size: int, lengths: tuple[int, int], late_share: float,
                       max_lead: int, suffix_share: float) -> list[tuple[list[tuple[str, str]], int, int]]:
    """``steps`` triples (pairs of one source length, leading separators, suffix start; 0: a
    whole copy): a share ``late_share`` of the batches led by 1 … ``max_lead`` separators, a
    share ``suffix_share`` (of sources of ≥ 3 letters) copying only from a random start."""
    rng = np.random.default_rng(seed)
    batches = []
    for _ in range(steps):
        n = int(rng.integers(lengths[0], lengths[1] + 1))
        pairs = make_dataset("induction", batch_size, int(rng.integers(2**31)), lengths=(n, n))
        lead = int(rng.integers(1, max_lead + 1)) if rng.random() < late_share and max_lead else 0
        start = int(rng.integers(1, n - 1)) if suffix_share and n >= 3 and rng.random() < suffix_share else 0
        batches.append((pairs, lead, start))
    return batches


def lead_separators(model: Transformer, batch: dict[str, Any], count: int) -> dict[str, Any]:
    """``batch`` (ids, targets, mask of shape (B, T)) with ``count`` separators in front, which
    nothing scores: (B, count + T) each.

    Examples
    --------
    >>> from attention_edu.transformer import TransformerConfig
    >>> model = Transformer.initialize(TransformerConfig("induction", layers=1, heads=1, d_model=4))
    >>> led = lead_separators(model, model.batch([("abcdef", "abcdef")]), 2)
    >>> "".join(model.config.vocabulary[i] for i in led["ids"][0]), led["mask"][0].tolist().index(1.0)
    ('|||abcdef|abcde', 9)
    """
    if not count:
        return batch
    be = model.backend
    host = {k: to_numpy(batch[k]) for k in ("ids", "targets", "mask")}
    B = host["ids"].shape[0]
    lead = np.full((B, count), model.config.vocabulary.index(SEPARATOR), dtype=host["ids"].dtype)  # (B, count)
    return {"ids": be.asarray(np.concatenate([lead, host["ids"]], axis=1), dtype=np.int64),  # (B, count + T)
            "targets": be.asarray(np.concatenate([lead, host["targets"]], axis=1), dtype=np.int64),
            "mask": be.asarray(np.concatenate([np.zeros((B, count)), host["mask"]], axis=1))}


def _inputs(model: Transformer, batches: list[tuple[list[tuple[str, str]], int, int]]) -> Iterator[dict[str, Any]]:
    for pairs, lead, start in batches:
        yield lead_separators(model, suffix_batch(model, pairs, start) if start else model.batch(pairs), lead)


def _add_positions(model: Transformer, rows: int, seed: int) -> Transformer:
    """``model`` with ``rows`` more rows in its position table, drawn N(0, 1/d) as the first were."""
    d = model.config.d_model
    table = to_numpy(model.params["position_embedding"])  # (P, d)
    extra = np.random.default_rng(seed).normal(0.0, d ** -0.5, size=(rows, d)).astype(table.dtype)  # (rows, d)
    params = dict(model.params, position_embedding=model.backend.asarray(np.concatenate([table, extra])))
    return Transformer(replace(model.config, shift=model.config.shift + rows), params, model.backend)


def train_curriculum(model: Transformer, plan: Curriculum, seed: int, steps: int, batch_size: int,
                     lengths: tuple[int, int], history: dict[str, Any], peak: float, clip: float,
                     weight_decay: float, progress: bool) -> Transformer:
    """Both phases of ``plan`` on ``model`` (``steps`` of ``batch_size`` with ``weight_decay``,
    then the late phase); appends to ``history``, returns the model with its longer table."""
    first = curriculum_batches(seed + 1008, steps, batch_size, lengths, 0.0, 0, plan.suffix_share)
    fit(model, _inputs(model, first), steps, history, peak, clip, "induction/suffix copies", progress,
        weight_decay=weight_decay)
    model = _add_positions(model, plan.max_lead, seed + 55)
    late_steps = plan.late_steps(steps)
    late = curriculum_batches(seed + 977, late_steps, max(1, batch_size // 2), lengths, plan.late_share,
                              plan.max_lead, 0.0)
    last = f"blocks.{model.config.layers - 1}."
    scales = {name: plan.last_layer_decay_factor for name in model.params if name.startswith(last)}
    scales.update(dict.fromkeys(plan.undecayed, 0.0))
    fit(model, _inputs(model, late), late_steps, history, peak, clip, "induction/late positions", progress,
        weight_decay=weight_decay * plan.late_decay_factor, decay_scales=scales)
    return model
