"""Wrong code that the multi-head and backward checkers passed, and right code in many styles.

A mutation sweep (single-point mutants of the right solutions below, each judged as ``grade`` judges it, public
probes then five seeds of hidden ones) left three wrong multi_head_attention and two wrong attention_backward
variants passing. All of them go wrong only where the mask differs from one sequence to the next and one
sequence alone has a fully masked query, and no masks case had both: a guard for fully masked rows taken
over another axis (the batch, a batch axis), or each sequence's mask paired with another sequence. Each
checker now has the case "query 1 of sequence (1, 0) fully masked": masks (2, 2, 2, 3), one per sequence.
"""

from __future__ import annotations

import math
import subprocess
import textwrap

import numpy as np
import pytest

import attention_edu as ae
from attention_edu.checkers import CHECKERS, check_attention_backward, check_multi_head_attention

pytestmark = pytest.mark.usefixtures("calls_inline")  # each check's calls in this process (conftest.py)

NEW_CASE = "query 1 of sequence (1, 0) fully masked"


def _heads(X, num_heads):
    return np.swapaxes(np.reshape(X, X.shape[:-1] + (num_heads, -1)), -3, -2)      # (..., H, L, d)


def _merged(X):
    moved = np.swapaxes(X, -3, -2)                                                  # (..., L, H, d)
    return np.reshape(moved, moved.shape[:-2] + (-1,))                             # (..., L, H*d)


def _softmax(s):
    top = np.max(s, axis=-1, keepdims=True)
    e = np.exp(s - np.where(np.isfinite(top), top, 0.0))
    total = e.sum(axis=-1, keepdims=True)
    return e / np.where(total > 0, total, 1.0)


def _backward_from(W, Q, K, V, d_output):
    dW = d_output @ np.swapaxes(V, -1, -2)
    dS = W * (dW - np.sum(dW * W, axis=-1, keepdims=True))
    scale = math.sqrt(Q.shape[-1])
    return dS @ K / scale, np.swapaxes(dS, -1, -2) @ Q / scale, np.swapaxes(W, -1, -2) @ d_output


# -- the wrong code the checkers passed --------------------------------------------------------------

def mha_guard_sums_the_batch(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    Q, K, V = _heads(X_q @ W_Q, num_heads), _heads(X_kv @ W_K, num_heads), _heads(X_kv @ W_V, num_heads)
    s = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    if mask is not None:
        s = np.where(mask[..., None, :, :], s, -np.inf)
    top = np.max(s, axis=-1, keepdims=True)
    e = np.exp(s - np.where(np.isfinite(top), top, 0.0))
    total = e.sum(axis=-1, keepdims=True)
    w = e / np.where(e.sum(axis=0) > 0, total, 1.0)          # the guard looks at the first axis, not the row
    return _merged(w @ V) @ W_O, w


def mha_guard_over_axis_1(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    d_k, d_v = W_Q.shape[1] // num_heads, W_V.shape[1] // num_heads
    outs, weights = [], []
    for h in range(num_heads):
        q = X_q @ W_Q[:, h * d_k:(h + 1) * d_k]
        k = X_kv @ W_K[:, h * d_k:(h + 1) * d_k]
        v = X_kv @ W_V[:, h * d_v:(h + 1) * d_v]
        s = q @ np.swapaxes(k, -1, -2) / math.sqrt(d_k)
        if mask is not None:
            s = np.where(mask, s, -1e9)
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        w = e / e.sum(axis=-1, keepdims=True)
        if mask is not None:
            w = np.where(mask.any(axis=1, keepdims=True), w, 0.0)   # axis 1 is the keys only for a 2-D mask
        outs.append(w @ v)
        weights.append(w)
    return np.concatenate(outs, axis=-1) @ W_O, np.stack(weights, axis=-3)


def mha_masks_of_other_sequences(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    lead, (m, n), H = X_q.shape[:-2], (X_q.shape[-2], X_kv.shape[-2]), num_heads
    full = np.ones((m, n), dtype=bool) if mask is None else mask
    masks = np.broadcast_to(full, lead + (m, n)).reshape(-1, m, n, order="F")   # the batch axes flattened
    Xq, Xkv = X_q.reshape(-1, m, X_q.shape[-1]), X_kv.reshape(-1, n, X_kv.shape[-1])   # ... in another order
    out, weights = np.zeros((len(Xq), m, W_O.shape[1])), np.zeros((len(Xq), H, m, n))
    for b in range(len(Xq)):
        Q, K, V = _heads(Xq[b] @ W_Q, H), _heads(Xkv[b] @ W_K, H), _heads(Xkv[b] @ W_V, H)
        s = np.where(masks[b], Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1]), -np.inf)
        weights[b] = _softmax(s)
        out[b] = _merged(weights[b] @ V) @ W_O
    return out.reshape(lead + (m, W_O.shape[1])), weights.reshape(lead + (H, m, n))


def bw_guard_over_axis_1(Q, K, V, d_output, mask=None):
    s = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -1e9)
    e = np.exp(s - np.max(s, axis=-1, keepdims=True))
    W = e / np.sum(e, axis=-1, keepdims=True)
    if mask is not None:
        W = np.where(np.any(mask, axis=1, keepdims=True), W, 0.0)
    return _backward_from(W, Q, K, V, d_output)


