"""Hostile student code, and proof that every hint id a checker can report is reachable.

Each entry of TRIGGERS is a function written to produce exactly one hint
(raising, returning None, the wrong type or shape, NaN, mutating its input,
printing, looping forever, breaking a property while passing every fixed
case). The test suite fails if a hint id exists that no trigger reaches.
"""

from __future__ import annotations

import os
import signal
import sys
import time
import warnings

import numpy as np
import pytest

import attention_edu as ae
from attention_edu.checkers import CHECKERS, EXERCISES, all_mistakes, hint_ids
from attention_edu.checkers.answers import ANSWERS, GENERIC_HINT_IDS
from attention_edu.checkers.exercises.entropy import attention_entropy as _entropy

C = ae.checkers
sdpa, mha = ae.scaled_dot_product_attention, ae.multi_head_attention
bahdanau = EXERCISES["bahdanau_scores"].reference
luong = EXERCISES["luong_general_scores"].reference
backward = EXERCISES["attention_backward"].reference


def _nan_first(x):
    w = ae.softmax(x)
    w.flat[0] = np.nan
    return w


def _exit(x):
    sys.exit(3)


def _forever(x):
    while True:
        pass


def _hard_exit(x):
    os._exit(0)


def _kill_self(x):
    os.kill(os.getpid(), signal.SIGKILL)


def _bomb(x):
    return [np.empty(2**24) for _ in range(10**4)]       # 128 MB at a time, without end


def _broadcast_axis(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True)[:, None])
    return e / np.sum(e, axis=-1, keepdims=True)


def _noisy(x):
    return ae.softmax(x) + np.random.default_rng().normal() * 1e-12


def _mha_dot_t(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    Q, K, V = (ae.split_heads(X @ W, num_heads) for X, W in ((X_q, W_Q), (X_kv, W_K), (X_kv, W_V)))
    weights = ae.softmax(Q @ K.T / np.sqrt(Q.shape[-1]))
    return ae.merge_heads(weights @ V) @ W_O, weights


def _sdpa_values_transposed(Q, K, V, mask=None):
    weights = ae.softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))
    return weights @ V.T, weights               # a transpose too many


def _sdpa_np_dot(Q, K, V, mask=None):      # the mask applied: an ignored one is told before a crash on a batch
    weights = ae.softmax(ae.apply_mask(np.dot(Q, K.T) / np.sqrt(Q.shape[-1]), mask))
    return np.dot(weights, V), weights


def _jacobian(w):
    return w[..., :, None] * (np.eye(w.shape[-1]) - w[..., None, :])


def _two_axes(x):
    m, n = x.shape
    return ae.softmax(x)


def _three_params(Q, K, V):
    return sdpa(Q, K, V)


def _undefined(x):
    return np.exp(x) / undefined_total  # noqa: F821  (the point of the test)


def _when(shape_test, good, bad):
    """A function that is correct except on the inputs a property uses."""
    return lambda *a: bad(*a) if shape_test(*a) else good(*a)


def _boolean_index(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores[~mask] = -np.inf            # needs the mask in the scores' full shape: a (B, 1, n) one cannot index
    return sdpa(Q, K, V, None if mask is None else np.broadcast_to(mask, scores.shape))


def _truth_value(Q, K, V, mask=None):
    if mask:                               # an array of several values has no truth value
        return sdpa(Q, K, V, mask)
    return sdpa(Q, K, V)


def _heads_divide(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    assert X_q.shape[-1] % num_heads == 0
    return mha(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask)


def _equal_sizes(S, H, W):
    assert S.shape[-1] == H.shape[-1]
    return S @ W @ H.T


def _output_like_queries(Q, K, V, mask=None):
    weights = ae.softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))
    return np.zeros_like(Q) + weights @ V, weights        # d_k columns meet d_v


