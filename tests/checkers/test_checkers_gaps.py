"""Wrong code that the checkers passed, found by a mutation sweep, and right code that must keep passing.

Single-point mutants of right solutions (an operator, a constant, an axis, a branch changed) were judged
as ``grade`` judges them, and each survivor was compared with the reference on thousands of valid inputs.
Two survivors were wrong beyond the checker's tolerance; each is written here the way a student would:

- a softmax that treats a row summing to at most 1 as fully masked zeroes a row with a single key left
  (row 0 of any causal mask), closed by the softmax case "-inf entries, row 2 with a single key left";
- attention with a -1e9 fill that zeroes fully masked rows with ``np.any(mask, axis=1)`` is right for a
  mask (m, n) or (B, 1, n), wrong for a mask with batch and head axes, closed by the case
  "4-D mask (2, 2, 3, 4), entry 0 head 1 query 2 fully masked".
"""

from __future__ import annotations

import math
import subprocess
import textwrap

import numpy as np
import pytest

from attention_edu.checkers import CHECKERS, check_scaled_dot_product_attention, check_softmax

pytestmark = pytest.mark.usefixtures("calls_inline")  # each check's calls in this process (conftest.py)


# -- the closed gaps ----------------------------------------------------------------------------------

def sm_sum_above_one(x):
    top = np.max(x, axis=-1, keepdims=True)
    e = np.exp(x - np.where(np.isfinite(top), top, 0.0))
    total = e.sum(axis=-1, keepdims=True)
    return np.where(total > 1, e / np.where(total > 0, total, 1.0), 0.0)    # "a masked row sums to at most 1"


SD_ANY_AXIS_1 = """
import math
import numpy as np

def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -1e9)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    if mask is not None:                          # a fully masked row gets zeros (axis 1 is right for (m, n) only)
        weights = np.where(np.any(mask, axis=1, keepdims=True), weights, 0.0)
    return weights @ V, weights
"""


def _load(source: str, name: str):
    namespace: dict = {}
    exec(textwrap.dedent(source), namespace)
    return namespace[name]


def test_softmax_that_zeroes_a_row_with_one_key_fails():
    assert sm_sum_above_one(np.array([[0.5, -np.inf]]))[0, 0] == 0.0     # the reference gives 1
    result = check_softmax(sm_sum_above_one)
    assert result.passed is False
    assert "row 2 with a single key left" in str(result)


def test_attention_that_finds_masked_rows_along_axis_1_fails():
    wrong = _load(SD_ANY_AXIS_1, "scaled_dot_product_attention")
    result = check_scaled_dot_product_attention(wrong)
    assert result.passed is False
    assert "4-D mask (2, 2, 3, 4)" in str(result)


