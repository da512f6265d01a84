"""Softmax, computed stably, and its derivative.

Follows "Attention Mechanisms: Fundamentals", sections "Additive Attention
(Bahdanau)" (Step 2) and "Why Scaling Matters: Variance Analysis" (softmax
saturation and the gradient ∂softmax(z)_i/∂z_j = p_i (δ_ij − p_j)).
"""

from __future__ import annotations

from typing import Any

from .backend import get_xp, quiet_overflow
from .shapes import Dims

__all__ = ["softmax", "softmax_naive", "softmax_jacobian", "softmax_vjp", "stable_softmax"]


def softmax(x: Any, axis: int = -1) -> Any:
    """Softmax along ``axis``: p_i = exp(x_i − max_j x_j) / Σ_j exp(x_j − max_j x_j).

    Subtracting the row maximum changes nothing mathematically but keeps
    ``exp`` from overflowing. Entries equal to −inf get weight exactly 0 (this
    is how masking works), and a row that is entirely −inf gives all zeros
    rather than NaN.

    Parameters
    ----------
    x : array (...,)
        Floating-point scores. NaN and +inf are rejected.
    axis : int
        Axis to normalise over; attention always uses the last axis (keys).

    Returns
    -------
    array, same shape and dtype as ``x``
        Non-negative weights summing to 1 along ``axis`` (0 for a fully −inf row).

    Notes
    -----
    "Attention Mechanisms: Fundamentals", section "Additive Attention
    (Bahdanau)", Step 2.

    Examples
    --------
    The chapter's Bahdanau example turns scores (0.8, 2.1, 0.5) into weights:

    >>> import numpy as np
    >>> np.round(softmax(np.array([0.8, 2.1, 0.5])), 3)
    array([0.185, 0.678, 0.137])
    """
    dims = Dims("softmax")
    dims.array("x", x, "...", finite=False)
    xp = get_xp(x)
    if bool(xp.any(xp.isnan(x))) or bool(xp.any(x == xp.inf)):
        raise ValueError("softmax: x contains NaN or +inf; only -inf (a masked entry) is allowed")
    if isinstance(axis, bool) or not hasattr(axis, "__index__"):
        raise TypeError(f"softmax: axis must be an int (attention normalises over one axis), got {axis!r}")
    if x.ndim == 0:
        raise dims.error("x is a single number (shape ()); the softmax normalises along an axis: give an array "
                         "of at least one dimension")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"softmax: axis {axis} is out of range for x of shape {tuple(x.shape)}")
    if x.shape[axis] == 0:
        raise dims.error(f"x has shape {tuple(x.shape)}: axis {axis} is empty, so there is nothing to normalise")
    with quiet_overflow():      # x − max of ±1e308 overflows to −inf, whose exp is the right 0
        return stable_softmax(xp, x, axis)


def stable_softmax(xp: Any, x: Any, axis: int = -1) -> Any:
    """The kernel of :func:`softmax`, for arguments already checked (no NaN, no +inf).

    Examples
    --------
    >>> import numpy as np
    >>> stable_softmax(np, np.array([[0.0, -np.inf], [-np.inf, -np.inf]]))
    array([[1., 0.],
           [0., 0.]])
    """
    row_max = xp.max(x, axis=axis, keepdims=True)
    # A row that is entirely -inf would give (-inf) - (-inf) = NaN; shift it by 0 instead.
    row_max = xp.where(xp.isfinite(row_max), row_max, xp.zeros_like(row_max))
    exps = xp.exp(x - row_max)
    total = xp.sum(exps, axis=axis, keepdims=True)
    return exps / xp.where(total > 0, total, xp.ones_like(total))


def softmax_naive(x: Any, axis: int = -1) -> Any:
    """Softmax without the max shift: exp(x_i) / Σ_j exp(x_j). For teaching only.

    It overflows to ``inf``/``nan`` once scores exceed about 709 (float64) or
    88 (float32); compare it with :func:`softmax` to see why the shift matters.

    Examples
    --------
    >>> import numpy as np
    >>> np.round(softmax_naive(np.array([10.0, 0.0])), 4)
    array([1., 0.])
    """
    Dims("softmax_naive").array("x", x, "...", finite=False)
    xp = get_xp(x)
    exps = xp.exp(x)
    return exps / xp.sum(exps, axis=axis, keepdims=True)


def softmax_jacobian(p: Any) -> Any:
    """Jacobian of softmax from its output: J_ij = ∂p_i/∂z_j = p_i (δ_ij − p_j).

    Parameters
    ----------
    p : array (..., n)
        Softmax outputs (probabilities along the last axis).

    Returns
    -------
    array (..., n, n)
        J[..., i, j]. Every row and column of J sums to 0.

    Notes
    -----
    "Attention Mechanisms: Fundamentals", section "Why Scaling Matters:
    Variance Analysis", paragraph on gradient flow: when softmax saturates
    (one p near 1), every entry of J goes to 0.

    Examples
    --------
    The top entry of a saturated softmax barely responds to its own score:

    >>> import numpy as np
    >>> p = softmax(np.array([20.0, 0.0]))
    >>> float(softmax_jacobian(p)[0, 0]) < 3e-9
    True
    """
    Dims("softmax_jacobian").array("p", p, "... n")
    xp = get_xp(p)
    n = p.shape[-1]
    eye = xp.eye(n, dtype=p.dtype, device=getattr(p, "device", None))  # (n, n)
    p_col = xp.expand_dims(p, axis=-1)  # (..., n, 1)
    p_row = xp.expand_dims(p, axis=-2)  # (..., 1, n)
    return p_col * eye - p_col * p_row  # (..., n, n)


def softmax_vjp(p: Any, grad_p: Any) -> Any:
    """Gradient through softmax: dL/dz = p ⊙ (g − Σ_j g_j p_j), with g = dL/dp.

    This is ``grad_p @ J`` without building the n × n Jacobian.

    Examples
    --------
    >>> import numpy as np
    >>> p = softmax(np.array([1.0, 2.0, 3.0]))
    >>> g = np.array([1.0, 0.0, 0.0])
    >>> bool(np.allclose(softmax_vjp(p, g), g @ softmax_jacobian(p)))
    True
    """
    dims = Dims("softmax_vjp")
    dims.array("p", p, "... n")
    dims.array("grad_p", grad_p, "... n")
    xp = get_xp(p, grad_p)
    inner = xp.sum(grad_p * p, axis=-1, keepdims=True)  # (..., 1)
    return p * (grad_p - inner)  # (..., n)
