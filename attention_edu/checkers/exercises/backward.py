"""Checker for the whole attention backward pass (exercise notebook 06, exercise 7), with its mistakes.

``attention_backward(Q, K, V, d_output, mask=None)`` returns ``(dQ, dK, dV)``, the gradients of
L = Σ d_output ⊙ output for output = softmax(Q Kᵀ / √d_k) V, the mask (True = may attend) applied before the
softmax: the steps of :mod:`.backward_steps` chained. Masked keys get exactly zero gradient, a fully masked
query none. Each mistake is :func:`backward` with one knob turned; when none matches, :func:`_chain` reads
which of dQ, dK and dV are right and says where in the chain the error starts.

>>> from attention_edu.checkers import check_attention_backward
>>> check_attention_backward(partial(backward, jacobian="p(1-p)")).hint_id
'attention_backward.p-one-minus-p'
"""

import math
from functools import partial

from ...backend import host_numpy as np
from ...dot_product import scaled_dot_product_attention_backward, scaled_dot_product_attention_steps
from . import attend, register_mistakes, variant
from ..diagnosis import close
from ..diagnosis.evidence import factor_cause, partly, reads, which_right
from ..records import Case, Exercise, Property
from .attention import chapter_example, qkv, qkv_cases
from .backward_steps import CROSS_ENTROPY, SOFTMAX_BACKWARDS, grad_v, grad_w

__all__ = ["ATTENTION_BACKWARD", "backward"]


def backward(Q, K, V, d_output, mask=None, *, scale=None, jacobian="full", scale_dq=True, scale_dk=True,
             forward_scale=None, dv=grad_v, **knobs):
    """Host backward of scaled dot-product attention, with knobs for building the mutants.

    ``jacobian`` names the softmax backward in :data:`.backward_steps.SOFTMAX_BACKWARDS`, ``dv(W, d_output)`` makes
    dV; ``knobs`` (``fill=-1e9``, ``additive=True``, ``inverted=True``, ``guard=False``) go to the masking.
    """
    scale = math.sqrt(Q.shape[-1]) if scale is None else scale
    forward_scale = scale if forward_scale is None else forward_scale
    _, W = attend(Q, K, V, mask, scale=forward_scale, **knobs)                     # (..., m, n)
    dW = grad_w(V, d_output)                                                       # (..., m, n)
    dS = SOFTMAX_BACKWARDS[jacobian](W, dW)                                        # (..., m, n)
    dQ = dS @ K / (scale if scale_dq else 1.0)                                     # (..., m, d_k)
    dK = np.matrix_transpose(dS) @ Q / (scale if scale_dk else 1.0)                # (..., n, d_k)
    dV = dv(W, d_output)                                                           # (..., n, d_v)
    return dQ, dK, dV


def _reference(Q, K, V, d_output, mask=None):
    grads = scaled_dot_product_attention_backward(scaled_dot_product_attention_steps(Q, K, V, mask), d_output)
    return grads["Q"], grads["K"], grads["V"]


def _cases() -> list[Case]:
    dO = np.array([[1.0, 0.0, 0.0, 0.0, -1.0], [0.5, 0.5, -0.5, 0.0, 0.0]])
    notes = {"m = 2, n = 3, d_k = 4, d_v = 5": "Query 0, K and V are the chapter's scaled dot-product example.",
             "padding mask (2, 1, 5), lengths 3 and 5": "The keys 3 and 4 of batch entry 0 are padding: their dK "
                                                        "and dV must be 0.",
             "query 1 fully masked": "A fully masked query gets zero weights, so its dQ row is 0 and it adds "
                                     "nothing to dK or dV."}
    names = ("Q", "K", "V", "d_output")
    keys_seen = np.array([[[3, 3], [2, 2]], [[1, 0], [2, 1]]])             # per sequence (B=2, C=2) and query
    own_masks = qkv(12, (2, 2), 2, 3, 4, 2, d_output=True) + (np.arange(3) < keys_seen[..., None],)  # (2, 2, 2, 3)
    return qkv_cases(names, chapter_example() + (dO,), notes) + [
        Case("masks", "query 1 of sequence (1, 0) fully masked", own_masks, names + ("mask",),
             note="Each sequence has its own mask: only in sequence (1, 0) is query 1's dQ row 0, and only there "
                  "does it add nothing to dK or dV.")]


