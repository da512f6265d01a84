"""Checker for scaled dot-product attention (exercise notebook 02), with its misconceptions.

The student writes ``scaled_dot_product_attention(Q, K, V, mask=None)`` returning ``(output, weights)``:
softmax(Q Kᵀ / √d_k) V with the mask (True = may attend) applied before the softmax and a fully masked
row giving zero weights ("Attention Mechanisms: Fundamentals", section "Scaled Dot-Product Attention";
"The matrix formulation of scaled dot-product attention", its exercise).

>>> import attention_edu as ae
>>> from attention_edu.checkers import check_scaled_dot_product_attention as check
>>> check(ae.dot_product_attention).hint_id
'attention.unscaled'
>>> check(partial(attend, inverted=True, fill=-1e9, additive=True)).hint_id
'attention.inverted-mask-finite-fill'
"""

import math
from functools import partial

from ...backend import host_numpy as np
from ...dot_product import scaled_dot_product_attention as reference_attention
from ...masks import causal_mask, padding_mask
from ...softmax import softmax
from . import attend, normal_arrays, register_mistakes, scaled_scores, variant, weigh
from ..records import Case, Exercise, Property

__all__ = ["SCALED_DOT_PRODUCT_ATTENTION", "CAUSAL_WHEN_NO_MASK", "chapter_example", "qkv", "qkv_cases",
           "unnormalised_rows"]


def chapter_example() -> tuple:
    """Q (2, 4), K (3, 4), V (3, 5): query 0, K and V are the chapter's scaled dot-product example."""
    Q = np.array([[1.0, 0.5, -0.3, 0.8], [0.0, 1.0, 0.0, -1.0]])
    K = np.array([[0.8, 0.2, -0.1, 0.5], [0.3, 0.7, 0.4, -0.2], [-0.5, 0.1, 0.9, 0.6]])
    V = np.array([[0.5, 0.8, -0.2, 0.6, 0.3], [0.2, -0.4, 0.7, 0.1, 0.9], [-0.3, 0.5, 0.4, -0.6, 0.2]])
    return Q, K, V


def qkv(seed: int, lead: tuple, m: int, n: int, d_k: int, d_v: int, d_output: bool = False) -> tuple:
    """Q (..., m, d_k), K (..., n, d_k), V (..., n, d_v) and, if asked, d_output (..., m, d_v), from ``seed``."""
    shapes = ((m, d_k), (n, d_k), (n, d_v)) + (((m, d_v),) if d_output else ())
    return normal_arrays(seed, *(lead + shape for shape in shapes))


def qkv_cases(names: tuple[str, ...], small: tuple, notes: dict[str, str]) -> list[Case]:
    """The cases of attention (``names`` Q, K, V) or of its backward (Q, K, V, d_output, drawn after V):
    the chapter's example ``small``, random sizes, float32, batched, large scores, three masks."""
    with_d_output = "d_output" in names
    draw = partial(qkv, d_output=with_d_output)
    Q, K = normal_arrays(7, (3, 4), (5, 4), scale=30.0)   # scores of about 1000, query 1's to 1600 summing to 700,
    large = (Q * np.array([[1.0], [2.0], [0.003]]), K)    # query 2's near 0: only a row's own maximum is safe
    rest = normal_arrays(8, (5, 2), (3, 2)) if with_d_output else normal_arrays(8, (5, 2))      # V (, d_output)
    fully = np.array([[True, False, True, True], [False, False, False, False], [True, True, False, True]])
    padding, padded = padding_mask(np.array([3, 5]), 5), draw(10, (2,), 3, 5, 4, 2)
    padded[1][0, 3:] = 1000 * padded[0][0, :2]   # entry 0's padding keys outscore the rest by 800+, and query 0
    causal = draw(9, (), 4, 4, 3, 2)             # of the causal case scores -1000 on key 0, the one key it sees:
    causal[0][0] = -1000 * math.sqrt(3) * causal[1][0] / (causal[1][0] @ causal[1][0])   # weight 1 all the same.
    # Only scores masked with -inf before the softmax, its maximum taken over them, give either its weights
    rows = [("small", "m = 2, n = 3, d_k = 4, d_v = 5", small)]
    for seed, (m, n, d_k, d_v) in ((1, (3, 5, 4, 2)), (2, (4, 2, 3, 6)), (3, (5, 3, 2, 6))):
        rows.append(("random", f"seed {seed}, m={m} n={n} d_k={d_k} d_v={d_v}", draw(seed, (), m, n, d_k, d_v)))
    float32 = tuple(a.astype(np.float32) for a in draw(4, (), 2, 3, 4, 5))
    rows += [("random", "float32, m=2 n=3 d_k=4 d_v=5", float32),
             ("batched", "3-D, B=1 m=3 n=5 d_k=4 d_v=6", draw(5, (1,), 3, 5, 4, 6)),
             ("batched", "4-D, B=2 H=3 m=4 n=6 d_k=5 d_v=7", draw(6, (2, 3), 4, 6, 5, 7)),
             ("stability", "scores of size about 1000", large + rest),
             ("masks", "causal mask, m = n = 4", causal + (causal_mask(4),)),
             ("masks", "padding mask (2, 1, 5), lengths 3 and 5", padded + (padding,)),
             ("masks", "query 1 fully masked", draw(11, (), 3, 4, 2, 3) + (fully,))]
    return [Case(probe, title, args, (names + ("mask",)) if probe == "masks" else names,
                 literal=probe == "small", note=notes.get(title, "")) for probe, title, args in rows]


