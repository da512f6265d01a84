"""The chapters' printed numbers, recomputed by each mechanism, and softmax's calculus.

Each test compares the library with a number the chapter prints, at the
precision printed. Where the chapter's number is wrong, the test asserts the
correct value and a comment says what was printed and why it differs; the
computations are never adjusted to match print.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import attention_edu as ae


def rounded(x, places):
    return np.round(np.asarray(x, dtype=np.float64), places)


# ---------------------------------------------------------------------------
# "Attention Mechanisms: Fundamentals", section "Scaled Dot-Product Attention", its example
# ---------------------------------------------------------------------------
SDPA_Q = np.array([[1.0, 0.5, -0.3, 0.8]])
SDPA_K = np.array([[0.8, 0.2, -0.1, 0.5], [0.3, 0.7, 0.4, -0.2], [-0.5, 0.1, 0.9, 0.6]])
SDPA_V = np.array([[0.5, 0.8, -0.2, 0.6, 0.3], [0.2, -0.4, 0.7, 0.1, 0.9], [-0.3, 0.5, 0.4, -0.6, 0.2]])


def test_scaled_dot_product_example_scores_and_weights():
    steps = ae.scaled_dot_product_attention_steps(SDPA_Q, SDPA_K, SDPA_V)
    np.testing.assert_array_equal(rounded(steps.scores, 2), [[1.33, 0.37, -0.24]])
    np.testing.assert_array_equal(rounded(steps.scaled_scores, 3), [[0.665, 0.185, -0.120]])
    exps = np.exp(steps.scaled_scores[0])
    # printed exps: 1.945, 1.203, 0.887, total 4.035. exp(0.665) = 1.94449 is 1.944 at three
    # decimals: the printed 1.945 is off by one in the last place; the total 4.035 holds.
    np.testing.assert_array_equal(rounded(exps, 3), [1.944, 1.203, 0.887])
    assert round(float(np.sum(exps)), 3) == 4.035
    np.testing.assert_array_equal(rounded(steps.weights, 3), [[0.482, 0.298, 0.220]])


def test_scaled_dot_product_example_output():
    output, _ = ae.scaled_dot_product_attention(SDPA_Q, SDPA_K, SDPA_V)
    # printed (0.235, 0.377, 0.201, 0.187, 0.457). Entries 2 and 3 are wrong at print
    # precision: the chapter rounded each product to 3 decimals before summing
    # (0.386 − 0.119 + 0.110 = 0.377; −0.096 + 0.209 + 0.088 = 0.201). Exactly:
    np.testing.assert_array_equal(rounded(output, 3), [[0.235, 0.376, 0.200, 0.187, 0.457]])
    products = np.round(np.array([0.482, 0.298, 0.220])[:, None] * SDPA_V, 3)
    np.testing.assert_array_equal(rounded(np.sum(products, axis=0), 3), [0.235, 0.377, 0.201, 0.187, 0.457])


# ---------------------------------------------------------------------------
# "Section 5.2: Dot-Product Attention": similarity and the "cat sat mat" worked example
# ---------------------------------------------------------------------------
CAT_SAT_MAT = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])


def test_dot_product_similarity_example():
    q = np.array([[1.0, 0.0, 1.0]])
    keys = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])  # k_j, k_m
    steps = ae.dot_product_attention_steps(q, keys, keys)
    np.testing.assert_array_equal(steps.scores, [[2.0, 0.0]])


def test_dot_product_cat_sat_mat():
    steps = ae.dot_product_attention_steps(CAT_SAT_MAT, CAT_SAT_MAT, CAT_SAT_MAT)
    np.testing.assert_array_equal(steps.scores, [[1, 0, 1], [0, 1, 1], [1, 1, 2]])
    # printed weights: cat (0.42, 0.16, 0.42) — reproduced; sat (0.18, 0.33, 0.49) and
    # mat (0.18, 0.18, 0.64) are not the softmax of the printed scores (0, 1, 1) and (1, 1, 2):
    np.testing.assert_array_equal(rounded(steps.weights, 2), [[0.42, 0.16, 0.42], [0.16, 0.42, 0.42],
                                                              [0.21, 0.21, 0.58]])
    # printed outputs: cat (0.84, 0.58) — reproduced; sat (0.67, 0.82) and mat (0.82, 0.82)
    # follow from the wrong weights above. From the correct weights:
    np.testing.assert_array_equal(rounded(steps.output, 2), [[0.84, 0.58], [0.58, 0.84], [0.79, 0.79]])


# ---------------------------------------------------------------------------
# "Attention Mechanisms: Fundamentals", section "Additive Attention (Bahdanau)", its example
# ---------------------------------------------------------------------------
ENCODER = np.array([[1.0, 0.5, -0.3, 0.8], [0.3, 0.9, 0.6, -0.2], [-0.4, 0.2, 0.7, 0.5]])  # h_1, h_2, h_3
SCORES = np.array([0.8, 2.1, 0.5])  # e_{2,1}, e_{2,2}, e_{2,3}


def bahdanau_parameters():
    """Parameters whose scores are exactly the chapter's: the chapter gives scores, not weights.

    W2 maps h_i to 20·e_i (so tanh gives the i-th unit vector to 1e-15), W1 = 0,
    v = the printed scores; then e_{2,i} = vᵀ tanh(W1 s_2 + W2 h_i) = v_i.
    """
    W2 = 20 * np.linalg.pinv(ENCODER.T)  # (d_a = 3, d_h = 4)
    return np.zeros((1, 4)), np.zeros((3, 4)), W2, SCORES.copy()  # s_2, W1, W2, v


def test_bahdanau_example():
    s_2, W1, W2, v = bahdanau_parameters()
    steps = ae.bahdanau_attention_steps(s_2, ENCODER, W1, W2, v)
    np.testing.assert_allclose(steps.scores, [SCORES], atol=1e-12)
    exps = np.exp(steps.scores[0])
    np.testing.assert_array_equal(rounded(exps, 2), [2.23, 8.17, 1.65])
    # printed total 12.05 is the sum of the rounded terms; exactly it is 12.0404 -> 12.04
    assert round(float(np.sum(exps)), 2) == 12.04
    np.testing.assert_array_equal(rounded(steps.weights, 3), [[0.185, 0.678, 0.137]])
    # printed c_2 = (0.333, 0.730, 0.447, 0.081). The first entry is 0.33353 -> 0.334: the
    # chapter summed rounded products (0.185 + 0.203 − 0.055 = 0.333).
    np.testing.assert_array_equal(rounded(steps.context, 3), [[0.334, 0.730, 0.447, 0.081]])
    loop_context, loop_weights = ae.bahdanau_attention_loop(s_2, ENCODER, W1, W2, v)
    np.testing.assert_array_equal(rounded(loop_weights, 3), [[0.185, 0.678, 0.137]])


def test_luong_concat_is_bahdanau_with_W_split_on_the_chapter_example():
    s_2, W1, W2, v = bahdanau_parameters()
    context, weights = ae.luong_attention(s_2, ENCODER, "concat", W=np.concatenate([W1, W2], axis=1), v=v)
    np.testing.assert_array_equal(rounded(weights, 3), [[0.185, 0.678, 0.137]])
    np.testing.assert_array_equal(rounded(context, 3), [[0.334, 0.730, 0.447, 0.081]])


def test_luong_dot_and_general_on_cat_sat_mat():
    _, w_dot = ae.luong_attention(CAT_SAT_MAT, CAT_SAT_MAT, "dot")
    context, w_general = ae.luong_attention(CAT_SAT_MAT, CAT_SAT_MAT, "general", W=np.eye(2))
    np.testing.assert_array_equal(rounded(w_dot[0], 2), [0.42, 0.16, 0.42])
    np.testing.assert_array_equal(rounded(w_general[0], 2), [0.42, 0.16, 0.42])
    np.testing.assert_array_equal(rounded(context[0], 2), [0.84, 0.58])


# ---------------------------------------------------------------------------
# self / cross / multi-head on "cat sat mat": the section does not scale, so the
# √d_k is folded into W_Q (W_Q = √2·I, d_k = 2) to recover its unscaled numbers.
# ---------------------------------------------------------------------------
ROOT2_I, I2 = math.sqrt(2) * np.eye(2), np.eye(2)


def test_self_attention_cat_sat_mat():
    output, weights = ae.self_attention(CAT_SAT_MAT, ROOT2_I, I2, I2)
    np.testing.assert_array_equal(rounded(weights[0], 2), [0.42, 0.16, 0.42])
    np.testing.assert_array_equal(rounded(output[0], 2), [0.84, 0.58])
    _, scaled = ae.self_attention(CAT_SAT_MAT, I2, I2, I2)  # with identity projections it scales:
    np.testing.assert_array_equal(rounded(scaled[0], 2), [0.40, 0.20, 0.40])


def test_cross_attention_cat_query():
    output, weights = ae.cross_attention(CAT_SAT_MAT[:1], CAT_SAT_MAT, ROOT2_I, I2, I2)
    np.testing.assert_array_equal(rounded(weights, 2), [[0.42, 0.16, 0.42]])
    np.testing.assert_array_equal(rounded(output, 2), [[0.84, 0.58]])


def test_multi_head_cat_sat_mat_with_two_identical_heads():
    W_Q = np.concatenate([ROOT2_I, ROOT2_I], axis=1)  # (d_model, H*d_k) = (2, 4)
    W_KV = np.concatenate([I2, I2], axis=1)
    W_O = np.concatenate([I2, I2], axis=0) / 2  # average the two heads: (H*d_v, d_model) = (4, 2)
    output, weights = ae.multi_head_attention(CAT_SAT_MAT, CAT_SAT_MAT, W_Q, W_KV, W_KV, W_O, num_heads=2)
    np.testing.assert_array_equal(rounded(weights[:, 0], 2), [[0.42, 0.16, 0.42]] * 2)
    np.testing.assert_array_equal(rounded(output[0], 2), [0.84, 0.58])


def test_attention_loop_cat_sat_mat():
    output, weights = ae.attention_loop(CAT_SAT_MAT, CAT_SAT_MAT, CAT_SAT_MAT, scaled=False)
    np.testing.assert_array_equal(rounded(output[0], 2), [0.84, 0.58])


# ---------------------------------------------------------------------------
# "Self-attention matrix operations", its 5-token computation example
# ---------------------------------------------------------------------------
def test_sheet_example_5x3():
    Q = np.array([[0.6, 0.4, 0.5], [0.3, 0.7, 0.2], [0.5, 0.3, 0.6], [0.4, 0.8, 0.3], [0.7, 0.2, 0.4]])
    K = np.array([[0.4, 0.6, 0.3], [0.5, 0.4, 0.7], [0.3, 0.5, 0.4], [0.6, 0.3, 0.5], [0.2, 0.7, 0.6]])
    V = np.array([[0.7, 0.3, 0.5], [0.4, 0.6, 0.2], [0.6, 0.4, 0.7], [0.5, 0.7, 0.3], [0.3, 0.5, 0.8]])
    steps = ae.scaled_dot_product_attention_steps(Q, K, V)
    # The sheet prints QKᵀ row 1 as (0.67, 0.71, 0.58, 0.69, 0.64); its own Q and K give
    # (0.63, 0.81, 0.58, 0.73, 0.70), so its score and weight tables are illustrative.
    np.testing.assert_array_equal(rounded(steps.scores[0], 2), [0.63, 0.81, 0.58, 0.73, 0.70])
    assert steps.scores.shape == (5, 5) and steps.output.shape == (5, 3)
    # What holds: weights near uniform 0.2 (0.19..0.21 printed) and outputs near 0.50
    assert np.all(np.abs(steps.weights - 0.2) < 0.02)
    assert np.all(np.abs(steps.output - 0.5) < 0.015)


# ---------------------------------------------------------------------------
# softmax: "Why Scaling Matters: Variance Analysis" (saturation and gradients)
# ---------------------------------------------------------------------------
def test_softmax_saturation():
    p10, p20 = ae.softmax(np.array([10.0, 0.0])), ae.softmax(np.array([20.0, 0.0]))
    # printed "≈ [0.9999, 0.0001]": the exact values are 0.999955 and 4.54e-5
    np.testing.assert_allclose(p10, [0.9999546, 4.5398e-5], rtol=1e-4)
    # printed "≈ [1.0, 2 × 10⁻⁹]"
    assert round(float(p20[0]), 6) == 1.0 and f"{float(p20[1]):.0e}" == "2e-09"


def test_softmax_gradient_illustration():
    unscaled = ae.softmax(np.array([20.0, 18.0, -15.0, -18.0]))
    np.testing.assert_array_equal(rounded(unscaled, 3), [0.881, 0.119, 0.0, 0.0])
    np.testing.assert_array_equal(rounded(np.diagonal(ae.softmax_jacobian(unscaled)), 3), [0.105, 0.105, 0, 0])
    scaled = ae.softmax(np.array([20.0, 18.0, -15.0, -18.0]) / math.sqrt(64))
    # printed softmax(z') ≈ (0.476, 0.378, 0.061, 0.085) and gradient ≈ (0.249, 0.235, 0.057,
    # 0.078); the softmax of the printed z' = (2.5, 2.25, −1.875, −2.25) is instead:
    np.testing.assert_array_equal(rounded(scaled, 3), [0.556, 0.433, 0.007, 0.005])
    np.testing.assert_array_equal(rounded(np.diagonal(ae.softmax_jacobian(scaled)), 3),
                                  [0.247, 0.245, 0.007, 0.005])


@pytest.mark.parametrize("seed", range(5))
def test_softmax_jacobian_matches_finite_differences(seed):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(2, 5)) * 2
    J = ae.softmax_jacobian(ae.softmax(z))  # (2, 5, 5): J[b, i, j] = ∂p_i/∂z_j
    h = 1e-6
    for j in range(5):
        step = np.zeros(5)
        step[j] = h
        column = (ae.softmax(z + step) - ae.softmax(z - step)) / (2 * h)  # ∂p/∂z_j, (2, 5)
        np.testing.assert_allclose(J[:, :, j], column, rtol=0, atol=1e-9)
    np.testing.assert_allclose(np.sum(J, axis=-1), 0, atol=1e-15)
    np.testing.assert_allclose(np.sum(J, axis=-2), 0, atol=1e-15)


@pytest.mark.parametrize("seed", range(5))
def test_softmax_vjp_is_the_jacobian_product(seed):
    rng = np.random.default_rng(seed)
    p = ae.softmax(rng.normal(size=(3, 2, 6)))
    g = rng.normal(size=(3, 2, 6))
    expected = np.einsum("...i,...ij->...j", g, ae.softmax_jacobian(p))
    np.testing.assert_allclose(ae.softmax_vjp(p, g), expected, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_is_stable_for_large_logits(dtype):
    x = np.array([[1000.0, 999.0, 998.0], [-1000.0, -1001.0, -1003.0]], dtype=dtype)
    p = ae.softmax(x)
    assert p.dtype == dtype and np.all(np.isfinite(p))
    expected = ae.softmax(np.array([[2.0, 1.0, 0.0], [3.0, 2.0, 0.0]], dtype=dtype))
    np.testing.assert_allclose(p, expected, rtol=1e-6 if dtype == np.float32 else 1e-13)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        naive = ae.softmax_naive(x)
    assert not np.all(np.isfinite(naive))  # without the max shift exp overflows: why the shift matters


def test_softmax_masked_entries_and_fully_masked_rows():
    p = ae.softmax(np.array([[0.0, -np.inf, 1.0], [-np.inf, -np.inf, -np.inf]]))
    np.testing.assert_allclose(p[0], [1 / (1 + math.e), 0.0, math.e / (1 + math.e)])
    np.testing.assert_array_equal(p[1], [0.0, 0.0, 0.0])
