"""One pre-layer-norm transformer block and its backward.

    a = x + MultiHead(LN₁(x))        attention reads a normalised copy, adds to the stream
    y = a + MLP(LN₂(a))              (the MLP is optional: attention-only blocks skip it)

Multi-head self-attention is the library's :func:`attention_edu.multi_head_attention_steps`
with the causal mask (query t sees keys 0..t) and its backward
:func:`attention_edu.multi_head_attention_backward`; the block adds only the residual
stream and the norms around it. "Neural attention mechanism vectorization", section 3
(multi-head shapes), and "Attention Mechanisms: Fundamentals", section "Masked Attention".

Parameter names of block l: ``blocks.l.ln1.gamma``, ``.ln1.beta``, ``.W_Q``, ``.W_K``,
``.W_V`` (d, H·d_k), ``.W_O`` (H·d_k, d), and with an MLP ``.ln2.gamma``, ``.ln2.beta``,
``.mlp.W1`` (4d, d), ``.mlp.b1``, ``.mlp.W2`` (d, 4d), ``.mlp.b2``.
"""

from __future__ import annotations

from typing import Any

from ..layers.layer_norm import layer_norm, layer_norm_backward
from ..layers.mlp import mlp, mlp_backward
from ..multi_head import multi_head_attention_backward, multi_head_attention_steps

__all__ = ["block_forward", "block_backward", "ATTENTION_NAMES", "MLP_NAMES"]

ATTENTION_NAMES = ("ln1.gamma", "ln1.beta", "W_Q", "W_K", "W_V", "W_O")
MLP_NAMES = ("ln2.gamma", "ln2.beta", "mlp.W1", "mlp.b1", "mlp.W2", "mlp.b2")


def block_forward(x: Any, p: dict[str, Any], num_heads: int, mask: Any | None) -> tuple[Any, dict[str, Any]]:
    """One block on the residual stream ``x`` (B, T, d) with parameters ``p`` (names without the
    ``blocks.l.`` prefix); ``mask`` (T, T) bool or None. Returns ``(y (B, T, d), cache)``.

    Examples
    --------
    >>> import numpy as np
    >>> from attention_edu import causal_mask
    >>> rng = np.random.default_rng(0)
    >>> p = {"ln1.gamma": np.ones(4), "ln1.beta": np.zeros(4),
    ...      **{k: rng.normal(size=(4, 4)) for k in ("W_Q", "W_K", "W_V", "W_O")}}
    >>> y, cache = block_forward(rng.normal(size=(2, 3, 4)), p, num_heads=2, mask=causal_mask(3))
    >>> y.shape, cache["attention"].weights.shape
    ((2, 3, 4), (2, 2, 3, 3))
    """
    normed, ln1 = layer_norm(x, p["ln1.gamma"], p["ln1.beta"])  # (B, T, d)
    attention = multi_head_attention_steps(normed, normed, p["W_Q"], p["W_K"], p["W_V"], p["W_O"],
                                           num_heads, mask)  # output (B, T, d), weights (B, H, T, T)
    a = x + attention.output  # (B, T, d): the residual stream after attention
    cache: dict[str, Any] = {"ln1": ln1, "attention": attention, "ln2": None, "mlp": None}
    if "mlp.W1" not in p:
        return a, cache
    normed2, cache["ln2"] = layer_norm(a, p["ln2.gamma"], p["ln2.beta"])  # (B, T, d)
    mlp_out, cache["mlp"] = mlp(normed2, p["mlp.W1"], p["mlp.b1"], p["mlp.W2"], p["mlp.b2"])  # (B, T, d)
    return a + mlp_out, cache


def block_backward(cache: dict[str, Any], d_y: Any) -> tuple[Any, dict[str, Any]]:
    """``(d_x (B, T, d), parameter gradients)`` of :func:`block_forward`, from its cache and
    the gradient ``d_y`` (B, T, d) arriving at its output.

    The residual connections copy the gradient past each branch:
    d_a = d_y + LN₂ᵀ(MLPᵀ(d_y)) and d_x = d_a + LN₁ᵀ(d_X_q + d_X_kv), the
    attention reading its normalised input both as queries and as keys/values.
    """
    grads: dict[str, Any] = {}
    d_a = d_y  # (B, T, d)
    if cache["mlp"] is not None:
        g_mlp = mlp_backward(cache["mlp"], d_y)
        g_ln2 = layer_norm_backward(cache["ln2"], g_mlp["x"])
        d_a = d_y + g_ln2["x"]  # (B, T, d)
        grads.update({f"mlp.{k}": g_mlp[k] for k in ("W1", "b1", "W2", "b2")})
        grads.update({"ln2.gamma": g_ln2["gamma"], "ln2.beta": g_ln2["beta"]})
    g_att = multi_head_attention_backward(cache["attention"], d_a)
    g_ln1 = layer_norm_backward(cache["ln1"], g_att["X_q"] + g_att["X_kv"])  # one input, two roles
    grads.update({k: g_att[k] for k in ("W_Q", "W_K", "W_V", "W_O")})
    grads.update({"ln1.gamma": g_ln1["gamma"], "ln1.beta": g_ln1["beta"]})
    return d_a + g_ln1["x"], grads
