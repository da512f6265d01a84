"""Single-slip variants: correct solutions written the way students write them, with one slip each.

None of these is a registered mutant: each is independent code that differs from a correct
solution by one plausible slip. Each must get a *targeted* hint (a named misconception or a
specific error diagnosis), not the generic "compare the values" or "read the error". The test
asserts the expected hint of every variant and that at least 90 % are targeted.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import attention_edu as ae
from attention_edu.checkers import CHECKERS

pytestmark = pytest.mark.usefixtures("calls_inline")  # each check's calls in this process (conftest.py)

GENERIC = {"value.mismatch", "value.nan", "error.other", "error.matmul-shapes"}


def _softmax_rows(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


# -- softmax --------------------------------------------------------------------------------------

def sm_axis_one(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def sm_whole(x):
    return np.exp(x) / np.exp(x).sum()


def sm_global_max(x):
    e = np.exp(x - x.max())
    return e / e.sum(axis=-1, keepdims=True)


def sm_no_keepdims(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1)


def sm_mixed_shift(x):
    return np.exp(x - x.max(axis=-1, keepdims=True)) / np.exp(x).sum(axis=-1, keepdims=True)


def sm_column_shift(x):
    e = np.exp(x - x.max(axis=0, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def sm_no_guard(x):
    m = np.max(x, axis=-1, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=-1, keepdims=True)


def sm_over_columns(x):
    e = np.exp(x)
    return e / e.sum(axis=0)


# -- masks ----------------------------------------------------------------------------------------

def cm_float(m, n=None):
    n = n or m
    return np.tril(np.ones((m, n)), k=n - m)


def cm_triu(m, n=None):
    n = n or m
    return np.triu(np.ones((m, n), dtype=bool), k=n - m)


def cm_strict(m, n=None):
    n = n or m
    return np.arange(n)[None, :] < np.arange(m)[:, None] + (n - m)


def cm_square(m, n=None):
    return np.tril(np.ones((m, m), dtype=bool))


def cm_no_offset(m, n=None):
    n = n or m
    return np.arange(n)[None, :] <= np.arange(m)[:, None]


def pm_flat(lengths, n):
    return np.arange(n)[None, :] < np.asarray(lengths)[:, None]


def pm_le(lengths, n):
    return (np.arange(n)[None, :] <= np.asarray(lengths)[:, None])[:, None, :]


def pm_padding_true(lengths, n):
    return (np.arange(n)[None, :] >= np.asarray(lengths)[:, None])[:, None, :]


def pm_column(lengths, n):
    return (np.arange(n)[None, :] < np.asarray(lengths)[:, None])[:, :, None]


def pm_longest(lengths, n):
    lengths = np.asarray(lengths)
    return (np.arange(lengths.max())[None, :] < lengths[:, None])[:, None, :]


# -- scaled dot-product attention ----------------------------------------------------------------

def _masked(scores, mask, fill=-np.inf):
    return scores if mask is None else np.where(mask, scores, fill)


def sd_no_transpose(Q, K, V, mask=None):
    weights = ae.softmax(_masked(Q @ K / math.sqrt(Q.shape[-1]), mask))
    return weights @ V, weights


def sd_sqrt_dv(Q, K, V, mask=None):
    weights = ae.softmax(_masked(Q @ np.swapaxes(K, -1, -2) / np.sqrt(V.shape[-1]), mask))
    return weights @ V, weights


def sd_unscaled(Q, K, V, mask=None):
    weights = ae.softmax(_masked(np.einsum("...md,...nd->...mn", Q, K), mask))
    return weights @ V, weights


def sd_over_d(Q, K, V, mask=None):
    weights = ae.softmax(_masked(Q @ np.swapaxes(K, -1, -2) / Q.shape[-1], mask))
    return weights @ V, weights


def sd_dot_T(Q, K, V, mask=None):
    weights = ae.softmax(_masked(Q @ K.T / math.sqrt(Q.shape[-1]), mask))
    return weights @ V, weights


def sd_times_mask(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    weights = ae.softmax(scores if mask is None else scores * mask)
    return weights @ V, weights


def sd_inverted(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    weights = ae.softmax(scores if mask is None else np.where(mask, -np.inf, scores))
    return weights @ V, weights


def sd_big_negative(Q, K, V, mask=None):
    weights = ae.softmax(_masked(Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1]), mask, -1e9))
    return weights @ V, weights


def sd_swapped(Q, K, V, mask=None):
    out, weights = ae.scaled_dot_product_attention(Q, K, V, mask)
    return weights, out


def sd_keys(Q, K, V, mask=None):
    weights = ae.softmax(_masked(Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1]), mask))
    return weights @ K, weights


def sd_np_dot(Q, K, V, mask=None):
    weights = ae.softmax(_masked(np.dot(Q, np.swapaxes(K, -1, -2)) / math.sqrt(Q.shape[-1]), mask))
    return np.dot(weights, V), weights


def sd_sqrt_m(Q, K, V, mask=None):
    weights = ae.softmax(_masked(Q @ np.swapaxes(K, -1, -2) / math.sqrt(len(Q)), mask))
    return weights @ V, weights


def sd_axis_zero(Q, K, V, mask=None):
    scores = _masked(Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1]), mask)
    weights = ae.softmax(np.swapaxes(scores, -1, -2))
    weights = np.swapaxes(weights, -1, -2)
    return weights @ V, weights


# -- additive and general scores ---------------------------------------------------------------

def bh_no_T(S, H, W1, W2, v):
    return np.tanh((S @ W1)[:, None, :] + (H @ W2)[None, :, :]) @ v


def bh_no_tanh(S, H, W1, W2, v):
    return ((S @ W1.T)[:, None, :] + (H @ W2.T)[None, :, :]) @ v


def bh_swapped(S, H, W1, W2, v):
    return np.tanh((S @ W2.T)[:, None, :] + (H @ W1.T)[None, :, :]) @ v


def bh_sum(S, H, W1, W2, v):
    return np.tanh((S @ W1.T)[:, None, :] + (H @ W2.T)[None, :, :]).sum(axis=-1)


def lu_transposed_w(S, H, W):
    return S @ W.T @ H.T


def lu_no_w(S, H, W):
    return np.einsum("md,nd->mn", S, H)


def lu_scaled(S, H, W):
    return S @ W @ H.T / np.sqrt(S.shape[-1])


# -- heads ------------------------------------------------------------------------------------------

def sp_direct(X, num_heads):
    *lead, L, D = X.shape
    return X.reshape(*lead, num_heads, L, D // num_heads)


def sp_two_d(X, num_heads):
    L, D = X.shape
    return X.reshape(L, num_heads, D // num_heads).transpose(1, 0, 2)


def mg_three_d(X):
    H, L, d = X.shape
    return X.transpose(1, 0, 2).reshape(L, H * d)


def mg_direct(X):
    *lead, H, L, d = X.shape
    return X.reshape(*lead, L, H * d)


def mh_scale_model(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    Q, K, V = (ae.split_heads(X @ W, num_heads) for X, W in ((X_q, W_Q), (X_kv, W_K), (X_kv, W_V)))
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(X_q.shape[-1])
    if mask is not None:
        scores = np.where(np.expand_dims(mask, -3), scores, -np.inf)
    weights = ae.softmax(scores)
    return ae.merge_heads(weights @ V) @ W_O, weights


def mh_no_output(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    Q, K, V = (ae.split_heads(X @ W, num_heads) for X, W in ((X_q, W_Q), (X_kv, W_K), (X_kv, W_V)))
    out, weights = ae.scaled_dot_product_attention(Q, K, V, None if mask is None else mask[..., None, :, :])
    return ae.merge_heads(out), weights


# -- entropy -------------------------------------------------------------------------------------

def en_log2(weights):
    return -np.sum(np.where(weights > 0, weights * np.log2(np.where(weights > 0, weights, 1)), 0), axis=-1)


def en_plus(weights):
    return np.sum(np.where(weights > 0, weights * np.log(np.where(weights > 0, weights, 1)), 0), axis=-1)


def en_nan(weights):
    return -(weights * np.log(weights)).sum(axis=-1)


def en_axis0(weights):
    safe = np.where(weights > 0, weights, 1.0)
    return -(weights * np.log(safe)).sum(axis=0)


# -- the backward pass ------------------------------------------------------------------------------

def _forward(Q, K, V, mask, scale):
    scores = Q @ np.swapaxes(K, -1, -2) / scale
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    return ae.softmax(scores)


def bw_diagonal(Q, K, V, d_output, mask=None):
    scale = math.sqrt(Q.shape[-1])
    W = _forward(Q, K, V, mask, scale)
    dS = W * (d_output @ np.swapaxes(V, -1, -2))
    return dS @ K / scale, np.swapaxes(dS, -1, -2) @ Q / scale, np.swapaxes(W, -1, -2) @ d_output


def _backward(Q, K, V, d_output, mask=None, dq_scale=True, dk_scale=True, dk_t=False):
    scale = math.sqrt(Q.shape[-1])
    W = _forward(Q, K, V, mask, scale)
    dW = d_output @ np.swapaxes(V, -1, -2)
    dS = W * (dW - (dW * W).sum(axis=-1, keepdims=True))
    dK = (np.swapaxes(Q, -1, -2) @ dS) if dk_t else np.swapaxes(dS, -1, -2) @ Q
    return dS @ K / (scale if dq_scale else 1), dK / (scale if dk_scale else 1), np.swapaxes(W, -1, -2) @ d_output


def bw_dq(Q, K, V, d_output, mask=None):
    return _backward(Q, K, V, d_output, mask, dq_scale=False)


def bw_dk_t(Q, K, V, d_output, mask=None):
    return _backward(Q, K, V, d_output, mask, dk_t=True)


def bw_no_mask(Q, K, V, d_output, mask=None):
    return _backward(Q, K, V, d_output)


# (exercise, function, expected hint id)
SLIPS = [
    ("softmax", sm_axis_one, "value.wrong-axis"),     # wrong on every 3-D case: told before "runs on 2-D only"
    ("softmax", sm_whole, "softmax.whole-array"),
    ("softmax", sm_global_max, "softmax.global-max-shift"),
    ("softmax", sm_no_keepdims, "softmax.missing-keepdims"),
    ("softmax", sm_mixed_shift, "softmax.unshifted-denominator"),
    ("softmax", sm_column_shift, "softmax.column-max-shift"),
    ("softmax", sm_no_guard, "softmax.masked-row-nan"),
    ("softmax", sm_over_columns, "softmax.wrong-axis"),
    ("causal_mask", cm_float, "causal_mask.float"),
    ("causal_mask", cm_triu, "causal_mask.upper-triangle"),
    ("causal_mask", cm_strict, "causal_mask.no-diagonal"),
    ("causal_mask", cm_square, "causal_mask.ignores-n"),
    ("causal_mask", cm_no_offset, "causal_mask.top-left"),
    ("padding_mask", pm_flat, "padding_mask.no-query-axis"),
    ("padding_mask", pm_le, "padding_mask.off-by-one"),
    ("padding_mask", pm_padding_true, "padding_mask.inverted"),
    ("padding_mask", pm_column, "padding_mask.axis-order"),
    ("padding_mask", pm_longest, "padding_mask.longest-length"),
    ("scaled_dot_product_attention", sd_no_transpose, "attention.no-transpose"),
    ("scaled_dot_product_attention", sd_sqrt_dv, "attention.scale-by-d_v"),
    ("scaled_dot_product_attention", sd_unscaled, "attention.unscaled"),
    ("scaled_dot_product_attention", sd_over_d, "attention.scale-by-d_k"),
    ("scaled_dot_product_attention", sd_dot_T, "attention.batched-transpose"),
    ("scaled_dot_product_attention", sd_times_mask, "attention.mask-times-scores"),
    ("scaled_dot_product_attention", sd_inverted, "attention.inverted-mask"),
    ("scaled_dot_product_attention", sd_big_negative, "attention.finite-fill"),
    ("scaled_dot_product_attention", sd_swapped, "attention.returns-swapped"),
    ("scaled_dot_product_attention", sd_keys, "attention.weights-times-keys"),
    ("scaled_dot_product_attention", sd_np_dot, "attention.np-dot"),
    ("scaled_dot_product_attention", sd_sqrt_m, "attention.scale-wrong-axis"),
    ("scaled_dot_product_attention", sd_axis_zero, "attention.softmax-over-queries"),
    ("bahdanau_scores", bh_no_T, "bahdanau_scores.row-vector-weights"),
    ("bahdanau_scores", bh_no_tanh, "bahdanau_scores.no-tanh"),
    ("bahdanau_scores", bh_swapped, "bahdanau_scores.swapped-projections"),
    ("bahdanau_scores", bh_sum, "bahdanau_scores.sum-instead-of-v"),
    ("luong_general_scores", lu_transposed_w, "luong_general_scores.transposed-W"),
    ("luong_general_scores", lu_no_w, "luong_general_scores.ignores-W"),
    ("luong_general_scores", lu_scaled, "luong_general_scores.scaled"),
    ("split_heads", sp_direct, "split_heads.reshape-only"),
    ("split_heads", sp_two_d, "error.fixed-ndim"),
    ("merge_heads", mg_three_d, "error.fixed-ndim"),
    ("merge_heads", mg_direct, "merge_heads.no-swap"),
    ("multi_head_attention", mh_scale_model, "multi_head_attention.scale-by-d_model"),
    ("multi_head_attention", mh_no_output, "multi_head_attention.no-output-projection"),
    ("attention_entropy", en_log2, "attention_entropy.log2"),
    ("attention_entropy", en_plus, "attention_entropy.missing-minus"),
    ("attention_entropy", en_nan, "attention_entropy.zero-gives-nan"),
    ("attention_entropy", en_axis0, "attention_entropy.wrong-axis"),
    ("attention_backward", bw_diagonal, "attention_backward.diagonal-jacobian"),
    ("attention_backward", bw_dq, "attention_backward.dq-unscaled"),
    ("attention_backward", bw_dk_t, "attention_backward.dk-transposed"),
    ("attention_backward", bw_no_mask, "attention_backward.ignores-mask"),
]


def test_at_least_forty_slips_and_ninety_percent_targeted():
    assert len(SLIPS) >= 40
    targeted = [hint not in GENERIC for _, _, hint in SLIPS]
    assert sum(targeted) / len(targeted) >= 0.9


@pytest.mark.parametrize("exercise,fn,hint_id", SLIPS, ids=[fn.__name__ for _, fn, _ in SLIPS])
def test_each_slip_gets_its_targeted_hint(exercise, fn, hint_id):
    result = CHECKERS[exercise](fn)
    assert not result.passed and result.attempted
    assert result.hint_id == hint_id, str(result)
    assert result.hint_id not in GENERIC
