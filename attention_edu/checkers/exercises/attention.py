"""Checker for the scaled dot-product attention exercise, with its misconceptions.

The student writes ``scaled_dot_product_attention(Q, K, V, mask=None)`` returning ``(output,
weights)``: softmax(Q Kᵀ / √d_k) V with the mask (True = may attend) applied before the softmax
and a fully masked row giving zero weights ("Attention Mechanisms: Fundamentals", section "Scaled
Dot-Product Attention"; "The matrix formulation of scaled dot-product attention", its exercise).

Examples
--------
>>> import attention_edu as ae
>>> from attention_edu.checkers import check_scaled_dot_product_attention
>>> check_scaled_dot_product_attention(ae.scaled_dot_product_attention).passed
True
>>> check_scaled_dot_product_attention(ae.dot_product_attention).hint_id
'attention.unscaled'
"""

from __future__ import annotations

import math

from ...backend import host_numpy as np
from ...dot_product import scaled_dot_product_attention as reference_attention
from ...masks import causal_mask, padding_mask
from ...softmax import softmax
from .host_attention import attend, weigh
from ..diagnosis.mutants import mistake
from ..records import Case, Exercise, Property

__all__ = ["SCALED_DOT_PRODUCT_ATTENTION"]

_NAMES = ("Q", "K", "V", "mask")


def _normal(seed: int, *shapes: tuple[int, ...], scale: float = 1.0) -> list:
    rng = np.random.default_rng(seed)
    return [scale * rng.standard_normal(shape) for shape in shapes]


def _cases() -> list[Case]:
    Q = np.array([[1.0, 0.5, -0.3, 0.8], [0.0, 1.0, 0.0, -1.0]])
    K = np.array([[0.8, 0.2, -0.1, 0.5], [0.3, 0.7, 0.4, -0.2], [-0.5, 0.1, 0.9, 0.6]])
    V = np.array([[0.5, 0.8, -0.2, 0.6, 0.3], [0.2, -0.4, 0.7, 0.1, 0.9], [-0.3, 0.5, 0.4, -0.6, 0.2]])
    cases = [Case("small", "m = 2, n = 3, d_k = 4, d_v = 5", (Q, K, V), _NAMES[:3], literal=True,
                  note="Query 0, K and V are the chapter's scaled dot-product example (weights "
                       "0.482, 0.298, 0.220).")]
    for seed, (m, n, d_k, d_v) in ((1, (3, 5, 4, 2)), (2, (4, 2, 3, 6)), (3, (5, 3, 2, 4))):
        args = tuple(_normal(seed, (m, d_k), (n, d_k), (n, d_v)))
        cases.append(Case("random", f"seed {seed}, m={m} n={n} d_k={d_k} d_v={d_v}", args, _NAMES[:3]))
    args = tuple(a.astype(np.float32) for a in _normal(4, (2, 4), (3, 4), (3, 5)))
    cases.append(Case("random", "float32, m=2 n=3 d_k=4 d_v=5", args, _NAMES[:3]))
    batched = (("3-D, B=2 m=3 n=5 d_k=4 d_v=6", ((2, 3, 4), (2, 5, 4), (2, 5, 6))),
               ("4-D, B=2 H=3 m=4 n=6 d_k=5 d_v=7", ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7))))
    for seed, (title, shapes) in enumerate(batched, start=5):
        cases.append(Case("batched", title, tuple(_normal(seed, *shapes)), _NAMES[:3]))
    big = tuple(_normal(7, (3, 4), (5, 4), scale=30.0)) + tuple(_normal(8, (5, 2)))
    cases.append(Case("stability", "scores of size about 1000", big, _NAMES[:3]))
    Q, K, V = _normal(9, (4, 3), (4, 3), (4, 2))
    cases.append(Case("masks", "causal mask, m = n = 4", (Q, K, V, causal_mask(4)), _NAMES))
    Q, K, V = _normal(10, (2, 3, 4), (2, 5, 4), (2, 5, 2))
    cases.append(Case("masks", "padding mask (2, 1, 5), lengths 3 and 5",
                      (Q, K, V, padding_mask(np.array([3, 5]), 5)), _NAMES))
    Q, K, V = _normal(11, (3, 2), (4, 2), (4, 3))
    mask = np.array([[True, False, True, True], [False, False, False, False], [True, True, False, True]])
    cases.append(Case("masks", "query 1 fully masked", (Q, K, V, mask), _NAMES,
                      note="A fully masked query must get zero weights and a zero output."))
    return cases


