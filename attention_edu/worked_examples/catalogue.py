"""The catalogue's machinery: checks, examples, and the registry of builders.

Each chapter module registers one builder per worked example with
:func:`register`. A builder receives an :class:`Builder`, records the
inputs, computes with the library, and compares every printed value through
:meth:`Builder.value` (which reads the printed text with
:mod:`.printed`). The finished :class:`Example` derives its status from the
checks; nothing types a status by hand.
"""

from __future__ import annotations

import difflib
import functools
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable

from ..backend import host_numpy as np
from ..steps import Steps
from .printed import mismatches, parse_printed, parse_shape
from .render import jsonable, render_example

__all__ = ["Check", "Example", "Builder", "register", "ids", "get", "entries", "INVENTORY"]

#: The 39 ids of the chapters' inventory, in its order (extras follow them in ids()).
INVENTORY = (
    "fund.seq2seq-memory", "fund.attention-matrix-memory", "fund.translation-distributions",
    "fund.bahdanau-flops", "fund.bahdanau-memory", "fund.bahdanau-params", "fund.bahdanau-example",
    "fund.scaling-variance", "fund.softmax-saturation", "fund.scaling-gradients", "fund.sdpa-flops",
    "fund.arithmetic-intensity", "fund.sdpa-example", "fund.qkv-flops", "fund.qkv-example",
    "fund.attention-matrix-example", "fund.bert-attention-memory", "fund.causal-mask",
    "fund.exercise-1", "fund.exercise-2", "fund.exercise-3", "fund.exercise-4",
    "dot.similarity", "dot.cat-sat-mat", "dot.soft-lookup", "dot.attention-pattern", "dot.complexity",
    "dot.exercise-1", "dot.exercise-2", "dot.exercise-3", "dot.exercise-4", "dot.exercise-5",
    "matrix.flow", "matrix.exercise",
    "vector.shapes", "vector.masks", "vector.loops-vs-matmul",
    "sheet.example-5x3", "sheet.memory",
)

#: Check kinds. "printed": a printed number against our computation.
#: "shape": a printed shape against the computed array's shape.
#: "given": a property of numbers the chapter gives with nothing to compute them from.
#: "answer": a property of our computed answer where the chapter prints none.
KINDS = ("printed", "shape", "given", "answer")


