"""The training loop every model shares: Adam steps with clipping, a schedule and a progress bar.

A model is anything with ``params`` (a dict of arrays) and ``loss_and_grads(inputs)`` returning
``(loss, grads, accuracy)``. :func:`fit` takes one Adam step per batch of inputs (gradient norm
clipped, learning rate warmed up then decayed by :func:`~.optim.learning_rate`) and records the
loss, accuracy and rate of every step in ``history``. BLAS runs on one thread while it does
(:func:`one_blas_thread`): these models' matrices are tiny, and BLAS threads waiting on each
other cost more than they give (measured in docs/benchmarks.md).
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any, Iterable

from .optim import Adam, clip_by_global_norm, learning_rate

__all__ = ["fit", "one_blas_thread", "Smoothed"]


def fit(model: Any, inputs: Iterable[dict], steps: int, history: dict[str, Any], peak: float,
        clip: float, label: str, progress: bool, weight_decay: float = 0.0,
        decay_scales: dict[str, float] | None = None) -> None:
    """Take one Adam step per item of ``inputs`` (``steps`` of them); append to ``history``.
    ``weight_decay``: Adam's decoupled decay of the matrices (0: none), times
    ``decay_scales[name]`` for the parameters it names."""
    optimizer = Adam(weight_decay=weight_decay, decay_scales=decay_scales)
    bar = _progress(steps, label) if progress else None
    smooth = Smoothed()
    for step, batch in enumerate(inputs):
        loss, grads, accuracy = model.loss_and_grads(batch)
        grads, _ = clip_by_global_norm(grads, clip)
        rate = learning_rate(step, steps, peak, warmup=min(100, steps // 10))
        model.params = optimizer.step(model.params, grads, rate)
        history["loss"].append(loss), history["accuracy"].append(accuracy)
        history["learning_rate"].append(rate)
        if bar is not None:
            loss_avg, accuracy_avg = smooth.update(loss, accuracy)
            bar.set_postfix({"loss (EMA)": f"{loss_avg:.3f}", "acc (EMA)": f"{accuracy_avg:.3f}"},
                            refresh=False)
            bar.update()
    if bar is not None:
        bar.close()


def one_blas_thread() -> Any:
    """A context in which BLAS uses one thread (a no-op without threadpoolctl)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


class Smoothed:
    """Exponential moving averages of the loss and accuracy, as the progress bar shows them.

    One batch's accuracy jumps around (0.91, 0.55, 0.69 in three steps looks
    like divergence); the bar shows ``loss (EMA)`` and ``acc (EMA)``, averages with
    weight ``decay`` on the past, bias-corrected as Adam's moments are so that
    the first steps are not pulled towards zero.

    Examples
    --------
    >>> smooth = Smoothed(decay=0.5)
    >>> smooth.update(1.0, 0.0), smooth.update(0.0, 1.0)
    ((1.0, 0.0), (0.3333333333333333, 0.6666666666666666))
    """

    def __init__(self, decay: float = 0.95):
        self.decay, self.steps, self.sums = decay, 0, (0.0, 0.0)

    def update(self, loss: float, accuracy: float) -> tuple[float, float]:
        self.steps += 1
        self.sums = tuple(self.decay * old + (1 - self.decay) * new
                          for old, new in zip(self.sums, (loss, accuracy)))
        correction = 1 - self.decay ** self.steps
        return self.sums[0] / correction, self.sums[1] / correction


def _progress(total: int, description: str) -> Any:
    """A tqdm bar on stderr (time left, and the moving averages of :class:`Smoothed`)."""
    from tqdm.auto import tqdm

    # In a log file (not a terminal) every refresh is kept: refresh every 2 s, not 10 times a second.
    interactive = getattr(sys.stderr, "isatty", lambda: False)()
    return tqdm(total=total, desc=description, unit="step", file=sys.stderr,
                mininterval=0.1 if interactive else 2.0)
