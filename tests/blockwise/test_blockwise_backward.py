"""blockwise_attention_backward against an independent float64 backward, the library's m × n backward,
torch autograd and properties.

The oracle below forms the full m × n weights and pushes dL/dweights through
each row's softmax Jacobian diag(p) − p pᵀ written out as a matrix; the
library instead rebuilds the weights tile by tile from the log-sum-exp and
uses D = rowsum(dO ⊙ O). The two agree to 1e-10 in float64 for block sizes
that divide neither m nor n, batches, causal and boolean masks (broadcast
over batch axes, fully masked rows), on every backend.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import attention_edu as ae
from attention_edu.backend import to_numpy

METHODS = ["portable", "fast"]
TOL = {"float64": dict(rtol=1e-10, atol=1e-10), "float32": dict(rtol=2e-4, atol=2e-5)}


def qkv(rng, batch, m, n, d_k, d_v, dtype="float64"):
    Q, K = rng.standard_normal(batch + (m, d_k)), rng.standard_normal(batch + (n, d_k))
    V, d_output = rng.standard_normal(batch + (n, d_v)), rng.standard_normal(batch + (m, d_v))
    return tuple(x.astype(dtype) for x in (Q, K, V, d_output))


def sum_to(grad, shape):
    """Sum a gradient over the axes its input was broadcast along."""
    grad = grad.sum(axis=tuple(range(grad.ndim - len(shape))))
    return grad.sum(axis=tuple(i for i, s in enumerate(shape) if s == 1), keepdims=True)


def naive_backward(Q, K, V, d_output, mask=None, causal=False):
    """dL/dQ, dL/dK, dL/dV in float64 with the whole m × n softmax and its Jacobian matrices."""
    Q64, K64, V64, dO = (np.asarray(x, dtype=np.float64) for x in (Q, K, V, d_output))
    m, n, d_k = Q.shape[-2], K.shape[-2], Q.shape[-1]
    visible = np.ones((m, n), dtype=bool) if mask is None else mask
    if causal:
        visible = visible & (np.arange(n)[None, :] <= np.arange(m)[:, None] + n - m)
    scores = Q64 @ np.swapaxes(K64, -1, -2) / math.sqrt(d_k)  # (..., m, n)
    scores = np.where(visible, scores, -np.inf)
    top = np.max(scores, axis=-1, keepdims=True)
    exps = np.exp(scores - np.where(np.isfinite(top), top, 0.0))
    total = exps.sum(axis=-1, keepdims=True)
    weights = exps / np.where(total > 0, total, 1.0)  # fully masked rows: all 0
    d_weights = dO @ np.swapaxes(V64, -1, -2)  # (..., m, n)
    jacobian = weights[..., :, None] * np.eye(n) - weights[..., :, None] * weights[..., None, :]  # (..., m, n, n)
    d_scores = np.einsum("...ijk,...ik->...ij", jacobian, d_weights)  # J is symmetric
    d_Q = d_scores @ K64 / math.sqrt(d_k)
    d_K = np.swapaxes(d_scores, -1, -2) @ Q64 / math.sqrt(d_k)
    d_V = np.swapaxes(weights, -1, -2) @ dO
    return {"Q": sum_to(d_Q, Q.shape), "K": sum_to(d_K, K.shape), "V": sum_to(d_V, V.shape)}


def backward(Q, K, V, d_output, mask=None, causal=False, block_size=None, **options):
    out, lse = ae.blockwise_attention(Q, K, V, mask, causal=causal, return_lse=True)
    return ae.blockwise_attention_backward(Q, K, V, out, lse, d_output, mask, causal=causal,
                                           block_size=block_size, **options)


def check(grads, expected, inputs, dtype="float64"):
    for name, x in zip("QKV", inputs):
        assert grads[name].shape == x.shape and grads[name].dtype == x.dtype, name
        np.testing.assert_allclose(grads[name], expected[name], **TOL[dtype], err_msg=name)


def test_loss_sum_of_output_matches_central_differences(rng):
    """A second oracle for the oracle: the chapter-sized example against finite differences."""
    Q, K, V, d_output = qkv(rng, (), 2, 3, 4, 5)

    def loss(Q, K, V):
        return float(np.sum(ae.scaled_dot_product_attention(Q, K, V)[0] * d_output))

    expected = naive_backward(Q, K, V, d_output)
    for name, x in zip("QKV", (Q, K, V)):
        numeric = np.zeros_like(x)
        for index in np.ndindex(x.shape):
            step = np.zeros_like(x)
            step[index] = 1e-6
            args = [y + step if y is x else y for y in (Q, K, V)]
            back = [y - step if y is x else y for y in (Q, K, V)]
            numeric[index] = (loss(*args) - loss(*back)) / 2e-6
        np.testing.assert_allclose(expected[name], numeric, rtol=1e-6, atol=1e-8, err_msg=name)


@pytest.mark.parametrize("batch, m, n, block", [
    ((), 7, 11, 3),             # blocks divide neither m nor n, m ≠ n
    ((), 5, 1, 4),              # one key
    ((), 1, 9, (1, 2)),         # one query
    ((2, 3), 6, 10, (4, 3)),    # batched 4-D (B, H, m, d)
    ((3,), 9, 8, None),         # default blocks (a single tile)
    ((2,), 40, 70, (16, 32)),   # several tiles both ways
])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("method", METHODS)
def test_equals_naive_backward(rng, batch, m, n, block, causal, method):
    Q, K, V, d_output = qkv(rng, batch, m, n, 4, 3)
    grads = backward(Q, K, V, d_output, causal=causal, block_size=block, method=method)
    check(grads, naive_backward(Q, K, V, d_output, causal=causal), (Q, K, V))


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("m, n", [(10, 10), (12, 5)])
@pytest.mark.parametrize("method", METHODS)
def test_boolean_and_padding_masks_with_fully_masked_rows(rng, causal, m, n, method):
    """A padding mask (B, 1, 1, n) broadcast over heads and queries; one sequence all padding."""
    B, H = 3, 2
    Q, K, V, d_output = qkv(rng, (B, H), m, n, 5, 4)
    mask = ae.padding_mask(np.array([n, 4, 0]), n)[:, None]  # (B, 1, 1, n)
    grads = backward(Q, K, V, d_output, mask, causal=causal, block_size=(3, 4), method=method)
    check(grads, naive_backward(Q, K, V, d_output, mask, causal), (Q, K, V))
    for name in "QKV":  # the all-padding sequence: no gradient anywhere
        assert np.all(grads[name][2] == 0)
    assert np.all(grads["K"][1, :, 4:] == 0) and np.all(grads["V"][1, :, 4:] == 0)  # padded keys


@pytest.mark.parametrize("method", METHODS)
def test_random_mask_shared_inputs_widen_and_sum_back(rng, method):
    """Q, K, V without batch axes and a (2, m, n) mask: the gradients sum over the mask's batch."""
    Q, K, V, _ = qkv(rng, (), 6, 9, 3, 2)
    mask = rng.random((2, 6, 9)) < 0.5
    mask[1, 2] = False  # a fully masked row in one batch entry only
    d_output = rng.standard_normal((2, 6, 2))
    grads = backward(Q, K, V, d_output, mask, block_size=(4, 4), method=method)
    check(grads, naive_backward(Q, K, V, d_output, mask), (Q, K, V))