@dataclass(frozen=True)
class Check:
    """One comparison: ``printed`` text against ``computed``; ``note`` says why it fails."""

    name: str
    printed: str
    computed: Any
    ok: bool
    note: str = ""
    kind: str = "printed"
    byte_base: int | None = None  # what KB/MB mean in ``printed``: 1000 or 1024 (None: no bytes)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "printed": self.printed, "computed": jsonable(self.computed),
                "ok": self.ok, "note": self.note, "kind": self.kind, "byte_base": self.byte_base}


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

    Read-only. ``status`` is derived: "erratum" if any check fails;
    otherwise "reproduced" when printed values were compared and every
    number given is computable, else "illustrative".
    """

    __slots__ = ("id", "title", "source", "_inputs", "_printed", "_computed", "checks",
                 "steps", "walkthrough", "notes")

    def __init__(self, id: str, title: str, source: str, inputs: dict, printed: dict,
                 computed: dict, checks: tuple[Check, ...], steps: Steps | None,
                 walkthrough: tuple[str, ...], notes: tuple[str, ...]):
        values = dict(id=id, title=title, source=source, checks=tuple(checks), steps=steps,
                      walkthrough=tuple(walkthrough), notes=tuple(notes),
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
        if any(not c.ok for c in self.checks):
            return "erratum"
        compared = any(c.kind in ("printed", "shape") for c in self.checks)
        given = any(c.kind == "given" for c in self.checks)
        return "reproduced" if compared and not given else "illustrative"

    @property
    def errata(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if not c.ok)

    def show(self) -> str:
        """The example step by step, with every shape, then the checks."""
        return render_example(self)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "source": self.source, "status": self.status,
                "checks": [c.to_dict() for c in self.checks], "printed": dict(self._printed),
                "inputs": jsonable(self._inputs), "computed": jsonable(self._computed),
                "notes": list(self.notes)}

    def __repr__(self) -> str:
        return f"<Example {self.id} ({self.status}): {self.title}>"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # IPython display
        printer.text(self.show())


class Builder:
    """What a builder function fills in: inputs, computed values, checks, walkthrough."""

    def __init__(self) -> None:
        self.inputs: dict[str, Any] = {}
        self.computed: dict[str, Any] = {}
        self.printed: dict[str, str] = {}
        self.checks: list[Check] = []
        self.walkthrough: list[str] = []
        self.notes: list[str] = []
        self.steps: Steps | None = None

    def say(self, *lines: str) -> None:
        """Add lines to the step-by-step walkthrough."""
        self.walkthrough.extend(lines)

    def note(self, text: str) -> None:
        """A remark about the entry (conventions, what cannot be checked)."""
        self.notes.append(text)

    def _add(self, check: Check) -> Check:
        if check.kind not in KINDS:
            raise ValueError(f"Builder: check kind must be one of {KINDS}, got {check.kind!r}")
        if any(c.name == check.name for c in self.checks):
            raise ValueError(f"Builder: check {check.name!r} recorded twice")
        self.checks.append(check)
        return check

    def value(self, name: str, printed: str, computed: Any, cause: str = "",
              byte_base: int | None = None, convention: str = "") -> Check:
        """Compare a printed number (or array) with ``computed`` at the printed precision.

        ``cause`` explains a mismatch (kept only if it occurs); ``convention``
        records how the printed text was read (e.g. "KB = 1000 bytes here").
        """
        self.printed[name] = printed
        self.computed.setdefault(name, computed)
        reading = parse_printed(printed, byte_base)
        wrong = mismatches(reading, computed)
        if wrong:
            detail = "; ".join(wrong[:4]) + ("; ..." if len(wrong) > 4 else "")
            if np.ndim(reading.value) == 0:  # printed and computed already say it all
                note = cause or f"no cause found ({detail})"
            else:
                note = f"{cause} ({detail})" if cause else f"no cause found ({detail})"
        else:
            note = convention
        return self._add(Check(name, printed, computed, not wrong, note, "printed", byte_base))

    def shape(self, name: str, printed: str, computed_shape: tuple[int, ...],
              bindings: dict[str, int] | None = None, cause: str = "") -> Check:
        """Compare a printed shape ("10 × 128", "(B, H, L, L)") with a computed one."""
        self.printed[name] = printed
        want = parse_shape(printed, bindings)
        got = tuple(int(d) for d in computed_shape)
        note = "" if got == want else (cause or f"printed {want}, computed {got}")
        bound = f" with {', '.join(f'{k}={v}' for k, v in (bindings or {}).items())}" if bindings else ""
        return self._add(Check(name, printed, got, got == want, note or f"read{bound}", "shape"))

    def given(self, name: str, printed: str, computed: Any, ok: bool, note: str) -> Check:
        """A property of numbers the chapter gives without any way to compute them."""
        self.printed[name] = printed
        return self._add(Check(name, printed, computed, bool(ok), note, "given"))

    def answer(self, name: str, claim: str, computed: Any, ok: bool, note: str = "") -> Check:
        """A property of our own computed answer (the chapter prints no value here)."""
        return self._add(Check(name, claim, computed, bool(ok), note, "answer"))


@dataclass(frozen=True)
class _Spec:
    id: str
    title: str
    source: str
    build: Callable[[Builder], None]


_REGISTRY: dict[str, _Spec] = {}


def register(id: str, title: str, source: str) -> Callable:
    """Decorator: register ``build(ex: Builder) -> None`` as the builder of ``id``."""
    def decorate(build: Callable[[Builder], None]) -> Callable[[Builder], None]:
        if id in _REGISTRY:
            raise ValueError(f"register: worked example {id!r} registered twice")
        _REGISTRY[id] = _Spec(id, title, source, build)
        return build
    return decorate


def ids() -> tuple[str, ...]:
    """Every id: the inventory's 39 in its order, then any extras."""
    missing = [i for i in INVENTORY if i not in _REGISTRY]
    if missing:
        raise RuntimeError(f"worked_examples: inventory ids without a builder: {missing}")
    return INVENTORY + tuple(i for i in _REGISTRY if i not in INVENTORY)


@functools.lru_cache(maxsize=None)
def _built(id: str) -> Example:
    spec = _REGISTRY[id]
    ex = Builder()
    spec.build(ex)
    if not ex.checks:
        raise RuntimeError(f"worked example {id!r} checks nothing")
    return Example(spec.id, spec.title, spec.source, ex.inputs, ex.printed, ex.computed,
                   tuple(ex.checks), ex.steps, tuple(ex.walkthrough), tuple(ex.notes))


def get(id: str) -> Example:
    """The worked example ``id`` (KeyError naming close matches if unknown).

    Examples
    --------
    >>> get("fund.bahdanau-params").status
    'reproduced'
    """
    if id not in _REGISTRY:
        close = difflib.get_close_matches(str(id), list(_REGISTRY), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise KeyError(f"no worked example {id!r}{hint} (ids() lists all {len(_REGISTRY)})")
    return _built(id)


def entries() -> tuple[Example, ...]:
    """Every example, in the order of :func:`ids`."""
    return tuple(get(i) for i in ids())
