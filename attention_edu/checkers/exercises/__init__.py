"""The coding exercises, one module each: its probes, reference, known mistakes, in one place.

A module here defines its :class:`~..records.Exercise` objects and names them in its
``__all__``; :func:`collect` finds every such module, so adding an
exercise touches its own module (and its notebook), nothing else. Exercises are ordered as
the notebooks ask for them: by notebook, then by exercise number.
"""

from __future__ import annotations

import importlib
import pkgutil

from ..records import Exercise

__all__ = ["collect"]


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