# hint id -> (exercise, function, timeout)
def _where_warns() -> bool:
    """Whether this NumPy warns of a ufunc given where= but no out= (2.4 does)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        np.log(np.ones(2), where=np.array([True, False]))
    return any("'where' used without 'out'" in str(w.message) for w in caught)


def _unbound(x):
    if x.ndim > 2:                                  # rows flattened for a batch only
        rows = x.reshape(-1, x.shape[-1])
    return np.exp(rows) / np.exp(rows).sum(-1, keepdims=True)


TRIGGERS = {
    "error.broadcast": ("softmax", lambda x: x + np.zeros(x.shape[-1] + 1), None),
    "error.batched-transpose": ("multi_head_attention", _mha_dot_t, None),
    "error.matmul-shapes": ("scaled_dot_product_attention", _sdpa_values_transposed, None),
    "error.batched-dot": ("scaled_dot_product_attention", _sdpa_np_dot, None),
    "error.fixed-ndim": ("softmax", _two_axes, None),
    "error.signature": ("scaled_dot_product_attention", _three_params, None),
    "error.name": ("softmax", _undefined, None),
    "error.unbound": ("softmax", _unbound, None),
    "error.missing-argument": ("softmax", lambda x: np.exp(x) / np.expand_dims(np.exp(x).sum(-1)), None),
    "error.exit": ("softmax", _exit, None),
    "error.torch-keyword": ("softmax", lambda x: np.exp(x) / np.sum(np.exp(x), dim=-1, keepdim=True), None),
    "error.other": ("softmax", lambda x: (_ for _ in ()).throw(RuntimeError("boom")), None),
    "harness.timeout": ("softmax", _forever, 0.3),
    "harness.exit": ("softmax", _hard_exit, None),
    "harness.crash": ("softmax", _kill_self, None),
    "harness.memory": ("softmax", _bomb, None),
    "harness.reply": ("softmax", lambda x: np.zeros((1100, 1100)), None),      # 9.7 MB: over the 4 MiB a reply may hold
    "harness.mutated": ("softmax", lambda x: np.divide(np.exp(x, out=x), np.exp(x).sum(-1, keepdims=True)), None),
    "harness.wrong-type": ("softmax", lambda x: ae.softmax(x).tolist(), None),
    "harness.several": ("softmax", lambda x: (ae.softmax(x), ae.softmax(x)), None),     # np.asarray would stack them
    "harness.none": ("softmax", lambda x: ae.softmax(x) if x.ndim < 3 else None, None),
    "harness.arity": ("scaled_dot_product_attention", lambda Q, K, V, mask=None: sdpa(Q, K, V, mask)[0], None),
    "harness.dtype": ("causal_mask", lambda m, n=None: ae.causal_mask(m, n).astype(int), None),
    "harness.shape": ("softmax", lambda x: ae.softmax(x)[..., :-1], None),
    "harness.nondeterministic": ("softmax", _noisy, None),
    "harness.not-callable": ("softmax", np.zeros(3), None),
    "value.nan": ("softmax", _nan_first, None),
    # PyTorch's check, which the exercise's d_k = W_Q.shape[1] // num_heads never needs
    "error.heads-divide": ("multi_head_attention", _heads_divide, None),
    # an assert of its own that the exercise's inputs break: Luong's d_s = d_h (hint study 19)
    "error.assertion": ("luong_general_scores", _equal_sizes, None),
    "error.value-width": ("scaled_dot_product_attention", _output_like_queries, None),
    "error.none-argument": ("causal_mask", lambda m, n=None: np.tril(np.ones((m, n), bool), k=n - m), None),
    # no evidence reader explains a wiggle of the scores, neither a constant offset nor a factor (rows still sum to 1;
    # a wiggle added to the weights is value.not-weights, told before NumPy's words since hint study 23)
    "value.mismatch": ("softmax", lambda x: ae.softmax(x + 0.1 * np.sin(7.3 * np.arange(x.size).reshape(x.shape))),
                       None),
    # evidence readers (diagnosis/evidence.py): each names what the output shows
    "value.factor": ("softmax", lambda x: 0.9 * ae.softmax(x), None),
    "value.offset": ("softmax", lambda x: ae.softmax(x) + 0.01, None),
    "value.rounded": ("softmax", lambda x: np.round(ae.softmax(x), 4), None),      # for printing (hint study 34)
    "value.wrong-axis": ("softmax", lambda x: ae.softmax(x, axis=1) if x.ndim > 2 else ae.softmax(x), None),
    "value.partly-right": ("scaled_dot_product_attention",
                           lambda Q, K, V, mask=None: (lambda o, w: (o + np.sin(o), w))(*sdpa(Q, K, V, mask)), None),
    "shape.extra-axis": ("softmax", lambda x: ae.softmax(x)[..., None, :], None),
    "shape.broadcast-axis": ("softmax", _broadcast_axis, None),
    "shape.missing-axis": ("bahdanau_scores",             # (n,) for the m = 1 case: the query axis squeezed out
                           lambda S, H, W1, W2, v: np.squeeze(np.tanh((S @ W1.T)[:, None] + H @ W2.T) @ v), None),
    "shape.reduced-axis": ("attention_entropy",           # one entropy per sequence: averaged over the queries
                           lambda w: _entropy(w).mean(axis=-1) if w.ndim > 2 else _entropy(w), None),
    "shape.square-axis": ("softmax_jacobian", lambda w: w * (1 - w), None),     # (..., n): the diagonal as a vector
    "shape.reshaped": ("softmax_jacobian", lambda w: _jacobian(w).reshape(*w.shape[:-1], -1), None),     # (..., n·n)
    "shape.moved-axis": ("merge_heads", lambda X: np.moveaxis(ae.merge_heads(X), -1, 0), None),
    "value.softmaxed-scores": ("luong_general_scores", lambda S, H, W: ae.softmax(3.0 * S @ W @ H.T), None),
    "shape.one-number": ("scaled_dot_product_attention",     # weights summed over every axis: one number
                         lambda Q, K, V, mask=None: (sdpa(Q, K, V, mask)[0], np.sum(sdpa(Q, K, V, mask)[1])), None),
    "attention_backward.chain": ("attention_backward",
                                 lambda *a: (lambda dQ, dK, dV: (dQ, dK + np.cos(dK), dV))(*backward(*a)), None),
    "attention_entropy.log-epsilon": ("attention_entropy", lambda w: -np.sum(w * np.log(w + 1e-3), axis=-1), None),
    # an ε added and the row renormalised: an all-zero row comes out uniform, entropy log n
    "attention_entropy.empty-row": ("attention_entropy", lambda w: _entropy((w + 1e-9) / np.sum(
        w + 1e-9, axis=-1, keepdims=True)), None),
    "error.where-without-out": ("attention_entropy", lambda w: -np.sum(w * np.log(w, where=w > 0), axis=-1), None),
    # the weights' and masks' readers: scores returned as weights, a -inf score given weight, a key too many per
    # row, and the right number of keys in the wrong places (left padding)
    "value.not-weights": ("scaled_dot_product_attention",
                          lambda Q, K, V, mask=None: (sdpa(Q, K, V, mask)[0], Q @ np.swapaxes(K, -1, -2)), None),
    "value.masked-weight": ("softmax", lambda x: ae.softmax(np.where(np.isneginf(x), 0.0, x)), None),
    "value.scaled-scores": ("softmax", lambda x: ae.softmax(x / 2), None),         # a temperature of 2
    "value.order": ("attention_backward", lambda *a: (lambda dQ, dK, dV: (dK, dQ, dV))(*backward(*a)), None),
    "error.boolean-index": ("scaled_dot_product_attention", _boolean_index, None),
    "error.truth-value": ("scaled_dot_product_attention", _truth_value, None),
    "error.function-value": ("softmax", lambda x: np.exp(x) / np.exp(x).sum, None),
    "error.float-size": ("split_heads", lambda X, h: np.swapaxes(X.reshape(X.shape[:-1] + (h, X.shape[-1] / h)), -3, -2),
                         None),
    "value.mask-count": ("causal_mask", lambda m, n=None: np.tril(np.ones((m, n or m), bool), k=(n or m) - m + 1),
                         None),
    "value.mask-place": ("padding_mask", lambda lengths, n: (np.arange(n) >= n - np.asarray(lengths)[:, None])[:, None],
                         None),
    # properties: correct on every fixed case, wrong on the property's own inputs
    "softmax.property-shift": ("softmax", _when(lambda x: x.shape == (3, 6), ae.softmax,
                                                lambda x: ae.softmax(x / (1 + abs(x.mean())))), None),
    "softmax.property-rows": ("softmax", _when(lambda x: x.shape == (7, 4), ae.softmax,
                                               lambda x: 1.1 * ae.softmax(x)), None),
    "causal_mask.property-counts": ("causal_mask", _when(lambda m, n=None: (m, n) == (6, 8), ae.causal_mask,
                                                         lambda m, n=None: ae.causal_mask(m, n)[::-1]), None),
    "causal_mask.property-default": ("causal_mask", _when(lambda m, n=None: (m, n) == (5, None), ae.causal_mask,
                                                          lambda m, n=None: np.ones((5, 5), bool)), None),
    "padding_mask.property-counts": ("padding_mask", _when(lambda lengths, n: list(lengths) == [3, 0, 6, 1],
                                                           ae.padding_mask, lambda lengths, n: ~ae.padding_mask(lengths, n)), None),
    "attention.property-rows": ("scaled_dot_product_attention", _when(
        lambda Q, K, V, mask=None: Q.shape == (6, 3), sdpa,
        lambda Q, K, V, mask=None: (sdpa(Q, K, V)[0], 2 * sdpa(Q, K, V)[1])), None),
    "attention.property-causal": ("scaled_dot_product_attention", _when(
        lambda Q, K, V, mask=None: Q.shape == (5, 3) and mask is not None, sdpa,
        lambda Q, K, V, mask=None: sdpa(Q, K, V)), None),
    "attention.property-key-order": ("scaled_dot_product_attention", _when(
        lambda Q, K, V, mask=None: K.shape == (6, 4), sdpa,
        lambda Q, K, V, mask=None: (sdpa(Q, K, V)[0] + 0.01 * K[0, 0], sdpa(Q, K, V)[1])), None),
    "bahdanau_scores.property-key-order": ("bahdanau_scores", _when(
        lambda S, H, *w: H.shape == (6, 5), bahdanau, lambda S, H, *w: bahdanau(S, H, *w) + 0.01 * H[0, 0]), None),
    "bahdanau_scores.property-rows": ("bahdanau_scores", _when(
        lambda S, H, *w: S.shape == (4, 2), bahdanau, lambda S, H, *w: bahdanau(S, H, *w) + 0.01 * S.sum()), None),
    "luong_general_scores.property-linear": ("luong_general_scores", _when(
        lambda S, H, W: W.shape == (4, 2), luong, lambda S, H, W: luong(S, H, W) + 0.01), None),
    "luong_general_scores.property-identity": ("luong_general_scores", _when(
        lambda S, H, W: W.shape == (4, 4), luong, lambda S, H, W: luong(S, H, W) + 0.01), None),
    "split_heads.property-round-trip": ("split_heads", _when(
        lambda X, h: X.shape == (2, 5, 12), ae.split_heads, lambda X, h: ae.split_heads(X, h)[..., ::-1, :, :]), None),
    "merge_heads.property-round-trip": ("merge_heads", _when(
        lambda X: X.shape == (2, 3, 5, 4), ae.merge_heads, lambda X: ae.merge_heads(X)[..., ::-1, :]), None),
    "multi_head_attention.property-rows": ("multi_head_attention", _when(
        lambda X_q, X_kv, W_Q, W_K, W_V, *r: X_q.shape == (3, 4) and W_V.shape == (4, 4), mha,
        lambda *a: (mha(*a)[0], 2 * mha(*a)[1])), None),
    "multi_head_attention.property-causal": ("multi_head_attention", _when(
        lambda *a: len(a) == 8 and a[7].shape == (6, 6), mha, lambda *a: mha(*a[:7])), None),
    "multi_head_attention.property-head-order": ("multi_head_attention", _when(
        lambda X_q, *r: X_q.shape == (3, 5), mha, lambda *a: (mha(*a)[0] + 0.01 * a[2][0, 0], mha(*a)[1])), None),
    "attention_backward.property-finite-differences": ("attention_backward", _when(
        lambda Q, K, *r: Q.shape == (3, 3) and K.shape == (4, 3), backward,
        lambda *a: (1.1 * backward(*a)[0],) + tuple(backward(*a)[1:])), None),
    "attention_backward.property-key-shift": ("attention_backward", _when(
        lambda Q, K, *r: Q.shape == (4, 3) and K.shape == (5, 3), backward,
        lambda *a: (backward(*a)[0], backward(*a)[1] + 0.01, backward(*a)[2])), None),
    "attention_backward.property-masked-keys": ("attention_backward", _when(
        lambda Q, K, V, d_output, mask=None: mask is not None and np.shape(mask) == (3, 5), backward,
        lambda *a: backward(*a)[:2] + (backward(*a)[2] + 1e-3,)), None),
    "attention_entropy.property-extremes": ("attention_entropy", _when(
        lambda w: w.shape == (2, 6), C.attention_entropy, lambda w: C.attention_entropy(w) + 0.1), None),
    "attention_entropy.property-key-order": ("attention_entropy", _when(
        lambda w: w.shape == (3, 7), C.attention_entropy, lambda w: C.attention_entropy(w) + 0.01 * w[:, 0]), None),
}


@pytest.mark.parametrize("hint_id", sorted(TRIGGERS))
def test_trigger_reaches_its_hint(hint_id):
    if hint_id == "error.where-without-out" and not _where_warns():
        pytest.skip(f"NumPy {np.__version__} does not warn of where= without out=")
    exercise, fn, timeout = TRIGGERS[hint_id]
    start = time.perf_counter()
    result = CHECKERS[exercise](fn, timeout=timeout)
    assert result.hint_id == hint_id, str(result)
    assert not result.passed and result.attempted and result.hint
    assert time.perf_counter() - start < 10


def test_every_hint_id_is_reachable():
    """Mistakes by their mutants (tests/checkers/test_checkers.py), answers by tests/checkers/test_checkers_answers.py,
    everything else by TRIGGERS above."""
    by_mutant = {m.id for m in all_mistakes()}
    by_answer = {h for spec in ANSWERS.values() for h in spec.hint_ids()} | set(GENERIC_HINT_IDS)
    assert set(hint_ids()) == by_mutant | by_answer | set(TRIGGERS)


def test_infinite_loop_reports_the_limit_returns_promptly_and_kills_the_child():
    import multiprocessing

    start = time.perf_counter()
    result = C.check_softmax(_forever, timeout=0.3)
    assert time.perf_counter() - start < 2.0
    assert "stopped after 0.3 s" in str(result) and result.probe == "runs"
    headline = "0 of 14 probes passed (12 did not run: two calls in a row were lost); the first failure: stopped after"
    assert headline in str(result)
    assert not multiprocessing.active_children()


def test_printing_is_reported_but_does_not_fail(capsys):
    def chatty(x):
        print("debug:", x.shape)
        return ae.softmax(x)

    result = C.check_softmax(chatty)
    assert result.passed and result.notes and "printed while it ran" in result.notes[0]
    assert 'first: "debug: (2, 3)"' in result.notes[0]
    assert "debug" not in capsys.readouterr().out


def test_raising_shows_the_students_line():
    def broken(x):
        y = x * 2
        raise ValueError("no luck")

    result = C.check_softmax(broken)      # its own raise, on valid input: its own check (hint study 40's 21)
    assert result.hint_id == "error.assertion" and result.probe == "runs"
    assert "ValueError: no luck" in str(result) and "raise ValueError" in str(result)


def test_nan_is_reported_with_its_position_and_the_numpy_warning():
    def naive(x):
        return np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True)

    text = str(C.check_softmax(naive))
    assert "NaN values where finite values are expected" in text and "value(s)" not in text
    one = str(C.check_softmax(lambda x: np.where(x == x.flat[0], np.nan, naive(x))))     # red team 13B: "1 NaN value(s)"
    assert "weights: 1 NaN value where a finite value is expected, first at index (0, 0)" in one, one
    assert "overflow encountered in exp" in text


def test_wrong_shape_reports_both_shapes():
    result = C.check_scaled_dot_product_attention(lambda Q, K, V, mask=None: (Q, sdpa(Q, K, V)[1]))
    assert result.probe == "returns" and "output has shape (2, 4), expected (2, 5)" in str(result)


def test_a_later_not_implemented_branch_counts_as_attempted():
    def partial(Q, K, V, mask=None):
        if mask is not None:
            raise NotImplementedError("masks later")
        return sdpa(Q, K, V)

    result = C.check_scaled_dot_product_attention(partial)
    assert result.attempted and result.probe == "runs" and "masks later" in str(result)


def test_several_values_is_said_only_where_np_asarray_would_not_mend_it():
    """The hint for (w, w) said np.asarray turns a tuple into an array, which stacks them into (2, m, n). A
    list of the weights' rows, or attention's two outputs in a list, are mended by it or expected: not several."""
    assert CHECKERS["softmax"](lambda x: [ae.softmax(x)] * 3).hint_id == "harness.several"
    assert CHECKERS["softmax"](lambda x: list(ae.softmax(x))).hint_id == "harness.wrong-type"
    assert CHECKERS["scaled_dot_product_attention"](lambda *a: list(sdpa(*a))).passed
