"""Properties every attention mechanism must have, checked with hypothesis.

Rows of weights sum to 1; masked weights are exactly 0; a fully masked row gives
zero weights and a zero output with no NaN and no warning; causal masking makes
the past independent of the future; adding a constant to every score of a row
changes nothing; permuting keys together with values only permutes the weights;
dtype in = dtype out; inputs are never modified.
"""

from __future__ import annotations

import inspect
import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import attention_edu as ae


@dataclass(frozen=True)
class Mechanism:
    """How to build random arguments for one mechanism and call it with a mask."""

    name: str
    shapes: Callable[[int, int], dict]     # (m, n) -> {arg: shape without batch, or (True, shape) if batched}
    run: Callable[[dict, object], tuple]   # (args, mask) -> (output, weights)
    keys: tuple[str, ...]                  # arguments whose axis -2 runs over the keys
    square: bool = False                   # queries are the keys (self-attention): m = n
    heads: int = 0                         # weights carry a head axis before (m, n)


B = True  # marks an argument with leading batch axes

MECHANISMS = [
    Mechanism("dot_product", lambda m, n: {"Q": (B, (m, 3)), "K": (B, (n, 3)), "V": (B, (n, 2))},
              lambda a, mask: ae.dot_product_attention(a["Q"], a["K"], a["V"], mask), ("K", "V")),
    Mechanism("scaled_dot_product", lambda m, n: {"Q": (B, (m, 3)), "K": (B, (n, 3)), "V": (B, (n, 2))},
              lambda a, mask: ae.scaled_dot_product_attention(a["Q"], a["K"], a["V"], mask), ("K", "V")),
    Mechanism("bahdanau", lambda m, n: {"S": (B, (m, 3)), "H": (B, (n, 2)), "W1": (4, 3), "W2": (4, 2), "v": (4,)},
              lambda a, mask: ae.bahdanau_attention(a["S"], a["H"], a["W1"], a["W2"], a["v"], mask), ("H",)),
    Mechanism("luong_dot", lambda m, n: {"S": (B, (m, 3)), "H": (B, (n, 3))},
              lambda a, mask: ae.luong_attention(a["S"], a["H"], "dot", mask=mask), ("H",)),
    Mechanism("luong_general", lambda m, n: {"S": (B, (m, 3)), "H": (B, (n, 2)), "W": (3, 2)},
              lambda a, mask: ae.luong_attention(a["S"], a["H"], "general", W=a["W"], mask=mask), ("H",)),
    Mechanism("luong_concat", lambda m, n: {"S": (B, (m, 3)), "H": (B, (n, 2)), "W": (4, 5), "v": (4,)},
              lambda a, mask: ae.luong_attention(a["S"], a["H"], "concat", W=a["W"], v=a["v"], mask=mask),
              ("H",)),
    Mechanism("cross", lambda m, n: {"X_q": (B, (m, 4)), "X_kv": (B, (n, 4)), "W_Q": (4, 3), "W_K": (4, 3),
                                      "W_V": (4, 2)},
              lambda a, mask: ae.cross_attention(a["X_q"], a["X_kv"], a["W_Q"], a["W_K"], a["W_V"], mask),
              ("X_kv",)),
    Mechanism("self", lambda m, n: {"X": (B, (n, 4)), "W_Q": (4, 3), "W_K": (4, 3), "W_V": (4, 2)},
              lambda a, mask: ae.self_attention(a["X"], a["W_Q"], a["W_K"], a["W_V"], mask), ("X",),
              square=True),
    Mechanism("multi_head", lambda m, n: {"X_q": (B, (m, 4)), "X_kv": (B, (n, 4)), "W_Q": (4, 4), "W_K": (4, 4),
                                           "W_V": (4, 6), "W_O": (6, 4)},
              lambda a, mask: ae.multi_head_attention(a["X_q"], a["X_kv"], a["W_Q"], a["W_K"], a["W_V"],
                                                      a["W_O"], 2, mask), ("X_kv",), heads=2),
]
BY_NAME = {mech.name: mech for mech in MECHANISMS}
CROSS = [mech for mech in MECHANISMS if not mech.square]  # queries and keys independent


