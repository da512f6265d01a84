"""Checker for the attention-backward exercise (its misconceptions are in :mod:`.backward_mistakes`).

The student writes ``attention_backward(Q, K, V, d_output, mask=None)``
returning ``(dQ, dK, dV)``, the gradients of L = Σ d_output ⊙ output for
scaled dot-product attention, output = softmax(Q Kᵀ / √d_k) V with the mask
(True = may attend) applied before the softmax. With weights W and
dW = d_output Vᵀ: dV = Wᵀ d_output, dS = W ⊙ (dW − rowsum(dW ⊙ W)),
dQ = dS K / √d_k, dK = dSᵀ Q / √d_k. Masked keys get exactly zero gradient
and a fully masked query contributes nothing.

Examples
--------
>>> from attention_edu.checkers import check_attention_backward
>>> check_attention_backward(ATTENTION_BACKWARD.reference).passed
True
>>> check_attention_backward(lambda *a: backward(*a, jacobian="diagonal")).hint_id
'attention_backward.diagonal-jacobian'
"""

from __future__ import annotations

import math

from ...backend import host_numpy as np
from ...dot_product import scaled_dot_product_attention_backward, scaled_dot_product_attention_steps
from ...masks import causal_mask, padding_mask
from .host_attention import attend
from ..records import Case, Exercise, Property

__all__ = ["ATTENTION_BACKWARD", "backward"]

_NAMES = ("Q", "K", "V", "d_output", "mask")


def _t(x):
    return np.swapaxes(x, -1, -2)                                                  # the last two axes


def backward(Q, K, V, d_output, mask=None, *, scale=None, jacobian="full", scale_dq=True, scale_dk=True,
             forward_scale=None, use_mask=True, guard=True, **fill):
    """Host backward of scaled dot-product attention, with knobs for building the mutants.

    ``jacobian`` is ``"full"`` (correct), ``"diagonal"`` (W ⊙ dW), ``"none"`` (dS = dW),
    ``"sign"`` (the rowsum term added), ``"queries"`` (the rowsum taken over the queries),
    ``"p(1-p)"`` (W ⊙ (1 − W) ⊙ dW) or ``"unweighted"`` (rowsum(dW) without the weights);
    ``fill`` (``fill=-1e9``, ``additive=True``) goes to the masking.
    """
    scale = math.sqrt(Q.shape[-1]) if scale is None else scale
    forward_scale = scale if forward_scale is None else forward_scale
    _, W = attend(Q, K, V, mask if use_mask else None, scale=forward_scale, guard=guard, **fill)  # (..., m, n)
    dW = d_output @ _t(V)                                                          # (..., m, n)
    if jacobian == "full":
        dS = W * (dW - np.sum(dW * W, axis=-1, keepdims=True))
    elif jacobian == "diagonal":
        dS = W * dW
    elif jacobian == "none":
        dS = dW
    elif jacobian == "p(1-p)":
        dS = W * (1.0 - W) * dW
    elif jacobian == "unweighted":
        dS = W * (dW - np.sum(dW, axis=-1, keepdims=True))
    elif jacobian == "sign":
        dS = W * (dW + np.sum(dW * W, axis=-1, keepdims=True))
    else:
        dS = W * (dW - np.sum(dW * W, axis=-2, keepdims=True))
    dQ = dS @ K / (scale if scale_dq else 1.0)                                     # (..., m, d_k)
    dK = _t(dS) @ Q / (scale if scale_dk else 1.0)                                 # (..., n, d_k)
    dV = _t(W) @ d_output                                                          # (..., n, d_v)
    return dQ, dK, dV


def _reference(Q, K, V, d_output, mask=None):
    grads = scaled_dot_product_attention_backward(scaled_dot_product_attention_steps(Q, K, V, mask), d_output)
    return grads["Q"], grads["K"], grads["V"]


def _normal(seed: int, *shapes: tuple[int, ...], scale: float = 1.0) -> tuple:
    rng = np.random.default_rng(seed)
    return tuple(scale * rng.standard_normal(shape) for shape in shapes)


def _sizes(lead: tuple, m: int, n: int, d_k: int, d_v: int) -> tuple:
    return lead + (m, d_k), lead + (n, d_k), lead + (n, d_v), lead + (m, d_v)


