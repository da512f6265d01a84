"""The checkers' records (probes, input cases, properties, exercises, mistakes, failures) and
the hidden probes drawn from a grading run's seed.

Plain data: the other modules of the package import these and nothing here imports them back.
The public cases of an exercise are fixed (their names teach); :func:`hidden_cases` adds cases
of the same shapes and dtypes whose inputs are drawn afresh, or moved, from a seed, so that no
table of answers can pass, not even one for the special cases only. ``attention-edu grade``
draws a seed per run (``--seed S`` reproduces it) and, with ``--per-student``, mixes in the
submission's file name and contents (:func:`student_seed`).

Examples
--------
>>> from attention_edu.checkers import EXERCISES
>>> a, b = hidden_cases(EXERCISES["softmax"], 1), hidden_cases(EXERCISES["softmax"], 2)
>>> len(a), {c.probe for c in a}, bool((a[0].args[0] != b[0].args[0]).any())
(11, {'hidden'}, True)
>>> [c.args for c in hidden_cases(EXERCISES["causal_mask"], 1)][3:]   # m = 1 stays; m = 4; m = 3, n = 5; m = 4, n = 2
[(1, 27), (35, 36), (36,), (27, 29), (35, 33)]
>>> hidden_cases(EXERCISES["softmax"], None)
[]
"""

from __future__ import annotations

import hashlib
import secrets
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..backend import host_numpy as np

__all__ = ["PROBES", "Case", "Property", "Exercise", "Mistake", "Failure", "probe_counts", "hidden_cases",
           "student_seed", "fresh_seed"]

#: Probe ids in the order they run, with the titles used in messages.
PROBES: dict[str, str] = {
    "attempted": "attempted",
    "runs": "runs without error",
    "returns": "return type, arity, shape and dtype",
    "inputs": "inputs unmodified",
    "small": "small exact case",
    "random": "random shapes, all dimensions distinct",
    "batched": "other ranks: 1-D, batched 3-D and 4-D",
    "stability": "large logits (about 1000)",
    "masks": "masks, including a fully masked row",
    "hidden": "hidden cases drawn from this grading run's seed",
    "properties": "properties and metamorphic relations",
    "determinism": "determinism",
}


@dataclass(frozen=True)
class Case:
    """One set of inputs for the student's function, belonging to one probe."""

    probe: str
    title: str
    args: tuple
    names: tuple[str, ...]
    literal: bool = False    # small enough to print the inputs in full
    note: str = ""

    @property
    def float_dtypes(self) -> tuple:
        return tuple(a.dtype for a in self.args if isinstance(a, np.ndarray) and a.dtype.kind == "f")


@dataclass(frozen=True)
class Property:
    """A relation every correct implementation satisfies, checked on fresh inputs.

    ``check(student)`` calls ``student(*args)`` (which returns the outputs as
    a tuple of host arrays) and returns None, or a description of the violation.
    """

    id: str
    title: str
    hint: str
    check: Callable[[Callable[..., tuple]], str | None]


@dataclass(frozen=True)
class Exercise:
    """A coding exercise: the student's signature, the reference, the cases."""

    name: str
    summary: str
    signature: str
    reference: Callable
    outputs: tuple[str, ...]
    cases: Callable[[], list[Case]]
    properties: tuple[Property, ...] = ()
    row_sums: tuple[str, ...] = ()
    dtype_hint: str = "Return floating-point numbers (float64 or float32)."
    notebook: str = ""       # the exercise notebook that asks for it (its file name without .ipynb)
    number: int = 1          # its exercise number in that notebook
    allowed_imports: tuple[str, ...] = ("numpy", "math")   # what a graded submission may import

    @property
    def function(self) -> str:
        """Name of the student's function (the part of the signature before '(')."""
        return self.signature.split("(")[0]

    @property
    def parameters(self) -> tuple[str, ...]:
        """Names of the student's function's parameters, read from the signature."""
        inside = self.signature.split("(", 1)[1].split(")")[0]
        return tuple(p.split("=")[0].strip() for p in inside.split(","))


@dataclass(frozen=True)
class Mistake:
    """A known misconception and the wrong implementation that makes it.

    Attributes
    ----------
    id : str
        ``"<exercise prefix>.<name>"``, e.g. ``"softmax.wrong-axis"``.
    exercise : str
        The exercise whose checker diagnoses it.
    probe : str
        Id of the first probe (see :data:`PROBES`) that this mistake fails.
    hint : str
        At most two sentences: the convention, then the fix.
    mutant : callable
        The wrong implementation, same signature as the student's function.
    """

    id: str
    exercise: str
    probe: str
    hint: str
    mutant: Callable


@dataclass
class Failure:
    """The first thing that went wrong, before diagnosis."""

    probe: str
    case: Any
    summary: str
    hint_id: str | None
    error: Any = None          # an ErrorInfo (see .harness) when the function raised
    fields: dict = field(default_factory=dict)
    evidence: str = ""


