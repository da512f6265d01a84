"""Holes found by red team 9: an automatic sweep of one-point mutants of honest solutions (operators, constants,
axes, keyword arguments, calls) and of honest variants over many seeds. Each mutant or variant is written here as
a student would submit it and graded end to end (:func:`grade_one`, the sandboxed worker of ``grade``)."""

from __future__ import annotations

import pytest

from attention_edu.checkers.judge.submission import grade_one

_SOFTMAX_ONE_MAXIMUM = """
    top = SHIFT                                     # wrong: not each row's own maximum
    e = np.exp(scores - np.where(np.isfinite(top), top, 0.0))
    total = np.sum(e, axis=-1, keepdims=True)
    weights = e / np.where(total == 0, 1.0, total)
"""

#: Wrong shifts before exp: one maximum for the whole array (np.max without axis=-1), each row's sum.
SHIFTS = {"whole-array maximum": "np.max(scores, keepdims=True)", "row sum": "np.sum(scores, axis=-1, keepdims=True)"}
WRONG_SHIFT = {
    "scaled_dot_product_attention": """
import math
import numpy as np

def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
""" + _SOFTMAX_ONE_MAXIMUM + """
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
    if mask is not None:
        scores = np.where(np.expand_dims(mask, -3), scores, -np.inf)
""" + _SOFTMAX_ONE_MAXIMUM + """
    out = np.swapaxes(weights @ V, -3, -2)
    return out.reshape(out.shape[:-2] + (-1,)) @ W_O, weights
""",
    "attention_backward": """
import math
import numpy as np

def attention_backward(Q, K, V, d_output, mask=None):
    scale = math.sqrt(Q.shape[-1])
    scores = Q @ np.swapaxes(K, -1, -2) / scale
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
""" + _SOFTMAX_ONE_MAXIMUM + """
    dW = d_output @ np.swapaxes(V, -1, -2)
    dS = weights * (dW - np.sum(dW * weights, axis=-1, keepdims=True))
    return dS @ K / scale, np.swapaxes(dS, -1, -2) @ Q / scale, np.swapaxes(weights, -1, -2) @ d_output
""",
}


@pytest.mark.parametrize("exercise, shift", [(e, s) for e in WRONG_SHIFT for s in SHIFTS
                                             if (e, s) != ("multi_head_attention", "row sum")])
def test_a_softmax_shifted_by_other_than_each_rows_maximum_fails_on_large_scores(tmp_path, exercise, shift):
    """In the large-scores case every query's best score lay within 750 of the largest score of all: a softmax
    subtracting the whole array's maximum (np.max without axis=-1) passed every probe on seeds 1..5, and gives a
    query whose scores all lie far below another's zero weights (exp underflows; below about 100 in float32). The
    row sum failed only on the query that a query near 0 replaced: it overflows once a row's maximum exceeds its
    sum by 710, which query 1 now does."""
    path = tmp_path / "shifted.py"
    path.write_text(WRONG_SHIFT[exercise].replace("SHIFT", SHIFTS[shift]))
    for seed in (1, 2):
        row = grade_one(exercise, path, seed=seed)
        assert row.error is None and not row.passed and row.probe == "stability", vars(row)
        assert row.probes_total - row.probes_passed == 2, vars(row)          # the case and its hidden copy
