"""The checkers' records: probes, input cases, properties, exercises, mistakes, failures.

Plain data, no behaviour: the other modules of the package import these and
nothing here imports them back. The result a student sees is
:class:`~.result.CheckResult`; what one call of the student's function did is
:class:`~.harness.Outcome`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ..backend import host_numpy as np

__all__ = ["PROBES", "Case", "Property", "Exercise", "Mistake", "Failure"]

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
