"""Checker for multi-head attention (exercise notebook 04, exercise 3), with its mistakes.

Head h owns the contiguous columns h*d:(h+1)*d of each projection; each head runs scaled dot-product attention with
its own d_k under the shared mask ("Neural attention mechanism vectorization", section 3)."""

import math
from functools import partial

from ...backend import host_numpy as np
from ...masks import causal_mask, padding_mask
from ...multi_head import merge_heads, multi_head_attention as reference_mha, split_heads
from . import attend, reads, register_mistakes, variant
from ..records import Case, Exercise, Property
from .attention import CAUSAL_WHEN_NO_MASK, unnormalised_rows
from .heads import cut_heads, merge_unswapped, split_strided

__all__ = ["MULTI_HEAD_ATTENTION"]

def _inputs(seed, lead, m, n, d_model, H, d_k, d_v, self_attention=False) -> tuple:
    """X_q, X_kv (X_q itself for self-attention), W_Q, W_K, W_V, W_O and H, drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    X_q = rng.standard_normal(lead + (m, d_model))
    X_kv = X_q if self_attention else rng.standard_normal(lead + (n, d_model))
    W_Q, W_K, W_V = (rng.standard_normal((d_model, H * d)) / math.sqrt(d_model) for d in (d_k, d_k, d_v))
    W_O = rng.standard_normal((H * d_v, d_model)) / math.sqrt(H * d_v)
    return X_q, X_kv, W_Q, W_K, W_V, W_O, H


def _mha_cases() -> list[Case]:
    rng = np.random.default_rng(0)
    small = tuple(rng.integers(-2, 3, size=s) / 2.0 for s in ((2, 4), (3, 4), (4, 6), (4, 6), (4, 4), (4, 4)))
    rows = [("small", "m=2 n=3 d_model=4, 2 heads, d_k=3 d_v=2", small + (2,))]
    for seed, sizes in ((1, (3, 5, 4, 2, 3, 6)), (2, (2, 4, 6, 3, 1, 5)), (3, (4, 3, 5, 2, 6, 1))):
        title = "seed {}, m={} n={} d_model={} H={} d_k={} d_v={}".format(seed, *sizes)
        rows.append(("random", title, _inputs(seed, (), *sizes)))
    f32 = tuple(a.astype(np.float32) for a in _inputs(4, (), 2, 5, 3, 4, 1, 2)[:6]) + (4,)
    padded, causal = _inputs(8, (3,), 4, 4, 6, 2, 2, 3, True), _inputs(7, (), 5, 5, 4, 2, 3, 2, True)
    padded[0][1, 2:] *= 30        # (X_q is X_kv) entry 1's padding tokens score 2000 above the rest in a head;
    causal[0][0] *= 220           # token 0 scores -1200 in head 1 on the one key it sees, itself: weight 1 still
    large = _inputs(333, (), 2, 4, 5, 2, 3, 2)   # times 30: scores to 1182, top keys 650 apart (float32-safe);
    # query 1's times 0.03, near 0 in both heads: a maximum shared by the rows leaves it zero weights
    rows += [("random", "float32, m=2 n=5 d_model=3 H=4 d_k=1 d_v=2", f32),
             ("batched", "3-D, B=1 m=3 n=4 d_model=5 H=3 d_k=2 d_v=3", _inputs(5, (1,), 3, 4, 5, 3, 2, 3)),
             ("batched", "4-D, B=2 C=3 m=4 n=6 d_model=5 H=2 d_k=1 d_v=3", _inputs(6, (2, 3), 4, 6, 5, 2, 1, 3)),
             # the case code written for PyTorch's layer runs on (hint study 19): what it returns is read there
             ("batched", "3-D self-attention, B=2 m=n=4 d_model=4 H=2 d_k=d_v=2",
              _inputs(14, (2,), 4, 4, 4, 2, 2, 2, True)),
             ("stability", "scores of size about 1000", (large[0] * [[30.0], [0.03]], 30 * large[1]) + large[2:]),
             ("masks", "causal self-attention, m = n = 5", causal + (causal_mask(5),)),
             ("masks", "padding mask (3, 1, 4), B=3, 2 heads", padded + (padding_mask(np.array([3, 2, 3]), 4),)),
             # d_k = d_model / H, as tutorial code assumes: its mask and keys are seen (study 24); sequence 0 padded:
             # its mask given to all is no mask ignored (red team 65); m != d_k: Kᵀ is not the scores (red team 63)
             ("masks", "padding mask (3, 1, 5), B=3 m=3 n=5 d_model=4 H=2 d_k=d_v=2",
              _inputs(11, (3,), 3, 5, 4, 2, 2, 2) + (padding_mask(np.array([4, 5, 3]), 5),)),
             ("masks", "query 1 fully masked", _inputs(9, (), 2, 3, 4, 2, 2, 2) + (np.arange(3) < [[2], [0]],)),
             ("masks", "query 1 of sequence (1, 0) fully masked", _inputs(10, (2, 2), 2, 3, 4, 3, 1, 2)
              + (np.arange(3) < np.array([[[2, 3], [2, 2]], [[1, 0], [2, 1]]])[..., None],))]   # keys each query sees
    names = ("X_q", "X_kv", "W_Q", "W_K", "W_V", "W_O", "num_heads", "mask")
    note = "A fully masked query must get zero weights in every head and a zero output."
    return [Case(probe, title, args, names if probe == "masks" else names[:7], literal=probe == "small",
                 note=note if "fully masked" in title else "") for probe, title, args in rows]


def _future_tokens(student) -> str | None:
    X, _, W_Q, W_K, W_V, W_O, H = _inputs(52, (), 6, 6, 4, 2, 3, 2, True)
    X2 = np.concatenate([X[:5], X[5:] + 2.0])                # change only the last token
    (out, _), (out2, _) = (student(x, x, W_Q, W_K, W_V, W_O, H, causal_mask(6)) for x in (X, X2))
    unchanged = np.allclose(out[:5], out2[:5], rtol=1e-4, atol=1e-6)
    return None if unchanged else "changing the last token changed the outputs of earlier tokens under a causal mask"


def _head_order(student) -> str | None:
    X_q, X_kv, W_Q, W_K, W_V, W_O, H = _inputs(53, (), 3, 4, 5, 3, 2, 2)
    order = np.array([2, 0, 1])

    def permute(W, axis):                                    # reorder the per-head blocks of W
        return np.concatenate([np.split(W, H, axis=axis)[h] for h in order], axis=axis)
    (out, w) = student(X_q, X_kv, W_Q, W_K, W_V, W_O, H)
    (out2, w2) = student(X_q, X_kv, permute(W_Q, 1), permute(W_K, 1), permute(W_V, 1), permute(W_O, 0), H)
    unchanged = np.allclose(out, out2, rtol=1e-4, atol=1e-6) and np.allclose(w[order], w2, rtol=1e-4, atol=1e-6)
    return None if unchanged else "reordering the heads (their column blocks and W_O's row blocks) changed the output"


MULTI_HEAD_ATTENTION = Exercise(
    name="multi_head_attention", notebook="04_multi_head", number=3,
    summary='Check ``multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None)``.',
    signature="multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None) "
              "-> (output (..., m, d_model), weights (..., H, m, n))",
    reference=reference_mha, outputs=("output", "weights"), row_sums=("weights",), cases=_mha_cases,
    properties=(
        Property("multi_head_attention.property-rows", "every head's weights sum to 1 per query",
                 "In every head each query's weights must be non-negative and add up to 1.",
                 lambda student: unnormalised_rows(student(*_inputs(51, (), 3, 5, 4, 2, 3, 2))[1])),
        Property("multi_head_attention.property-causal", "later tokens cannot change earlier outputs",
                 "Under a causal mask token i must not see later tokens, in any head; changing the "
                 "last token may only change the last output row.", _future_tokens),
        Property("multi_head_attention.property-head-order", "the order of the heads does not matter",
                 "Heads are independent and W_O mixes them, so reordering the heads consistently "
                 "must not change the output.", _head_order),
    ),
)


# -- misconceptions -------------------------------------------------------------------------------
def _mha(X_q, X_kv, W_Q, W_K, W_V, W_O, H, mask=None, *, width=None, merge=merge_heads, split=split_heads,
         project=True, head_axis=True, average=False, transposed="", **knobs):
    """Multi-head attention with knobs; ``width(X_q, W_Q, W_V, H)``, when given, replaces d_k in the scale √d_k;
    the weights named in ``transposed`` ("QKVO") are used transposed, as PyTorch's (out, in) layout would; ``knobs``
    go to :func:`.weigh` (the mask's fill, the softmax's guard)."""
    scale = None if width is None else math.sqrt(width(X_q, W_Q, W_V, H))
    W_Q, W_K, W_V, W_O = (W.T if name in transposed else W for name, W in zip("QKVO", (W_Q, W_K, W_V, W_O)))
    Q, K, V = split(X_q @ W_Q, H), split(X_kv @ W_K, H), split(X_kv @ W_V, H)   # (..., H, L, d)
    mask = np.expand_dims(mask, -3) if mask is not None and head_axis else mask   # (..., 1, m, n)
    heads, weights = attend(Q, K, V, mask, scale=scale, **knobs)
    concat = merge(heads)                                                        # (..., m, H*d_v)
    return (concat @ W_O if project else concat), (np.mean(weights, axis=-3) if average else weights)


def _fused_split(X_q, X_kv, W_Q, W_K, W_V, W_O, H, mask=None):
    """PyTorch's in_proj: the three projections side by side, cut into equal thirds (only possible where d_k = d_v)."""
    return _mha(X_q, X_kv, *np.split(np.concatenate([W_Q, W_K, W_V], axis=1), 3, axis=1), W_O, H, mask)


