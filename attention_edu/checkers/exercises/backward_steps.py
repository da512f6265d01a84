"""Checkers for the backward derivation one intermediate at a time (exercise notebook 06), with their mistakes.

Before the whole ``attention_backward`` the student derives, each with its own stub and check, the softmax
Jacobian ``softmax_jacobian(w)``, then, for S = Q Kᵀ / √d_k, W = softmax(S), O = W V and the gradient d_output
arriving at O, ``backward_dv``, ``backward_dw``, ``backward_ds``, ``backward_dq`` and ``backward_dk``: the
references :func:`jacobian`, :func:`grad_v` … :func:`grad_k` below (the Jacobian is the "Gradient Flow
Analysis" of "Attention Mechanisms: Fundamentals", section "Scaled Dot-Product Attention"; the rest is the
chain rule through the forward pass of "The matrix formulation of scaled dot-product attention").

>>> from attention_edu.checkers import CHECKERS
>>> CHECKERS["softmax_jacobian"](lambda w: -jacobian(w)).hint_id
'softmax_jacobian.sign'
"""

import math

from ...backend import host_numpy as np
from ...masks import causal_mask, padding_mask
from ...softmax import softmax
from . import attend, normal_arrays, register_mistakes, variant
from ..records import Case, Exercise
from .attention import qkv

__all__ = ["SOFTMAX_JACOBIAN", "BACKWARD_DV", "BACKWARD_DW", "BACKWARD_DS", "BACKWARD_DQ", "BACKWARD_DK",
           "jacobian", "grad_v", "grad_w", "grad_s", "grad_q", "grad_k", "SOFTMAX_BACKWARDS", "CROSS_ENTROPY"]


def jacobian(w):
    """The softmax Jacobian of each row of ``w`` (..., n): J[..., i, j] = wᵢ(δᵢⱼ − wⱼ), (..., n, n)."""
    return w[..., :, None] * (np.eye(w.shape[-1]) - w[..., None, :])


def grad_v(W, d_output):
    """dV = Wᵀ d_output."""
    return np.matrix_transpose(W) @ d_output


def grad_w(V, d_output):
    """dW = d_output Vᵀ."""
    return d_output @ np.matrix_transpose(V)


def grad_s(W, dW):
    """dS = W ⊙ (dW − rowsum(dW ⊙ W)), the softmax backward row by row."""
    return W * (dW - np.sum(dW * W, axis=-1, keepdims=True))


def grad_q(dS, K):
    """dQ = dS K / √d_k."""
    return dS @ K / math.sqrt(K.shape[-1])


def grad_k(dS, Q):
    """dK = dSᵀ Q / √d_k."""
    return np.matrix_transpose(dS) @ Q / math.sqrt(Q.shape[-1])


#: dS from W and dW: the softmax backward ("full") and the ways it goes wrong.
SOFTMAX_BACKWARDS = {
    "full": grad_s,
    "diagonal": lambda W, dW: W * dW,                                            # the Jacobian's diagonal
    "p(1-p)": lambda W, dW: W * (1 - W) * dW,
    "sign": lambda W, dW: W * (dW + np.sum(dW * W, axis=-1, keepdims=True)),
    "unweighted": lambda W, dW: W * (dW - np.sum(dW, axis=-1, keepdims=True)),
    "queries": lambda W, dW: W * (dW - np.sum(dW * W, axis=-2, keepdims=True)),  # rowsum over the queries
    "none": lambda W, dW: dW,
    "cross-entropy": lambda W, dW: W - dW,                                       # P − Y, dW read as the targets
}
#: The hint for dS = W − dW: the softmax's gradient under a cross-entropy loss, not under any dW.
CROSS_ENTROPY = ("W − dW is the gradient of a softmax followed by cross-entropy (P − Y, with dW as the targets Y); "
                 "here dW is the gradient arriving at W from above, so dS = W ⊙ (dW − rowsum(dW ⊙ W)).")