@st.composite
def problems(draw, mechanisms=MECHANISMS, dtypes=("float64",), square=False):
    """A mechanism, its random arguments (seeded), and sizes."""
    mech = draw(st.sampled_from(mechanisms))
    batch = draw(st.sampled_from([(), (2,), (2, 3)]))
    n = draw(st.integers(1, 5))
    m = n if (mech.square or square) else draw(st.integers(1, 5))
    dtype = draw(st.sampled_from(dtypes))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    args = {}
    for name, spec in mech.shapes(m, n).items():
        shape = batch + spec[1] if spec[0] is B else spec
        args[name] = rng.normal(size=shape).astype(dtype)
    return mech, args, batch, m, n, rng


def weights_mask(mech, mask, weights):
    """The mask broadcast to the weights' shape (with the head axis of multi-head)."""
    if mech.heads:
        mask = np.expand_dims(mask, -3)
    return np.broadcast_to(mask, weights.shape)


def tolerance(args):
    return 1e-5 if next(iter(args.values())).dtype == np.float32 else 1e-12


@given(problems(dtypes=("float64", "float32")))
def test_weights_are_distributions(problem):
    mech, args, *_ = problem
    out, w = mech.run(args, None)
    assert np.all(w >= 0)
    np.testing.assert_allclose(np.sum(w, axis=-1), 1.0, rtol=0, atol=tolerance(args))


@given(problems(), st.data())
def test_masked_weights_are_exactly_zero(problem, data):
    mech, args, batch, m, n, rng = problem
    mask = rng.random(batch + (m, n)) < data.draw(st.floats(0.2, 0.8))
    mask[..., rng.integers(n)] = True  # every row keeps one key
    out, w = mech.run(args, mask)
    allowed = weights_mask(mech, mask, w)
    assert np.all(w[~allowed] == 0.0)
    assert np.all(w[allowed] > 0.0)
    np.testing.assert_allclose(np.sum(w, axis=-1), 1.0, rtol=0, atol=1e-12)


@given(problems(dtypes=("float64", "float32")))
def test_fully_masked_rows_give_zeros_without_nan_or_warning(problem):
    mech, args, batch, m, n, rng = problem
    mask = rng.random(batch + (m, n)) < 0.5
    mask[..., 0, :] = False  # query 0 may attend to nothing
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning (RuntimeWarning from 0/0, exp overflow) fails
        out, w = mech.run(args, mask)
    assert np.all(np.isfinite(out)) and np.all(np.isfinite(w))
    assert np.all(w[..., 0, :] == 0.0)
    assert np.all(out[..., 0, :] == 0.0)
    rows_with_keys = np.any(weights_mask(mech, mask, w), axis=-1)
    np.testing.assert_allclose(np.sum(w, axis=-1)[rows_with_keys], 1.0, atol=tolerance(args))


@given(problems(), st.booleans())
def test_a_key_mask_and_a_0d_mask_broadcast_as_numpy_broadcasts_them(problem, allowed):
    """A mask (n,) acts as (1, n) and a 0-d mask as (1, 1): "broadcastable to the scores (..., m, n)"."""
    mech, args, batch, m, n, rng = problem
    keys = rng.random(n) < 0.6
    keys[rng.integers(n)] = True
    for short, full in ((keys, keys[None, :]), (np.array(allowed), np.full((1, 1), allowed))):
        for got, want in zip(mech.run(args, short), mech.run(args, full)):
            np.testing.assert_array_equal(got, want)
    assert keys.shape == (n,)      # the caller's mask is not reshaped in place


@given(problems(mechanisms=CROSS, square=True), st.data())
def test_causal_outputs_ignore_future_keys_and_values(problem, data):
    """With a causal mask, changing keys/values after position t leaves outputs up to t unchanged."""
    mech, args, batch, m, n, rng = problem
    t = data.draw(st.integers(0, n - 1))
    mask = ae.causal_mask(n)
    out, w = mech.run(args, mask)
    perturbed = dict(args)
    for name in mech.keys:
        changed = np.array(args[name])
        changed[..., t + 1:, :] += 10 * rng.normal(size=changed[..., t + 1:, :].shape)
        perturbed[name] = changed
    out2, w2 = mech.run(perturbed, mask)
    np.testing.assert_allclose(out2[..., : t + 1, :], out[..., : t + 1, :], rtol=0, atol=1e-13)
    assert np.all(w2[..., : t + 1, t + 1:] == 0.0)  # … and never look ahead
    if t + 1 < n:  # the perturbation must have mattered for the later outputs
        assert not np.allclose(out2[..., t + 1:, :], out[..., t + 1:, :])


