"""Softmax cross-entropy over the output characters, averaged over the real (unpadded) ones.

L = (1 / Σ mask) Σ_{b,t} mask_{b,t} (logsumexp(logits_{b,t}) − logits_{b,t,y_{b,t}}),
dL/dlogits = mask ⊙ (softmax(logits) − onehot(y)) / Σ mask.
"""

from __future__ import annotations

from typing import Any

from ..backend import get_xp
from .embedding import one_hot

__all__ = ["cross_entropy", "cross_entropy_backward"]


def _log_softmax(xp: Any, logits: Any) -> Any:
    shifted = logits - xp.max(logits, axis=-1, keepdims=True)  # (B, T, V): stable
    return shifted - xp.log(xp.sum(xp.exp(shifted), axis=-1, keepdims=True))  # (B, T, V)


def cross_entropy(logits: Any, targets: Any, mask: Any) -> tuple[Any, dict[str, Any]]:
    """Mean cross-entropy of ``logits`` (B, T, V) against ids ``targets`` (B, T) where ``mask``.

    Returns ``(loss, cache)``: a 0-d array and what the backward needs.

    Examples
    --------
    Uniform logits over 4 classes cost log 4 per character:

    >>> import numpy as np
    >>> loss, _ = cross_entropy(np.zeros((1, 2, 4)), np.array([[1, 3]]), np.array([[1.0, 1.0]]))
    >>> round(float(loss), 4), round(float(np.log(4)), 4)
    (1.3863, 1.3863)
    """
    xp = get_xp(logits, targets, mask)
    log_p = _log_softmax(xp, logits)  # (B, T, V)
    hot = one_hot(targets, logits.shape[-1], logits.dtype)  # (B, T, V)
    picked = xp.sum(log_p * hot, axis=-1)  # (B, T): log p of the right character
    count = xp.sum(mask)
    loss = xp.asarray(-xp.sum(picked * mask) / count)  # (): a 0-d array (NumPy reductions give scalars)
    return loss, {"log_p": log_p, "hot": hot, "mask": mask, "count": count}


def cross_entropy_backward(cache: dict[str, Any], d_loss: float = 1.0) -> Any:
    """dL/dlogits (B, T, V) of :func:`cross_entropy`, times ``d_loss``."""
    xp = get_xp(cache["log_p"])
    weight = xp.expand_dims(cache["mask"], axis=-1) * (d_loss / cache["count"])  # (B, T, 1)
    return (xp.exp(cache["log_p"]) - cache["hot"]) * weight  # (B, T, V)
