"""The mistakes of the backward derivation's steps (see :mod:`.backward_steps`), each naming its step.

>>> from attention_edu.checkers import CHECKERS
>>> CHECKERS["softmax_jacobian"](_sign).hint_id
'softmax_jacobian.sign'
"""

from __future__ import annotations

import math

from ...backend import host_numpy as np
from ..diagnosis.mutants import mistake
from .backward_steps import _t, jacobian

__all__: list[str] = []


def _diag(w):
    return w[..., :, None] * np.eye(w.shape[-1])


@mistake("softmax_jacobian", "softmax_jacobian.sign", "small", "Your Jacobian has the opposite sign: "
         "raising sᵢ raises wᵢ, so the diagonal wᵢ(1 − wᵢ) is positive and J = diag(w) − w wᵀ.")
def _sign(w):
    return -jacobian(w)


@mistake("softmax_jacobian", "softmax_jacobian.diagonal-only", "small", "Every weight depends on every "
         "score (they share the denominator): keep the off-diagonal entries −wᵢwⱼ, J = diag(w) − w wᵀ.")
def _diagonal_only(w):
    return _diag(w * (1 - w))


@mistake("softmax_jacobian", "softmax_jacobian.no-diagonal", "small", "You left out diag(w): the "
         "derivative of wᵢ = exp(sᵢ)/Σ by its own score has an extra wᵢ, so J = diag(w) − w wᵀ.")
def _outer_only(w):
    return -w[..., :, None] * w[..., None, :]


@mistake("backward_dv", "backward_dv.transposed", "returns", "dV has one row per value, (..., n, d_v): "
         "it is Wᵀ d_output, not d_outputᵀ W.")
def _dv_t(W, dO):
    return _t(dO) @ W


@mistake("backward_dv", "backward_dv.no-transpose", "runs", "O = W V sends d_output back to V through "
         "Wᵀ: dV = np.swapaxes(W, -1, -2) @ d_output; W @ d_output pairs the wrong axes.")
def _dv_no_t(W, dO):
    return W @ dO


@mistake("backward_dv", "backward_dv.batched-transpose", "runs", "On batched input .T reverses every "
         "axis: transpose only the last two, np.swapaxes(W, -1, -2) @ d_output.")
def _dv_dot_t(W, dO):
    return W.T @ dO


@mistake("backward_dw", "backward_dw.transposed", "returns", "dW has the shape of W, (..., m, n): it is "
         "d_output Vᵀ, not V d_outputᵀ.")
def _dw_t(V, dO):
    return V @ _t(dO)


@mistake("backward_dw", "backward_dw.no-transpose", "runs", "O = W V sends d_output back to W through "
         "Vᵀ: dW = d_output @ np.swapaxes(V, -1, -2).")
def _dw_no_t(V, dO):
    return dO @ V


def _s(id: str, hint: str):
    return mistake("backward_ds", "backward_ds." + id, "small", hint)


@_s("diagonal", "Your dS = W ⊙ dW keeps only part of the softmax Jacobian: subtract each row's "
    "weighted mean, dS = W ⊙ (dW − rowsum(dW ⊙ W)).")
def _ds_diag(W, dW):
    return W * dW


@_s("p-one-minus-p", "p(1 − p) is only the Jacobian's diagonal; each weight also depends on the other "
    "scores: dS = W ⊙ (dW − rowsum(dW ⊙ W)).")
def _ds_p(W, dW):
    return W * (1 - W) * dW


@_s("sign", "Your dS has the rowsum term with the wrong sign: dS = W ⊙ (dW − rowsum(dW ⊙ W)).")
def _ds_sign(W, dW):
    return W * (dW + np.sum(dW * W, axis=-1, keepdims=True))


@_s("rowsum-unweighted", "The term subtracted is the weighted mean rowsum(dW ⊙ W), not rowsum(dW): "
    "multiply by W before summing.")
def _ds_unweighted(W, dW):
    return W * (dW - np.sum(dW, axis=-1, keepdims=True))


@_s("wrong-axis", "The softmax ran over the keys, so the sum in its backward runs over the keys too: "
    "np.sum(dW * W, axis=-1, keepdims=True).")
def _ds_axis(W, dW):
    return W * (dW - np.sum(dW * W, axis=-2, keepdims=True))


@_s("no-softmax", "dS is not dW: the softmax between S and W has a Jacobian too, "
    "dS = W ⊙ (dW − rowsum(dW ⊙ W)).")
def _ds_none(W, dW):
    return dW + 0.0


@mistake("backward_dq", "backward_dq.unscaled", "small", "S = Q Kᵀ / √d_k, so dQ = dS K carries the "
         "factor 1/√d_k too: divide by math.sqrt(K.shape[-1]).")
def _dq_unscaled(dS, K):
    return dS @ K


@mistake("backward_dq", "backward_dq.scale-by-d_k", "small", "The factor is 1/√d_k, not 1/d_k: divide "
         "by math.sqrt(K.shape[-1]).")
def _dq_d(dS, K):
    return dS @ K / K.shape[-1]


@mistake("backward_dq", "backward_dq.transposed-ds", "runs", "dQ has one row per query, (..., m, d_k): "
         "it is dS K / √d_k, with dS as it is; dSᵀ belongs to dK.")
def _dq_t(dS, K):
    return _t(dS) @ K / math.sqrt(K.shape[-1])


@mistake("backward_dk", "backward_dk.unscaled", "small", "S = Q Kᵀ / √d_k, so dK = dSᵀ Q carries the "
         "factor 1/√d_k too: divide by math.sqrt(Q.shape[-1]).")
def _dk_unscaled(dS, Q):
    return _t(dS) @ Q


@mistake("backward_dk", "backward_dk.transposed", "returns", "dK has one row per key, (..., n, d_k): it "
         "is dSᵀ Q / √d_k, not its transpose Qᵀ dS.")
def _dk_t(dS, Q):
    return _t(Q) @ dS / math.sqrt(Q.shape[-1])


@mistake("backward_dk", "backward_dk.no-transpose", "runs", "K enters S through Kᵀ, so its gradient "
         "takes dS transposed: dK = np.swapaxes(dS, -1, -2) @ Q / √d_k.")
def _dk_no_t(dS, Q):
    return dS @ Q / math.sqrt(Q.shape[-1])
