"""The same calls on every backend: NumPy (float64, float32), array_api_strict on its
CPU device, on ``device1`` (a simulated accelerator that refuses silent trips
through NumPy) and on ``no_float64`` (its float32-only device), and CuPy when a
GPU is present. Every output keeps the input's namespace, device and dtype and
matches the NumPy float64 result.
"""

from __future__ import annotations

import array_api_compat
import numpy as np
import pytest

import attention_edu as ae
from attention_edu.backend import Backend, numpy_backend

array_api_strict = pytest.importorskip("array_api_strict")


def mechanism_calls(be: Backend):
    """name -> (function, args): every mechanism with inputs drawn by ``be`` (seeded, so same values everywhere)."""
    rng = np.random.default_rng(11)
    a = lambda *shape: be.asarray(rng.normal(size=shape))
    Q, K, V = a(2, 3, 4), a(2, 5, 4), a(2, 5, 6)
    S, H, W1, W2, v = a(2, 3, 4), a(2, 5, 2), a(7, 4), a(7, 2), a(7)
    X, W_Q, W_K, W_V, W_O = a(2, 5, 4), a(4, 6), a(4, 6), a(4, 8), a(8, 4)
    mask = ae.causal_mask(3, 5, backend=be)
    lengths = be.asarray([5, 2], dtype="int32")
    padding = ae.padding_mask(lengths, 5)  # (2, 1, 5)
    return {
        "dot_product_attention": (ae.dot_product_attention, (Q, K, V, mask)),
        "scaled_dot_product_attention": (ae.scaled_dot_product_attention, (Q, K, V, padding)),
        "bahdanau_attention": (ae.bahdanau_attention, (S, H, W1, W2, v, mask)),
        "luong_dot": (lambda *x: ae.luong_attention(*x, score="dot"), (Q, K)),
        "luong_general": (lambda *x: ae.luong_attention(*x, score="general", W=W_Q[:, :2], mask=padding), (S, H)),
        "luong_concat": (lambda *x: ae.luong_attention(*x, score="concat", W=a(7, 6), v=v, mask=mask), (S, H)),
        "self_attention": (ae.self_attention, (X, W_Q, W_K, W_V, ae.causal_mask(5, backend=be))),
        "cross_attention": (ae.cross_attention, (S, X, W_Q, W_K, W_V, mask)),
        "multi_head_attention": (lambda *x: ae.multi_head_attention(*x, num_heads=2, mask=padding),
                                 (Q, X, W_Q, W_K, W_V, W_O)),
        "split_heads": (lambda x: (ae.split_heads(x, 2),), (W_V,)),
        "merge_heads": (lambda x: (ae.merge_heads(x),), (Q,)),
        "softmax": (lambda x: (ae.softmax(x), ae.softmax(x, axis=0)), (Q,)),
        "softmax_jacobian": (lambda x: (ae.softmax_jacobian(ae.softmax(x)),), (Q,)),
        "softmax_vjp": (lambda x, g: (ae.softmax_vjp(ae.softmax(x), g),), (Q, Q)),
        "attention_loop": (ae.attention_loop, (Q[0, ...], K[0, ...], V[0, ...], mask)),
        "bahdanau_attention_loop": (ae.bahdanau_attention_loop, (S[0, ...], H[0, ...], W1, W2, v, mask)),
        "apply_mask": (lambda s, mk: (ae.apply_mask(s, mk),), (Q[:, :, :3], ae.causal_mask(3, backend=be))),
    }


NAMES = sorted(mechanism_calls(numpy_backend()))


def same_place(x, like):
    """x lives where ``like`` lives: same namespace, device and dtype."""
    assert ae.get_xp(x) is ae.get_xp(like)
    assert array_api_compat.device(x) == array_api_compat.device(like)
    assert x.dtype == like.dtype


@pytest.mark.parametrize("name", NAMES)
def test_every_mechanism_stays_on_its_backend_and_matches_numpy(backend, name):
    fn, args = mechanism_calls(backend)[name]
    results = fn(*args)
    reference_fn, reference_args = mechanism_calls(numpy_backend("float64"))[name]
    references = reference_fn(*reference_args)
    tol = 2e-5 if backend.dtype == "float32" else 1e-12
    for result, reference in zip(results, references):
        same_place(result, args[0])
        np.testing.assert_allclose(ae.to_numpy(result), reference, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["scaled_dot_product_attention", "bahdanau_attention", "multi_head_attention"])