def _finite_differences(student) -> str | None:
    Q, K, V, dO = qkv(71, (), 3, 4, 3, 2, d_output=True)

    def loss(inputs):                                        # L = Σ d_output ⊙ output
        return float(np.sum(attend(*inputs)[0] * dO))

    rng = np.random.default_rng(72)
    for index, (name, grad) in enumerate(zip(("dQ", "dK", "dV"), student(Q, K, V, dO))):
        direction = rng.standard_normal(grad.shape)
        plus, minus = [Q, K, V], [Q, K, V]
        plus[index], minus[index] = plus[index] + 1e-6 * direction, minus[index] - 1e-6 * direction
        numeric = (loss(plus) - loss(minus)) / 2e-6
        analytic = float(np.sum(grad * direction))
        if abs(numeric - analytic) > 1e-4 * max(1.0, abs(numeric)):
            return (f"along a random direction, {name} predicts a change of {analytic:.6g} in the loss; "
                    f"central differences measure {numeric:.6g}")
    return None


def _keys_shift(student) -> str | None:
    _, dK, _ = student(*qkv(73, (), 4, 5, 3, 2, d_output=True))
    total = np.sum(dK, axis=-2)
    if np.allclose(total, 0.0, atol=1e-6):
        return None
    return f"dK summed over the keys is {np.array2string(total, precision=4)}, not 0"


def _masked_keys(student) -> str | None:
    keys = np.array([True, True, False, True, False])
    _, dK, dV = student(*qkv(74, (), 3, 5, 2, 3, d_output=True), np.tile(keys, (3, 1)))   # mask (3, 5)
    zero = np.all(dK[~keys] == 0) and np.all(dV[~keys] == 0)
    return None if zero else "keys 2 and 4 are masked for every query, yet their dK or dV is not exactly 0"


