"""The intermediates of one attention call, kept so a reader can print them.

Every mechanism has a ``..._steps`` twin that returns a :class:`Steps`; the
plain call returns ``(output, weights)`` taken from it. A :class:`Steps` is
read-only: its fields are set once, in the order they were computed.
"""

from __future__ import annotations

from typing import Any

from .backend import format_array

__all__ = ["Steps"]


class Steps:
    """Named intermediate arrays of one call, printed as a step-by-step table.

    Access a step as an attribute (``steps.weights``) or by name
    (``steps["weights"]``). ``print(steps)`` shows each step's equation and
    shape, then its values when the arrays are small.

    Parameters
    ----------
    mechanism : str
        Name of the function that produced the steps.
    items : sequence of (name, equation, array)
        In the order computed. Names must be valid identifiers.

    Examples
    --------
    >>> import numpy as np
    >>> s = Steps("demo", [("scores", "q·k", np.array([1.0, 2.0]))])
    >>> s.scores
    array([1., 2.])
    >>> s.names, s.shapes
    (('scores',), {'scores': (2,)})
    """

    __slots__ = ("mechanism", "_items")

    def __init__(self, mechanism: str, items: list[tuple[str, str, Any]]):
        object.__setattr__(self, "mechanism", mechanism)
        object.__setattr__(self, "_items", tuple(items))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Steps are read-only: recompute instead of editing them")

    def __getattr__(self, name: str) -> Any:
        for key, _, array in object.__getattribute__(self, "_items"):
            if key == name:
                return array
        raise AttributeError(f"{self.mechanism} has no step {name!r}; steps are {', '.join(self.names)}")

    def __reduce__(self) -> tuple:  # copy and pickle rebuild through __init__, not setattr
        return (Steps, (self.mechanism, list(self._items)))

    def __getitem__(self, name: str) -> Any:
        return getattr(self, name)

    def __contains__(self, name: str) -> bool:
        return name in self.names

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
