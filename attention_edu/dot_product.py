"""Dot-product and scaled dot-product attention.

"Section 5.2: Dot-Product Attention" derives softmax(Q Kᵀ) V;
"Attention Mechanisms: Fundamentals", section "Scaled Dot-Product Attention",
divides the scores by √d_k; "The matrix formulation of scaled dot-product
attention" walks through the same four steps with their shapes.
"""

from __future__ import annotations

import math
from typing import Any

from .backend import get_xp
from .shapes import Dims
from .steps import Steps
from .weighting import weigh

__all__ = [
    "dot_product_attention", "dot_product_attention_steps",
    "scaled_dot_product_attention", "scaled_dot_product_attention_steps",
]


def _check_qkv(func: str, Q: Any, K: Any, V: Any, mask: Any | None) -> Dims:
    dims = Dims(func)
    dims.array("Q", Q, "... m d_k")
    dims.array("K", K, "... n d_k")
    dims.array("V", V, "... n d_v")
    dims.mask("mask", mask, "... m n")
    return dims


def dot_product_attention_steps(Q: Any, K: Any, V: Any, mask: Any | None = None) -> Steps:
    """Unscaled dot-product attention, every intermediate kept (see :func:`dot_product_attention`)."""
    _check_qkv("dot_product_attention", Q, K, V, mask)
    xp = get_xp(Q, K, V, mask)
    scores = Q @ xp.matrix_transpose(K)  # (..., m, n)
    return Steps("dot_product_attention", [("scores", "Q Kᵀ", scores)] + weigh(scores, V, mask))


def dot_product_attention(Q: Any, K: Any, V: Any, mask: Any | None = None) -> tuple[Any, Any]:
    """Dot-product attention without scaling: softmax(Q Kᵀ) V.

    Parameters
    ----------
    Q : array (..., m, d_k)
        Queries.
    K : array (..., n, d_k)
        Keys.
    V : array (..., n, d_v)
        Values.
    mask : bool array broadcastable to (..., m, n), optional
        True where query i may attend to key j.

    Returns
    -------
    output : array (..., m, d_v)
    weights : array (..., m, n)
        Each row sums to 1 (0 for a fully masked row).

    Notes
    -----
    "Section 5.2: Dot-Product Attention", section "The Complete Formula" and
    its worked example "cat sat mat". Use :func:`dot_product_attention_steps`
    to see the scores and weights.

    Examples
    --------
    "cat sat mat" with identity projections, so queries, keys and values all equal X:

    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> output, weights = dot_product_attention(X, X, X)
    >>> np.round(weights[0], 2)
    array([0.42, 0.16, 0.42])
    """
    steps = dot_product_attention_steps(Q, K, V, mask)
    return steps.output, steps.weights


def scaled_items(Q: Any, K: Any, V: Any, mask: Any | None, d_k: int) -> list[tuple[str, str, Any]]:
    """The steps of scaled dot-product attention on already-checked arguments."""
    xp = get_xp(Q, K, V, mask)
    scores = Q @ xp.matrix_transpose(K)  # (..., m, n)
    scaled = scores / math.sqrt(d_k)  # (..., m, n); math.sqrt keeps float32 float32
    return [("scores", "Q Kᵀ", scores), ("scaled_scores", "Q Kᵀ / √d_k", scaled)] + weigh(scaled, V, mask)


def scaled_dot_product_attention_steps(Q: Any, K: Any, V: Any, mask: Any | None = None) -> Steps:
    """Scaled dot-product attention, every intermediate kept (see :func:`scaled_dot_product_attention`).

    Examples
    --------
    >>> import numpy as np
    >>> steps = scaled_dot_product_attention_steps(np.ones((2, 4)), np.ones((3, 4)), np.ones((3, 5)))
    >>> steps.names
    ('scores', 'scaled_scores', 'weights', 'output')
    """
    dims = _check_qkv("scaled_dot_product_attention", Q, K, V, mask)
    return Steps("scaled_dot_product_attention", scaled_items(Q, K, V, mask, dims["d_k"]))


def scaled_dot_product_attention(Q: Any, K: Any, V: Any, mask: Any | None = None) -> tuple[Any, Any]:
    """Scaled dot-product attention: softmax(Q Kᵀ / √d_k) V.

    Dividing by √d_k keeps the scores' variance near 1 whatever d_k is, so
    the softmax does not saturate.

    Parameters
    ----------
    Q : array (..., m, d_k)
        Queries; leading batch dimensions broadcast against K, V and mask.
    K : array (..., n, d_k)
        Keys.
    V : array (..., n, d_v)
        Values.
    mask : bool array broadcastable to (..., m, n), optional
        True where query i may attend to key j; applied before the softmax.

    Returns
    -------
    output : array (..., m, d_v)
    weights : array (..., m, n)

    Notes
    -----
    "Attention Mechanisms: Fundamentals", section "Scaled Dot-Product
    Attention", Steps 1-4 and its worked example (one query, three keys).

    Examples
    --------
    The chapter's example: q = (1.0, 0.5, −0.3, 0.8) against three keys.

    >>> import numpy as np
    >>> q = np.array([[1.0, 0.5, -0.3, 0.8]])
    >>> K = np.array([[0.8, 0.2, -0.1, 0.5], [0.3, 0.7, 0.4, -0.2], [-0.5, 0.1, 0.9, 0.6]])
    >>> V = np.array([[0.5, 0.8, -0.2, 0.6, 0.3], [0.2, -0.4, 0.7, 0.1, 0.9],
    ...               [-0.3, 0.5, 0.4, -0.6, 0.2]])
    >>> output, weights = scaled_dot_product_attention(q, K, V)
    >>> np.round(weights, 3)
    array([[0.482, 0.298, 0.22 ]])
    >>> output.shape
    (1, 5)
    """
    steps = scaled_dot_product_attention_steps(Q, K, V, mask)
    return steps.output, steps.weights
