"""Embedding: each token id picks one row of a table, E[ids]; its gradient adds rows back.

The backward scatters the output gradient into the rows that were read:
dE = onehot(ids)ᵀ dY, written as one matrix product so that it runs on any
array backend (no in-place ``add.at``) and a token read twice gets both
contributions.
"""

from __future__ import annotations

from typing import Any

from ..backend import get_xp

__all__ = ["embed", "embed_backward", "one_hot"]


def one_hot(ids: Any, size: int, dtype: Any) -> Any:
    """``ids`` (...) as one-hot rows (..., size) in ``dtype``.

    Examples
    --------
    >>> import numpy as np
    >>> one_hot(np.array([2, 0]), 3, np.float64)
    array([[0., 0., 1.],
           [1., 0., 0.]])
    """
    xp = get_xp(ids)
    classes = xp.arange(size, device=getattr(ids, "device", None))  # (size,)
    return xp.astype(xp.expand_dims(ids, axis=-1) == classes, dtype)  # (..., size)


def embed(table: Any, ids: Any) -> Any:
    """Rows of ``table`` (V, d) picked by integer ``ids`` (B, T): (B, T, d).

    Examples
    --------
    >>> import numpy as np
    >>> embed(np.array([[0.0, 1.0], [2.0, 3.0]]), np.array([[1, 1, 0]]))
    array([[[2., 3.],
            [2., 3.],
            [0., 1.]]])
    """
    xp = get_xp(table, ids)
    flat = xp.reshape(ids, (-1,))  # (B T,)
    rows = xp.take(table, flat, axis=0)  # (B T, d)
    return xp.reshape(rows, tuple(ids.shape) + (table.shape[-1],))  # (B, T, d)


def embed_backward(table: Any, ids: Any, d_out: Any) -> Any:
    """Gradient of :func:`embed` at ``table``: dE = onehot(ids)ᵀ dY, shape (V, d).

    Examples
    --------
    >>> import numpy as np
    >>> embed_backward(np.zeros((3, 1)), np.array([[1, 1, 0]]), np.ones((1, 3, 1)))
    array([[1.],
           [2.],
           [0.]])
    """
    xp = get_xp(table, ids, d_out)
    d = table.shape[-1]
    hot = xp.reshape(one_hot(ids, table.shape[0], d_out.dtype), (-1, table.shape[0]))  # (B T, V)
    return xp.matrix_transpose(hot) @ xp.reshape(d_out, (-1, d))  # (V, d)
