"""The transformer's MLP block: two dense layers with a ReLU between, y = relu(x W₁ᵀ + b₁) W₂ᵀ + b₂.

Applied to every position on its own (the "position-wise feed-forward"
network), usually 4× wider in the middle than at its ends. The backward runs
the two dense layers' backwards with the ReLU's gate between them: a hidden
unit that was not positive passes no gradient.
"""

from __future__ import annotations

from typing import Any

from ..backend import get_xp
from .linear import linear, linear_backward

__all__ = ["mlp", "mlp_backward"]


def mlp(x: Any, W1: Any, b1: Any, W2: Any, b2: Any) -> tuple[Any, dict[str, Any]]:
    """relu(x W₁ᵀ + b₁) W₂ᵀ + b₂: x (..., d), W₁ (h, d), b₁ (h,), W₂ (d, h), b₂ (d,) → (..., d).

    Returns ``(y, cache)``.

    Examples
    --------
    >>> import numpy as np
    >>> y, _ = mlp(np.array([[1.0, -1.0]]), np.eye(2), np.zeros(2), np.ones((1, 2)), np.zeros(1))
    >>> y                                         # relu([1, -1]) = [1, 0], summed
    array([[1.]])
    """
    xp = get_xp(x, W1, b1, W2, b2)
    pre = linear(x, W1, b1)  # (..., h)
    hidden = xp.maximum(pre, xp.zeros_like(pre))  # (..., h): ReLU
    return linear(hidden, W2, b2), {"x": x, "pre": pre, "hidden": hidden, "W1": W1, "W2": W2}


def mlp_backward(cache: dict[str, Any], d_y: Any) -> dict[str, Any]:
    """``{"x", "W1", "b1", "W2", "b2"}`` gradients of :func:`mlp` from its cache.

    Examples
    --------
    >>> import numpy as np
    >>> _, cache = mlp(np.array([[1.0, -1.0]]), np.eye(2), np.zeros(2), np.ones((1, 2)), np.zeros(1))
    >>> mlp_backward(cache, np.ones((1, 1)))["x"]   # only the positive unit passes it on
    array([[1., 0.]])
    """
    xp = get_xp(d_y)
    second = linear_backward(cache["hidden"], cache["W2"], d_y)  # d_hidden (..., h)
    d_pre = xp.where(cache["pre"] > 0, second["x"], xp.zeros_like(second["x"]))  # (..., h)
    first = linear_backward(cache["x"], cache["W1"], d_pre)  # d_x (..., d)
    return {"x": first["x"], "W1": first["W"], "b1": first["b"], "W2": second["W"], "b2": second["b"]}