def _rows_sum_to_one(student) -> str | None:
    _, weights = student(*_normal(21, (6, 3), (4, 3), (4, 2), scale=2.0))
    sums = np.sum(weights, axis=-1)
    if np.all(weights >= 0) and np.allclose(sums, 1.0, atol=1e-5):
        return None
    return f"row sums of the weights: {np.array2string(sums, precision=4)}"


def _future_keys(student) -> str | None:
    Q, K, V = _normal(22, (5, 3), (5, 3), (5, 2))
    K2, V2 = K.copy(), V.copy()
    K2[4], V2[4] = K[4] + 3.0, V[4] - 2.0                      # change only the last key and value
    (out, _), (out2, _) = student(Q, K, V, causal_mask(5)), student(Q, K2, V2, causal_mask(5))
    if np.allclose(out[:4], out2[:4], rtol=1e-4, atol=1e-6):
        return None
    rows = np.argwhere(~np.isclose(out[:4], out2[:4], rtol=1e-4, atol=1e-6))[:, 0]
    return f"changing key/value 4 changed the output of earlier queries {sorted(set(rows.tolist()))}"


def _key_order(student) -> str | None:
    Q, K, V = _normal(23, (3, 4), (6, 4), (6, 2))
    order = np.array([3, 0, 5, 4, 1, 2])
    (out, w), (out2, w2) = student(Q, K, V), student(Q, K[order], V[order])
    if np.allclose(out, out2, rtol=1e-4, atol=1e-6) and np.allclose(w[:, order], w2, rtol=1e-4, atol=1e-6):
        return None
    return "reordering the keys and values together changed the output (or did not reorder the weights)"


SCALED_DOT_PRODUCT_ATTENTION = Exercise(
    name="scaled_dot_product_attention", notebook="02_scaled_dot_product_attention", number=1,
    summary='Check ``scaled_dot_product_attention(Q, K, V, mask=None) -> (output, weights)``.',
    signature="scaled_dot_product_attention(Q, K, V, mask=None) -> (output (..., m, d_v), weights (..., m, n))",
    reference=reference_attention,
    outputs=("output", "weights"),
    cases=_cases,
    properties=(
        Property("attention.property-rows", "weights are non-negative and rows sum to 1",
                 "Each query's weights must be non-negative and add up to 1 over the keys.",
                 _rows_sum_to_one),
        Property("attention.property-causal", "under a causal mask later keys cannot change earlier outputs",
                 "With a causal mask query i must not see keys after i, so changing the last key "
                 "and value may only change the last output row.", _future_keys),
        Property("attention.property-key-order", "reordering keys and values together changes nothing",
                 "Attention treats the keys as a set: permuting K and V by the same order must leave "
                 "the output unchanged and permute the weight columns.", _key_order),
    ),
    row_sums=("weights",),
)


# -- misconceptions -------------------------------------------------------------------------------

def _m(id: str, probe: str, hint: str):
    return mistake("scaled_dot_product_attention", "attention." + id, probe, hint)


@_m("unscaled", "small", "Your scores are not divided by √d_k: scale Q Kᵀ by 1/√d_k (d_k = Q.shape[-1]) "
    "before the softmax.")
def _unscaled(Q, K, V, mask=None):
    return attend(Q, K, V, mask, scale=1.0)


@_m("scale-by-d_k", "small", "You divide the scores by d_k; the scale is its square root, "
    "math.sqrt(Q.shape[-1]).")
def _scale_d(Q, K, V, mask=None):
    return attend(Q, K, V, mask, scale=Q.shape[-1])


@_m("scale-by-d_v", "small", "The scale is 1/√d_k, the size of the queries and keys (Q.shape[-1]); you "
    "divide by the square root of d_v, the size of the values.")
def _scale_v(Q, K, V, mask=None):
    return attend(Q, K, V, mask, scale=math.sqrt(V.shape[-1]))


@_m("np-dot", "returns", "np.dot pairs every batch entry with every other: use the @ operator (np.matmul), "
    "which multiplies the last two axes batch by batch.")
def _np_dot(Q, K, V, mask=None):
    scores = np.dot(Q, np.swapaxes(K, -1, -2)) / math.sqrt(Q.shape[-1])
    weights = softmax(scores if mask is None else np.where(mask, scores, -np.inf))
    return np.dot(weights, V), weights


