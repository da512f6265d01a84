"""Training from scratch: batches, Adam steps, and the held-out exact match by source length.

Each step draws a batch of training pairs, runs the model forward with
teacher forcing, backpropagates by hand, clips the gradient norm and takes an
Adam step. Batches group sources of similar length (32 batches are drawn,
sorted by length, cut and shuffled), so little time goes into padding. After
training, greedy decoding of held-out sources (which training never saw)
measures the exact match: the whole output right, character for character.
"""

from __future__ import annotations

import time
from typing import Any

from ..backend import Backend, checked_backend
from ..backend import host_numpy as np
from .config import ModelConfig
from .kinds import kind_of
from .decoding import greedy_decode
from .model import Seq2Seq
from ..layers.fitting import Smoothed, check_training, fit, one_blas_thread
from ..shapes import positive_int
from .tasks import REVERSE_LENGTHS, TASKS, make_dataset

__all__ = ["train", "evaluate", "held_out_pairs", "one_blas_thread", "Smoothed", "DEFAULT_STEPS"]

#: Training steps of the command line's defaults, per task.
DEFAULT_STEPS = {"reverse": 1400, "dates": 450}
POOL = 32  # batches drawn together and sorted by length


def held_out_pairs(task: str, seed: int, per_length: int = 200) -> list[tuple[str, str]]:
    """The held-out test set: ``per_length`` sources of each reversal length, or 10·that many dates."""
    if task == "reverse":
        low, high = REVERSE_LENGTHS
        return [pair for n in range(low, high + 1)
                for pair in make_dataset(task, per_length, seed + 7919 * n, held_out=True, lengths=(n, n))]
    return make_dataset(task, 10 * per_length, seed + 7919, held_out=True)


def evaluate(model: Seq2Seq, pairs: list[tuple[str, str]], chunk: int = 1024) -> dict[str, Any]:
    """Exact match (0–1) of greedy outputs overall and by source length (keys are strings)."""
    with one_blas_thread():
        return _evaluate(model, pairs, chunk)


def _evaluate(model: Seq2Seq, pairs: list[tuple[str, str]], chunk: int) -> dict[str, Any]:
    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]))
    right: dict[int, list[bool]] = {}
    for start in range(0, len(order), chunk):
        part = [pairs[i] for i in order[start:start + chunk]]
        outputs, _ = greedy_decode(model, [s for s, _ in part], who="evaluate")
        for (source, target), output in zip(part, outputs):
            right.setdefault(len(source), []).append(output == target)
    total = sum(sum(v) for v in right.values())
    return {"exact_match": total / max(1, len(pairs)),
            "exact_match_by_length": {str(n): sum(v) / len(v) for n, v in sorted(right.items())}}


def training_pairs(task: str, size: int, seed: int,
                   lengths: tuple[int, int] | None = None) -> list[tuple[str, str]]:
    """``size`` training pairs; for ``reverse`` a source of length n is drawn with weight ∝ n.

    Long sources are the hard ones (the decoder must find the mirrored
    position after many steps), so they get more of the training: length 24
    six times as often as length 4.

    Examples
    --------
    >>> lengths = [len(s) for s, _ in training_pairs("reverse", 4000, seed=0)]
    >>> min(lengths), max(lengths), lengths.count(24) > 4 * lengths.count(4)
    (4, 24, True)
    """
    if task != "reverse" or not LONG_BIAS:
        return make_dataset(task, size, seed, lengths=lengths)
    low, high = REVERSE_LENGTHS if lengths is None else lengths
    rng = np.random.default_rng(seed)
    sizes = np.arange(low, high + 1)
    counts = rng.multinomial(size, sizes / sizes.sum())
    pairs = [pair for n, count in zip(sizes, counts)
             for pair in make_dataset(task, int(count), seed + 104729 * int(n), lengths=(int(n), int(n)))]
    return [pairs[i] for i in rng.permutation(len(pairs))]


