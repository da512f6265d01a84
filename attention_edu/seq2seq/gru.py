"""A gated recurrent unit (GRU) cell, forward and backward, in ``torch.nn.GRUCell``'s equations.

The encoder reads the source with it and the decoder writes with it
("Attention Mechanisms: Fundamentals", section "Motivation: The Seq2Seq Bottleneck": the
RNN encoder-decoder whose fixed-size vector attention relieves). Gates in
PyTorch's order r, z, n, with row-vector inputs x (B, d_in), h (B, d_h) and
PyTorch's weight layout W_ih (3 d_h, d_in), W_hh (3 d_h, d_h)::

    gi = x W_ihᵀ + b_ih,   gh = h W_hhᵀ + b_hh        (each split into r, z, n parts)
    r  = σ(gi_r + gh_r)
    z  = σ(gi_z + gh_z)
    n  = tanh(gi_n + r ⊙ gh_n)                        (the reset gate scales W_hn h + b_hn)
    h' = (1 − z) ⊙ n + z ⊙ h

A sequence computes ``gi`` for every step in one product first; the loop then
needs only the kernel ``gru_step(xp, gi_t, h, W_hh, b_hh)`` and its backward.
"""

from __future__ import annotations

from typing import Any

from ..backend import get_xp
from ..shapes import Dims
from ..steps import Steps

__all__ = ["gru_cell", "gru_cell_steps", "gru_cell_backward", "gru_step", "gru_step_backward"]


def _sigmoid(xp: Any, x: Any) -> Any:
    # 1 / (1 + e^-x) overflows for very negative x; (1 + tanh(x/2)) / 2 never does.
    return 0.5 * (1.0 + xp.tanh(0.5 * x))


def gru_step(xp: Any, gi: Any, h: Any, W_hh: Any, b_hh: Any) -> Steps:
    """One GRU step from precomputed input gates ``gi = x W_ihᵀ + b_ih`` (B, 3 d_h) (trusted kernel)."""
    d_h = h.shape[-1]
    gh = h @ xp.matrix_transpose(W_hh) + b_hh  # (B, 3 d_h)
    rz = _sigmoid(xp, gi[..., :2 * d_h] + gh[..., :2 * d_h])  # (B, 2 d_h): both gates at once
    r, z = rz[..., :d_h], rz[..., d_h:]  # (B, d_h) each
    gh_n = gh[..., 2 * d_h:]  # (B, d_h)
    n = xp.tanh(gi[..., 2 * d_h:] + r * gh_n)  # (B, d_h)
    h_new = n + z * (h - n)  # (B, d_h): (1 − z) ⊙ n + z ⊙ h
    return Steps("gru_step", {
        "gh_n": ("W_hn h + b_hn", gh_n), "rz": ("σ(gi_rz + gh_rz)", rz),
        "r": ("reset gate", r), "z": ("update gate", z),
        "n": ("tanh(gi_n + r ⊙ gh_n)", n), "h_new": ("(1 − z) ⊙ n + z ⊙ h", h_new),
    }, {"h": h})


def gru_step_backward(xp: Any, steps: Steps, d_h_new: Any, W_hh: Any) -> tuple[Any, Any, Any]:
    """Gradients of one :func:`gru_step`: ``(d_gi, d_h, d_gh)``, each (B, 3 d_h) or (B, d_h).

    ``d_gh`` is the gradient at ``gh = h W_hhᵀ + b_hh``; summing ``d_ghᵀ h``
    over steps and batch gives dW_hh, summing ``d_gh`` gives db_hh.
    """
    r, z, n, rz, h = steps.r, steps.z, steps.n, steps.rz, steps.inputs["h"]
    d_n_pre = d_h_new * (1.0 - z) * (1.0 - n * n)  # through h' then tanh
    d_rz = xp.concat([d_n_pre * steps.gh_n, d_h_new * (h - n)], axis=-1)  # (B, 2 d_h): at r, z
    d_rz_pre = d_rz * rz * (1.0 - rz)  # through σ
    d_gi = xp.concat([d_rz_pre, d_n_pre], axis=-1)  # (B, 3 d_h)
    d_gh = xp.concat([d_rz_pre, d_n_pre * r], axis=-1)  # (B, 3 d_h)
    d_h = d_h_new * z + d_gh @ W_hh  # (B, d_h)
    return d_gi, d_h, d_gh


