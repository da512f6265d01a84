"""Training from scratch: teacher-forced batches, Adam with warm-up and cosine decay, clipping.

Each step draws a batch of training pairs, runs the whole sequence
``|source|target`` forward at once, backpropagates the cross-entropy of the
answer positions by hand, clips the gradient norm and takes an Adam step
(for ``induction`` with decoupled weight decay, see :data:`DEFAULT_WEIGHT_DECAYS`).
Batches group sources of one length (no padding). ``induction`` trains in two
phases by default (:mod:`~attention_edu.transformer.curriculum`: suffix copies,
then sources at late positions), so that the previous-token → induction circuit
forms and its previous-token head looks one step back at every position. After training, greedy
generation on held-out sources measures the exact match, and a
teacher-forced pass measures the share of answer tokens right.
BLAS runs on one thread: these matrices are small, and two threads waiting
on each other were slower here (see docs/benchmarks.md).
"""

from __future__ import annotations

import time
from dataclasses import asdict, replace
from typing import Any

from ..backend import Backend, checked_backend
from ..backend import host_numpy as np
from ..layers.fitting import check_training, fit, one_blas_thread
from ..shapes import positive_int
from .config import DEFAULT_CONFIGS
from .curriculum import DEFAULT_CURRICULA, Curriculum, train_curriculum
from .model import Transformer, answer_accuracy
from .tasks import LENGTHS, TASKS, make_dataset

__all__ = ["train", "evaluate", "held_out_pairs", "DEFAULT_STEPS", "DEFAULT_LEARNING_RATES",
           "DEFAULT_WEIGHT_DECAYS", "EVAL_PER_LENGTH"]

#: Training steps and peak learning rates of the command line's defaults, per task.
DEFAULT_STEPS = {"sort": 2000, "induction": 2500}
DEFAULT_LEARNING_RATES = {"sort": 3e-3, "induction": 3e-3}
#: Adam's decoupled weight decay λ per task. On ``induction`` it prunes the heads that copy
#: one another and favours the previous-token → induction circuit over routes by position
#: (measured in docs/benchmarks.md); ``sort`` trains without it.
DEFAULT_WEIGHT_DECAYS = {"sort": 0.0, "induction": 1.0}
#: Held-out sources per source length when ``train`` is given no ``eval_size`` (the command line's default).
EVAL_PER_LENGTH = 200


def held_out_pairs(task: str, seed: int, size: int = 1000, lengths: tuple[int, int] | None = None,
                   alphabet: str | None = None) -> list[tuple[str, str]]:
    """``size`` held-out pairs (sources training never draws), seeded apart from training."""
    return make_dataset(task, size, seed + 7919, held_out=True, lengths=lengths, alphabet=alphabet)


def evaluate(model: Transformer, pairs: list[tuple[str, str]], chunk: int = 512) -> dict[str, float]:
    """``exact_match`` of greedy outputs and teacher-forced ``answer_accuracy``, both 0–1."""
    with one_blas_thread():
        by_length: dict[int, list[tuple[str, str]]] = {}
        for pair in pairs:
            by_length.setdefault(len(pair[0]), []).append(pair)
        right, tokens, weighted = 0, 0, 0.0
        for group in by_length.values():
            for start in range(0, len(group), chunk):
                part = group[start:start + chunk]
                outputs = model.generate([s for s, _ in part], who="evaluate")
                right += sum(o == t for o, (_, t) in zip(outputs, part))
                batch = model.batch(part)
                logits, _ = model.forward(batch["ids"])
                count = len(part) * len(part[0][1])
                weighted += answer_accuracy(logits, batch) * count
                tokens += count
    return {"exact_match": right / max(1, len(pairs)), "answer_accuracy": weighted / max(1, tokens)}


def _batches(task: str, steps: int, batch_size: int, seed: int, lengths: tuple[int, int],
             shift: int) -> list[tuple[list[tuple[str, str]], int]]:
    """``steps`` (pairs, offset): each batch of one source length (drawn uniformly), placed
    at a random first position 0..``shift`` (so that absolute positions say nothing)."""
    rng = np.random.default_rng(seed + 1)
    per_step = rng.integers(lengths[0], lengths[1] + 1, size=steps)
    offsets = rng.integers(0, shift + 1, size=steps)
    return [(make_dataset(task, batch_size, int(rng.integers(2**31)), lengths=(int(n), int(n))), int(o))
            for n, o in zip(per_step, offsets)]


