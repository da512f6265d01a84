"""The coding exercises, by exercise notebook: each with its probes, reference and known mistakes.

A module here names its :class:`~..records.Exercise` objects in its ``__all__`` and :func:`collect` finds
them, so adding an exercise touches its own module (and its notebook), nothing else. Each module lists its
misconceptions as a table of ``(name, first failing probe, mutant, hint)``, tried in the table's order, for
:func:`register_mistakes`, the registry that :mod:`..diagnosis.mutants` matches failures against.
Most mutants are the right computation with one knob turned: :func:`stable_softmax`, :func:`weigh` and
:func:`attend` (on host arrays) are the knob boards the modules share.
"""

import importlib
import math
import pkgutil
from typing import Callable

from ...backend import host_numpy as np
from ...softmax import softmax_naive, stable_softmax as softmax_kernel
from ..diagnosis.evidence import reads
from ..records import PROBES, Exercise, Mistake

__all__ = ["collect", "normal_arrays", "reads", "register_mistakes", "variant", "variants_of", "mistakes_for",
           "all_mistakes", "stable_softmax", "scaled_scores", "weigh", "attend"]


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


_REGISTRY: dict[str, Mistake] = {}
_VARIANTS: dict[str, list[Callable]] = {}


def register_mistakes(exercise: str, table: tuple, prefix: str | None = None) -> None:
    """Register each ``(name, probe, mutant, hint[, line])`` of ``table`` as ``<prefix or exercise>.<name>``."""
    for name, probe, mutant, hint, *line in table:
        id = f"{prefix or exercise}.{name}"
        if probe not in PROBES:
            raise ValueError(f"mistake {id}: unknown probe {probe!r}; probes are {', '.join(PROBES)}")
        if id in _REGISTRY:
            raise ValueError(f"mistake {id} is registered twice")
        _REGISTRY[id] = Mistake(id, exercise, probe, hint, mutant, *line)


def variant(id: str) -> Callable[[Callable], Callable]:
    """Decorator: another spelling of mistake ``id`` (``s + mask * -1e9`` beside ``np.where(mask, s, -1e9)``)."""
    def register(fn: Callable) -> Callable:
        if id not in _REGISTRY:
            raise ValueError(f"variant of unknown mistake {id}")
        _VARIANTS.setdefault(id, []).append(fn)
        return fn
    return register


def variants_of(mistake: Mistake) -> tuple[Callable, ...]:
    """Every mutant of a mistake: its own, then the variants registered for it."""
    return (mistake.mutant, *_VARIANTS.get(mistake.id, ()))


def mistakes_for(exercise: str) -> tuple[Mistake, ...]:
    """The mistakes of one exercise, in registration order."""
    return tuple(m for m in _REGISTRY.values() if m.exercise == exercise)


def all_mistakes() -> tuple[Mistake, ...]:
    """Every registered mistake."""
    return tuple(_REGISTRY.values())


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
