"""Layer norm: each row centred, scaled to unit variance, then scaled by γ and shifted by β.

y = γ ⊙ x̂ + β with x̂ = (x − μ) / √(σ² + ε), μ and σ² the mean and (biased)
variance of the row's d features. The backward, written from x̂ and the
inverse standard deviation r = 1 / √(σ² + ε):

dx = r · (g − mean(g) − x̂ ⊙ mean(g ⊙ x̂)),  g = dY ⊙ γ,

the row means taken over the d features; dγ = Σ dY ⊙ x̂ and dβ = Σ dY over
every leading position.
"""

from __future__ import annotations

from typing import Any

from ..backend import get_xp

__all__ = ["layer_norm", "layer_norm_backward"]

EPSILON = 1e-5  # PyTorch's default, so that the torch oracle matches to rounding


def layer_norm(x: Any, gamma: Any, beta: Any) -> tuple[Any, dict[str, Any]]:
    """γ ⊙ (x − μ) / √(σ² + ε) + β over the last axis: x (..., d), γ and β (d,) → (..., d).

    Returns ``(y, cache)``; the cache holds x̂ and r = 1/√(σ² + ε) for the backward.

    Examples
    --------
    >>> import numpy as np
    >>> y, _ = layer_norm(np.array([[1.0, 2.0, 3.0]]), np.ones(3), np.zeros(3))
    >>> np.round(y, 4)
    array([[-1.2247,  0.    ,  1.2247]])
    """
    xp = get_xp(x, gamma, beta)
    mean = xp.mean(x, axis=-1, keepdims=True)  # (..., 1)
    centred = x - mean  # (..., d)
    variance = xp.mean(centred * centred, axis=-1, keepdims=True)  # (..., 1)
    inverse_std = 1.0 / xp.sqrt(variance + EPSILON)  # (..., 1): r
    normed = centred * inverse_std  # (..., d): x̂
    return gamma * normed + beta, {"normed": normed, "inverse_std": inverse_std, "gamma": gamma}


def layer_norm_backward(cache: dict[str, Any], d_y: Any) -> dict[str, Any]:
    """``{"x", "gamma", "beta"}`` gradients of :func:`layer_norm` from its cache.

    Examples
    --------
    A constant upstream gradient moves no input (the row is re-centred):

    >>> import numpy as np
    >>> _, cache = layer_norm(np.array([[1.0, 2.0, 4.0]]), np.ones(3), np.zeros(3))
    >>> grads = layer_norm_backward(cache, np.ones((1, 3)))
    >>> bool(np.allclose(grads["x"], 0)), grads["beta"]
    (True, array([1., 1., 1.]))
    """
    xp = get_xp(d_y)
    normed, inverse_std, gamma = cache["normed"], cache["inverse_std"], cache["gamma"]
    d = normed.shape[-1]
    g = d_y * gamma  # (..., d): gradient at x̂
    mean_g = xp.mean(g, axis=-1, keepdims=True)  # (..., 1)
    mean_g_normed = xp.mean(g * normed, axis=-1, keepdims=True)  # (..., 1)
    d_x = inverse_std * (g - mean_g - normed * mean_g_normed)  # (..., d)
    rows_dy = xp.reshape(d_y, (-1, d))  # (N, d): every leading position a row
    rows_normed = xp.reshape(normed, (-1, d))  # (N, d)
    return {"x": d_x, "gamma": xp.sum(rows_dy * rows_normed, axis=0), "beta": xp.sum(rows_dy, axis=0)}