@pytest.mark.parametrize("method", METHODS)
def test_equals_the_library_scaled_dot_product_backward(rng, method):
    """The m × n backward of ae.scaled_dot_product_attention_backward, fed the same combined mask."""
    Q, K, V, d_output = qkv(rng, (3, 2), 11, 9, 5, 4)
    mask = rng.random((3, 1, 11, 9)) < 0.7
    mask[0, :, 4] = False  # a fully masked row
    steps = ae.scaled_dot_product_attention_steps(Q, K, V, mask & ae.causal_mask(11, 9))
    expected = ae.scaled_dot_product_attention_backward(steps, d_output)
    grads = backward(Q, K, V, d_output, mask, causal=True, block_size=(4, 2), method=method)
    check(grads, expected, (Q, K, V))


@pytest.mark.torch
@pytest.mark.parametrize("causal", [False, True])
def test_equals_torch_autograd(rng, causal):
    torch = pytest.importorskip("torch")
    Q, K, V, d_output = qkv(rng, (2, 3), 13, 13, 8, 6)
    mask = rng.random((2, 1, 13, 13)) < 0.7
    mask[..., 0] = True  # every row sees key 0, so torch has no fully masked row (it would give NaN)
    tq, tk, tv = (torch.from_numpy(x).requires_grad_() for x in (Q, K, V))
    visible = mask & ae.causal_mask(13, 13) if causal else mask
    out = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=torch.from_numpy(visible))
    out.backward(torch.from_numpy(d_output))
    grads = backward(Q, K, V, d_output, mask, causal=causal, block_size=(4, 5))
    check(grads, {"Q": tq.grad.numpy(), "K": tk.grad.numpy(), "V": tv.grad.numpy()}, (Q, K, V))