def bw_masks_of_other_sequences(Q, K, V, d_output, mask=None):
    lead, (m, n) = Q.shape[:-2], (Q.shape[-2], K.shape[-2])
    full = np.ones((m, n), dtype=bool) if mask is None else mask
    masks = np.broadcast_to(full, lead + (m, n)).reshape(-1, m, n, order="F")
    flat = [x.reshape((-1,) + x.shape[-2:]) for x in (Q, K, V, d_output)]
    grads = [_backward_from(_softmax(np.where(masks[b], q @ k.T / math.sqrt(q.shape[-1]), -np.inf)), q, k, v, dO)
             for b, (q, k, v, dO) in enumerate(zip(*flat))]
    return tuple(np.stack(g).reshape(x.shape) for g, x in zip(zip(*grads), (Q, K, V)))


WRONG = [(check_multi_head_attention, mha_guard_sums_the_batch), (check_multi_head_attention, mha_guard_over_axis_1),
         (check_multi_head_attention, mha_masks_of_other_sequences),
         (check_attention_backward, bw_guard_over_axis_1), (check_attention_backward, bw_masks_of_other_sequences)]


@pytest.mark.parametrize("check,fn", WRONG, ids=[fn.__name__ for _, fn in WRONG])
def test_a_wrong_guard_or_mask_pairing_fails_on_a_batch_with_one_fully_masked_query(check, fn):
    result = check(fn)
    assert result.passed is False and result.attempted, str(result)
    assert result.probe == "masks" and NEW_CASE in str(result), str(result)
    assert result.probes_failed.get("masks") == 1, result.probes_failed        # that case alone, of the masks


# -- the console script, end to end --------------------------------------------------------------------

GUARD_SUMS_THE_BATCH = """
import math

import numpy as np


def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    def heads(X):
        return np.swapaxes(X.reshape(X.shape[:-1] + (num_heads, -1)), -3, -2)
    Q, K, V = heads(X_q @ W_Q), heads(X_kv @ W_K), heads(X_kv @ W_V)
    s = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    if mask is not None:
        s = np.where(mask[..., None, :, :], s, -np.inf)
    top = np.max(s, axis=-1, keepdims=True)
    e = np.exp(s - np.where(np.isfinite(top), top, 0.0))
    total = e.sum(axis=-1, keepdims=True)
    w = e / np.where(e.sum(axis=0) > 0, total, 1.0)
    concat = np.swapaxes(w @ V, -3, -2)
    return concat.reshape(concat.shape[:-2] + (-1,)) @ W_O, w
"""


def test_the_console_script_fails_a_guard_that_sums_over_the_batch(tmp_path, console_script):
    wrong, right = tmp_path / "wrong.py", tmp_path / "right.py"
    wrong.write_text(textwrap.dedent(GUARD_SUMS_THE_BATCH))
    right.write_text(textwrap.dedent(GUARD_SUMS_THE_BATCH).replace("e.sum(axis=0) > 0", "total > 0"))
    runs = [subprocess.run([console_script, "check", "multi_head_attention", str(path)], capture_output=True,
                           text=True, timeout=120) for path in (wrong, right)]
    assert [run.returncode for run in runs] == [1, 0], [run.stdout + run.stderr for run in runs]
    assert NEW_CASE in runs[0].stdout