def _heads_from_d_model(X_q, X_kv, W_Q, W_K, W_V, W_O, H, mask=None):
    """Heads cut d_model // H wide, as where W_Q is square (d_k = d_model / H): a reshape that fails otherwise."""
    return _mha(X_q, X_kv, W_Q, W_K, W_V, W_O, H, mask, split=lambda X, H: np.swapaxes(
        X.reshape(*X.shape[:-1], H, X_q.shape[-1] // H), -2, -3))


def _kv_with_query_length(X_q, X_kv, W_Q, W_K, W_V, W_O, H, mask=None):
    """Every projection cut into heads with the queries' length m: K and V's reshape fails where n != m."""
    return _mha(X_q, X_kv, W_Q, W_K, W_V, W_O, H, mask, split=lambda X, H: np.swapaxes(
        X.reshape(*X.shape[:-2], X_q.shape[-2], H, X.shape[-1] // H), -2, -3))


def _no_projections(X_q, X_kv, W_Q, W_K, W_V, W_O, H, mask=None, project=False):
    """No W_Q, W_K, W_V: the inputs cut into heads as they are; ``project``: times W_O where it runs (red team 75)."""
    return None if project and W_O.shape[0] != X_q.shape[-1] else _mha(
        X_q, X_kv, *(np.eye(X_q.shape[-1]),) * 3, W_O, H, mask, project=project)


def _heads_in_batch(X_q, X_kv, W_Q, W_K, W_V, W_O, H, mask=None):
    """Heads on axis 0, as tf.concat(tf.split(Q, H, -1), 0) (study 30); not where B = 1, right there (red team 66)."""
    if X_q.shape[:-2] != (1,):
        return _mha(X_q, X_kv, W_Q, W_K, W_V, W_O, H, mask, head_axis=False, split=lambda X, H: np.concatenate(
            np.split(X, H, axis=-1)), merge=lambda heads: np.concatenate(np.split(heads, H), axis=-1))


_NO_PROJECTION = "Finish with the output projection: concatenate the heads, then multiply by W_O."
_TRANSPOSED = r"\b[Ww]\w*\.T\b|(transpose|swapaxes|permute)\(\s*[Ww]"   # a weight's, on the line that raised (study 36)


@reads("multi_head_attention", "multi_head_attention.no-output-projection")
def _unprojected(case, mine, expected):
    """An output H·d_v wide where d_model is asked: the heads merged, never projected (whatever else is wrong)."""
    if len(case.args) < 6 or not mine or not expected:      # a property's call: nothing expected to compare with
        return None
    out, want, W_O = mine[0], expected[0], case.args[5]
    if all(isinstance(a, np.ndarray) for a in (out, want, W_O)) and out.shape == want.shape[:-1] + W_O.shape[:1] != (
            want.shape):
        return "multi_head_attention.no-output-projection", _NO_PROJECTION


register_mistakes("multi_head_attention", (
    ("scale-by-width", "small", partial(_mha, width=lambda X_q, W_Q, *_: W_Q.shape[1]),
     "Scale each head by the square root of its own size, d_k = W_Q.shape[1] // num_heads, not of the "
     "full width H*d_k."),
    ("scale-by-d_model", "small", partial(_mha, width=lambda X_q, *_: X_q.shape[-1]),
     "Scale each head by the square root of its own size, d_k = W_Q.shape[1] // num_heads, not of the "
     "model width d_model = X_q.shape[-1]."),
    ("unscaled", "small", partial(_mha, width=lambda *_: 1),
     "Each head's scores must be divided by √d_k (the per-head size) before the softmax."),
    ("scale-by-d_v", "small", partial(_mha, width=lambda X_q, W_Q, W_V, H: W_V.shape[1] // H),
     "Scale each head by √d_k, the size of its queries and keys (W_Q.shape[1] // num_heads), not by √d_v, the "
     "size of its values."),
    ("head-size-from-d_model", "runs", _heads_from_d_model,
     "Each head's size comes from its projection, d_k = W_Q.shape[1] // num_heads and d_v = W_V.shape[1] // "
     "num_heads, not d_model // num_heads (and the merged heads are H·d_v wide, not d_model): W_Q is "
     "(d_model, H·d_k), and d_k need not be d_model / H."),
    ("kv-with-query-length", "runs", _kv_with_query_length,
     "K and V have one row per key: reshape X_kv @ W_K and X_kv @ W_V with n = X_kv.shape[-2], not the queries' "
     "m = X_q.shape[-2] (they differ in cross-attention)."),
    ("torch-layout", "runs", partial(_mha, transposed="QKVO"),
     "W_Q, W_K and W_V are (d_model, H·d) and W_O is (H·d_v, d_model), used as X @ W_Q and merged @ W_O: W.T is "
     "PyTorch's nn.Linear layout, (out, in), so drop the .T.", _TRANSPOSED),
    ("weights-per-head", "runs", lambda X_q, X_kv, W_Q, *rest: X_q @ W_Q[0],     # W_Q[h] (studies 36's 21, 44's 08)
     "W_Q is (d_model, H·d_k), the heads' columns side by side: W_Q[h] is its row h, not head h's matrix. Project "
     "once, X_q @ W_Q, then split into heads.", r"\bW_?[QKVqkv]\w*\[\s*[A-Za-z_]\w*\s*\]"),     # W_Q[h], not Ws[i] (79)
    ("no-output-projection", "small", partial(_mha, project=False), _NO_PROJECTION),
    ("no-projections", "small", _no_projections,        # hint study 24's 32
     "Your heads are cut from X_q and X_kv as they are, never projected: first Q = X_q @ W_Q, K = X_kv @ W_K and "
     "V = X_kv @ W_V, then cut each into heads, and multiply the merged heads by W_O."),
    ("heads-in-batch", "returns", _heads_in_batch,
     "Your heads are stacked on the first axis: give them an axis of their own, weights (..., H, m, n) (np.stack)."),
    ("strided-heads", "small", partial(_mha, split=split_strided),
     "Head h uses the contiguous columns h*d_k:(h+1)*d_k of each projection; yours takes every H-th column."),
    ("merge-without-swap", "small", partial(_mha, merge=merge_unswapped),
     "Before reshaping the heads to (..., m, H*d_v), move the head axis next to the feature axis, "
     "(..., m, H, d_v); reshaping directly mixes tokens."),
    ("reshape-only", "small", partial(_mha, split=lambda X, H: cut_heads(X, H, "HLd"), merge=merge_unswapped),
     "Reshaping X @ W_Q straight to (..., H, m, d_k) cuts the data in the wrong order (and so does merging back): "
     "reshape to (..., m, H, d_k), then swap axes -3 and -2."),
    ("keys-from-queries", "returns", lambda X_q, X_kv, *rest: _mha(X_q, X_q, *rest),
     "Keys and values come from X_kv; only the queries come from X_q (they differ in cross-attention)."),
    ("averaged-weights", "returns", partial(_mha, average=True),
     "Return every head's weights, shape (..., H, m, n), not their average over the heads."),
    ("mask-without-head-axis", "runs", partial(_mha, head_axis=False),
     "The mask has no head axis: insert one, mask[..., None, :, :], so that it broadcasts over the "
     "heads and not against the batch."),
    ("output-projection-transposed", "small", partial(_mha, transposed="O"),     # runs where W_O is square
     "W_O is (H·d_v, d_model), used as merged @ W_O; W_O.T is nn.Linear's (out, in) layout: drop the .T.", _TRANSPOSED),
    ("fused-split", "runs", _fused_split,
     "np.split(..., 3) cuts the three projections side by side into equal thirds, which holds only where d_k = d_v "
     "(PyTorch's in_proj): W_V has H·d_v columns, so project with W_Q, W_K and W_V one by one.",
     r"split\([^,#]+,\s*3\s*[,)]"),      # a split in 3 on the line that raised (red team 75: np.split(X, H, -1))
    ("mask-added", "masks", partial(_mha, fill=-1.0, additive=True),      # scores + mask: +1 where True
     "You add the mask to the scores; it is boolean (True = may attend), so that adds 1 where attending is allowed and "
     "hides nothing: keep the scores where it is True, -inf elsewhere, np.where(mask, scores, -np.inf)."),
    ("finite-fill", "masks", partial(_mha, fill=-1e9),
     "A fully masked query spreads its weight over every key in every head where it must get zero weights and a zero "
     "output: fill with -inf, not a large finite number such as -1e9, and guard that query."),
    ("causal-when-no-mask", "small", partial(_mha, causal=True), CAUSAL_WHEN_NO_MASK),    # hint study 33's 05 and 12
    ("none-mask-fills-all", "small", partial(_mha, unchecked=True),
     "With no mask (mask=None), np.where(mask, scores, fill) reads None as False and fills every score, so every "
     "weight is 1/n in every head: apply the mask only when one is given (if mask is not None:)."),
    ("masked-row-nan", "masks", partial(_mha, guard=False),
     "A fully masked query gives -inf - (-inf) = NaN in its softmax: guard it so that the query gets zero weights in "
     "every head and a zero output."),
    ("ignores-mask", "masks", lambda *args: _mha(*args[:7]),        # hint study 28's 24 and 32
     "Your function ignores mask: in every head put -inf at the scores where the mask is False, before the softmax."),
    ("inverted-mask", "masks", partial(_mha, inverted=True),      # hint study 28's 15
     "True means 'may attend': keep each head's scores where the mask is True and fill -inf where it is False, "
     "np.where(mask[..., None, :, :], scores, -np.inf)."),
    ("inverted-mask-finite-fill", "masks", partial(_mha, inverted=True, fill=-1e9),     # scores += mask * -1e9
     "Your mask is inverted (True should mean may attend), and masked scores get a large negative number rather than "
     "-inf: use np.where(mask[..., None, :, :], scores, -np.inf) and give a fully masked query zeros."),
))
variant("multi_head_attention.inverted-mask-finite-fill")(partial(_mha, inverted=True, fill=-1e9, additive=True))
variant("multi_head_attention.finite-fill")(partial(_mha, fill=-1e9, additive=True))    # s + (1 - mask) * -1e9
variant("multi_head_attention.no-projections")(partial(_no_projections, project=True))    # W_O alone used
# d_model where H·d belongs, as TensorFlow courses write it (hint study 23): heads cut (batch, -1, H, d_model // H), a
# bias d_model wide added to X @ W, the heads merged into d_model columns; each fails where H·d != d_model, as theirs
for _split in (lambda X, H, d_model: np.swapaxes(X.reshape(X.shape[0], -1, H, d_model // H), -2, -3),
               lambda X, H, d_model: split_heads(X + np.zeros(d_model), H)):
    variant("multi_head_attention.head-size-from-d_model")(lambda X_q, *rest, at=_split: _mha(
        X_q, *rest, split=lambda X, H: at(X, H, X_q.shape[-1])))
variant("multi_head_attention.head-size-from-d_model")(lambda X_q, *rest: _mha(X_q, *rest, merge=lambda heads: (
    np.swapaxes(heads, -2, -3).reshape(*heads.shape[:-3], heads.shape[-2], X_q.shape[-1]))))
variant("multi_head_attention.strided-heads")(     # split strided, and merged back the same way
    partial(_mha, split=split_strided, merge=partial(merge_unswapped, strided=True)))
