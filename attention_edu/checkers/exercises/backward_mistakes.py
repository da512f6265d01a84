"""The attention-backward exercise's misconceptions, and where in the chain an error starts.

Each mutant is :func:`.backward.backward` with one knob turned (the p(1 − p) of the
softmax Jacobian's diagonal, a row sum without the weights, a missing 1/√d_k, a finite
or inverted mask ...). When no mutant matches, :func:`_chain` reads which of dQ, dK and dV
are right and says where the error starts: dV needs only the weights, dQ and dK need dS too.

>>> from attention_edu.checkers import check_attention_backward
>>> check_attention_backward(_p_one_minus_p).hint_id
'attention_backward.p-one-minus-p'
"""

from __future__ import annotations

from ...backend import host_numpy as np
from ..diagnosis.compare import close
from ..diagnosis.evidence import partly, reads
from ..diagnosis.mutants import mistake, variant
from .backward import _t, backward  # also registers the exercise before its mistakes
from .host_attention import attend

__all__: list[str] = []


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


@_b("p-one-minus-p", "small", "p(1 − p) is only the diagonal of the softmax Jacobian; every weight of a "
    "row also depends on the others' scores: dS = W ⊙ (dW − rowsum(dW ⊙ W)).")
def _p_one_minus_p(Q, K, V, d_output, mask=None):
    return backward(Q, K, V, d_output, mask, jacobian="p(1-p)")


@_b("rowsum-unweighted", "small", "The term subtracted from dW is the weighted mean of its row, "
    "rowsum(dW ⊙ W), not the plain rowsum(dW): multiply by the weights before summing.")
def _unweighted(Q, K, V, d_output, mask=None):
    return backward(Q, K, V, d_output, mask, jacobian="unweighted")


@_b("finite-fill", "masks", "Masked scores get a large negative number rather than -inf, so a fully "
    "masked query spreads its weight over every key and gradient reaches masked keys: fill with -inf "
    "and give such a row zero weights.")
def _finite(Q, K, V, d_output, mask=None):
    return backward(Q, K, V, d_output, mask, fill=-1e9)


@variant("attention_backward.finite-fill")
def _finite_added(Q, K, V, d_output, mask=None):
    return backward(Q, K, V, d_output, mask, fill=-1e9, additive=True)


@_b("inverted-mask", "masks", "True means 'may attend': keep the scores where the mask is True and "
    "fill -inf where it is False, np.where(mask, scores, -np.inf).")
def _inverted(Q, K, V, d_output, mask=None):
    return backward(Q, K, V, d_output, None if mask is None else ~mask)


@_b("inverted-mask-finite-fill", "masks", "Your mask is inverted (True should mean may attend), and "
    "masked scores get a large negative number rather than -inf: np.where(mask, scores, -np.inf).")
def _inverted_finite(Q, K, V, d_output, mask=None):
    return backward(Q, K, V, d_output, None if mask is None else ~mask, fill=-1e9)


@variant("attention_backward.inverted-mask-finite-fill")
def _inverted_added(Q, K, V, d_output, mask=None):
    return backward(Q, K, V, d_output, None if mask is None else ~mask, fill=-1e9, additive=True)


_WHERE = {
    ("dV",): "the error is after dW: in dS = W ⊙ (dW − rowsum(dW ⊙ W)) or in the 1/√d_k of dQ and dK",
    ("dK", "dV"): "the error is in dQ = dS K / √d_k alone",
    ("dQ", "dV"): "the error is in dK = dSᵀ Q / √d_k alone",
    ("dQ", "dK"): "the error is in dV = Wᵀ d_output alone",
}


@reads("attention_backward", "attention_backward.chain")
def _chain(case, mine, expected):
    """Which gradients are right, and where the chain of intermediates goes wrong."""
    if len(mine) != 3 or not all(isinstance(a, np.ndarray) and a.shape == e.shape for a, e in zip(mine, expected)):
        return None
    right = [close(a, e, case.float_dtypes) for a, e in zip(mine, expected)]
    good = tuple(n for n, r in zip(("dQ", "dK", "dV"), right) if r)
    bad = [n for n, r in zip(("dQ", "dK", "dV"), right) if not r]
    if good not in _WHERE:
        return None
    phrases = partly(list(good), bad)
    return "attention_backward.chain", f"{phrases['right']}; {phrases['wrong']}: {_WHERE[good]}."
