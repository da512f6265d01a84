"""The cost model against counted operations, the chapter's figures and measured memory.

FLOPs: plain-Python versions of naive attention and of the online softmax,
written here, count every add, multiply, compare, exp and divide as they
compute; the model must predict each count exactly (and the loops must really
compute attention). Peak bytes: tracemalloc measures the NumPy allocations of
a real call, which the model must predict.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

import attention_edu as ae
from attention_edu import costs
from attention_edu.bench.timing import numpy_peak_bytes
from attention_edu.blockwise.fast import default_plan
from attention_edu.blockwise.fast_backward import default_backward_plan
from attention_edu.blockwise.memory_model import blockwise_backward_cost, blockwise_cost, naive_cost


class Tally:
    """Arithmetic on Python floats that counts each operation under the current step name."""

    def __init__(self):
        self.counts = Counter()
        self.step = ""

    def add(self, a, b):
        self.counts[self.step] += 1
        return a + b

    def mul(self, a, b):
        self.counts[self.step] += 1
        return a * b

    def sub(self, a, b):
        self.counts[self.step] += 1
        return a - b

    def div(self, a, b):
        self.counts[self.step] += 1
        return a / b

    def max(self, a, b):
        self.counts[self.step] += 1
        return a if a >= b else b

    def exp(self, a):
        self.counts[self.step] += 1
        return math.exp(a)

    def dot(self, u, v):  # starts from 0 and adds every product: 2 FLOPs per term, as BLAS counts
        total = 0.0
        for a, b in zip(u, v):
            total = self.add(total, self.mul(a, b))
        return total


def counted_naive(Q, K, V):
    t = Tally()
    m, n, d_v = len(Q), len(K), len(V[0])
    out = []
    for i in range(m):
        t.step = "scores"
        s = [t.dot(Q[i], K[j]) for j in range(n)]
        t.step = "scale"
        s = [t.div(x, math.sqrt(len(Q[i]))) for x in s]
        t.step = "max"
        top = -math.inf
        for x in s:
            top = t.max(top, x)
        t.step = "subtract"
        s = [t.sub(x, top) for x in s]
        t.step = "exp"
        p = [t.exp(x) for x in s]
        t.step = "sum"
        total = 0.0
        for x in p:
            total = t.add(total, x)
        t.step = "divide"
        w = [t.div(x, total) for x in p]
        t.step = "weighted_sum"
        out.append([t.dot(w, [V[j][c] for j in range(n)]) for c in range(d_v)])
    return np.array(out), t.counts


def counted_online(Q, K, V, block_q, block_k, causal):
    t = Tally()
    m, n, d_v = len(Q), len(K), len(V[0])
    out = np.zeros((m, d_v))
    for i in range(m):
        i1 = min((i // block_q + 1) * block_q, m)  # end of this row's query block
        stop = max(0, min(n, i1 + n - m)) if causal else n  # tiles wholly in the future are skipped
        t.step = "scale_q"
        q = [t.div(x, math.sqrt(len(Q[i]))) for x in Q[i]]
        M, ell, A = -math.inf, 0.0, [0.0] * d_v
        for j0 in range(0, stop, block_k):
            keys = range(j0, min(j0 + block_k, n))
            t.step = "scores"
            s = [t.dot(q, K[j]) if not causal or j <= i + n - m else -math.inf for j in keys]
            for j in keys:  # a hidden score costs its product all the same
                if causal and j > i + n - m:
                    t.dot(q, K[j])
            t.step = "block_max"
            top = -math.inf
            for x in s:
                top = t.max(top, x)
            t.step = "rescale"
            new = t.max(M, top)
            shift = new if new > -math.inf else 0.0
            r = t.exp(t.sub(M, shift))
            t.step = "subtract"
            s = [t.sub(x, shift) for x in s]
            t.step = "exp"
            p = [t.exp(x) for x in s]
            t.step = "sum"
            block_sum = 0.0
            for x in p:
                block_sum = t.add(block_sum, x)
            t.step = "rescale"
            ell = t.add(t.mul(ell, r), block_sum)
            A = [t.mul(a, r) for a in A]
            t.step = "weighted_sum"
            part = [t.dot(p, [V[j][c] for j in keys]) for c in range(d_v)]
            t.step = "rescale"
            A = [t.add(a, b) for a, b in zip(A, part)]
            M = new
        t.step = "divide"
        out[i] = [t.div(a, ell) if ell > 0 else 0.0 for a in A]
    return out, t.counts


@pytest.fixture
def small(rng):
    m, n, d_k, d_v = 5, 7, 3, 2
    return tuple(rng.standard_normal(shape) for shape in [(m, d_k), (n, d_k), (n, d_v)])


def test_naive_flops_equal_counted_operations(small):
    Q, K, V = small
    out, counts = counted_naive(Q.tolist(), K.tolist(), V.tolist())
    np.testing.assert_allclose(out, ae.scaled_dot_product_attention(Q, K, V)[0], rtol=1e-12)
    cost = naive_cost(5, 7, 3, 2)
    assert cost.flops == dict(counts)
    # the same total as the chapter's 2mn(d_k + d_v) + 6mn
    assert cost.total_flops == costs.scaled_dot_product_flops(5, 7, 3, 2, softmax=True)


@pytest.mark.parametrize("block_q, block_k", [(5, 7), (2, 3), (1, 1), (4, 5), (3, 100)])
@pytest.mark.parametrize("causal", [False, True])
def test_blockwise_flops_equal_counted_operations(small, block_q, block_k, causal):
    Q, K, V = small
    out, counts = counted_online(Q.tolist(), K.tolist(), V.tolist(), block_q, block_k, causal)
    mask = ae.causal_mask(5, 7) if causal else None
    np.testing.assert_allclose(out, ae.scaled_dot_product_attention(Q, K, V, mask)[0], rtol=1e-12)
    cost = blockwise_cost(5, 7, 3, 2, block=(block_q, block_k), causal=causal)
    assert cost.flops == {k: counts[k] for k in cost.flops}
    assert sum(counts.values()) == cost.total_flops


def test_chapter_figures():
    """'Computational Efficiency': 67,108,864 FLOPs for the two products at m = n = 512, d = 64."""
    naive = naive_cost(512, 512, 64, 64)
    assert naive.flops["scores"] + naive.flops["weighted_sum"] == 67_108_864
    blockwise = blockwise_cost(512, 512, 64, 64, block=(128, 128))
    assert blockwise.flops["scores"] + blockwise.flops["weighted_sum"] == 67_108_864
    # the chapter's attention matrix for batch 32, 12 heads, n = 512, FP32 (~402 MB) is one
    # of the four m × n matrices alive at the naive peak
    bert = naive_cost(512, 512, 64, 64, batch=32 * 12)
    assert bert.peak_bytes == 4 * costs.attention_matrix_bytes(32, 12, 512, 512)


def test_causal_blockwise_skips_about_half_the_work():
    full = blockwise_cost(4096, 4096, 64, 64, block=(128, 128))
    causal = blockwise_cost(4096, 4096, 64, 64, block=(128, 128), causal=True)
    assert 0.5 < causal.flops["scores"] / full.flops["scores"] < 0.52


def test_bytes_moved_grow_quadratically_for_naive_only():
    naive = [naive_cost(n, n, 64, 64).bytes_moved for n in (8192, 16384)]
    block = [blockwise_cost(n, n, 64, 64, block=(512, 512)).bytes_moved for n in (8192, 16384)]
    assert naive[1] / naive[0] == pytest.approx(4, rel=0.01)  # m × n arrays, pass after pass
    assert 3.5 < block[1] / block[0] < 4  # K and V once per query block: (n / block_q) · n, plus O(n)
    assert naive[1] / block[1] > 30  # but far less of it


def measured_peak(call) -> int:
    call()  # warm up: first calls allocate caches that later calls reuse
    return numpy_peak_bytes(call)


@pytest.mark.parametrize("masked", [False, True])
def test_naive_peak_bytes_measured(rng, masked):
    m, n, d = 512, 768, 32
    Q, K, V = (rng.standard_normal(shape, dtype=np.float32) for shape in [(m, d), (n, d), (n, d)])
    mask = rng.random((m, n)) < 0.5 if masked else None
    peak = measured_peak(lambda: ae.scaled_dot_product_attention(Q, K, V, mask))
    assert peak == pytest.approx(naive_cost(m, n, d, d, mask=masked).peak_bytes, rel=0.05)


@pytest.mark.parametrize("n, causal", [(2048, False), (8192, False), (8192, True)])
def test_blockwise_peak_bytes_measured(rng, n, causal):
    d = 64
    Q, K, V = (rng.standard_normal((n, d), dtype=np.float32) for _ in range(3))
    peak = measured_peak(lambda: ae.blockwise_attention(Q, K, V, causal=causal))
    workers, tile = default_plan(1, n, n)
    predicted = blockwise_cost(n, n, d, d, block=tile, causal=causal,
                               workers=workers).peak_bytes
    assert peak == pytest.approx(predicted, rel=0.15)
    assert peak < naive_cost(n, n, d, d).peak_bytes / 20


@pytest.mark.parametrize("n, causal, masked", [(2048, False, False), (4096, True, False), (3000, False, True)])
def test_blockwise_backward_peak_bytes_measured(rng, n, causal, masked):
    d = 64
    Q, K, V, d_output = (rng.standard_normal((n, d), dtype=np.float32) for _ in range(4))
    mask = rng.random((n, n)) < 0.9 if masked else None
    output, lse = ae.blockwise_attention(Q, K, V, mask, causal=causal, return_lse=True)
    peak = measured_peak(lambda: ae.blockwise_attention_backward(Q, K, V, output, lse, d_output, mask,
                                                                 causal=causal))
    workers, tile = default_backward_plan(1, n, n)
    predicted = blockwise_backward_cost(n, n, d, d, block=tile, causal=causal, mask=masked,
                                        workers=workers).peak_bytes
    assert peak == pytest.approx(predicted, rel=0.15)
    assert peak < naive_cost(n, n, d, d).peak_bytes / 10


@pytest.mark.parametrize("m, n, block", [(10, 10, (3, 4)), (7, 13, (2, 5)), (13, 7, (4, 2))])
def test_blockwise_backward_counts_only_tiles_with_a_visible_pair(m, n, block):
    """Causal pairs computed: whole tiles that hold at least one visible pair, counted from the mask itself."""
    visible = ae.causal_mask(m, n)
    expected = sum(min(block[0], m - i0) * min(block[1], n - j0)
                   for i0 in range(0, m, block[0]) for j0 in range(0, n, block[1])
                   if visible[i0:i0 + block[0], j0:j0 + block[1]].any())
    cost = blockwise_backward_cost(m, n, 3, 2, block=block, causal=True)
    assert cost.flops["exp"] == expected
    full = blockwise_backward_cost(m, n, 3, 2, block=block)
    assert full.flops["exp"] == m * n and cost.flops["d_keys"] == 2 * 3 * expected