LONG_BIAS = True


def _batches(task: str, steps: int, batch_size: int, seed: int,
             lengths: tuple[int, int] | None) -> list[list[tuple[str, str]]]:
    pairs = training_pairs(task, steps * batch_size, seed, lengths=lengths)
    rng = np.random.default_rng(seed + 1)
    batches = []
    for start in range(0, len(pairs), POOL * batch_size):
        pool = sorted(pairs[start:start + POOL * batch_size], key=lambda p: len(p[0]))
        cut = [pool[i:i + batch_size] for i in range(0, len(pool), batch_size)]
        batches.extend(cut[i] for i in rng.permutation(len(cut)))
    return batches


def train(task: str = "reverse", attention: str = "bahdanau", seed: int = 0, *,
          steps: int | None = None, batch_size: int = 64, embedding: int = 16, hidden: int = 32,
          attention_size: int = 16, peak_learning_rate: float = 0.01, clip: float = 1.0,
          eval_per_length: int = 200, lengths: tuple[int, int] | None = None,
          dtype: str = "float32", backend: Backend | None = None,
          progress: bool = False) -> tuple[Seq2Seq, dict[str, Any]]:
    """Train a model on ``task`` with ``attention`` from ``seed``; the defaults are the CLI's.

    Returns ``(model, history)``: ``history`` holds the per-step ``loss``,
    ``accuracy`` (next characters right, teacher-forced) and
    ``learning_rate``, the training ``seconds`` and ``seconds_per_step``,
    and the held-out ``exact_match`` and ``exact_match_by_length``
    (``eval_per_length=0`` skips the evaluation). Parameters live on
    ``backend`` (default: NumPy in ``dtype``; float32 trains about twice as
    fast as float64 here and learns as well).

    Examples
    --------
    >>> model, history = train("reverse", "none", seed=0, steps=3, batch_size=4, hidden=8,
    ...                        embedding=4, eval_per_length=0, lengths=(3, 4))
    >>> len(history["loss"]), history["task"]
    (3, 'reverse')
    """
    if task not in TASKS:
        raise ValueError(f"train: unknown task {task!r}; choose one of {', '.join(TASKS)}")
    kind_of(attention, who="train")
    seed = positive_int("train", "seed", seed, minimum=0)
    eval_per_length = positive_int("train", "eval_per_length", eval_per_length, minimum=0)
    steps = DEFAULT_STEPS[task] if steps is None else steps
    check_training(steps, batch_size, peak_learning_rate, clip, dtype,
                   lambda: make_dataset(task, 0, lengths=lengths))
    config = ModelConfig.for_task(task, attention, embedding=embedding, hidden=hidden,
                                  attention_size=attention_size)
    model = Seq2Seq.initialize(config, seed, checked_backend("train", backend, dtype))
    batches = _batches(task, steps, batch_size, seed, lengths)
    history: dict[str, Any] = {"task": task, "attention": attention, "seed": seed, "steps": steps,
                               "batch_size": batch_size, "loss": [], "accuracy": [],
                               "learning_rate": []}
    with one_blas_thread():
        return _fit(model, batches, history, peak_learning_rate, clip, eval_per_length, progress)


def _fit(model: Seq2Seq, batches: list, history: dict[str, Any], peak_learning_rate: float,
         clip: float, eval_per_length: int, progress: bool) -> tuple[Seq2Seq, dict[str, Any]]:
    task, steps = history["task"], history["steps"]
    start = time.perf_counter()
    fit(model, (model.batch(pairs) for pairs in batches), steps, history, peak_learning_rate, clip,
        f"{task}/{history['attention']}", progress)
    history["train_seconds"] = time.perf_counter() - start
    history["seconds_per_step"] = history["train_seconds"] / steps
    if eval_per_length:
        history.update(evaluate(model, held_out_pairs(task, history["seed"], eval_per_length)))
    history["seconds"] = time.perf_counter() - start
    return model, history