# -- right code in other styles: every one passes, the new cases included -------------------------------

def sp_nb_swapaxes(X, num_heads):
    *lead, L, width = X.shape
    split = X.reshape(*lead, L, num_heads, width // num_heads)
    return np.swapaxes(split, -3, -2)


def sp_moveaxis(X, num_heads):
    d = X.shape[-1] // num_heads
    return np.moveaxis(X.reshape(X.shape[:-1] + (num_heads, d)), -2, -3)


def sp_stack_split(X, num_heads):
    return np.stack(np.split(X, num_heads, axis=-1), axis=-3)


def sp_loop_slices(X, num_heads):
    d = X.shape[-1] // num_heads
    heads = []
    for h in range(num_heads):
        heads.append(X[..., h * d:(h + 1) * d])
    return np.stack(heads, axis=-3)


def sp_transpose_axes(X, num_heads):
    n = X.ndim
    d = X.shape[-1] // num_heads
    Y = X.reshape(X.shape[:-1] + (num_heads, d))
    axes = tuple(range(n - 2)) + (n - 1, n - 2, n)
    return Y.transpose(axes)


def sp_einsum(X, num_heads):
    lead = X.shape[:-2]
    L, D = X.shape[-2], X.shape[-1]
    return np.einsum("...lhd->...hld", X.reshape(lead + (L, num_heads, D // num_heads)))


def mg_nb_swapaxes(X):
    *lead, H, L, d = X.shape
    moved = np.swapaxes(X, -3, -2)
    return moved.reshape(*lead, L, H * d)


def mg_concat_loop(X):
    H = X.shape[-3]
    return np.concatenate([X[..., h, :, :] for h in range(H)], axis=-1)


def mg_moveaxis(X):
    return np.moveaxis(X, -3, -2).reshape(X.shape[:-3] + (X.shape[-2], -1))


def mg_einsum(X):
    H, L, d = X.shape[-3:]
    return np.einsum("...hld->...lhd", X).reshape(X.shape[:-3] + (L, H * d))


def mg_transpose_axes(X):
    n = X.ndim
    axes = list(range(n - 3)) + [n - 2, n - 3, n - 1]
    Y = np.transpose(X, axes)
    return Y.reshape(Y.shape[:-2] + (Y.shape[-2] * Y.shape[-1],))


def mha_nb_library(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    Q = _heads(X_q @ W_Q, num_heads)
    K = _heads(X_kv @ W_K, num_heads)
    V = _heads(X_kv @ W_V, num_heads)
    head_mask = None if mask is None else mask[..., None, :, :]
    heads, weights = ae.scaled_dot_product_attention(Q, K, V, head_mask)
    return _merged(heads) @ W_O, weights


def mha_where_inf(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    H = num_heads
    d_k = W_Q.shape[1] // H
    d_v = W_V.shape[1] // H
    lead = X_q.shape[:-2]
    m, n = X_q.shape[-2], X_kv.shape[-2]
    Q = np.swapaxes((X_q @ W_Q).reshape(lead + (m, H, d_k)), -3, -2)
    K = np.swapaxes((X_kv @ W_K).reshape(X_kv.shape[:-2] + (n, H, d_k)), -3, -2)
    V = np.swapaxes((X_kv @ W_V).reshape(X_kv.shape[:-2] + (n, H, d_v)), -3, -2)
    s = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d_k)
    if mask is not None:
        s = np.where(np.expand_dims(mask, -3), s, -np.inf)
    top = np.max(s, axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.exp(s - top)
    total = np.sum(e, axis=-1, keepdims=True)
    w = e / np.where(total > 0, total, 1.0)
    heads = w @ V
    concat = np.swapaxes(heads, -3, -2).reshape(lead + (m, H * d_v))
    return concat @ W_O, w


def mha_multiply_mask(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    H = num_heads
    d_k = W_Q.shape[1] // H
    Q = np.stack(np.split(X_q @ W_Q, H, axis=-1), axis=-3)
    K = np.stack(np.split(X_kv @ W_K, H, axis=-1), axis=-3)
    V = np.stack(np.split(X_kv @ W_V, H, axis=-1), axis=-3)
    s = np.einsum("...hmd,...hnd->...hmn", Q, K) / np.sqrt(d_k)
    if mask is None:
        keep = np.ones(s.shape)
    else:
        keep = np.broadcast_to(mask[..., None, :, :], s.shape).astype(float)
    top = np.max(np.where(keep > 0, s, -np.inf), axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.exp(np.minimum(s - top, 0.0)) * keep
    total = e.sum(axis=-1, keepdims=True)
    w = e / np.where(total > 0, total, 1.0)
    heads = np.einsum("...hmn,...hnv->...hmv", w, V)
    concat = np.concatenate([heads[..., h, :, :] for h in range(H)], axis=-1)
    return concat @ W_O, w


def mha_head_loop_fill(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    d_k = W_Q.shape[1] // num_heads
    d_v = W_V.shape[1] // num_heads
    outs, weights = [], []
    for h in range(num_heads):
        q = X_q @ W_Q[:, h * d_k:(h + 1) * d_k]
        k = X_kv @ W_K[:, h * d_k:(h + 1) * d_k]
        v = X_kv @ W_V[:, h * d_v:(h + 1) * d_v]
        s = q @ np.swapaxes(k, -1, -2) / math.sqrt(d_k)
        if mask is not None:
            s = np.where(mask, s, -1e9)
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        w = e / e.sum(axis=-1, keepdims=True)
        if mask is not None:
            w = np.where(mask.any(axis=-1, keepdims=True), w, 0.0)
        outs.append(w @ v)
        weights.append(w)
    return np.concatenate(outs, axis=-1) @ W_O, np.stack(weights, axis=-3)


def mha_float32_inside(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    X_q, X_kv, W_Q, W_K, W_V, W_O = (a.astype(np.float32) for a in (X_q, X_kv, W_Q, W_K, W_V, W_O))
    H = num_heads
    Q = np.moveaxis((X_q @ W_Q).reshape(X_q.shape[:-1] + (H, -1)), -2, -3)
    K = np.moveaxis((X_kv @ W_K).reshape(X_kv.shape[:-1] + (H, -1)), -2, -3)
    V = np.moveaxis((X_kv @ W_V).reshape(X_kv.shape[:-1] + (H, -1)), -2, -3)
    s = Q @ np.swapaxes(K, -1, -2) / np.float32(math.sqrt(Q.shape[-1]))
    if mask is not None:
        s = np.where(mask[..., None, :, :], s, np.float32(-np.inf))
    w = ae.softmax(s).astype(np.float32)
    heads = w @ V
    concat = np.moveaxis(heads, -3, -2)
    concat = concat.reshape(concat.shape[:-2] + (-1,))
    return concat @ W_O, w


def mha_batch_loop(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    lead = np.broadcast_shapes(X_q.shape[:-2], X_kv.shape[:-2])
    m, n = X_q.shape[-2], X_kv.shape[-2]
    H = num_heads
    d_k, d_v = W_Q.shape[1] // H, W_V.shape[1] // H
    full = np.ones((m, n), dtype=bool) if mask is None else mask
    Mb = np.broadcast_to(full, lead + (m, n)).reshape(-1, m, n)
    Xq = np.broadcast_to(X_q, lead + (m, X_q.shape[-1])).reshape(-1, m, X_q.shape[-1])
    Xk = np.broadcast_to(X_kv, lead + (n, X_kv.shape[-1])).reshape(-1, n, X_kv.shape[-1])
    out = np.zeros((len(Xq), m, W_O.shape[1]))
    weights = np.zeros((len(Xq), H, m, n))
    for b in range(len(Xq)):
        concat = np.zeros((m, H * d_v))
        for h in range(H):
            q = Xq[b] @ W_Q[:, h * d_k:(h + 1) * d_k]
            k = Xk[b] @ W_K[:, h * d_k:(h + 1) * d_k]
            v = Xk[b] @ W_V[:, h * d_v:(h + 1) * d_v]
            for i in range(m):
                keep = Mb[b, i]
                if not keep.any():
                    continue
                s = k[keep] @ q[i] / math.sqrt(d_k)
                e = np.exp(s - s.max())
                weights[b, h, i, keep] = e / e.sum()
            concat[:, h * d_v:(h + 1) * d_v] = weights[b, h] @ v
        out[b] = concat @ W_O
    return out.reshape(lead + (m, W_O.shape[1])), weights.reshape(lead + (H, m, n))


def mha_fill_guard_rows(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    H = num_heads
    Q = np.swapaxes((X_q @ W_Q).reshape(X_q.shape[:-1] + (H, -1)), -3, -2)
    K = np.swapaxes((X_kv @ W_K).reshape(X_kv.shape[:-1] + (H, -1)), -3, -2)
    V = np.swapaxes((X_kv @ W_V).reshape(X_kv.shape[:-1] + (H, -1)), -3, -2)
    s = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    if mask is not None:
        s = np.where(mask[..., None, :, :], s, -1e9)
    e = np.exp(s - np.max(s, axis=-1, keepdims=True))
    w = e / np.sum(e, axis=-1, keepdims=True)
    if mask is not None:
        alive = np.any(mask, axis=-1, keepdims=True)
        w = w * alive[..., None, :, :]
    heads = np.swapaxes(w @ V, -3, -2)
    return heads.reshape(heads.shape[:-2] + (-1,)) @ W_O, w


def mha_nan_to_num(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    H = num_heads
    Q = np.stack(np.split(X_q @ W_Q, H, axis=-1), axis=-3)
    K = np.stack(np.split(X_kv @ W_K, H, axis=-1), axis=-3)
    V = np.stack(np.split(X_kv @ W_V, H, axis=-1), axis=-3)
    s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        s = np.where(np.expand_dims(mask, -3), s, -np.inf)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    w = np.nan_to_num(e / e.sum(axis=-1, keepdims=True))
    heads = w @ V
    return np.concatenate([heads[..., h, :, :] for h in range(H)], axis=-1) @ W_O, w


def jac_nb(w):
    n = w.shape[-1]
    return w[..., :, None] * (np.eye(n) - w[..., None, :])


def jac_einsum_diag(w):
    n = w.shape[-1]
    J = -np.einsum("...i,...j->...ij", w, w)
    idx = np.arange(n)
    J[..., idx, idx] += w
    return J


def jac_diag_minus_outer(w):
    n = w.shape[-1]
    diag = w[..., :, None] * np.eye(n)
    outer = w[..., :, None] * w[..., None, :]
    return diag - outer


def jac_loop_rows(w):
    n = w.shape[-1]
    rows = w.reshape(-1, n)
    out = np.empty((len(rows), n, n))
    for r in range(len(rows)):
        out[r] = np.diag(rows[r]) - np.outer(rows[r], rows[r])
    return out.reshape(w.shape + (n,))


def dv_nb(W, d_output):
    return np.swapaxes(W, -1, -2) @ d_output


def dv_einsum(W, d_output):
    return np.einsum("...mn,...mv->...nv", W, d_output)


def dv_matmul_moveaxis(W, d_output):
    return np.matmul(np.moveaxis(W, -1, -2), d_output)


def dv_outer_sum(W, d_output):
    return np.sum(W[..., :, :, None] * d_output[..., :, None, :], axis=-3)


def dw_nb(V, d_output):
    return d_output @ np.swapaxes(V, -1, -2)


def dw_einsum(V, d_output):
    return np.einsum("...mv,...nv->...mn", d_output, V)


def dw_matmul_moveaxis(V, d_output):
    return np.matmul(d_output, np.moveaxis(V, -2, -1))


def dw_outer_sum(V, d_output):
    return (d_output[..., :, None, :] * V[..., None, :, :]).sum(axis=-1)


def ds_nb(W, dW):
    row = np.sum(dW * W, axis=-1, keepdims=True)
    return W * (dW - row)


def ds_sub_first(W, dW):
    return (dW - (dW * W).sum(axis=-1, keepdims=True)) * W


def ds_einsum(W, dW):
    row = np.einsum("...mn,...mn->...m", dW, W)
    return W * dW - W * row[..., None]


def ds_jacobian(W, dW):
    n = W.shape[-1]
    J = W[..., :, None] * (np.eye(n) - W[..., None, :])
    return np.einsum("...j,...ji->...i", dW, J)


def ds_loop_rows(W, dW):
    n = W.shape[-1]
    Wr, dWr = W.reshape(-1, n), dW.reshape(-1, n)
    out = np.empty_like(Wr)
    for r in range(len(Wr)):
        w = Wr[r]
        J = np.diag(w) - np.outer(w, w)
        out[r] = J @ dWr[r]
    return out.reshape(W.shape)


def dq_nb(dS, K):
    return dS @ K / math.sqrt(K.shape[-1])


def dq_einsum(dS, K):
    return np.einsum("...mn,...nd->...md", dS, K) / np.sqrt(K.shape[-1])


def dq_prescale(dS, K):
    d_k = K.shape[-1]
    return np.matmul(dS, K * (1.0 / d_k ** 0.5))


def dk_nb(dS, Q):
    return np.swapaxes(dS, -1, -2) @ Q / math.sqrt(Q.shape[-1])


def dk_einsum(dS, Q):
    return np.einsum("...mn,...md->...nd", dS, Q) / np.sqrt(Q.shape[-1])


def dk_prescale_T(dS, Q):
    d_k = Q.shape[-1]
    return np.matmul(np.moveaxis(dS, -1, -2), Q / d_k ** 0.5)


def bw_nb_library(Q, K, V, d_output, mask=None):
    scale = math.sqrt(Q.shape[-1])
    scores = Q @ np.swapaxes(K, -1, -2) / scale
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = ae.softmax(scores)
    d_V = np.swapaxes(weights, -1, -2) @ d_output
    d_weights = d_output @ np.swapaxes(V, -1, -2)
    row = np.sum(d_weights * weights, axis=-1, keepdims=True)
    d_scores = weights * (d_weights - row)
    d_Q = d_scores @ K / scale
    d_K = np.swapaxes(d_scores, -1, -2) @ Q / scale
    return d_Q, d_K, d_V


def bw_inline_softmax(Q, K, V, d_output, mask=None):
    scale = math.sqrt(Q.shape[-1])
    s = Q @ np.swapaxes(K, -1, -2) / scale
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    top = np.max(s, axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.exp(s - top)
    total = e.sum(axis=-1, keepdims=True)
    W = e / np.where(total > 0, total, 1.0)
    dW = d_output @ np.swapaxes(V, -1, -2)
    dS = (dW - (dW * W).sum(axis=-1, keepdims=True)) * W
    return dS @ K / scale, np.swapaxes(dS, -1, -2) @ Q / scale, np.swapaxes(W, -1, -2) @ d_output


def bw_einsum_multiply_mask(Q, K, V, d_output, mask=None):
    d_k = Q.shape[-1]
    s = np.einsum("...md,...nd->...mn", Q, K) / np.sqrt(d_k)
    keep = np.ones(s.shape) if mask is None else np.broadcast_to(mask, s.shape).astype(float)
    top = np.max(np.where(keep > 0, s, -np.inf), axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.exp(np.minimum(s - top, 0.0)) * keep
    total = np.sum(e, axis=-1, keepdims=True)
    W = e / np.where(total > 0, total, 1.0)
    dW = np.einsum("...mv,...nv->...mn", d_output, V)
    dS = W * (dW - np.einsum("...mn,...mn->...m", dW, W)[..., None])
    dQ = np.einsum("...mn,...nd->...md", dS, K) / np.sqrt(d_k)
    dK = np.einsum("...mn,...md->...nd", dS, Q) / np.sqrt(d_k)
    dV = np.einsum("...mn,...mv->...nv", W, d_output)
    return dQ, dK, dV


def bw_fill_1e9_fixed(Q, K, V, d_output, mask=None):
    scale = math.sqrt(Q.shape[-1])
    s = Q @ np.swapaxes(K, -1, -2) / scale
    if mask is not None:
        s = np.where(mask, s, -1e9)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    W = e / e.sum(axis=-1, keepdims=True)
    if mask is not None:
        W = W * mask
        W = np.where(mask.any(axis=-1, keepdims=True), W, 0.0)
    dW = d_output @ np.swapaxes(V, -1, -2)
    J = W[..., :, None] * (np.eye(W.shape[-1]) - W[..., None, :])
    dS = np.einsum("...j,...ji->...i", dW, J)
    return dS @ K / scale, np.swapaxes(dS, -1, -2) @ Q / scale, np.swapaxes(W, -1, -2) @ d_output


def bw_float32_inside(Q, K, V, d_output, mask=None):
    Q, K, V, d_output = (x.astype(np.float32) for x in (Q, K, V, d_output))
    scale = np.float32(math.sqrt(Q.shape[-1]))
    s = Q @ np.swapaxes(K, -1, -2) / scale
    if mask is not None:
        s = np.where(mask, s, np.float32(-np.inf))
    W = ae.softmax(s).astype(np.float32)
    dW = d_output @ np.swapaxes(V, -1, -2)
    dS = W * (dW - np.sum(dW * W, axis=-1, keepdims=True))
    return dS @ K / scale, np.swapaxes(dS, -1, -2) @ Q / scale, np.swapaxes(W, -1, -2) @ d_output


def bw_row_loop(Q, K, V, d_output, mask=None):
    lead = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2], d_output.shape[:-2])
    m, n, d_k, d_v = Q.shape[-2], K.shape[-2], Q.shape[-1], V.shape[-1]
    full = np.ones((m, n), dtype=bool) if mask is None else mask
    Mb = np.broadcast_to(full, lead + (m, n)).reshape(-1, m, n)
    Qb = np.broadcast_to(Q, lead + (m, d_k)).reshape(-1, m, d_k)
    Kb = np.broadcast_to(K, lead + (n, d_k)).reshape(-1, n, d_k)
    Vb = np.broadcast_to(V, lead + (n, d_v)).reshape(-1, n, d_v)
    Ob = np.broadcast_to(d_output, lead + (m, d_v)).reshape(-1, m, d_v)
    dQ, dK, dV = np.zeros(Qb.shape), np.zeros(Kb.shape), np.zeros(Vb.shape)
    scale = math.sqrt(d_k)
    for b in range(len(Qb)):
        for i in range(m):
            keep = Mb[b, i]
            if not keep.any():
                continue
            s = Kb[b][keep] @ Qb[b, i] / scale
            e = np.exp(s - s.max())
            w = e / e.sum()
            dw = Vb[b][keep] @ Ob[b, i]
            ds = w * (dw - w @ dw)
            dQ[b, i] = ds @ Kb[b][keep] / scale
            dK[b][keep] += np.outer(ds, Qb[b, i]) / scale
            dV[b][keep] += np.outer(w, Ob[b, i])
    return dQ.reshape(lead + (m, d_k)), dK.reshape(lead + (n, d_k)), dV.reshape(lead + (n, d_v))


def bw_fill_guard_rows(Q, K, V, d_output, mask=None):
    scale = math.sqrt(Q.shape[-1])
    s = Q @ np.swapaxes(K, -1, -2) / scale
    if mask is not None:
        s = np.where(mask, s, -1e9)
    e = np.exp(s - np.max(s, axis=-1, keepdims=True))
    W = e / np.sum(e, axis=-1, keepdims=True)
    if mask is not None:
        W = np.where(np.any(mask, axis=-1, keepdims=True), W, 0.0)
    dW = d_output @ np.swapaxes(V, -1, -2)
    dS = W * dW - W * np.sum(W * dW, axis=-1, keepdims=True)
    return dS @ K / scale, np.swapaxes(dS, -1, -2) @ Q / scale, np.swapaxes(W, -1, -2) @ d_output


def bw_nan_to_num(Q, K, V, d_output, mask=None):
    d_k = Q.shape[-1]
    s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    W = np.nan_to_num(e / e.sum(axis=-1, keepdims=True))
    dW = d_output @ np.swapaxes(V, -1, -2)
    dS = W * (dW - (W * dW).sum(axis=-1, keepdims=True))
    return dS @ K / np.sqrt(d_k), np.swapaxes(dS, -1, -2) @ Q / np.sqrt(d_k), np.swapaxes(W, -1, -2) @ d_output


RIGHT = [
    ("split_heads", sp_nb_swapaxes), ("split_heads", sp_moveaxis), ("split_heads", sp_stack_split),
    ("split_heads", sp_loop_slices), ("split_heads", sp_transpose_axes), ("split_heads", sp_einsum),
    ("merge_heads", mg_nb_swapaxes), ("merge_heads", mg_concat_loop), ("merge_heads", mg_moveaxis),
    ("merge_heads", mg_einsum), ("merge_heads", mg_transpose_axes), ("multi_head_attention", mha_nb_library),
    ("multi_head_attention", mha_where_inf), ("multi_head_attention", mha_multiply_mask),
    ("multi_head_attention", mha_head_loop_fill), ("multi_head_attention", mha_float32_inside),
    ("multi_head_attention", mha_batch_loop), ("multi_head_attention", mha_fill_guard_rows),
    ("multi_head_attention", mha_nan_to_num), ("softmax_jacobian", jac_nb), ("softmax_jacobian", jac_einsum_diag),
    ("softmax_jacobian", jac_diag_minus_outer), ("softmax_jacobian", jac_loop_rows), ("backward_dv", dv_nb),
    ("backward_dv", dv_einsum), ("backward_dv", dv_matmul_moveaxis), ("backward_dv", dv_outer_sum),
    ("backward_dw", dw_nb), ("backward_dw", dw_einsum), ("backward_dw", dw_matmul_moveaxis),
    ("backward_dw", dw_outer_sum), ("backward_ds", ds_nb), ("backward_ds", ds_sub_first),
    ("backward_ds", ds_einsum), ("backward_ds", ds_jacobian), ("backward_ds", ds_loop_rows),
    ("backward_dq", dq_nb), ("backward_dq", dq_einsum), ("backward_dq", dq_prescale), ("backward_dk", dk_nb),
    ("backward_dk", dk_einsum), ("backward_dk", dk_prescale_T), ("attention_backward", bw_nb_library),
    ("attention_backward", bw_inline_softmax), ("attention_backward", bw_einsum_multiply_mask),
    ("attention_backward", bw_fill_1e9_fixed), ("attention_backward", bw_float32_inside),
    ("attention_backward", bw_row_loop), ("attention_backward", bw_fill_guard_rows),
    ("attention_backward", bw_nan_to_num),
]


@pytest.mark.parametrize("exercise,fn", RIGHT, ids=[fn.__name__ for _, fn in RIGHT])
def test_right_code_in_other_styles_passes(exercise, fn):
    result = CHECKERS[exercise](fn)
    assert result.passed, str(result)
    assert result.hint_id is None and result.probes_passed == result.probes_total


def test_split_and_merge_heads_that_cast_to_float32_are_told_the_dtype_is_lost():
    """False-fail hunt 3: a split_heads that cast to float32 passed every value probe (float32's tolerance) and failed
    the round trip with a hint that said nothing of the dtype, so the student could not find the cause."""
    def split_f32(X, num_heads):
        *lead, L, width = X.shape
        return np.swapaxes(X.reshape(*lead, L, num_heads, width // num_heads), -3, -2).astype(np.float32)

    def merge_f32(X):
        *lead, H, L, d = X.shape
        return np.swapaxes(X, -3, -2).reshape(*lead, L, H * d).astype(np.float32)

    for name, fn in (("split_heads", split_f32), ("merge_heads", merge_f32)):
        result = CHECKERS[name](fn)
        trip = [m for m in result.mistakes if m["hint_id"] == f"{name}.property-round-trip"]
        assert not result.passed and trip and "dtype" in trip[0]["hint"], str(result)