def _step_cases(names: tuple[str, ...]) -> list[Case]:
    """The cases of one step: its inputs ``names``, picked from the forward's and backward's arrays."""
    padding = np.broadcast_to(padding_mask(np.array([3, 5]), 5), (2, 3, 5)).copy()
    padding[0, 1] = False                                                    # query 1 of entry 0 fully masked
    specs = [("small", "m=2 n=3 d_k=4 d_v=5", 0, (), (2, 3, 4, 5), None)]
    specs += [("random", f"seed {s}, m={m} n={n} d_k={k} d_v={v}", s, (), (m, n, k, v), None)
              for s, (m, n, k, v) in ((1, (3, 5, 4, 2)), (2, (4, 2, 3, 6)), (3, (5, 3, 2, 4)))]
    specs += [("random", "float32, m=2 n=3 d_k=4 d_v=5", 4, (), (2, 3, 4, 5), None),
              ("batched", "3-D, B=1 m=3 n=5 d_k=4 d_v=6", 5, (1,), (3, 5, 4, 6), None),
              ("batched", "4-D, B=2 H=3 m=4 n=6 d_k=5 d_v=7", 6, (2, 3), (4, 6, 5, 7), None),
              ("masks", "causal mask, m = n = 4", 9, (), (4, 4, 3, 2), causal_mask(4)),
              ("masks", "padding mask, lengths 3 and 5, with query 1 of entry 0 fully masked", 10, (2,),
               (3, 5, 4, 2), padding)]
    cases = []
    for probe, title, seed, lead, sizes, mask in specs:
        Q, K, V, dO = qkv(seed, lead, *sizes, d_output=True)
        _, W = attend(Q, K, V, mask)                                             # (..., m, n)
        dW = grad_w(V, dO)
        arrays = {"Q": Q, "K": K, "V": V, "d_output": dO, "W": W, "dW": dW, "dS": grad_s(W, dW)}
        if title.startswith("float32"):
            arrays = {name: a.astype(np.float32) for name, a in arrays.items()}
        cases.append(Case(probe, title, tuple(arrays[n] for n in names), names, literal=probe == "small"))
    return cases


def _jacobian_cases() -> list[Case]:
    chapter = softmax(np.array([0.665, 0.185, -0.12]))
    cases = [Case("small", "the chapter's weights (0.482, 0.298, 0.220)", (chapter,), ("w",), literal=True)]
    for probe, seed, shape in (("random", 1, (4,)), ("random", 2, (5,)), ("random", 3, (2,)),
                               ("batched", 5, (1, 4)), ("batched", 6, (2, 3, 5))):
        title = f"seed {seed}, w {shape}" if probe == "random" else f"{len(shape)}-D w {shape}"
        cases.append(Case(probe, title, (softmax(normal_arrays(seed, shape)[0]),), ("w",)))
    cases.append(Case("masks", "a row with a zero weight", (np.array([0.5, 0.0, 0.5]),), ("w",), literal=True))
    return cases


def _exercise(name: str, number: int, signature: str, reference, outputs: tuple[str, ...], cases) -> Exercise:
    return Exercise(name=name, notebook="06_attention_backward", number=number, summary=f"Check ``{signature}``.",
                    signature=signature, reference=reference, outputs=outputs, cases=cases)


SOFTMAX_JACOBIAN = _exercise("softmax_jacobian", 1, "softmax_jacobian(w) -> J (..., n, n)", jacobian, ("J",),
                             _jacobian_cases)
BACKWARD_DV = _exercise("backward_dv", 2, "backward_dv(W, d_output) -> dV (..., n, d_v)", grad_v, ("dV",),
                        lambda: _step_cases(("W", "d_output")))
BACKWARD_DW = _exercise("backward_dw", 3, "backward_dw(V, d_output) -> dW (..., m, n)", grad_w, ("dW",),
                        lambda: _step_cases(("V", "d_output")))
BACKWARD_DS = _exercise("backward_ds", 4, "backward_ds(W, dW) -> dS (..., m, n)", grad_s, ("dS",),
                        lambda: _step_cases(("W", "dW")))