@pytest.mark.parametrize("batch, m, n", [((), 1, 1), ((2,), 5, 7)])
def test_float32_in_float32_out(rng, batch, m, n):
    Q, K, V, d_output = qkv(rng, batch, m, n, 3, 2, "float32")
    grads = backward(Q, K, V, d_output, causal=True, block_size=2)
    check(grads, naive_backward(Q, K, V, d_output, causal=True), (Q, K, V), "float32")


@given(n=st.integers(2, 12), block=st.integers(1, 13), seed=st.integers(0, 2 ** 16),
       dtype=st.sampled_from(["float32", "float64"]))
def test_permuting_keys_with_values_permutes_their_gradients(n, block, seed, dtype):
    rng = np.random.default_rng(seed)
    Q, K, V, d_output = qkv(rng, (2,), 4, n, 3, 2, dtype)
    mask = rng.random((2, 4, n)) < 0.7
    order = rng.permutation(n)
    grads = backward(Q, K, V, d_output, mask, block_size=block)
    moved = backward(Q, K[:, order], V[:, order], d_output, mask[..., order], block_size=block)
    tol = TOL[dtype]
    np.testing.assert_allclose(moved["Q"], grads["Q"], **tol)
    np.testing.assert_allclose(moved["K"], grads["K"][:, order], **tol)
    np.testing.assert_allclose(moved["V"], grads["V"][:, order], **tol)


@given(m=st.integers(1, 10), n=st.integers(1, 10), block_q=st.integers(1, 11), block_k=st.integers(1, 11),
       causal=st.booleans(), seed=st.integers(0, 2 ** 16), dtype=st.sampled_from(["float32", "float64"]),
       method=st.sampled_from(METHODS))
def test_masked_keys_get_exactly_zero_gradient(m, n, block_q, block_k, causal, seed, dtype, method):
    """A key hidden from every query: its key and value rows get exactly 0, whatever the blocks."""
    rng = np.random.default_rng(seed)
    Q, K, V, d_output = qkv(rng, (), m, n, 3, 2, dtype)
    mask = rng.random((m, n)) < 0.6
    hidden = rng.random(n) < 0.4
    mask[:, hidden] = False
    grads = backward(Q, K, V, d_output, mask, causal=causal, block_size=(block_q, block_k), method=method)
    assert grads["K"].dtype == grads["V"].dtype == np.dtype(dtype)
    assert np.all(grads["K"][hidden] == 0) and np.all(grads["V"][hidden] == 0)
    seen = np.any(mask & (np.arange(n) <= np.arange(m)[:, None] + n - m) if causal else mask, axis=1)
    assert np.all(grads["Q"][~seen] == 0)  # rows with no visible key
    check(grads, naive_backward(Q, K, V, d_output, mask, causal), (Q, K, V), dtype)


