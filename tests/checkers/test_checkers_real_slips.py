"""Mistakes written the way real code makes them (issue 17): each class in several spellings.

Every function here is independent code in a style found in course assignments and tutorials
(PyTorch's "True = ignore" masks with a finite fill, code written for one rank, softmax over
another axis, an epsilon inside the log, an axis kept twice, the backward's p(1 − p)), and
each must get the hint that names its mistake, by identity or by evidence. Right code written
in other styles (einsum, loops over the batch, float32, multiplying by the mask) must pass.
"""

from __future__ import annotations

import collections
import math
import typing

import numpy as np
import pytest

import attention_edu as ae
from attention_edu.checkers import CHECKERS

pytestmark = pytest.mark.usefixtures("calls_inline")  # each check's calls in this process (conftest.py)


def _softmax(x, axis=-1):
    top = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - np.where(np.isfinite(top), top, 0.0))
    total = e.sum(axis=axis, keepdims=True)
    return e / np.where(total > 0, total, 1.0)


def _scores(Q, K):
    return Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])


# -- 1. an inverted mask with a finite fill ---------------------------------------------------

def sd_where_1e9(Q, K, V, mask=None):
    s = _scores(Q, K)
    if mask is not None:
        s = np.where(mask, -1e9, s)                                    # True = ignore, the PyTorch way
    w = _softmax(s)
    return w @ V, w


def sd_where_1e10(Q, K, V, mask=None):
    s = _scores(Q, K)
    s = s if mask is None else np.where(mask == 1, -1e10, s)
    w = _softmax(s)
    return w @ V, w


def sd_added(Q, K, V, mask=None):
    s = _scores(Q, K)
    if mask is not None:
        s = s + mask * -1e9
    w = _softmax(s)
    return w @ V, w


def sd_added_minus(Q, K, V, mask=None):
    s = _scores(Q, K)
    if mask is not None:
        s -= 1e10 * mask.astype(s.dtype)
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ V, w


def sd_right_polarity_added(Q, K, V, mask=None):
    s = _scores(Q, K)
    if mask is not None:
        s = s + (1.0 - mask) * -1e9
    w = _softmax(s)
    return w @ V, w


def _bw(Q, K, V, dO, W):
    scale = math.sqrt(Q.shape[-1])
    dW = dO @ np.swapaxes(V, -1, -2)
    dS = W * (dW - np.sum(dW * W, axis=-1, keepdims=True))
    return dS @ K / scale, np.swapaxes(dS, -1, -2) @ Q / scale, np.swapaxes(W, -1, -2) @ dO


def bw_where_1e9(Q, K, V, d_output, mask=None):
    s = _scores(Q, K)
    if mask is not None:
        s = np.where(mask, -1e9, s)
    return _bw(Q, K, V, d_output, _softmax(s))


def bw_added(Q, K, V, d_output, mask=None):
    s = _scores(Q, K)
    if mask is not None:
        s = s + mask * -1e10
    return _bw(Q, K, V, d_output, _softmax(s))


def bw_right_polarity_fill(Q, K, V, d_output, mask=None):
    s = _scores(Q, K)
    if mask is not None:
        s = np.where(mask, s, -1e9)
    return _bw(Q, K, V, d_output, _softmax(s))


# -- 2. code written for one rank ----------------------------------------------------------------