@given(st.sampled_from(["self", "multi_head"]), st.integers(2, 6), st.integers(0, 2**32 - 1), st.data())
def test_causal_self_attention_past_ignores_future_tokens(name, n, seed, data):
    """Self-attention (and multi-head on one sequence): editing tokens after t keeps outputs ≤ t."""
    rng = np.random.default_rng(seed)
    t = data.draw(st.integers(0, n - 2))
    X = rng.normal(size=(2, n, 4))
    W = {k: rng.normal(size=s) for k, s in [("W_Q", (4, 4)), ("W_K", (4, 4)), ("W_V", (4, 6)), ("W_O", (6, 4))]}

    def run(X):
        if name == "self":
            return ae.self_attention(X, W["W_Q"], W["W_K"], W["W_V"], ae.causal_mask(n))[0]
        return ae.multi_head_attention(X, X, W["W_Q"], W["W_K"], W["W_V"], W["W_O"], 2, ae.causal_mask(n))[0]

    X2 = X.copy()
    X2[:, t + 1:, :] = rng.normal(size=X2[:, t + 1:, :].shape)
    np.testing.assert_allclose(run(X2)[:, : t + 1], run(X)[:, : t + 1], rtol=0, atol=1e-13)
    assert not np.allclose(run(X2)[:, t + 1:], run(X)[:, t + 1:])


@given(st.integers(1, 5), st.integers(1, 8), st.integers(0, 2**32 - 1), st.data())
def test_causal_mask_aligns_last_query_with_last_key(m, extra, seed, data):
    """causal_mask(m, n), n ≥ m: query i sees keys j ≤ i + n − m; later keys cannot matter."""
    n = m + extra - 1
    rng = np.random.default_rng(seed)
    mask = ae.causal_mask(m, n)
    assert mask.shape == (m, n) and mask.dtype == bool
    assert all(mask[i, j] == (j <= i + n - m) for i in range(m) for j in range(n))
    Q, K, V = rng.normal(size=(m, 3)), rng.normal(size=(n, 3)), rng.normal(size=(n, 2))
    i = data.draw(st.integers(0, m - 1))
    K2, V2 = K.copy(), V.copy()
    K2[i + n - m + 1:] += 5.0
    V2[i + n - m + 1:] -= 5.0
    out, _ = ae.scaled_dot_product_attention(Q, K, V, mask)
    out2, _ = ae.scaled_dot_product_attention(Q, K2, V2, mask)
    np.testing.assert_allclose(out2[: i + 1], out[: i + 1], rtol=0, atol=1e-13)


@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=5),
                  elements=st.floats(-50, 50)), st.floats(-1e3, 1e3))
