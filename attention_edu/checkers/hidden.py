"""Hidden probes: inputs drawn from a grading run's seed, so that no table of answers can pass.

The public cases of an exercise are fixed (their names teach); :func:`hidden_cases` adds cases
of the same shapes and dtypes whose floating-point inputs are drawn afresh from ``seed``.
``attention-edu grade`` draws a seed per run (``--seed S`` reproduces it) and, with
``--per-student``, mixes in the submission's file name (:func:`student_seed`).

Examples
--------
>>> from attention_edu.checkers.registry import EXERCISES
>>> a, b = hidden_cases(EXERCISES["softmax"], 1), hidden_cases(EXERCISES["softmax"], 2)
>>> [c.probe for c in a], bool((a[0].args[0] != b[0].args[0]).any())
(['hidden', 'hidden'], True)
>>> hidden_cases(EXERCISES["softmax"], None)
[]
"""

from __future__ import annotations

import hashlib
import secrets

from ..backend import host_numpy as np
from .records import Case, Exercise

__all__ = ["hidden_cases", "student_seed", "fresh_seed"]

#: Hidden cases added per run.
COUNT = 2


def fresh_seed() -> int:
    """A new seed for a grading run (printed and recorded, so the run can be repeated)."""
    return secrets.randbits(32)


def student_seed(seed: int, file: str) -> int:
    """The seed for one submission under ``--per-student``: ``seed`` mixed with the file's name.

    >>> student_seed(7, "ana.py") == student_seed(7, "/x/ana.py") != student_seed(7, "bo.py")
    True
    """
    name = file.replace("\\", "/").rsplit("/", 1)[-1]
    return int.from_bytes(hashlib.sha256(f"{seed}:{name}".encode()).digest()[:4], "little")


def _fresh(value: object, rng: np.random.Generator) -> object:
    if isinstance(value, np.ndarray) and value.dtype.kind == "f" and value.size:
        spread = float(np.std(value)) or 1.0
        return (rng.standard_normal(value.shape) * spread + float(np.mean(value))).astype(value.dtype)
    return value


def hidden_cases(exercise: Exercise, seed: int | None) -> list[Case]:
    """:data:`COUNT` cases like the exercise's random ones, floats redrawn from ``seed`` ([] for None)."""
    if seed is None:
        return []
    public = exercise.cases()
    models = [c for c in public if c.probe in ("random", "batched")] or public
    rng = np.random.default_rng([seed, int.from_bytes(exercise.name.encode()[:8], "little")])
    cases = []
    for index in range(COUNT):
        model = models[index % len(models)]
        args = tuple(_fresh(a, rng) for a in model.args)
        if any(a is not b for a, b in zip(args, model.args)):
            cases.append(Case("hidden", f"hidden case {len(cases) + 1}", args, model.names))
    return cases
