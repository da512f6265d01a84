"""Blockwise attention (portable and fast paths) against naive scaled dot-product attention.

The oracle is ``ae.scaled_dot_product_attention``, which forms the full m × n
matrix; blockwise must agree to 1e-12 in float64 and 1e-5 (relative) in
float32 for sizes the blocks do not divide, batches, masks, causal and fully
masked rows, on NumPy (both paths) and on array_api_strict devices.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import attention_edu as ae
from attention_edu.backend import to_numpy
from attention_edu.blockwise import blockwise_attention_steps

METHODS = ["portable", "fast"]
TOL = {"float64": dict(rtol=1e-12, atol=1e-12), "float32": dict(rtol=1e-5, atol=1e-6)}


def qkv(rng, batch, m, n, d_k, d_v, dtype="float64", scale=1.0):
    Q = (scale * rng.standard_normal(batch + (m, d_k))).astype(dtype)
    K = (scale * rng.standard_normal(batch + (n, d_k))).astype(dtype)
    V = rng.standard_normal(batch + (n, d_v)).astype(dtype)
    return Q, K, V


def reference(Q, K, V, mask=None, causal=False):
    """Naive output and log-sum-exp, computed with the m × n matrices in float64."""
    m, n = Q.shape[-2], K.shape[-2]
    if causal:
        mask = ae.causal_mask(m, n) if mask is None else np.logical_and(mask, ae.causal_mask(m, n))
    Q64, K64, V64 = (x.astype(np.float64) for x in (Q, K, V))
    out = ae.scaled_dot_product_attention(Q64, K64, V64, mask)[0]
    scores = Q64 @ np.swapaxes(K64, -1, -2) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    top = np.max(scores, axis=-1, keepdims=True)
    safe = np.where(np.isfinite(top), top, 0.0)
    total = np.sum(np.exp(scores - safe), axis=-1)
    with np.errstate(divide="ignore"):
        lse = np.where(total > 0, safe[..., 0] + np.log(np.where(total > 0, total, 1.0)), -np.inf)
    return out, lse


def check(out, lse, ref_out, ref_lse, dtype):
    assert out.dtype == np.dtype(dtype) and lse.dtype == np.dtype(dtype)
    assert out.shape == ref_out.shape and lse.shape == ref_lse.shape
    np.testing.assert_allclose(out, ref_out, **TOL[dtype])
    np.testing.assert_allclose(lse, ref_lse, **TOL[dtype])


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("batch, m, n, block", [
    ((), 7, 11, 3),             # blocks divide neither m nor n, m ≠ n
    ((), 5, 1, 4),              # one key
    ((), 1, 9, (1, 2)),         # one query
    ((), 13, 13, (4, 5)),       # different query and key blocks
    ((2, 3), 6, 10, (4, 3)),    # batched 4-D (B, H, m, d)
    ((), 9, 8, None),           # default blocks (a single tile)
    ((3,), 40, 70, (16, 32)),   # several tiles both ways
])
def test_equals_naive(rng, method, dtype, batch, m, n, block):
    Q, K, V = qkv(rng, batch, m, n, 4, 3, dtype)
    out, lse = ae.blockwise_attention(Q, K, V, block_size=block, return_lse=True, method=method)
    check(out, lse, *reference(Q, K, V), dtype)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("m, n", [(9, 9), (5, 12), (12, 5)])
def test_causal_flag_equals_causal_mask(rng, method, dtype, m, n):
    """causal=True hides the same pairs as causal_mask(m, n), including n < m (first rows see nothing)."""
    Q, K, V = qkv(rng, (2,), m, n, 3, 2, dtype)
    out, lse = ae.blockwise_attention(Q, K, V, block_size=(2, 3), causal=True, return_lse=True,
                                      method=method)
    check(out, lse, *reference(Q, K, V, causal=True), dtype)
    via_mask = ae.blockwise_attention(Q, K, V, ae.causal_mask(m, n), block_size=(2, 3), method=method)
    np.testing.assert_allclose(via_mask, out, **TOL[dtype])
    if n < m:  # query i sees keys j ≤ i + n − m: rows 0 .. m − n − 1 see none
        assert np.all(out[:, : m - n] == 0) and np.all(lse[:, : m - n] == -np.inf)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_padding_and_combined_masks(rng, method, dtype):
    """A padding mask (B, 1, 1, n) broadcast over heads and queries, alone and with causal."""
    B, H, m, n = 3, 2, 10, 10
    Q, K, V = qkv(rng, (B, H), m, n, 5, 4, dtype)
    lengths = np.array([10, 4, 0])  # the last sequence is all padding: every row fully masked
    mask = ae.padding_mask(lengths, n)[:, None]  # (B, 1, 1, n)
    for causal in (False, True):
        out, lse = ae.blockwise_attention(Q, K, V, mask, block_size=(3, 4), causal=causal,
                                          return_lse=True, method=method)
        check(out, lse, *reference(Q, K, V, mask, causal), dtype)
        assert np.all(out[2] == 0) and np.all(np.isneginf(lse[2]))


@pytest.mark.parametrize("method", METHODS)
def test_mask_with_extra_batch_axes_widens_output(rng, method):
    Q, K, V = qkv(rng, (), 4, 6, 3, 2)
    mask = rng.random((2, 4, 6)) < 0.6
    out = ae.blockwise_attention(Q, K, V, mask, block_size=2, method=method)
    assert out.shape == (2, 4, 2)
    np.testing.assert_allclose(out, reference(Q, K, V, mask)[0], **TOL["float64"])


@pytest.mark.parametrize("library", ["numpy", "torch", "array_api_strict"])
@pytest.mark.parametrize("method", METHODS)
def test_a_key_mask_and_a_0d_mask_act_as_numpy_broadcasts_them(rng, library, method):
    """A mask (n,) is (1, n) and a 0-d mask (1, 1), on every path: the portable one read mask.shape[-2]."""
    if library != "numpy" and method == "fast":
        pytest.skip("the fast path takes NumPy arrays only")
    xp = np if library == "numpy" else pytest.importorskip(library)
    host = qkv(rng, (2,), 3, 5, 4, 6)
    keys = np.array([True, False, True, True, False])
    Q, K, V = (xp.asarray(x) for x in host)
    for short in (keys, np.array(False), np.array(True)):
        full = np.broadcast_to(short, (3, 5))
        out, lse = ae.blockwise_attention(Q, K, V, xp.asarray(short), block_size=2, method=method, return_lse=True)
        want_out, want_lse = reference(*host, full)
        np.testing.assert_allclose(to_numpy(out), want_out, **TOL["float64"])
        np.testing.assert_allclose(to_numpy(lse), want_lse, **TOL["float64"])
        d_out = xp.asarray(np.ones((2, 3, 6)))
        grads = ae.blockwise_attention_backward(Q, K, V, out, lse, d_out, xp.asarray(short), block_size=2,
                                                method=method)
        wanted = ae.blockwise_attention_backward(*host, to_numpy(out), to_numpy(lse), np.ones((2, 3, 6)),
                                                 np.array(full), block_size=2, method="portable")
        for name in "QKV":
            np.testing.assert_allclose(to_numpy(grads[name]), wanted[name], **TOL["float64"])
        steps = blockwise_attention_steps(*host, short, block_size=2)
        np.testing.assert_allclose(steps["output"], want_out, **TOL["float64"])
    assert keys.shape == (5,)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_large_scores_need_the_running_max(rng, method, dtype):
    """Scores in the hundreds overflow exp without a shift; the result must still be exact."""
    Q, K, V = qkv(rng, (2,), 8, 12, 4, 3, dtype, scale=30.0)
    Q[0] *= 0.01  # batch entry 0 takes the fast path's no-shift branch, entry 1 the running max
    mask = rng.random((2, 8, 12)) < 0.6
    mask[:, 0] = False  # and a fully masked row in each
    out, lse = ae.blockwise_attention(Q, K, V, mask, block_size=(3, 5), return_lse=True, method=method)
    ref_out, ref_lse = reference(Q, K, V, mask)
    assert np.max(np.abs(ref_lse[1])) > 100  # really beyond exp's range in float32
    check(out, lse, ref_out, ref_lse, dtype)
    assert np.all(out[:, 0] == 0)


@pytest.mark.parametrize("method", METHODS)
def test_inputs_are_not_modified(rng, method):
    Q, K, V = qkv(rng, (2,), 5, 7, 3, 2, "float32")
    mask = rng.random((5, 7)) < 0.5
    copies = [x.copy() for x in (Q, K, V, mask)]
    ae.blockwise_attention(Q, K, V, mask, block_size=2, causal=True, method=method)
    for before, after in zip(copies, (Q, K, V, mask)):
        np.testing.assert_array_equal(before, after)


@given(m=st.integers(1, 24), n=st.integers(1, 24), d_k=st.integers(1, 6), d_v=st.integers(1, 5),
       block_q=st.integers(1, 30), block_k=st.integers(1, 30), causal=st.booleans(),
       masked=st.booleans(), method=st.sampled_from(METHODS), seed=st.integers(0, 2**16))
def test_hypothesis_sizes_and_blocks(m, n, d_k, d_v, block_q, block_k, causal, masked, method, seed):
    rng = np.random.default_rng(seed)
    Q, K, V = qkv(rng, (2,), m, n, d_k, d_v)
    mask = rng.random((2, m, n)) < 0.7 if masked else None
    out, lse = ae.blockwise_attention(Q, K, V, mask, block_size=(block_q, block_k), causal=causal,
                                      return_lse=True, method=method)
    check(out, lse, *reference(Q, K, V, mask, causal), "float64")


def test_backends_keep_namespace_device_dtype(backend):
    """Every backend of the matrix: same result as the naive mechanism there, nothing leaves the device."""
    rng = np.random.default_rng(3)
    Q, K, V = (backend.normal(shape, rng) for shape in [(2, 7, 3), (2, 10, 3), (2, 10, 4)])
    mask = backend.asarray(rng.random((2, 7, 10)) < 0.7, dtype="bool")
    out, lse = ae.blockwise_attention(Q, K, V, mask, block_size=(3, 4), causal=True, return_lse=True)
    assert type(out) is type(Q) and out.dtype == Q.dtype and lse.dtype == Q.dtype
    assert getattr(out, "device", None) == getattr(Q, "device", None)
    causal = backend.asarray(ae.causal_mask(7, 10), dtype="bool")
    xp = ae.get_xp(Q)
    expected = ae.scaled_dot_product_attention(Q, K, V, xp.logical_and(mask, causal))[0]
    np.testing.assert_allclose(to_numpy(out), to_numpy(expected), **TOL[backend.dtype])


def test_steps_show_the_running_max_and_denominator(rng):
    """Per key block: M is the max of the scaled scores seen so far; ℓ·exp(M) their sum of exp."""
    Q, K, V = qkv(rng, (), 2, 7, 3, 2)
    steps = blockwise_attention_steps(Q, K, V, block_size=3)
    assert steps.names[-2:] == ("output", "lse") and "max_3" in steps and "max_4" not in steps
    scores = Q @ K.T / math.sqrt(3)
    for t, end in enumerate([3, 6, 7], 1):
        seen = scores[:, :end]
        np.testing.assert_allclose(steps[f"max_{t}"][:, 0], seen.max(axis=1), rtol=1e-12)
        np.testing.assert_allclose(steps[f"denominator_{t}"][:, 0] * np.exp(steps[f"max_{t}"][:, 0]),
                                   np.exp(seen).sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(steps.output, reference(Q, K, V)[0], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("call, error, message", [
    (lambda Q, K, V: ae.blockwise_attention(Q, K[:, :2], V),
     ae.ShapeError, "blockwise_attention: K has shape (6, 2) but pattern (..., n, d_k) needs d_k = 3"),
    (lambda Q, K, V: ae.blockwise_attention(Q, K, V[:5]),
     ae.ShapeError, "blockwise_attention: V has shape (5, 2) but pattern (..., n, d_v) needs n = 6"),
    (lambda Q, K, V: ae.blockwise_attention(Q, K, V, np.ones((4, 6))),
     TypeError, "blockwise_attention: mask has dtype float64 but masks are boolean"),
    (lambda Q, K, V: ae.blockwise_attention(Q, K, V, block_size=0),
     ValueError, "blockwise_attention: block_size must be a positive int or a pair"),
    (lambda Q, K, V: ae.blockwise_attention(Q, K, V, block_size=(2, 3, 4)),
     ValueError, "blockwise_attention: block_size must be a positive int or a pair"),
    (lambda Q, K, V: ae.blockwise_attention(Q, K, V, causal="yes"),
     TypeError, "blockwise_attention: causal must be True or False"),
    (lambda Q, K, V: ae.blockwise_attention(Q, K, V, method="flash"),
     ValueError, "blockwise_attention: method must be 'auto', 'portable' or 'fast'"),
])
def test_errors_name_the_function_and_argument(call, error, message):
    Q, K, V = np.zeros((4, 3)), np.zeros((6, 3)), np.zeros((6, 2))
    with pytest.raises(error) as info:
        call(Q, K, V)
    assert str(info.value).startswith(message)


def test_fast_method_refuses_other_backends():
    xp = pytest.importorskip("array_api_strict")
    Q = xp.zeros((2, 3), dtype=xp.float64)
    with pytest.raises(TypeError, match="method='fast' needs NumPy arrays"):
        ae.blockwise_attention(Q, Q, Q, method="fast")


def test_torch_oracle_float32_causal(rng):
    torch = pytest.importorskip("torch")
    Q, K, V = qkv(rng, (2, 4), 33, 33, 16, 8, "float32")
    out = ae.blockwise_attention(Q, K, V, causal=True, block_size=(8, 16))
    theirs = torch.nn.functional.scaled_dot_product_attention(
        *(torch.from_numpy(x) for x in (Q, K, V)), is_causal=True).numpy()
    np.testing.assert_allclose(out, theirs, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("causal", [False, True])
def test_fast_path_with_threads_equals_naive(rng, causal):
    """Several workers sharing the task queue (forced here; large inputs get them by default)."""
    from attention_edu.blockwise.fast import blockwise_attention_fast

    Q, K, V = qkv(rng, (3, 2), 45, 38, 6, 5)
    Q[0] *= 40.0  # batch entry 0 needs the running max, the others do not
    mask = rng.random((3, 1, 45, 38)) < 0.8
    mask[1, :, 7] = False  # a fully masked row
    out, lse = blockwise_attention_fast(Q, K, V, mask, (3, 2), tile=(4, 9), causal=causal, workers=3)
    check(out, lse, *reference(Q, K, V, mask, causal), "float64")


def test_default_plan_uses_threads_for_large_inputs(rng):
    from attention_edu.blockwise.fast import PARALLEL_PAIRS, default_plan, default_workers

    B, m, n = 2, 1100, 1000
    assert B * m * n >= PARALLEL_PAIRS and default_plan(B, m, n)[0] == default_workers()
    Q, K, V = qkv(rng, (B,), m, n, 16, 8, "float32")
    mask = ae.padding_mask(np.array([1000, 613]), n)  # (B, 1, n)
    out = ae.blockwise_attention(Q, K, V, mask, causal=True)
    np.testing.assert_allclose(out, reference(Q, K, V, mask, causal=True)[0], **TOL["float32"])


def _default_tiles(Q):
    from attention_edu.blockwise import attention
    return attention._check("blockwise_attention", Q, Q, Q, None, None, False)[1:3]


def test_arrays_on_the_host_take_the_cache_sized_default_tiles():
    from attention_edu.blockwise import DEFAULT_BLOCK
    assert _default_tiles(np.zeros((8192, 4))) == DEFAULT_BLOCK
    torch = pytest.importorskip("torch")
    assert _default_tiles(torch.zeros((8192, 4))) == DEFAULT_BLOCK


@pytest.mark.gpu
@pytest.mark.skipif(ae.backend.cupy_if_available() is None, reason="needs CuPy and a CUDA device")
def test_arrays_on_a_gpu_take_few_large_tiles_and_agree_with_the_naive_output():
    """On a GPU each step of the loop costs kernel launches: DEFAULT_BLOCK took 10.7-17.5 s at n = 65,536 on
    an H100, ACCELERATOR_BLOCK 0.11-0.14 s (scripts/bench_gpu.py). The tiles change the speed, not the output."""
    from attention_edu.blockwise import ACCELERATOR_BLOCK
    cupy = ae.backend.cupy_if_available()
    Q, K, V = (cupy.asarray(x) for x in qkv(np.random.default_rng(3), (), 9000, 9000, 8, 8, "float32"))
    assert _default_tiles(Q) == ACCELERATOR_BLOCK
    out = ae.blockwise_attention(Q, K, V)
    np.testing.assert_allclose(to_numpy(out), reference(*(to_numpy(x) for x in (Q, K, V)))[0], **TOL["float32"])
