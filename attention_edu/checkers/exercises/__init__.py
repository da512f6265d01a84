"""The coding exercises, by exercise notebook: each with its probes, reference and known mistakes.

A module here names its :class:`~..records.Exercise` objects in its ``__all__`` and :func:`collect` finds
them, so adding an exercise touches its own module (and its notebook), nothing else. Each module lists its
misconceptions as a table of ``(name, first failing probe, mutant, hint)``, tried in the table's order.
Most mutants are the right computation with one knob turned: :func:`stable_softmax`, :func:`weigh` and
:func:`attend` (on host arrays) are the knob boards the modules share.
"""

import importlib
import math
import pkgutil

from ...backend import host_numpy as np
from ...softmax import softmax_naive, stable_softmax as softmax_kernel
from ..diagnosis.evidence import reads
from ..diagnosis.mutants import register_mistakes, variant
from ..records import Exercise

__all__ = ["collect", "normal_arrays", "reads", "register_mistakes", "variant", "stable_softmax", "scaled_scores",
           "weigh", "attend"]


def collect() -> dict[str, Exercise]:
    """Every exercise of the modules in this package, by name, in notebook order.

    >>> list(collect())[:3]
    ['softmax', 'causal_mask', 'padding_mask']
    """
    found: list[Exercise] = []
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        found.extend(obj for obj in map(module.__dict__.get, getattr(module, "__all__", ()))
                     if isinstance(obj, Exercise))
    found.sort(key=lambda exercise: (exercise.notebook, exercise.number))
    exercises = {exercise.name: exercise for exercise in found}
    if len(exercises) != len(found):
        raise RuntimeError("two exercise modules define an exercise of the same name")
    return exercises


def normal_arrays(seed: int, *shapes: tuple[int, ...], scale: float = 1.0) -> tuple:
    """Standard normal arrays of ``shapes``, times ``scale``, drawn in turn from one seeded generator."""
    rng = np.random.default_rng(seed)
    return tuple(scale * rng.standard_normal(shape) for shape in shapes)


def stable_softmax(x, axis=-1, guard=True):
    """Softmax along ``axis`` shifted by the maximum; ``guard`` turns a row of −inf into zeros, not NaN."""
    if guard:
        return softmax_kernel(np, x, axis)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def scaled_scores(Q, K, scale=None):
    """Q Kᵀ / scale, the scale √d_k unless given: (..., m, n)."""
    return Q @ np.swapaxes(K, -1, -2) / (math.sqrt(Q.shape[-1]) if scale is None else scale)


def weigh(scores, V, mask=None, axis=-1, fill=-np.inf, guard=True, additive=False, inverted=False, naive=False,
          unchecked=False, causal=False):
    """Mask, softmax along ``axis`` and weighted sum, with knobs for building the mutants.

    ``inverted`` flips the mask; ``additive`` adds ``fill`` to the masked scores
    (``s + (1 - mask) * fill``) instead of replacing them (``np.where(mask, s, fill)``);
    ``naive`` leaves out the max shift of the softmax; ``unchecked`` fills every score where no mask is given
    (``np.where(None, s, -1e9)`` reads None as False); ``causal`` hides the later keys where no mask is given
    (PyTorch's ``is_causal=True``); where m < 3, whose rows are a window's too (red team 68), its weights are NaN
    beside a finite output, which no student's code gives (an output all NaN would be matched: red team 71).
    """
    if mask is not None:
        mask = ~mask if inverted else mask
        scores = scores + np.where(mask, 0.0, fill) if additive else np.where(mask, scores, fill)
    elif unchecked:
        scores = np.full_like(scores, -1e9)
    elif causal:
        scores = np.where(np.tril(np.ones(scores.shape[-2:], bool)), scores, -np.inf)
    weights = softmax_naive(scores, axis) if naive else stable_softmax(scores, axis, guard)   # (..., m, n)
    return weights @ V, weights * np.nan if causal and mask is None and scores.shape[-2] < 3 else weights


def attend(Q, K, V, mask=None, scale=None, **knobs):
    """Host attention for the mutants; ``scale`` None means √d_k, ``knobs`` go to :func:`weigh`."""
    return weigh(scaled_scores(Q, K, scale), V, mask, **knobs)