ATTENTION_BACKWARD = Exercise(
    name="attention_backward", notebook="06_attention_backward", number=7,
    summary="Check ``attention_backward(Q, K, V, d_output, mask=None) -> (dQ, dK, dV)`` (scaled).",
    signature="attention_backward(Q, K, V, d_output, mask=None) -> (dQ (..., m, d_k), dK (..., n, d_k), "
              "dV (..., n, d_v))",
    reference=_reference, outputs=("dQ", "dK", "dV"), cases=_cases,
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


# -- misconceptions -------------------------------------------------------------------------------

def _dk_transposed(Q, K, V, d_output, mask=None):
    dQ, dK, dV = backward(Q, K, V, d_output, mask)
    return dQ, np.matrix_transpose(dK), dV


register_mistakes("attention_backward", (
    ("diagonal-jacobian", "small", partial(backward, jacobian="diagonal"),
     "You kept only the diagonal of the softmax Jacobian, dS = W ⊙ dW: subtract each row's weighted mean, "
     "dS = W ⊙ (dW − rowsum(dW ⊙ W))."),
    ("no-softmax-backward", "small", partial(backward, jacobian="none"),
     "You passed dW straight through to the scores: the softmax has a Jacobian too, "
     "dS = W ⊙ (dW − rowsum(dW ⊙ W))."),
    ("jacobian-sign", "small", partial(backward, jacobian="sign"),
     "The softmax backward subtracts the weighted mean: dS = W ⊙ (dW − rowsum(dW ⊙ W)), with a minus sign."),
    ("jacobian-wrong-axis", "small", partial(backward, jacobian="queries"),
     "The softmax ran over the keys, so its backward sums over the keys too: rowsum(dW ⊙ W) is "
     "np.sum(..., axis=-1, keepdims=True)."),
    ("dq-unscaled", "small", partial(backward, scale_dq=False),
     "The scores are Q Kᵀ / √d_k, so dQ = dS K carries the factor 1/√d_k as well; yours leaves it out of dQ."),
    ("dk-unscaled", "small", partial(backward, scale_dk=False),
     "The scores are Q Kᵀ / √d_k, so dK = dSᵀ Q carries the factor 1/√d_k as well; yours leaves it out of dK."),
    ("dq-dk-unscaled", "small", partial(backward, scale_dq=False, scale_dk=False),
     "The scores are Q Kᵀ / √d_k, so dQ = dS K and dK = dSᵀ Q carry the factor 1/√d_k as well: yours leave it "
     "out of both (they are √d_k times too large)."),
    ("scale-by-d_k", "small", lambda Q, K, V, d_output, mask=None: backward(Q, K, V, d_output, mask, scale=Q.shape[-1]),
     "The scale is 1/√d_k, in the forward pass and in dQ and dK alike; you divide by d_k."),
    ("scale-by-d_v", "small", lambda Q, K, V, d_output, mask=None: backward(
        Q, K, V, d_output, mask, scale=math.sqrt(V.shape[-1]), forward_scale=math.sqrt(Q.shape[-1])),
     "dQ and dK carry the forward's 1/√d_k, the size of the queries and keys (Q.shape[-1]); yours divide by √d_v, the "
     "size of the values (d_output.shape[-1])."),
    ("forward-unscaled", "small", partial(backward, forward_scale=1.0),
     "Recompute the weights exactly as the forward pass does, softmax(Q Kᵀ / √d_k): yours leave out the scale."),
    ("unscaled", "small", partial(backward, forward_scale=1.0, scale_dq=False, scale_dk=False),
     "Your gradients have no 1/√d_k anywhere: the scores are Q Kᵀ / √d_k, so recompute the weights with it, and "
     "dQ = dS K / √d_k, dK = dSᵀ Q / √d_k carry it too."),
    ("cross-entropy", "small", partial(backward, jacobian="cross-entropy"), CROSS_ENTROPY),
    ("dk-transposed", "returns", _dk_transposed,
     "dK has one row per key, shape (..., n, d_k): it is dSᵀ Q, not its transpose Qᵀ dS."),
    ("dv-transposed", "returns", partial(backward, dv=lambda W, dO: np.matrix_transpose(dO) @ W),
     "dV has one row per value, shape (..., n, d_v): it is Wᵀ d_output, not d_outputᵀ W."),
    ("dv-no-transpose", "runs", partial(backward, dv=np.matmul),     # the line that raised shows no transpose (42's 32)
     "O = W V sends d_output back to V through Wᵀ: dV = np.swapaxes(W, -1, -2) @ d_output, not W @ d_output.",
     r"^(?!.*(\.m?T\b|transpose|swapaxes|moveaxis|rollaxis|permute_dims|einsum|\b(\w+_[tT]|[A-Z]\w*?[tT])\s*[@,]))"
     r"(?!(.*(@|dot\(|matmul\()){2})"        # a name for Wᵀ (Wt, P_T); one product on the line (red teams 78, 79)
     r".*(\b(d_?[Vv]|grad_?[Vv]|[Vv]_?grad)\w*\s*=|[@,(]\s*d_?(out\w*|O|y)\b)"),
    ("ignores-mask", "masks", lambda Q, K, V, d_output, mask=None: backward(Q, K, V, d_output),
     "Gradient reaches masked keys: recompute the weights with the mask (-inf before the softmax) so masked "
     "entries get weight 0 and therefore zero gradient."),
    ("masked-row-nan", "masks", partial(backward, guard=False),
     "A fully masked query gives -inf - (-inf) = NaN in the recomputed softmax: guard it so that its weights, "
     "and so its gradients, are zeros."),
    ("p-one-minus-p", "small", partial(backward, jacobian="p(1-p)"),
     "p(1 − p) is only the diagonal of the softmax Jacobian; every weight of a row also depends on the "
     "others' scores: dS = W ⊙ (dW − rowsum(dW ⊙ W))."),
    ("rowsum-unweighted", "small", partial(backward, jacobian="unweighted"),
     "The term subtracted from dW is the weighted mean of its row, rowsum(dW ⊙ W), not the plain "
     "rowsum(dW): multiply by the weights before summing."),
    ("finite-fill", "masks", partial(backward, fill=-1e9),
     "Masked scores get a large negative number rather than -inf, so a fully masked query spreads its "
     "weight over every key and gradient reaches masked keys: fill with -inf and give such a row zero weights."),
    ("inverted-mask", "masks", partial(backward, inverted=True),
     "True means 'may attend': keep the scores where the mask is True and fill -inf where it is False, "
     "np.where(mask, scores, -np.inf)."),
    ("inverted-mask-finite-fill", "masks", partial(backward, inverted=True, fill=-1e9),
     "Your mask is inverted (True should mean may attend), and masked scores get a large negative number "
     "rather than -inf: np.where(mask, scores, -np.inf)."),
    ("mask-added", "masks", partial(backward, fill=-1.0, additive=True),      # scores + mask: +1 where True
     "A boolean mask added to the scores adds 1 where a key may be seen and 0 where not, which hides nothing: "
     "recompute the weights with np.where(mask, scores, -np.inf)."),
))
variant("attention_backward.finite-fill")(
    lambda Q, K, V, d_output, mask=None: backward(Q, K, V, d_output, mask, fill=-1e9, additive=True))
variant("attention_backward.finite-fill")(      # dS zeroed where masked: dQ and dK are right, dV is not
    lambda Q, K, V, d_output, mask=None: (*backward(Q, K, V, d_output, mask)[:2],
                                          backward(Q, K, V, d_output, mask, fill=-1e9)[2]))
variant("attention_backward.finite-fill")(      # S - 1e10 where masked, dS zeroed there: a fully masked row keeps
    lambda Q, K, V, d_output, mask=None: (*backward(Q, K, V, d_output, mask)[:2],   # its weights, dV is wrong
                                          backward(Q, K, V, d_output, mask, fill=-1e10, additive=True)[2]))
variant("attention_backward.masked-row-nan")(     # dS zeroed where masked: dQ and dK stay right, dV is NaN
    lambda Q, K, V, d_output, mask=None: (*backward(Q, K, V, d_output, mask)[:2],
                                          backward(Q, K, V, d_output, mask, guard=False)[2]))
variant("attention_backward.inverted-mask-finite-fill")(
    lambda Q, K, V, d_output, mask=None: backward(Q, K, V, d_output, mask, inverted=True, fill=-1e9, additive=True))
variant("attention_backward.inverted-mask-finite-fill")(     # S = -1e10 where masked, dS zeroed there: dV is wrong
    lambda Q, K, V, d_output, mask=None: (*backward(Q, K, V, d_output, mask, inverted=True)[:2],
                                          backward(Q, K, V, d_output, mask, inverted=True, fill=-1e10)[2]))
variant("attention_backward.inverted-mask-finite-fill")(     # S - 1e10 where masked, dS zeroed there (hint study 18)
    lambda Q, K, V, d_output, mask=None: (*backward(Q, K, V, d_output, mask, inverted=True)[:2], backward(
        Q, K, V, d_output, mask, inverted=True, fill=-1e10, additive=True)[2]))
variant("attention_backward.dv-no-transpose")(partial(backward, dv=np.dot))     # np.dot(W, d_output)
variant("attention_backward.p-one-minus-p")(      # and no 1/√d_k in dQ and dK either (hint study 31's 34)
    partial(backward, jacobian="p(1-p)", scale_dq=False, scale_dk=False))
variant("attention_backward.inverted-mask")(      # -inf with no guard: the row that may see every key is NaN
    partial(backward, inverted=True, guard=False))

_WHERE = {
    ("dV",): "the error is after dW: in dS = W ⊙ (dW − rowsum(dW ⊙ W)) or in the 1/√d_k of dQ and dK",
    ("dK", "dV"): "the error is in dQ = dS K / √d_k alone",
    ("dQ", "dV"): "the error is in dK = dSᵀ Q / √d_k alone",
    ("dQ", "dK"): "the error is in dV = Wᵀ d_output alone",
}


@reads("attention_backward", "attention_backward.chain")
def _chain(case, mine, expected):
    """Which gradients are right, and where the chain of intermediates goes wrong."""
    names = ("dQ", "dK", "dV")
    right = which_right(names, mine, expected, lambda a, e: close(a, e, case.float_dtypes))
    good = tuple(n for n, r in zip(names, right or ()) if r)
    if right is None or good not in _WHERE:
        return None
    phrases, r = partly(names, right), _one_factor([(a, e) for a, e, ok in zip(mine, expected, right) if not ok], case)
    # its cause without sizes: a size that matched on one case only would make the story differ from case to case
    told = f" Each is {r:.4g} times the expected one{factor_cause(r, Case('', '', (), ()), False)}." if r else ""
    return "attention_backward.chain", f"{phrases['right']}; {phrases['wrong']}: {_WHERE[good]}.{told}"


def _one_factor(pairs: list, case) -> float | None:
    """The r with yours = r · expected for every pair, within the checkers' tolerance (an exact ratio would miss
    where the order of the float operations differs), rounded to 6 digits; None for no such r, or r = 1."""
    ratios = [float(np.median(a[big] / e[big])) for a, e in pairs if (big := np.abs(e) > 1e-3 * np.abs(e).max()).any()]
    r = round(ratios[0], 6) if ratios and len(ratios) == len(pairs) else None
    fits = r is not None and min(abs(r - 1), abs(r)) > 1e-3 and all(close(a, r * e, case.float_dtypes)
                                                                     for a, e in pairs)
    return r if fits else None