def _cases() -> list[Case]:
    notes = {"m = 2, n = 3, d_k = 4, d_v = 5": "Query 0, K and V are the chapter's scaled dot-product example "
                                               "(weights 0.482, 0.298, 0.220).",
             "query 1 fully masked": "A fully masked query must get zero weights and a zero output."}
    cases = qkv_cases(("Q", "K", "V"), chapter_example(), notes)
    padded = qkv(12, (2,), 3, 4, 3, 2) + (padding_mask(np.array([2, 4]), 4),)   # ignoring and inverting it differ
    cases.insert(-2, Case("masks", "padding mask (2, 1, 4), lengths 2 and 4", padded, ("Q", "K", "V", "mask")))
    heads = np.broadcast_to(causal_mask(3, 4), (2, 2, 3, 4)).copy()     # (B, H, m, n)
    heads[0, 1, 2] = False                                  # entry 0: query 2 sees every key in head 0, none in head 1
    cases.append(Case("masks", "4-D mask (2, 2, 3, 4), entry 0 head 1 query 2 fully masked",
                      qkv(13, (2, 2), 3, 4, 3, 2) + (heads,), ("Q", "K", "V", "mask"),
                      note="Batch and head axes come first: a query's keys are the last axis of the mask."))
    return cases


def unnormalised_rows(weights) -> str | None:
    """What is wrong with attention weights (..., m, n) whose rows are not distributions, or None."""
    sums = np.sum(weights, axis=-1)
    distributions = np.all(weights >= 0) and np.allclose(sums, 1.0, atol=1e-5)
    return None if distributions else f"row sums of the weights: {np.array2string(sums, precision=4)}"


def _future_keys(student) -> str | None:
    Q, K, V = normal_arrays(22, (5, 3), (5, 3), (5, 2))
    K2, V2 = K.copy(), V.copy()
    K2[4], V2[4] = K[4] + 3.0, V[4] - 2.0                      # change only the last key and value
    (out, _), (out2, _) = student(Q, K, V, causal_mask(5)), student(Q, K2, V2, causal_mask(5))
    if np.allclose(out[:4], out2[:4], rtol=1e-4, atol=1e-6):
        return None
    rows = np.argwhere(~np.isclose(out[:4], out2[:4], rtol=1e-4, atol=1e-6))[:, 0]
    return f"changing key/value 4 changed the output of earlier queries {sorted(set(rows.tolist()))}"


def _key_order(student) -> str | None:
    Q, K, V = normal_arrays(23, (3, 4), (6, 4), (6, 2))
    order = np.array([3, 0, 5, 4, 1, 2])
    (out, w), (out2, w2) = student(Q, K, V), student(Q, K[order], V[order])
    if np.allclose(out, out2, rtol=1e-4, atol=1e-6) and np.allclose(w[:, order], w2, rtol=1e-4, atol=1e-6):
        return None
    return "reordering the keys and values together changed the output (or did not reorder the weights)"


SCALED_DOT_PRODUCT_ATTENTION = Exercise(
    name="scaled_dot_product_attention", notebook="02_scaled_dot_product_attention", number=1,
    summary='Check ``scaled_dot_product_attention(Q, K, V, mask=None) -> (output, weights)``.',
    signature="scaled_dot_product_attention(Q, K, V, mask=None) -> (output (..., m, d_v), weights (..., m, n))",
    reference=reference_attention, outputs=("output", "weights"), row_sums=("weights",), cases=_cases,
    properties=(
        Property("attention.property-rows", "weights are non-negative and rows sum to 1",
                 "Each query's weights must be non-negative and add up to 1 over the keys.",
                 lambda student: unnormalised_rows(student(*normal_arrays(21, (6, 3), (4, 3), (4, 2), scale=2.0))[1])),
        Property("attention.property-causal", "under a causal mask later keys cannot change earlier outputs",
                 "With a causal mask query i must not see keys after i, so changing the last key "
                 "and value may only change the last output row.", _future_keys),
        Property("attention.property-key-order", "reordering keys and values together changes nothing",
                 "Attention treats the keys as a set: permuting K and V by the same order must leave "
                 "the output unchanged and permute the weight columns.", _key_order),
    ),
)


