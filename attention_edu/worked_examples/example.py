"""A worked example and its checks: read-only records with a derived status."""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable

from ..backend import host_numpy as np
from ..steps import Steps
from .render import jsonable, render_example

__all__ = ["Check", "Example", "KINDS", "SEVERITIES", "STATUSES"]

#: Check kinds. "printed": a printed number against our computation.
#: "shape": a printed shape against the computed array's shape.
#: "given": a property of numbers the chapter gives with nothing to compute them from.
#: "answer": a property of our computed answer where the chapter prints none.
KINDS = ("printed", "shape", "given", "answer")

#: Statuses of an example, in the order reports list them.
STATUSES = ("reproduced", "rounding", "erratum", "illustrative")


#: Severities of a check, least to most serious.
SEVERITIES = ("match", "rounding", "erratum")


@dataclass(frozen=True)
class Check:
    """One comparison: ``printed`` text against ``computed``; ``note`` says why it fails.

    ``ok`` is True when ``computed`` matches at the printed precision. A check
    that is not ok is a rounding slip when ``rounding`` names its causes (of
    :data:`~attention_edu.worked_examples.printed.ROUNDING_CAUSES`, found by
    comparison), else an erratum.
    """

    name: str
    printed: str
    computed: Any
    ok: bool
    note: str = ""
    kind: str = "printed"
    byte_base: int | None = None  # what KB/MB mean in ``printed``: 1000 or 1024 (None: no bytes)
    rounding: tuple[str, ...] = ()
    from_rounded: Any = None  # the value recomputed from the chapter's rounded intermediates

    @property
    def severity(self) -> str:
        """ "match", "rounding" (off only by rounding) or "erratum" (wrong beyond rounding)."""
        if self.ok:
            return "match"
        return "rounding" if self.rounding else "erratum"

    @property
    def cause(self) -> str | None:
        """Why a rounding slip is one ("last digit", ...); "beyond rounding" for an erratum."""
        return {"match": None, "rounding": ", ".join(self.rounding),
                "erratum": "beyond rounding"}[self.severity]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "printed": self.printed, "computed": jsonable(self.computed),
                "ok": self.ok, "severity": self.severity, "cause": self.cause, "note": self.note,
                "kind": self.kind, "byte_base": self.byte_base,
                "from_rounded": jsonable(self.from_rounded)}


def _frozen(value: Any) -> Any:
    """A read-only copy: arrays unwritable, dicts as mapping proxies, lists as tuples."""
    if isinstance(value, np.ndarray):
        value = value.copy()
        value.setflags(write=False)
    elif isinstance(value, dict):
        value = MappingProxyType({k: _frozen(v) for k, v in value.items()})
    elif isinstance(value, list):
        value = tuple(_frozen(v) for v in value)
    return value


class Example:
    """One worked example: inputs, printed values, computed values, checks and status.

    Read-only. ``status`` is derived: "erratum" if any check is wrong
    beyond rounding; otherwise "rounding" if any is off only by rounding;
    otherwise "reproduced" when printed values were compared and every
    number given is computable, else "illustrative".
    """

    __slots__ = ("id", "title", "source", "_inputs", "_printed", "_computed", "checks",
                 "steps", "walkthrough", "notes", "_compute")

    def __init__(self, id: str, title: str, source: str, inputs: dict, printed: dict,
                 computed: dict, checks: tuple[Check, ...], steps: Steps | None,
                 walkthrough: tuple[str, ...], notes: tuple[str, ...],
                 compute: Callable[[], dict] | None = None):
        values = dict(id=id, title=title, source=source, checks=tuple(checks), steps=steps,
                      walkthrough=tuple(walkthrough), notes=tuple(notes), _compute=compute,
                      _inputs={k: _frozen(v) for k, v in inputs.items()}, _printed=dict(printed),
                      _computed={k: _frozen(v) for k, v in computed.items()})
        for key, value in values.items():
            object.__setattr__(self, key, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Example is read-only; the catalogue rebuilds it from the chapter")

    inputs = property(lambda self: dict(self._inputs), doc="Inputs (host arrays, numbers).")
    printed = property(lambda self: dict(self._printed), doc="Printed values as printed (text).")
    computed = property(lambda self: dict(self._computed), doc="Values computed with the library.")

    @property
    def status(self) -> str:
        if self.errata:
            return "erratum"
        if self.rounding:
            return "rounding"
        compared = any(c.kind in ("printed", "shape") for c in self.checks)
        given = any(c.kind == "given" for c in self.checks)
        return "reproduced" if compared and not given else "illustrative"

    @property
    def status_reason(self) -> str:
        """One line saying why the status is what it is (derived, like the status)."""
        compared = [c for c in self.checks if c.kind in ("printed", "shape")]
        given = [c.name for c in self.checks if c.kind == "given"]
        if self.errata:
            return f"{len(self.errata)} of {len(self.checks)} checks wrong beyond rounding"
        if self.rounding:
            causes = sorted({cause for c in self.rounding for cause in c.rounding})
            return (f"{len(self.rounding)} of {len(self.checks)} checks off only by rounding "
                    f"({', '.join(causes)})")
        if self.status == "reproduced":
            return f"all {len(compared)} printed values reproduced"
        if given:
            return ("the text gives numbers with nothing to compute them from; checked what can be "
                    f"({', '.join(given)})")
        return "the text prints no values to compare; the checks test the computed answer"

    @property
    def errata(self) -> tuple[Check, ...]:
        """The checks whose printed value is wrong beyond rounding."""
        return tuple(c for c in self.checks if c.severity == "erratum")

    @property
    def rounding(self) -> tuple[Check, ...]:
        """The checks whose printed value is off only by rounding."""
        return tuple(c for c in self.checks if c.severity == "rounding")

    def compute(self) -> dict[str, Any]:
        """Compute the values again with the library: this entry's own computation, run afresh
        (its result equals :attr:`computed`).

        >>> from attention_edu.worked_examples import get
        >>> example = get("fund.bahdanau-params")
        >>> example.compute() == example.computed
        True
        """
        if self._compute is None:
            raise ValueError(f"worked example {self.id!r} was built without its computation")
        return {key: _frozen(value) for key, value in self._compute().items()}

    def show(self) -> str:
        """The example step by step, with every shape, then the checks."""
        return render_example(self)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "source": self.source, "status": self.status,
                "status_reason": self.status_reason, "checks": [c.to_dict() for c in self.checks], "printed": dict(self._printed),
                "inputs": jsonable(self._inputs), "computed": jsonable(self._computed),
                "notes": list(self.notes)}

    def __repr__(self) -> str:
        return f"<Example {self.id} ({self.status}): {self.title}>"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # IPython display
        printer.text(self.show())
