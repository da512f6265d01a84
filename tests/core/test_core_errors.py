"""Bad calls and the errors they must raise.

Every row names the exception type and substrings the message must contain:
the function, the argument, and the shapes/dimensions involved (bound where).
A raw NumPy traceback or a silent answer for any of these is a bug.
"""

from __future__ import annotations

import math
import os
import traceback
import warnings

import numpy as np
import pytest

import attention_edu as ae

array_api_strict = pytest.importorskip("array_api_strict")

r = np.random.default_rng(0)
Q, K, V = r.normal(size=(5, 3)), r.normal(size=(6, 3)), r.normal(size=(6, 4))
S, H = r.normal(size=(5, 3)), r.normal(size=(6, 4))
W3x6 = r.normal(size=(3, 6))
SDPA = ae.scaled_dot_product_attention


def nan_at(x, index):
    y = x.copy()
    y[index] = math.nan
    return y


BAD_CALLS = [
    # --- ranks and dimensions -------------------------------------------------------------
    ("Q-rank-1", lambda: SDPA(Q[0], K, V), ae.ShapeError,
     ["scaled_dot_product_attention:", "Q has shape (3,)", "(1 dimension)", "(..., m, d_k)", "at least 2"]),
    ("d_k-mismatch", lambda: SDPA(Q, r.normal(size=(5, 4)), V), ae.ShapeError,
     ["scaled_dot_product_attention:", "K has shape (5, 4)", "(..., n, d_k)", "d_k = 3", "bound by Q (5, 3)"]),
    ("n-mismatch-K-V", lambda: SDPA(Q, K, V[:4]), ae.ShapeError,
     ["scaled_dot_product_attention:", "V has shape (4, 4)", "n = 6", "bound by K (6, 3)"]),
    ("batch-mismatch", lambda: SDPA(r.normal(size=(2, 5, 3)), r.normal(size=(3, 6, 3)), V), ae.ShapeError,
     ["scaled_dot_product_attention:", "K has batch dimensions (3,)", "(2,) from Q (2, 5, 3)"]),
    ("dot-d_k-mismatch", lambda: ae.dot_product_attention(Q, V, V), ae.ShapeError,
     ["dot_product_attention:", "K has shape (6, 4)", "d_k = 3", "bound by Q (5, 3)"]),
    ("empty-queries", lambda: SDPA(Q[:0], K, V), ae.ShapeError,
     ["scaled_dot_product_attention:", "Q has shape (0, 3)", "dimension m is 0"]),
    ("empty-keys", lambda: SDPA(Q, K[:0], V[:0]), ae.ShapeError,
     ["scaled_dot_product_attention:", "K has shape (0, 3)", "dimension n is 0", "key"]),
    # --- masks ------------------------------------------------------------------------------
    ("mask-wrong-shape", lambda: SDPA(Q, K, V, np.ones((5, 5), bool)), ae.ShapeError,
     ["scaled_dot_product_attention:", "mask has shape (5, 5)", "(..., m, n)", "m = 5 from Q (5, 3)",
      "n = 6 from K (6, 3)"]),
    ("backend-a-name", lambda: ae.causal_mask(3, backend="torch"), TypeError,        # 'str' has no attribute 'xp'
     ["causal_mask:", "backend must be a Backend", "numpy_backend()", "got 'torch'"]),
    ("mask-transposed", lambda: SDPA(Q, K, V, ae.causal_mask(6, 5)), ae.ShapeError,
     ["scaled_dot_product_attention:", "mask has shape (6, 5)", "n = 6 from K (6, 3)"]),
    ("mask-int", lambda: SDPA(Q, K, V, np.ones((5, 6), int)), TypeError,
     ["scaled_dot_product_attention:", "mask has dtype int64", "boolean", "True = may attend"]),
    ("mask-float", lambda: SDPA(Q, K, V, np.ones((5, 6))), TypeError,
     ["scaled_dot_product_attention:", "mask has dtype float64", "boolean"]),
    ("mask-list", lambda: SDPA(Q, K, V, [[True] * 6] * 5), TypeError,
     ["scaled_dot_product_attention:", "mask is a list, not an array", "asarray"]),
    ("mask-batch-mismatch", lambda: SDPA(r.normal(size=(2, 5, 3)), K, V, np.ones((3, 5, 6), bool)), ae.ShapeError,
     ["scaled_dot_product_attention:", "mask has batch dimensions (3,)", "(2,) from Q (2, 5, 3)"]),
    ("bahdanau-mask", lambda: ae.bahdanau_attention(S, H, np.ones((2, 3)), np.ones((2, 4)), np.ones(2),
                                                     np.ones((5, 7), bool)), ae.ShapeError,
     ["bahdanau_attention:", "mask has shape (5, 7)", "m = 5 from S (5, 3)", "n = 6 from H (6, 4)"]),
    ("apply_mask-shape", lambda: ae.apply_mask(np.zeros((5, 3)), np.ones((5, 4), bool)), ae.ShapeError,
     ["apply_mask:", "mask has shape (5, 4)", "n = 3 from scores (5, 3)"]),
    # --- values and dtypes ------------------------------------------------------------------
    ("int-input", lambda: SDPA(Q.astype(int), K, V), TypeError,
     ["scaled_dot_product_attention:", "Q has dtype int64", "floating-point"]),
    ("bool-input", lambda: SDPA(Q, K > 0, V), TypeError,
     ["scaled_dot_product_attention:", "K has dtype bool", "floating-point"]),
    ("NaN-input", lambda: SDPA(Q, K, nan_at(V, (2, 1))), ValueError,
     ["scaled_dot_product_attention:", "V (6, 4)", "NaN"]),
    ("inf-input", lambda: SDPA(Q, K * np.inf, V), ValueError,
     ["scaled_dot_product_attention:", "K (6, 3)", "infinite"]),
    ("mixed-dtypes", lambda: SDPA(Q, K.astype(np.float32), V), TypeError,
     ["scaled_dot_product_attention:", "K has dtype float32", "Q has dtype float64", "same floating dtype"]),
    ("mixed-libraries", lambda: SDPA(Q, array_api_strict.asarray(K), V), TypeError,
     ["scaled_dot_product_attention:", "K is an array from array_api_strict", "Q is from numpy",
      "one library"]),
    ("None-for-array", lambda: SDPA(None, K, V), TypeError,
     ["scaled_dot_product_attention:", "Q is None", "(..., m, d_k)"]),
    ("list-for-array", lambda: SDPA(Q.tolist(), K, V), TypeError,
     ["scaled_dot_product_attention:", "Q is a list, not an array"]),
    ("softmax-NaN", lambda: ae.softmax(np.array([math.nan, 1.0])), ValueError,
     ["softmax:", "x contains NaN or +inf", "-inf"]),
    ("softmax-empty-axis", lambda: ae.softmax(np.ones((3, 0))), ae.ShapeError,
     ["softmax:", "x has shape (3, 0)", "axis -1 is empty"]),
    ("softmax-axis", lambda: ae.softmax(np.ones(3), axis=1), ValueError,
     ["softmax:", "axis 1", "x of shape (3,)"]),
    ("softmax-axis-None", lambda: ae.softmax(np.ones(3), axis=None), TypeError,
     ["softmax:", "axis must be an int", "None"]),
    ("softmax-scalar", lambda: ae.softmax(np.float64(1.0)), TypeError,
     ["softmax:", "x is a float64, not an array"]),
    ("vjp-n-mismatch", lambda: ae.softmax_vjp(np.full(3, 1 / 3), np.ones(4)), ae.ShapeError,
     ["softmax_vjp:", "grad_p has shape (4,)", "n = 3", "bound by p (3,)"]),
    # --- Bahdanau ------------------------------------------------------------------------------
    ("bahdanau-W1-d_s", lambda: ae.bahdanau_attention(S, H, np.ones((2, 4)), np.ones((2, 4)), np.ones(2)),
     ae.ShapeError, ["bahdanau_attention:", "W1 has shape (2, 4)", "(d_a, d_s)", "d_s = 3", "bound by S (5, 3)"]),
    ("bahdanau-W1-transposed", lambda: ae.bahdanau_attention(S, H, np.ones((3, 2)), np.ones((2, 4)), np.ones(2)),
     ae.ShapeError, ["bahdanau_attention:", "W1 has shape (3, 2)", "d_s = 3", "looks transposed"]),
    ("bahdanau-W2-d_a", lambda: ae.bahdanau_attention(S, H, np.ones((2, 3)), np.ones((5, 4)), np.ones(2)),
     ae.ShapeError, ["bahdanau_attention:", "W2 has shape (5, 4)", "d_a = 2", "bound by W1 (2, 3)"]),
    ("bahdanau-v-d_a", lambda: ae.bahdanau_attention(S, H, np.ones((2, 3)), np.ones((2, 4)), np.ones(5)),
     ae.ShapeError, ["bahdanau_attention:", "v has shape (5,)", "d_a = 2", "bound by W1 (2, 3)"]),
    ("bahdanau-v-column", lambda: ae.bahdanau_attention(S, H, np.ones((2, 3)), np.ones((2, 4)), np.ones((2, 1))),
     ae.ShapeError, ["bahdanau_attention:", "v has shape (2, 1)", "(2 dimensions)", "(d_a)", "exactly 1 dimension"]),
    ("bahdanau-int-W", lambda: ae.bahdanau_attention(S, H, np.ones((2, 3), int), np.ones((2, 4)), np.ones(2)),
     TypeError, ["bahdanau_attention:", "W1 has dtype int64"]),
    # --- Luong ------------------------------------------------------------------------------------
    ("luong-bad-score", lambda: ae.luong_attention(S, H, "additive"), ValueError,
     ["luong_attention:", "score must be one of", "'dot', 'general', 'concat'", "'additive'"]),
    ("luong-W-for-dot", lambda: ae.luong_attention(S, S, "dot", W=np.eye(3)), TypeError,
     ["luong_attention:", "score='dot' takes no W"]),
    ("luong-v-for-general", lambda: ae.luong_attention(S, H, "general", W=np.ones((3, 4)), v=np.ones(2)), TypeError,
     ["luong_attention:", "score='general' takes no v"]),
    ("luong-general-needs-W", lambda: ae.luong_attention(S, H, "general"), TypeError,
     ["luong_attention:", "score='general' needs W"]),
    ("luong-concat-needs-v", lambda: ae.luong_attention(S, H, "concat", W=np.ones((2, 7))), TypeError,
     ["luong_attention:", "score='concat' needs v"]),
    ("luong-dot-d_h", lambda: ae.luong_attention(S, H, "dot"), ae.ShapeError,
     ["luong_attention:", "H has shape (6, 4)", "d_s = 3", "bound by S (5, 3)", "d_h = d_s"]),
    ("luong-general-W", lambda: ae.luong_attention(S, H, "general", W=np.ones((4, 3))), ae.ShapeError,
     ["luong_attention:", "W has shape (4, 3)", "(d_s, d_h)", "d_s = 3", "looks transposed"]),
    ("luong-concat-W", lambda: ae.luong_attention(S, H, "concat", W=np.ones((2, 6)), v=np.ones(2)), ae.ShapeError,
     ["luong_attention:", "W has shape (2, 6)", "3 + 4 = 7 columns", "S (5, 3)", "H (6, 4)"]),
    ("luong-concat-v", lambda: ae.luong_attention(S, H, "concat", W=np.ones((2, 7)), v=np.ones(3)), ae.ShapeError,
     ["luong_attention:", "W has shape (2, 7)", "d_a = 3", "bound by v (3,)"]),
    ("luong-None-S", lambda: ae.luong_attention(None, H), TypeError,
     ["luong_attention:", "S is None"]),
    # --- self / cross ------------------------------------------------------------------------------
    ("self-W_Q-d_model", lambda: ae.self_attention(Q, np.ones((4, 2)), np.ones((3, 2)), np.ones((3, 2))),
     ae.ShapeError, ["self_attention:", "W_Q has shape (4, 2)", "d_model = 3", "bound by X (5, 3)"]),
    ("self-W_K-d_k", lambda: ae.self_attention(Q, np.ones((3, 2)), np.ones((3, 3)), np.ones((3, 2))),
     ae.ShapeError, ["self_attention:", "W_K has shape (3, 3)", "d_k = 2", "bound by W_Q (3, 2)"]),
    ("self-mask", lambda: ae.self_attention(Q, np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 2)), ae.causal_mask(4)),
     ae.ShapeError, ["self_attention:", "mask has shape (4, 4)", "m = 5 from X (5, 3)"]),
    ("cross-X_kv-d_model", lambda: ae.cross_attention(Q, np.ones((6, 4)), np.ones((3, 2)), np.ones((3, 2)),
                                                      np.ones((3, 2))), ae.ShapeError,
     ["cross_attention:", "X_kv has shape (6, 4)", "d_model = 3", "bound by X_q (5, 3)"]),
    # --- multi-head --------------------------------------------------------------------------------
    ("mha-heads-not-dividing", lambda: ae.multi_head_attention(Q, K, W3x6, W3x6, W3x6, W3x6.T, 4), ae.ShapeError,
     ["multi_head_attention:", "W_Q has shape (3, 6)", "6", "num_heads = 4"]),
    ("mha-heads-not-dividing-W_V", lambda: ae.multi_head_attention(Q, K, W3x6, W3x6, np.ones((3, 4)),
                                                                   np.ones((4, 3)), 3), ae.ShapeError,
     ["multi_head_attention:", "W_V has shape (3, 4)", "4", "num_heads = 3"]),
    ("mha-W_O", lambda: ae.multi_head_attention(Q, K, W3x6, W3x6, W3x6, np.ones((5, 3)), 2), ae.ShapeError,
     ["multi_head_attention:", "W_O has shape (5, 3)", "= 6", "bound by W_V (3, 6)"]),
    ("mha-W_K", lambda: ae.multi_head_attention(Q, K, W3x6, np.ones((3, 4)), W3x6, W3x6.T, 2), ae.ShapeError,
     ["multi_head_attention:", "W_K has shape (3, 4)", "= 6", "bound by W_Q (3, 6)"]),
    ("mha-X_kv", lambda: ae.multi_head_attention(Q, V, W3x6, W3x6, W3x6, W3x6.T, 2), ae.ShapeError,
     ["multi_head_attention:", "X_kv has shape (6, 4)", "d_model = 3", "bound by X_q (5, 3)"]),
    # a torch-style (B, 1, 1, n) mask with a head axis would silently make the batch (B, B)
    ("mha-mask-head-axis", lambda: ae.multi_head_attention(np.ones((2, 5, 3)), np.ones((2, 4, 3)), W3x6, W3x6, W3x6,
                                                           W3x6.T, 2, np.ones((2, 1, 1, 4), bool)), ae.ShapeError,
     ["multi_head_attention:", "mask has shape (2, 1, 1, 4)", "batch (2,)", "(2, 2)", "no head axis"]),
    ("mha-num_heads-zero", lambda: ae.multi_head_attention(Q, K, W3x6, W3x6, W3x6, W3x6.T, 0), ValueError,
     ["multi_head_attention:", "num_heads must be a positive int", "got 0"]),
    ("mha-num_heads-float", lambda: ae.multi_head_attention(Q, K, W3x6, W3x6, W3x6, W3x6.T, 2.0), ValueError,
     ["multi_head_attention:", "num_heads", "got 2.0"]),
    # a mask passed where num_heads goes: NumPy said "only integer scalar arrays can be converted"
    ("mha-num_heads-array", lambda: ae.multi_head_attention(Q, K, W3x6, W3x6, W3x6, W3x6.T, np.ones((5, 6), bool)),
     ValueError, ["multi_head_attention:", "num_heads must be a positive int", "got an array of shape (5, 6)"]),
    ("luong-score-array", lambda: ae.luong_attention(S, H, np.array("dot")), ValueError,
     ["luong_attention:", "score must be one of ('dot', 'general', 'concat')"]),
    ("softmax-0d", lambda: ae.softmax(np.array(3.0), axis=0), ae.ShapeError,
     ["softmax:", "x is a single number (shape ())", "at least one dimension"]),
    ("gradcheck-eps", lambda: ae.gradcheck(ae.scaled_dot_product_attention_steps,
                                           ae.scaled_dot_product_attention_backward, dict(Q=Q, K=K, V=V), eps=0),
     ValueError, ["gradcheck:", "eps must be a finite number > 0", "got 0"]),
    ("blockwise-cost-block", lambda: ae.blockwise.memory_model.blockwise_cost(4, 4, 2, 2, block=5), ValueError,
     ["blockwise_cost:", "block must be a pair of positive ints, got 5"]),
    ("qk-intensity-zero", lambda: ae.costs.qk_arithmetic_intensity(0, 3, 2), ValueError,
     ["qk_arithmetic_intensity:", "m must be a positive int, got 0"]),
    ("loop-scaled-text", lambda: ae.attention_loop(Q, K, V, scaled="no"), TypeError,
     ["attention_loop:", "scaled must be True or False, got 'no'"]),
    ("split-not-dividing", lambda: ae.split_heads(np.ones((3, 5)), 2), ae.ShapeError,
     ["split_heads:", "X has shape (3, 5)", "5", "num_heads = 2"]),
    ("merge-rank", lambda: ae.merge_heads(np.ones((3, 5))), ae.ShapeError,
     ["merge_heads:", "X has shape (3, 5)", "(..., H, L, d)", "at least 3"]),
    # --- masks' builders and loops ------------------------------------------------------------------
    ("causal-zero", lambda: ae.causal_mask(0), ValueError, ["causal_mask:", "m must be a positive int", "got 0"]),
    ("causal-float", lambda: ae.causal_mask(3, 2.5), ValueError, ["causal_mask:", "n must be a positive int", "2.5"]),
    ("padding-float-lengths", lambda: ae.padding_mask(np.array([1.0, 2.0]), 3), TypeError,
     ["padding_mask:", "lengths has dtype float64", "integers"]),
    ("padding-too-long", lambda: ae.padding_mask(np.array([1, 4]), 3), ValueError,
     ["padding_mask:", "[0, n = 3]"]),
    ("padding-list-of-floats", lambda: ae.padding_mask([1, 2.0], 3), TypeError,
     ["padding_mask:", "lengths is a list holding 2.0 (float)", "must be an int"]),
    ("padding-tuple-of-bools", lambda: ae.padding_mask((True, 2), 3), TypeError,
     ["padding_mask:", "lengths is a tuple holding True (bool)"]),
    ("padding-list-too-long", lambda: ae.padding_mask([1, 4], 3), ValueError, ["padding_mask:", "[0, n = 3]"]),
    ("padding-set", lambda: ae.padding_mask({1, 2}, 3), TypeError,
     ["padding_mask:", "lengths is a set, not an array"]),
    ("padding-2d", lambda: ae.padding_mask(np.ones((2, 2), int), 3), ae.ShapeError,
     ["padding_mask:", "lengths has shape (2, 2)", "(B)"]),
    ("loop-batched", lambda: ae.attention_loop(Q[None], K, V), ae.ShapeError,
     ["attention_loop:", "Q has shape (1, 5, 3)", "(m, d_k)", "exactly 2"]),
    ("loop-mask-3d", lambda: ae.attention_loop(Q, K, V, np.ones((1, 5, 6), bool)), ae.ShapeError,
     ["attention_loop:", "mask has shape (1, 5, 6)", "(m, n), (1, n) or (n,)"]),
    ("bahdanau-loop-W2", lambda: ae.bahdanau_attention_loop(S, H, np.ones((2, 3)), np.ones((2, 3)), np.ones(2)),
     ae.ShapeError, ["bahdanau_attention_loop:", "W2 has shape (2, 3)", "d_h = 4", "bound by H (6, 4)"]),
    # --- found by audit 73: each was a traceback from inside NumPy or array-api-compat, or a silent zero -------------
    ("masked-array", lambda: SDPA(np.ma.masked_array(Q), K, V), TypeError,      # numpy.ma's broadcast error
     ["scaled_dot_product_attention:", "Q is a MaskedArray, not an array", "numpy.asarray"]),
    ("lengths-an-int", lambda: ae.padding_mask(2, 3), TypeError, ["padding_mask:", "lengths is an int, not an array"]),
    ("backend-int-dtype", lambda: ae.Backend(np, dtype="int32"), ValueError,    # normal() gave all zeros
     ["Backend:", "'float32' or 'float64'", "'int32'"]),
    ("backend-none", lambda: ae.Backend(None), TypeError, ["Backend:", "xp must be", "got None"]),
    ("backend-negative-size", lambda: ae.numpy_backend().normal((-1, 3)), ValueError,
     ["Backend.normal:", "shape", "(-1, 3)"]),
    ("steps-by-position", lambda: ae.scaled_dot_product_attention_steps(Q, K, V)[0], TypeError,
     ["scaled_dot_product_attention:", "by name, not 0", "scores, scaled_scores, weights, output"]),
]