# -- misconceptions -------------------------------------------------------------------------------

def _np_dot(Q, K, V, mask=None):
    scores = np.dot(Q, np.swapaxes(K, -1, -2)) / math.sqrt(Q.shape[-1])
    weights = softmax(scores if mask is None else np.where(mask, scores, -np.inf))
    return np.dot(weights, V), weights


def _transposed_weights(Q, K, V, mask=None):
    out, weights = attend(Q, K, V, mask)
    return out, np.swapaxes(weights, -1, -2)


def _mask_after_softmax(Q, K, V, mask=None):
    _, weights = attend(Q, K, V)
    weights = weights if mask is None else weights * mask
    return weights @ V, weights


#: PyTorch's is_causal=True where no mask is given (hint study 31), in multi-head code too (hint study 33)
CAUSAL_WHEN_NO_MASK = ("With no mask (mask=None) every query sees every key: yours hides the later keys, as a causal "
                       "mask would; apply a mask only when one is given.")


register_mistakes("scaled_dot_product_attention", prefix="attention", table=(
    ("unscaled", "small", partial(attend, scale=1.0),
     "Your scores are not divided by √d_k: scale Q Kᵀ by 1/√d_k (d_k = Q.shape[-1]) before the softmax."),
    ("scale-by-d_k", "small", lambda Q, K, V, mask=None: attend(Q, K, V, mask, scale=Q.shape[-1]),
     "You divide the scores by d_k; the scale is its square root, math.sqrt(Q.shape[-1])."),
    ("scale-by-d_v", "small", lambda Q, K, V, mask=None: attend(Q, K, V, mask, scale=math.sqrt(V.shape[-1])),
     "The scale is 1/√d_k, the size of the queries and keys (Q.shape[-1]); you divide by the square "
     "root of d_v, the size of the values."),
    ("np-dot", "returns", _np_dot,
     "np.dot pairs every batch entry with every other: use the @ operator (np.matmul), which multiplies "
     "the last two axes batch by batch."),
    ("scale-wrong-axis", "small", lambda Q, K, V, mask=None: attend(Q, K, V, mask, scale=math.sqrt(Q.shape[0])),
     "You scale by the square root of Q.shape[0], the number of queries; d_k is the last axis, Q.shape[-1]."),
    ("scale-fixed-axis", "batched", lambda Q, K, V, mask=None: attend(Q, K, V, mask, scale=math.sqrt(Q.shape[1])),
     "You take d_k from Q.shape[1], which is d_k only for 2-D input (a batch puts the queries there): count from "
     "the end, d_k = Q.shape[-1]."),
    ("scale-by-n", "small", lambda Q, K, V, mask=None: attend(Q, K, V, mask, scale=math.sqrt(K.shape[-2])),
     "You scale by the square root of K.shape[-2], the number of keys n; d_k is the last axis, K.shape[-1]."),
    ("softmax-over-queries", "small", partial(attend, axis=-2),
     "Your weights sum to 1 over the queries (axis -2); softmax over the keys, the last axis of the scores."),
    ("softmax-over-everything", "small", partial(attend, axis=None),     # SciPy's softmax(x): axis=None (study 35's 09)
     "Your weights sum to 1 over the whole array, not per query: a softmax with no axis normalises over every entry; "
     "give it the keys' axis, axis=-1."),
    ("transposed-scores", "returns", _transposed_weights,
     "Your weights have shape (n, m): compute the scores as Q Kᵀ so that rows are queries and columns "
     "are keys, (m, n)."),
    ("weights-times-keys", "returns", lambda Q, K, V, mask=None: attend(Q, K, K, mask),
     "Your output mixes the keys: the weighted sum runs over the values, weights @ V."),
    ("returns-swapped", "returns", lambda Q, K, V, mask=None: attend(Q, K, V, mask)[::-1],
     "Return the pair in the order (output, weights)."),
    ("returns-scores", "small", lambda Q, K, V, mask=None: (attend(Q, K, V, mask)[0], scaled_scores(Q, K)),
     "Your second value is the scaled scores before the softmax; return the weights, softmax(Q Kᵀ / √d_k)."),
    ("unstable-softmax", "stability", partial(attend, naive=True),
     "exp overflows once scores reach about 710, and inf / inf is NaN: subtract each row's maximum "
     "score before exp."),
    ("batched-transpose", "runs", lambda Q, K, V, mask=None: weigh(Q @ K.T / math.sqrt(Q.shape[-1]), V, mask),
     "On batched input .T reverses every axis, batch axes included: swap only the last two with "
     "np.swapaxes(K, -1, -2).", r"\.\s*m?T\b|transpose\("),     # a transpose on the line (red team 83: not Q @ V)
    ("no-transpose", "runs", lambda Q, K, V, mask=None: weigh(Q @ K / math.sqrt(Q.shape[-1]), V, mask),
     "The scores pair every query with every key, Q Kᵀ: transpose K's last two axes, "
     "Q @ np.swapaxes(K, -1, -2); Q @ K only fits when d_k = n.",   # not Q @ V, whose error is the same (red team 83)
     r"^(?!.*(\b[Qq]\w*\s*@\s*|dot\(\s*[Qq]\w*\s*,\s*)(V|v|values?)\b)"),
    ("keys-times-queries", "runs", lambda Q, K, V, mask=None: weigh(K @ np.swapaxes(Q, -1, -2), V, mask),
     "Your scores are K Qᵀ, one row per key: compute Q Kᵀ, Q @ np.swapaxes(K, -1, -2), so that rows are "
     "queries and the weights @ V fit."),
    ("ignores-mask", "masks", lambda Q, K, V, mask=None: attend(Q, K, V),
     "Your function ignores mask: put -inf at the scores where the mask is False, before the softmax."),
    ("inverted-mask", "masks", partial(attend, inverted=True),
     "True means 'may attend': keep the scores where the mask is True and fill -inf where it is False, "
     "np.where(mask, scores, -np.inf)."),
    ("mask-after-softmax", "masks", _mask_after_softmax,
     "Zeroing weights after the softmax leaves rows that no longer sum to 1: mask the scores with -inf "
     "before the softmax."),
    ("mask-times-scores", "masks", partial(attend, fill=0.0),                   # = scores * mask
     "Multiplying the scores by the mask turns masked scores into 0, which still gets weight: put -inf "
     "there instead (np.where)."),
    ("finite-fill", "masks", partial(attend, fill=-1e9),
     "A fully masked row spreads its weight evenly over its keys where it must get zero weights and a zero output: "
     "fill with -inf, not a large finite number (-1e9, or 1e9 added where attending is allowed), and guard that row."),
    ("masked-row-nan", "masks", partial(attend, guard=False),
     "A fully masked row gives -inf - (-inf) = NaN: where a row's maximum is -inf subtract 0 instead, "
     "and divide by 1 where the sum is 0, so its weights are zeros."),
    ("mask-added", "masks", partial(attend, fill=-1.0, additive=True),      # scores + mask: +1 where True
     "You add the mask to the scores; it is boolean (True = may attend), so that adds 1 where attending is "
     "allowed and hides nothing: keep the scores where it is True, -inf elsewhere, np.where(mask, scores, -np.inf)."),
    ("none-mask-fills-all", "small", partial(attend, unchecked=True),
     "With no mask (mask=None), np.where(mask, scores, fill) reads None as False and fills every score, so every "
     "weight is 1/n: apply the mask only when one is given (if mask is not None:)."),
    ("causal-when-no-mask", "small", partial(attend, causal=True), CAUSAL_WHEN_NO_MASK),
    ("inverted-mask-finite-fill", "masks", partial(attend, inverted=True, fill=-1e9),
     "Your mask is inverted (True should mean may attend), and masked scores get a large negative "
     "number rather than -inf: use np.where(mask, scores, -np.inf) and give a fully masked row zeros."),
    ("own-causal-mask", "runs",        # a decoder's look-ahead mask, (m, m), built into every call
     lambda Q, K, V, mask=None: weigh(scaled_scores(Q, K) + np.triu(np.ones((Q.shape[-2],) * 2), k=1) * -1e9, V),
     "Your function adds a causal mask of its own, (m, m), whatever it is given: the mask is an argument (None: "
     "every query sees every key), so apply only the one given, np.where(mask, scores, -np.inf)."),
))
# Other spellings: a finite fill added, s + (1 - mask) * -1e9, and the PyTorch habit "True = ignore" with a finite
# fill, two mistakes at once, as s + mask * -1e9 (-1e10 gives the same weights: exp(fill − max) is 0 in float64).
variant("attention.finite-fill")(lambda Q, K, V, mask=None: attend(Q, K, V, mask, fill=-1e9, additive=True))
variant("attention.no-transpose")(lambda Q, K, V, mask=None: weigh(np.dot(Q, K), V, mask))   # Q.dot(K)
variant("attention.inverted-mask")(partial(attend, inverted=True, guard=False))   # a row it hides whole: NaN (study 20)
variant("attention.inverted-mask-finite-fill")(
    lambda Q, K, V, mask=None: attend(Q, K, V, mask, inverted=True, fill=-1e9, additive=True))