BACKWARD_DQ = _exercise("backward_dq", 5, "backward_dq(dS, K) -> dQ (..., m, d_k)", grad_q, ("dQ",),
                        lambda: _step_cases(("dS", "K")))
BACKWARD_DK = _exercise("backward_dk", 6, "backward_dk(dS, Q) -> dK (..., n, d_k)", grad_k, ("dK",),
                        lambda: _step_cases(("dS", "Q")))


# -- misconceptions, each naming its step ---------------------------------------------------------

def _upper_zeroed(dS):
    """``dS`` with a decoder's upper triangle set to 0, as ``dS[np.triu_indices(n, k=1)] = 0`` does."""
    dS[np.triu_indices(dS.shape[-1], k=1)] = 0
    return dS


register_mistakes("softmax_jacobian", (
    ("sign", "small", lambda w: -jacobian(w),
     "Your Jacobian has the opposite sign: raising sᵢ raises wᵢ, so the diagonal wᵢ(1 − wᵢ) is positive "
     "and J = diag(w) − w wᵀ."),
    ("diagonal-only", "small", lambda w: (w * (1 - w))[..., :, None] * np.eye(w.shape[-1]),
     "Every weight depends on every score (they share the denominator): keep the off-diagonal entries "
     "−wᵢwⱼ, J = diag(w) − w wᵀ."),
    ("no-diagonal", "small", lambda w: -w[..., :, None] * w[..., None, :],
     "You left out diag(w): the derivative of wᵢ = exp(sᵢ)/Σ by its own score has an extra wᵢ, so "
     "J = diag(w) − w wᵀ."),
    ("column-squared", "small", lambda w: w[..., :, None] * np.eye(w.shape[-1]) - w[..., :, None] ** 2,
     "Your off-diagonal entries are −wᵢ², the same along each row: the outer product w wᵀ multiplies a column "
     "by a row, w[..., :, None] * w[..., None, :], not a column by itself."),
    ("dot-not-outer", "small", lambda w: w[..., :, None] * np.eye(w.shape[-1]) - np.sum(w * w, -1)[..., None, None],
     "Your w wᵀ is one number, w·w, taken from every entry: for a 1-D w, w.T is w itself, so np.dot(w, w.T) "
     "is a dot product; the outer product is np.outer(w, w), or w[..., :, None] * w[..., None, :] for batches."),
    ("softmax-again", "small", lambda w: jacobian(softmax(w)),
     "Your J is the Jacobian at softmax(w): w already holds the softmax weights, so build J = diag(w) − w wᵀ "
     "from w itself, without a softmax."),
))
register_mistakes("backward_dv", (
    ("transposed", "returns", lambda W, d_output: np.matrix_transpose(d_output) @ W,
     "dV has one row per value, (..., n, d_v): it is Wᵀ d_output, not d_outputᵀ W."),
    ("no-transpose", "runs", lambda W, d_output: W @ d_output,
     "O = W V sends d_output back to V through Wᵀ: dV = np.swapaxes(W, -1, -2) @ d_output; W @ d_output "
     "pairs the wrong axes (and NumPy's W.transpose(-2, -1), unlike PyTorch's, leaves a matrix as it is)."),
    ("batched-transpose", "runs", lambda W, d_output: W.T @ d_output,
     "On batched input .T reverses every axis: transpose only the last two, np.swapaxes(W, -1, -2) @ d_output."),
    ("column-layout", "runs", lambda W, d_output: d_output @ W,
     "d_output @ W is the gradient for states stored as columns; here the values are V's rows, (..., n, d_v), and "
     "dV = Wᵀ d_output: np.swapaxes(W, -1, -2) @ d_output."),
))
variant("backward_dv.no-transpose")(np.dot)                                  # np.dot(W, d_output)
register_mistakes("backward_dw", (
    ("transposed", "returns", lambda V, d_output: V @ np.matrix_transpose(d_output),
     "dW has the shape of W, (..., m, n): it is d_output Vᵀ, not V d_outputᵀ."),
    ("no-transpose", "runs", lambda V, d_output: d_output @ V,
     "O = W V sends d_output back to W through Vᵀ: dW = d_output @ np.swapaxes(V, -1, -2) (NumPy's "
     "V.transpose(-2, -1), unlike PyTorch's, leaves a matrix as it is)."),
))
register_mistakes("backward_ds", (
    ("diagonal", "small", SOFTMAX_BACKWARDS["diagonal"],
     "Your dS = W ⊙ dW keeps only part of the softmax Jacobian: subtract each row's weighted mean, "
     "dS = W ⊙ (dW − rowsum(dW ⊙ W))."),
    ("p-one-minus-p", "small", SOFTMAX_BACKWARDS["p(1-p)"],
     "p(1 − p) is only the Jacobian's diagonal; each weight also depends on the other scores: "
     "dS = W ⊙ (dW − rowsum(dW ⊙ W))."),
    ("sign", "small", SOFTMAX_BACKWARDS["sign"],
     "Your dS has the rowsum term with the wrong sign: dS = W ⊙ (dW − rowsum(dW ⊙ W))."),
    ("rowsum-unweighted", "small", SOFTMAX_BACKWARDS["unweighted"],
     "The term subtracted is the weighted mean rowsum(dW ⊙ W), not rowsum(dW): multiply by W before summing."),
    ("wrong-axis", "small", SOFTMAX_BACKWARDS["queries"],
     "The softmax ran over the keys, so the sum in its backward runs over the keys too: "
     "np.sum(dW * W, axis=-1, keepdims=True)."),
    ("whole-array-sum", "small", lambda W, dW: W * (dW - np.sum(dW * W)),
     "np.sum with no axis adds up the whole array: each row subtracts its own weighted mean, "
     "np.sum(dW * W, axis=-1, keepdims=True)."),
    ("single-vector", "runs", lambda W, dW: W * (dW - np.dot(dW, W)),
     "Your code is written for one row: on a matrix np.dot(dW, W) is a matrix product, and np.diag takes "
     "a diagonal and np.outer flattens; use np.sum(dW * W, axis=-1, keepdims=True) for every row at once."),
    ("missing-keepdims", "runs", lambda W, dW: W * (dW - np.sum(dW * W, axis=-1)),
     "The row sums need keepdims=True, shape (..., m, 1), so that each row subtracts its own: without it they "
     "have shape (..., m) and line up with the keys' axis, np.sum(dW * W, axis=-1, keepdims=True)."),
    ("no-softmax", "small", lambda W, dW: dW + 0.0,
     "dS is not dW: the softmax between S and W has a Jacobian too, dS = W ⊙ (dW − rowsum(dW ⊙ W))."),
    ("cross-entropy", "small", SOFTMAX_BACKWARDS["cross-entropy"], CROSS_ENTROPY),
    ("softmax-again", "small", lambda W, dW: grad_s(softmax(W), dW),
     "W already holds the softmax's output: use it as it is, dS = W ⊙ (dW − rowsum(dW ⊙ W)), without another softmax."),
    ("causal-zeroed", "small", lambda W, dW: _upper_zeroed(grad_s(W, dW)),
     "Your dS is 0 above the diagonal: the causal mask belongs to the forward pass, whose weights are 0 there "
     "already (so W ⊙ (...) is too); here dS = W ⊙ (dW − rowsum(dW ⊙ W)) everywhere, with no mask of its own."),
))
variant("backward_ds.cross-entropy")(lambda W, dW: (W - dW) / W.shape[-2])       # averaged over the rows
# one vector's Jacobian, diag(w) - w wᵀ, on a matrix (np.diag of a matrix is its diagonal; np.diagonal does
# not raise as np.diag does on 3-D input, where code that loops over columns is not named by this mistake)
variant("backward_ds.single-vector")(lambda W, dW: dW @ (np.diagonal(W) - np.outer(W, W)))
variant("backward_ds.softmax-again")(          # each column's, the softmax over axis -2 (hint study 44's 28)
    lambda W, dW: np.matrix_transpose(grad_s(np.matrix_transpose(softmax(W, -2)), np.matrix_transpose(dW))))
