"""From scores to output: mask, softmax over the keys, weighted sum of the values — and back.

Every mechanism of the chapters ends with these steps; only the scores differ
("Attention Mechanisms: Fundamentals", Bahdanau Steps 2-3 and scaled
dot-product Steps 3-4; "The matrix formulation of scaled dot-product
attention", the softmax and weighted-sum steps). The functions here are
kernels: they trust arguments already checked by a public function.
"""

from __future__ import annotations

import math
from typing import Any

from .softmax import stable_softmax

__all__ = ["weigh", "weigh_backward", "sum_to_shape", "overflow_error"]


def overflow_error(func: str, dtype: Any) -> ValueError:
    """The error for scores that overflow ``dtype``: what to do about it (float64 only where it is not)."""
    wider = "" if "float64" in str(dtype) else " or use float64"
    return ValueError(f"{func}: the scores overflow (they contain inf or NaN): the inputs are too large for "
                      f"{dtype}; scale them down{wider}")


def weigh(xp: Any, func: str, scores: Any, values: Any, mask: Any | None) -> tuple[Any, Any, Any]:
    """``(masked_scores, weights, output)`` from scores ``(..., m, n)`` and values ``(..., n, d_v)``.

    ``masked_scores`` is None when ``mask`` is None. Scores that overflowed to
    +inf or NaN (inputs near the dtype's limit) raise a ValueError naming ``func``.

    Examples
    --------
    >>> import numpy as np
    >>> masked, weights, output = weigh(np, "demo", np.zeros((1, 2)), np.eye(2), None)
    >>> masked is None, weights, output
    (True, array([[0.5, 0.5]]), array([[0.5, 0.5]]))
    """
    if not bool(xp.all(xp.isfinite(scores))):  # one host check per call, before any -inf is added
        raise overflow_error(func, scores.dtype)
    masked_scores = None if mask is None else xp.where(mask, scores, xp.full_like(scores, -math.inf))
    weights = stable_softmax(xp, scores if mask is None else masked_scores)  # (..., m, n)
    output = weights @ values  # (..., m, d_v)
    return masked_scores, weights, output


def weigh_backward(xp: Any, weights: Any, values: Any, mask: Any | None, d_output: Any,
                   d_weights: Any | None) -> tuple[Any, Any]:
    """``(d_scores, d_values)`` of :func:`weigh`, in the broadcast batch shape.

    With W the weights and G = d_output: dW = G Vᵀ (+ the gradient arriving at
    the weights), d_values = Wᵀ G, and through the softmax
    d_scores = W ⊙ (dW − rowsum(dW ⊙ W)). Masked entries have W = 0, so their
    d_scores are exactly 0; the mask's −inf passes no gradient either.

    Examples
    --------
    Softmax ignores a constant added to a row, so each row of d_scores sums to 0:

    >>> import numpy as np
    >>> W, V, G = np.array([[0.2, 0.8]]), np.array([[1.0], [3.0]]), np.array([[1.0]])
    >>> d_scores, d_values = weigh_backward(np, W, V, None, G, None)
    >>> d_scores, d_values
    (array([[-0.32,  0.32]]), array([[0.2],
           [0.8]]))
    """
    d_w = d_output @ xp.matrix_transpose(values)  # (..., m, n)
    if d_weights is not None:
        d_w = d_w + d_weights
    d_values = xp.matrix_transpose(weights) @ d_output  # (..., n, d_v)
    row_dot = xp.sum(d_w * weights, axis=-1, keepdims=True)  # (..., m, 1)
    d_scores = weights * (d_w - row_dot)  # (..., m, n)
    if mask is not None:
        d_scores = xp.where(mask, d_scores, xp.zeros_like(d_scores))
    return d_scores, d_values


def sum_to_shape(xp: Any, grad: Any, shape: tuple[int, ...]) -> Any:
    """Sum ``grad`` over the axes that broadcasting added or stretched, giving ``shape``.

    A weight matrix shared by every batch entry gets the sum of their gradients.

    Examples
    --------
    >>> import numpy as np
    >>> sum_to_shape(np, np.ones((4, 2, 3)), (1, 3)).tolist()
    [[8.0, 8.0, 8.0]]
    """
    shape = tuple(shape)
    extra = grad.ndim - len(shape)
    if extra:
        grad = xp.sum(grad, axis=tuple(range(extra)))  # drop the added leading axes
    stretched = tuple(i for i, size in enumerate(shape) if size == 1 and grad.shape[i] != 1)
    if stretched:
        grad = xp.sum(grad, axis=stretched, keepdims=True)
    return grad