def gru_cell_steps(x: Any, h: Any, W_ih: Any, W_hh: Any, b_ih: Any, b_hh: Any) -> Steps:
    """The GRU cell with every intermediate kept (see :func:`gru_cell`)."""
    dims = Dims("gru_cell")
    dims.array("x", x, "B d_in")
    dims.array("h", h, "B d_h")
    dims.array("W_ih", W_ih, "3d_h d_in")
    dims.array("W_hh", W_hh, "3d_h d_h")
    dims.array("b_ih", b_ih, "3d_h")
    dims.array("b_hh", b_hh, "3d_h")
    if W_ih.shape[0] != 3 * dims["d_h"]:
        raise dims.error(f"W_ih has shape {tuple(W_ih.shape)} but needs 3 d_h = "
                         f"{3 * dims['d_h']} rows (gates r, z, n), d_h bound by h {tuple(h.shape)}")
    xp = get_xp(x, h, W_ih, W_hh, b_ih, b_hh)
    gi = x @ xp.matrix_transpose(W_ih) + b_ih  # (B, 3 d_h)
    step = gru_step(xp, gi, h, W_hh, b_hh)
    return Steps("gru_cell", {"gi": ("x W_ihᵀ + b_ih", gi),
                              **{k: (equation, a) for k, equation, a in step._items}},
                 dict(x=x, h=h, W_ih=W_ih, W_hh=W_hh, b_ih=b_ih, b_hh=b_hh))


def gru_cell(x: Any, h: Any, W_ih: Any, W_hh: Any, b_ih: Any, b_hh: Any) -> Any:
    """One GRU step: h' = (1 − z) ⊙ n + z ⊙ h, in ``torch.nn.GRUCell``'s equations.

    Parameters
    ----------
    x : array (B, d_in)
    h : array (B, d_h)
    W_ih : array (3 d_h, d_in)
        Input weights of the gates r, z, n stacked in that order (PyTorch's ``weight_ih``).
    W_hh : array (3 d_h, d_h)
        State weights, same order (``weight_hh``).
    b_ih, b_hh : array (3 d_h,)

    Returns
    -------
    array (B, d_h)
        The next state h'.

    Examples
    --------
    With all weights zero, r = z = 1/2 and n = 0, so the state halves:

    >>> import numpy as np
    >>> h = np.array([[1.0, -2.0]])
    >>> gru_cell(np.ones((1, 3)), h, np.zeros((6, 3)), np.zeros((6, 2)), np.zeros(6), np.zeros(6))
    array([[ 0.5, -1. ]])
    """
    return gru_cell_steps(x, h, W_ih, W_hh, b_ih, b_hh).h_new


def gru_cell_backward(steps: Steps, d_h_new: Any) -> dict[str, Any]:
    """Gradients of :func:`gru_cell` given the gradient ``d_h_new`` (B, d_h) at its output.

    Returns ``{"x", "h", "W_ih", "W_hh", "b_ih", "b_hh"}``. With δr, δz, δn the
    gradients at the gate pre-activations (δn = dh' ⊙ (1 − z) ⊙ (1 − n²),
    δz = dh' ⊙ (h − n) ⊙ z(1 − z), δr = δn ⊙ gh_n ⊙ r(1 − r))::

        d_gi = [δr, δz, δn],  d_gh = [δr, δz, δn ⊙ r]
        dx = d_gi W_ih,  dh = dh' ⊙ z + d_gh W_hh
        dW_ih = d_giᵀ x,  dW_hh = d_ghᵀ h,  db_ih = Σ_B d_gi,  db_hh = Σ_B d_gh

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x, h = rng.normal(size=(2, 3)), rng.normal(size=(2, 4))
    >>> W_ih, W_hh, b = rng.normal(size=(12, 3)), rng.normal(size=(12, 4)), np.zeros(12)
    >>> steps = gru_cell_steps(x, h, W_ih, W_hh, b, b)
    >>> grads = gru_cell_backward(steps, np.ones((2, 4)))
    >>> sorted(grads), grads["W_ih"].shape
    (['W_hh', 'W_ih', 'b_hh', 'b_ih', 'h', 'x'], (12, 3))
    """
    dims = Dims("gru_cell_backward")
    dims.array("steps.h_new", steps.h_new, "B d_h")
    dims.array("d_h_new", d_h_new, "B d_h")
    xp = get_xp(d_h_new)
    inputs = steps.inputs
    d_gi, d_h, d_gh = gru_step_backward(xp, steps, d_h_new, inputs["W_hh"])
    return {
        "x": d_gi @ inputs["W_ih"],  # (B, d_in)
        "h": d_h,  # (B, d_h)
        "W_ih": xp.matrix_transpose(d_gi) @ inputs["x"],  # (3 d_h, d_in)
        "W_hh": xp.matrix_transpose(d_gh) @ inputs["h"],  # (3 d_h, d_h)
        "b_ih": xp.sum(d_gi, axis=0),  # (3 d_h,)
        "b_hh": xp.sum(d_gh, axis=0),  # (3 d_h,)
    }
