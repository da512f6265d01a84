"""Checker for the attention-backward exercise, with its misconceptions.

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
>>> check_attention_backward(_diagonal).hint_id
'attention_backward.diagonal-jacobian'
"""

from __future__ import annotations

import math

from ...backend import host_numpy as np
from ...dot_product import scaled_dot_product_attention_backward, scaled_dot_product_attention_steps
from ...masks import causal_mask, padding_mask
from .host_attention import attend
from ..diagnosis.mutants import mistake
from ..records import Case, Exercise, Property

__all__ = ["ATTENTION_BACKWARD", "backward"]

_NAMES = ("Q", "K", "V", "d_output", "mask")


def _t(x):
    return np.swapaxes(x, -1, -2)                                                  # the last two axes


def backward(Q, K, V, d_output, mask=None, *, scale=None, jacobian="full", scale_dq=True, scale_dk=True,
             forward_scale=None, use_mask=True, guard=True):
    """Host backward of scaled dot-product attention, with knobs for building the mutants.

    ``jacobian`` is ``"full"`` (correct), ``"diagonal"`` (W ⊙ dW), ``"none"`` (dS = dW),
    ``"sign"`` (the rowsum term added) or ``"queries"`` (the rowsum taken over the queries).
    """
    scale = math.sqrt(Q.shape[-1]) if scale is None else scale
    forward_scale = scale if forward_scale is None else forward_scale
    _, W = attend(Q, K, V, mask if use_mask else None, scale=forward_scale, guard=guard)  # (..., m, n)
    dW = d_output @ _t(V)                                                          # (..., m, n)
    if jacobian == "full":
        dS = W * (dW - np.sum(dW * W, axis=-1, keepdims=True))
    elif jacobian == "diagonal":
        dS = W * dW
    elif jacobian == "none":
        dS = dW
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
    name="attention_backward", notebook="06_attention_backward", number=1,
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


# -- misconceptions ---------------------------------------------------------------------------

def _b(id: str, probe: str, hint: str):
    return mistake("attention_backward", "attention_backward." + id, probe, hint)


@_b("diagonal-jacobian", "small", "You kept only the diagonal of the softmax Jacobian, dS = W ⊙ dW: "
    "subtract each row's weighted mean, dS = W ⊙ (dW − rowsum(dW ⊙ W)).")
def _diagonal(Q, K, V, d_output, mask=None):
    return backward(Q, K, V, d_output, mask, jacobian="diagonal")


@_b("no-softmax-backward", "small", "You passed dW straight through to the scores: the softmax has a "
    "Jacobian too, dS = W ⊙ (dW − rowsum(dW ⊙ W)).")
def _no_softmax(Q, K, V, d_output, mask=None):
    return backward(Q, K, V, d_output, mask, jacobian="none")


@_b("jacobian-sign", "small", "The softmax backward subtracts the weighted mean: "
    "dS = W ⊙ (dW − rowsum(dW ⊙ W)), with a minus sign.")
def _sign(Q, K, V, d_output, mask=None):
    return backward(Q, K, V, d_output, mask, jacobian="sign")


@_b("jacobian-wrong-axis", "small", "The softmax ran over the keys, so its backward sums over the keys "
    "too: rowsum(dW ⊙ W) is np.sum(..., axis=-1, keepdims=True).")
def _queries(Q, K, V, d_output, mask=None):
    return backward(Q, K, V, d_output, mask, jacobian="queries")


@_b("dq-unscaled", "small", "The scores are Q Kᵀ / √d_k, so dQ = dS K carries the factor 1/√d_k as "
    "well; yours leaves it out of dQ.")
def _dq(Q, K, V, d_output, mask=None):
    return backward(Q, K, V, d_output, mask, scale_dq=False)


@_b("dk-unscaled", "small", "The scores are Q Kᵀ / √d_k, so dK = dSᵀ Q carries the factor 1/√d_k as "
    "well; yours leaves it out of dK.")
def _dk(Q, K, V, d_output, mask=None):
    return backward(Q, K, V, d_output, mask, scale_dk=False)


@_b("scale-by-d_k", "small", "The scale is 1/√d_k, in the forward pass and in dQ and dK alike; you "
    "divide by d_k.")
def _d_k(Q, K, V, d_output, mask=None):
    return backward(Q, K, V, d_output, mask, scale=Q.shape[-1])


@_b("forward-unscaled", "small", "Recompute the weights exactly as the forward pass does, "
    "softmax(Q Kᵀ / √d_k): yours leave out the scale.")
def _forward_unscaled(Q, K, V, d_output, mask=None):
    return backward(Q, K, V, d_output, mask, forward_scale=1.0)


@_b("dk-transposed", "returns", "dK has one row per key, shape (..., n, d_k): it is dSᵀ Q, not its "
    "transpose Qᵀ dS.")
def _dk_t(Q, K, V, d_output, mask=None):
    dQ, dK, dV = backward(Q, K, V, d_output, mask)
    return dQ, _t(dK), dV


@_b("dv-transposed", "returns", "dV has one row per value, shape (..., n, d_v): it is Wᵀ d_output, "
    "not d_outputᵀ W.")
def _dv(Q, K, V, d_output, mask=None):
    dQ, dK, _ = backward(Q, K, V, d_output, mask)
    return dQ, dK, _t(d_output) @ attend(Q, K, V, mask)[1]


@_b("ignores-mask", "masks", "Gradient reaches masked keys: recompute the weights with the mask "
    "(-inf before the softmax) so masked entries get weight 0 and therefore zero gradient.")
def _no_mask(Q, K, V, d_output, mask=None):
    return backward(Q, K, V, d_output, mask, use_mask=False)


@_b("masked-row-nan", "masks", "A fully masked query gives -inf - (-inf) = NaN in the recomputed "
    "softmax: guard it so that its weights, and so its gradients, are zeros.")
def _nan_row(Q, K, V, d_output, mask=None):
    return backward(Q, K, V, d_output, mask, guard=False)
