"""The checkers' records (probes, input cases, properties, exercises, mistakes, failures) and the hidden probes drawn
from a grading run's seed.

Plain data: the other modules of the package import these and nothing here imports them back. The public cases of
an exercise are fixed (their names teach); :func:`hidden_cases` adds cases like them, drawn from a seed, so that no
table of answers passes (docs/teachers.md, "Hidden probes").
"""

import hashlib
import math
import secrets
from collections import Counter
from dataclasses import dataclass, field
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
    "batched": "other ranks (fewer or more leading axes)",
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
    twin: str = ""           # a hidden case's: the title of the public case it is drawn like

    @property
    def float_dtypes(self) -> tuple:
        return tuple(a.dtype for a in self.args if isinstance(a, np.ndarray) and a.dtype.kind == "f")


@dataclass(frozen=True)
class Property:
    """A relation every correct implementation satisfies, checked on fresh inputs: ``check(student)`` calls
    ``student(*args)`` (the outputs come back as a tuple of host arrays) and returns None or the violation."""

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
    """A known misconception and the wrong implementation (the mutant) that makes it."""

    id: str             # "<exercise prefix>.<name>", e.g. "softmax.wrong-axis"
    exercise: str       # the exercise whose checker diagnoses it
    probe: str          # the first probe (a key of PROBES) that this mistake fails
    hint: str           # at most two sentences: the convention, then the fix
    mutant: Callable    # the wrong implementation, with the student's function's signature
    line: str = ""      # a pattern the line that raised must show where the mutant matched an error (a .T: study 36)


@dataclass
class Failure:
    """The first thing that went wrong on a probe, before diagnosis."""

    probe: str
    case: Any
    summary: str
    hint_id: str | None
    error: Any = None          # an ErrorInfo (see .harness) when the function raised
    fields: dict = field(default_factory=dict)
    evidence: str = ""
    hint: str = ""             # a property's own hint, given instead of its hint id's
    outcome: Any = None        # the call's Outcome (see .harness)
    expected: tuple = ()       # what the reference gave for the same inputs
    passed: list = field(default_factory=list)    # (case, expected) of the cases the function got right, in that run
    ran: list = field(default_factory=list)       # (case, Outcome, expected) of public cases it gave the right shapes


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


def student_seed(seed: int, file: str, content: bytes = b"") -> int:
    """The seed for one submission under ``--per-student``: ``seed`` mixed with the file's name and ``content`` (the
    bytes graded), so that a resubmission changed in any way draws new hidden inputs (what its report showed of them
    is no use).

    >>> student_seed(7, "ana.py") == student_seed(7, "/x/ana.py") != student_seed(7, "bo.py")
    True
    """
    name = file.replace("\\", "/").rsplit("/", 1)[-1]
    digest = hashlib.sha256(f"{seed}:{name}:".encode("utf-8", "surrogateescape") + content).digest()
    return int.from_bytes(digest[:4], "little")


def _fresh(value: object, rng: np.random.Generator, lengths: dict[int, int] | None = None) -> object:
    """Floats drawn afresh, with the mean and spread of the value's, each axis's length changed as ``lengths`` says
    (rows of weights then drawn as weights anew)."""
    if isinstance(value, np.ndarray) and value.dtype.kind == "f" and value.size:
        shape = tuple((lengths or {}).get(n, n) for n in value.shape)
        spread, draw = float(np.std(value)) or 1.0, rng.standard_normal(shape)
        if shape == value.shape:
            return _weights_kept(value, draw, draw * spread + float(np.mean(value)))
        if value.ndim and np.allclose(np.sum(value, axis=-1), 1.0) and np.all(value >= 0):     # rows of weights
            return np.exp(draw - np.logaddexp.reduce(draw, axis=-1, keepdims=True)).astype(value.dtype)
        return (draw * spread + float(np.mean(value))).astype(value.dtype)
    return value


