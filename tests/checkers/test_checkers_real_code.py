"""Learners' mistake patterns, run through ``attention-edu check`` (red team 11A).

Red team 11A measured the checkers on learners' public code: 55 NumPy functions from public course
repositories, tutorials and blogs, run through ``attention-edu check``. That code is not reproduced
here. Each entry of ``CORPUS`` is a function written for this project that makes the same mistake as
one of the measured functions (or is right, where that one was right), in a learner's natural style
and with the exercise's signature (its name, the argument order, an unused ``n`` or ``mask``
parameter). ``CORPUS`` records, for each, what reading the code shows its real mistake to be (None
where it is right), and the hints that name it. The tests run the files through the judge as a
student would.
"""

from __future__ import annotations

import re
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

from attention_edu import cli

pytestmark = pytest.mark.usefixtures("calls_inline")  # each check's calls in this process (conftest.py)

#: the attention weights with a fully masked row guarded, a helper some backward passes below share
_GUARDED_WEIGHTS = """
        def _weights(Q, K, mask):
            s = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
            if mask is not None:
                s = np.where(mask, s, -np.inf)
            top = np.max(s, axis=-1, keepdims=True)
            e = np.exp(s - np.where(np.isfinite(top), top, 0.0))
            total = e.sum(axis=-1, keepdims=True)
            return np.divide(e, total, out=np.zeros_like(e), where=total > 0)
"""

