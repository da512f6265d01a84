"""A dense layer in row-vector form, y = x Wᵀ + b, and its backward.

W has PyTorch's (d_out, d_in) layout like the GRU's weights; x may carry any
leading axes (B, T, ...), and the weight gradients sum over them.
"""

from __future__ import annotations

from typing import Any

from ..backend import get_xp

__all__ = ["linear", "linear_backward"]


def linear(x: Any, W: Any, b: Any) -> Any:
    """y = x Wᵀ + b: x (..., d_in), W (d_out, d_in), b (d_out,) → (..., d_out).

    Examples
    --------
    >>> import numpy as np
    >>> linear(np.array([[1.0, 2.0]]), np.array([[1.0, 1.0], [0.0, 1.0], [2.0, 0.0]]), np.zeros(3))
    array([[3., 2., 2.]])
    """
    xp = get_xp(x, W, b)
    return x @ xp.matrix_transpose(W) + b  # (..., d_out)


def linear_backward(x: Any, W: Any, d_y: Any) -> dict[str, Any]:
    """``{"x": dY W, "W": Σ dYᵀ x, "b": Σ dY}`` for :func:`linear`, sums over the leading axes.

    Examples
    --------
    >>> import numpy as np
    >>> g = linear_backward(np.ones((2, 5, 3)), np.ones((4, 3)), np.ones((2, 5, 4)))
    >>> g["x"].shape, g["W"].shape, float(g["b"][0])
    ((2, 5, 3), (4, 3), 10.0)
    """
    xp = get_xp(x, W, d_y)
    d_in, d_out = x.shape[-1], d_y.shape[-1]
    rows_x = xp.reshape(x, (-1, d_in))  # (N, d_in): every leading position a row
    rows_d = xp.reshape(d_y, (-1, d_out))  # (N, d_out)
    return {"x": d_y @ W, "W": xp.matrix_transpose(rows_d) @ rows_x, "b": xp.sum(rows_d, axis=0)}