@pytest.mark.parametrize("method", METHODS)
def test_inputs_are_not_modified(rng, method):
    Q, K, V, d_output = qkv(rng, (2,), 5, 7, 3, 2, "float32")
    mask = rng.random((5, 7)) < 0.5
    out, lse = ae.blockwise_attention(Q, K, V, mask, causal=True, return_lse=True)
    arrays = (Q, K, V, out, lse, d_output, mask)
    copies = [x.copy() for x in arrays]
    ae.blockwise_attention_backward(Q, K, V, out, lse, d_output, mask, causal=True, block_size=2, method=method)
    for before, after in zip(copies, arrays):
        np.testing.assert_array_equal(before, after)


def test_backends_keep_namespace_device_dtype(backend):
    """Every backend of the matrix: the NumPy oracle's gradients, nothing leaves the device."""
    rng = np.random.default_rng(3)
    Q, K, V, d_output = (backend.normal(shape, rng) for shape in [(2, 7, 3), (2, 10, 3), (2, 10, 4), (2, 7, 4)])
    mask = backend.asarray(rng.random((2, 7, 10)) < 0.7, dtype="bool")
    out, lse = ae.blockwise_attention(Q, K, V, mask, causal=True, return_lse=True)
    grads = ae.blockwise_attention_backward(Q, K, V, out, lse, d_output, mask, causal=True, block_size=(3, 4))
    expected = naive_backward(*(to_numpy(x) for x in (Q, K, V, d_output)), to_numpy(mask), causal=True)
    for name, x in zip("QKV", (Q, K, V)):
        assert type(grads[name]) is type(x) and grads[name].dtype == x.dtype
        assert getattr(grads[name], "device", None) == getattr(x, "device", None)
        np.testing.assert_allclose(to_numpy(grads[name]), expected[name], **TOL[backend.dtype])


def _errors():
    Q, K, V, dO = np.zeros((4, 3)), np.zeros((6, 3)), np.zeros((6, 2)), np.zeros((4, 2))
    out, lse = np.zeros((4, 2)), np.zeros(4)
    f = ae.blockwise_attention_backward
    name = "blockwise_attention_backward"
    return [
        (lambda: f(Q, K[:, :2], V, out, lse, dO), ae.ShapeError,
         f"{name}: K has shape (6, 2) but pattern (..., n, d_k) needs d_k = 3"),
        (lambda: f(Q, K, V, out, lse, dO, np.ones((4, 6))), TypeError,
         f"{name}: mask has dtype float64 but masks are boolean"),
        (lambda: f(Q, K, V, out, lse, dO, block_size=0), ValueError,
         f"{name}: block_size must be a positive int or a pair"),
        (lambda: f(Q, K, V, out, lse, dO, causal=1), TypeError, f"{name}: causal must be True or False"),
        (lambda: f(Q, K, V, out[:3], lse, dO), ae.ShapeError,
         f"{name}: output has shape (3, 2) but pattern (..., m, d_v) needs m = 4"),
        (lambda: f(Q, K, V, np.zeros((2, 4, 2)), lse, dO), ae.ShapeError,
         f"{name}: output has shape (2, 4, 2) but must have shape (4, 2), what blockwise_attention returns"),
        (lambda: f(Q, K, V, out, np.zeros((4, 1)), dO), ae.ShapeError,
         f"{name}: lse has shape (4, 1) but pattern (..., m) needs m = 4, bound by Q (4, 3)"),
        (lambda: f(Q, K, V, out, np.zeros((3, 4)), dO), ae.ShapeError,
         f"{name}: lse has shape (3, 4) but must have shape (4,), what blockwise_attention returns as lse"),
        (lambda: f(Q, K, V, out, lse, dO[:, :1]), ae.ShapeError,
         f"{name}: d_output has shape (4, 1) but pattern (..., m, d_v) needs d_v = 2"),
        (lambda: f(Q, K, V, out, lse, dO.astype(np.float32)), TypeError,
         f"{name}: d_output has dtype float32 but Q has dtype float64"),
        (lambda: f(Q, K, V, out, np.full(4, np.nan), dO), ValueError, f"{name}: lse contains NaN or +inf"),
        (lambda: f(Q, K, V, out, lse, np.full((4, 2), np.inf)), ValueError,
         f"{name}: d_output (4, 2) contains infinite values"),
        (lambda: f(Q, K, V, out, None, dO), TypeError, f"{name}: lse is None"),
        (lambda: f(Q, K, V, out, lse, dO, method="flash"), ValueError,
         f"{name}: method must be 'auto', 'portable' or 'fast'"),
    ]


