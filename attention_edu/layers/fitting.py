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
import math
import sys
from numbers import Real
from typing import Any, Callable, Iterable

from ..backend import host_numpy as np
from .optim import Adam, clip_by_global_norm, learning_rate

__all__ = ["fit", "check_training", "one_blas_thread", "Smoothed"]


def check_training(steps: Any, batch_size: Any, peak_learning_rate: Any, clip: Any, dtype: Any,
                   draw: Callable[[], Any], **flags: Any) -> None:
    """``train``'s door for what every model's training takes, each refused with a ValueError naming it:
    ``steps`` and ``batch_size`` positive ints, ``peak_learning_rate`` and ``clip`` finite and > 0 (a
    negative rate climbs the loss, a NaN one ends in a NaN check far from here), ``dtype`` float32 or float64
    (float16 overflows in training), the ``flags`` True or False (``"no"`` would be true); ``draw()`` draws an
    empty dataset, so that bad ``lengths`` are refused before training, not by NumPy inside it."""
    for name, value in (("steps", steps), ("batch_size", batch_size)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"train: {name} must be a positive int, got {value!r}")
    for name, value in (("peak_learning_rate", peak_learning_rate), ("clip", clip)):
        if isinstance(value, bool) or not isinstance(value, Real) or not 0 < value < math.inf:
            raise ValueError(f"train: {name} must be a finite number > 0, got {value!r}")
    if dtype not in ("float32", "float64"):
        raise ValueError(f"train: dtype must be 'float32' or 'float64', got {dtype!r}")
    for name, value in flags.items():
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"train: {name} must be True or False, got {value!r}")
    try:
        draw()
    except ValueError as err:                  # make_dataset's words, told as train's
        raise ValueError(str(err).replace("make_dataset:", "train:", 1)) from None


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