def test_the_table_is_large_enough():
    assert len(BAD_CALLS) >= 30
    assert len({row[0] for row in BAD_CALLS}) == len(BAD_CALLS)


@pytest.mark.parametrize("call, kind, fragments", [row[1:] for row in BAD_CALLS], ids=[row[0] for row in BAD_CALLS])
def test_bad_call_raises_a_clear_error(call, kind, fragments):
    with pytest.raises(kind) as info:
        call()
    assert type(info.value).__module__.split(".")[0] in ("builtins", "attention_edu"), (
        f"raised {type(info.value).__module__}.{type(info.value).__name__}, not one of ours")
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} missing from: {message}"
    # raised by one of the library's checks, not from deep inside NumPy
    raised_in = traceback.extract_tb(info.value.__traceback__)[-1].filename
    assert f"{os.sep}attention_edu{os.sep}" in raised_in, raised_in


def test_shape_error_is_a_value_error():
    assert issubclass(ae.ShapeError, ValueError)
    with pytest.raises(ValueError):
        SDPA(Q, V, V)


def test_mixed_devices_name_both_arguments():
    dev1 = array_api_strict.Device("device1")
    Qs = array_api_strict.asarray(Q)
    with pytest.raises(ValueError) as info:
        SDPA(Qs, array_api_strict.asarray(K, device=dev1), array_api_strict.asarray(V))
    assert "scaled_dot_product_attention: K is on device" in str(info.value)
    assert "but Q is on device" in str(info.value)


