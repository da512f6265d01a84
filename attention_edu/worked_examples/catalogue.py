"""The registry of worked examples: the inventory, register(), ids(), get(), entries().

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
from typing import Callable

from .builder import Builder
from .example import Check, Example

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
    ex = _run(spec.build)
    if not ex.checks:
        raise RuntimeError(f"worked example {id!r} checks nothing")
    return Example(spec.id, spec.title, spec.source, ex.inputs, ex.printed, ex.computed,
                   tuple(ex.checks), ex.steps, tuple(ex.walkthrough), tuple(ex.notes),
                   functools.partial(_compute, spec.build))


def _run(build: Callable[[Builder], None]) -> Builder:
    """A fresh run of a builder: its inputs, printed and computed values, checks."""
    ex = Builder()
    build(ex)
    return ex


def _compute(build: Callable[[Builder], None]) -> dict:
    """The values a builder computes, from a fresh run."""
    return dict(_run(build).computed)


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
