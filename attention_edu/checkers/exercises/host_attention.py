"""Attention on host arrays with knobs (scale, softmax axis, fill value, guard), for the mutants.

The misconceptions of the attention exercises are easiest to state as one
knob turned the wrong way: no scaling, softmax over the queries, a finite
fill instead of −inf, no guard for a fully masked row. These helpers are
that knob board; the correct setting (the defaults) equals the library.

>>> from attention_edu.backend import host_numpy as np
>>> out, w = attend(np.eye(2), np.eye(2), np.eye(2))
>>> bool(np.allclose(w.sum(axis=-1), 1.0))
True
"""

from __future__ import annotations

import math

from ...backend import host_numpy as np

__all__ = ["weigh", "attend"]


def weigh(scores, V, mask=None, axis=-1, fill=-np.inf, guard=True, additive=False):
    """Mask, softmax along ``axis`` and weighted sum, with knobs for building the mutants.

    ``additive`` adds ``fill`` to the masked scores (``s + (1 - mask) * fill``) instead of
    replacing them (``np.where(mask, s, fill)``).
    """
    if mask is not None:
        scores = scores + np.where(mask, 0.0, fill) if additive else np.where(mask, scores, fill)
    top = np.max(scores, axis=axis, keepdims=True)
    if guard:
        top = np.where(np.isfinite(top), top, 0.0)
    e = np.exp(scores - top)
    total = np.sum(e, axis=axis, keepdims=True)
    weights = e / np.where(total > 0, total, 1.0) if guard else e / total
    return weights @ V, weights


def attend(Q, K, V, mask=None, scale=None, **knobs):
    """Host attention for the mutants; ``scale`` None means √d_k, ``knobs`` go to :func:`weigh`."""
    scale = math.sqrt(Q.shape[-1]) if scale is None else scale
    return weigh(Q @ np.swapaxes(K, -1, -2) / scale, V, mask, **knobs)