def test_softmax_ignores_a_constant_added_to_a_row(x, c):
    shift = c * np.arange(1, x.size // x.shape[-1] + 1).reshape(x.shape[:-1] + (1,))  # one constant per row
    np.testing.assert_allclose(ae.softmax(x + shift), ae.softmax(x), rtol=1e-9, atol=1e-12)


@given(problems(mechanisms=[BY_NAME["dot_product"], BY_NAME["scaled_dot_product"]]), st.floats(-3, 3))
def test_dot_attention_ignores_a_vector_added_to_every_key(problem, c):
    """K + u adds q_i·u to every score of row i: a per-row constant, so nothing changes."""
    mech, args, batch, m, n, rng = problem
    u = c * rng.normal(size=args["K"].shape[-1])
    out, w = mech.run(args, None)
    out2, w2 = mech.run(dict(args, K=args["K"] + u), None)
    np.testing.assert_allclose(w2, w, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(out2, out, rtol=1e-9, atol=1e-12)


@given(problems(mechanisms=[BY_NAME["dot_product"], BY_NAME["scaled_dot_product"]]), st.floats(-3, 3))
def test_dot_attention_ignores_a_query_shift_along_a_constant_key_feature(problem, c):
    """If every key has the same last coordinate κ, moving q by c·e_last adds c·κ to the whole row.

    (A general shift of Q would change the scores by δ·k_j, which differs from key
    to key; only a direction on which all keys agree gives a per-row constant.)
    """
    mech, args, batch, m, n, rng = problem
    K = np.array(args["K"])
    K[..., -1] = 1.7  # κ, shared by every key
    e_last = np.eye(K.shape[-1])[-1]
    out, w = mech.run(dict(args, K=K), None)
    out2, w2 = mech.run(dict(args, K=K, Q=args["Q"] + c * e_last), None)
    np.testing.assert_allclose(w2, w, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(out2, out, rtol=1e-9, atol=1e-12)


@given(problems(mechanisms=CROSS), st.booleans())
def test_permuting_keys_with_values_only_permutes_the_weights(problem, masked):
    mech, args, batch, m, n, rng = problem
    perm = rng.permutation(n)
    mask = (rng.random(batch + (m, n)) < 0.7) if masked else None
    out, w = mech.run(args, mask)
    permuted = {k: (np.take(a, perm, axis=-2) if k in mech.keys else a) for k, a in args.items()}
    out2, w2 = mech.run(permuted, None if mask is None else np.take(mask, perm, axis=-1))
    np.testing.assert_allclose(out2, out, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(w2, np.take(w, perm, axis=-1), rtol=1e-10, atol=1e-12)


@given(problems(mechanisms=[BY_NAME["self"]]))
def test_self_attention_is_permutation_equivariant(problem):
    """Self-attention has no notion of order: permuting tokens permutes the outputs."""
    mech, args, batch, m, n, rng = problem
    perm = rng.permutation(n)
    out, w = mech.run(args, None)
    out2, w2 = mech.run(dict(args, X=np.take(args["X"], perm, axis=-2)), None)
    np.testing.assert_allclose(out2, np.take(out, perm, axis=-2), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(w2, np.take(np.take(w, perm, axis=-2), perm, axis=-1), rtol=1e-10, atol=1e-12)


@given(problems(dtypes=("float32", "float64")), st.booleans())
def test_dtype_in_is_dtype_out(problem, masked):
    mech, args, batch, m, n, rng = problem
    dtype = next(iter(args.values())).dtype
    mask = ae.causal_mask(m, n) if masked and n >= m else None
    out, w = mech.run(args, mask)
    assert out.dtype == dtype and w.dtype == dtype


def public_calls(dtype=np.float64):
    """One valid call of every public function taking arrays: name -> (function, args, kwargs)."""
    rng = np.random.default_rng(1)
    a = lambda *shape: rng.normal(size=shape).astype(dtype)
    Q, K, V, S, H = a(2, 3, 4), a(2, 5, 4), a(2, 5, 6), a(3, 4), a(5, 2)
    W1, W2, v, mask = a(7, 4), a(7, 2), a(7), ae.causal_mask(3, 5)
    X, W_Q, W_K, W_V, W_O = a(2, 5, 4), a(4, 6), a(4, 6), a(4, 8), a(8, 4)
    p, Sc = ae.softmax(a(2, 5)), a(2, 3, 5)         # Sc: scores for explore, whose weights the mask made
    calls = {
        "softmax": (ae.softmax, (a(2, 5),), {}),
        "softmax_naive": (ae.softmax_naive, (a(2, 5),), {}),
        "softmax_jacobian": (ae.softmax_jacobian, (p,), {}),
        "softmax_vjp": (ae.softmax_vjp, (p, a(2, 5)), {}),
        "apply_mask": (ae.apply_mask, (a(3, 5), mask), {}),
        "padding_mask": (ae.padding_mask, (np.array([2, 5]), 5), {}),
        "dot_product_attention": (ae.dot_product_attention, (Q, K, V, mask), {}),
        "scaled_dot_product_attention": (ae.scaled_dot_product_attention, (Q, K, V, mask), {}),
        "bahdanau_attention": (ae.bahdanau_attention, (S, H, W1, W2, v, mask), {}),
        "luong_attention": (ae.luong_attention, (S, H, "concat"), {"W": a(7, 6), "v": v, "mask": mask}),
        "self_attention": (ae.self_attention, (X, W_Q, W_K, W_V, ae.causal_mask(5)), {}),
        "cross_attention": (ae.cross_attention, (Q, X, W_Q[:, :3], W_K[:, :3], W_V, mask), {}),
        "multi_head_attention": (ae.multi_head_attention, (Q, X, W_Q, W_K, W_V, W_O, 2, mask), {}),
        "split_heads": (ae.split_heads, (X, 2), {}),
        "merge_heads": (ae.merge_heads, (a(2, 3, 5, 4),), {}),
        "attention_loop": (ae.attention_loop, (S, a(5, 4), H, mask), {}),
        "bahdanau_attention_loop": (ae.bahdanau_attention_loop, (S, H, W1, W2, v, mask), {}),
        "get_xp": (ae.get_xp, (Q, K), {}),
        "explore": (ae.explore, (ae.softmax(np.where(mask, Sc, -np.inf)),), {"scores": Sc, "mask": mask}),
        "to_numpy": (ae.to_numpy, (Q,), {}),
        # both paths: the NumPy fast path works in place on scratch buffers
        "blockwise_attention": (ae.blockwise_attention, (Q, K, V), {"mask": mask, "block_size": 2}),
        "blockwise_attention_portable": (ae.blockwise_attention, (Q, K, V),
                                         {"causal": True, "block_size": 2, "method": "portable"}),
        "blockwise_attention_backward": (ae.blockwise_attention_backward,
                                         (Q, K, V, *ae.blockwise_attention(Q, K, V, mask, return_lse=True),
                                          a(2, 3, 6), mask), {"block_size": 2}),
    }
    for name in ("dot_product_attention", "scaled_dot_product_attention", "bahdanau_attention",
                 "luong_attention", "self_attention", "cross_attention", "multi_head_attention"):
        fn, args, kwargs = calls[name]
        calls[name + "_steps"] = (getattr(ae, name + "_steps"), args, kwargs)
        steps = getattr(ae, name + "_steps")(*args, **kwargs)
        result = steps["context" if "context" in steps else "output"]
        calls[name + "_backward"] = (getattr(ae, name + "_backward"), (steps, a(*result.shape)),
                                     {"d_weights": a(*steps.weights.shape)})
    small = dict(Q=a(2, 3).astype(np.float64), K=a(4, 3).astype(np.float64), V=a(4, 2).astype(np.float64))
    calls["gradcheck"] = (ae.gradcheck, (ae.scaled_dot_product_attention_steps,
                                         ae.scaled_dot_product_attention_backward, small), {})
    return calls


NO_ARRAY_INPUT = {"Backend", "ShapeError", "Steps", "numpy_backend", "causal_mask"}


def test_the_table_of_calls_covers_the_public_api():
    functions = {name for name in ae.__all__ if not inspect.ismodule(getattr(ae, name))}
    missing = functions - NO_ARRAY_INPUT - set(public_calls())
    assert not missing, f"add a call for {sorted(missing)} to public_calls()"


@pytest.mark.parametrize("name", sorted(public_calls()))
def test_inputs_are_never_modified(name):
    fn, args, kwargs = public_calls()[name]
    given = list(args) + list(kwargs.values())
    given += [x for arg in given if isinstance(arg, ae.Steps) for x in [arg[k] for k in arg.names]]
    given += [x for arg in given if isinstance(arg, (ae.Steps, dict)) for x in
              (arg.inputs if isinstance(arg, ae.Steps) else arg).values()]
    inputs = [x for x in given if isinstance(x, np.ndarray)]
    copies = [x.copy() for x in inputs]
    for x in inputs:
        x.flags.writeable = False  # an in-place write would raise here …
    fn(*args, **kwargs)
    for x, before in zip(inputs, copies):  # … and nothing may have changed
        np.testing.assert_array_equal(x, before)
        assert x.dtype == before.dtype and x.shape == before.shape


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(set(public_calls()) - {"get_xp", "padding_mask", "to_numpy", "gradcheck",
                                                               "explore"}))  # explore returns HTML, no array
def test_dtype_in_is_dtype_out_for_every_function_and_step(name, dtype):
    fn, args, kwargs = public_calls(dtype)[name]
    result = fn(*args, **kwargs)
    arrays = [result[k] for k in result.names] if isinstance(result, ae.Steps) else (
        list(result) if isinstance(result, tuple) else list(result.values()) if isinstance(result, dict)
        else [result])
    for x in arrays:
        assert x.dtype == dtype