def sd_transpose_021(Q, K, V, mask=None):
    s = Q @ K.transpose(0, 2, 1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    w = _softmax(s)
    return w @ V, w


def sd_unpack_three(Q, K, V, mask=None):
    N, L, E = Q.shape
    s = np.matmul(Q, np.swapaxes(K, 1, 2)) / np.sqrt(E)
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    w = _softmax(s)
    return w @ V, w


def sm_unpack_two(x):
    N, D = x.shape
    e = np.exp(x - x.max(axis=1).reshape(N, 1))
    return e / e.sum(axis=1).reshape(N, 1)


def sp_reshape_four(X, num_heads):
    N, L, D = X.shape
    return X.reshape(N, L, num_heads, D // num_heads).transpose(0, 2, 1, 3)


def mg_transpose_four(X):
    N, H, L, d = X.shape
    return X.transpose(0, 2, 1, 3).reshape(N, L, H * d)


def bw_transpose_021(Q, K, V, d_output, mask=None):
    s = Q @ K.transpose(0, 2, 1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    return _bw(Q, K, V, d_output, _softmax(s))


# -- 3. softmax over a wrong axis ----------------------------------------------------------------

def sm_axis_zero_3d(x):
    return _softmax(x, axis=0) if x.ndim > 2 else _softmax(x)


def sd_axis_one(Q, K, V, mask=None):
    s = _scores(Q, K)
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    w = _softmax(s, axis=1)
    return w @ V, w


def sd_axis_zero(Q, K, V, mask=None):
    s = _scores(Q, K)
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    w = _softmax(s, axis=0)
    return w @ V, w


# -- 4. an epsilon inside the log ----------------------------------------------------------------

def en_eps_1e3(weights):
    return -np.sum(weights * np.log(weights + 1e-3), axis=-1)


def en_eps_1e4(weights):
    return -(weights * np.log(weights + 1e-4)).sum(-1)


def en_eps_1e5(weights):
    p = np.asarray(weights, dtype=np.float64)
    return -np.einsum("...n,...n->...", p, np.log(p + 1e-5))


# -- 5. an axis kept twice -------------------------------------------------------------------------

def sm_keepdims_newaxis(x):
    m = x.max(axis=-1, keepdims=True)[:, np.newaxis]
    e = np.exp(x - m)
    return e / e.sum(axis=-1, keepdims=True)


def sm_sum_newaxis(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)[..., None]


# -- 6. the backward's softmax Jacobian and where the chain breaks -------------------------------

def _forward(Q, K, mask):
    s = _scores(Q, K)
    return _softmax(s if mask is None else np.where(mask, s, -np.inf))


def bw_p_one_minus_p(Q, K, V, d_output, mask=None):
    W = _forward(Q, K, mask)
    dS = W * (1 - W) * (d_output @ np.swapaxes(V, -1, -2))
    scale = np.sqrt(Q.shape[-1])
    return dS @ K / scale, np.swapaxes(dS, -1, -2) @ Q / scale, np.swapaxes(W, -1, -2) @ d_output


def bw_p_minus_p_squared(Q, K, V, d_output, mask=None):
    W = _forward(Q, K, mask)
    dW = np.einsum("...md,...nd->...mn", d_output, V)
    dS = dW * W - dW * W ** 2
    scale = np.sqrt(Q.shape[-1])
    return (np.einsum("...mn,...nd->...md", dS, K) / scale, np.einsum("...mn,...md->...nd", dS, Q) / scale,
            np.einsum("...mn,...md->...nd", W, d_output))


def bw_rowsum_unweighted(Q, K, V, d_output, mask=None):
    W = _forward(Q, K, mask)
    dW = d_output @ np.swapaxes(V, -1, -2)
    dS = W * (dW - dW.sum(axis=-1, keepdims=True))
    scale = np.sqrt(Q.shape[-1])
    return dS @ K / scale, np.swapaxes(dS, -1, -2) @ Q / scale, np.swapaxes(W, -1, -2) @ d_output


def bw_times_scale(Q, K, V, d_output, mask=None):
    W = _forward(Q, K, mask)
    dW = d_output @ np.swapaxes(V, -1, -2)
    dS = W * (dW - (dW * W).sum(axis=-1, keepdims=True))
    scale = np.sqrt(Q.shape[-1])
    return dS @ K * scale, np.swapaxes(dS, -1, -2) @ Q * scale, np.swapaxes(W, -1, -2) @ d_output


def bw_ds_sign(Q, K, V, d_output, mask=None):
    W = _forward(Q, K, mask)
    dW = d_output @ np.swapaxes(V, -1, -2)
    dS = W * ((dW * W).sum(axis=-1, keepdims=True) - dW)       # the difference taken the wrong way round
    scale = np.sqrt(Q.shape[-1])
    return dS @ K / scale, np.swapaxes(dS, -1, -2) @ Q / scale, np.swapaxes(W, -1, -2) @ d_output


@pytest.mark.parametrize("fn, factor", [(bw_ds_sign, "Each is -1 times the expected one: the opposite sign"),
                                        (bw_times_scale, "times the expected one.")])
def test_where_the_chain_breaks_and_by_which_factor(fn, factor):
    """dV right, dQ and dK wrong by one constant factor: the chain's hint says where, and the factor with its cause
    (it said only where: a flipped dS was not told to be a sign)."""
    result = CHECKERS["attention_backward"](fn)
    assert result.hint_id == "attention_backward.chain" and result.hint.startswith("dV is right"), str(result)
    assert factor in result.hint, result.hint


def mh_strided_both_ways(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    """Every H-th column per head, and merged back the same way (the registry's mutant merges back plainly)."""
    def split(X):
        return np.moveaxis(X.reshape(X.shape[:-1] + (X.shape[-1] // num_heads, num_heads)), -1, -3)

    def merge(X):
        return np.moveaxis(X, -3, -1).reshape(X.shape[:-3] + (X.shape[-2], -1))
    mask = None if mask is None else np.expand_dims(mask, -3)
    out, w = ae.scaled_dot_product_attention(split(X_q @ W_Q), split(X_kv @ W_K), split(X_kv @ W_V), mask)
    return merge(out) @ W_O, w


def sd_scale_by_n(Q, K, V, mask=None):
    d_k = K.shape[-2]                      # the number of keys, not the keys' size
    return _sdpa_scaled(Q, K, V, mask, np.sqrt(d_k))


def sd_d_k_from_axis_one(Q, K, V, mask=None):
    d_k = Q.shape[1]                       # the columns of a 2-D Q; the queries of a batch
    return _sdpa_scaled(Q, K, V, mask, np.sqrt(d_k))


def _sdpa_scaled(Q, K, V, mask, scale):
    scores = Q @ np.swapaxes(K, -1, -2) / scale
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = _softmax(scores)
    return weights @ V, weights


def sm_global_max_guarded(x):
    """One maximum for the whole array, with the 0 / 0 rows guarded: its output matched "sums over the whole
    array" on the large-logits case (the other rows underflow to 0), though it sums per row and passed the small
    case that mistake fails."""
    m = np.max(x)
    if not np.isfinite(m):
        m = 0.0
    e = np.exp(x - m)
    s = e.sum(axis=-1, keepdims=True)
    return np.where(s > 0, e / np.where(s > 0, s, 1), 0)


# (exercise, function, the hint id it must get first, other hint ids it must list)
REAL = [
    ("softmax", sm_global_max_guarded, "softmax.global-max-shift", ()),
    ("scaled_dot_product_attention", sd_scale_by_n, "attention.scale-by-n", ()),
    ("scaled_dot_product_attention", sd_d_k_from_axis_one, "attention.scale-fixed-axis", ()),
    ("multi_head_attention", mh_strided_both_ways, "multi_head_attention.strided-heads", ()),
    ("scaled_dot_product_attention", sd_where_1e9, "attention.inverted-mask-finite-fill", ()),
    ("scaled_dot_product_attention", sd_where_1e10, "attention.inverted-mask-finite-fill", ()),
    ("scaled_dot_product_attention", sd_added, "attention.inverted-mask-finite-fill", ()),
    ("scaled_dot_product_attention", sd_added_minus, "attention.inverted-mask-finite-fill", ()),
    ("scaled_dot_product_attention", sd_right_polarity_added, "attention.finite-fill", ()),
    ("attention_backward", bw_where_1e9, "attention_backward.inverted-mask-finite-fill", ()),
    ("attention_backward", bw_added, "attention_backward.inverted-mask-finite-fill", ()),
    ("attention_backward", bw_right_polarity_fill, "attention_backward.finite-fill", ()),
    ("scaled_dot_product_attention", sd_transpose_021, "error.fixed-ndim", ()),
    ("scaled_dot_product_attention", sd_unpack_three, "error.fixed-ndim", ()),
    ("softmax", sm_unpack_two, "error.fixed-ndim", ()),
    ("split_heads", sp_reshape_four, "split_heads.fixed-rank", ()),         # the registry's mutant matches
    ("merge_heads", mg_transpose_four, "merge_heads.fixed-rank", ()),
    ("attention_backward", bw_transpose_021, "error.fixed-ndim", ()),
    ("softmax", sm_axis_zero_3d, "softmax.wrong-axis", ()),
    ("scaled_dot_product_attention", sd_axis_one, "attention.softmax-over-queries", ("value.wrong-axis",)),
    ("scaled_dot_product_attention", sd_axis_zero, "attention.softmax-over-queries", ("value.wrong-axis",)),
    ("attention_entropy", en_eps_1e3, "attention_entropy.log-epsilon", ()),
    ("attention_entropy", en_eps_1e4, "attention_entropy.log-epsilon", ()),
    ("attention_entropy", en_eps_1e5, "attention_entropy.log-epsilon", ()),
    ("softmax", sm_keepdims_newaxis, "shape.broadcast-axis", ()),
    ("softmax", sm_sum_newaxis, "shape.broadcast-axis", ()),
    ("attention_backward", bw_p_one_minus_p, "attention_backward.p-one-minus-p", ()),
    ("attention_backward", bw_p_minus_p_squared, "attention_backward.p-one-minus-p", ()),
    ("attention_backward", bw_rowsum_unweighted, "attention_backward.rowsum-unweighted", ()),
    ("attention_backward", bw_times_scale, "attention_backward.chain", ()),
]


@pytest.mark.parametrize("exercise,fn,hint_id,also", REAL, ids=[fn.__name__ for _, fn, _, _ in REAL])
def test_real_mistake_gets_its_hint(exercise, fn, hint_id, also):
    result = CHECKERS[exercise](fn)
    assert not result.passed and result.attempted
    assert result.hint_id == hint_id, str(result)
    found = [m["hint_id"] for m in result.mistakes]
    assert found[0] == hint_id and set(also) <= set(found), found
    if fn in (sd_scale_by_n, sd_d_k_from_axis_one):    # no other mistake named where sizes happen to agree
        assert found == [hint_id], found
    assert len(found) == len(set(found))


# -- right code in other styles ----------------------------------------------------------------------

def sd_loop(Q, K, V, mask=None):
    lead = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    m, n = Q.shape[-2], K.shape[-2]
    full = np.ones((m, n), dtype=bool) if mask is None else mask
    Qb, Kb, Vb = (np.broadcast_to(x, lead + x.shape[-2:]).reshape(-1, *x.shape[-2:]) for x in (Q, K, V))
    Mb = np.broadcast_to(full, lead + (m, n)).reshape(-1, m, n)
    out, weights = np.zeros((len(Qb), m, V.shape[-1])), np.zeros((len(Qb), m, n))
    for b in range(len(Qb)):
        for i in range(m):
            keep = Mb[b, i]
            if not keep.any():
                continue
            s = Kb[b][keep] @ Qb[b, i] / math.sqrt(Q.shape[-1])
            e = np.exp(s - s.max())
            weights[b, i, keep] = e / e.sum()
            out[b, i] = weights[b, i] @ Vb[b]
    return out.reshape(lead + (m, V.shape[-1])), weights.reshape(lead + (m, n))


def sd_float32(Q, K, V, mask=None):
    Q, K, V = (x.astype(np.float32) for x in (Q, K, V))
    s = _scores(Q, K)
    if mask is not None:
        s = np.where(mask, s, np.float32(-np.inf))
    w = _softmax(s).astype(np.float32)
    return w @ V, w


def sd_multiply_mask(Q, K, V, mask=None):
    s = _scores(Q, K)
    if mask is None:
        w = _softmax(s)
    else:
        keep = np.broadcast_to(mask, s.shape).astype(s.dtype)
        top = np.max(np.where(keep > 0, s, -np.inf), axis=-1, keepdims=True)
        shifted = s - np.where(np.isfinite(top), top, 0.0)       # a masked score far above the row's top would
        e = np.exp(np.minimum(shifted, 0.0)) * keep              # overflow: exp(inf) * 0 is NaN
        total = e.sum(axis=-1, keepdims=True)
        w = e / np.where(total > 0, total, 1.0)
    return w @ V, w


def sm_logsumexp(x):
    top = np.max(x, axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    total = np.sum(np.exp(x - top), axis=-1, keepdims=True)
    with np.errstate(divide="ignore"):
        return np.where(total > 0, np.exp(x - top - np.log(np.where(total > 0, total, 1.0))), 0.0)


def en_xlogx(weights):
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(weights > 0, weights * np.log(weights), 0.0)
    return -terms.sum(axis=-1)


def bw_einsum(Q, K, V, d_output, mask=None):
    s = np.einsum("...md,...nd->...mn", Q, K) / math.sqrt(Q.shape[-1])
    W = _softmax(s if mask is None else np.where(mask, s, -np.inf))
    dW = np.einsum("...mv,...nv->...mn", d_output, V)
    dS = W * (dW - np.einsum("...mn,...mn->...m", dW, W)[..., None])
    scale = math.sqrt(Q.shape[-1])
    return (np.einsum("...mn,...nd->...md", dS, K) / scale,
            np.einsum("...mn,...md->...nd", dS, Q) / scale,
            np.einsum("...mn,...mv->...nv", W, d_output))


def bw_float32(Q, K, V, d_output, mask=None):
    Q, K, V, d_output = (x.astype(np.float32) for x in (Q, K, V, d_output))
    return tuple(g.astype(np.float32) for g in _bw(Q, K, V, d_output, _forward(Q, K, mask)))


class Attended(typing.NamedTuple):      # false-fail hunt 3: a NamedTuple of the two arrays scored 0
    output: np.ndarray
    weights: np.ndarray


def sd_named_tuple(Q, K, V, mask=None):
    s = _scores(Q, K)
    w = _softmax(s if mask is None else np.where(mask, s, -np.inf))
    return Attended(w @ V, w)


Grads = collections.namedtuple("Grads", "dQ dK dV")


def bw_named_tuple(Q, K, V, d_output, mask=None):
    return Grads(*_bw(Q, K, V, d_output, _forward(Q, K, mask)))


RIGHT = [
    ("scaled_dot_product_attention", sd_named_tuple), ("attention_backward", bw_named_tuple),
    ("scaled_dot_product_attention", sd_loop),                 # einsum attention: tests/checkers/test_checkers.py
    ("scaled_dot_product_attention", sd_float32), ("scaled_dot_product_attention", sd_multiply_mask),
    ("softmax", sm_logsumexp), ("attention_entropy", en_xlogx),
    ("attention_backward", bw_einsum), ("attention_backward", bw_float32),
]


@pytest.mark.parametrize("exercise,fn", RIGHT, ids=[fn.__name__ for _, fn in RIGHT])
def test_right_code_in_other_styles_passes_with_no_hint(exercise, fn):
    result = CHECKERS[exercise](fn)
    assert result.passed, str(result)
    assert result.hint == "" and result.hint_id is None and result.mistakes == ()
    assert result.probes_passed == result.probes_total