variant("backward_ds.softmax-again")(lambda W, dW: grad_s(softmax(W, -2), dW))      # by columns, in the row formula
register_mistakes("backward_dq", (
    ("unscaled", "small", lambda dS, K: dS @ K,
     "S = Q Kᵀ / √d_k, so dQ = dS K carries the factor 1/√d_k too: divide by math.sqrt(K.shape[-1])."),
    ("scale-by-d_k", "small", lambda dS, K: dS @ K / K.shape[-1],
     "The factor is 1/√d_k, not 1/d_k: divide by math.sqrt(K.shape[-1])."),
    ("transposed-ds", "runs", lambda dS, K: np.matrix_transpose(dS) @ K / math.sqrt(K.shape[-1]),
     "dQ has one row per query, (..., m, d_k): it is dS K / √d_k, with dS as it is; dSᵀ belongs to dK."),
    ("scale-by-n", "small", lambda dS, K: dS @ K / math.sqrt(K.shape[-2]),
     "The factor is 1/√d_k with d_k = K.shape[-1], the keys' width; K.shape[-2] (and dS.shape[-1]) is n, the number "
     "of keys."),
    ("scale-fixed-axis", "batched", lambda dS, K: dS @ K / math.sqrt(K.shape[1]),
     "You take d_k from K.shape[1], which is d_k only for 2-D input: count from the end, d_k = K.shape[-1]."),
    ("column-layout", "runs", lambda dS, K: K @ np.matrix_transpose(dS) / math.sqrt(K.shape[-1]),
     "K @ dSᵀ is the gradient for states stored as columns; here the queries are Q's rows, (..., m, d_k), and "
     "dQ = dS K / √d_k: dS @ K / math.sqrt(K.shape[-1])."),
))
register_mistakes("backward_dk", (
    ("unscaled", "small", lambda dS, Q: np.matrix_transpose(dS) @ Q,
     "S = Q Kᵀ / √d_k, so dK = dSᵀ Q carries the factor 1/√d_k too: divide by math.sqrt(Q.shape[-1])."),
    ("transposed", "returns", lambda dS, Q: np.matrix_transpose(Q) @ dS / math.sqrt(Q.shape[-1]),
     "dK has one row per key, (..., n, d_k): it is dSᵀ Q / √d_k, not its transpose Qᵀ dS."),
    ("no-transpose", "runs", lambda dS, Q: dS @ Q / math.sqrt(Q.shape[-1]),
     "K enters S through Kᵀ, so its gradient takes dS transposed: dK = np.swapaxes(dS, -1, -2) @ Q / √d_k (NumPy's "
     "dS.transpose(-2, -1), unlike PyTorch's, leaves a matrix as it is)."),
    ("scale-by-n", "small", lambda dS, Q: np.matrix_transpose(dS) @ Q / math.sqrt(dS.shape[-1]),
     "The factor is 1/√d_k with d_k = Q.shape[-1], the queries' width; dS.shape[-1] is n, the number of keys."),
    ("scale-fixed-axis", "batched", lambda dS, Q: np.matrix_transpose(dS) @ Q / math.sqrt(Q.shape[1]),
     "You take d_k from Q.shape[1], which is d_k only for 2-D input: count from the end, d_k = Q.shape[-1]."),
    ("column-layout", "runs", lambda dS, Q: Q @ dS / math.sqrt(Q.shape[-1]),
     "Q @ dS is the gradient for states stored as columns; here the keys are K's rows, (..., n, d_k), and "
     "dK = dSᵀ Q / √d_k: np.swapaxes(dS, -1, -2) @ Q / math.sqrt(Q.shape[-1])."),
))