def test_numpy_integers_are_accepted_where_sizes_are_expected():
    """Sizes often come from NumPy (lengths.max(), x.shape products): they are ints too."""
    np.testing.assert_array_equal(ae.causal_mask(np.int64(3)), ae.causal_mask(3))
    np.testing.assert_array_equal(ae.padding_mask(np.array([1, 2]), np.int64(3)), ae.padding_mask(np.array([1, 2]), 3))
    np.testing.assert_array_equal(ae.split_heads(W3x6, np.int32(2)), ae.split_heads(W3x6, 2))
    with pytest.raises(ValueError, match="causal_mask: m must be a positive int, got True"):
        ae.causal_mask(True)
    np.testing.assert_array_equal(ae.blockwise_attention(Q, K, V, block_size=np.int64(2)),
                                  ae.blockwise_attention(Q, K, V, block_size=2))


def test_a_softmax_of_extreme_but_finite_logits_is_right_and_quiet():
    """x − max(x) of ±1e308 overflows to −inf, whose exp is the right 0: no RuntimeWarning (the suite makes it an
    error), and the overflow message tells float64 users only to scale down."""
    np.testing.assert_array_equal(ae.softmax(np.array([1e308, -1e308])), [1.0, 0.0])
    with pytest.raises(ValueError) as info:
        ae.scaled_dot_product_attention(np.full((2, 3), 1e200), np.full((2, 3), 1e200), np.ones((2, 3)))
    assert str(info.value).endswith("too large for float64; scale them down")