def _cases() -> list[Case]:
    Q = np.array([[1.0, 0.5, -0.3, 0.8], [0.0, 1.0, 0.0, -1.0]])
    K = np.array([[0.8, 0.2, -0.1, 0.5], [0.3, 0.7, 0.4, -0.2], [-0.5, 0.1, 0.9, 0.6]])
    V = np.array([[0.5, 0.8, -0.2, 0.6, 0.3], [0.2, -0.4, 0.7, 0.1, 0.9], [-0.3, 0.5, 0.4, -0.6, 0.2]])
    dO = np.array([[1.0, 0.0, 0.0, 0.0, -1.0], [0.5, 0.5, -0.5, 0.0, 0.0]])
    cases = [Case("small", "m = 2, n = 3, d_k = 4, d_v = 5", (Q, K, V, dO), _NAMES[:4], literal=True,
                  note="Query 0, K and V are the chapter's scaled dot-product example.")]
    for seed, dims in ((1, (3, 5, 4, 2)), (2, (4, 2, 3, 6)), (3, (5, 3, 2, 4))):
        cases.append(Case("random", "seed {}, m={} n={} d_k={} d_v={}".format(seed, *dims),
                          _normal(seed, *_sizes((), *dims)), _NAMES[:4]))
    args = tuple(a.astype(np.float32) for a in _normal(4, *_sizes((), 2, 3, 4, 5)))
    cases.append(Case("random", "float32, m=2 n=3 d_k=4 d_v=5", args, _NAMES[:4]))
    cases.append(Case("batched", "3-D, B=2 m=3 n=5 d_k=4 d_v=6", _normal(5, *_sizes((2,), 3, 5, 4, 6)),
                      _NAMES[:4]))
    cases.append(Case("batched", "4-D, B=2 H=3 m=4 n=6 d_k=5 d_v=7",
                      _normal(6, *_sizes((2, 3), 4, 6, 5, 7)), _NAMES[:4]))
    big = _normal(7, (3, 4), (5, 4), scale=30.0) + _normal(8, (5, 2), (3, 2))
    cases.append(Case("stability", "scores of size about 1000", big, _NAMES[:4]))
    cases.append(Case("masks", "causal mask, m = n = 4", _normal(9, *_sizes((), 4, 4, 3, 2)) + (causal_mask(4),),
                      _NAMES))
    cases.append(Case("masks", "padding mask (2, 1, 5), lengths 3 and 5",
                      _normal(10, *_sizes((2,), 3, 5, 4, 2)) + (padding_mask(np.array([3, 5]), 5),), _NAMES,
                      note="The keys 3 and 4 of batch entry 0 are padding: their dK and dV must be 0."))
    mask = np.array([[True, False, True, True], [False, False, False, False], [True, True, False, True]])
    cases.append(Case("masks", "query 1 fully masked", _normal(11, *_sizes((), 3, 4, 2, 3)) + (mask,), _NAMES,
                      note="A fully masked query gets zero weights, so its dQ row is 0 and it adds nothing "
                           "to dK or dV."))
    return cases


def _loss(Q, K, V, d_output, mask=None):
    out, _ = attend(Q, K, V, mask)
    return float(np.sum(out * d_output))


def _finite_differences(student) -> str | None:
    Q, K, V, dO = _normal(71, *_sizes((), 3, 4, 3, 2))
    grads = student(Q, K, V, dO)
    rng = np.random.default_rng(72)
    for name, grad, index in zip(("dQ", "dK", "dV"), grads, range(3)):
        direction = rng.standard_normal(grad.shape)
        plus, minus = [Q, K, V], [Q, K, V]
        plus[index], minus[index] = plus[index] + 1e-6 * direction, minus[index] - 1e-6 * direction
        numeric = (_loss(*plus, dO) - _loss(*minus, dO)) / 2e-6
        analytic = float(np.sum(grad * direction))
        if abs(numeric - analytic) > 1e-4 * max(1.0, abs(numeric)):
            return (f"along a random direction, {name} predicts a change of {analytic:.6g} in the loss; "
                    f"central differences measure {numeric:.6g}")
    return None


def _keys_shift(student) -> str | None:
    Q, K, V, dO = _normal(73, *_sizes((), 4, 5, 3, 2))
    _, dK, _ = student(Q, K, V, dO)
    total = np.sum(dK, axis=-2)
    if np.allclose(total, 0.0, atol=1e-6):
        return None
    return f"dK summed over the keys is {np.array2string(total, precision=4)}, not 0"


def _masked_keys(student) -> str | None:
    Q, K, V, dO = _normal(74, *_sizes((), 3, 5, 2, 3))
    keys = np.array([True, True, False, True, False])
    _, dK, dV = student(Q, K, V, dO, np.tile(keys, (3, 1)))                  # mask (3, 5)
    if np.all(dK[~keys] == 0) and np.all(dV[~keys] == 0):
        return None
    return "keys 2 and 4 are masked for every query, yet their dK or dV is not exactly 0"


ATTENTION_BACKWARD = Exercise(
    name="attention_backward", notebook="06_attention_backward", number=7,
    summary="Check ``attention_backward(Q, K, V, d_output, mask=None) -> (dQ, dK, dV)`` (scaled).",
    signature="attention_backward(Q, K, V, d_output, mask=None) -> (dQ (..., m, d_k), dK (..., n, d_k), "
              "dV (..., n, d_v))",
    reference=_reference,
    outputs=("dQ", "dK", "dV"),
    cases=_cases,
    properties=(
        Property("attention_backward.property-finite-differences", "the gradients agree with finite differences",
                 "Each gradient must predict how the loss changes when its input moves a little; "
                 "compare with (L(x + εv) − L(x − εv)) / 2ε.", _finite_differences),
        Property("attention_backward.property-key-shift", "dK sums to zero over the keys",
                 "Adding one vector to every key shifts each row of scores by a constant, which the "
                 "softmax ignores, so the rows of dK must add up to zero.", _keys_shift),
        Property("attention_backward.property-masked-keys", "masked keys get exactly zero gradient",
                 "A key that no query may attend to has no influence on the output: its dK and dV "
                 "rows must be exactly 0.", _masked_keys),
    ),
)
