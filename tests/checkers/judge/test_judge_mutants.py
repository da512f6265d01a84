"""Holes found by red team 9: an automatic sweep of one-point mutants of honest solutions (operators, constants,
axes, keyword arguments, calls) and of honest variants over many seeds. Each mutant is written here as a student
would submit it and graded end to end (:func:`grade_one`, the sandboxed worker of ``grade``)."""

from __future__ import annotations

import pytest

from attention_edu.checkers.judge.submission import grade_one

#: Attention, multi-head attention and the attention backward around a softmax (WEIGHTS: from scores and keep, the
#: mask as 1.0 and 0.0, to weights) that each test gets wrong in its own way.
ATTENTION = {
    "scaled_dot_product_attention": """
import math
import numpy as np

def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    keep = np.ones(scores.shape) if mask is None else np.broadcast_to(mask, scores.shape) * 1.0
WEIGHTS
    return weights @ V, weights
""",
    "multi_head_attention": """
import math
import numpy as np

def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    def heads(X):
        return np.swapaxes(X.reshape(X.shape[:-1] + (num_heads, -1)), -3, -2)
    Q, K, V = heads(X_q @ W_Q), heads(X_kv @ W_K), heads(X_kv @ W_V)
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    keep = np.ones(scores.shape) if mask is None else np.broadcast_to(np.expand_dims(mask, -3), scores.shape) * 1.0
WEIGHTS
    out = np.swapaxes(weights @ V, -3, -2)
    return out.reshape(out.shape[:-2] + (-1,)) @ W_O, weights
""",
    "attention_backward": """
import math
import numpy as np

def attention_backward(Q, K, V, d_output, mask=None):
    scale = math.sqrt(Q.shape[-1])
    scores = Q @ np.swapaxes(K, -1, -2) / scale
    keep = np.ones(scores.shape) if mask is None else np.broadcast_to(mask, scores.shape) * 1.0
WEIGHTS
    dW = d_output @ np.swapaxes(V, -1, -2)
    dS = weights * (dW - np.sum(dW * weights, axis=-1, keepdims=True))
    return dS @ K / scale, np.swapaxes(dS, -1, -2) @ Q / scale, np.swapaxes(weights, -1, -2) @ d_output
""",
}
_RENORMALISED = """
    total = np.sum(e, axis=-1, keepdims=True)
    weights = e / np.where(total > 0, total, 1.0)
"""
#: Softmaxes that subtract something else than each row's maximum before exp, the mask applied before.
SHIFTS = {name: "    scores = np.where(keep > 0, scores, -np.inf)\n    top = " + shift + """
    e = np.exp(scores - np.where(np.isfinite(top), top, 0.0))""" + _RENORMALISED
          for name, shift in (("whole-array maximum", "np.max(scores, keepdims=True)   # wrong: one for all rows"),
                              ("row sum", "np.sum(scores, axis=-1, keepdims=True)    # wrong: the sum"))}
#: Softmaxes that apply the mask to exp(...) and renormalise: right in exact arithmetic, not in floating point.
AFTER_EXP = {
    "maximum over every key": """
    top = np.max(scores, axis=-1, keepdims=True)         # wrong: the masked keys' scores count in the maximum
    e = np.exp(scores - top) * keep""" + _RENORMALISED,
    "masked scores 0": """
    scores = scores * keep                               # wrong: masked scores become 0 and count in the maximum
    top = np.max(scores, axis=-1, keepdims=True)
    e = np.exp(scores - top) * keep""" + _RENORMALISED,
    "exp of the masked scores": """
    top = np.max(np.where(keep > 0, scores, -np.inf), axis=-1, keepdims=True)
    e = np.exp(scores - np.where(np.isfinite(top), top, 0.0)) * keep    # wrong: exp(masked score - top) overflows
""" + _RENORMALISED,
}


def _graded(tmp_path, exercise: str, weights: str, seed: int):
    path = tmp_path / "attention.py"
    path.write_text(ATTENTION[exercise].replace("WEIGHTS", weights))
    return grade_one(exercise, path, seed=seed)


@pytest.mark.parametrize("exercise, shift", [(e, s) for e in ATTENTION for s in SHIFTS
                                             if (e, s) != ("multi_head_attention", "row sum")])
def test_a_softmax_shifted_by_other_than_each_rows_maximum_fails_on_large_scores(tmp_path, exercise, shift):
    """In the large-scores case every query's best score lay within 750 of the largest score of all: a softmax
    subtracting the whole array's maximum (np.max without axis=-1) passed every probe on seeds 1..5, and gives a
    query whose scores all lie far below another's zero weights (exp underflows; below about 100 in float32). The
    row sum failed only on the query that a query near 0 replaced: it overflows once a row's maximum exceeds its
    sum by 710, which query 1 now does."""
    for seed in (1, 2):
        row = _graded(tmp_path, exercise, SHIFTS[shift], seed)
        assert row.error is None and not row.passed and row.probe == "stability", vars(row)
        assert row.probes_total - row.probes_passed >= 2, vars(row)          # the case and its hidden copy at least


@pytest.mark.parametrize("exercise, masking", [(e, m) for e in ATTENTION for m in AFTER_EXP])
def test_a_mask_applied_after_exp_fails_when_masked_scores_dominate(tmp_path, exercise, masking):
    """No masked score lay far above the scores a query may see, and no query saw only scores far below 0: a
    softmax that applies the mask to exp(scores - maximum) and renormalises, its maximum taken over every key
    (masked ones too, or masked scores set to 0), passed every probe on seeds 1..5 and gives a query zero weights
    once a masked key outscores the others by 750 (by 90 in float32). Taking the maximum over the allowed keys
    but exp of every score overflows there instead (exp(800) * 0 is NaN): wrong on the same inputs, held for
    right by this repository's tests until now. Entry 0's padding keys now score 800 to 1200 above the rest, and
    the causal case's query 0 scores -1000 on the one key it sees (in multi-head attention: entry 1's padding
    tokens are 30 times larger, token 0 of the causal case 220 times, scoring -1200 on itself in head 1)."""
    for seed in (1, 2):
        row = _graded(tmp_path, exercise, AFTER_EXP[masking], seed)
        assert row.error is None and not row.passed and row.probe == "masks", vars(row)