def test_blockwise_attention_on_a_tensor_that_requires_grad_does_not_warn():
    torch = pytest.importorskip("torch")
    t = torch.ones(3, 4, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # torch warned when its max was turned into a float
        assert ae.blockwise_attention(t, t, t).shape == (3, 4)


def _overflowing_calls():
    Q = np.full((2, 3), 1e20, dtype=np.float32)
    I = np.eye(3, dtype=np.float32)
    return {
        "dot_product_attention": lambda: ae.dot_product_attention(Q, Q, Q),
        "scaled_dot_product_attention": lambda: ae.scaled_dot_product_attention(Q, Q, Q),
        "luong_attention": lambda: ae.luong_attention(Q, Q, "general", W=I),
        "self_attention": lambda: ae.self_attention(Q, I, I, I),
        "cross_attention": lambda: ae.cross_attention(Q, Q, I, I, I),
        "multi_head_attention": lambda: ae.multi_head_attention(Q, Q, I, I, I, I, 1),
        "attention_loop": lambda: ae.attention_loop(Q, Q, Q),
        "blockwise_attention": lambda: ae.blockwise_attention(Q, Q, Q),
    }


@pytest.mark.parametrize("name", sorted(_overflowing_calls()))
def test_scores_that_overflow_get_one_clear_error_naming_the_caller(name):
    """Q and K near 1e20 in float32: the scores exceed float32's range. No RuntimeWarning may come
    first (this suite turns them into errors), and the error names the function called."""
    with pytest.raises(ValueError, match=rf"^{name}: the scores overflow .* too large for float32"):
        _overflowing_calls()[name]()


@pytest.mark.parametrize("method", ["auto", "portable"])
def test_blockwise_attention_names_a_list_argument(method):
    with pytest.raises(TypeError, match=r"^blockwise_attention: Q is a list, not an array"):
        ae.blockwise_attention([[1.0, 2.0]], np.ones((3, 2)), np.ones((3, 2)), method=method)


def test_models_name_a_backend_that_is_not_one(tmp_path):
    from attention_edu import seq2seq
    from attention_edu.seq2seq import Seq2Seq
    from attention_edu.seq2seq.config import ModelConfig
    from attention_edu.transformer import Transformer, TransformerConfig

    config = ModelConfig("reverse", "luong-dot", "abcd", "abcd", embedding=3, hidden=4)
    with pytest.raises(TypeError, match="Seq2Seq.initialize: backend must be a Backend.*got 'cupy'"):
        Seq2Seq.initialize(config, backend="cupy")
    with pytest.raises(TypeError, match="Transformer.initialize: backend must be a Backend.*got 'cupy'"):
        Transformer.initialize(TransformerConfig("sort", layers=1, heads=1, d_model=4), backend="cupy")
    Seq2Seq.initialize(config).save(tmp_path / "m.npz")
    with pytest.raises(TypeError, match="load: backend must be a Backend.*got 'float32'"):
        seq2seq.load(tmp_path / "m.npz", backend="float32")


def test_a_multi_head_mask_may_add_only_unit_batch_axes():
    rng = np.random.default_rng(0)
    X, W = rng.standard_normal((4, 6)), [rng.standard_normal((6, 6)) for _ in range(4)]
    one = ae.padding_mask(np.array([3]), 4)                         # (1, 1, 4) on an unbatched input
    out, weights = ae.multi_head_attention(X, X, *W, 2, one)
    assert out.shape == (1, 4, 6) and weights.shape == (1, 2, 4, 4)
    assert np.all(weights[..., 3] == 0)
    with pytest.raises(ae.ShapeError, match="for several masks on one input"):
        ae.multi_head_attention(X, X, *W, 2, ae.padding_mask(np.array([3, 2]), 4))


def test_steps_iterate_as_a_mapping_of_their_names():
    steps = ae.scaled_dot_product_attention_steps(Q, K, V)     # list(steps) read "attribute name must be string"
    assert list(steps) == list(steps.names) and len(steps) == 4
    assert dict(steps).keys() == set(steps.names) and np.array_equal(dict(steps)["weights"], steps.weights)


def test_a_torch_tensor_of_integers_is_told_a_conversion_torch_has():
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError, match=r"convert it, e\.g\. Q\.double\(\)"):   # it said Q.astype('float64')
        SDPA(torch.ones(3, 4, dtype=torch.int64), torch.ones(5, 4), torch.ones(5, 2))