def test_steps_print_on_every_backend(backend, name):
    """The step table reaches the host through to_numpy, even on device1."""
    fn, args = mechanism_calls(backend)[name]
    steps = getattr(ae, name + "_steps")(*args) if name != "multi_head_attention" else \
        ae.multi_head_attention_steps(*args, num_heads=2)
    text = str(steps)
    for step in steps.names:
        assert step in text
    for step in steps.names:
        same_place(steps[step], args[0])


def test_causal_mask_on_every_backend(backend):
    mask = ae.causal_mask(3, 5, backend=backend)
    assert ae.get_xp(mask) is backend.xp
    assert array_api_compat.device(mask) == array_api_compat.device(backend.asarray([0.0]))
    assert mask.dtype == backend.xp.bool
    np.testing.assert_array_equal(ae.to_numpy(mask), np.tril(np.ones((3, 5), bool), k=2))


def test_padding_mask_on_every_backend(backend):
    lengths = backend.asarray([1, 3, 0], dtype="int32")
    mask = ae.padding_mask(lengths, 4)
    assert ae.get_xp(mask) is ae.get_xp(lengths)
    assert array_api_compat.device(mask) == array_api_compat.device(lengths)
    assert mask.dtype == backend.xp.bool
    expected = np.array([[[1, 0, 0, 0]], [[1, 1, 1, 0]], [[0, 0, 0, 0]]], bool)
    np.testing.assert_array_equal(ae.to_numpy(mask), expected)


@pytest.mark.parametrize("lengths", [[1, 3, 0], (1, 3, 0), [np.int32(1), 3, np.int64(0)]])
def test_padding_mask_of_plain_lengths_is_numpys(lengths):
    """A list or tuple of ints, as a course writes ``padding_mask([2, 4, 0], 5)``, gives NumPy's mask."""
    mask = ae.padding_mask(lengths, 4)
    assert type(mask) is np.ndarray and mask.dtype == bool
    expected = np.array([[[1, 0, 0, 0]], [[1, 1, 1, 0]], [[0, 0, 0, 0]]], bool)
    np.testing.assert_array_equal(mask, expected)


def test_normal_gives_the_same_values_on_every_backend(backend):
    """Parameters are drawn on the host with one seeded generator, then moved once."""
    host = numpy_backend(backend.dtype).normal((3, 4), seed=42)
    moved = backend.normal((3, 4), seed=42)
    assert ae.get_xp(moved) is backend.xp and moved.dtype == backend.float_dtype
    np.testing.assert_array_equal(ae.to_numpy(moved), host)
    rng_a, rng_b = np.random.default_rng(7), np.random.default_rng(7)
    np.testing.assert_array_equal(ae.to_numpy(backend.glorot((2, 5), rng_a)),
                                  numpy_backend(backend.dtype).glorot((2, 5), rng_b))


def test_to_numpy_brings_every_backend_home(backend):
    x = backend.asarray([[1.5, -2.0], [0.25, 3.0]])
    host = ae.to_numpy(x)
    assert isinstance(host, np.ndarray)
    assert host.dtype == np.dtype(backend.dtype)
    np.testing.assert_array_equal(host, [[1.5, -2.0], [0.25, 3.0]])


def test_backend_like_round_trips(backend):
    x = backend.normal((2, 2), seed=1)
    like = Backend.like(x)
    assert like.xp is ae.get_xp(x) and like.dtype == backend.dtype
    same_place(like.asarray([[0.0, 1.0]]), x)


@pytest.mark.parametrize("device", ["CPU_DEVICE", "device1", "no_float64"])
def test_strict_devices_refuse_float64_only_where_expected(device):
    """The float32-only device is ``no_float64``: it cannot even hold float64 weights."""
    be = Backend(array_api_strict, array_api_strict.Device(device), "float64")
    if device == "no_float64":
        with pytest.raises(ValueError, match="does not support"):
            be.normal((2, 2))
    else:
        assert be.normal((2, 2)).dtype == array_api_strict.float64


def test_mixing_devices_is_a_clear_error():
    cpu = Backend(array_api_strict, array_api_strict.Device("CPU_DEVICE"))
    dev1 = Backend(array_api_strict, array_api_strict.Device("device1"))
    Q = cpu.normal((2, 3))
    with pytest.raises(ValueError, match=r"scaled_dot_product_attention: K is on device .*device1.* but Q is on"):
        ae.scaled_dot_product_attention(Q, dev1.normal((4, 3)), cpu.normal((4, 2)))