@_m("scale-wrong-axis", "small", "You scale by the square root of Q.shape[0], the number of queries; "
    "d_k is the last axis, Q.shape[-1].")
def _scale_m(Q, K, V, mask=None):
    return attend(Q, K, V, mask, scale=math.sqrt(Q.shape[0]))


@_m("softmax-over-queries", "small", "Your weights sum to 1 over the queries (axis -2); softmax over the "
    "keys, the last axis of the scores.")
def _over_queries(Q, K, V, mask=None):
    return attend(Q, K, V, mask, axis=-2)


@_m("transposed-scores", "returns", "Your weights have shape (n, m): compute the scores as Q Kᵀ so that "
    "rows are queries and columns are keys, (m, n).")
def _k_q(Q, K, V, mask=None):
    out, weights = attend(Q, K, V, mask)
    return out, np.swapaxes(weights, -1, -2)


@_m("weights-times-keys", "returns", "Your output mixes the keys: the weighted sum runs over the values, "
    "weights @ V.")
def _mix_keys(Q, K, V, mask=None):
    _, weights = attend(Q, K, V, mask)
    return weights @ K, weights


@_m("returns-swapped", "returns", "Return the pair in the order (output, weights).")
def _swapped(Q, K, V, mask=None):
    out, weights = attend(Q, K, V, mask)
    return weights, out


@_m("returns-scores", "small", "Your second value is the scaled scores before the softmax; return the "
    "weights, softmax(Q Kᵀ / √d_k).")
def _scores(Q, K, V, mask=None):
    out, _ = attend(Q, K, V, mask)
    return out, Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])


@_m("unstable-softmax", "stability", "exp overflows once scores reach about 710, and inf / inf is NaN: "
    "subtract each row's maximum score before exp.")
def _unstable(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    e = np.exp(scores)                                        # no max shift
    weights = e / np.sum(e, axis=-1, keepdims=True)
    return weights @ V, weights


@_m("batched-transpose", "runs", "On batched input .T reverses every axis, batch axes included: swap only "
    "the last two with np.swapaxes(K, -1, -2).")
def _dot_t(Q, K, V, mask=None):
    return weigh(Q @ K.T / math.sqrt(Q.shape[-1]), V, mask)


@_m("no-transpose", "runs", "The scores pair every query with every key, Q Kᵀ: transpose K's last two axes, "
    "Q @ np.swapaxes(K, -1, -2); Q @ K only fits when d_k = n.")
def _no_transpose(Q, K, V, mask=None):
    return weigh(Q @ K / math.sqrt(Q.shape[-1]), V, mask)                # raises, as the slip does


@_m("ignores-mask", "masks", "Your function ignores mask: put -inf at the scores where the mask is False, "
    "before the softmax.")
def _no_mask(Q, K, V, mask=None):
    return attend(Q, K, V)


@_m("inverted-mask", "masks", "True means 'may attend': keep the scores where the mask is True and fill "
    "-inf where it is False, np.where(mask, scores, -np.inf).")
def _inverted(Q, K, V, mask=None):
    return attend(Q, K, V, None if mask is None else ~mask)


@_m("mask-after-softmax", "masks", "Zeroing weights after the softmax leaves rows that no longer sum to 1: "
    "mask the scores with -inf before the softmax.")
def _after(Q, K, V, mask=None):
    _, weights = attend(Q, K, V)
    weights = weights if mask is None else weights * mask
    return weights @ V, weights


@_m("mask-times-scores", "masks", "Multiplying the scores by the mask turns masked scores into 0, which "
    "still gets weight: put -inf there instead (np.where).")
def _times(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    return weigh(scores if mask is None else scores * mask, V)


@_m("finite-fill", "masks", "A large negative fill such as -1e9 spreads a fully masked row evenly over "
    "its keys; fill with -inf and give such a row zero weights and a zero output.")
def _finite(Q, K, V, mask=None):
    return attend(Q, K, V, mask, fill=-1e9)


@_m("masked-row-nan", "masks", "A fully masked row gives -inf - (-inf) = NaN: where a row's maximum is "
    "-inf subtract 0 instead, and divide by 1 where the sum is 0, so its weights are zeros.")
def _nan_row(Q, K, V, mask=None):
    return attend(Q, K, V, mask, guard=False)