def test_attention_with_axis_1_fails_from_the_command_line(tmp_path, console_script):
    path = tmp_path / "attention.py"
    path.write_text(textwrap.dedent(SD_ANY_AXIS_1))
    done = subprocess.run([console_script, "check", "scaled_dot_product_attention", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "4-D mask (2, 2, 3, 4)" in done.stdout


# -- right code in the sweep's styles (the mutants' parents) -------------------------------------------

def sm_rows_loop(x):
    flat = x.reshape(-1, x.shape[-1])
    out = np.zeros_like(flat)
    for r in range(flat.shape[0]):
        if np.all(flat[r] == -np.inf):
            continue                                  # a fully masked row stays zeros
        e = np.exp(flat[r] - flat[r].max())
        out[r] = e / e.sum()
    return out.reshape(x.shape)


def sm_isneginf(x):
    top = np.max(np.where(np.isneginf(x), -np.finfo(x.dtype).max, x), axis=-1, keepdims=True)
    e = np.where(np.isneginf(x), 0.0, np.exp(x - top))
    total = e.sum(axis=-1, keepdims=True)
    total[total == 0] = 1.0
    return (e / total).astype(x.dtype)


def sm_methods(x):
    top = x.max(-1, keepdims=True)
    top[~np.isfinite(top)] = 0
    e = np.exp(x - top)
    total = e.sum(-1, keepdims=True)
    total[total == 0] = 1
    return e / total


def cm_positions(m, n=None):
    n = m if n is None else n
    return np.arange(n)[None, :] <= np.arange(m)[:, None] + (n - m)    # (1, n) with (m, 1)


def cm_tril(m, n=None):
    n = m if n is None else n
    return np.tril(np.ones((m, n), dtype=bool), k=n - m)


def cm_not_triu(m, n=None):
    n = n or m
    return ~np.triu(np.ones((m, n), dtype=bool), k=n - m + 1)


def cm_loops(m, n=None):
    n = m if n is None else n
    mask = np.zeros((m, n), dtype=bool)
    for i in range(m):
        for j in range(n):
            mask[i, j] = j <= i + n - m
    return mask


def cm_outer(m, n=None):
    n = m if n is None else n
    return np.greater_equal.outer(np.arange(m) + (n - m), np.arange(n))


def cm_row_slices(m, n=None):
    n = m if n is None else n
    mask = np.zeros((m, n), dtype=bool)
    for i in range(m):
        mask[i, :max(0, i + n - m + 1)] = True
    return mask


def pm_positions(lengths, n):
    return np.arange(n)[None, None, :] < np.asarray(lengths)[:, None, None]


def pm_reshape(lengths, n):
    return np.arange(n).reshape(1, 1, n) < np.asarray(lengths).reshape(-1, 1, 1)


def pm_not_padding(lengths, n):
    return ~(np.arange(n)[None, :] >= np.asarray(lengths)[:, None])[:, None, :]


def _softmax(scores):
    top = np.max(scores, axis=-1, keepdims=True)
    e = np.exp(scores - np.where(np.isfinite(top), top, 0.0))
    total = e.sum(axis=-1, keepdims=True)
    return e / np.where(total > 0, total, 1.0)


def sd_where_inf(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    weights = _softmax(scores if mask is None else np.where(mask, scores, -np.inf))
    return weights @ V, weights


def sd_einsum(Q, K, V, mask=None):
    scores = np.einsum("...md,...nd->...mn", Q, K) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    top = scores.max(axis=-1, keepdims=True)
    top[np.isneginf(top)] = 0.0
    e = np.exp(scores - top)
    total = e.sum(axis=-1, keepdims=True)
    weights = np.divide(e, total, out=np.zeros_like(e), where=total > 0)
    return np.einsum("...mn,...nv->...mv", weights, V), weights


def sd_fill_then_zero_rows(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -1e9)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    if mask is not None:                                            # the last axis holds each query's keys
        weights = np.where(np.any(mask, axis=-1, keepdims=True), weights, 0.0)
    return weights @ V, weights


def sd_transpose_axes(Q, K, V, mask=None):
    axes = list(range(K.ndim))
    axes[-1], axes[-2] = axes[-2], axes[-1]
    scores = np.matmul(Q, np.transpose(K, axes)) * (1.0 / np.sqrt(K.shape[-1]))
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    top = np.nan_to_num(np.max(scores, axis=-1, keepdims=True), neginf=0.0)
    e = np.exp(scores - top)
    weights = e / np.maximum(np.sum(e, axis=-1, keepdims=True), np.finfo(e.dtype).tiny)
    return np.matmul(weights, V), weights


def ba_broadcast(S, H, W1, W2, v):
    return np.tanh((S @ W1.T)[:, None, :] + (H @ W2.T)[None, :, :]) @ v     # (m, n, d_a) @ (d_a,)


def ba_einsum(S, H, W1, W2, v):
    decoder, encoder = np.einsum("as,ms->ma", W1, S), np.einsum("ah,nh->na", W2, H)
    return np.einsum("mna,a->mn", np.tanh(decoder[:, None] + encoder[None]), v)


def ba_loops(S, H, W1, W2, v):
    scores = np.zeros((S.shape[0], H.shape[0]), dtype=np.result_type(S, H, W1, W2, v))
    for t in range(S.shape[0]):
        for i in range(H.shape[0]):
            scores[t, i] = v @ np.tanh(W1 @ S[t] + W2 @ H[i])
    return scores


def ba_columns(S, H, W1, W2, v):
    decoder, encoder = (W1 @ S.T).T, (W2 @ H.T).T
    return np.sum(np.tanh(np.expand_dims(decoder, 1) + np.expand_dims(encoder, 0)) * v, axis=-1)


def lu_left(S, H, W):
    return (S @ W) @ H.T


def lu_right(S, H, W):
    return S @ (W @ H.T)


def lu_einsum(S, H, W):
    return np.einsum("ms,sh,nh->mn", S, W, H)


def lu_loops(S, H, W):
    scores = np.zeros((S.shape[0], H.shape[0]), dtype=np.result_type(S, H, W))
    for t in range(S.shape[0]):
        for i in range(H.shape[0]):
            scores[t, i] = S[t] @ W @ H[i]
    return scores


def en_safe_log(weights):
    return -np.sum(weights * np.log(np.where(weights > 0, weights, 1.0)), axis=-1)


def en_nansum(weights):
    with np.errstate(divide="ignore", invalid="ignore"):
        return -np.nansum(weights * np.log(weights), axis=-1)       # 0 · log 0 is NaN, and nansum skips it


def en_loops(weights):
    flat = weights.reshape(-1, weights.shape[-1])
    entropy = np.zeros(flat.shape[0], dtype=weights.dtype)
    for r, row in enumerate(flat):
        entropy[r] = -sum(p * math.log(p) for p in row if p > 0)
    return entropy.reshape(weights.shape[:-1])


def en_log_where(weights):
    logs = np.zeros_like(weights)
    np.log(weights, out=logs, where=weights > 0)
    return -(weights * logs).sum(-1)


RIGHT = [("softmax", sm_rows_loop), ("softmax", sm_isneginf), ("softmax", sm_methods),
         ("causal_mask", cm_positions), ("causal_mask", cm_tril), ("causal_mask", cm_not_triu),
         ("causal_mask", cm_loops), ("causal_mask", cm_outer), ("causal_mask", cm_row_slices),
         ("padding_mask", pm_positions), ("padding_mask", pm_reshape), ("padding_mask", pm_not_padding),
         ("scaled_dot_product_attention", sd_where_inf), ("scaled_dot_product_attention", sd_einsum),
         ("scaled_dot_product_attention", sd_fill_then_zero_rows), ("scaled_dot_product_attention", sd_transpose_axes),
         ("bahdanau_scores", ba_broadcast), ("bahdanau_scores", ba_einsum), ("bahdanau_scores", ba_loops),
         ("bahdanau_scores", ba_columns), ("luong_general_scores", lu_left), ("luong_general_scores", lu_right),
         ("luong_general_scores", lu_einsum), ("luong_general_scores", lu_loops),
         ("attention_entropy", en_safe_log), ("attention_entropy", en_nansum), ("attention_entropy", en_loops),
         ("attention_entropy", en_log_where)]


@pytest.mark.parametrize("exercise,fn", RIGHT, ids=[fn.__name__ for _, fn in RIGHT])
def test_right_code_from_the_sweep_passes(exercise, fn):
    result = CHECKERS[exercise](fn)
    assert result.passed, str(result)
    assert result.probes_passed == result.probes_total