def train(task: str = "sort", seed: int = 0, *, steps: int | None = None, batch_size: int = 64,
          layers: int | None = None, heads: int | None = None, d_model: int | None = None,
          mlp: bool | None = None, shift: int | None = None, causal: bool = True, peak_learning_rate: float | None = None,
          weight_decay: float | None = None, curriculum: Curriculum | bool = True, clip: float = 1.0,
          eval_size: int | None = None, lengths: tuple[int, int] | None = None,
          dtype: str = "float32", backend: Backend | None = None,
          progress: bool = False) -> tuple[Transformer, dict[str, Any]]:
    """Train a transformer on ``task`` from ``seed``; the defaults are the command line's.

    Returns ``(model, history)``: per-step ``loss``, ``accuracy`` (answer tokens
    right, teacher-forced) and ``learning_rate``; ``train_seconds``,
    ``seconds``; held-out ``exact_match`` and ``answer_accuracy``
    on ``eval_size`` sources (unset: 200 per source length, as the command
    line's ``--eval-per-length``; ``eval_size=0`` skips them). Unset model sizes come from
    :data:`~attention_edu.transformer.config.DEFAULT_CONFIGS`, an unset
    ``weight_decay`` from :data:`DEFAULT_WEIGHT_DECAYS`.

    ``curriculum``: ``True`` trains with the task's default
    :class:`~attention_edu.transformer.curriculum.Curriculum` (``induction``: ``steps``
    with suffix copies, then ``late_steps`` more with sources at late positions; ``sort``
    has none), ``False`` in one phase of plain batches, or pass a ``Curriculum``
    (``induction`` only). ``history["steps"]`` counts both phases.

    Examples
    --------
    >>> model, history = train("sort", seed=0, steps=3, batch_size=4, layers=1, heads=2,
    ...                        d_model=8, eval_size=0, lengths=(3, 4))
    >>> len(history["loss"]), history["task"]
    (3, 'sort')
    """
    if task not in TASKS:
        raise ValueError(f"train: unknown task {task!r}; choose one of {', '.join(TASKS)}")
    seed = positive_int("train", "seed", seed, minimum=0)
    if eval_size is not None:
        eval_size = positive_int("train", "eval_size", eval_size, minimum=0)
    steps = DEFAULT_STEPS[task] if steps is None else steps
    rate = DEFAULT_LEARNING_RATES[task] if peak_learning_rate is None else peak_learning_rate
    flags = dict(causal=causal) if mlp is None else dict(causal=causal, mlp=mlp)
    check_training(steps, batch_size, rate, clip, dtype, lambda: make_dataset(task, 0, lengths=lengths), **flags)
    if not isinstance(curriculum, (bool, Curriculum)) or (isinstance(curriculum, Curriculum) and task != "induction"):
        raise ValueError(f"train: curriculum must be True, False or (for induction) a Curriculum, got {curriculum!r}")
    plan = DEFAULT_CURRICULA[task] if curriculum is True else (curriculum or None)
    decay = DEFAULT_WEIGHT_DECAYS[task] if weight_decay is None else weight_decay
    if isinstance(decay, bool) or not isinstance(decay, (int, float)) or not 0 <= decay < float("inf"):
        raise ValueError(f"train: weight_decay must be a finite number >= 0, got {weight_decay!r}")
    sizes = {k: v for k, v in dict(layers=layers, heads=heads, d_model=d_model, mlp=mlp,
                                                shift=shift).items() if v is not None}
    config = replace(DEFAULT_CONFIGS[task], causal=causal, **sizes)
    lengths = LENGTHS[task] if lengths is None else lengths
    model = Transformer.initialize(config, seed, checked_backend("train", backend, dtype))
    history: dict[str, Any] = {"task": task, "seed": seed, "steps": steps + (plan.late_steps(steps) if plan else 0),
                               "batch_size": batch_size, "peak_learning_rate": rate, "weight_decay": decay,
                               "curriculum": None if plan is None else asdict(plan),
                               "loss": [], "accuracy": [], "learning_rate": []}
    start = time.perf_counter()
    with one_blas_thread():
        if plan is None:
            batches = _batches(task, steps, batch_size, seed, lengths, config.shift)
            fit(model, (dict(model.batch(pairs), offset=offset) for pairs, offset in batches), len(batches),
                history, rate, clip, f"{task}/transformer", progress, weight_decay=decay)
        else:
            model = train_curriculum(model, plan, seed, steps, batch_size, lengths, history, rate, clip, decay,
                                     progress)
    history["config"] = model.config.to_dict()
    history["train_seconds"] = time.perf_counter() - start
    if eval_size is None:         # the lengths are known good here: training drew batches of them
        eval_size = EVAL_PER_LENGTH * (lengths[1] - lengths[0] + 1)
    history["eval_size"] = eval_size
    if eval_size:
        history.update(evaluate(model, held_out_pairs(task, seed, eval_size, lengths)))
    history["seconds"] = time.perf_counter() - start
    return model, history