@pytest.mark.parametrize("index", range(len(_errors())))
def test_errors_name_the_function_argument_and_shapes(index):
    call, error, message = _errors()[index]
    with pytest.raises(error) as info:
        call()
    assert str(info.value).startswith(message), str(info.value)


@pytest.mark.parametrize("method", METHODS)
def test_hidden_scores_beyond_exp_range_never_reach_exp(rng, method):
    """Huge scores on hidden pairs (and rows with nothing visible): zeros there, no overflow warning."""
    Q, K, V, d_output = qkv(rng, (), 3, 4, 2, 2, "float32")
    Q *= 1e3
    mask = np.zeros((3, 4), dtype=bool)
    mask[1, 2] = True  # row 1 sees one key: weight 1, no gradient through the softmax
    grads = backward(Q, K, V, d_output, mask, block_size=2, method=method)
    assert np.all(grads["Q"] == 0) and np.all(grads["K"] == 0)
    np.testing.assert_array_equal(grads["V"][2], d_output[1])
    assert np.all(np.delete(grads["V"], 2, axis=0) == 0)


def test_fast_method_refuses_other_backends():
    xp = pytest.importorskip("array_api_strict")
    Q, lse = xp.zeros((2, 3), dtype=xp.float64), xp.zeros(2, dtype=xp.float64)
    with pytest.raises(TypeError, match="method='fast' needs NumPy arrays"):
        ae.blockwise_attention_backward(Q, Q, Q, Q, lse, Q, method="fast")


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_fast_path_with_threads_equals_portable(rng, causal, dtype):
    """Several workers sharing the key blocks and the dQ locks (forced here; large inputs get them by default)."""
    from attention_edu.blockwise.fast_backward import blockwise_attention_backward_fast

    Q, K, V, d_output = qkv(rng, (3, 2), 45, 38, 6, 5, dtype)
    mask = rng.random((3, 1, 45, 38)) < 0.8
    mask[1, :, 7] = False  # a fully masked row
    out, lse = ae.blockwise_attention(Q, K, V, mask, causal=causal, return_lse=True)
    fast = blockwise_attention_backward_fast(Q, K, V, out, lse, d_output, mask, (3, 2), tile=(4, 9),
                                             causal=causal, workers=3)
    portable = ae.blockwise_attention_backward(Q, K, V, out, lse, d_output, mask, causal=causal,
                                               method="portable")
    for name, grad in zip("QKV", fast):
        assert grad.dtype == np.dtype(dtype)
        np.testing.assert_allclose(grad, portable[name], **TOL[dtype], err_msg=name)


def test_default_tiles_and_threads_for_large_inputs(rng):
    """Above PARALLEL_PAIRS the default call runs every core with its own tiles; still the portable result."""
    from attention_edu.blockwise.fast import PARALLEL_PAIRS

    B, m, n = 2, 1100, 1000
    assert B * m * n >= PARALLEL_PAIRS
    Q, K, V, d_output = qkv(rng, (B,), m, n, 16, 8, "float32")
    mask = ae.padding_mask(np.array([1000, 613]), n)  # (B, 1, n)
    grads = backward(Q, K, V, d_output, mask, causal=True)
    portable = backward(Q, K, V, d_output, mask, causal=True, method="portable")
    check(grads, portable, (Q, K, V), "float32")
    assert np.all(grads["K"][1, 613:] == 0) and np.all(grads["V"][1, 613:] == 0)
