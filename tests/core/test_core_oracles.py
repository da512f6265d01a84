"""Every mechanism against an independent reference written here, one pair at a time.

The references use plain Python loops over queries and keys with Python/NumPy
scalars and ``math.exp``/``math.tanh``: no matrix products and nothing from the
library (not even its teaching loops, which are tested against the vectorized
functions at the end of this file). Sizes are random with m, n, d_k, d_v all
different, unbatched, 3-D and 4-D (with broadcast batch axes), with and
without masks, compared to 1e-12 in float64.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import attention_edu as ae

TOL = 1e-12


# ---------------------------------------------------------------------------
# references, one (query, key) pair at a time
# ---------------------------------------------------------------------------
def ref_weigh(scores, values, allowed):
    """softmax over the allowed keys of each row, then the weighted sum of value rows."""
    m, n = len(scores), len(scores[0])
    d_v = values.shape[1]
    weights = np.zeros((m, n))
    output = np.zeros((m, d_v))
    for i in range(m):
        keys = [j for j in range(n) if allowed[i][j]]
        if not keys:  # a fully masked query attends to nothing
            continue
        top = max(scores[i][j] for j in keys)
        exps = {j: math.exp(scores[i][j] - top) for j in keys}
        total = sum(exps.values())
        for j in keys:
            weights[i, j] = exps[j] / total
        for c in range(d_v):
            output[i, c] = sum(weights[i, j] * float(values[j, c]) for j in keys)
    return output, weights


def dot(a, b):
    return sum(float(x) * float(y) for x, y in zip(a, b))


def ref_dot_attention(Q, K, V, allowed, scale):
    scores = [[dot(Q[i], K[j]) / scale for j in range(K.shape[0])] for i in range(Q.shape[0])]
    return ref_weigh(scores, V, allowed)


def ref_sdpa(Q, K, V, allowed):
    return ref_dot_attention(Q, K, V, allowed, math.sqrt(Q.shape[1]))


def ref_dpa(Q, K, V, allowed):
    return ref_dot_attention(Q, K, V, allowed, 1.0)


def matvec(W, x):
    """W x for W (rows, cols), by loops."""
    return [dot(W[a], x) for a in range(W.shape[0])]


def ref_additive_scores(S, H, W1, W2, v):
    scores = []
    for t in range(S.shape[0]):
        w1s = matvec(W1, S[t])
        row = []
        for i in range(H.shape[0]):
            w2h = matvec(W2, H[i])
            row.append(sum(float(v[a]) * math.tanh(w1s[a] + w2h[a]) for a in range(len(v))))
        scores.append(row)
    return scores


def ref_bahdanau(S, H, W1, W2, v, allowed):
    return ref_weigh(ref_additive_scores(S, H, W1, W2, v), H, allowed)


def ref_luong(S, H, score, W, v, allowed):
    m, n = S.shape[0], H.shape[0]
    if score == "dot":
        scores = [[dot(S[t], H[i]) for i in range(n)] for t in range(m)]
    elif score == "general":  # s_t^T W h_i
        scores = [[sum(float(S[t, a]) * float(W[a, b]) * float(H[i, b])
                       for a in range(W.shape[0]) for b in range(W.shape[1]))
                   for i in range(n)] for t in range(m)]
    else:  # v^T tanh(W [s_t; h_i])
        scores = [[sum(float(v[a]) * math.tanh(dot(W[a], np.concatenate([S[t], H[i]])))
                       for a in range(W.shape[0]))
                   for i in range(n)] for t in range(m)]
    return ref_weigh(scores, H, allowed)


def project(X, W, columns):
    """Rows of X times the given columns of W, by loops: out[i, c] = Σ_a X[i, a] W[a, col_c]."""
    return np.array([[dot(X[i], W[:, c]) for c in columns] for i in range(X.shape[0])])


def ref_projected(X_q, X_kv, W_Q, W_K, W_V, allowed):
    Q = project(X_q, W_Q, range(W_Q.shape[1]))
    K = project(X_kv, W_K, range(W_K.shape[1]))
    V = project(X_kv, W_V, range(W_V.shape[1]))
    return ref_sdpa(Q, K, V, allowed)


def ref_mha(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, allowed):
    d_k, d_v = W_Q.shape[1] // num_heads, W_V.shape[1] // num_heads
    heads, weights = [], []
    for h in range(num_heads):
        Q = project(X_q, W_Q, range(h * d_k, (h + 1) * d_k))
        K = project(X_kv, W_K, range(h * d_k, (h + 1) * d_k))
        V = project(X_kv, W_V, range(h * d_v, (h + 1) * d_v))
        out, w = ref_sdpa(Q, K, V, allowed)
        heads.append(out)
        weights.append(w)
    m = X_q.shape[0]
    concat = [[heads[h][i, c] for h in range(num_heads) for c in range(d_v)] for i in range(m)]
    output = np.array([[dot(concat[i], W_O[:, e]) for e in range(W_O.shape[1])] for i in range(m)])
    return output, np.array(weights)


def ref_split_heads(X, num_heads):
    L, width = X.shape
    d = width // num_heads
    out = np.zeros((num_heads, L, d))
    for h in range(num_heads):
        for i in range(L):
            for c in range(d):
                out[h, i, c] = X[i, h * d + c]
    return out


# ---------------------------------------------------------------------------
# batching: run a 2-D reference on every batch slice
# ---------------------------------------------------------------------------
def batched(reference, batched_args, shared_args, mask, m, n):
    """Apply ``reference(*slices, *shared_args, allowed)`` over the broadcast batch axes.

    ``batched_args`` are arrays (..., rows, cols); the mask (..., m, n) or None.
    Returns stacked outputs and weights with the batch axes in front.
    """
    leads = [a.shape[:-2] for a in batched_args] + ([mask.shape[:-2]] if mask is not None else [])
    batch = np.broadcast_shapes(*leads)
    full_mask = np.ones(batch + (m, n), bool) if mask is None else np.broadcast_to(mask, batch + (m, n))
    outputs, weights = {}, {}
    for index in np.ndindex(*batch):
        slices = [np.broadcast_to(a, batch + a.shape[-2:])[index] for a in batched_args]
        outputs[index], weights[index] = reference(*slices, *shared_args, full_mask[index].tolist())
    stack = lambda parts: np.array([parts[i] for i in np.ndindex(*batch)]).reshape(
        batch + parts[next(iter(parts))].shape)
    return stack(outputs), stack(weights)


# ---------------------------------------------------------------------------
# random problems
# ---------------------------------------------------------------------------
LAYOUTS = {
    "unbatched": ((), ()),
    "3d": ((3,), (3,)),
    "3d-shared-keys": ((2,), ()),
    "4d": ((2, 3), (2, 3)),
    "4d-broadcast": ((2, 3), (2, 1)),
}
MASKS = ["none", "random", "causal", "padding"]


def sizes(rng):
    """m, n, d_k, d_v: four different sizes (so a swapped axis cannot pass)."""
    m, n, d_k, d_v = (int(s) for s in rng.choice(np.arange(2, 8), size=4, replace=False))
    return m, n, d_k, d_v


def make_mask(kind, rng, q_batch, m, n):
    if kind == "none":
        return None
    if kind == "random":  # includes fully masked rows now and then
        return rng.random(q_batch + (m, n)) < 0.6
    if kind == "causal":
        return ae.causal_mask(m, n)
    lengths = rng.integers(1, n + 1, size=int(np.prod(q_batch)))  # one length per sequence
    return ae.padding_mask(lengths, n).reshape(q_batch + (1, n))  # (..., 1, n)


CASES = [(layout, kind, seed) for layout in LAYOUTS for kind in MASKS for seed in (0, 1)]


def _case(layout, kind, seed):
    rng = np.random.default_rng([seed, list(LAYOUTS).index(layout), MASKS.index(kind)])
    q_batch, kv_batch = LAYOUTS[layout]
    m, n, d_k, d_v = sizes(rng)
    return rng, q_batch, kv_batch, (m, n, d_k, d_v), make_mask(kind, rng, q_batch, m, n)


def check(ours, reference):
    (out, w), (ref_out, ref_w) = ours, reference
    assert out.shape == ref_out.shape and w.shape == ref_w.shape
    np.testing.assert_allclose(w, ref_w, rtol=0, atol=TOL)
    np.testing.assert_allclose(out, ref_out, rtol=0, atol=TOL)


@pytest.mark.parametrize("layout, kind, seed", CASES)
@pytest.mark.parametrize("scaled", [True, False], ids=["scaled", "unscaled"])
def test_dot_product_attention_matches_reference(layout, kind, seed, scaled):
    rng, q_batch, kv_batch, (m, n, d_k, d_v), mask = _case(layout, kind, seed)
    Q = rng.normal(size=q_batch + (m, d_k))
    K = rng.normal(size=kv_batch + (n, d_k))
    V = rng.normal(size=kv_batch + (n, d_v))
    fn, ref = (ae.scaled_dot_product_attention, ref_sdpa) if scaled else (ae.dot_product_attention, ref_dpa)
    check(fn(Q, K, V, mask), batched(ref, [Q, K, V], [], mask, m, n))


@pytest.mark.parametrize("layout, kind, seed", CASES)
def test_bahdanau_attention_matches_reference(layout, kind, seed):
    rng, q_batch, kv_batch, (m, n, d_s, d_h), mask = _case(layout, kind, seed)
    d_a = 8  # differs from all of m, n, d_s, d_h (2..7)
    S = rng.normal(size=q_batch + (m, d_s))
    H = rng.normal(size=kv_batch + (n, d_h))
    W1, W2, v = rng.normal(size=(d_a, d_s)), rng.normal(size=(d_a, d_h)), rng.normal(size=d_a)
    check(ae.bahdanau_attention(S, H, W1, W2, v, mask), batched(ref_bahdanau, [S, H], [W1, W2, v], mask, m, n))


@pytest.mark.parametrize("layout, kind, seed", CASES)
@pytest.mark.parametrize("score", ["dot", "general", "concat"])
def test_luong_attention_matches_reference(layout, kind, seed, score):
    rng, q_batch, kv_batch, (m, n, d_s, d_h), mask = _case(layout, kind, seed)
    d_h = d_s if score == "dot" else d_h
    S = rng.normal(size=q_batch + (m, d_s))
    H = rng.normal(size=kv_batch + (n, d_h))
    W = {"dot": None, "general": rng.normal(size=(d_s, d_h)), "concat": rng.normal(size=(8, d_s + d_h))}[score]
    v = rng.normal(size=8) if score == "concat" else None
    ours = ae.luong_attention(S, H, score, W=W, v=v, mask=mask)
    check(ours, batched(ref_luong, [S, H], [score, W, v], mask, m, n))


@pytest.mark.parametrize("layout, kind, seed", CASES)
def test_cross_attention_matches_reference(layout, kind, seed):
    rng, q_batch, kv_batch, (m, n, d_k, d_v), mask = _case(layout, kind, seed)
    d_model = 8
    X_q = rng.normal(size=q_batch + (m, d_model))
    X_kv = rng.normal(size=kv_batch + (n, d_model))
    W_Q, W_K, W_V = (rng.normal(size=(d_model, d)) for d in (d_k, d_k, d_v))
    ref = lambda xq, xkv, *rest: ref_projected(xq, xkv, *rest)
    check(ae.cross_attention(X_q, X_kv, W_Q, W_K, W_V, mask),
          batched(ref, [X_q, X_kv], [W_Q, W_K, W_V], mask, m, n))


@pytest.mark.parametrize("layout, kind, seed", CASES)
def test_self_attention_matches_reference(layout, kind, seed):
    rng, q_batch, _, (n, _m, d_k, d_v), _ = _case(layout, kind, seed)
    mask = make_mask(kind, rng, q_batch, n, n)
    d_model = 8
    X = rng.normal(size=q_batch + (n, d_model))
    W_Q, W_K, W_V = (rng.normal(size=(d_model, d)) for d in (d_k, d_k, d_v))
    ref = lambda x, *rest: ref_projected(x, x, *rest)
    check(ae.self_attention(X, W_Q, W_K, W_V, mask), batched(ref, [X], [W_Q, W_K, W_V], mask, n, n))


@pytest.mark.parametrize("layout, kind, seed", CASES)
@pytest.mark.parametrize("num_heads", [1, 2, 3])
def test_multi_head_attention_matches_reference(layout, kind, seed, num_heads):
    rng, q_batch, kv_batch, (m, n, d_k, d_v), mask = _case(layout, kind, seed)
    d_model = 8
    X_q = rng.normal(size=q_batch + (m, d_model))
    X_kv = rng.normal(size=kv_batch + (n, d_model))
    W_Q = rng.normal(size=(d_model, num_heads * d_k))
    W_K = rng.normal(size=(d_model, num_heads * d_k))
    W_V = rng.normal(size=(d_model, num_heads * d_v))
    W_O = rng.normal(size=(num_heads * d_v, d_model))
    out, w = ae.multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask)
    ref_out, ref_w = batched(ref_mha, [X_q, X_kv], [W_Q, W_K, W_V, W_O, num_heads], mask, m, n)
    assert w.shape == ref_out.shape[:-2] + (num_heads, m, n)
    check((out, w), (ref_out, ref_w))


@pytest.mark.parametrize("batch", [(), (2,), (2, 3)], ids=["unbatched", "3d", "4d"])
@pytest.mark.parametrize("num_heads, d", [(1, 4), (2, 3), (3, 2), (4, 1)])
def test_split_and_merge_heads_match_reference(batch, num_heads, d):
    rng = np.random.default_rng(num_heads)
    L = 5
    X = rng.normal(size=batch + (L, num_heads * d))
    split = ae.split_heads(X, num_heads)
    expected = np.array([ref_split_heads(X[i], num_heads) for i in np.ndindex(*batch)])
    np.testing.assert_array_equal(split, expected.reshape(batch + (num_heads, L, d)))
    np.testing.assert_array_equal(ae.merge_heads(split), X)


# ---------------------------------------------------------------------------
# the library's teaching loops against its vectorized functions
# ---------------------------------------------------------------------------
LOOP_MASKS = ["none", "full", "row", "keys", "causal"]


def loop_mask(kind, rng, m, n):
    if kind == "none":
        return None
    if kind == "full":
        return rng.random((m, n)) < 0.6
    if kind == "row":  # (1, n): one padding row shared by every query
        return rng.random((1, n)) < 0.7
    if kind == "keys":  # (n,): the same, as NumPy broadcasts it
        return rng.random(n) < 0.7
    return ae.causal_mask(m, n)


@pytest.mark.parametrize("kind", LOOP_MASKS)
@pytest.mark.parametrize("scaled", [True, False])
@pytest.mark.parametrize("seed", range(3))
def test_attention_loop_equals_vectorized(kind, scaled, seed):
    rng = np.random.default_rng(seed)
    m, n, d_k, d_v = sizes(rng)
    Q, K, V = rng.normal(size=(m, d_k)), rng.normal(size=(n, d_k)), rng.normal(size=(n, d_v))
    mask = loop_mask(kind, rng, m, n)
    vectorized = ae.scaled_dot_product_attention if scaled else ae.dot_product_attention
    check(ae.attention_loop(Q, K, V, mask, scaled=scaled), vectorized(Q, K, V, mask))


@pytest.mark.parametrize("kind", LOOP_MASKS)
@pytest.mark.parametrize("seed", range(3))
def test_bahdanau_attention_loop_equals_vectorized(kind, seed):
    rng = np.random.default_rng(seed)
    m, n, d_s, d_h = sizes(rng)
    S, H = rng.normal(size=(m, d_s)), rng.normal(size=(n, d_h))
    W1, W2, v = rng.normal(size=(4, d_s)), rng.normal(size=(4, d_h)), rng.normal(size=4)
    mask = loop_mask(kind, rng, m, n)
    check(ae.bahdanau_attention_loop(S, H, W1, W2, v, mask), ae.bahdanau_attention(S, H, W1, W2, v, mask))


def test_references_are_not_vacuous():
    """The references must disagree with a plausible bug: forgetting the √d_k scale."""
    rng = np.random.default_rng(5)
    Q, K, V = rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
    allowed = np.ones((3, 5), bool).tolist()
    _, w_scaled = ref_sdpa(Q, K, V, allowed)
    _, w_plain = ref_dpa(Q, K, V, allowed)
    assert not np.allclose(w_scaled, w_plain)
    assert not np.allclose(ae.scaled_dot_product_attention(Q, K, V)[1], w_plain)