def probe_counts(exercise: Exercise, cases: list[Case]) -> dict[str, int]:
    """Probes of a run by kind, in run order: the ``cases`` by probe, the properties, determinism."""
    counts = Counter(case.probe for case in cases)
    if exercise.properties:
        counts["properties"] = len(exercise.properties)
    counts["determinism"] = 1
    return dict(counts)


def fresh_seed() -> int:
    """A new seed for a grading run (printed and recorded, so the run can be repeated)."""
    return secrets.randbits(32)


def student_seed(seed: int, file: str) -> int:
    """The seed for one submission under ``--per-student``: ``seed`` mixed with the file's name and contents,
    so that a resubmission changed in any way draws new hidden inputs (what its report showed of them is no use).

    >>> student_seed(7, "ana.py") == student_seed(7, "/x/ana.py") != student_seed(7, "bo.py")
    True
    """
    name, path = file.replace("\\", "/").rsplit("/", 1)[-1], Path(file)
    try:        # the file as grade_one will read it: a link, a FIFO or a huge file is not read
        content = path.read_bytes() if path.is_file() and not path.is_symlink() and path.stat().st_size <= 16 << 20 \
            else b""
    except OSError:
        content = b""
    digest = hashlib.sha256(f"{seed}:{name}:".encode("utf-8", "surrogateescape") + content).digest()
    return int.from_bytes(digest[:4], "little")


def _fresh(value: object, rng: np.random.Generator) -> object:
    if isinstance(value, np.ndarray) and value.dtype.kind == "f" and value.size:
        spread, draw = float(np.std(value)) or 1.0, rng.standard_normal(value.shape)
        return _weights_kept(value, draw, draw * spread + float(np.mean(value)))
    return value


def _nudged(value: object, rng: np.random.Generator) -> object:
    """Floats scaled by about one per cent each, as signs, zeros, infinities and rows of weights stay: a special
    case's kind, with no recorded answer."""
    if not (isinstance(value, np.ndarray) and value.dtype.kind == "f" and value.ndim and value.size):
        return value
    draw = rng.standard_normal(value.shape)
    return _weights_kept(value, draw, value * np.exp(0.01 * draw))


def _weights_kept(value: np.ndarray, draw: np.ndarray, moved: np.ndarray) -> np.ndarray:
    """``moved``, but a row of weights (non-negative, summing to 1) is redrawn as weights: at (0.5, 0, 0.5) one per
    cent moved the softmax Jacobian by less than its tolerance, and noise in place of the weights of attention_entropy
    (negative, so its reference counts 0 for them) failed log(w + 1e-12). Weights below 1e-3 (zeros too) stay as they
    are and the others keep their sum, each two of them moved apart by e^0.3 at least (the draws ranked and spread):
    a weight of 4e-8 moved e-fold failed an entropy that drops p < 1e-6 on one seed in three, passed it on the others,
    and the Jacobian's recorded answer for (0.5, 0, 0.5) passed where two draws nearly agreed (2 seeds in 100)."""
    if not value.ndim:
        return moved.astype(value.dtype)
    with np.errstate(invalid="ignore", divide="ignore"):
        big = value >= 1e-3
        spread = np.where(big, value * np.exp(draw + 0.3 * np.argsort(np.argsort(draw, axis=-1), axis=-1)), 0.0)
        spread *= np.sum(np.where(big, value, 0.0), axis=-1, keepdims=True) / np.sum(spread, axis=-1, keepdims=True)
        weights = np.isclose(np.sum(value, axis=-1, keepdims=True), 1.0) & np.all(value >= 0, axis=-1, keepdims=True)
        return np.where(weights, np.where(big, spread, value), moved).astype(value.dtype)


def hidden_cases(exercise: Exercise, seed: int | None) -> list[Case]:
    """One case like each public case: the random ones' floats redrawn from ``seed``, the others' nudged
    (:func:`_nudged`); a case with no floats has its integers above 1 all moved by one draw (sizes, lengths).
    [] for no ``seed``."""
    if seed is None:
        return []
    public = exercise.cases()
    models = [c for c in public if c.probe in ("random", "batched")] or public
    rng = np.random.default_rng([seed, int.from_bytes(exercise.name.encode()[:8], "little")])
    drawn = [(c, _fresh) for c in models]         # each: a rank, a dtype, a size 1 no hidden case had could be tabled
    cases = []
    for model, change in drawn + [(c, _nudged) for c in public if c.probe not in ("random", "batched")]:
        shift = 0 if model.float_dtypes else int(rng.integers(1, 33))
        args = tuple(a + shift * (a > 1) if shift and (type(a) is int or isinstance(a, np.ndarray) and a.dtype.kind
                     in "iu") else change(a, rng) for a in model.args)     # a size or length 0 or 1 stays: special too
        if any(a is not b for a, b in zip(args, model.args)):
            cases.append(Case("hidden", f"hidden case {len(cases) + 1}", args, model.names))
    return cases