def _resized(exercise: Exercise, model: Case, rng: np.random.Generator) -> tuple:
    """A random or batched case's arguments at new lengths: each axis length above 1 (the same length wherever it
    stands) drawn anew, from 2 to 12 or a multiple of the integer arguments that divide it (``num_heads``), the
    lengths distinct as they were, every input and the answer at most 1,024 values (what a reply may hold); the case's
    own lengths where 20 draws found none. A table by shape (index maps, a polynomial's terms: red team 76) meets
    shapes it lacks."""
    floats = [a for a in model.args if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
    steps = {n: math.lcm(*(h for h in model.args if type(h) is int and h > 1 and n % h == 0))
             for n in sorted({n for a in floats for n in a.shape if n > 1})}
    for _ in range(20):
        lengths = {n: k * int(rng.integers(2 if k == 1 else 1, max(2, 12 // k) + 1)) for n, k in steps.items()}
        args = tuple(_fresh(a, rng, lengths) for a in model.args)
        answer = exercise.reference(*args)
        sizes = [np.size(a) for a in args + (answer if isinstance(answer, tuple) else (answer,))]
        if len(set(lengths.values())) == len(lengths) and max(sizes[:len(args)]) <= 1024 >= sum(sizes[len(args):]):
            return args
    return tuple(_fresh(a, rng) for a in model.args)


def _nudged(value: object, rng: np.random.Generator) -> object:
    """Floats scaled by about one per cent each, as signs, zeros, infinities and rows of weights stay: a special
    case's kind, with no recorded answer."""
    if not (isinstance(value, np.ndarray) and value.dtype.kind == "f" and value.ndim and value.size):
        return value
    draw = rng.standard_normal(value.shape)
    return _weights_kept(value, draw, value * np.exp(0.01 * draw))


def _weights_kept(value: np.ndarray, draw: np.ndarray, moved: np.ndarray) -> np.ndarray:
    """``moved``, but a row of weights (non-negative, summing to 1) stays weights: noise there failed honest code
    (log(w + 1e-12) of a negative weight), and one per cent hid a recorded answer (the softmax Jacobian's at
    (0.5, 0, 0.5)). Weights below 1e-3 (zeros too) stay, or an entropy that drops p < 1e-6 passed on some seeds; the
    others keep their sum and move apart by e^0.3 at least (the draws ranked and spread), or a recorded answer passed
    where two draws nearly agreed."""
    if not value.ndim:
        return moved.astype(value.dtype)
    with np.errstate(invalid="ignore", divide="ignore"):
        big = value >= 1e-3
        spread = np.where(big, value * np.exp(draw + 0.3 * np.argsort(np.argsort(draw, axis=-1), axis=-1)), 0.0)
        spread *= np.sum(np.where(big, value, 0.0), axis=-1, keepdims=True) / np.sum(spread, axis=-1, keepdims=True)
        weights = np.isclose(np.sum(value, axis=-1, keepdims=True), 1.0) & np.all(value >= 0, axis=-1, keepdims=True)
        return np.where(weights, np.where(big, spread, value), moved).astype(value.dtype)


def _moved(value: object, shift: int, change: Callable, rng: np.random.Generator) -> object:
    """An integer (a size, a length) moved by ``shift`` where one is given, unless it is 0 or 1 (special cases too);
    any other value ``change``d."""
    if shift and (type(value) is int or isinstance(value, np.ndarray) and value.dtype.kind in "iu"):
        return value + shift * (value > 1)
    return change(value, rng)


def hidden_cases(exercise: Exercise, seed: int | None) -> list[Case]:
    """One case like each public case, drawn from ``seed`` ([] for no seed).

    The floats of every random and batched case are drawn afresh, at new lengths (:func:`_resized`): a rank, a dtype
    or a size 1 that no hidden case had could be tabled. The other cases' floats are nudged (:func:`_nudged`). A case
    with no floats has its integers moved by one draw (:func:`_moved`).

    >>> from attention_edu.checkers import EXERCISES
    >>> a, b = hidden_cases(EXERCISES["softmax"], 1), hidden_cases(EXERCISES["softmax"], 2)
    >>> len(a), {c.probe for c in a}, a[0].args[0].shape != b[0].args[0].shape, a[0].args[0].shape
    (11, {'hidden'}, True, (9, 10))
    >>> # from the public (1, 4), where m = 1 stays, (7, 9), and the small cases (4,), (3, 5) and (4, 2)
    >>> [c.args for c in hidden_cases(EXERCISES["causal_mask"], 1)][3:]
    [(1, 27), (35, 37), (36,), (27, 29), (35, 33)]
    """
    if seed is None:
        return []
    public = exercise.cases()
    redrawn = [c for c in public if c.probe in ("random", "batched")] or public
    nudged = [c for c in public if c.probe not in ("random", "batched")]
    rng = np.random.default_rng([seed, int.from_bytes(exercise.name.encode()[:8], "little")])
    cases = []
    for model, change in [(c, _fresh) for c in redrawn] + [(c, _nudged) for c in nudged]:
        shift = 0 if model.float_dtypes else int(rng.integers(1, 33))
        redraw = change is _fresh and not shift          # the random and batched cases' floats, at new lengths
        args = _resized(exercise, model, rng) if redraw else tuple(_moved(a, shift, change, rng) for a in model.args)
        if any(a is not b for a, b in zip(args, model.args)):
            cases.append(Case("hidden", f"hidden case {len(cases) + 1}", args, model.names, twin=model.title))
    return cases