# (key, exercise, source, real mistake or None, hint ids that name it)
CORPUS = [
    ("softmax-global-sum", "softmax", """
        def softmax(X):                                   # the sum over the whole array, no shift
            numer = np.exp(X)
            return numer / numer.sum()
        """, "sums over the whole array (no axis)", ("softmax.whole-array",)),
    ("softmax-axis0", "softmax", """
        def softmax(x):                                   # normalised down the columns
            e = np.exp(x)
            return e / e.sum(axis=0)
        """, "normalises over axis 0 (the queries)", ("softmax.wrong-axis",)),
    ("softmax-global-max-sum", "softmax", """
        def softmax(x):                                   # a scalar max and a scalar sum
            shifted = x - x.max()
            ex = np.exp(shifted)
            return ex / np.sum(ex)
        """, "one max and one sum over the whole array", ("softmax.whole-array",)),
    ("softmax-transpose-trick", "softmax", """
        def softmax(x):                                   # transposing so the row sums broadcast
            num = np.exp(x)
            den = num.sum(axis=-1)
            return (num.T / den).T
        """, "no max subtracted: overflows near 1000 (and .T breaks 3-D input)", ("error.fixed-ndim", "softmax.no-max-shift")),
    ("softmax-causal-inside", "softmax", """
        def softmax(x):                                   # a decoder's look-ahead mask built into softmax
            look_ahead = np.triu(np.ones_like(x), k=1)
            x = x + look_ahead * -1e9
            e = np.exp(x - np.max(x, axis=-1, keepdims=True))
            return e / np.sum(e, axis=-1, keepdims=True)
        """, "masks the future inside softmax: zeros above the diagonal", ("softmax.causal-inside",)),
    ("softmax-axis0-stable", "softmax", """
        def softmax(x):                                   # the stable form, but along axis 0
            z = np.exp(x - x.max(axis=0))
            return z / z.sum(axis=0)
        """, "normalises over axis 0", ("softmax.wrong-axis",)),
    ("softmax-global-max-sum-2", "softmax", """
        def softmax(x):                                   # global max, global sum, in place
            biggest = np.max(x)
            out = np.exp(x - biggest)
            out /= np.sum(out)
            return out
        """, "one max and one sum over the whole array", ("softmax.whole-array",)),
    ("softmax-stable-keepdims", "softmax", """
        def softmax(x, axis=-1):                          # the textbook stable softmax
            peak = x.max(axis=axis, keepdims=True)
            e = np.exp(x - peak)
            total = e.sum(axis=axis, keepdims=True)
            return e / total
        """, "a fully -inf row gives NaN (-inf - -inf)", ("softmax.masked-row-nan",)),
    ("softmax-axis1-expand", "softmax", """
        def softmax(z):                                   # row sums along axis 1, a new axis added by hand
            ez = np.exp(z)
            row_totals = ez.sum(axis=1)
            return ez / row_totals[:, None]
        """, "axis 1 (right for 2-D only) and no max subtracted",
        ("value.wrong-axis", "error.fixed-ndim", "softmax.no-max-shift")),
    ("softmax-axis1-keepdims", "softmax", """
        def softmax(x):                                   # axis 1, written for a 2-D score matrix
            powers = np.exp(x)
            norm = powers.sum(axis=1, keepdims=True)
            return powers / norm
        """, "axis 1 (right for 2-D only) and no max subtracted",
        ("value.wrong-axis", "error.fixed-ndim", "softmax.no-max-shift")),
    ("softmax-global-max-axis1", "softmax", """
        def softmax(scores):                              # one max for the whole matrix, sums per row
            stable = np.exp(scores - np.max(scores))
            totals = np.expand_dims(stable.sum(axis=1), 1)
            return stable / totals
        """, "subtracts the global max (rows far below it underflow to 0/0); axis 1 (right for 2-D only)",
        ("value.wrong-axis", "error.fixed-ndim", "softmax.global-max-shift")),
    ("causal-additive-float", "causal_mask", """
        def causal_mask(m, n=None):                       # the additive form: -1e9 above the diagonal
            above = np.triu(np.ones((m, m)), 1)
            return -1e9 * above
        """, "returns an additive -1e9 float mask, not a boolean one", ("causal_mask.additive",)),
    ("causal-additive-4d", "causal_mask", """
        def causal_mask(m, n=None):                       # additive, shaped to broadcast over (B, H, m, n) scores
            n = m if n is None else n
            future = np.triu(np.ones((1, 1, m, n)), k=1 + n - m)
            return future * -1e9
        """, "an additive -1e9 float mask with batch and head axes, not a boolean (m, n) one",
        ("causal_mask.additive",)),
    ("causal-additive-1e10", "causal_mask", """
        def causal_mask(m, n=None):                       # picoGPT's fill: -1e10 above the diagonal
            return (1 - np.tri(m)) * -1e10
        """, "an additive -1e10 float mask, not a boolean one (and n ignored)", ("causal_mask.additive",)),
    ("causal-n-unhandled", "causal_mask", """
        def causal_mask(m, n=None):                       # n used as given, None included
            return np.tril(np.ones((m, n), dtype=bool), k=n - m)
        """, "n=None not replaced by m", ("error.none-argument",)),
    ("causal-tril-square", "causal_mask", """
        def causal_mask(m, n=None):                       # a square lower triangle
            return np.tril(np.ones((m, m))).astype(bool)
        """, "ignores n: always square", ("causal_mask.ignores-n",)),
    ("causal-loop-square", "causal_mask", """
        def causal_mask(m, n=None):                       # filled row by row, square
            allowed = np.zeros((m, m), dtype=bool)
            for row in range(m):
                allowed[row, :row + 1] = True
            return allowed
        """, "ignores n: always square", ("causal_mask.ignores-n",)),
    ("causal-batch-axis", "causal_mask", """
        def causal_mask(m, n=None):                       # a leading batch axis kept for broadcasting
            keep = np.tril(np.ones((m, m), dtype=int))
            return keep[None, :, :] > 0
        """, "a leading batch axis (1, m, m), and n ignored", ("causal_mask.ignores-n", "shape.extra-axis")),
    ("causal-tf-inverted", "causal_mask", """
        def causal_mask(m, n=None):                       # TensorFlow's look-ahead mask convention
            ones = np.ones((m, m))
            look_ahead = ones - np.tril(ones)
            return look_ahead
        """, "1 = masked (the inverse), as floats", ("causal_mask.float-inverted",)),
    ("padding-no-axis", "padding_mask", """
        def padding_mask(lengths, n):                     # a (B, n) sequence mask
            lens = np.array(lengths)
            positions = np.arange(n)
            valid = positions[np.newaxis, :] < lens[:, np.newaxis]
            return valid.astype(bool)
        """, "(B, n): no query axis to broadcast over", ("padding_mask.no-query-axis",)),
    ("padding-loop-no-axis", "padding_mask", """
        def padding_mask(lengths, n):                     # a loop over the sequences, (B, n)
            out = np.zeros((len(lengths), n), dtype=bool)
            for b in range(len(lengths)):
                out[b, :lengths[b]] = True
            return out
        """, "(B, n): no query axis to broadcast over", ("padding_mask.no-query-axis",)),
    ("padding-inverted", "padding_mask", """
        def padding_mask(lengths, n):                     # marks the padding rather than the tokens
            pad = np.arange(n) >= lengths.reshape(-1, 1)
            return np.expand_dims(pad, 1)
        """, "True = padding (the inverse)", ("padding_mask.inverted",)),
    ("padding-right", "padding_mask", """
        def padding_mask(lengths, n):                     # with the query axis
            idx = np.arange(n)
            keep = idx < np.asarray(lengths)[:, None]
            return keep[:, None, :]
        """, None, ()),
    ("sdpa-added-mask", "scaled_dot_product_attention", """
        def softmax(z):
            ez = np.exp(z)
            return (ez.T / ez.sum(axis=-1)).T

        def scaled_dot_product_attention(q, k, v, mask=None):   # the mask added to the scores
            scale = math.sqrt(q.shape[-1])
            logits = q @ k.T / scale
            if mask is not None:
                logits = logits + mask
            weights = softmax(logits)
            return weights @ v, weights
        """, "adds the boolean mask to the scores (masks nothing); k.T breaks batches; no max subtracted",
        ("attention.mask-added", "attention.batched-transpose")),
    ("sdpa-dot-no-mask", "scaled_dot_product_attention", """
        def softmax(x, axis=None):
            shifted = x - x.max(axis=axis, keepdims=True)
            e = np.exp(shifted)
            return e / np.sum(e, axis=axis, keepdims=True)

        def scaled_dot_product_attention(Q, K, V, mask=None):   # np.dot and .T, the mask unused
            d = Q.shape[-1]
            raw = np.dot(Q, K.T)
            probs = softmax(raw / np.sqrt(d), axis=-1)
            return np.dot(probs, V), probs
        """, "ignores the mask (and np.dot / key.T break batches)",
        ("attention.ignores-mask", "error.batched-dot")),
    ("sdpa-unscaled", "scaled_dot_product_attention", """
        def row_softmax(a):
            ea = np.exp(a)
            return ea / ea.sum(axis=1)[:, None]

        def scaled_dot_product_attention(Q, K, V, mask=None):   # no scaling, no mask
            similarity = Q @ K.T
            attn = row_softmax(similarity)
            context = attn @ V
            return context, attn
        """, "no 1/sqrt(d_k) scaling (and the mask ignored)",
        ("attention.unscaled", "attention.ignores-mask")),
    ("sdpa-kq-swapped", "scaled_dot_product_attention", """
        def softmax(x):
            e = np.exp(x - np.max(x, axis=-1, keepdims=True))
            return e / np.sum(e, axis=-1, keepdims=True)

        def scaled_dot_product_attention(Q, K, V, mask=None):   # keys times queries
            scores = np.matmul(K, np.swapaxes(Q, -2, -1)) / math.sqrt(Q.shape[-1])
            if mask is not None:
                scores = scores + mask
            weights = softmax(scores)
            return np.matmul(weights, V), weights
        """, "K Qᵀ instead of Q Kᵀ (weights transposed); adds the mask",
        ("attention.keys-times-queries", "attention.transposed-scores", "attention.mask-added")),
    ("split-tf-perm", "split_heads", """
        def split_heads(x, num_heads):                    # TensorFlow's perm= keyword
            head_size = x.shape[-1] // num_heads
            batch, length = x.shape[0], x.shape[1]
            x = x.reshape((batch, length, num_heads, head_size))
            return np.transpose(x, perm=(0, 2, 1, 3))
        """, "np.transpose has no perm= (TensorFlow's name); written for a batch axis",
        ("split_heads.fixed-rank", "error.fixed-ndim")),
    ("split-batch-only", "split_heads", """
        def split_heads(X, num_heads):                    # unpacks three axes
            B, L, D = X.shape
            X4 = np.reshape(X, (B, L, num_heads, D // num_heads))
            return np.transpose(X4, (0, 2, 1, 3))
        """, "needs a batch axis (3-D input only)", ("split_heads.fixed-rank",)),
    ("split-folded", "split_heads", """
        def split_heads(X, num_heads):                    # heads folded into the batch axis
            B, L, D = X.shape
            hd = D // num_heads
            per_head = X.reshape(B, L, num_heads, hd).transpose(0, 2, 1, 3)
            return per_head.reshape(-1, L, hd)
        """, "folds the heads into the batch axis (B*H, L, d)", ("split_heads.fixed-rank",)),
    ("merge-batch-only", "merge_heads", """
        def merge_heads(heads):                           # unpacks four axes
            B, H, L, hd = heads.shape
            joined = np.transpose(heads, (0, 2, 1, 3))
            return joined.reshape(B, L, H * hd)
        """, "needs a batch axis (4-D input only)", ("merge_heads.fixed-rank",)),
    ("merge-no-transpose", "merge_heads", """
        def merge_heads(x):                               # a reshape with no swap first
            B, H, L, hd = x.shape
            return np.reshape(x, (B, L, -1))
        """, "reshapes without swapping heads and positions back (and needs a batch axis)",
        ("merge_heads.fixed-rank", "merge_heads.no-swap")),
    ("entropy-eps", "attention_entropy", """
        def attention_entropy(p):                         # a small epsilon inside the log
            eps = 1e-10
            return -np.sum(p * np.log(p + eps), axis=-1)
        """, None, ()),
    ("entropy-clip", "attention_entropy", """
        def attention_entropy(weights):                   # the log of a floored copy
            logs = np.log(np.maximum(weights, 1e-12))
            return -np.sum(weights * logs, axis=-1)
        """, None, ()),
    ("entropy-log2", "attention_entropy", """
        def attention_entropy(p):                         # entropy in bits
            p_safe = np.clip(p, 1e-10, 1.0)
            bits = p * np.log2(p_safe)
            return -bits.sum(axis=-1)
        """, "bits (log2) instead of nats", ("attention_entropy.log2",)),
    ("entropy-axis1", "attention_entropy", """
        def attention_entropy(probs):                     # axis 1, written for a 2-D matrix
            logp = np.log(np.maximum(probs, 1e-12))
            return -(probs * logp).sum(axis=1)
        """, "axis 1: right for 2-D only", ("error.fixed-ndim", "attention_entropy.wrong-axis")),
    ("entropy-normalised", "attention_entropy", """
        def attention_entropy(attn):                      # divided by the largest entropy each row can have
            n_rows = attn.shape[0]
            row_mass = np.maximum(attn.sum(axis=1, keepdims=True), 1e-10)
            q = np.clip(attn / row_mass, 1e-10, 1.0)
            H = -(q * np.log(q)).sum(axis=1)
            max_H = np.log(np.arange(1, n_rows + 1))
            max_H[0] = 1.0
            return H / max_H
        """, "divides by log(i + 1): a normalised entropy", ("attention_entropy.normalised",)),
    ("jacobian-flatten", "softmax_jacobian", """
        def softmax_jacobian(w):                          # one column vector: a batch is flattened
            col = w.reshape(-1, 1)
            return np.diag(col.ravel()) - col @ col.T
        """, "one vector only: batched w is flattened", ("error.fixed-ndim",)),
    ("jacobian-loop", "softmax_jacobian", """
        def softmax_jacobian(s):                          # entry by entry, for one vector
            size = len(s)
            J = np.diag(s)
            for r in range(size):
                for c in range(size):
                    if r != c:
                        J[r, c] = -s[r] * s[c]
                    else:
                        J[r, c] = s[r] - s[r] ** 2
            return J
        """, "one vector only (np.diag of a matrix takes its diagonal)", ("error.fixed-ndim",)),
    ("jacobian-resoftmax", "softmax_jacobian", """
        def softmax_jacobian(w):                          # softmax applied to the weights first
            w = np.asarray(w)
            n_rows, n_cls = w.shape
            e = np.exp(w - w.max(axis=1, keepdims=True))
            p = e / e.sum(axis=1, keepdims=True)
            J = np.empty((n_rows, n_cls, n_cls))
            for b in range(n_rows):
                J[b] = np.diag(p[b]) - np.outer(p[b], p[b])
            return J
        """, "applies softmax again to the weights (and 2-D only)", ("error.fixed-ndim", "softmax_jacobian.softmax-again")),
    ("dv-full-transpose", "backward_dv", """
        def backward_dv(P, dO):                           # .T and np.dot, written for one matrix
            Pt = P.T
            return np.dot(Pt, dO)
        """, ".T / np.dot: right for 2-D only", ("error.batched-dot",)),
    ("ds-loop-rows", "backward_ds", """
        def backward_ds(w, dw):                           # one Jacobian per row, for 2-D input
            grad = np.empty_like(dw)
            for r in range(w.shape[0]):
                p = w[r]
                jac = np.diagflat(p) - np.outer(p, p)
                grad[r] = np.dot(jac, dw[r])
            return grad
        """, "right for 2-D only (a batch of matrices is flattened per row)", ("error.fixed-ndim",)),
    ("backward-einsum-2d", "attention_backward", """
        def attention_backward(Q, K, V, dL_dO, mask=None):  # a hand-written backward for 2-D input
            c = 1.0 / np.sqrt(Q.shape[-1])
            S = (Q @ K.T) * c
            P = np.exp(S - np.max(S, axis=-1, keepdims=True))
            P = P / P.sum(axis=-1, keepdims=True)
            dV = P.T @ dL_dO
            dP = dL_dO @ V.T
            dS = P * (dP - (P * dP).sum(axis=-1, keepdims=True))
            dQ = dS @ K * c
            dK = dS.T @ Q * c
            return dQ, dK, dV
        """, "ignores the mask; 2-D only", ("error.batched-transpose", "attention_backward.ignores-mask")),
    ("backward-right-torchlike", "attention_backward", """
        def attention_backward(Q, K, V, grad_output, mask=None):  # masked, batched, guarded rows
            scale = 1.0 / math.sqrt(Q.shape[-1])
            logits = np.matmul(Q, np.swapaxes(K, -1, -2)) * scale
            if mask is not None:
                logits = np.where(mask, logits, -np.inf)
            row_max = logits.max(axis=-1, keepdims=True)
            row_max = np.where(np.isfinite(row_max), row_max, 0.0)
            expd = np.exp(logits - row_max)
            norm = expd.sum(axis=-1, keepdims=True)
            P = expd / np.where(norm == 0, 1.0, norm)
            dV = np.matmul(np.swapaxes(P, -1, -2), grad_output)
            dP = np.matmul(grad_output, np.swapaxes(V, -1, -2))
            inner = np.sum(dP * P, axis=-1, keepdims=True)
            dS = P * (dP - inner)
            dQ = np.matmul(dS, K) * scale
            dK = np.matmul(np.swapaxes(dS, -1, -2), Q) * scale
            return dQ, dK, dV
        """, None, ()),
    ("softmax-axis-none", "softmax", """
        def softmax(x, axis=None):                        # axis=None by default
            top = np.max(x, axis=axis, keepdims=True)
            ex = np.exp(x - top)
            return ex / ex.sum(axis=axis, keepdims=True)
        """, "axis=None by default: one max and one sum over the whole array", ("softmax.whole-array",)),
    ("sdpa-where-1e9", "scaled_dot_product_attention", """
        def softmax(s, axis=-1):
            e = np.exp(s - s.max(axis=axis, keepdims=True))
            return e / e.sum(axis=axis, keepdims=True)

        def scaled_dot_product_attention(q, k, v, mask=None):   # a finite fill, a 2-D mask given a batch axis
            scores = q @ np.swapaxes(k, -2, -1)
            scores = scores / np.sqrt(q.shape[-1])
            if mask is not None:
                if mask.ndim == 2:
                    mask = np.expand_dims(mask, 0)
                scores = np.where(mask != 0, scores, -1e9)
            weights = softmax(scores)
            return weights @ v, weights
        """, "-1e9 fill: a fully masked row gets uniform weights (and a 2-D mask gains an axis)",
        ("shape.extra-axis", "attention.finite-fill")),
    ("mha-kv-query-length", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            *lead, m, _ = X_q.shape                       # m reused for K and V: right only when n == m
            d_k, d_v = W_Q.shape[1] // num_heads, W_V.shape[1] // num_heads
            def split(X, d):
                return np.swapaxes(X.reshape(*lead, m, num_heads, d), -2, -3)
            Q, K, V = split(X_q @ W_Q, d_k), split(X_kv @ W_K, d_k), split(X_kv @ W_V, d_v)
            S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
            if mask is not None:
                S = np.where(np.expand_dims(mask, -3), S, -np.inf)
            top = np.max(S, axis=-1, keepdims=True)
            e = np.exp(S - np.where(np.isfinite(top), top, 0))
            A = e / np.maximum(e.sum(-1, keepdims=True), 1e-300)
            merged = np.swapaxes(A @ V, -2, -3).reshape(*lead, m, num_heads * d_v)
            return merged @ W_O, A
        """, "splits K and V with the queries' length", ("multi_head_attention.kv-with-query-length",)),
    ("mha-output-only", "multi_head_attention", """
        def softmax(a, axis=-1):
            a = a - a.max(axis=axis, keepdims=True)
            ea = np.exp(a)
            return ea / ea.sum(axis=axis, keepdims=True)

        def multi_head_attention(Q, K, W_q, W_k, W_v, W_o, num_heads, mask=None):  # the values are the keys
            B, L, D = Q.shape
            hd = D // num_heads

            def heads(t):
                return t.reshape(B, L, num_heads, hd).transpose(0, 2, 1, 3)

            q = heads(Q @ W_q)
            k = heads(K @ W_k)
            v = heads(K @ W_v)
            att = softmax(q @ k.transpose(0, 1, 3, 2) / np.sqrt(hd))
            ctx = (att @ v).transpose(0, 2, 1, 3).reshape(B, L, D)
            return ctx @ W_o
        """, "returns the output only, not (output, weights); 3-D input with m = n only; mask ignored",
        # heads d_model // H wide too: on 3-D, where it runs, that fails every case (named first since study 18), now
        # told after the arity, as a head size assumed d_model / H is (hint study 24)
        ("harness.arity", "error.fixed-ndim", "multi_head_attention.head-size-from-d_model")),
    ("bahdanau-one-state", "bahdanau_scores", """
        def bahdanau_scores(S, H, W1, W2, v):              # states as columns, written for one decoder state
            s, h = S.T, H.T
            query_part = W1 @ s
            key_part = W2 @ h
            energy = np.tanh(key_part + query_part)
            return v.T @ energy
        """, "one decoder state only (m = 1): the (d_a, m) and (d_a, n) parts do not broadcast, and 1-D scores",
        ("bahdanau_scores.no-pairs",)),                   # was shape.missing-axis, which names the lesser half
    ("bahdanau-row-weights", "bahdanau_scores", """
        def bahdanau_scores(S, H, W1, W2, v):              # x @ W, a loop over the encoder states
            m, n = S.shape[0], H.shape[0]
            out = np.zeros((m, n), dtype=np.float32)
            projected = S @ W1
            for j, h in enumerate(H):
                e = np.tanh(projected + h @ W2)
                out[:, j] = e @ v
            return out
        """, "x @ W with the chapter's (d_a, d_s) weights: row-vector convention", ("bahdanau_scores.row-vector-weights",)),
    ("luong-multiplicative-right", "luong_general_scores", """
        def luong_general_scores(S, H, W):                # states as columns, transposed back
            dec = S.T
            enc = H.T
            return dec.T @ W @ enc
        """, None, ()),
    ("luong-keras-dense", "luong_general_scores", """
        def luong_general_scores(S, H, W):                # a dense layer on the encoder states (x @ W)
            keys = H @ W
            return S @ keys.T
        """, "applies W to the encoder states as x @ W (Keras' kernel layout): uses Wᵀ",
        ("luong_general_scores.transposed-W",)),
    ("softmax-transpose-axis0", "softmax", """
        def softmax(z):                                   # the transpose trick with the columns' sums
            z -= np.max(z)
            return (np.exp(z).T / np.sum(np.exp(z), axis=0)).T
        """, "divides row i by the sum of column i (the transpose trick needs axis=1); also shifts x in place",
        ("softmax.transpose-trick",)),                    # was error.broadcast (hint study 14)
    ("bahdanau-batched-concat", "bahdanau_scores", """
        def bahdanau_scores(S, H, W1, W2, v):              # a PyTorch decoder's concat score, for (batch, len, d)
            src_len = H.shape[1]
            hidden = np.repeat(S[:, None, :], src_len, axis=1)
            energy = np.tanh(np.concatenate((hidden, H), axis=2) @ np.concatenate([W1, W2], axis=1).T)
            return (energy @ v[:, None]).squeeze(2)
        """, "written for batched encoder states (batch, n, d_h): joins a 3-D and a 2-D array",
        ("error.fixed-ndim",)),                           # was error.other (hint study 14)
    ("backward-mask-added", "attention_backward", """
        def attention_backward(Q, K, V, d_output, mask=None):   # a course's backward, the mask added to the scores
            d_k = Q.shape[-1]
            S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
            if mask is not None:
                S = S + mask
            W = np.exp(S - S.max(axis=-1, keepdims=True))
            W = W / W.sum(axis=-1, keepdims=True)
            dW = d_output @ np.swapaxes(V, -1, -2)
            dS = W * (dW - np.sum(dW * W, axis=-1, keepdims=True)) / np.sqrt(d_k)
            return dS @ K, np.swapaxes(dS, -1, -2) @ Q, np.swapaxes(W, -1, -2) @ d_output
        """, "adds the boolean mask to the scores (hides nothing)", ("attention_backward.mask-added",)),
    ("backward-inverted-1e10-ds-zeroed", "attention_backward", """
        def attention_backward(Q, K, V, d_output, mask=None):   # True = ignore, -1e10, dS zeroed where ignored
            scale = np.sqrt(Q.shape[-1])
            S = Q @ np.swapaxes(K, -1, -2) / scale
            if mask is not None:
                S = np.where(mask, -1e10, S)
            W = np.exp(S - S.max(axis=-1, keepdims=True))
            W /= W.sum(axis=-1, keepdims=True)
            dW = d_output @ np.swapaxes(V, -1, -2)
            dS = W * (dW - (dW * W).sum(axis=-1, keepdims=True))
            if mask is not None:
                dS = np.where(mask, 0.0, dS)
            return dS @ K / scale, np.swapaxes(dS, -1, -2) @ Q / scale, np.swapaxes(W, -1, -2) @ d_output
        """, "inverted mask (True = ignore) with a -1e10 fill", ("attention_backward.inverted-mask-finite-fill",)),
    ("ds-causal-zeroed", "backward_ds", """
        def backward_ds(W, dW):                           # a decoder layer's backward, its mask applied again
            dS = W * (dW - np.sum(dW * W, axis=1, keepdims=True))
            dS[np.triu_indices(W.shape[-1], k=1)] = 0
            return dS
        """, "zeroes dS above the diagonal (a causal mask baked in); a fixed axis 1",
        ("backward_ds.causal-zeroed",)),
    ("dv-column-layout", "backward_dv", """
        def backward_dv(W, d_output):                     # written for values stored as columns
            return d_output @ W
        """, "the column-vector formula d_output W", ("backward_dv.column-layout",)),
    ("dq-column-layout", "backward_dq", """
        def backward_dq(dS, K):                           # written for states stored as columns
            return K @ (dS / np.sqrt(K.shape[-1])).T
        """, "the column-vector formula K dSᵀ", ("backward_dq.column-layout",)),
    ("dk-column-layout", "backward_dk", """
        def backward_dk(dS, Q):                           # written for states stored as columns
            return Q @ (dS / np.sqrt(Q.shape[-1]))
        """, "the column-vector formula Q dS", ("backward_dk.column-layout",)),
    ("sdpa-own-causal-mask", "scaled_dot_product_attention", """
        def scaled_dot_product_attention(Q, K, V, mask=None):   # a decoder's look-ahead mask, always
            m = Q.shape[0]
            scores = Q @ K.T / np.sqrt(Q.shape[-1]) + np.triu(np.ones((m, m)), k=1) * -1e9
            e = np.exp(scores - scores.max(axis=1, keepdims=True))
            w = e / e.sum(axis=1, keepdims=True)
            return w @ V, w
        """, "adds its own (m, m) causal mask whatever mask is given", ("attention.own-causal-mask",)),
    ("backward-inverted-subtract-1e10", "attention_backward", """
        def attention_backward(Q, K, V, d_output, mask=None):   # a course's layer: True = ignore, S - 1e10 there
            scale = np.sqrt(Q.shape[-1])
            S = Q @ np.swapaxes(K, -1, -2) / scale
            if mask is not None:
                S = np.where(mask, S - 1e10, S)
            W = np.exp(S - S.max(axis=-1, keepdims=True))
            W = W / W.sum(axis=-1, keepdims=True)
            dW = d_output @ np.swapaxes(V, -1, -2)
            dS = W * (dW - np.sum(dW * W, axis=-1, keepdims=True))
            if mask is not None:
                dS = np.where(mask, 0.0, dS)
            return dS @ K / scale, np.swapaxes(dS, -1, -2) @ Q / scale, np.swapaxes(W, -1, -2) @ d_output
        """, "inverted mask, lowered by 1e10 where True", ("attention_backward.inverted-mask-finite-fill",)),
    ("backward-inverted-inf-unguarded", "attention_backward", """
        def attention_backward(Q, K, V, d_output, mask=None):   # True = ignore, -inf there, no guard
            scale = np.sqrt(Q.shape[-1])
            S = Q @ np.swapaxes(K, -1, -2) / scale
            if mask is not None:
                S = np.where(mask, -np.inf, S)
            W = np.exp(S - S.max(axis=-1, keepdims=True))
            W = W / W.sum(axis=-1, keepdims=True)
            dW = d_output @ np.swapaxes(V, -1, -2)
            dS = W * (dW - np.sum(dW * W, axis=-1, keepdims=True))
            return dS @ K / scale, np.swapaxes(dS, -1, -2) @ Q / scale, np.swapaxes(W, -1, -2) @ d_output
        """, "inverted mask: the query that may see every key gets NaN", ("attention_backward.inverted-mask",)),
    ("sdpa-mask-used-while-none", "scaled_dot_product_attention", """
        def scaled_dot_product_attention(Q, K, V, mask=None):   # the mask converted before it is tested
            keep = mask.astype(bool)
            S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
            S = np.where(keep, S, -np.inf)
            W = np.exp(S - S.max(axis=-1, keepdims=True))
            W = W / W.sum(axis=-1, keepdims=True)
            return W @ V, W
        """, "uses the mask when none is given (AttributeError on None)", ("error.none-argument",)),
    ("bahdanau-unpaired-sum", "bahdanau_scores", """
        def bahdanau_scores(S, H, W1, W2, v):              # the two projections added as they come
            return np.tanh(S @ W1.T + H @ W2.T) @ v
        """, "adds (m, d_a) to (n, d_a): no (m, n) pairs; m = 1 broadcasts to one row without its axis",
        ("bahdanau_scores.no-pairs",)),                   # was shape.missing-axis
    ("bahdanau-last-state", "bahdanau_scores", """
        def bahdanau_scores(S, H, W1, W2, v):              # a decoder step's code: the last state only
            s_t = S[-1]
            energy = np.tanh(s_t @ W1.T + H @ W2.T)
            return (energy @ v)[None, :]
        """, "scores the last decoder state only", ("bahdanau_scores.no-pairs",)),     # was harness.shape
    ("luong-elementwise", "luong_general_scores", """
        def luong_general_scores(S, H, W):                # s W h as a row-wise product
            return np.sum((S @ W) * H, axis=-1)
        """, "pairs decoder state t with encoder state t (elementwise product)",
        ("luong_general_scores.elementwise",)),           # was error.broadcast
    ("luong-last-state", "luong_general_scores", """
        def luong_general_scores(S, H, W):                # a decoder step's code: the last state only
            return (S[-1] @ W @ H.T)[np.newaxis]
        """, "scores the last decoder state only", ("luong_general_scores.one-decoder-state",)),  # was harness.shape
    ("dq-right", "backward_dq", """
        def backward_dq(grad_scores, K):                  # batched matmul, scaled
            d = K.shape[-1]
            return grad_scores @ K / np.sqrt(d)
        """, None, ()),
    ("dk-full-transpose", "backward_dk", """
        def backward_dk(dL_dS, Q):                        # .T, written for one matrix
            c = Q.shape[-1] ** -0.5
            return (dL_dS.T @ Q) * c
        """, ".T: right for 2-D only", ("error.batched-transpose",)),
    ("ds-right-swapaxes", "backward_ds", """
        def backward_ds(w, dw):                           # the row dot product kept as a column
            weighted = np.sum(w * dw, axis=-1, keepdims=True)
            return w * (dw - weighted)
        """, None, ()),
    ("entropy-renormalised-axis1", "attention_entropy", """
        def attention_entropy(attn, eps=1e-12):           # rows renormalised, axis 1
            totals = attn.sum(axis=1, keepdims=True) + eps
            q = np.clip(attn / totals, eps, 1.0)
            return -(q * np.log(q)).sum(axis=1)
        """, "axis 1: right for 2-D only", ("error.fixed-ndim", "attention_entropy.wrong-axis")),
    ("ds-axis1", "backward_ds", """
        def backward_ds(s, dout):                         # the row dot product along axis 1
            row_dot = (s * dout).sum(axis=1, keepdims=True)
            return s * dout - s * row_dot
        """, "axis 1: right for 2-D only", ("error.fixed-ndim", "backward_ds.wrong-axis", "value.mismatch")),
    ("ds-axis1-no-keepdims", "backward_ds", """
        def backward_ds(W, dW):                           # a classifier's softmax backward: axis 1, no keepdims
            inner = np.sum(dW * W, axis=1)
            return W * (dW - inner)
        """, "the row sums without keepdims, over axis 1 (the keys of a 2-D matrix only)",
        ("backward_ds.missing-keepdims", "backward_ds.wrong-axis")),
    ("ds-no-keepdims", "backward_ds", """
        def backward_ds(p, dp):                           # the row sum without keepdims
            s = np.sum(dp * p, axis=-1)
            return p * (dp - s)
        """, "the row sum without keepdims=True does not line up with the rows",
        ("backward_ds.missing-keepdims", "error.broadcast")),
    ("ds-identity", "backward_ds", """
        def backward_ds(w, dw):                           # the gradient passed straight through
            grad = dw
            return grad
        """, "no softmax backward at all: returns dW", ("backward_ds.no-softmax",)),
    ("ds-cross-entropy", "backward_ds", """
        def backward_ds(probs, target):                   # the cross-entropy shortcut p - y
            col = target.reshape(len(target), 1)
            return probs.T - col
        """, "the cross-entropy shortcut p - y (transposed), not the softmax's Jacobian product", ()),
    # red team 12A: held-out patterns whose first hint was generic before the fix named in the comment
    ("sdpa-dot-untransposed", "scaled_dot_product_attention", """
        def scaled_dot_product_attention(Q, K, V, mask=None):   # the method form of np.dot, K as it is
            sims = Q.dot(K) / np.sqrt(Q.shape[-1])
            e = np.exp(sims - sims.max(axis=-1, keepdims=True))
            w = e / e.sum(axis=-1, keepdims=True)
            return w.dot(V), w
        """, "multiplies Q by K, not by Kᵀ (np.dot spelling); np.dot breaks batches too",
        ("attention.no-transpose",)),            # was error.matmul-shapes: a variant spells it with np.dot
    ("ds-total-sum", "backward_ds", """
        def backward_ds(probs, grad_probs):                # the weighted mean over every entry at once
            mean_term = (grad_probs * probs).sum()
            return probs * (grad_probs - mean_term)
        """, "sums over the whole array, not per row", ("backward_ds.whole-array-sum",)),    # was value.mismatch
    ("bahdanau-column-states", "bahdanau_scores", """
        def bahdanau_scores(S, H, W1, W2, v):              # W1 times the decoder states, as for one column
            dec = W1 @ S
            enc = H @ W2.T
            return np.tanh(dec + enc) @ v
        """, "W1 @ S: the column-vector formula applied to states stored as rows",
        ("bahdanau_scores.states-as-columns",)),          # was error.matmul-shapes
    ("luong-column-states", "luong_general_scores", """
        def luong_general_scores(S, H, W):                # s^T W h written with the stacked matrices
            left = np.transpose(S) @ W
            return left @ H
        """, "Sᵀ W H: the column-vector formula applied to states stored as rows",
        ("luong_general_scores.states-as-columns",)),     # was error.matmul-shapes
    ("softmax-rank-branches", "softmax", """
        def softmax(logits):                              # one branch per rank it was tried on
            if logits.ndim == 1:
                z = np.exp(logits - logits.max())
                return z / z.sum()
            elif logits.ndim == 2:
                z = np.exp(logits - logits.max(axis=1, keepdims=True))
                return z / z.sum(axis=1, keepdims=True)
        """, "no branch for 3-D input: returns None there", ("harness.none",)),   # was harness.wrong-type
    ("ds-row-dot", "backward_ds", """
        def backward_ds(weights, upstream):               # the weighted mean as one dot product, as for a single row
            avg = np.dot(weights, upstream)
            return weights * (upstream - avg)
        """, "written for one row: np.dot of two matrices is a matrix product", ("backward_ds.single-vector",)),
    ("ds-diag-outer", "backward_ds", """
        def backward_ds(p, g):                            # one softmax vector's Jacobian, then a product
            jac = np.diag(p) - np.outer(p, p)
            return g @ jac
        """, "written for one vector: np.diag of a matrix is its diagonal, np.outer flattens",
        ("backward_ds.single-vector",)),                  # was error.broadcast (a keepdims hint)
    ("mha-3d-query-width-slots", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            batch, m, _ = X_q.shape                       # one (batch, time, features) array
            n = X_kv.shape[1]
            Q = (X_q @ W_Q).reshape(batch, m, num_heads, -1)
            K = (X_kv @ W_K).reshape(batch, n, num_heads, -1)
            V = (X_kv @ W_V).reshape(batch, n, num_heads, -1)
            context = np.empty_like(Q)                    # a slot per head, as wide as a query head
            maps = []
            for h in range(num_heads):
                s = Q[:, :, h] @ np.swapaxes(K[:, :, h], 1, 2) / np.sqrt(Q.shape[-1])
                if mask is not None:
                    s = np.where(mask, s, -np.inf)
                w = np.exp(s - s.max(axis=-1, keepdims=True))
                w = w / w.sum(axis=-1, keepdims=True)
                context[:, :, h] = w @ V[:, :, h]
                maps.append(w)
            return context.reshape(batch, m, -1) @ W_O, np.stack(maps, axis=1)
        """, "3-D input only; each head's output is stored in a slot of d_k, not d_v", ("error.fixed-ndim",)),
    ("ds-columns-outer", "backward_ds", """
        def backward_ds(W, dW):                           # each column is one softmax vector
            dS = np.empty_like(W)
            for j in range(W.shape[1]):
                w, g = W[:, j], dW[:, j]
                dS[:, j] = np.diag(w) @ g - np.outer(w, w) @ g
            return dS
        """, "softmax taken down the columns (axis 0); 2-D input only", ("backward_ds.wrong-axis",)),
    ("jacobian-diagonal-vector", "softmax_jacobian", """
        def softmax_jacobian(w):                          # each weight by its own score only
            return w * (1.0 - w)
        """, "returns the diagonal alone, as a vector (n,) for the n × n matrix", ("shape.square-axis",)),
    ("jacobian-row-totals", "softmax_jacobian", """
        def softmax_jacobian(p):                          # each row of the matrix summed as it is built
            out = np.zeros(len(p))
            for i in range(len(p)):
                for j in range(len(p)):
                    out[i] += p[i] * ((i == j) - p[j])
            return out
        """, "sums each row of the Jacobian into one value per weight; 1-D only", ("shape.square-axis",)),
    ("sdpa-mask-added-unguarded", "scaled_dot_product_attention", """
        def scaled_dot_product_attention(q, k, v, mask=None):    # the mask added, whether or not there is one
            d_k = q.shape[-1]
            scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_k) + mask
            scores = scores - scores.max(axis=-1, keepdims=True)
            weights = np.exp(scores)
            weights = weights / weights.sum(axis=-1, keepdims=True)
            return weights @ v, weights
        """, "adds the mask, even a missing one (None), to the scores",
        ("error.none-argument", "attention.mask-added")),
    ("sdpa-3d-tf-mask", "scaled_dot_product_attention", """
        def scaled_dot_product_attention(Q, K, V, mask=None):
            logits = np.matmul(Q, K.transpose(0, 2, 1))   # (batch, length, depth) arrays
            logits = logits / np.sqrt(K.shape[2])
            if mask is not None:
                logits = logits + mask * -1e9             # 1 marks a position to hide
            logits = logits - logits.max(axis=-1, keepdims=True)
            p = np.exp(logits)
            p = p / p.sum(axis=-1, keepdims=True)
            return p @ V, p
        """, "3-D input only; the mask inverted (1 = hide) with a finite fill", ("error.fixed-ndim",)),
    # hint study 3 (untuned): patterns whose first hint was generic before the reading named here existed
    ("dq-d_k-from-axis-1", "backward_dq", """
        def backward_dq(dS, K):                           # d_k read as the second size, right for 2-D K only
            return dS @ K / np.sqrt(K.shape[1])
        """, "d_k taken from K.shape[1], which is n on batched input", ("backward_dq.scale-fixed-axis",)),
    # hint study 2: patterns whose first hint was generic or off-target before the mistake named here existed
    ("entropy-mean-of-rows", "attention_entropy", """
        def attention_entropy(attn):                      # one summary number for the whole map
            safe = np.clip(attn, 1e-12, 1.0)
            per_query = -(safe * np.log(safe)).sum(axis=-1)
            return per_query.mean()
        """, "returns the mean of the row entropies, one number", ("attention_entropy.single-number",)),
    ("entropy-eps-renormalised", "attention_entropy", """
        def attention_entropy(weights):                   # no zero may reach the log, so lift and renormalise
            lifted = weights + 1e-9
            lifted = lifted / lifted.sum(axis=-1, keepdims=True)
            return -np.sum(lifted * np.log(lifted), axis=-1)
        """, "an all-zero row becomes uniform: entropy log n, not 0", ("attention_entropy.empty-row",)),
    ("entropy-resoftmax", "attention_entropy", """
        def attention_entropy(weights):                   # turns the input into probabilities first
            e = np.exp(weights - weights.max(axis=-1, keepdims=True))
            probs = e / e.sum(axis=-1, keepdims=True)
            return -(probs * np.log(probs)).sum(axis=-1)
        """, "applies a softmax to weights that already are one", ("attention_entropy.softmax-again",)),
    ("ds-cross-entropy-mean", "backward_ds", """
        def backward_ds(W, dW):                           # the classifier's gradient, averaged over the rows
            return (W - dW) / W.shape[0]
        """, "the cross-entropy gradient (P - Y) / m, dW read as targets", ("backward_ds.cross-entropy",)),
    ("backward-no-scale", "attention_backward", """
        def attention_backward(Q, K, V, d_output, mask=None):
            S = Q @ np.swapaxes(K, -1, -2)                # attention without the 1/sqrt(d_k), forward and back
            if mask is not None:
                S = np.where(mask, S, -np.inf)
            m = np.max(S, axis=-1, keepdims=True)
            m = np.where(np.isfinite(m), m, 0.0)
            P = np.exp(S - m)
            total = P.sum(axis=-1, keepdims=True)
            P = np.divide(P, total, out=np.zeros_like(P), where=total > 0)
            dP = d_output @ np.swapaxes(V, -1, -2)
            dS = P * (dP - np.sum(dP * P, axis=-1, keepdims=True))
            return dS @ K, np.swapaxes(dS, -1, -2) @ Q, np.swapaxes(P, -1, -2) @ d_output
        """, "no 1/sqrt(d_k) in the forward pass, dQ or dK", ("attention_backward.unscaled",)),
    ("mha-reshape-heads-first", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            def heads(x):                                 # straight to (..., H, L, d)
                return x.reshape(*x.shape[:-2], num_heads, x.shape[-2], -1)
            Q, K, V = heads(X_q @ W_Q), heads(X_kv @ W_K), heads(X_kv @ W_V)
            s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
            if mask is not None:
                s = np.where(mask[..., None, :, :], s, -np.inf)
            top = s.max(axis=-1, keepdims=True)
            e = np.exp(s - np.where(np.isfinite(top), top, 0.0))
            total = e.sum(axis=-1, keepdims=True)
            w = np.divide(e, total, out=np.zeros_like(e), where=total > 0)
            out = w @ V                                   # (..., H, m, d_v), back by the inverse reshape
            return out.reshape(*out.shape[:-3], out.shape[-2], -1) @ W_O, w
        """, "heads cut by a reshape straight to (..., H, L, d) and merged back the same way",
        ("multi_head_attention.reshape-only",)),
    # hint study 4 (untuned: 80 of 89 first hints named the mistake; these four did not)
    ("mha-batch-unpacked-tf-perm", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            size = W_Q.shape[1] // num_heads
            def split(t):                                 # (batch, length, heads, size), as in TensorFlow
                t = t.reshape(t.shape[0], t.shape[1], num_heads, size)
                return np.transpose(t, perm=[0, 2, 1, 3])
            q, k, v = split(np.dot(X_q, W_Q)), split(np.dot(X_kv, W_K)), split(np.dot(X_kv, W_V))
            logits = q @ np.swapaxes(k, -1, -2) / np.sqrt(size)
            w = np.exp(logits - logits.max(axis=-1, keepdims=True))
            w = w / w.sum(axis=-1, keepdims=True)
            out = np.transpose(w @ v, (0, 2, 1, 3)).reshape(X_q.shape[0], -1, num_heads * size)
            return out @ W_O, w
        """, "written for (batch, length, d_model) input, and TensorFlow's perm=", ("error.fixed-ndim",)),
    ("jacobian-column-squared", "softmax_jacobian", """
        def softmax_jacobian(w):
            col = w[..., :, None]                         # the outer product as column times column
            return col * np.eye(w.shape[-1]) - col * col
        """, "off-diagonal entries -w_i**2 instead of -w_i w_j", ("softmax_jacobian.column-squared",)),
    ("entropy-renormalised-total", "attention_entropy", """
        def attention_entropy(weights):
            p = weights / (weights.sum() + 1e-9)          # the whole array as one distribution
            return -np.sum(p * np.log(p + 1e-9))
        """, "one number for the whole array, renormalised", ("attention_entropy.single-number",)),
    ("split-batch-unpacked", "split_heads", """
        def split_heads(X, num_heads):
            depth = X.shape[-1] // num_heads              # (batch, length, d_model) read by position
            X = X.reshape(X.shape[0], X.shape[1], num_heads, depth)
            return X.transpose(0, 2, 1, 3)
        """, "written for (batch, length, d_model) input only", ("error.fixed-ndim", "split_heads.fixed-rank")),
    # hint study 5 (untuned: 66 of 77 first hints named the mistake, 11 partly, none wrong)
    ("pad-longest-flat", "padding_mask", """
        def padding_mask(lengths, n):
            width = int(lengths.max())                    # the longest sequence, not n
            return np.arange(width)[None, :] < lengths[:, None]
        """, "width from lengths.max(), and no query axis", ("padding_mask.longest-no-query-axis",)),
    ("entropy-mean-of-all", "attention_entropy", """
        def attention_entropy(weights):
            p = np.clip(weights, 1e-12, 1.0)
            return np.mean(-p * np.log(p))                # one number for the whole array
        """, "one number: a mean over every axis", ("shape.one-number",)),
    ("entropy-mean-over-queries", "attention_entropy", """
        def attention_entropy(attn):                      # one mean entropy per sequence of a (B, m, n) batch
            logs = np.log(np.where(attn > 0, attn, 1.0))
            H = -np.sum(attn * logs, axis=-1)
            return H.mean(axis=1)
        """, "averages the entropies over the queries (axis 1), for 3-D input only",
        ("error.fixed-ndim", "shape.reduced-axis")),
    ("entropy-heads-averaged", "attention_entropy", """
        def attention_entropy(weights):
            p = np.asarray(weights)
            if p.ndim > 1:
                p = p.mean(axis=0)                        # average over the first axis first
            p = (p + 1e-10) / np.sum(p + 1e-10)
            return float(-np.sum(p * np.log(p)))           # then one number
        """, "one number: averaged over the first axis, renormalised, summed", ("shape.one-number",)),
    ("backward-finite-fill-ds-masked", "attention_backward", """
        def attention_backward(Q, K, V, d_output, mask=None):
            s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
            if mask is not None:
                s = np.where(mask, s, -1e10)              # a finite fill
            e = np.exp(s - s.max(axis=-1, keepdims=True))
            W = e / e.sum(axis=-1, keepdims=True)
            dW = d_output @ np.swapaxes(V, -1, -2)
            dS = W * (dW - np.sum(W * dW, axis=-1, keepdims=True))
            if mask is not None:
                dS = np.where(mask, dS, 0.0)              # masked scores get no gradient: dQ and dK right
            dS = dS / np.sqrt(Q.shape[-1])
            return dS @ K, np.swapaxes(dS, -1, -2) @ Q, np.swapaxes(W, -1, -2) @ d_output
        """, "a finite fill: a fully masked query's uniform weights reach dV", ("attention_backward.finite-fill",)),
    ("backward-gradients-unscaled", "attention_backward", """
        def attention_backward(Q, K, V, d_output, mask=None):
            s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
            if mask is not None:
                s = np.where(mask, s, -np.inf)
            top = np.max(s, axis=-1, keepdims=True)
            e = np.exp(s - np.where(np.isfinite(top), top, 0.0))
            total = e.sum(axis=-1, keepdims=True)
            W = e / np.where(total > 0, total, 1.0)
            dW = d_output @ np.swapaxes(V, -1, -2)
            dS = W * (dW - np.sum(W * dW, axis=-1, keepdims=True))
            return dS @ K, np.swapaxes(dS, -1, -2) @ Q, np.swapaxes(W, -1, -2) @ d_output   # no 1/sqrt(d_k)
        """, "dQ and dK without 1/sqrt(d_k)", ("attention_backward.dq-dk-unscaled",)),
    ("split-torch-swap", "split_heads", """
        def split_heads(X, num_heads):
            width = X.shape[-1] // num_heads
            parts = X.reshape(*X.shape[:-1], num_heads, width)
            return parts.transpose(1, 2)                  # PyTorch's swap of two axes
        """, "x.transpose(a, b) as PyTorch's swap: NumPy's transpose wants every axis", ("error.torch-keyword",)),
    ("merge-torch-swap", "merge_heads", """
        def merge_heads(X):
            heads, length, width = X.shape[-3:]
            together = X.transpose(1, 2)                  # PyTorch's swap again
            return together.reshape(*X.shape[:-3], length, heads * width)
        """, "x.transpose(a, b) as PyTorch's swap", ("error.torch-keyword",)),
    ("jacobian-dot-not-outer", "softmax_jacobian", """
        def softmax_jacobian(w):
            return np.diagflat(w) - np.dot(w, w.T)        # for a 1-D w this is the number w . w
        """, "w wᵀ taken as a dot product, a number; 1-D only", ("softmax_jacobian.dot-not-outer",)),
    ("sdpa-four-axes-masked-array", "scaled_dot_product_attention", """
        def scaled_dot_product_attention(Q, K, V, mask=None):
            scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(Q.shape[-1])   # (batch, heads, n, d) written in
            if mask is not None:
                scores = np.ma.masked_array(scores, mask=mask)            # hides where mask is True
            weights = np.exp(scores) / np.exp(scores).sum(axis=-1, keepdims=True)
            return weights @ V, weights
        """, "4-D only (every axis of the transpose written out); the mask inverted", ("error.fixed-ndim",)),
    ("causal-triu-not-kept", "causal_mask", """
        def causal_mask(m, n=None):
            def mask(size):
                np.triu(np.ones((size, size)), k=1)        # computed, then dropped
                return (1 - mask) > 0                       # mask is the function here
            return mask(m)
        """, "the triu's result is never kept, so the function itself is used as the array",
     ("error.function-value",)),
    ("mha-batch-from-rows", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            batch = X_q.shape[0]                            # the rows of a 2-D X_q, not a batch
            def heads(Y, W):
                P = Y @ W
                return P.reshape(batch, -1, num_heads, P.shape[-1] // num_heads).transpose(0, 2, 1, 3)
            Q, K, V = heads(X_q, W_Q), heads(X_kv, W_K), heads(X_kv, W_V)
            s = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(Q.shape[-1])
            if mask is not None:
                s = np.where(mask, s, -1e9)
            e = np.exp(s - s.max(axis=-1, keepdims=True))
            w = e / e.sum(axis=-1, keepdims=True)
            out = (w @ V).transpose(0, 2, 1, 3).reshape(batch, -1, num_heads * V.shape[-1])
            return out @ W_O, w
        """, "3-D only: X_q.shape[0] read as the batch (and a finite fill, no head axis on the mask)",
     ("error.fixed-ndim",)),
    ("softmax-max-not-called", "softmax", """
        def softmax(x):
            e = np.exp(x - x.max)                           # the method, not its value
            return e / e.sum(axis=-1, keepdims=True)
        """, "x.max without its call (and a scalar max, not per row)", ("error.function-value",)),
    ("split-d2l-fold", "split_heads", """
        def split_heads(X, num_heads):                    # d2l's transpose_qkv: the heads go into the batch
            X = X.reshape(X.shape[0], X.shape[1], num_heads, -1)
            X = X.transpose(0, 2, 1, 3)
            return X.reshape(-1, X.shape[2], X.shape[3])
        """, "3-D only (reads axes 0 and 1), and folds the heads into the batch axis (B*H, L, d)",
     ("error.fixed-ndim", "split_heads.heads-into-batch")),
    ("mha-torch-layout", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            def split(t):                                 # nn.Linear's weights are (out, in): x @ W.T
                *lead, L, D = t.shape
                return np.swapaxes(t.reshape(*lead, L, num_heads, D // num_heads), -3, -2)
            q, k, v = split(X_q @ W_Q.T), split(X_kv @ W_K.T), split(X_kv @ W_V.T)
            s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
            if mask is not None:
                s = np.where(mask[..., None, :, :], s, -np.inf)
            s = s - np.max(s, axis=-1, keepdims=True)
            w = np.exp(s) / np.sum(np.exp(s), axis=-1, keepdims=True)
            o = np.swapaxes(w @ v, -3, -2)
            return o.reshape(*o.shape[:-2], -1) @ W_O.T, w
        """, "every weight used transposed, PyTorch's (out, in) layout (and NaN on a fully masked query)",
     ("multi_head_attention.torch-layout",)),
    ("mha-output-projection-transposed", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            def split(t):
                *lead, L, D = t.shape
                return np.swapaxes(t.reshape(*lead, L, num_heads, D // num_heads), -3, -2)
            q, k, v = split(X_q @ W_Q), split(X_kv @ W_K), split(X_kv @ W_V)
            s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
            if mask is not None:
                s = np.where(mask[..., None, :, :], s, -np.inf)
            top = np.max(s, axis=-1, keepdims=True)
            e = np.exp(s - np.where(np.isfinite(top), top, 0.0))
            w = e / np.maximum(e.sum(axis=-1, keepdims=True), 1e-300)
            o = np.swapaxes(w @ v, -3, -2)
            return o.reshape(*o.shape[:-2], -1) @ W_O.T, w  # out_proj in PyTorch's layout
        """, "W_O used transposed, PyTorch's (out, in) layout", ("multi_head_attention.output-projection-transposed",)),
    ("mha-scaled-by-value-size", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            def heads(t):
                *lead, L, D = t.shape
                return np.swapaxes(t.reshape(*lead, L, num_heads, D // num_heads), -3, -2)
            q, k, v = heads(X_q @ W_Q), heads(X_kv @ W_K), heads(X_kv @ W_V)
            s = q @ np.swapaxes(k, -1, -2) / np.sqrt(v.shape[-1])     # the values' size, as GPT-2 ports write it
            if mask is not None:
                s = np.where(mask[..., None, :, :], s, -np.inf)
            top = np.max(s, axis=-1, keepdims=True)
            e = np.exp(s - np.where(np.isfinite(top), top, 0.0))
            w = e / np.maximum(e.sum(axis=-1, keepdims=True), 1e-300)
            o = np.swapaxes(w @ v, -3, -2)
            return o.reshape(*o.shape[:-2], -1) @ W_O, w
        """, "scales by √d_v, the values' size, not √d_k", ("multi_head_attention.scale-by-d_v",)),
    ("mha-per-head-loop-unguarded", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            dk, dv = W_Q.shape[1] // num_heads, W_V.shape[1] // num_heads
            outs, ws = [], []
            for h in range(num_heads):                    # one head at a time, plain softmax
                q = X_q @ W_Q[:, h * dk:(h + 1) * dk]
                k = X_kv @ W_K[:, h * dk:(h + 1) * dk]
                v = X_kv @ W_V[:, h * dv:(h + 1) * dv]
                s = q @ np.swapaxes(k, -1, -2) / np.sqrt(dk)
                if mask is not None:
                    s = np.where(mask, s, -np.inf)
                e = np.exp(s - s.max(axis=-1, keepdims=True))
                w = e / e.sum(axis=-1, keepdims=True)
                outs.append(w @ v)
                ws.append(w)
            return np.concatenate(outs, axis=-1) @ W_O, np.stack(ws, axis=-3)
        """, "NaN for a fully masked query: the softmax is not guarded", ("multi_head_attention.masked-row-nan",)),
    ("jacobian-flattened", "softmax_jacobian", """
        def softmax_jacobian(w):
            n = w.shape[-1]
            J = w[..., :, None] * (np.eye(n) - w[..., None, :])
            return J.reshape(*w.shape[:-1], n * n)        # one row of n*n entries per distribution
        """, "right values, flattened to (..., n*n)", ("shape.reshaped",)),
    ("jacobian-batch-last", "softmax_jacobian", """
        def softmax_jacobian(w):
            N, n = w.shape                                # a stack of distributions, batch axis last
            J = np.zeros((n, n, N))
            for i in range(N):
                col = w[i].reshape(-1, 1)
                J[:, :, i] = np.diagflat(col) - col @ col.T
            return J
        """, "2-D only, and the batch axis last, (n, n, N)", ("error.fixed-ndim",)),
    ("ds-row-loop-column-vector", "backward_ds", """
        def backward_ds(W, dW):
            dS = np.zeros_like(W)
            for i in range(W.shape[0]):                   # one row of weights at a time, as a column
                col = W[i].reshape(-1, 1)
                jac = np.diagflat(col) - col @ col.T
                dS[i] = jac @ dW[i]
            return dS
        """, "2-D only: W[i] is one row only when W is 2-D", ("error.fixed-ndim",)),
    ("mha-fused-in-proj", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            in_proj = np.concatenate([W_Q, W_K, W_V], axis=1)       # PyTorch's in_proj, one matrix
            w_q, w_k, w_v = np.split(in_proj, 3, axis=1)            # equal thirds: d_k = d_v only
            qs, ks, vs = (np.split(X @ w, num_heads, axis=-1)
                          for X, w in ((X_q, w_q), (X_kv, w_k), (X_kv, w_v)))
            context, attention = [], []
            for qh, kh, vh in zip(qs, ks, vs):
                logits = qh @ np.swapaxes(kh, -1, -2) / np.sqrt(qh.shape[-1])
                if mask is not None:
                    logits = np.where(mask, logits, -np.inf)
                peak = np.nan_to_num(logits.max(axis=-1, keepdims=True), neginf=0.0)
                p = np.exp(logits - peak)
                total = p.sum(axis=-1, keepdims=True)
                attention.append(p / np.where(total > 0, total, 1.0))
                context.append(attention[-1] @ vh)
            return np.concatenate(context, axis=-1) @ W_O, np.stack(attention, axis=-3)
        """, "the fused projection cut into equal thirds, which needs d_k = d_v", ("multi_head_attention.fused-split",)),
    ("bahdanau-weights-column", "bahdanau_scores", """
        def bahdanau_scores(S, H, W1, W2, v):
            keys = H @ W2.T                               # (n, d_a)
            query = np.expand_dims(S, 1) @ W1.T           # (m, 1, d_a)
            score = np.tanh(query + keys[None]) @ v[:, None]          # (m, n, 1), a column as Keras keeps it
            e = np.exp(score - score.max(axis=1, keepdims=True))
            return e / e.sum(axis=1, keepdims=True)       # the attention weights over the encoder states
        """, "returns the weights (softmax over the encoder states) where the scores are asked, with an axis of 1",
     ("bahdanau_scores.softmaxed",)),
    ("luong-weights-column", "luong_general_scores", """
        def luong_general_scores(S, H, W):
            score = np.expand_dims(S @ W @ H.T, -1)       # (m, n, 1)
            e = np.exp(score - score.max(axis=1, keepdims=True))
            return e / e.sum(axis=1, keepdims=True)
        """, "returns the weights where the scores are asked, with an axis of 1", ("luong_general_scores.softmaxed",)),
    ("bahdanau-scaled-weights", "bahdanau_scores", """
        def bahdanau_scores(S, H, W1, W2, v, scaling=2.0):
            e = np.tanh((S @ W1.T)[:, None, :] + (H @ W2.T)[None, :, :]) @ v
            x = scaling * e                               # a sharpening factor, then the weights
            ex = np.exp(x - x.max(axis=1, keepdims=True))
            return ex / ex.sum(axis=1, keepdims=True)
        """, "returns the softmax of 2 × the scores where the scores are asked", ("value.softmaxed-scores",)),
    ("mha-per-head-finite-fill", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            dk, dv = W_Q.shape[1] // num_heads, W_V.shape[1] // num_heads
            outs, ws = [], []
            for h in range(num_heads):
                q = X_q @ W_Q[:, h * dk:(h + 1) * dk]
                k = X_kv @ W_K[:, h * dk:(h + 1) * dk]
                v = X_kv @ W_V[:, h * dv:(h + 1) * dv]
                x = q @ np.swapaxes(k, -1, -2) / dk ** 0.5
                if mask is not None:
                    x = x.copy()
                    x[np.broadcast_to(mask, x.shape) == 0] = -1e11        # a large negative number, not -inf
                e = np.exp(x - x.max(axis=-1, keepdims=True))
                w = e / e.sum(axis=-1, keepdims=True)
                outs.append(w @ v)
                ws.append(w)
            return np.concatenate(outs, axis=-1) @ W_O, np.stack(ws, axis=-3)
        """, "a finite fill: a fully masked query spreads its weight over every key", ("multi_head_attention.finite-fill",)),
    ("bahdanau-sum-over-positions", "bahdanau_scores", """
        def bahdanau_scores(S, H, W1, W2, v):
            feats = np.tanh((S @ W1.T)[:, None, :] + (H @ W2.T)[None, :, :])   # (m, n, d_a)
            return np.sum(feats * v, axis=1)              # adds up the positions, not the features
        """, "the product with v summed over axis 1, the encoder positions, not over d_a",
     ("bahdanau_scores.sum-over-positions",)),
    ("backward-unguarded-ds-masked", "attention_backward", """
        def attention_backward(Q, K, V, d_output, mask=None):
            scale = 1.0 / np.sqrt(Q.shape[-1])
            s = Q @ np.swapaxes(K, -1, -2) * scale
            if mask is not None:
                s = np.where(mask, s, -np.inf)
            e = np.exp(s - s.max(axis=-1, keepdims=True))     # NaN on a fully masked query
            w = e / e.sum(axis=-1, keepdims=True)
            dV = np.swapaxes(w, -1, -2) @ d_output
            dW = d_output @ np.swapaxes(V, -1, -2)
            dS = w * (dW - (dW * w).sum(axis=-1, keepdims=True))
            if mask is not None:
                dS = np.where(mask, dS, 0.0)              # hides the NaN from dQ and dK, not from dV
            return dS @ K * scale, np.swapaxes(dS, -1, -2) @ Q * scale, dV
        """, "the recomputed softmax is not guarded: NaN in dV for a fully masked query",
     ("attention_backward.masked-row-nan",)),
    ("mha-head-size-from-model-width", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            depth = X_q.shape[-1] // num_heads                # d_model / H, as where W_Q is square

            def split(t):
                *lead, L, _ = t.shape
                return np.swapaxes(t.reshape(*lead, L, num_heads, depth), -3, -2)
            q, k, v = split(X_q @ W_Q), split(X_kv @ W_K), split(X_kv @ W_V)
            logits = np.einsum("...qd,...kd->...qk", q, k) / depth ** 0.5
            keep = np.ones(logits.shape, bool) if mask is None else np.broadcast_to(np.expand_dims(mask, -3),
                                                                                    logits.shape)
            logits = np.where(keep, logits, logits.min() - 1e4)
            w = np.exp(logits - logits.max(axis=-1, keepdims=True)) * keep    # a fully masked row: all zeros
            w = np.divide(w, w.sum(axis=-1, keepdims=True), out=np.zeros_like(w), where=w.any(-1, keepdims=True))
            merged = np.swapaxes(w @ v, -3, -2)
            return merged.reshape(*merged.shape[:-2], -1) @ W_O, w
        """, "each head d_model // H wide, where W_Q is (d_model, H*d_k)",
     ("multi_head_attention.head-size-from-d_model",)),
    ("ds-enumerate-zip-unpack", "backward_ds", """
        def backward_ds(W, dW):
            dS = np.empty_like(dW)
            for i, w_row, g_row in enumerate(zip(W, dW)):     # enumerate gives (i, (w, g)): two values, not three
                w_row = w_row.reshape(-1, 1)
                jac = np.diagflat(w_row) - w_row @ w_row.T
                dS[i] = jac @ g_row
            return dS
        """, "the loop header unpacks three names from enumerate's pairs", ()),
    ("mha-per-head-mask-added", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            def heads(t):                                 # (..., L, H*d) -> (..., H, L, d)
                return np.moveaxis(t.reshape(*t.shape[:-1], num_heads, -1), -2, -3)
            q, k, v = heads(X_q @ W_Q), heads(X_kv @ W_K), heads(X_kv @ W_V)
            att = np.einsum("...hqd,...hkd->...hqk", q, k) / np.sqrt(q.shape[-1])
            if mask is not None:
                att = att + np.expand_dims(mask, -3)      # the boolean mask added, with a head axis
            att = np.exp(att - att.max(axis=-1, keepdims=True))
            att = att / att.sum(axis=-1, keepdims=True)
            out = np.moveaxis(att @ v, -3, -2)
            return out.reshape(*out.shape[:-2], -1) @ W_O, att
        """, "the boolean mask is added to the scores, which hides nothing", ("multi_head_attention.mask-added",)),
    ("split-reshape-heads-then-swap", "split_heads", """
        def split_heads(X, num_heads):
            *lead, L, D = X.shape
            X = X.reshape(*lead, num_heads, L, D // num_heads)    # heads first: cuts the rows
            return np.swapaxes(X, -3, -2)
        """, "reshapes straight to (..., H, L, d), then swaps to (..., L, H, d)", ("split_heads.reshape-heads-first",)),
    ("backward-mask-shifts-scores", "attention_backward", """
        def attention_backward(Q, K, V, d_output, mask=None):
            d_k = Q.shape[-1]
            Z = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
            if mask is not None:
                Z = np.where(mask, Z, Z - 1e10)           # lowered, not replaced: a fully masked row keeps its weights
            A = np.exp(Z - Z.max(axis=-1, keepdims=True))
            A = A / A.sum(axis=-1, keepdims=True)
            dA = d_output @ np.swapaxes(V, -1, -2)
            dZ = A * (dA - (dA * A).sum(axis=-1, keepdims=True))
            if mask is not None:
                dZ = np.where(mask, dZ, 0.0)
            return dZ @ K / np.sqrt(d_k), np.swapaxes(dZ, -1, -2) @ Q / np.sqrt(d_k), np.swapaxes(A, -1, -2) @ d_output
        """, "masked scores lowered by 1e10: a fully masked query keeps its weights, so dV is wrong there",
     ("attention_backward.finite-fill",)),
    ("entropy-unpacks-query-and-key-axes", "attention_entropy", """
        def attention_entropy(weights):
            *lead, m, n = weights.shape                   # (..., m, n), as the exercise states
            rows = weights.reshape(-1, n)
            safe = np.where(rows > 0, rows, 1.0)
            return -np.sum(rows * np.log(safe), axis=-1).reshape(*lead, m)
        """, None, ()),
    ("bahdanau-dot-score", "bahdanau_scores", """
        def bahdanau_scores(S, H, W1, W2, v):
            rows = []
            for s in S:                                   # one decoder state at a time
                rows.append(H @ s)                        # how well each encoder state matches it
            return np.array(rows)
        """, "the dot score s_t · h_i: W1, W2 and v are never used", ("bahdanau_scores.dot-product",)),
    ("sdpa-where-none-mask", "scaled_dot_product_attention", """
        def scaled_dot_product_attention(Q, K, V, mask=None):
            sim = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
            sim = np.where(mask, sim, -1e10)              # with no mask given, None reads as False
            sim = sim - sim.max(axis=-1, keepdims=True)
            attn = np.exp(sim)
            attn = attn / attn.sum(axis=-1, keepdims=True)
            return attn @ V, attn
        """, "with no mask every score is filled (np.where(None, ...)): uniform weights; and a finite fill",
     ("attention.none-mask-fills-all",)),
    ("sdpa-inverted-unguarded", "scaled_dot_product_attention", """
        def scaled_dot_product_attention(Q, K, V, mask=None):
            score = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
            if mask is not None:
                score = np.where(mask == 0, score, float("-inf"))     # masked_fill(mask == 0, -inf), kept
            score = score - score.max(axis=-1, keepdims=True)
            weights = np.exp(score) / np.exp(score).sum(axis=-1, keepdims=True)
            return weights @ V, weights
        """, "the mask inverted (scores kept where it is False), and a row it hides whole gives NaN",
     ("attention.inverted-mask",)),
    ("luong-asserts-equal-sizes", "luong_general_scores", """
        def luong_general_scores(S, H, W):
            m, d_s = S.shape
            n, d_h = H.shape
            assert d_s == d_h                             # written for one hidden size on both sides
            projected = H @ W.T                           # (n, d_s): W h_i for every encoder state
            return S @ projected.T
        """, "its own assert wants d_s == d_h, which W (d_s, d_h) never needs (else right)", ("error.assertion",)),
    ("luong-projected-twice-weights", "luong_general_scores", """
        def luong_general_scores(S, H, W):
            def project(x):                               # a linear layer holding W, applied as x W
                return x @ W
            query = project(S[:, None, :])                # (m, 1, d_h)
            keys = np.repeat(H[None], S.shape[0], axis=0)  # (m, n, d_h)
            scores = keys @ np.swapaxes(project(query), -1, -2)      # the layer applied a second time
            e = np.exp(scores - scores.max(axis=1, keepdims=True))
            return (e / e.sum(axis=1, keepdims=True))[:, :, 0]      # the weights, not the scores
        """, "the projection applied twice, then the softmax where the raw scores are asked",
     ("value.softmaxed-scores", "error.matmul-shapes")),
    ("mha-self-attention-causal-always", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            m, d_model = X_q.shape                        # a decoder block's layer: one input, always causal
            def split(x):
                return x.reshape(m, num_heads, x.shape[1] // num_heads).transpose(1, 0, 2)
            Q, K, V = split(X_q @ W_Q), split(X_q @ W_K), split(X_q @ W_V)
            scores = Q @ K.transpose(0, 2, 1) / np.sqrt(d_model // num_heads)
            scores = scores + np.triu(np.ones((m, m)), k=1) * -1e9
            e = np.exp(scores - scores.max(axis=-1, keepdims=True))
            weights = e / e.sum(axis=-1, keepdims=True)
            return (weights @ V).transpose(1, 0, 2).reshape(m, -1) @ W_O, weights
        """, "keys and values from X_q, a causal mask always on, heads of d_model // H, 2-D only",
     ("multi_head_attention.keys-from-queries", "harness.shape")),
    ("mha-2d-self-attention-none-mask-fills", "multi_head_attention", """
        def _split_heads(x, num_heads):                   # hint study 37's 05, an exercise page's answer
            seq, dim = x.shape
            return x.reshape(seq, num_heads, dim // num_heads).transpose(1, 0, 2)

        def multi_head_attention(X, X_kv, Wq, Wk, Wv, Wo, num_heads, mask=None):
            Q = _split_heads(X @ Wq, num_heads)
            K = _split_heads(X @ Wk, num_heads)
            V = _split_heads(X @ Wv, num_heads)
            heads, weights = [], []
            for h in range(num_heads):
                scores = Q[h] @ K[h].T / np.sqrt(Q.shape[-1])
                scores = np.where(mask, scores, -1e9)
                e = np.exp(scores - scores.max(axis=-1, keepdims=True))
                w = e / e.sum(axis=-1, keepdims=True)
                heads.append(w @ V[h])
                weights.append(w)
            return np.concatenate(heads, axis=-1) @ Wo, np.asarray(weights)
        """, "keys and values from X_q, mask=None fills every score, 2-D only",
     ("multi_head_attention.keys-from-queries", "error.fixed-ndim", "multi_head_attention.none-mask-fills-all")),
    ("luong-one-state-vector-transposed-w", "luong_general_scores", """
        def luong_general_scores(s, H, W):                # hint study 38's 26: one decoder state, a vector
            return H @ (W.T @ s)
        """, "written for one decoder state as a vector: (n, d_s) of W meeting S's rows", (
        "luong_general_scores.one-state-as-column",)),
    ("luong-one-state-vector-w-as-given", "luong_general_scores", """
        def luong_general_scores(h_dec, H_enc, Wa=None):  # hint study 37's 21: score_i = H_enc[i] . (Wa @ h_dec)
            h_dec = np.asarray(h_dec, dtype=float)
            H_enc = np.asarray(H_enc, dtype=float)
            if Wa is None:
                return H_enc @ h_dec
            Wa = np.asarray(Wa, dtype=float)
            return H_enc @ (Wa @ h_dec)
        """, "written for one decoder state as a vector, W taken as (d_h, d_s)", (
        "luong_general_scores.one-state-as-column",)),
    ("bahdanau-returns-context", "bahdanau_scores", """
        def bahdanau_scores(S, H, W1, W2, v):             # hint study 40's 15: the whole additive attention
            proj_s = S @ W1.T                                 # (m, d_a)
            proj_h = H @ W2.T                                 # (n, d_a)
            energy = np.tanh(proj_s[:, np.newaxis, :] + proj_h[np.newaxis, :, :])
            scores = energy @ v                               # (m, n)
            alpha = np.exp(scores - np.max(scores, axis=1, keepdims=True))
            alpha = alpha / np.sum(alpha, axis=1, keepdims=True)
            context = alpha @ H                               # (m, d_h)
            return context
        """, "goes on past the scores to the context vectors", ("bahdanau_scores.context",)),
    ("luong-one-state-returns-context-and-weights", "luong_general_scores", """
        def luong_general_scores(s, H, W):                # hint study 40's 16: one decoder step, as a vector
            s = s[-1]
            e = H @ (W.T @ s)                                 # (n,)
            a = np.exp(e - e.max())
            a = a / a.sum()
            return a @ H, a
        """, "one decoder state, then the context and the weights", ("luong_general_scores.context",)),
    ("luong-own-random-w", "luong_general_scores", """
        def luong_general_scores(S, H, W):                # hint study 41's 21: the W passed in is never used
            W = np.random.randn(len(S), len(S)) * 0.1         # (m, m): sized by the number of decoder states
            return (W @ S) @ H.T
        """, "draws a W of its own (m, m) and ignores the one passed in", ("harness.nondeterministic",)),
    ("luong-weights-and-context-per-position", "luong_general_scores", """
        def luong_general_scores(S, H, W):                # hint study 41's 22: written for one decoder state
            n = H.shape[0]
            scores = np.array([S @ W @ H[i] for i in range(n)])   # (n, m) for m states
            e = np.exp(scores - scores.max(axis=-1, keepdims=True))
            weights = e / e.sum(axis=-1, keepdims=True)
            context = weights @ H
            return weights, context
        """, "one decoder state's weights and context, not the scores", ("error.matmul-shapes",)),
    ("luong-transposed-w-in-a-helper", "luong_general_scores", """
        def _product(a, b):                               # red team 77's 23: the line that raised shows no W
            return a @ b

        def luong_general_scores(S, H, W):
            return _product(_product(S, W.T), H.T)
        """, "W transposed, the products in a helper", ("luong_general_scores.transposed-W",)),
    ("luong-extra-transpose-of-a-product", "luong_general_scores", """
        def luong_general_scores(S, H, W):                # red team 77's 20: one .T too many, states kept as rows
            WH = W @ H.T                                      # (d_s, n)
            return S @ WH.T
        """, "transposes W H^T once more", ("error.matmul-shapes",)),
    ("luong-w-after-the-keys", "luong_general_scores", """
        def luong_general_scores(S, H, W):                # red team 77's 22: W last, after the encoder states
            return S @ H.T @ W
        """, "W multiplied in after H^T", ("error.matmul-shapes",)),
    ("luong-fixed-weights-of-its-own", "luong_general_scores", """
        def luong_general_scores(S, H, W):                # red team 77's 58: seeded, so deterministic, but not W
            own = np.random.default_rng(0).normal(size=(2, 2))
            return S @ own @ H.T
        """, "a (2, 2) weight of its own in place of W", ("luong_general_scores.ignores-W", "value.mismatch")),
    ("mha-keys-cut-to-query-length", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            m, d = X_q.shape[-2], W_Q.shape[1] // num_heads      # red team 75's f19: keys from X_kv, m of them
            Q, K, V = X_q @ W_Q, X_kv[:m] @ W_K, X_kv[:m] @ W_V
            heads, weights = [], []
            for h in range(num_heads):
                cut = slice(h * d, (h + 1) * d)
                s = Q[:, cut] @ K[:, cut].T / np.sqrt(d)
                w = np.exp(s - s.max(axis=-1, keepdims=True))
                weights.append(w / w.sum(axis=-1, keepdims=True))
                heads.append(weights[-1] @ V[:, W_V.shape[1] // num_heads * h:W_V.shape[1] // num_heads * (h + 1)])
            return np.concatenate(heads, axis=-1) @ W_O, np.stack(weights)
        """, "only the first m keys of X_kv, no mask, 2-D only", ("harness.shape",)),
    ("mha-values-never-projected", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            H = num_heads                                 # red team 75's f18: W_V forgotten, Q and K projected
            Q = np.stack(np.split(X_q @ W_Q, H, -1), -3)
            K = np.stack(np.split(X_kv @ W_K, H, -1), -3)
            V = np.stack(np.split(X_kv, H, -1), -3)
            s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
            if mask is not None:
                s = np.where(mask[..., None, :, :], s, -1e9)
            w = np.exp(s - s.max(-1, keepdims=True))
            w = w / w.sum(-1, keepdims=True)
            return np.concatenate(np.split(w @ V, H, -3), -1)[..., 0, :, :] @ W_O, w
        """, "values never projected: X_kv cut into heads as it is", ("value.partly-right",)),
    ("mha-unprojected-split-by-heads-scaled-by-width", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            H = num_heads                                 # red team 75's n04: never projects, an H-way split
            Q = np.stack(np.split(X_q, H, -1), -3)
            K = np.stack(np.split(X_kv, H, -1), -3)
            s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(X_q.shape[-1])
            w = np.exp(s - s.max(-1, keepdims=True))
            w = w / w.sum(-1, keepdims=True)
            return np.concatenate(np.split(w @ K, H, -3), -1)[..., 0, :, :] @ W_O, w
        """, "never projects, keys as values, no mask", ("value.mismatch", "multi_head_attention.no-projections")),
    ("jacobian-lists-only", "softmax_jacobian", """
        def softmax_jacobian(x: list) -> 'np.ndarray':    # hint study 40's 21: a helper written for lists
            if isinstance(x, list):
                x = np.array([x])
                s = x.reshape(-1, 1)
                return np.diagflat(s) - np.dot(s, s.T)
            else:
                raise ValueError("input must be a list")
        """, "refuses any array: its own check wants a list", ("error.assertion",)),
    ("sdpa-3d-weights-first", "scaled_dot_product_attention", """
        def scaled_dot_product_attention(Q, K, V, mask=None):
            scores = np.matmul(Q, K.transpose(0, 2, 1)) / np.sqrt(Q.shape[-1])      # (B, m, n): 3-D only
            e = np.exp(scores - np.max(scores, axis=-1, keepdims=True))
            weights = e / np.sum(e, axis=-1, keepdims=True)
            return weights, np.matmul(weights, V)         # the weights first
        """, "returns (weights, output) on the 3-D input it was written for; no mask; 3-D only",
     ("attention.returns-swapped", "error.fixed-ndim")),
    ("bahdanau-one-state-as-columns", "bahdanau_scores", """
        def bahdanau_scores(S, H, W1, W2, v):
            decoder, encoder = S.T, H.T                   # written for states as columns and ONE decoder state
            features = W2 @ encoder + W1 @ decoder        # (d_a, n) + (d_a, 1): here (d_a, n) + (d_a, m)
            return v[None, :] @ np.tanh(features)         # (1, n)
        """, "one decoder state's scores: (d_a, n) + (d_a, m) pairs nothing (right only where m = 1)",
     ("bahdanau_scores.no-pairs",)),
    ("mha-loop-last-head-weights", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            d_k, d_v = W_Q.shape[-1] // num_heads, W_V.shape[-1] // num_heads
            heads = []
            for h in range(num_heads):                    # one head at a time
                q = X_q @ W_Q[:, h * d_k:(h + 1) * d_k]
                k = X_kv @ W_K[:, h * d_k:(h + 1) * d_k]
                v = X_kv @ W_V[:, h * d_v:(h + 1) * d_v]
                s = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_k)
                if mask is not None:
                    s = np.where(mask, s, -np.inf)
                e = np.exp(s - s.max(axis=-1, keepdims=True))
                weights = e / e.sum(axis=-1, keepdims=True)
                heads.append(weights @ v)
            return np.concatenate(heads, axis=-1) @ W_O, weights      # the last head's weights alone
        """, "returns the last head's weights alone, (..., m, n), not every head's (and NaN on a fully masked row)",
     ("harness.shape", "shape.missing-axis", "multi_head_attention.masked-row-nan")),
    ("backward-output-like-queries", "attention_backward", """
        def attention_backward(Q, K, V, d_output, mask=None):
            scale = 1 / np.sqrt(Q.shape[-1])              # a flash-attention forward, one block of keys at a time
            O = np.zeros_like(Q)                          # sized like Q: d_k columns where P @ V has d_v
            S = Q @ np.swapaxes(K, -1, -2) * scale
            if mask is not None:
                S = np.where(mask, S, -np.inf)
            m = S.max(axis=-1, keepdims=True)
            P = np.exp(S - m)
            L = P.sum(axis=-1, keepdims=True)
            O = O + P @ V / L
            D = np.sum(O * d_output, axis=-1, keepdims=True)
            W = P / L
            dS = W * (d_output @ np.swapaxes(V, -1, -2) - D)
            return dS @ K * scale, np.swapaxes(dS, -1, -2) @ Q * scale, np.swapaxes(W, -1, -2) @ d_output
        """, "the output allocated like Q (d_k columns), where it has d_v", ("error.value-width",)),
    ("mha-torch-layout-after-its-assert", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            N, S, E = X_q.shape                           # a course's layer: 3-D, PyTorch's (out, in) weights
            T = X_kv.shape[1]
            assert E % num_heads == 0
            d = E // num_heads
            def heads(x, L):
                return np.swapaxes(x.reshape(N, L, num_heads, d), 1, 2)
            Q, K, V = heads(X_q @ W_Q.T, S), heads(X_kv @ W_K.T, T), heads(X_kv @ W_V.T, T)
            s = Q @ np.swapaxes(K, -2, -1) / d ** 0.5
            if mask is not None:
                s = np.where(mask == 0, -np.inf, s)
            e = np.exp(s - s.max(axis=-1, keepdims=True))
            w = e / e.sum(axis=-1, keepdims=True)
            return np.swapaxes(w @ V, 1, 2).reshape(N, S, E) @ W_O.T, w
        """, "nn.Linear's layout, x @ W.T, on every call; 3-D only; its own divisibility check",
     ("multi_head_attention.torch-layout",)),
    ("sdpa-3d-weights-first-masked", "scaled_dot_product_attention", """
        def scaled_dot_product_attention(Q, K, V, mask=None):
            scores = np.matmul(Q, K.transpose(0, 2, 1)) / np.sqrt(Q.shape[-1])      # (B, m, n): 3-D only
            if mask is not None:
                scores = np.where(mask, scores, -np.inf)
            m = np.max(scores, axis=-1, keepdims=True)
            e = np.exp(scores - np.where(np.isfinite(m), m, 0.0))
            total = e.sum(axis=-1, keepdims=True)
            weights = e / np.where(total == 0, 1.0, total)
            return weights, np.matmul(weights, V)         # the weights first
        """, "returns (weights, output) on every case of the 3-D input it was written for; 3-D only",
     ("attention.returns-swapped",)),
    ("entropy-squeeze-batch-of-one", "attention_entropy", """
        def attention_entropy(weights):
            w = np.asarray(weights).squeeze(0)            # (1, H, m, n) from a model with a batch of one
            w = np.maximum(w, 1e-9)
            per_row = -np.sum(w * np.log(w), axis=-1)
            return float(per_row.mean())                  # one summary number
        """, "one mean entropy for the whole array, not one per query (and squeeze(0) wants a batch of one)",
     ("attention_entropy.single-number",)),
    ("backward-scaled-by-d_v", "attention_backward", """
        def attention_backward(Q, K, V, d_output, mask=None):
            s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
            if mask is not None:
                s = np.where(mask, s, -np.inf)
            w = np.exp(s - s.max(axis=-1, keepdims=True))
            w = w / w.sum(axis=-1, keepdims=True)
            dV = np.swapaxes(w, -1, -2) @ d_output
            dW = d_output @ np.swapaxes(V, -1, -2)
            dS = w * (dW - np.sum(dW * w, axis=-1, keepdims=True)) / np.sqrt(d_output.shape[-1])   # the model width
            return dS @ K, np.swapaxes(dS, -1, -2) @ Q, dV
        """, "dQ and dK divided by √d_v (the output's width) where the forward divided by √d_k",
     ("attention_backward.scale-by-d_v",)),
    ("causal-broadcast-shape-inverted", "causal_mask", """
        def causal_mask(m, n=None):
            blocked = np.triu(np.ones((m, m), dtype=bool), k=1)   # True = blocked, as PyTorch's attn_mask
            return blocked[None, None]                    # (1, 1, m, m), to broadcast over batch and heads
        """, "inverted (True marks the future), shaped (1, 1, m, m), and n ignored", ("causal_mask.inverted",)),
    ("mha-3d-output-only", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            B, L, D = X_q.shape                           # a layer for (B, L, D) batches
            d = D // num_heads

            def heads(t):
                return t.reshape(B, -1, num_heads, d).transpose(0, 2, 1, 3)
            q, k, v = heads(X_q @ W_Q), heads(X_kv @ W_K), heads(X_kv @ W_V)
            s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d)
            if mask is not None:
                s = np.where(mask[:, None], s, -np.inf)
            w = np.exp(s - s.max(axis=-1, keepdims=True))
            w = w / w.sum(axis=-1, keepdims=True)
            return (w @ v).transpose(0, 2, 1, 3).reshape(B, L, D) @ W_O      # the output alone
        """, "returns the output only, not (output, weights); heads d_model // H wide; 3-D input only",
     ("harness.arity", "multi_head_attention.head-size-from-d_model", "error.fixed-ndim")),
    ("mha-3d-linear-transposed", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            N, L, E = X_q.shape                           # a course's layer: (N, L, E) batches, nn.Linear's weights
            if E % num_heads != 0:
                raise ValueError("embed_dim must be divisible by num_heads")
            d = E // num_heads

            def split(t):
                return t.reshape(N, -1, num_heads, d).transpose(0, 2, 1, 3)
            q, k, v = split(X_q @ W_Q.T), split(X_kv @ W_K.T), split(X_kv @ W_V.T)
            s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d)
            if mask is not None:
                s = np.where(mask[:, None], -1e10, s)     # the course's masks: True = ignore
            w = np.exp(s - s.max(axis=-1, keepdims=True))
            w = w / w.sum(axis=-1, keepdims=True)
            return (w @ v).transpose(0, 2, 1, 3).reshape(N, -1, E) @ W_O.T, w
        """, "every weight used as x @ W.T, heads d_model // H wide (its own check refuses the rest), 3-D input "
        "only, the mask inverted", ("error.heads-divide", "multi_head_attention.torch-layout")),
    # hint study 23's multi-head layers written as TensorFlow courses write them, sized by d_model where H·d belongs
    ("mha-bias-model-width", "multi_head_attention", """
        class Dense:                                      # a layer's kernel and a bias as wide as the model
            def __init__(self, kernel, width):
                self.kernel, self.bias = kernel, np.zeros(width)

            def __call__(self, x):
                return np.dot(x, self.kernel) + self.bias

        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            d_model = X_q.shape[-1]
            wq, wk, wv, wo = (Dense(W, d_model) for W in (W_Q, W_K, W_V, W_O))

            def heads(x):
                return np.swapaxes(x.reshape(*x.shape[:-1], num_heads, -1), -2, -3)
            q, k, v = heads(wq(X_q)), heads(wk(X_kv)), heads(wv(X_kv))
            s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
            if mask is not None:
                s = np.where(mask[..., None, :, :], s, -np.inf)
            top = np.max(s, axis=-1, keepdims=True)
            e = np.exp(s - np.where(np.isfinite(top), top, 0))
            total = e.sum(axis=-1, keepdims=True)
            w = e / np.where(total == 0, 1, total)
            o = np.swapaxes(w @ v, -2, -3)
            return wo(o.reshape(*o.shape[:-2], -1)), w
        """, "a bias d_model wide added to X @ W_Q, which is H*d_k wide",
     ("multi_head_attention.head-size-from-d_model",)),
    ("mha-tf-split-model-depth", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            depth = X_q.shape[-1] // num_heads                # dm // h

            def split(x, batch):
                x = np.reshape(x, (batch, -1, num_heads, depth))
                return np.transpose(x, (0, 2, 1, 3))
            batch = X_q.shape[0]
            q, k, v = (split(X @ W, batch) for X, W in ((X_q, W_Q), (X_kv, W_K), (X_kv, W_V)))
            scores = np.matmul(q, np.transpose(k, (0, 1, 3, 2))) / np.sqrt(depth)
            if mask is not None:
                scores = np.where(mask[:, None], scores, -np.inf)
            peak = scores.max(axis=-1, keepdims=True)
            e = np.exp(scores - np.where(np.isfinite(peak), peak, 0.0))
            w = e / np.maximum(e.sum(axis=-1, keepdims=True), 1e-300)
            out = np.transpose(np.matmul(w, v), (0, 2, 1, 3))
            return np.reshape(out, (batch, -1, out.shape[-2] * out.shape[-1])) @ W_O, w
        """, "heads cut dm // h wide (and 3-D input only)", ("multi_head_attention.head-size-from-d_model",)),
    ("mha-merge-model-width-undefined-weights", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            dm = X_q.shape[-1]

            def heads(x):
                x = np.reshape(x, (x.shape[0], x.shape[1], num_heads, -1))
                return np.transpose(x, (0, 2, 1, 3))
            q, k, v = heads(X_q @ W_Q), heads(X_kv @ W_K), heads(X_kv @ W_V)
            logits = q @ np.swapaxes(k, -1, -2) / np.sqrt(k.shape[-1])
            if mask is not None:
                logits = logits + (1 - mask[:, None]) * -1e9
            e = np.exp(logits - logits.max(axis=-1, keepdims=True))
            attn = e / e.sum(axis=-1, keepdims=True)
            concat = np.reshape(np.transpose(attn @ v, (0, 2, 1, 3)), (X_q.shape[0], X_q.shape[1], dm))
            return concat @ W_O, attention_weights
        """, "the heads merged into d_model columns (and the weights returned under a name never defined)",
     ("multi_head_attention.head-size-from-d_model", "error.name")),
    ("mha-3d-unprojected-reshaped-heads", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            b, m, _ = X_q.shape
            n = X_kv.shape[1]
            q = (X_q @ W_Q).reshape(b, num_heads, m, -1)      # a reshape alone, no swap
            k = (X_kv @ W_K).reshape(b, num_heads, n, -1)
            v = (X_kv @ W_V).reshape(b, num_heads, n, -1)
            a = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
            a = np.exp(a - a.max(-1, keepdims=True))
            a = a / a.sum(-1, keepdims=True)
            return (a @ v).reshape(b, m, -1), a               # the heads merged, never through W_O
        """, "no output projection (also heads split by a bare reshape, 3-D only, the mask ignored)",
     ("multi_head_attention.no-output-projection",)),
    ("pad-4d-float-mask", "padding_mask", """
        def padding_mask(lengths, n):                     # TensorFlow's (B, 1, 1, n) mask, as floats
            keep = np.arange(n)[None, :] < np.asarray(lengths)[:, None]
            return keep.astype(np.float32)[:, np.newaxis, np.newaxis, :]
        """, "an extra axis (B, 1, 1, n) where (B, 1, n) is asked, and floats for booleans", ("shape.extra-axis",)),
    ("pad-tf-tutorial", "padding_mask", """
        def padding_mask(lengths, n):                     # TensorFlow's tutorial: 1.0 marks a pad token (id 0)
            tokens = (np.arange(n)[None, :] < np.asarray(lengths)[:, None]).astype(np.int64)
            return (tokens == 0).astype(np.float32)[:, np.newaxis, np.newaxis, :]
        """, "inverted (1.0 marks the padding), with an extra axis (B, 1, 1, n) and floats (hint studies 22 and 33)",
     ("padding_mask.inverted",)),
    # hint study 32: the output returned alone hid every later mistake (04, 05, 14, 26, 36)
    ("sdpa-output-only-mask-ignored", "scaled_dot_product_attention", """
        def scaled_dot_product_attention(Q, K, V, mask=None):
            s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
            w = np.exp(s - s.max(axis=-1, keepdims=True))
            return (w / w.sum(axis=-1, keepdims=True)) @ V       # no mask, no weights
        """, "the output returned alone, and the mask ignored", ("harness.arity",)),
    ("sdpa-output-only-right", "scaled_dot_product_attention", """
        def scaled_dot_product_attention(Q, K, V, mask=None):
            s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
            if mask is not None:
                s = np.where(mask, s, -np.inf)
            top = s.max(axis=-1, keepdims=True)
            e = np.exp(s - np.where(np.isfinite(top), top, 0.0))
            total = e.sum(axis=-1, keepdims=True)
            return np.divide(e, total, out=np.zeros_like(e), where=total > 0) @ V
        """, "the output returned alone, right", ("harness.arity",)),
    # red team 71: None read as False by np.where hides every key, and an unguarded softmax gives NaN everywhere
    ("sdpa-where-on-none-unguarded", "scaled_dot_product_attention", """
        def scaled_dot_product_attention(Q, K, V, mask=None):
            s = np.where(mask, Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]), -np.inf)    # None: all -inf
            e = np.exp(s - s.max(axis=-1, keepdims=True))
            w = e / e.sum(axis=-1, keepdims=True)
            return w @ V, w
        """, "np.where on a None mask, and no guard for a fully masked row", ("value.nan",)),
    ("mha-where-on-none-unguarded", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            def heads(x):
                return np.swapaxes(x.reshape(*x.shape[:-1], num_heads, -1), -2, -3)
            q, k, v = heads(X_q @ W_Q), heads(X_kv @ W_K), heads(X_kv @ W_V)
            s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
            s = np.where(mask[..., None, :, :] if np.ndim(mask) > 2 else mask, s, -np.inf)    # None: all -inf
            e = np.exp(s - s.max(axis=-1, keepdims=True))
            w = e / e.sum(axis=-1, keepdims=True)
            out = np.swapaxes(w @ v, -2, -3)
            return out.reshape(*out.shape[:-2], -1) @ W_O, w
        """, "np.where on a None mask, and no guard for a fully masked query", ("value.nan",)),
    # hint study 34: results rounded for printing, as online judges' solutions do (08, 17, 19 were told partly right)
    ("sdpa-rounded", "scaled_dot_product_attention", """
        def scaled_dot_product_attention(Q, K, V, mask=None):
            s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
            if mask is not None:
                s = np.where(mask, s, -np.inf)
            top = s.max(axis=-1, keepdims=True)
            e = np.exp(s - np.where(np.isfinite(top), top, 0.0))
            total = e.sum(axis=-1, keepdims=True)
            w = np.divide(e, total, out=np.zeros_like(e), where=total > 0)
            return np.round(w @ V, 4), np.round(w, 4)
        """, "values rounded to 4 decimals", ("value.rounded",)),
    ("backward-rounded", "attention_backward", """
        def attention_backward(Q, K, V, d_output, mask=None):
            s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
            if mask is not None:
                s = np.where(mask, s, -np.inf)
            top = s.max(axis=-1, keepdims=True)
            e = np.exp(s - np.where(np.isfinite(top), top, 0.0))
            total = e.sum(axis=-1, keepdims=True)
            w = np.divide(e, total, out=np.zeros_like(e), where=total > 0)
            dw = d_output @ np.swapaxes(V, -1, -2)
            ds = w * (dw - np.sum(w * dw, axis=-1, keepdims=True)) / np.sqrt(Q.shape[-1])
            grads = ds @ K, np.swapaxes(ds, -1, -2) @ Q, np.swapaxes(w, -1, -2) @ d_output
            return tuple(np.round(g, 4) for g in grads)
        """, "gradients rounded to 4 decimals", ("value.rounded",)),
    ("causal-arange-misspelt", "causal_mask", """
        def causal_mask(m, n=None):
            n = m if n is None else n
            return np.arrange(n)[None, :] <= np.arange(m)[:, None] + (n - m)     # arange typed with two r's
        """, "np.arrange for np.arange (hint study 34's 22)", ("error.name",)),
    ("causal-tf-look-ahead", "causal_mask", """
        def causal_mask(m, n=None):                       # TensorFlow's look-ahead mask: 1.0 hides a key
            n = m if n is None else n
            return (1 - np.tril(np.ones((m, n), dtype=np.float32)))[np.newaxis, np.newaxis]
        """, "inverted, as floats with two extra axes, and the diagonal not moved by n - m (red team 71)",
     ("causal_mask.inverted",)),
    # red team 72: the weights returned alone, and PyTorch's unsqueeze on a NumPy array
    ("sdpa-weights-only", "scaled_dot_product_attention", """
        def scaled_dot_product_attention(Q, K, V, mask=None):
            s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
            if mask is not None:
                s = np.where(mask, s, -np.inf)
            top = s.max(axis=-1, keepdims=True)
            e = np.exp(s - np.where(np.isfinite(top), top, 0.0))
            total = e.sum(axis=-1, keepdims=True)
            return np.divide(e, total, out=np.zeros_like(e), where=total > 0)      # the weights, no output
        """, "the weights returned alone", ("harness.arity",)),
    ("sdpa-torch-unsqueeze", "scaled_dot_product_attention", """
        def scaled_dot_product_attention(Q, K, V, mask=None):
            s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
            if mask is not None:
                s = np.where(mask.unsqueeze(0), s, -np.inf)       # PyTorch's method on a NumPy array
            w = np.exp(s - s.max(axis=-1, keepdims=True))
            w = w / w.sum(axis=-1, keepdims=True)
            return w @ V, w
        """, "PyTorch's unsqueeze on a NumPy array", ("error.other",)),
    ("sdpa-softmax-no-axis", "scaled_dot_product_attention", """
        def softmax(x, axis=None):                        # SciPy's default: every entry at once
            e = np.exp(x - np.max(x, axis=axis, keepdims=True))
            return e / np.sum(e, axis=axis, keepdims=True)

        def scaled_dot_product_attention(Q, K, V, mask=None):
            s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
            if mask is not None:
                s = np.where(mask, s, -np.inf)
            w = softmax(s)
            return w @ V, w
        """, "a softmax over the whole array, SciPy's axis=None (hint study 35's 09)",
     ("attention.softmax-over-everything",)),
    ("dv-torch-swap-one-two", "backward_dv", """
        def backward_dv(W, d_output):                     # PyTorch's .transpose(1, 2), as NumPy's swapaxes
            return np.swapaxes(W, 1, 2) @ d_output
        """, "axes 1 and 2 swapped: right on 3-D input only", ("error.fixed-ndim",)),
    ("luong-never-meets-keys", "luong_general_scores", """
        def luong_general_scores(S, H, W):                # one decoder state at a time, as a column
            out = []
            for s in S:
                out.append((W.T @ s[:, None]).ravel())    # Wᵀ s, never paired with an encoder state
            return np.array(out)
        """, "the encoder states never used: S @ W, (m, d_h)", ("luong_general_scores.no-encoder-states",)),
    ("mha-3d-mask-where-without-head-axis", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            batch, m, d_model = X_q.shape                 # 3-D only, the heads d_model // H wide
            assert d_model % num_heads == 0, "d_model must be divisible by num_heads"
            d = d_model // num_heads

            def split(x):
                return x.reshape(batch, -1, num_heads, d).transpose(0, 2, 1, 3)
            q, k, v = split(X_q @ W_Q), split(X_kv @ W_K), split(X_kv @ W_V)
            scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d)
            if mask is not None:
                scores = np.where(mask == 0, -1e9, scores)     # the (B, 1, n) mask as given
            w = np.exp(scores - scores.max(-1, keepdims=True))
            w = w / w.sum(-1, keepdims=True)
            out = (w @ v).transpose(0, 2, 1, 3).reshape(batch, m, d_model)
            return out @ W_O, w
        """, "the mask without a head axis (also d_model // H heads, 3-D only, a finite fill)",
     ("multi_head_attention.mask-without-head-axis", "error.fixed-ndim")),
    ("mha-tf-mask-added-in-place", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            batch, depth = X_q.shape[0], X_q.shape[-1] // num_heads      # TensorFlow's dm // h

            def split(x):
                return np.transpose(np.reshape(x, (batch, -1, num_heads, depth)), (0, 2, 1, 3))
            q, k, v = split(X_q @ W_Q), split(X_kv @ W_K), split(X_kv @ W_V)
            scores = np.matmul(q, np.swapaxes(k, -1, -2)) / np.sqrt(np.float32(k.shape[-1]))
            if mask is not None:
                scores += mask * -1e9                     # 1 = blocked, and no head axis
            w = np.exp(scores - np.max(scores, axis=-1, keepdims=True))
            w = w / np.sum(w, axis=-1, keepdims=True)
            concat = np.reshape(np.transpose(w @ v, (0, 2, 1, 3)), (batch, -1, X_q.shape[-1]))
            return concat @ W_O, w
        """, "the mask added in place without a head axis (also inverted, d_model // H heads)",
     ("multi_head_attention.head-size-from-d_model",)),
    ("mha-3d-no-projections", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            b, m, d_model = X_q.shape                     # the inputs cut into heads as they are: no W at all
            d = d_model // num_heads

            def heads(x):
                return x.reshape(x.shape[0], x.shape[1], num_heads, d).transpose(0, 2, 1, 3)
            s = np.matmul(heads(X_q), heads(X_kv).transpose(0, 1, 3, 2)) / np.sqrt(d)
            w = np.exp(s - s.max(-1, keepdims=True))
            w = w / w.sum(-1, keepdims=True)
            return np.matmul(w, heads(X_kv)).transpose(0, 2, 1, 3).reshape(b, m, d_model), w
        """, "no projection at all, W_Q, W_K, W_V and W_O unused (also the mask ignored, 3-D only)",
     ("multi_head_attention.no-projections",)),
    ("ds-flattened-only-when-batched", "backward_ds", """
        def backward_ds(W, dW):
            n = W.shape[-1]
            if W.ndim > 2:                                # rows flattened for a batch only: 2-D never sets them
                w_rows, g_rows = W.reshape(-1, n), dW.reshape(-1, n)
            ds_rows = w_rows * (g_rows - np.sum(g_rows * w_rows, axis=1, keepdims=True))
            return ds_rows.reshape(W.shape)
        """, "2-D input never assigns the flattened rows (UnboundLocalError)", ("error.unbound",)),
    ("bahdanau-expand-dims-without-axis", "bahdanau_scores", """
        def bahdanau_scores(S, H, W1, W2, v):             # torch's unsqueeze(1), written without its dim
            query = np.expand_dims(S @ W1.T)
            return np.tanh(query + (H @ W2.T)[None]) @ v
        """, "np.expand_dims called without its axis", ("error.missing-argument",)),
    ("mha-heads-never-cut", "multi_head_attention", """
        def attention(q, k, v, mask=None):
            s = np.matmul(q, np.swapaxes(k, -1, -2)) / np.sqrt(k.shape[-1])
            if mask is not None:
                s = np.where(mask, s, -1e9)
            w = np.exp(s - s.max(-1, keepdims=True))
            w = w / w.sum(-1, keepdims=True)
            return w @ v, w

        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            heads, weights = [], []
            for _ in range(num_heads):                    # every "head" the same full-width attention
                out, w = attention(X_q @ W_Q, X_kv @ W_K, X_kv @ W_V, mask)
                heads.append(out)
                weights.append(w)
            return np.concatenate(heads, axis=-1) @ W_O, np.stack(weights, axis=-3)
        """, "the projections never cut into heads (also a finite fill)", ("multi_head_attention.never-split",)),
    ("mha-mask-on-the-keys", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            def split(X):
                return np.swapaxes(X.reshape(*X.shape[:-1], num_heads, -1), -2, -3)
            Q, K, V = split(X_q @ W_Q), split(X_kv @ W_K), split(X_kv @ W_V)
            Kt = np.swapaxes(K, -1, -2)                   # (..., H, d_k, n)
            if mask is not None:
                Kt = np.where(mask, Kt, 0.0)              # the padding keys zeroed, not their scores
            S = Q @ Kt / np.sqrt(Q.shape[-1])
            E = np.exp(S - S.max(-1, keepdims=True))
            A = E / E.sum(-1, keepdims=True)
            O = np.swapaxes(A @ V, -2, -3)
            return O.reshape(*O.shape[:-2], -1) @ W_O, A
        """, "the keys masked with 0, not the scores with -inf", ("value.masked-weight",)),
    ("mha-own-softmax-without-axis", "multi_head_attention", """
        def softmax(x, axis):
            e = np.exp(x - np.max(x, axis=axis, keepdims=True))
            return e / np.sum(e, axis=axis, keepdims=True)

        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            def split(X):
                return np.swapaxes(X.reshape(*X.shape[:-1], num_heads, -1), -2, -3)
            Q, K, V = split(X_q @ W_Q), split(X_kv @ W_K), split(X_kv @ W_V)
            S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
            if mask is not None:
                S = np.where(np.expand_dims(mask, -3), S, -np.inf)
            A = softmax(S)                                # its own softmax, called without its axis
            O = np.swapaxes(A @ V, -2, -3)
            return O.reshape(*O.shape[:-2], -1) @ W_O, A
        """, "its own softmax called without its axis", ("error.other",)),
    ("mha-unbatched-flag-only-in-2d", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            if X_q.ndim == 2:                             # the flag set here only: 3-D and 4-D never set it
                X_q, X_kv = X_q[None], X_kv[None]
                mask = None if mask is None else mask[None]
                unbatched = True

            def split(X):
                return np.swapaxes(X.reshape(*X.shape[:-1], num_heads, -1), -2, -3)
            Q, K, V = split(X_q @ W_Q), split(X_kv @ W_K), split(X_kv @ W_V)
            S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
            if mask is not None:
                S = np.where(np.expand_dims(mask, -3), S, -np.inf)
            top = S.max(-1, keepdims=True)
            E = np.exp(S - np.where(np.isfinite(top), top, 0))
            Z = E.sum(-1, keepdims=True)
            A = np.divide(E, Z, out=np.zeros_like(E), where=Z > 0)
            O = np.swapaxes(A @ V, -2, -3)
            out = O.reshape(*O.shape[:-2], -1) @ W_O
            return (out[0], A[0]) if unbatched else (out, A)
        """, "a flag set only for 2-D input (UnboundLocalError on 3-D and 4-D)", ("error.unbound",)),
    ("mha-merge-unswapped-model-width", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            d = X_q.shape[-1] // num_heads                # d_model / H

            def split(X):
                return np.swapaxes(X.reshape(*X.shape[:-1], num_heads, d), -2, -3)
            Q, K, V = split(X_q @ W_Q), split(X_kv @ W_K), split(X_kv @ W_V)
            scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d)
            if mask is not None:
                scores = np.where(np.expand_dims(mask, -3), scores, -np.inf)
            top = scores.max(axis=-1, keepdims=True)
            e = np.exp(scores - np.where(np.isfinite(top), top, 0))
            total = e.sum(axis=-1, keepdims=True)
            weights = e / np.where(total == 0, 1, total)
            heads = weights @ V                           # (..., H, m, d)
            return heads.reshape(*heads.shape[:-2], -1) @ W_O, weights     # merged without swapping H and m back
        """, "the heads merged without moving the head axis back (also d_model // H heads)",
     ("multi_head_attention.merge-without-swap",)),
    ("sdpa-softmax-name-reused", "scaled_dot_product_attention", """
        def softmax(x):
            e = np.exp(x - np.max(x, axis=-1, keepdims=True))
            return e / e.sum(-1, keepdims=True)

        def scaled_dot_product_attention(Q, K, V, mask=None):
            scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
            if mask is not None:
                scores = np.where(mask, scores, -np.inf)
            softmax = softmax(scores)                     # the result named as the function: UnboundLocalError
            return softmax @ V, softmax
        """, "a local name hides the function it calls", ("error.unbound",)),
    ("mha-own-split-named-like-numpy", "multi_head_attention", """
        def split(X, num_heads):
            return np.swapaxes(X.reshape(*X.shape[:-1], num_heads, -1), -2, -3)

        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            Q, K = split(X_q @ W_Q, num_heads), split(X_kv @ W_K, num_heads)
            V = split(X_kv @ W_V)                         # its own split, called without num_heads
            scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
            if mask is not None:
                scores = np.where(np.expand_dims(mask, -3), scores, -np.inf)
            w = np.exp(scores - scores.max(-1, keepdims=True))
            w = w / w.sum(-1, keepdims=True)
            out = np.swapaxes(w @ V, -2, -3)
            return out.reshape(*out.shape[:-2], -1) @ W_O, w
        """, "its own split called without an argument", ("error.other",)),
    ("mha-tf-inverted-finite-mask", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            def split(x):
                return np.swapaxes(x.reshape(*x.shape[:-1], num_heads, -1), -2, -3)
            q, k, v = split(X_q @ W_Q), split(X_kv @ W_K), split(X_kv @ W_V)
            logits = q @ np.swapaxes(k, -1, -2) / np.sqrt(k.shape[-1])
            if mask is not None:
                logits = logits + mask[..., None, :, :] * -1e9    # TensorFlow's habit: 1 marks the padding
            w = np.exp(logits - logits.max(-1, keepdims=True))
            w = w / w.sum(-1, keepdims=True)
            out = np.swapaxes(w @ v, -2, -3)
            return out.reshape(*out.shape[:-2], -1) @ W_O, w
        """, "the mask inverted, with a finite fill", ("multi_head_attention.inverted-mask-finite-fill",)),
    ("mha-mask-never-used", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            def split(x):
                return np.swapaxes(x.reshape(*x.shape[:-1], num_heads, -1), -2, -3)
            q, k, v = split(X_q @ W_Q), split(X_kv @ W_K), split(X_kv @ W_V)
            logits = q @ np.swapaxes(k, -1, -2) / np.sqrt(k.shape[-1])     # mask taken, never applied
            w = np.exp(logits - logits.max(-1, keepdims=True))
            w = w / w.sum(-1, keepdims=True)
            out = np.swapaxes(w @ v, -2, -3)
            return out.reshape(*out.shape[:-2], -1) @ W_O, w
        """, "the mask never applied", ("multi_head_attention.ignores-mask",)),
    ("mha-first-sequence-mask-for-all", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            def split(x):
                return np.swapaxes(x.reshape(*x.shape[:-1], num_heads, -1), -2, -3)
            q, k, v = split(X_q @ W_Q), split(X_kv @ W_K), split(X_kv @ W_V)
            s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
            if mask is not None:
                if mask.ndim == 3:
                    mask = mask[0]                        # (1, n): the first sequence's padding, given to all
                s = np.where(mask[..., None, :, :], s, -np.inf)
            top = s.max(-1, keepdims=True)
            e = np.exp(s - np.where(np.isfinite(top), top, 0))
            total = e.sum(-1, keepdims=True)
            w = e / np.where(total == 0, 1, total)
            out = np.swapaxes(w @ v, -2, -3)
            return out.reshape(*out.shape[:-2], -1) @ W_O, w
        """, "the first sequence's mask applied to every sequence", ("value.masked-weight",)),
    ("mha-no-head-axis-nan-output", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            def split(x):
                return np.swapaxes(x.reshape(*x.shape[:-1], num_heads, -1), -2, -3)
            q, k, v = split(X_q @ W_Q), split(X_kv @ W_K), split(X_kv @ W_V)
            s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
            if mask is not None:
                s = np.where(mask, s, -np.inf)            # no head axis
            w = np.exp(s - s.max(axis=-1, keepdims=True))
            w = w / w.sum(axis=-1, keepdims=True)
            heads = w @ v
            w = np.nan_to_num(w)                          # a fully masked query's NaN cleared in the weights only
            out = np.swapaxes(heads, -2, -3)
            return out.reshape(*out.shape[:-2], -1) @ W_O, w
        """, "the mask without a head axis (also a fully masked query's output NaN)",
     ("multi_head_attention.mask-without-head-axis",)),
    ("mha-2d-output-alone", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            L, D = X_q.shape                              # one sequence, heads D // H wide; the output alone
            d = D // num_heads
            q = (X_q @ W_Q).reshape(L, num_heads, d).transpose(1, 0, 2)
            k = (X_kv @ W_K).reshape(-1, num_heads, d).transpose(1, 0, 2)
            v = (X_kv @ W_V).reshape(-1, num_heads, d).transpose(1, 0, 2)
            s = q @ k.transpose(0, 2, 1) / np.sqrt(d)
            if mask is not None:
                s = np.where(mask, s, -np.inf)
            top = s.max(-1, keepdims=True)
            e = np.exp(s - np.where(np.isfinite(top), top, 0))
            total = e.sum(-1, keepdims=True)
            w = e / np.where(total == 0, 1, total)
            return (w @ v).transpose(1, 0, 2).reshape(L, D) @ W_O
        """, "the output alone, no weights (also d_model // H heads, 2-D only)", ("harness.arity",)),
    ("mha-finite-fill-added", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            def split(x):
                return np.swapaxes(x.reshape(*x.shape[:-1], num_heads, -1), -2, -3)
            q, k, v = split(X_q @ W_Q), split(X_kv @ W_K), split(X_kv @ W_V)
            s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
            if mask is not None:
                s = s + (1 - mask[..., None, :, :]) * -1e9        # a finite fill, added
            w = np.exp(s - s.max(-1, keepdims=True))
            w = w / w.sum(-1, keepdims=True)
            out = np.swapaxes(w @ v, -2, -3)
            return out.reshape(*out.shape[:-2], -1) @ W_O, w
        """, "a finite fill added to the scores", ("multi_head_attention.finite-fill",)),
    # hint study 30
    ("mha-heads-stacked-on-axis-0", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            def fold(x):                                  # TensorFlow's concat(split(x, h, -1), 0)
                return np.concatenate(np.split(x, num_heads, axis=-1), axis=0)
            q, k, v = fold(X_q @ W_Q), fold(X_kv @ W_K), fold(X_kv @ W_V)
            s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
            if mask is not None:
                s = s + mask * -1e9
            w = np.exp(s - s.max(axis=-1, keepdims=True))
            w = w / w.sum(axis=-1, keepdims=True)
            return np.concatenate(np.split(w @ v, num_heads, axis=0), axis=-1) @ W_O, w
        """, "heads stacked on the first axis, not an axis of their own (also the mask inverted)",
     ("multi_head_attention.heads-in-batch",)),
    ("backward-dv-untransposed", "attention_backward", """
        def attention_backward(Q, K, V, d_output, mask=None):
            s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
            if mask is not None:
                s = np.where(mask, s, -np.inf)
            w = np.exp(s - s.max(axis=-1, keepdims=True))
            w = w / w.sum(axis=-1, keepdims=True)
            dV = w @ d_output                             # the weights not transposed
            dW = d_output @ np.swapaxes(V, -1, -2)
            dS = w * (dW - np.sum(dW * w, axis=-1, keepdims=True)) / np.sqrt(Q.shape[-1])
            return dS @ K, dS @ Q, dV                     # dK not transposed either
        """, "dV = W dO and dK = dS Q, neither transposed (also no guard for a fully masked query)",
     ("attention_backward.dv-no-transpose",)),
    ("backward-chained-diagonal-jacobian", "attention_backward", """
        def attention_backward(Q, K, V, d_output, mask=None):
            d_k = Q.shape[-1]
            t = np.matmul(Q, np.transpose(K, axes=(0, 2, 1))) / np.sqrt(d_k)     # 3-D only
            e = np.exp(t - t.max(axis=2, keepdims=True))
            s = e / e.sum(axis=2, keepdims=True)
            B = s * (1 - s) / np.sqrt(d_k)                # the Jacobian's diagonal, chained as a matrix
            dV = np.matmul(np.transpose(s, axes=(0, 2, 1)), d_output)
            dQ = d_output @ np.transpose(V, axes=(0, 2, 1)) @ B @ K
            dK = np.transpose(np.transpose(V, axes=(0, 2, 1)) @ d_output @ np.transpose(V, axes=(0, 2, 1)) @ B,
                              axes=(0, 2, 1))
            return dQ, dK, dV
        """, "the Jacobian's diagonal chained as matrices, dK built from V (also 3-D only, no mask)",
     ("error.fixed-ndim", "attention_backward.diagonal-jacobian")),
    # red team 66, on study 30's fixes
    ("mha-weights-flattened-like-torch", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            def split(x):
                return np.swapaxes(x.reshape(*x.shape[:-1], num_heads, -1), -2, -3)
            q, k, v = split(X_q @ W_Q), split(X_kv @ W_K), split(X_kv @ W_V)
            s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
            if mask is not None:
                s = np.where(mask[..., None, :, :], s, -np.inf)
            top = s.max(axis=-1, keepdims=True)
            e = np.exp(s - np.where(np.isfinite(top), top, 0.0))
            total = e.sum(axis=-1, keepdims=True)
            w = np.divide(e, total, out=np.zeros_like(e), where=total > 0)
            out = np.swapaxes(w @ v, -2, -3)
            return out.reshape(*out.shape[:-2], -1) @ W_O, w.reshape(-1, *w.shape[-2:])    # (B·H, m, n)
        """, "the weights flattened to (B·H, m, n), as PyTorch returns them (right on 2-D input only)",
     ("error.fixed-ndim", "shape.reshaped")),
    ("mha-raises-a-string", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            if mask is not None and mask.shape[-2:] != (X_q.shape[-2], X_kv.shape[-2]):
                raise "mask must be (m, n)"               # too strict: (B, 1, n) broadcasts
            def split(x):
                return np.swapaxes(x.reshape(*x.shape[:-1], num_heads, -1), -2, -3)
            q, k, v = split(X_q @ W_Q), split(X_kv @ W_K), split(X_kv @ W_V)
            s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
            if mask is not None:
                s = np.where(mask[..., None, :, :], s, -np.inf)
            top = s.max(axis=-1, keepdims=True)
            e = np.exp(s - np.where(np.isfinite(top), top, 0.0))
            total = e.sum(axis=-1, keepdims=True)
            w = np.divide(e, total, out=np.zeros_like(e), where=total > 0)
            out = np.swapaxes(w @ v, -2, -3)
            return out.reshape(*out.shape[:-2], -1) @ W_O, w
        """, "a check on the mask's shape too strict for a mask that broadcasts", ("error.other",)),
    ("causal-square-only-not-implemented", "causal_mask", """
        def causal_mask(m, n=None):
            if n is not None and n != m:
                raise NotImplemented                      # for NotImplementedError: only square masks so far
            return np.tril(np.ones((m, m), dtype=bool))
        """, "only square masks (n != m raises)", ("error.other",)),
    ("causal-mask-square-no-diagonal", "causal_mask", """
        def causal_mask(m, n=None):
            return np.tril(np.ones((m, m), dtype=bool), k=-1)
        """, "no diagonal, and n ignored", ("causal_mask.no-diagonal",)),
    ("mha-loop-weights-vstacked", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            def split(x):
                return np.swapaxes(x.reshape(*x.shape[:-1], num_heads, -1), -2, -3)
            q, k, v = split(X_q @ W_Q), split(X_kv @ W_K), split(X_kv @ W_V)
            s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
            if mask is not None:
                s = np.where(mask[..., None, :, :], s, -np.inf)
            top = s.max(axis=-1, keepdims=True)
            e = np.exp(s - np.where(np.isfinite(top), top, 0.0))
            total = e.sum(axis=-1, keepdims=True)
            w = np.divide(e, total, out=np.zeros_like(e), where=total > 0)
            out = np.swapaxes(w @ v, -2, -3)
            if w.ndim > 3:                                # each head's weights, one after another on axis 0
                w = np.vstack([w[..., h, :, :] for h in range(num_heads)])
            return out.reshape(*out.shape[:-2], -1) @ W_O, w
        """, "batched weights of the heads stacked on axis 0, not an axis of their own",
     ("multi_head_attention.heads-in-batch",)),
    ("causal-raises-a-message-variable", "causal_mask", """
        def causal_mask(m, n=None):
            n = m if n is None else n
            if n < m:
                message = "need at least as many keys as queries"
                raise message                             # a string, in a check too strict for m > n
            return np.arange(n)[None, :] <= np.arange(m)[:, None] + (n - m)
        """, "refuses more queries than keys (raising a string)", ("error.other",)),
    # hint study 31
    ("sdpa-causal-when-no-mask", "scaled_dot_product_attention", """
        def scaled_dot_product_attention(Q, K, V, mask=None):
            if mask is None:                              # PyTorch's is_causal=True where no mask is given
                mask = np.tril(np.ones((Q.shape[-2], K.shape[-2]), dtype=bool))
            s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
            s = np.where(mask, s, -np.inf)
            w = np.exp(s - s.max(axis=-1, keepdims=True))
            w = w / w.sum(axis=-1, keepdims=True)
            return w @ V, w
        """, "a causal mask where no mask is given (also a fully masked row's NaN)",
     ("attention.causal-when-no-mask",)),
    ("sdpa-einsum-batch-letter", "scaled_dot_product_attention", """
        def scaled_dot_product_attention(Q, K, V, mask=None):
            s = np.einsum("b...id,b...jd->b...ij", Q, K) / np.sqrt(Q.shape[-1])     # a batch axis required
            if mask is not None:
                s[..., ~mask] = -np.inf
            w = np.exp(s - s.max(axis=-1, keepdims=True))
            w = w / w.sum(axis=-1, keepdims=True)
            return np.einsum("b...ij,b...jd->b...id", w, V), w
        """, "an einsum that needs a batch axis (also a mask used as a boolean index)", ("error.fixed-ndim",)),
    ("backward-diagonal-jacobian-unscaled", "attention_backward", """
        def attention_backward(Q, K, V, d_output, mask=None):
            s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
            if mask is not None:
                s = np.where(mask, s, -np.inf)
            top = s.max(axis=-1, keepdims=True)
            e = np.exp(s - np.where(np.isfinite(top), top, 0.0))
            w = e / (e.sum(axis=-1, keepdims=True) + 1e-9)
            dW = d_output @ np.swapaxes(V, -1, -2)
            dS = dW * w * (1 - w)                         # the Jacobian's diagonal only
            return dS @ K, np.swapaxes(dS, -1, -2) @ Q, np.swapaxes(w, -1, -2) @ d_output     # and no 1/sqrt(d_k)
        """, "only the softmax Jacobian's diagonal, and no 1/sqrt(d_k) in dQ and dK",
     ("attention_backward.p-one-minus-p",)),
    # hint study 32
    ("jacobian-diagonal-as-a-row", "softmax_jacobian", """
        def softmax_jacobian(w):
            s = w.reshape(-1, 1)
            full = np.diagflat(s) - s @ s.T
            return np.diagonal(full).reshape(1, -1)       # the diagonal alone, as one row
        """, "the Jacobian's diagonal alone, as a row (also 1-D only)", ("softmax_jacobian.diagonal-only",)),
    # red team 68
    ("sdpa-window-when-no-mask", "scaled_dot_product_attention", """
        def scaled_dot_product_attention(Q, K, V, mask=None):
            m, n = Q.shape[-2], K.shape[-2]
            if mask is None:                              # a local window: the query's own key and the one before
                mask = (np.arange(n) <= np.arange(m)[:, None]) & (np.arange(n) >= np.arange(m)[:, None] - 1)
            s = np.where(mask, Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]), -np.inf)
            top = s.max(axis=-1, keepdims=True)
            e = np.exp(s - np.where(np.isfinite(top), top, 0.0))
            total = e.sum(axis=-1, keepdims=True)
            w = e / np.where(total == 0, 1.0, total)
            return w @ V, w
        """, "a local window of two keys where no mask is given", ("value.mismatch",)),
    ("sdpa-einsum-scale-as-operand", "scaled_dot_product_attention", """
        def scaled_dot_product_attention(Q, K, V, mask=None):
            s = np.einsum("...id,...jd->...ij", Q, K)
            s = np.einsum("...ij,...ij->...ij", s, 1 / np.sqrt(Q.shape[-1]))    # a number given subscripts
            if mask is not None:
                s = np.where(mask, s, -np.inf)
            top = s.max(axis=-1, keepdims=True)
            e = np.exp(s - np.where(np.isfinite(top), top, 0.0))
            total = e.sum(axis=-1, keepdims=True)
            w = e / np.where(total == 0, 1.0, total)
            return np.einsum("...ij,...jd->...id", w, V), w
        """, "the scale, a number, given an einsum's subscripts", ("error.other",)),
    ("softmax-einsum-sum-without-keepdims", "softmax", """
        def softmax(x):
            e = np.exp(x - np.max(x, axis=-1, keepdims=True))
            return np.einsum("...n,...n->...n", e, 1.0 / e.sum(axis=-1))      # the sum's axis dropped
        """, "the row sums without keepdims, given an einsum's subscripts", ("error.broadcast",
                                                                             "softmax.missing-keepdims")),
    ("sdpa-einsum-letter-typed-twice", "scaled_dot_product_attention", """
        def scaled_dot_product_attention(Q, K, V, mask=None):
            s = np.einsum("b...id,b...id->b...ij", Q, K) / np.sqrt(Q.shape[-1])     # j typed as i
            if mask is not None:
                s = np.where(mask, s, -np.inf)
            top = s.max(axis=-1, keepdims=True)
            e = np.exp(s - np.where(np.isfinite(top), top, 0.0))
            total = e.sum(axis=-1, keepdims=True)
            w = e / np.where(total == 0, 1.0, total)
            return np.einsum("b...ij,b...jd->b...id", w, V), w
        """, "a subscript typed twice in an einsum (and a batch axis required)", ("error.other",)),
    ("backward-scaled-twice", "attention_backward", """
        def attention_backward(Q, K, V, d_output, mask=None):
            d = Q.shape[-1]
            s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d)
            if mask is not None:
                s = np.where(mask, s, -np.inf)
            top = s.max(axis=-1, keepdims=True)
            e = np.exp(s - np.where(np.isfinite(top), top, 0.0))
            total = e.sum(axis=-1, keepdims=True)
            w = e / np.where(total == 0, 1.0, total)
            dw = d_output @ np.swapaxes(V, -1, -2)
            ds = w * (dw - np.sum(w * dw, axis=-1, keepdims=True))
            return ds @ K / d, np.swapaxes(ds, -1, -2) @ Q / d, np.swapaxes(w, -1, -2) @ d_output   # 1/d: twice
        """, "dQ and dK divided by d_k, the scale applied twice", ("attention_backward.chain",)),
    # hint study 33: a decoder's causal mask built into multi-head code, always or where no mask is given
    ("mha-decoder-causal-always", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            def heads(x):
                return np.swapaxes(x.reshape(*x.shape[:-1], num_heads, -1), -2, -3)
            q, k, v = heads(X_q @ W_Q), heads(X_kv @ W_K), heads(X_kv @ W_V)
            s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
            future = np.triu(np.ones(s.shape[-2:], dtype=bool), k=1)       # a decoder: never look ahead
            s = np.where(future, -np.inf, s)
            w = np.exp(s - s.max(axis=-1, keepdims=True))
            w = w / w.sum(axis=-1, keepdims=True)
            out = np.swapaxes(w @ v, -2, -3)
            return out.reshape(*out.shape[:-2], -1) @ W_O, w
        """, "a causal mask of its own in every call, the mask argument ignored",
     ("multi_head_attention.causal-when-no-mask",)),
    ("mha-causal-by-default", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            def heads(x):
                return np.swapaxes(x.reshape(*x.shape[:-1], num_heads, -1), -2, -3)
            q, k, v = heads(X_q @ W_Q), heads(X_kv @ W_K), heads(X_kv @ W_V)
            s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
            if mask is None:                                   # is_causal by default
                mask = np.tril(np.ones(s.shape[-2:], dtype=bool))
            s = np.where(mask[..., None, :, :] if mask.ndim > 2 else mask, s, -np.inf)
            top = s.max(axis=-1, keepdims=True)
            w = np.exp(s - np.where(np.isfinite(top), top, 0.0))
            total = w.sum(axis=-1, keepdims=True)
            w = np.divide(w, total, out=np.zeros_like(w), where=total > 0)
            out = np.swapaxes(w @ v, -2, -3)
            return out.reshape(*out.shape[:-2], -1) @ W_O, w
        """, "a causal mask where no mask is given", ("multi_head_attention.causal-when-no-mask",)),
    ("mha-3d-decoder-kv-query-length", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            batch, length, _ = X_q.shape
            size = W_Q.shape[1] // num_heads
            q, k, v = ((x @ W).reshape(batch, length, num_heads, size).swapaxes(1, 2)
                       for x, W in ((X_q, W_Q), (X_kv, W_K), (X_kv, W_V)))
            s = q @ k.swapaxes(2, 3) / np.sqrt(size)
            s = np.where(np.triu(np.ones((length, length)), k=1).astype(bool), -np.inf, s)
            w = np.exp(s - s.max(axis=-1, keepdims=True))
            w = w / w.sum(axis=-1, keepdims=True)
            return (w @ v).swapaxes(1, 2).reshape(batch, length, -1) @ W_O, w
        """, "K and V cut with the queries' length, 3-D only, and a causal mask of its own",
     ("multi_head_attention.kv-with-query-length",)),
    # hint study 36 (12, 20, 32; 37's 23): two mistakes each, which readers order differently; both are named
    ("sdpa-2d-output-alone-mask-added", "scaled_dot_product_attention", """
        def scaled_dot_product_attention(Q, K, V, mask=None):     # returns the output alone, adds the mask
            scores = Q @ K.T / math.sqrt(K.shape[-1])
            if mask is not None:
                scores += mask
            p = np.exp(scores - scores.max(axis=-1, keepdims=True))
            return (p / p.sum(axis=-1, keepdims=True)) @ V
        """, "a boolean mask added to the scores; the output alone; 2-D only (.T)",
     ("attention.mask-added", "harness.arity")),
    ("sdpa-2d-naive-softmax-mask-added", "scaled_dot_product_attention", """
        def scaled_dot_product_attention(Q, K, V, mask=None):
            logits = np.matmul(Q, K.T) / np.sqrt(Q.shape[-1])
            if mask is not None:
                logits = logits + mask
            e = np.exp(logits)
            weights = e / np.sum(e, axis=-1, keepdims=True)
            return np.matmul(weights, V), weights
        """, "a boolean mask added, no max subtracted before exp; 2-D only (.T)",
     ("attention.mask-added", "attention.unstable-softmax", "attention.batched-transpose")),
    ("backward-2d-mask-added", "attention_backward", """
        def attention_backward(Q, K, V, d_output, mask=None):
            scale = 1.0 / np.sqrt(Q.shape[-1])
            S = Q @ K.T * scale
            if mask is not None:
                S = S + mask
            P = np.exp(S - S.max(axis=-1, keepdims=True))
            P /= P.sum(axis=-1, keepdims=True)
            dP = d_output @ V.T
            dS = P * (dP - (dP * P).sum(axis=-1, keepdims=True))
            return dS @ K * scale, dS.T @ Q * scale, P.T @ d_output
        """, "a boolean mask added to the scores; 2-D only (.T)",
     ("attention_backward.mask-added", "error.batched-transpose")),
    ("mha-2d-output-alone-kv-query-length", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            L, D = X_q.shape
            d = D // num_heads
            def heads(x):                                  # every projection cut with the queries' length
                return x.reshape(L, num_heads, d).transpose(1, 0, 2)
            q, k, v = heads(X_q @ W_Q), heads(X_kv @ W_K), heads(X_kv @ W_V)
            s = q @ k.transpose(0, 2, 1) / np.sqrt(d)
            if mask is not None:
                s = np.where(mask, s, -np.inf)
            a = np.exp(s - s.max(-1, keepdims=True))
            a = a / a.sum(-1, keepdims=True)
            return (a @ v).transpose(1, 0, 2).reshape(L, -1) @ W_O
        """, "K and V cut with the queries' length, heads d_model / H wide; the output alone; 2-D only",
     ("multi_head_attention.kv-with-query-length", "multi_head_attention.head-size-from-d_model")),
    # hint study 36's 21: per-head weight stacks indexed w[h] raise as X @ W.T does; no .T, so no torch layout
    ("mha-per-head-weight-stacks", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            outputs, maps = [], []
            for h in range(num_heads):                     # W_Q[h] read as head h's own (d_model, d_k) matrix
                q, k, v = X_q @ W_Q[h], X_kv @ W_K[h], X_kv @ W_V[h]
                s = q @ k.swapaxes(-1, -2) / np.sqrt(q.shape[-1])
                if mask is not None:
                    s = np.where(mask, s, -np.inf)
                w = np.exp(s - s.max(-1, keepdims=True))
                w = w / w.sum(-1, keepdims=True)
                outputs.append(w @ v)
                maps.append(w)
            return np.concatenate(outputs, axis=-1) @ W_O, np.stack(maps, axis=-3)
        """, "W_Q[h] taken as head h's matrix: W_Q holds the heads side by side in its columns",
        ("multi_head_attention.weights-per-head",)),
    # hint study 36's 25 and 26: the chapter's column form, the encoder's projection first
    ("bahdanau-columns-encoder-first", "bahdanau_scores", """
        def bahdanau_scores(S, H, W1, W2, v):
            enc = W2 @ H                                   # (d_a, n): H read as states in columns
            dec = W1 @ S
            return v @ np.tanh(enc + dec)
        """, "S and H read as states in columns (W2 @ H): they hold the states as rows",
     ("bahdanau_scores.states-as-columns",)),
    ("backward-4d-only-mask-ignored", "attention_backward", """
        def attention_backward(Q, K, V, d_output, mask=None):     # (B, H, L, d) only; the mask never read
            B, H, L, d = Q.shape
            P = np.exp(Q @ K.swapaxes(-1, -2) / np.sqrt(d))
            P = P / P.sum(axis=-1, keepdims=True)
            dP = d_output @ V.swapaxes(-1, -2)
            dS = P * (dP - np.sum(dP * P, axis=-1, keepdims=True)) / np.sqrt(d)
            return dS @ K, dS.swapaxes(-1, -2) @ Q, P.swapaxes(-1, -2) @ d_output
        """, "the mask ignored; 4-D input only; no max subtracted",
     ("attention_backward.ignores-mask", "error.fixed-ndim")),
    # red team 73: a transpose on the line that raised that is not a weight's; a product of the wrong operands
    ("mha-per-head-stacks-keys-transposed", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            heads, maps = [], []
            for h in range(num_heads):                     # W_Q[h] as head h's matrix; K's .T on the same line
                s = (X_q @ W_Q[h]) @ (X_kv @ W_K[h]).T / np.sqrt(W_Q.shape[1] // num_heads)  # transpose keys
                if mask is not None:
                    s = np.where(mask, s, -np.inf)
                a = np.exp(s - s.max(-1, keepdims=True))
                a = a / a.sum(-1, keepdims=True)
                heads.append(a @ (X_kv @ W_V[h]))
                maps.append(a)
            return np.concatenate(heads, axis=-1) @ W_O, np.stack(maps, axis=-3)
        """, "W_Q[h] taken as head h's matrix: W_Q holds the heads side by side in its columns",
        ("multi_head_attention.weights-per-head",)),
    ("bahdanau-general-score-chain", "bahdanau_scores", """
        def bahdanau_scores(S, H, W1, W2, v):
            return np.tanh(S @ W1.T @ W2 @ H)              # a bilinear chain, no sum of projections, no v
        """, "a product of the projections where their sum, tanh and v belong", ()),
    ("padding-additive-float32", "padding_mask", """
        def padding_mask(lengths, n):                     # the additive mask, to be added to the scores
            keep = np.arange(n)[None, :] < np.asarray(lengths)[:, None]
            return np.where(keep, 0.0, -np.inf).astype(np.float32)[:, None, :]
        """, "the additive float form (0 / -inf) where the boolean mask is asked", ("padding_mask.float",)),
    ("backward-dv-no-transpose", "attention_backward", _GUARDED_WEIGHTS + """
        def attention_backward(Q, K, V, d_output, mask=None):
            scale = 1.0 / np.sqrt(Q.shape[-1])
            attn = _weights(Q, K, mask)
            dv = attn @ d_output                          # the attention matrix as it is, not transposed
            da = d_output @ np.swapaxes(V, -1, -2)
            ds = attn * (da - (da * attn).sum(axis=-1, keepdims=True))
            return scale * ds @ K, scale * np.swapaxes(ds, -1, -2) @ Q, dv
        """, "dV = W d_output: W is not transposed", ("attention_backward.dv-no-transpose",)),
    ("backward-dk-no-transpose", "attention_backward", _GUARDED_WEIGHTS + """
        def attention_backward(Q, K, V, d_output, mask=None):
            scale = 1.0 / np.sqrt(Q.shape[-1])
            attn = _weights(Q, K, mask)
            dv = np.swapaxes(attn, -1, -2) @ d_output
            da = d_output @ np.swapaxes(V, -1, -2)
            ds = attn * (da - (da * attn).sum(axis=-1, keepdims=True))
            dk = ds @ Q * scale                           # dS not transposed: raises as W @ d_output would
            return scale * ds @ K, dk, dv
        """, "dK = dS Q: dS is not transposed", ("attention_backward.chain",)),
    ("backward-dv-dot", "backward_dv", """
        def backward_dv(W, d_output):
            grad_values = np.dot(W, d_output)             # W as it is, through np.dot
            return grad_values
        """, "np.dot(W, d_output): W is not transposed", ("backward_dv.no-transpose",)),
    ("entropy-normalised-row-zero", "attention_entropy", """
        def attention_entropy(weights):                   # divided by each row's largest entropy, log(i + 1)
            safe = np.clip(weights, 1e-300, None)
            h = -(weights * np.log(safe)).sum(axis=-1)
            ceiling = np.log(np.arange(weights.shape[-2]) + 1.0)
            return h / ceiling                            # row 0: log 1 = 0
        """, "divides row i by log(i + 1), row 0 by 0", ("attention_entropy.normalised",)),
    ("sdpa-masked-array", "scaled_dot_product_attention", """
        def scaled_dot_product_attention(Q, K, V, mask=None):
            d = Q.shape[-1]
            scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d)
            hidden = np.zeros(scores.shape, dtype=bool) if mask is None else ~np.broadcast_to(mask, scores.shape)
            scores = np.ma.masked_array(scores, mask=hidden)       # np.ma: True hides an entry
            e = np.ma.exp(scores - scores.max(axis=-1, keepdims=True))
            weights = e / e.sum(axis=-1, keepdims=True)
            return np.ma.dot(weights, V), weights         # masked arrays handed back as they are
        """, "returns masked arrays (np.ma) where plain arrays are asked", ("harness.wrong-type",)),
    ("bahdanau-columns-dot", "bahdanau_scores", """
        def bahdanau_scores(S, H, W1, W2, v):             # the course's column-vector form, through np.dot
            keys = np.dot(W2, H)                          # (d_a, d_h) . (d_h, n) in the notes
            query = np.dot(W1, S)
            return np.dot(v, np.tanh(keys + query))
        """, "states taken as columns (W2 H, W1 s)", ("bahdanau_scores.states-as-columns",)),
    ("luong-columns-nested-dot", "luong_general_scores", """
        def luong_general_scores(S, H, W):
            return np.dot(np.dot(S.T, W), H)              # s^T W h with the states as columns
        """, "states taken as columns (sᵀ W H)", ("luong_general_scores.states-as-columns",)),
    ("backward-dk-in-a-returned-tuple", "attention_backward", _GUARDED_WEIGHTS + """
        def attention_backward(Q, K, V, d_output, mask=None):
            W = _weights(Q, K, mask)
            Wtr = np.swapaxes(W, -1, -2)                  # dV's transpose made on a line of its own
            dW = d_output @ np.swapaxes(V, -1, -2)
            dS = W * (dW - np.sum(dW * W, axis=-1, keepdims=True)) / math.sqrt(Q.shape[-1])
            return dS @ K, dS @ Q, Wtr @ d_output         # dK not transposed; dV right
        """, "dK = dS Q: dS is not transposed (red team 78)", ("attention_backward.chain",)),
    ("backward-dk-line-named-dy", "attention_backward", _GUARDED_WEIGHTS + """
        def attention_backward(Q, K, V, d_output, mask=None):
            W = _weights(Q, K, mask)
            dV = np.swapaxes(W, -1, -2) @ d_output
            dW = d_output @ np.swapaxes(V, -1, -2)
            dy_scores = W * (dW - np.sum(dW * W, axis=-1, keepdims=True)) / math.sqrt(Q.shape[-1])
            dK = np.matmul(dy_scores, Q)                  # not transposed
            return np.matmul(dy_scores, K), dK, dV
        """, "dK = dS Q: dS is not transposed (red team 78)", ("attention_backward.chain",)),
    ("backward-dv-of-a-named-transpose", "attention_backward", """
        def attention_backward(Q, K, V, d_output, mask=None):
            sc = math.sqrt(Q.shape[-1])
            s = K @ np.swapaxes(Q, -1, -2) / sc           # keys by queries, softmax over the queries
            if mask is not None:
                s = np.where(np.swapaxes(mask, -1, -2), s, -np.inf)
            e = np.exp(s - s.max(axis=-1, keepdims=True))
            W = e / e.sum(axis=-1, keepdims=True)
            Wt = np.swapaxes(W, -1, -2)
            dV = Wt @ d_output
            dW = d_output @ np.swapaxes(V, -1, -2)
            dS = W * (dW - np.sum(dW * W, axis=-1, keepdims=True))
            return dS @ K / sc, np.swapaxes(dS, -1, -2) @ Q / sc, dV
        """, "weights laid out keys by queries (red team 78)", ()),
    ("ds-softmax-again-by-columns", "backward_ds", """
        def backward_ds(W, dW):                           # the softmax taken again, each column a distribution
            e = np.exp(W - W.max())
            p = e / e.sum(axis=0, keepdims=True)
            dS = np.empty_like(p)
            for j in range(p.shape[1]):
                col = p[:, j]
                dS[:, j] = (np.diag(col) - np.outer(col, col)) @ dW[:, j]
            return dS
        """, "the softmax applied again to W, down its columns (and 2-D only)", ("backward_ds.softmax-again",)),
    ("ds-softmax-again", "backward_ds", """
        def backward_ds(W, dW):
            probs = np.exp(W) / np.exp(W).sum(axis=-1, keepdims=True)     # W taken as the scores
            return probs * (dW - (dW * probs).sum(axis=-1, keepdims=True))
        """, "the softmax applied again to W", ("backward_ds.softmax-again",)),
    ("luong-columns-w-times-h-first", "luong_general_scores", """
        def luong_general_scores(S, H, W):
            projected = np.dot(W, H)                      # W h_i for every column h_i
            return np.dot(S.T, projected)
        """, "states taken as columns, W H first", ("luong_general_scores.states-as-columns",)),
    ("sdpa-transpose-tuple-3d", "scaled_dot_product_attention", """
        def scaled_dot_product_attention(Q, K, V, mask=None):
            logits = np.matmul(Q, K.transpose((0, 2, 1))) / np.sqrt(Q.shape[-1])    # (batch, m, n) only
            logits = logits - logits.max(axis=-1, keepdims=True)
            w = np.exp(logits) / np.exp(logits).sum(axis=-1, keepdims=True)
            return np.matmul(w, V)
        """, "transpose((0, 2, 1)) of a 3-D batch only; the output alone; no mask", ("error.fixed-ndim",)),
    ("mha-torch-layout-list-averaged", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            Ws = [np.transpose(W_Q), np.transpose(W_K), np.transpose(W_V)]     # PyTorch's (out, in) layout
            Xs = [X_q, X_kv, X_kv]
            heads = []
            for i in range(3):
                p = Xs[i] @ Ws[i]
                heads.append(np.swapaxes(p.reshape(*p.shape[:-1], num_heads, -1), -2, -3))
            Q, K, V = heads
            s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
            if mask is not None:
                s = np.where(mask[..., None, :, :], s, -np.inf)
            w = np.exp(s - s.max(axis=-1, keepdims=True))
            w = np.nan_to_num(w / w.sum(axis=-1, keepdims=True))
            o = np.swapaxes(w @ V, -2, -3)
            return o.reshape(*o.shape[:-2], -1) @ np.transpose(W_O), w.mean(axis=-3)
        """, "weights transposed in a list (PyTorch's layout), and the weights averaged over the heads (red team 79)",
        ("multi_head_attention.torch-layout", "multi_head_attention.averaged-weights")),
    ("backward-dk-dv-one-line-mask-added", "attention_backward", """
        def attention_backward(Q, K, V, d_output, mask=None):
            root = np.sqrt(Q.shape[-1])
            S = Q @ np.swapaxes(K, -1, -2) / root
            if mask is not None:
                S = S + mask                              # a boolean mask added
            E = np.exp(S - S.max(-1, keepdims=True))
            W = E / E.sum(-1, keepdims=True)
            Wtr = np.swapaxes(W, -1, -2)
            dW = d_output @ np.swapaxes(V, -1, -2)
            dS = W * (dW - (dW * W).sum(-1, keepdims=True))
            dK, dV = dS @ Q / root, Wtr @ d_output        # dK not transposed; dV right
            return dS @ K / root, dK, dV
        """, "dK = dS Q, and the mask added to the scores (red team 79)", ("attention_backward.chain",)),
    ("luong-h-untransposed-nested", "luong_general_scores", """
        def luong_general_scores(S, H, W):                # red team 79: W h_i for every h_i, H left as it came
            return S @ (W @ H)
        """, "H never transposed (S used as rows, rightly)", ("luong_general_scores.untransposed-H",)),
    ("luong-h-untransposed-named-w", "luong_general_scores", """
        def luong_general_scores(S, H, W):
            w = S @ W                                     # s_t^T W for every decoder state: right
            return w @ H                                  # H is (n, d_h): its .T is missing
        """, "H never transposed, after a right S W named w", ("luong_general_scores.untransposed-H",)),
    ("luong-h-untransposed-dot", "luong_general_scores", """
        def luong_general_scores(S, H, W):
            return np.dot(np.dot(S, W), H)
        """, "H never transposed, through np.dot", ("luong_general_scores.untransposed-H",)),
    ("ds-softmax-again-columns-row-formula", "backward_ds", """
        def backward_ds(W, dW):                           # red team 79: a softmax down the columns, the rows' formula
            e = np.exp(W)
            probs = e / e.sum(axis=-2, keepdims=True)
            return probs * (dW - np.sum(dW * probs, axis=-1, keepdims=True))
        """, "the softmax applied again to W, down its columns", ("backward_ds.softmax-again",)),
    ("luong-params-declared-s-w-h", "luong_general_scores", """
        def luong_general_scores(S, W, H):                # red team 81: declared (S, W, H), so W holds the states
            Ht = H.T                                      # the transpose on a line of its own
            return S @ W @ Ht
        """, "parameters in another order than the signature's (S, H, W)", ()),
    ("luong-params-declared-s-w-h-dot", "luong_general_scores", """
        def luong_general_scores(S, W, H):
            Ht = H.T
            return np.dot(np.dot(S, W), Ht)
        """, "parameters in another order than the signature's (S, H, W), through np.dot", ()),
    ("luong-columns-s-transposed-apart", "luong_general_scores", """
        def luong_general_scores(S, H, W):                # red team 81: S's transpose on its own line
            St = S.T
            return St @ (W @ H)
        """, "states taken as columns (sᵀ W H), W H first", ("luong_general_scores.states-as-columns",)),
    ("luong-columns-s-transposed-apart-chain", "luong_general_scores", """
        def luong_general_scores(S, H, W):
            St = S.T
            return St @ W @ H
        """, "states taken as columns (sᵀ W H)", ("luong_general_scores.states-as-columns",)),
    ("luong-columns-h-transposed-apart", "luong_general_scores", """
        def luong_general_scores(S, H, W):                # S as columns; H transposed, rightly, on its own line
            St = S.T
            Ht = H.T
            return St @ W @ Ht
        """, "S taken as columns (Sᵀ W Hᵀ)", ("luong_general_scores.states-as-columns",)),
    ("luong-h-untransposed-nested-dot", "luong_general_scores", """
        def luong_general_scores(S, H, W):                # red team 81: S untouched, W H first through np.dot
            return np.dot(S, np.dot(W, H))
        """, "H never transposed, through nested np.dot", ("luong_general_scores.untransposed-H",)),
    ("mha-head-size-from-d-model-own-assert", "multi_head_attention", """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            d_model = X_q.shape[-1]                       # hint study 47's 07: the head size from d_model, checked
            assert d_model % num_heads == 0, "d_model must be divisible by num_heads"
            d = d_model // num_heads
            m, n = X_q.shape[0], X_kv.shape[0]
            q = (X_q @ W_Q).reshape(m, num_heads, d).transpose(1, 0, 2)
            k = (X_kv @ W_K).reshape(n, num_heads, d).transpose(1, 0, 2)
            v = (X_kv @ W_V).reshape(n, num_heads, d).transpose(1, 0, 2)
            s = q @ k.transpose(0, 2, 1) / np.sqrt(d)
            if mask is not None:
                s = np.where(mask, s, -np.inf)
            e = np.exp(s - s.max(axis=-1, keepdims=True))
            w = e / e.sum(axis=-1, keepdims=True)
            o = (w @ v).transpose(1, 0, 2).reshape(m, -1)
            return o @ W_O, w
        """, "the head size taken from d_model (its own assert says so on some cases), 2-D only",
        ("multi_head_attention.head-size-from-d_model",)),
    ("sdpa-no-transpose-own-raise", "scaled_dot_product_attention", """
        def scaled_dot_product_attention(Q, K, V, mask=None):   # red team 82: its own check raises on other cases
            if Q.shape[-2] > K.shape[-2]:
                raise ValueError("there cannot be more queries than keys")
            s = Q @ K / np.sqrt(Q.shape[-1])              # K not transposed
            w = np.exp(s - s.max(axis=-1, keepdims=True)) if mask is None else np.where(mask, np.exp(s), 0.0)
            w = w / w.sum(axis=-1, keepdims=True)
            return w @ V, w
        """, "Q K without the transpose (and a check of its own, wrong, where m > n)", ("attention.no-transpose",)),
    ("mha-weights-per-head-values-first", "multi_head_attention", _GUARDED_WEIGHTS + """
        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):   # red team 82: V's line first
            outs, ws = [], []
            for h in range(num_heads):
                v = X_kv @ W_V[h]
                k = X_kv @ W_K[h]
                q = X_q @ W_Q[h]
                w = _weights(q, k, mask)
                outs.append(w @ v)
                ws.append(w)
            return np.concatenate(outs, axis=-1) @ W_O, np.stack(ws, axis=-3)
        """, "W_Q[h], W_K[h], W_V[h] as per-head matrices", ("multi_head_attention.weights-per-head",)),
    ("bahdanau-row-vector-weights-keys-first", "bahdanau_scores", """
        def bahdanau_scores(S, H, W1, W2, v):             # red team 82: the encoder's projection first
            keys = H @ W2
            query = S @ W1
            return np.tanh(query[:, None, :] + keys[None, :, :]) @ v
        """, "S @ W1 and H @ W2 with the column-vector weights", ("bahdanau_scores.row-vector-weights",)),
    ("bahdanau-row-vector-weights-own-assert", "bahdanau_scores", """
        def bahdanau_scores(S, H, W1, W2, v):
            assert S.shape[-1] == H.shape[-1], "states must have the same size"   # wrong: d_s need not be d_h
            a = S @ W1
            b = H @ W2
            return np.tanh(a[:, None, :] + b[None, :, :]) @ v
        """, "S @ W1 with the column-vector weights (and an assert of its own, wrong)",
        ("bahdanau_scores.row-vector-weights",)),
    ("luong-elementwise-keys-first", "luong_general_scores", """
        def luong_general_scores(S, H, W):                # red team 82: W applied to H, then `*`
            keys = H @ W.T
            return (S * keys).sum(axis=-1)
        """, "`*` where a matrix product belongs", ("luong_general_scores.elementwise",)),
    ("luong-h-untransposed-own-assert", "luong_general_scores", """
        def luong_general_scores(S, H, W):
            assert W.shape[0] == W.shape[1], "W must be square"   # wrong: d_s need not be d_h
            return S @ W @ H
        """, "H never transposed (and an assert of its own, wrong)", ("luong_general_scores.untransposed-H",)),
    ("luong-h-projected-untransposed", "luong_general_scores", """
        def luong_general_scores(S, H, W):                # red team 82: raises as code declared (S, W, H) does
            Wh = H @ W.T
            return S @ Wh
        """, "(H Wᵀ) not transposed", ()),
    ("sdpa-queries-times-values", "scaled_dot_product_attention", """
        def scaled_dot_product_attention(Q, K, V, mask=None):   # red team 83: V where K belongs
            s = Q @ V / np.sqrt(Q.shape[-1])
            w = np.exp(s - s.max(axis=-1, keepdims=True)) if mask is None else np.where(mask, np.exp(s), 0.0)
            w = w / w.sum(axis=-1, keepdims=True)
            return w @ V, w
        """, "Q V where Q Kᵀ belongs: its error is Q @ K's word for word, as V and K have n rows", ()),
    ("causal-raised", "causal_mask", """
        def causal_mask(m, n=None):
            n = m if n is None else n
            mask = np.tril(np.ones((m, n), dtype=bool), k=n - m)
            raise mask                                    # raise where return belongs
        """, "raise where return belongs", ("error.exit",)),
]

HEADER = "import math\nimport numpy as np\n"
BY_KEY = {entry[0]: entry for entry in CORPUS}


def _check(tmp_path: Path, key: str, capsys) -> tuple[int, list[str]]:
    """``attention-edu check`` on the entry as a student's file: exit status and the hint ids it printed."""
    _, exercise, source, *_ = BY_KEY[key]
    path = tmp_path / f"{key}.py"
    path.write_text(HEADER + textwrap.dedent(source))
    status = cli.main(["check", exercise, str(path), "--seed", "0"])
    return status, re.findall(r"^(?:Hint|Mistake \d+) \[([\w.-]+)\]", capsys.readouterr().out, re.M)


def test_the_corpus_is_large_enough_and_distinct():
    assert len(CORPUS) >= 25 and len(BY_KEY) == len(CORPUS)
    assert len({textwrap.dedent(entry[2]) for entry in CORPUS}) == len(CORPUS)


#: wrong code whose first hint is still generic (see the report): the real mistake shows only in the values
GENERIC = {"ds-cross-entropy": "error.other",
           # parameters declared in another order: the signature's words are the hint (red team 81)
           "luong-params-declared-s-w-h": "error.matmul-shapes",
           "luong-params-declared-s-w-h-dot": "error.matmul-shapes",
           "luong-h-projected-untransposed": "error.matmul-shapes",
           "sdpa-queries-times-values": "error.matmul-shapes",
           # keys from X_q, told by its weights' shape alone: reading shapes as a mistake's named mistakes the code
           # did not make (red teams 57, 58 and 75: keys cut to m from X_kv, per-head outputs as weights), so no more
           "mha-self-attention-causal-always": "harness.shape",
           "mha-2d-self-attention-none-mask-fills": "harness.shape",
           "ds-enumerate-zip-unpack": "error.other",      # the error itself tells it: Python's unpacking
           "mha-mask-on-the-keys": "error.broadcast",     # Kᵀ masked: its values tell it, on other cases
           # a mutant for it matched merge-without-swap's error where m = H² (red team 64): withdrawn
           "mha-heads-never-cut": "error.matmul-shapes",
           # a mutant for it matched any matmul's error of the same sizes (hint study 15's 08, A Vᵀ B K): withdrawn
           # dS @ Q raises as W @ d_output does (both "size 2 is different from 3"): no mutant tells them apart
           "backward-dk-no-transpose": "error.matmul-shapes",
           "backward-dk-in-a-returned-tuple": "error.matmul-shapes",
           "mha-torch-layout-list-averaged": "error.matmul-shapes",     # the transpose on the line above (red team 79)
           "backward-dk-dv-one-line-mask-added": "error.matmul-shapes",
           "backward-dk-line-named-dy": "error.matmul-shapes",
           "backward-dv-of-a-named-transpose": "error.matmul-shapes",
           # raise NAME told as error.exit matched raise err of a string in a validity check (red team 67): withdrawn
           "causal-raised": "error.other",
           # the diagonal as a row (1, n): a variant for it took the vector (n,) from shape.square-axis, withdrawn
           "jacobian-diagonal-as-a-row": "harness.shape",
           # "too many subscripts" told as a fixed rank came as often from a typo or operands swapped (red teams 68,
           # 69): withdrawn; an einsum that needs a batch axis is told by its ranks where they split cleanly
           "sdpa-einsum-batch-letter": "error.other",
           # an AttributeError with a suggestion read as a misspelling (study 34's np.arrange): withdrawn, the checker's
           # own suggestion sends PyTorch's unsqueeze to squeeze and .type to dtype (red team 72)
           "causal-arange-misspelt": "error.other",
           "bahdanau-general-score-chain": "error.matmul-shapes"}      # no reading of it: none of the known mistakes


@pytest.mark.parametrize("key", sorted(BY_KEY))
def test_every_verdict_is_right_and_the_first_hint_names_the_mistake(tmp_path, capsys, key):
    """Right code passes with no hint; wrong code fails, its first hint naming its real mistake (the
    measurement's columns), but for the few in GENERIC."""
    status, hints = _check(tmp_path, key, capsys)
    assert (status, bool(hints)) == ((0, False) if BY_KEY[key][3] is None else (1, True))
    assert not hints or hints[0] in BY_KEY[key][4] or GENERIC.get(key) == hints[0], hints


# the first hint once named a mistake the code does not make, or only the symptom
FIRST_HINT = {
    "bahdanau-returns-context": "bahdanau_scores.context",     # was harness.shape (hint study 40's 15)
    "luong-one-state-returns-context-and-weights": "luong_general_scores.context",    # was harness.several (40's 16)
    "ds-loop-rows": "error.fixed-ndim",            # was error.batched-dot: np.dot of two 2-D operands has no batch
    "backward-dv-no-transpose": "attention_backward.dv-no-transpose",     # was error.matmul-shapes (study 42's 32)
    "entropy-normalised-row-zero": "attention_entropy.normalised",      # was value.nan (study 42's 30)
    # its W_Q[h] raises as X @ W_Q.T does, once told as PyTorch's layout with no .T in the code (study 36's 21), then
    # generic; a weight indexed by a name on the line that raised is told now (studies 41's 31, 44's 08)
    "mha-per-head-weight-stacks": "multi_head_attention.weights-per-head",
    "ds-softmax-again-by-columns": "backward_ds.softmax-again",     # was value.mismatch (study 44's 28)
    "sdpa-transpose-tuple-3d": "error.fixed-ndim",     # was error.other: the axes as one tuple (study 45's 28)
    "luong-columns-w-times-h-first": "luong_general_scores.states-as-columns",     # was error.matmul-shapes (44's 19)
    "mha-per-head-stacks-keys-transposed": "multi_head_attention.weights-per-head",    # with K's .T (red team 73)
    "bahdanau-columns-dot": "bahdanau_scores.states-as-columns",    # was error.matmul-shapes (study 43's 15, 16)
    "luong-columns-nested-dot": "luong_general_scores.states-as-columns",    # was error.matmul-shapes (43's 19, 20)
    "causal-additive-float": "causal_mask.additive",     # was harness.dtype: -1e9 is the additive form too
    "causal-additive-1e10": "causal_mask.additive",    # was harness.dtype: only -inf and -1e9 were known (study 13)
    "causal-n-unhandled": "error.none-argument",      # was error.other (hint study 13)
    "sdpa-mask-added-unguarded": "error.none-argument",    # was error.other (hint study 13)
    "ds-axis1-no-keepdims": "backward_ds.missing-keepdims",   # was error.broadcast: told on 3-D too (study 13)
    "backward-rounded": "value.rounded",    # was value.partly-right: "dK is right" (hint study 34's 08 and 17)
    "causal-additive-4d": "causal_mask.additive",  # was harness.dtype alone: shape (1, 1, m, n) (leftover of 12)
    "causal-tf-inverted": "causal_mask.float-inverted",  # was harness.dtype: 1 - tril, TensorFlow's look-ahead mask
    "bahdanau-one-state": "bahdanau_scores.no-pairs",    # was harness.shape, then shape.missing-axis (its m = 1 half)
    "bahdanau-unpaired-sum": "bahdanau_scores.no-pairs",     # was shape.missing-axis (the m = 1 half only)
    "softmax-transpose-axis0": "softmax.transpose-trick",    # was error.broadcast (hint study 14)
    "backward-mask-added": "attention_backward.mask-added",    # was value.mismatch (hint study 15)
    "backward-inverted-1e10-ds-zeroed": "attention_backward.inverted-mask-finite-fill",   # was value.mismatch (15)
    "ds-causal-zeroed": "backward_ds.causal-zeroed",    # was value.mismatch (hint study 15)
    "dv-column-layout": "backward_dv.column-layout",    # was error.matmul-shapes (hint study 15)
    "dq-column-layout": "backward_dq.column-layout",    # was error.matmul-shapes (hint study 15)
    "dk-column-layout": "backward_dk.column-layout",    # was error.matmul-shapes (hint study 15)
    "sdpa-own-causal-mask": "attention.own-causal-mask",    # was error.broadcast (hint study 15)
    "backward-inverted-subtract-1e10": "attention_backward.inverted-mask-finite-fill",   # was value.mismatch (18)
    "backward-inverted-inf-unguarded": "attention_backward.inverted-mask",    # was value.nan (hint study 18)
    "sdpa-mask-used-while-none": "error.none-argument",    # was error.other: an AttributeError (hint study 18)
    "bahdanau-batched-concat": "error.fixed-ndim",    # was error.other: np.concatenate of 3-D and 2-D (study 14)
    "bahdanau-last-state": "bahdanau_scores.no-pairs",       # was harness.shape (leftover of study 13)
    "luong-elementwise": "luong_general_scores.elementwise",    # was error.broadcast (leftover of study 13)
    "luong-last-state": "luong_general_scores.one-decoder-state",     # was harness.shape
    "jacobian-diagonal-vector": "shape.square-axis",     # was harness.shape: (n,) where J is n × n (red team 12C)
    "jacobian-row-totals": "shape.square-axis",          # was harness.shape
    "split-tf-perm": "error.fixed-ndim",           # was error.other: reshape(batch, length, H, d) of a 2-D X
    "mha-batch-unpacked-tf-perm": "error.fixed-ndim",    # was error.other (hint study 4)
    "jacobian-column-squared": "softmax_jacobian.column-squared",    # was value.mismatch (hint study 4)
    "entropy-renormalised-total": "attention_entropy.single-number",    # was error.fixed-ndim (hint study 4)
    "pad-longest-flat": "padding_mask.longest-no-query-axis",      # was harness.shape (hint study 5)
    "entropy-mean-of-all": "shape.one-number",     # was error.fixed-ndim, though nothing raised (hint study 5)
    "ds-no-keepdims": "backward_ds.missing-keepdims",       # was error.broadcast (hint study 5: m = n hid it)
    "backward-finite-fill-ds-masked": "attention_backward.finite-fill",     # was .chain, "dV alone" (hint study 5)
    "backward-gradients-unscaled": "attention_backward.dq-dk-unscaled",     # was .chain, "2 times" (hint study 5)
    "split-torch-swap": "error.torch-keyword",     # was error.other: only (-2, -1) was read as PyTorch's (study 6)
    "merge-torch-swap": "error.torch-keyword",     # was error.other (hint study 6)
    "jacobian-dot-not-outer": "softmax_jacobian.dot-not-outer",     # was value.mismatch (hint study 6)
    "sdpa-four-axes-masked-array": "error.fixed-ndim",    # was error.other: no rank ran, .transpose(0, 1, 3, 2) (study 7)
    "causal-triu-not-kept": "error.function-value",       # was error.other: 'int' and 'function' (hint study 7)
    "softmax-max-not-called": "error.function-value",     # was error.other
    "mha-batch-from-rows": "error.fixed-ndim",   # was error.other: reshape(X_q.shape[0], -1, H, d) of K (study 7)
    # was error.other (-1 written newaxis in NumPy's words, study 8), then error.fixed-ndim: wrong on 3-D too
    "split-d2l-fold": "split_heads.heads-into-batch",
    "mha-torch-layout": "multi_head_attention.torch-layout",     # was error.matmul-shapes (hint study 8)
    # was value.partly-right (hint study 8)
    "mha-output-projection-transposed": "multi_head_attention.output-projection-transposed",
    "mha-scaled-by-value-size": "multi_head_attention.scale-by-d_v",     # was .unscaled, where d_v was 1
    "mha-per-head-loop-unguarded": "multi_head_attention.masked-row-nan",     # was value.nan
    "jacobian-flattened": "shape.reshaped",        # was harness.shape (hint study 8)
    "ds-row-loop-column-vector": "error.fixed-ndim",     # was error.batched-transpose, with no .T in that line
    "backward-unguarded-ds-masked": "attention_backward.masked-row-nan",     # was .chain, "dV alone" (study 8)
    "bahdanau-sum-over-positions": "bahdanau_scores.sum-over-positions",     # was harness.shape (hint study 8)
    # was error.other: a case whose sizes divide into thirds fails otherwise, and that generic hint replaced the mutant's
    "mha-fused-in-proj": "multi_head_attention.fused-split",
    "bahdanau-weights-column": "bahdanau_scores.softmaxed",     # was shape.extra-axis alone (hint study 9)
    "luong-weights-column": "luong_general_scores.softmaxed",    # was shape.extra-axis alone (hint study 9)
    "mha-per-head-finite-fill": "multi_head_attention.finite-fill",     # was value.mismatch (hint study 9)
    "bahdanau-scaled-weights": "value.softmaxed-scores",     # was value.mismatch (hint study 9)
    "mha-head-size-from-model-width": "multi_head_attention.head-size-from-d_model",     # was error.other
    "mha-per-head-mask-added": "multi_head_attention.mask-added",      # was value.masked-weight (hint study 10)
    "split-reshape-heads-then-swap": "split_heads.reshape-heads-first",     # was harness.shape (hint study 10)
    "backward-mask-shifts-scores": "attention_backward.finite-fill",     # was .chain, "dV alone" (hint study 11)
    "bahdanau-dot-score": "bahdanau_scores.dot-product",     # was value.mismatch (hint study 12)
    "sdpa-where-none-mask": "attention.none-mask-fills-all",     # was value.mismatch (hint study 14, after the arity)
    "luong-asserts-equal-sizes": "error.assertion",     # was error.other (hint study 19)
    "sdpa-inverted-unguarded": "attention.inverted-mask",     # was value.masked-weight (hint study 20's 14)
    "entropy-squeeze-batch-of-one": "attention_entropy.single-number",    # was error.other: squeeze(0) (study 19)
    "backward-scaled-by-d_v": "attention_backward.scale-by-d_v",     # was .chain, "0.8944 times" (hint study 19)
    "causal-broadcast-shape-inverted": "causal_mask.inverted",     # was harness.shape (hint study 19)
    "luong-projected-twice-weights": "value.softmaxed-scores",     # was value.mismatch (hint study 19's 14)
    "bahdanau-one-state-as-columns": "bahdanau_scores.no-pairs",     # was error.broadcast (hint study 21's 20)
    "backward-output-like-queries": "error.value-width",     # was error.broadcast (hint study 22's 11, 32, 33)
    "mha-torch-layout-after-its-assert": "multi_head_attention.torch-layout",    # was error.heads-divide (22's 19)
    # was error.fixed-ndim: its own mistake on every case of its rank, by the exercise's mistakes, not their prefix
    "sdpa-3d-weights-first-masked": "attention.returns-swapped",
    # hint study 23: d_model where H·d belongs, told before the fixed rank (was error.broadcast, error.fixed-ndim)
    "mha-bias-model-width": "multi_head_attention.head-size-from-d_model",
    "mha-tf-split-model-depth": "multi_head_attention.head-size-from-d_model",
    "mha-merge-model-width-undefined-weights": "error.name",     # the head size after it (hint studies 23 and 24)
    "mha-3d-unprojected-reshaped-heads": "multi_head_attention.no-output-projection",    # was error.fixed-ndim
    # was backward_dv.no-transpose: its 4-D error is the mutant's, but the mutant is wrong where this runs (study 24)
    "dv-torch-swap-one-two": "error.fixed-ndim",
    "luong-never-meets-keys": "luong_general_scores.no-encoder-states",    # was harness.shape (hint study 24's 09)
    "pad-4d-float-mask": "shape.extra-axis",     # was harness.dtype alone: a wrong dtype's shape is read too (23's 23)
    # was error.broadcast, or the head size: a broadcast's shapes are matched in any order, and the 3-D padded case
    # has d_k = d_model / H, so that the code reaches its mask (hint study 24's 04, 24, 26, 28, 37, 40)
    "mha-3d-no-projections": "multi_head_attention.no-projections",    # was value.masked-weight (hint study 24's 32)
    "mha-tf-inverted-finite-mask": "multi_head_attention.inverted-mask-finite-fill",   # was value.masked-weight (28)
    "mha-mask-never-used": "multi_head_attention.ignores-mask",    # was value.masked-weight (hint study 28's 24)
    # a fully masked row's mistake no longer leads the mask's head axis (red team 65)
    "mha-no-head-axis-nan-output": "multi_head_attention.mask-without-head-axis",
    "mha-finite-fill-added": "multi_head_attention.finite-fill",     # was value.partly-right (red team 65)
    "mha-2d-output-alone": "harness.arity",     # seen on a fully masked case alone, and no evidence of its row's
    "ds-flattened-only-when-batched": "error.unbound",     # was error.name, a misspelling (hint study 26's 10, 26)
    "bahdanau-expand-dims-without-axis": "error.missing-argument",   # was error.other (studies 24's 31, 26's 37)
    "mha-heads-stacked-on-axis-0": "multi_head_attention.heads-in-batch",     # was harness.shape (study 30's 28)
    "sdpa-causal-when-no-mask": "attention.causal-when-no-mask",     # was attention.masked-row-nan (study 31's 32)
    "backward-diagonal-jacobian-unscaled": "attention_backward.p-one-minus-p",    # was .chain (study 31's 34)
    "bahdanau-columns-encoder-first": "bahdanau_scores.states-as-columns",     # was error.matmul-shapes (36's 25)
    "padding-additive-float32": "padding_mask.float",     # was harness.dtype alone (studies 35's 15, 38's 06)
    "jacobian-lists-only": "error.assertion",     # was error.other: its own raise (hint study 40's 21)
}
# the mistake once went unnamed among the others (value.mismatch)
ALSO_NAMED = {
    "backward-dk-no-transpose": "attention_backward.chain",  # dQ and dV right: the error is in dK alone
    "sdpa-added-mask": "attention.mask-added",             # scores + mask, with a boolean mask
    "jacobian-resoftmax": "softmax_jacobian.softmax-again",  # the Jacobian of softmax(w), not of w
    "entropy-mean-over-queries": "shape.reduced-axis",     # was harness.shape, after the fixed rank (leftover of 12)
    "split-d2l-fold": "error.fixed-ndim",     # its fixed rank, after the mistake it makes on 3-D
    "jacobian-batch-last": "shape.moved-axis",     # (n, n, N) for (N, n, n): was harness.shape (hint study 8)
    "sdpa-where-none-mask": "attention.finite-fill",     # the fully masked row, told besides
    "mha-3d-linear-transposed": "multi_head_attention.torch-layout",    # after its divisibility check (study 18)
    "mha-3d-output-only": "harness.arity",     # never told: no case ran this code (hint study 19's 08 and 36)
    # after its fixed rank: first only while a reading of shapes named the masked case's swap (taken out)
    "sdpa-3d-weights-first": "attention.returns-swapped",
    "mha-tf-split-model-depth": "error.fixed-ndim",     # after its head size (hint study 23's 06)
    "mha-tf-mask-added-in-place": "multi_head_attention.mask-without-head-axis",    # after its head size (26, 27)
    # its 3-D-only rank first, where the mask's head axis and the head size are told as a rank is (studies 26, 27)
    "mha-3d-mask-where-without-head-axis": "multi_head_attention.mask-without-head-axis",
    "mha-merge-model-width-undefined-weights": "multi_head_attention.head-size-from-d_model",     # study 23's 07
    "mha-3d-decoder-kv-query-length": "multi_head_attention.causal-when-no-mask",    # study 33's 05: never told
    "sdpa-output-only-mask-ignored": "attention.ignores-mask",     # was the arity alone (study 32's 36)
    "causal-tf-look-ahead": "causal_mask.top-left",     # unnamed: only a bool mask was flipped (red team 71)
    # hint study 36's 12 and 32, 37's 23: the mask's mistake, after a rank's crash or the arity
    "sdpa-2d-output-alone-mask-added": "attention.mask-added",
    "sdpa-2d-naive-softmax-mask-added": "attention.mask-added",
    "backward-2d-mask-added": "attention_backward.mask-added",
    "backward-4d-only-mask-ignored": "attention_backward.ignores-mask",
}


@pytest.mark.parametrize("key", sorted(FIRST_HINT))
def test_real_code_gets_the_hint_that_names_its_mistake(tmp_path, capsys, key):
    status, hints = _check(tmp_path, key, capsys)
    assert status == 1 and hints[0] == FIRST_HINT[key], hints


@pytest.mark.parametrize("key", sorted(ALSO_NAMED))
def test_real_code_gets_every_mistake_named(tmp_path, capsys, key):
    status, hints = _check(tmp_path, key, capsys)
    assert status == 1 and ALSO_NAMED[key] in hints, hints


# a hint once listed for a mistake the code does not make (red team 12C)
NOT_NAMED = {
    "sdpa-queries-times-values": "attention.no-transpose",       # Q @ V raises as Q @ K does (red team 83)
    # red team 81: its error on the chapter's case is S @ W @ H's, and not on the other cases where both raise
    "luong-params-declared-s-w-h": "luong_general_scores.untransposed-H",
    "luong-params-declared-s-w-h-dot": "luong_general_scores.untransposed-H",
    "luong-h-untransposed-nested-dot": "luong_general_scores.states-as-columns",    # S untouched (red team 81)
    "luong-transposed-w-in-a-helper": "luong_general_scores.ignores-W",     # its error is W.T's (red team 77)
    "backward-dk-no-transpose": "attention_backward.dv-no-transpose",       # raises as W @ d_output does
    # red team 78: dS @ Q raises as W @ d_output does, on a line that also holds dV's product, right on every case it
    # ran on (a mistake matched on an error alone must not contradict an output the function got right); a line with
    # a name that reads as dy or d_output; a transpose kept in a name (Wt)
    "backward-dk-in-a-returned-tuple": "attention_backward.dv-no-transpose",
    # red team 79: a list of weights indexed by a counter is no W_Q[h]; a line of two products, dK's raising, with a
    # dV that another mistake spoils where it runs
    "mha-torch-layout-list-averaged": "multi_head_attention.weights-per-head",
    "backward-dk-dv-one-line-mask-added": "attention_backward.dv-no-transpose",
    "backward-dk-line-named-dy": "attention_backward.dv-no-transpose",
    "backward-dv-of-a-named-transpose": "attention_backward.dv-no-transpose",
    "luong-extra-transpose-of-a-product": "luong_general_scores.states-as-columns",     # S is never transposed (77)
    "luong-w-after-the-keys": "luong_general_scores.ignores-W",               # W is there, in the wrong place (77)
    "luong-fixed-weights-of-its-own": "luong_general_scores.one-state-as-column",     # no state as a column (77)
    "luong-own-random-w": "luong_general_scores.transposed-W",      # its W has no .T: matched by NumPy's error (41)
    "luong-weights-and-context-per-position": "luong_general_scores.states-as-columns",   # no .T on the line (41)
    "ds-enumerate-zip-unpack": "error.fixed-ndim",        # a loop header's unpacking, no shape (hint study 10)
    "mha-3d-query-width-slots": "error.batched-transpose",   # no .T: a matmul that fails beside other errors
    "ds-columns-outer": "error.batched-transpose",           # no .T: np.outer flattens a batch
    "sdpa-3d-tf-mask": "attention.ignores-mask",             # the 3-D padding probe could not tell it from inverting
    "jacobian-diagonal-vector": "harness.shape",    # the determinism probe's repeat, read without the expected shape
    "entropy-heads-averaged": "attention_entropy.single-number",    # shape.one-number said it (hint study 6)
    "mha-loop-last-head-weights": "multi_head_attention.averaged-weights",    # nothing averaged (red team 57)
    "dv-torch-swap-one-two": "backward_dv.no-transpose",    # it transposes, on 3-D (hint study 24's 15 and 21)
    # red team 63, on the first cases with m = d_k, broadcast errors matched by their shapes and any missing argument
    "mha-mask-on-the-keys": "multi_head_attention.mask-without-head-axis",    # Kᵀ is not the scores
    "mha-own-softmax-without-axis": "error.missing-argument",     # its own function, not NumPy's
    "mha-unbatched-flag-only-in-2d": "error.fixed-ndim",      # the rank is read from the end throughout
    "mha-own-split-named-like-numpy": "error.missing-argument",     # np.split's name, not np.split (red team 64)
    "mha-first-sequence-mask-for-all": "multi_head_attention.ignores-mask",     # sequence 0 unpadded (red team 65)
    # red team 66: (H, m, n) is the weights of B = 1 stacked on axis 0 too; a raise of a string, or NotImplemented
    "mha-weights-flattened-like-torch": "multi_head_attention.heads-in-batch",
    "mha-raises-a-string": "error.exit",
    "causal-square-only-not-implemented": "error.exit",
    "causal-raises-a-message-variable": "error.exit",     # raise NAME of a string (red team 67)
    # red team 68: [[1, 0, 0], [1, 1, 0]] is a window's too; too many subscripts for a number or a reduced array
    "sdpa-window-when-no-mask": "attention.causal-when-no-mask",
    "sdpa-einsum-scale-as-operand": "error.fixed-ndim",
    "softmax-einsum-sum-without-keepdims": "error.fixed-ndim",
    "sdpa-einsum-letter-typed-twice": "error.fixed-ndim",      # a typo, no rank runs (red team 69)
    "backward-scaled-twice": "attention_backward.scale-by-d_v",   # a case had d_k = √d_v (red team 69)
    "mha-heads-stacked-on-axis-0": "shape.missing-axis",    # at B = 1 the fold reads (H, m, n) (study 30's 28)
    "sdpa-where-on-none-unguarded": "attention.causal-when-no-mask",   # all NaN at m = 2 (red team 71)
    "mha-where-on-none-unguarded": "multi_head_attention.causal-when-no-mask",
    "causal-tf-look-ahead": "causal_mask.upper-triangle",     # a case had n = m + 1 (red team 71)
    "sdpa-weights-only": "attention.returns-swapped",     # its first output is the weights (red team 72)
    "sdpa-torch-unsqueeze": "error.name",     # the checker's suggestion, squeeze, is the opposite (red team 72)
    "mha-per-head-weight-stacks": "multi_head_attention.torch-layout",     # no .T on the line (study 36's 21)
    "mha-per-head-stacks-keys-transposed": "multi_head_attention.torch-layout",   # K's .T, no weight's (red team 73)
    "bahdanau-general-score-chain": "bahdanau_scores.states-as-columns",     # W2 @ H, its error's words (red team 73)
    # red team 75: keys cut to m from X_kv (a withdrawn reading of the weights' shape); W_V alone forgotten, whose
    # merge d_model wide times W_O raised as no-projections' variant did; np.split(X, H, -1) raising as a split in 3
    "mha-keys-cut-to-query-length": "multi_head_attention.keys-from-queries",
    "mha-values-never-projected": "multi_head_attention.no-projections",
    "mha-unprojected-split-by-heads-scaled-by-width": "multi_head_attention.fused-split",
}


@pytest.mark.parametrize("key", sorted(NOT_NAMED))
def test_no_hint_names_a_mistake_the_code_does_not_make(tmp_path, capsys, key):
    status, hints = _check(tmp_path, key, capsys)
    assert status == 1 and NOT_NAMED[key] not in hints, hints


def test_uninitialised_memory_from_where_without_out_fails(tmp_path, capsys):
    """Hint study 2: np.log(p, where=p > 0) without out= passed every probe, since the skipped entries happened to
    be zeros in a fresh interpreter; after other allocations they hold garbage. Each call now starts with NaN in
    the memory its first arrays take, so the entries left unset show, and NumPy 2.4+'s warning names why. Code
    that warns but overwrites those entries itself still passes."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        np.log(np.array([0.5, 0.0]), where=np.array([True, False]))
    if not any("'where' used without 'out'" in str(w.message) for w in caught):
        pytest.skip(f"NumPy {np.__version__} does not warn of where= without out=")
    path = tmp_path / "entropy.py"
    path.write_text(HEADER + "def attention_entropy(w):\n    return -np.sum(w * np.log(w, where=w > 0), axis=-1)\n")
    assert cli.main(["check", "attention_entropy", str(path), "--seed", "0"]) == 1
    assert "Hint [error.where-without-out]" in capsys.readouterr().out
    path.write_text(HEADER + "def attention_entropy(w):\n    logs = np.log(w, where=w > 0, out=np.zeros_like(w))\n"
                    "    return -np.sum(w * logs, axis=-1)\n")
    assert cli.main(["check", "attention_entropy", str(path), "--seed", "0"]) == 0
    path.write_text(HEADER + "def softmax(x):\n    e = np.exp(x - np.max(x, axis=-1, keepdims=True))\n"
                    "    total = np.sum(e, axis=-1, keepdims=True)\n"
                    "    return np.where(total > 0, np.divide(e, total, where=total > 0), 0.0)\n")
    assert cli.main(["check", "softmax", str(path), "--seed", "0"]) == 0, capsys.readouterr().out


def test_no_hint_names_a_transpose_the_code_does_not_make(tmp_path, capsys):
    """K @ Qᵀ (no .T anywhere) fails on 2-D input with a shape error; on batched input the same error was
    read as ".T reverses every axis" (error.batched-transpose). A batched failure after unbatched input
    failed the same way is now the shape error it is, and the mutant that multiplies K by Qᵀ names it
    (red team 12A: it was the generic error.matmul-shapes)."""
    status, hints = _check(tmp_path, "sdpa-kq-swapped", capsys)
    assert status == 1 and hints[0] == "attention.keys-times-queries" and "error.batched-transpose" not in hints, hints


def test_a_where_without_out_whose_entries_are_overwritten_gets_its_own_mistake_named(tmp_path, capsys):
    """Red team 16: NumPy warns of where= without out= even where the code overwrites the entries skipped, and the
    warning then hid the real mistake on every probe (a softmax over axis 0, an entropy in bits). It is named only
    where the output holds NaN that the expected does not (the NaN a call starts with, left where where= skipped)."""
    path = tmp_path / "mine.py"
    path.write_text(HEADER + "def softmax(x):\n    m = np.max(x, axis=0, keepdims=True)\n"
                    "    e = np.exp(x - np.where(np.isfinite(m), m, 0))\n    total = e.sum(axis=0, keepdims=True)\n"
                    "    return np.where(total > 0, np.divide(e, total, where=total > 0), 0)\n")
    assert cli.main(["check", "softmax", str(path), "--seed", "1"]) == 1
    assert "Hint [softmax.wrong-axis]" in (out := capsys.readouterr().out) and "where-without-out" not in out, out
    path.write_text(HEADER + "def attention_entropy(w):\n"
                    "    return -np.sum(w * np.where(w > 0, np.log2(w, where=w > 0), 0.0), axis=-1)\n")
    assert cli.main(["check", "attention_entropy", str(path), "--seed", "1"]) == 1
    assert "Hint [attention_entropy.log2]" in (out := capsys.readouterr().out) and "where-without-out" not in out, out


def test_pytorchs_transpose_on_a_numpy_array_is_told_as_such(tmp_path, capsys):
    """Hint study 3: W.transpose(-2, -1), PyTorch's swap of the last two axes, changes nothing on a NumPy matrix and
    raises "axes don't match array" on 3-D input; that error was the generic error.other. It is now PyTorch's spelling
    (error.torch-keyword), while x.transpose(0, 2, 1) on 2-D input stays the error a fixed rank explains."""
    path = tmp_path / "dv.py"
    path.write_text(HEADER + "def backward_dv(W, d_output):\n    return W.transpose(-2, -1) @ d_output\n")
    assert cli.main(["check", "backward_dv", str(path), "--seed", "0"]) == 1
    out = capsys.readouterr().out
    assert "Mistake 2 [error.torch-keyword]" in out and "np.swapaxes(x, 1, 2)" in out, out
    from attention_edu.checkers.diagnosis import explain_error
    from attention_edu.checkers.judge import ErrorInfo
    axes = ErrorInfo("ValueError", "axes don't match array", ("ValueError",), "line 2 in f: return x.transpose(0, 2, 1)")
    assert explain_error(axes, ()) == "error.fixed-ndim"     # an order of every axis written out (hint study 7)
    remapped = "operands could not be broadcast together with remapped shapes [original->remapped]: (2,3)->(2,3)"
    for line, hint_id in (("return np.einsum('bsd,dd->bsd', X, W)", "error.broadcast"),
                          ("return Q @ K.T", "error.batched-transpose")):
        assert explain_error(ErrorInfo("ValueError", remapped, ("ValueError",), line), ()) == hint_id


@pytest.mark.parametrize("kind, message, hint_id", [
    ("TypeError", "unsupported operand type(s) for -: 'int' and 'function'", "error.function-value"),
    ("TypeError", "unsupported operand type(s) for -: 'builtin_function_or_method' and 'int'", "error.function-value"),
    ("TypeError", "unsupported operand type(s) for /: 'method' and 'float'", "error.function-value"),
    ("TypeError", "'function' object is not subscriptable", "error.function-value"),
    ("AttributeError", "'function' object has no attribute 'shape'", "error.function-value"),
    ("TypeError", "bad operand type for unary -: 'method'", "error.function-value"),
    ("TypeError", "'tuple' object is not callable", "error.function-value"),     # x.shape(1) (hint study 43's 40)
    # a keyword or a value that only happens to be called 'method' or 'function'
    ("TypeError", "quantile() got an unexpected keyword argument 'method'", "error.other"),
    ("ValueError", "unknown mode 'function' (expected 'valid' or 'same')", "error.other"),
])
def test_a_function_where_its_value_was_meant_is_told_by_its_type_name(kind, message, hint_id):
    from attention_edu.checkers.diagnosis import explain_error
    from attention_edu.checkers.judge import ErrorInfo

    line = "line 3 in f: n = x.shape(1)" if "tuple" in message else "line 3 in f: return x - x.max"
    assert explain_error(ErrorInfo(kind, message, (kind, "Exception"), line), ()) == hint_id
    if "tuple" in message:              # np.shape(Q)(-1), the same mistake through NumPy's function (red team 79)
        line = "line 3 in f: d_k = np.shape(Q)(-1)"
        assert explain_error(ErrorInfo(kind, message, (kind, "Exception"), line), ()) == hint_id
        # a tuple called elsewhere is not a shape called, nor np.shape indexed (red team 78)
        for other in ("line 3 in f: return f(x)", "line 3 in f: new = np.shape(X)[:-1] (num_heads, d)"):
            assert explain_error(ErrorInfo(kind, message, (kind, "Exception"), other), ()) == "error.other"


def test_a_numpy_transpose_written_for_2d_input_is_a_fixed_rank_not_pytorch(tmp_path, capsys):
    """Red team 17: K.transpose(1, 0), NumPy code for 2-D input, was told as PyTorch's spelling once that reading
    came in; only the negative pair PyTorch code writes (x.transpose(-2, -1)) is read so. And dQ divided by √n was told
    as d_k taken from K.shape[1] (on 3-D input K.shape[1] is n): it has its own mistake now."""
    path = tmp_path / "sdpa.py"
    path.write_text(HEADER + "def scaled_dot_product_attention(Q, K, V, mask=None):\n"
                    "    s = Q @ K.transpose(1, 0) / np.sqrt(Q.shape[-1])\n    if mask is not None:\n"
                    "        s = np.where(mask, s, -np.inf)\n    m = np.max(s, axis=-1, keepdims=True)\n"
                    "    e = np.exp(s - np.where(np.isfinite(m), m, 0))\n    t = e.sum(axis=-1, keepdims=True)\n"
                    "    w = e / np.where(t > 0, t, 1)\n    return w @ V, w\n")
    assert cli.main(["check", "scaled_dot_product_attention", str(path), "--seed", "1"]) == 1
    out = capsys.readouterr().out
    assert "Hint [error.fixed-ndim]" in out and "torch-keyword" not in out, out
    path.write_text(HEADER + "def backward_dq(dS, K):\n    return dS @ K / np.sqrt(K.shape[-2])\n")
    assert cli.main(["check", "backward_dq", str(path), "--seed", "1"]) == 1
    out = capsys.readouterr().out
    assert "Hint [backward_dq.scale-by-n]" in out and "scale-fixed-axis" not in out, out
    path.write_text(HEADER + "def backward_dk(dS, Q):\n    n = dS.shape[-1]\n    return np.swapaxes(dS, -1, -2) @ Q / math.sqrt(n)\n")
    assert cli.main(["check", "backward_dk", str(path), "--seed", "1"]) == 1
    assert "Hint [backward_dk.scale-by-n]" in capsys.readouterr().out


@pytest.mark.parametrize("message, hint_id", [
    ("cannot reshape array of size 24 into shape (4,6,3,2)", "error.fixed-ndim"),     # (L, D) read as (B, L, ...)
    ("cannot reshape array of size 12 into shape (2,6,2,3)", "error.fixed-ndim"),
    ("cannot reshape array of size 24 into shape (3,2,256)", "error.other"),          # a size typed in: not the rank
    ("cannot reshape array of size 24 into shape (5,5)", "error.other"),
    ("cannot reshape array of size 24 into shape (24,newaxis)", "error.other"),       # -1 is written newaxis
    ("cannot reshape array of size 24 into shape (4,6,3,newaxis)", "error.fixed-ndim"),     # d2l's transpose_qkv
    ("cannot reshape array of size 24 into shape (24,)", "error.other"),
])
def test_a_reshape_that_reads_every_axis_and_asks_for_more_is_a_fixed_rank(message, hint_id):
    """Hint study 4: x.reshape(x.shape[0], x.shape[1], H, d), written for (batch, length, d_model), on a 2-D X asks
    for all of X's values and then H · d times as many; that error was the generic error.other. Only a shape whose
    leading sizes hold every value and that goes on past them reads so."""
    from attention_edu.checkers.diagnosis import explain_error
    from attention_edu.checkers.judge import ErrorInfo
    assert explain_error(ErrorInfo("ValueError", message, ("ValueError",), "line 3"), ()) == hint_id


@pytest.mark.parametrize("type_name, message, hint_id", [
    ("IndexError", "index 2 is out of bounds for axis 0 with size 2", "error.other"),
    ("AxisError", "axis 2 is out of bounds for array of dimension 2", "error.fixed-ndim"),
    ("IndexError", "tuple index out of range", "error.fixed-ndim"),
    ("IndexError", "too many indices for array: array is 2-dimensional, but 3 were indexed", "error.fixed-ndim"),
    ("IndexError", "arrays used as indices must be of integer (or boolean) type", "error.other"),   # study 38's 33
    ("IndexError", "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or boolean "
                   "arrays are valid indices", "error.other"),
])
def test_an_index_past_an_axis_size_is_not_a_fixed_rank(type_name, message, hint_id):
    """Hint study 33's 17: Bahdanau weights used in row layout, x @ W1 written as a loop, indexed W1's rows past d_a
    and were told a fixed number of axes; an index past a size says nothing of the rank (an axis past the rank
    does)."""
    from attention_edu.checkers.diagnosis import explain_error
    from attention_edu.checkers.judge import ErrorInfo
    error = ErrorInfo(type_name, message, (type_name, "IndexError"), "line 21: return m[k][j]")
    assert explain_error(error, ()) == hint_id


@pytest.mark.parametrize("body, inverted, shape", [
    ("return np.arange(n) < lengths[:, None]", "", "Keep a size-1 query axis"),
    ("return ~(np.arange(n) < lengths[:, None])", "Your mask is inverted", "Keep a size-1 query axis"),
    ("return (np.arange(n)[None, :] >= lengths[:, None])[:, :, None]", "Your mask is inverted", "in the middle"),
])
def test_a_mask_of_the_wrong_shape_that_is_also_inverted_is_told_both(tmp_path, capsys, body, inverted, shape):
    """Hint study 4: a padding mask with True on the padding and the wrong shape, (B, n) or (B, n, 1), was told by its
    shape alone (or only as the generic shape hint): every probe stops at the shape, so the inversion never showed.
    The mistakes are now matched on the mask's inverse too, which names both, the inversion first: every value is
    wrong (hint study 30's 03 and 22)."""
    path = tmp_path / "pad.py"
    path.write_text(HEADER + f"def padding_mask(lengths, n):\n    {body}\n")
    assert cli.main(["check", "padding_mask", str(path), "--seed", "0"]) == 1
    hint = re.search(r"^Hint \[([\w.-]+)\]: (.*)$", capsys.readouterr().out, re.M)
    assert hint[1] == ("padding_mask.axis-order" if "middle" in shape else "padding_mask.no-query-axis"), hint[0]
    assert hint[2].startswith(inverted) and shape in hint[2] and "inverted" not in hint[2][len(inverted):], hint[0]


def test_an_inversion_told_first_is_not_told_again_before_a_later_mistake(tmp_path, capsys):
    """Hint study 33's 38: np.triu(..., k=1) for (m, m), True on the future keys and n ignored, was told inverted
    first, then "Your mask is inverted (True = may attend). The mask needs one column per key ..." under
    causal_mask.ignores-n: the inversion twice, the second time under another mistake's id."""
    path = tmp_path / "causal.py"
    path.write_text(HEADER + "def causal_mask(m, n=None):\n    return np.triu(np.ones((m, m), dtype=bool), k=1)\n")
    assert cli.main(["check", "causal_mask", str(path), "--seed", "0"]) == 1
    told = re.findall(r'^(?:Hint|Mistake \d+) \[([\w.-]+)\](?:, first seen on the probe "[^"]*")?: (.*)$',
                      capsys.readouterr().out, re.M)
    assert [i for i, _ in told[:2]] == ["causal_mask.inverted", "causal_mask.ignores-n"], told
    assert not told[1][1].startswith("Your mask is inverted") and "column per key" in told[1][1], told


def test_an_inverted_mask_in_floats_with_an_extra_axis_is_told_inverted_with_both_repairs(tmp_path, capsys):
    """Hint studies 22's 36 and 33's 21: TensorFlow's padding mask, (seq == 0) as floats, (B, 1, 1, n), was told by its
    extra axis alone; its readers told the inversion first. The mask is now matched cast to booleans and squeezed."""
    path = tmp_path / "pad.py"
    path.write_text(HEADER + textwrap.dedent(BY_KEY["pad-tf-tutorial"][2]))
    assert cli.main(["check", "padding_mask", str(path), "--seed", "0"]) == 1
    hint = re.search(r"^Hint \[([\w.-]+)\]: (.*)$", capsys.readouterr().out, re.M)
    assert hint[1] == "padding_mask.inverted", hint[0]
    assert "Your output also has an extra axis of size 1: drop it. Return a boolean array" in hint[2], hint[0]


def test_a_right_output_returned_alone_is_told_the_arity_and_nothing_else(tmp_path, capsys):
    """Hint study 32: mistakes are now read in the output returned alone; a right one must show none, though the
    mistakes that change only the weights give the same output."""
    assert _check(tmp_path, "sdpa-output-only-right", capsys) == (1, ["harness.arity"])


def test_a_mistake_matched_on_an_error_is_not_told_to_return_two_values(tmp_path, capsys):
    """Hint study 35: an error is one value in a fingerprint, so a mutant matched on K.T's error was told "Return exactly
    2 values" too, as an output returned alone is; that sentence belongs to an arity failure only."""
    path = tmp_path / "sdpa.py"
    path.write_text(HEADER + textwrap.dedent("""
        def scaled_dot_product_attention(Q, K, V, mask=None):
            s = Q @ K.T / np.sqrt(Q.shape[-1])
            if mask is not None:
                s = np.where(mask, s, -np.inf)
            top = s.max(axis=-1, keepdims=True)
            e = np.exp(s - np.where(np.isfinite(top), top, 0.0))
            total = e.sum(axis=-1, keepdims=True)
            w = np.divide(e, total, out=np.zeros_like(e), where=total > 0)
            return w @ V, w
        """))
    assert cli.main(["check", "scaled_dot_product_attention", str(path), "--seed", "0"]) == 1
    out = capsys.readouterr().out
    assert "Hint [attention.batched-transpose]" in out and "Return exactly" not in out, out[:600]


def test_heads_stacked_on_the_first_axis_are_told_what_the_weights_must_be_not_a_reshape(tmp_path, capsys):
    """Red team 67: per-head weights stacked on axis 0 (np.vstack) were told to swap (..., m, H, d_k) to
    (..., H, m, d_k), a reshape that code does not have; the hint now says what the weights must be."""
    _, exercise, source, *_ = BY_KEY["mha-loop-weights-vstacked"]
    path = tmp_path / "mha.py"
    path.write_text(HEADER + textwrap.dedent(source))
    assert cli.main(["check", exercise, str(path), "--seed", "0"]) == 1
    hint = re.search(r"^Hint \[multi_head_attention.heads-in-batch\]: (.*)$", capsys.readouterr().out, re.M)
    assert hint and "(..., H, m, n)" in hint[1] and "d_k" not in hint[1], hint


def test_a_mask_all_of_one_value_is_never_told_inverted(tmp_path, capsys):
    """Red team 66: a 1 × 1 causal mask [[False]] (no diagonal, n ignored, m = 1) is [[True]] inverted, which the
    mutant for an ignored n gives: the mask was told inverted too, though it is not."""
    path = tmp_path / "causal.py"
    path.write_text(HEADER + "def causal_mask(m, n=None):\n    return np.tril(np.ones((m, m), dtype=bool), k=-1)\n")
    assert cli.main(["check", "causal_mask", str(path), "--seed", "1"]) == 1
    out = capsys.readouterr().out
    assert "Hint [causal_mask.no-diagonal]" in out and "inverted" not in out, out


MATMUL = "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature (n?,k),(k,m?)->(n?,m?)"
REMAPPED = ("operands could not be broadcast together with remapped shapes [original->remapped]: (8,2,3,3)->(8,2,newaxis,"
            "newaxis) (2,4,3,3)->(2,4,newaxis,newaxis)  and requested shape (3,3)")


@pytest.mark.parametrize("message, line, ndim, hint_id", [
    # hint study 8: np.transpose(J, (2, 0, 1)), written for (batch, n, n), on a 1-D input's (n, n)
    ("axes don't match array", "line 6 in softmax_jacobian: J = np.transpose(J, (2, 0, 1))", 2, "error.fixed-ndim"),
    ("axes don't match array", "line 6 in f: J = J.transpose(2, 0, 1)", 2, "error.fixed-ndim"),
    ("axes don't match array", "line 21 in f: k_t = np.transpose(k, axes=(0, 2, 1))", 2, "error.fixed-ndim"),  # study 12
    ("axes don't match array", "line 6 in f: J = np.transpose(J, order)", 2, "error.other"),   # no literal axes
    # a batched operand with .T in that line is the batched transpose; with none, only the shapes clash
    (MATMUL + " (size 5 is different from 3)", "line 4 in f: s = Q @ K.T", 3, "error.batched-transpose"),
    (MATMUL + " (size 5 is different from 3)", "line 4 in f: s = np.transpose(K) @ Q", 3, "error.batched-transpose"),
    (MATMUL + " (size 15 is different from 5)", "line 7 in backward_ds: dS[i] = jac @ dW[i]", 3,
     "error.matmul-shapes"),
    (MATMUL + " (size 5 is different from 3)", "line 4 in f: s = Q @ K.transpose()", 3, "error.batched-transpose"),
    (MATMUL + " (size 5 is different from 3)", "line 4 in f: s = Q @ K.transpose(0, 2, 1, 3)", 3,
     "error.matmul-shapes"),    # every axis named: not the transpose that reverses them all
    # matmul's batch axes clash: .T on 3-D; with none in that line (study 9: a reshape with the wrong length), a clash
    (REMAPPED, "line 4 in f: s = Q @ K.T / 2", 3, "error.batched-transpose"),
    (REMAPPED, "line 16 in f: s = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d)", 3, "error.broadcast"),
])
def test_a_transpose_is_read_only_where_the_failing_line_writes_one(message, line, ndim, hint_id):
    from attention_edu.checkers.diagnosis import explain_error
    from attention_edu.checkers.judge import ErrorInfo
    args = (np.zeros((2,) * ndim),)
    assert explain_error(ErrorInfo("ValueError", message, ("ValueError",), line), args) == hint_id


@pytest.mark.parametrize("message, line, hint_id", [
    ("not enough values to unpack (expected 3, got 2)", "line 3 in f: B, L, D = X.shape", "error.fixed-ndim"),
    ("too many values to unpack (expected 2)", "line 3 in f: m, n = np.shape(W)", "error.fixed-ndim"),
    # hint study 10: a loop header that unpacks enumerate's pairs as three names has no fixed rank in it
    ("not enough values to unpack (expected 3, got 2)", "line 4 in f: for i, a, b in enumerate(zip(W, dW)):",
     "error.other"),
])
def test_an_unpacking_error_is_a_fixed_rank_only_where_the_line_unpacks_a_shape(message, line, hint_id):
    from attention_edu.checkers.diagnosis import explain_error
    from attention_edu.checkers.judge import ErrorInfo
    assert explain_error(ErrorInfo("ValueError", message, ("ValueError",), line), (np.zeros((2, 3)),)) == hint_id


QKV = (np.zeros((2, 4)), np.zeros((3, 4)), np.zeros((3, 5)))         # d_k = 4, d_v = 5


@pytest.mark.parametrize("message, names, hint_id", [
    # hint study 22: flash-attention code sizes its output like Q (np.zeros_like(Q), o.reshape(q.shape)), d_k for d_v
    ("operands could not be broadcast together with shapes (2,4) (2,5) ", ("Q", "K", "V"), "error.value-width"),
    ("operands could not be broadcast together with shapes (2,5) (2,4) ", ("Q", "K", "V", "d_output"),
     "error.value-width"),
    ("cannot reshape array of size 10 into shape (2,4)", ("Q", "K", "V"), "error.value-width"),
    ("operands could not be broadcast together with shapes (2,4) (2,3) ", ("Q", "K", "V"), "error.broadcast"),
    # red team 58: K typed for V meets d_output, no array sized like Q: not this story
    ("operands could not be broadcast together with shapes (2,1,5) (1,3,4) ", ("Q", "K", "V", "d_output"),
     "error.broadcast"),
    ("cannot reshape array of size 8 into shape (2,4)", ("Q", "K", "V"), "error.other"),
    # the same sizes on multi-head attention's arguments (X_q, X_kv, W_Q) are not Q, K and V
    ("operands could not be broadcast together with shapes (2,4) (2,5) ", ("X_q", "X_kv", "W_Q"), "error.broadcast"),
])
def test_an_array_sized_like_the_queries_where_the_values_width_belongs_is_named(message, names, hint_id):
    from attention_edu.checkers.diagnosis import explain_error
    from attention_edu.checkers.judge import ErrorInfo
    line = "line 9 in f: o_i = np.exp(m_prev - m_i) * o_i + p_ij @ v_j"
    assert explain_error(ErrorInfo("ValueError", message, ("ValueError",), line), QKV, names) == hint_id


@pytest.mark.parametrize("line, hint_id", [
    ("line 3 in f: assert embed_dim % num_heads == 0", "error.heads-divide"),
    ("line 3 in f: assert d_model % h == 0", "error.heads-divide"),           # hint study 22: error.assertion
    ("line 3 in f: assert d_model % self.n_heads == 0", "error.heads-divide"),
    ("line 3 in f: assert d_s == d_h", "error.assertion"),
    ("line 3 in f: assert n % hidden == 0", "error.assertion"),
    # red team 58: a message formatted with % before H (the encoder states) or h (one of them) is no divisibility
    ('line 3 in f: assert H.ndim == 3, "expected a batch, got %s" % (H.shape,)', "error.assertion"),
    ('line 5 in f: assert W.shape[0] == h.shape[0], "W rows vs h: %s" % h.shape', "error.assertion"),
])
def test_an_assert_that_the_heads_divide_the_width_is_named_whatever_the_heads_are_called(line, hint_id):
    from attention_edu.checkers.diagnosis import explain_error
    from attention_edu.checkers.judge import ErrorInfo
    assert explain_error(ErrorInfo("AssertionError", "", ("AssertionError",), line), ()) == hint_id


@pytest.mark.parametrize("type_name, message, line, hint_id", [
    ("ValueError", "input must be a list", 'line 15 in f: raise ValueError(f"input must be a list")', "error.assertion"),
    ("TypeError", "expected 2-D", "line 4 in f: raise TypeError('expected 2-D')  # rows only", "error.assertion"),
    ("ValueError", "d_model must be divisible by num_heads", "line 3 in f: raise ValueError(msg)", "error.heads-divide"),
    # a NumPy error wrapped by the student's except is NumPy's; raise of a value that is no exception is no check
    ("ValueError", "bad shapes", "line 6 in f: raise ValueError('bad shapes') from err", "error.other"),
    ("TypeError", "exceptions must derive from BaseException", "line 5 in f: raise mask", "error.other"),
])
def test_a_raise_of_the_students_own_rejecting_valid_input_is_its_own_check(type_name, message, line, hint_id):
    """Hint study 40's 21: a Jacobian that accepts lists only raised its own ValueError on every array: error.other."""
    from attention_edu.checkers.diagnosis import explain_error
    from attention_edu.checkers.judge import ErrorInfo
    assert explain_error(ErrorInfo(type_name, message, (type_name, "Exception"), line), ()) == hint_id


def test_a_masked_array_handed_back_is_told_how_to_fill_it(tmp_path, capsys):
    """np.ma's arrays are an ndarray subclass: refused at the type, and the hint says how to get a plain array
    (hint studies 33 and 42's 11)."""
    status, hints = _check(tmp_path, "sdpa-masked-array", capsys)
    path = tmp_path / "again.py"
    path.write_text(HEADER + textwrap.dedent(BY_KEY["sdpa-masked-array"][2]))
    cli.main(["check", "scaled_dot_product_attention", str(path), "--seed", "0"])
    out = capsys.readouterr().out
    assert status == 1 and hints[0] == "harness.wrong-type" and "MaskedArray" in out and ".filled(0.0)" in out
