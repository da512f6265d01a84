"""The registry of known misconceptions, each with a deliberately wrong implementation.

A misconception ("mistake") has an id, the exercise it belongs to, the probe
where it first shows, a hint of at most two sentences that states the
convention and the fix, and a *mutant*: a small function that makes exactly
that mistake. When a student's function fails a probe, every mutant of the
exercise runs on the same inputs; the one whose output the student's output
matches names the mistake ("diagnosis by fingerprint").

The mutants themselves live beside their exercise (``exercises/softmax.py``,
``exercises/attention.py``, ...), registered with the :func:`mistake` decorator.
"""

from __future__ import annotations

from typing import Callable

from ..records import PROBES, Mistake

__all__ = ["Mistake", "mistake", "variant", "variants_of", "mistakes_for", "all_mistakes", "PROBES"]

_REGISTRY: dict[str, Mistake] = {}
_VARIANTS: dict[str, list[Callable]] = {}


def mistake(exercise: str, id: str, probe: str, hint: str) -> Callable[[Callable], Callable]:
    """Decorator registering a mutant as the implementation of a misconception.

    Examples
    --------
    >>> @mistake("demo", "demo.double", "small", "Do not double it.")
    ... def doubled(x):
    ...     return 2 * x
    >>> [m.id for m in mistakes_for("demo")]
    ['demo.double']
    >>> _ = _REGISTRY.pop("demo.double")
    """
    if probe not in PROBES:
        raise ValueError(f"mistake {id}: unknown probe {probe!r}; probes are {', '.join(PROBES)}")

    def register(fn: Callable) -> Callable:
        if id in _REGISTRY:
            raise ValueError(f"mistake {id} is registered twice")
        _REGISTRY[id] = Mistake(id, exercise, probe, hint, fn)
        return fn

    return register


def variant(id: str) -> Callable[[Callable], Callable]:
    """Decorator adding another spelling of a registered mistake (e.g. ``s + mask * -1e9`` beside
    ``np.where(mask, -1e9, s)``): either one's output names the mistake ``id``."""
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
