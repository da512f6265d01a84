"""The intermediates of one attention call: what a reader prints, what a backward pass reads.

Every mechanism has a ``..._steps`` twin that returns a :class:`Steps`; the
plain call returns ``(output, weights)`` taken from it. A :class:`Steps` is
read-only: its steps are set once, in the order they were computed, from the
named locals of the mechanism's kernel. It also keeps the call's inputs
(``steps.inputs``), so it is the forward cache: each ``..._backward`` function
takes it with the gradient arriving at the output.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from .backend import format_array, get_xp, read_only
from .shapes import Dims

__all__ = ["Steps", "check_backward_call", "results"]


class Steps:
    """Named intermediate arrays of one call, printed as a step-by-step table.

    Access a step as an attribute (``steps.weights``) or by name
    (``steps["weights"]``); iterating gives the names, as a mapping's keys.
    ``print(steps)`` shows each step's equation and shape, then its values when
    the arrays are small. NumPy steps come back as read-only views, so a
    backward pass always reads what the forward computed.

    Parameters
    ----------
    mechanism : str
        Name of the function that produced the steps.
    steps : mapping of name -> (equation, array), or sequence of (name, equation, array)
        In the order computed. Names must be valid identifiers; a step whose
        array is None (e.g. ``masked_scores`` when there is no mask) is left out.
    inputs : mapping of name -> value, optional
        The arguments of the call, kept for the backward pass (``steps.inputs``).

    Examples
    --------
    >>> import numpy as np
    >>> s = Steps("demo", {"scores": ("q·k", np.array([1.0, 2.0])), "masked": ("", None)})
    >>> s.scores
    array([1., 2.])
    >>> s.names, s.shapes
    (('scores',), {'scores': (2,)})
    >>> s.scores[0] = 5.0
    Traceback (most recent call last):
    ...
    ValueError: assignment destination is read-only
    """

    __slots__ = ("mechanism", "inputs", "_items")

    def __init__(self, mechanism: str, steps: Mapping[str, tuple[str, Any]] | list[tuple[str, str, Any]],
                 inputs: Mapping[str, Any] | None = None):
        triples = [(name, *pair) for name, pair in steps.items()] if isinstance(steps, Mapping) else steps
        object.__setattr__(self, "mechanism", mechanism)
        object.__setattr__(self, "inputs", MappingProxyType(dict(inputs or {})))
        object.__setattr__(self, "_items", tuple((k, e, a) for k, e, a in triples if a is not None))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Steps are read-only: recompute instead of editing them")

    def __getattr__(self, name: str) -> Any:
        for key, _, array in object.__getattribute__(self, "_items"):
            if key == name:
                return read_only(array)
        raise AttributeError(f"{self.mechanism} has no step {name!r}; steps are {', '.join(self.names)}")

    def __reduce__(self) -> tuple:  # copy and pickle rebuild through __init__, not setattr
        return (Steps, (self.mechanism, list(self._items), dict(self.inputs)))

    def __getitem__(self, name: str) -> Any:
        if not isinstance(name, str):       # steps[0] read "attribute name must be string" (audit 73)
            raise TypeError(f"{self.mechanism}: steps are found by name, not {name!r}; "
                            f"names are {', '.join(self.names)}")
        return getattr(self, name)

    def __contains__(self, name: str) -> bool:
        return name in self.names

    def __iter__(self) -> Any:          # as a mapping's: the names, so that dict(steps) and for name in steps work
        return iter(self.names)

    def __len__(self) -> int:
        return len(self._items)

    def keys(self) -> tuple[str, ...]:
        return self.names

    @property
    def names(self) -> tuple[str, ...]:
        """Step names in the order computed."""
        return tuple(key for key, _, _ in self._items)

    @property
    def shapes(self) -> dict[str, tuple[int, ...]]:
        """Each step's shape."""
        return {key: tuple(array.shape) for key, _, array in self._items}

    def table(self, values: bool = True, precision: int = 3) -> str:
        """The step table as text; ``values=False`` lists equations and shapes only."""
        name_w = max(len(k) for k, _, _ in self._items)
        eq_w = max(len(e) for _, e, _ in self._items)
        lines = [f"{self.mechanism}, step by step"]
        for i, (key, equation, array) in enumerate(self._items, 1):
            lines.append(f"  {i}. {key:<{name_w}}  {equation:<{eq_w}}  shape {tuple(array.shape)}")
        if values:
            for i, (key, _, array) in enumerate(self._items, 1):
                body = format_array(array, precision).replace("\n", "\n     ")
                lines.append(f"\n  {i}. {key} =\n     {body}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.table()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # IPython display
        printer.text(self.table())


def results(steps: Steps, *names: str) -> tuple[Any, ...]:
    """The arrays themselves (writable) of the named steps, for the plain call that owns them."""
    arrays = {key: array for key, _, array in steps._items}
    return tuple(arrays[name] for name in names)


def check_backward_call(func: str, steps: Any, mechanism: str, upstream: Mapping[str, tuple[Any, str]]) -> Any:
    """The door of every backward pass: the steps come from ``mechanism`` and each gradient fits.

    ``upstream`` maps an argument name (``"d_output"``) to ``(gradient, step name)``:
    the gradient must have that step's shape, library, device and dtype (None is
    allowed for all but the first). Returns the namespace ``xp``.

    Examples
    --------
    >>> import numpy as np
    >>> s = Steps("demo", {"output": ("", np.zeros((2, 3)))})
    >>> check_backward_call("demo_backward", s, "demo", {"d_output": (np.ones((3, 2)), "output")})
    Traceback (most recent call last):
    ...
    attention_edu.shapes.ShapeError: demo_backward: d_output has shape (3, 2) but must have the shape of the forward's output, (2, 3)
    """
    if not isinstance(steps, Steps) or not steps.mechanism.startswith(mechanism):
        got = steps.mechanism if isinstance(steps, Steps) else type(steps).__name__
        raise TypeError(f"{func}: steps must be what {mechanism}_steps returned (the forward cache), got {got}")
    for position, (arg, (grad, step)) in enumerate(upstream.items()):
        if grad is None and position > 0:
            continue
        like, dims = steps[step], Dims(func)
        dims.array(step, like, "...", finite=False)  # binds library, device and dtype
        if hasattr(grad, "shape") and tuple(grad.shape) != tuple(like.shape):
            raise dims.error(f"{arg} has shape {tuple(grad.shape)} but must have the shape of the "
                             f"forward's {step}, {tuple(like.shape)}")
        dims.array(arg, grad, "...")
    return get_xp(*(grad for grad, _ in upstream.values()))
