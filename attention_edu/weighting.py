"""From scores to output: mask, softmax over the keys, weighted sum of the values.

Every mechanism of the chapters ends with these steps; only the scores differ
("Attention Mechanisms: Fundamentals", Bahdanau Steps 2-3 and scaled
dot-product Steps 3-4; "The matrix formulation of scaled dot-product
attention", the softmax and weighted-sum steps).
"""

from __future__ import annotations

from typing import Any

from .masks import apply_mask
from .softmax import softmax

__all__ = ["weigh"]


def weigh(scores: Any, values: Any, mask: Any | None, values_name: str = "V",
          output_name: str = "output") -> list[tuple[str, str, Any]]:
    """Steps that turn scores ``(..., m, n)`` and values ``(..., n, d_v)`` into an output.

    Returns ``[("masked_scores", ...), ("weights", ...), (output_name, ...)]``
    (no masked step when ``mask`` is None). Arguments must already be checked.

    Examples
    --------
    >>> import numpy as np
    >>> [name for name, _, _ in weigh(np.zeros((1, 2)), np.ones((2, 3)), None)]
    ['weights', 'output']
    """
    items = []
    if mask is not None:
        scores = apply_mask(scores, mask)  # (..., m, n)
        items.append(("masked_scores", "scores where mask else −inf", scores))
    weights = softmax(scores, axis=-1)  # (..., m, n)
    output = weights @ values  # (..., m, d_v)
    items.append(("weights", "softmax over keys (last axis)", weights))
    items.append((output_name, f"weights {values_name}", output))
    return items
