"""Worked examples of "Attention Mechanisms: Fundamentals" that run a mechanism.

Bahdanau's example, the one-query scaled dot-product example, the 5-token
projection example, the illustrative distributions and the causal mask.
"""

from __future__ import annotations

import math

from .. import costs
from ..additive import bahdanau_attention_steps
from ..backend import host_numpy as np
from ..dot_product import scaled_dot_product_attention_steps
from ..masks import causal_mask
from ..projections import self_attention_steps
from ..softmax import softmax
from .catalogue import Builder, register

FUND = "Attention Mechanisms: Fundamentals"
ROUNDED_TERMS = "sums of the terms after each was rounded to 3 decimals"


@register("fund.translation-distributions", '"The cat sat on the mat" → French: two attention rows',
          f'{FUND}, section "Attention Solution", Example')
def _translation(ex: Builder) -> None:
    source = ["The", "cat", "sat", "on", "the", "mat"]
    chat = np.array([0.05, 0.82, 0.03, 0.02, 0.03, 0.05])
    assis = np.array([0.03, 0.08, 0.75, 0.04, 0.05, 0.05])
    ex.inputs.update(source_tokens=source, chat=chat, assis=assis)
    alignment = np.stack([chat, assis])  # (2, 6): rows "chat", "assis"
    ex.computed.update(alignment=alignment, alignment_rows=["chat", "assis"], alignment_columns=source)
    ex.say("The chapter gives the two rows; they are stacked into a (2, 6) alignment matrix",
           "(rows: French words being generated, columns: English positions) for a heatmap.")
    for name, row in (("chat", chat), ("assis", assis)):
        ex.given(f"{name}_is_a_distribution", str(row.tolist()), float(np.sum(row)),
                 bool(np.all(row >= 0)) and abs(float(np.sum(row)) - 1) < 1e-9,
                 "non-negative and sums to 1")
    ex.value("chat_weight_on_cat", "82%", chat[1])
    ex.value("assis_weight_on_sat", "75%", assis[2])
    ex.given("chat_peaks_at_cat", "position 2 (\"cat\")", int(np.argmax(chat)) + 1,
             int(np.argmax(chat)) == 1, "largest weight of the row")
    ex.given("assis_peaks_at_sat", "position 3 (\"sat\")", int(np.argmax(assis)) + 1,
             int(np.argmax(assis)) == 2, "largest weight of the row")
    french = ["Le", "chat", "était", "assis", "sur", "le", "tapis"]
    ex.computed.update(target_tokens=french)
    ex.given("six_english_words", "all six English words", len(source), len(source) == 6,
             "tokens of the source sentence")
    ex.given("seven_french_words", "all seven French words", len(french), len(french) == 7,
             '"Le chat était assis sur le tapis"')
    ex.note("Illustrative: the text gives these weights without the states that would produce them. "
            'Its context vectors are c_2 for "chat" and c_4 for "assis", their positions in the '
            "French sentence.")


def _unit_score_weights(H: np.ndarray, scores: np.ndarray) -> tuple:
    """W1, W2, v, s that make Bahdanau's scores equal ``scores`` for encoder states H."""
    W2 = 20.0 * np.linalg.pinv(H.T)  # (n, d_h): W2 h_i = 20 e_i and tanh(20) = 1.0 in float64
    return np.zeros((H.shape[0], H.shape[1])), W2, scores.copy(), np.zeros((1, H.shape[1]))


@register("fund.bahdanau-example", "Bahdanau attention: scores (0.8, 2.1, 0.5) → weights → c_2",
          f'{FUND}, section "Additive Attention (Bahdanau)", Example')
def _bahdanau_example(ex: Builder) -> None:
    H = np.array([[1.0, 0.5, -0.3, 0.8], [0.3, 0.9, 0.6, -0.2], [-0.4, 0.2, 0.7, 0.5]])  # (n=3, d_h=4)
    e = np.array([0.8, 2.1, 0.5])
    W1, W2, v, s = _unit_score_weights(H, e)
    ex.inputs.update(H=H, scores_given=e, W1=W1, W2=W2, v=v, s_2=s)
    steps = bahdanau_attention_steps(s, H, W1, W2, v)
    ex.steps = steps
    weights, context = steps.weights[0], steps.context[0]  # (3,), (4,)
    exps = np.exp(e)
    ex.say("The text gives the scores e_2,i, not W1, W2, v. To run them through the library,",
           "take d_a = 3, W1 = 0 and W2 = 20·pinv(Hᵀ) so that tanh(W2 h_i) = e_i (unit vector);",
           "then vᵀ tanh(·) = v_i, and v = (0.8, 2.1, 0.5) reproduces the scores exactly.",
           f"Step 1  scores e: {np.round(steps.scores[0], 4)}   shape {steps.scores.shape}",
           f"Step 2  exp(e) = {np.round(exps, 4)}, sum = {exps.sum():.4f}; α = exp(e)/sum = "
           f"{np.round(weights, 4)}   shape {steps.weights.shape}",
           f"Step 3  c_2 = Σ α_i h_i = {np.round(context, 4)}   shape {steps.context.shape}")
    ex.value("scores", "[0.8, 2.1, 0.5]", steps.scores[0])
    ex.value("exp_scores", "[2.23, 8.17, 1.65]", exps)
    printed_exps = np.round(exps, 2)  # the chapter's rounded intermediates: 2.23, 8.17, 1.65
    ex.value("exp_sum", "12.05", exps.sum(), from_rounded=printed_exps.sum(),
             cause="adds the rounded exponentials 2.23 + 8.17 + 1.65; exp sum is 12.040")
    ex.value("weights", "[0.185, 0.678, 0.137]", weights)
    ex.value("top_weight_percent", "67.8%", weights[1])
    terms = (weights[:, None] * H).T  # (d_h, n): row = component, column = α_i h_i
    rounded_terms = (np.round(weights, 3)[:, None] * H).T  # (d_h, n): from the printed weights
    ex.value("context_terms", "[[0.185, 0.203, -0.055], [0.093, 0.610, 0.027], "
             "[-0.056, 0.407, 0.096], [0.148, -0.136, 0.069]]", terms, from_rounded=rounded_terms,
             cause="products of the rounded weights (0.185 × 0.5 = 0.0925 → 0.093); "
                   "the unrounded weights give 0.0924")
    ex.value("context", "[0.333, 0.730, 0.447, 0.081]", context,
             from_rounded=np.sum(np.round(terms, 3), axis=1),
             cause=f"{ROUNDED_TERMS} (0.185 + 0.203 − 0.055); α·H gives 0.3335")


@register("fund.sdpa-example", "Scaled dot-product attention: one query, three keys",
          f'{FUND}, section "Computational Efficiency", Example (one query, 3 keys, d_k = 4, d_v = 5)')
def _sdpa_example(ex: Builder) -> None:
    q = np.array([[1.0, 0.5, -0.3, 0.8]])  # (m=1, d_k=4)
    K = np.array([[0.8, 0.2, -0.1, 0.5], [0.3, 0.7, 0.4, -0.2], [-0.5, 0.1, 0.9, 0.6]])  # (3, 4)
    V = np.array([[0.5, 0.8, -0.2, 0.6, 0.3], [0.2, -0.4, 0.7, 0.1, 0.9],
                  [-0.3, 0.5, 0.4, -0.6, 0.2]])  # (n=3, d_v=5)
    ex.inputs.update(q=q, K=K, V=V)
    steps = scaled_dot_product_attention_steps(q, K, V)
    ex.steps = steps
    weights = steps.weights[0]  # (3,)
    exps = np.exp(steps.scaled_scores[0])
    ex.say(f"Step 1  scores = q Kᵀ, shape {steps.scores.shape}: {np.round(steps.scores[0], 4)}",
           f"Step 2  divide by √d_k = 2: {np.round(steps.scaled_scores[0], 4)}",
           f"Step 3  softmax: exp = {np.round(exps, 5)}, sum = {exps.sum():.5f}, weights = "
           f"{np.round(weights, 5)}, shape {steps.weights.shape}",
           f"Step 4  output = weights V, shape {steps.output.shape}: {np.round(steps.output[0], 5)}")
    ex.value("products", "[[0.8, 0.1, 0.03, 0.4], [0.3, 0.35, -0.12, -0.16], "
             "[-0.5, 0.05, -0.27, 0.48]]", q * K)
    ex.value("scores", "[1.33, 0.37, -0.24]", steps.scores[0])
    ex.value("sqrt_d_k", "2", math.sqrt(4))
    ex.value("scaled_scores", "[0.665, 0.185, -0.120]", steps.scaled_scores[0])
    ex.value("unscaled_factor_d_k_64", "4", math.sqrt(64 / 4))
    ex.value("unscaled_factor_d_k_512", "≈ 11.3", math.sqrt(512 / 4))
    ex.value("exp_scaled_scores", "[1.945, 1.203, 0.887]", exps,
             cause="exp(0.665) = 1.94449 rounds to 1.944: the printed 1.945 is one unit off "
                   "in the last digit")
    ex.value("exp_sum", "4.035", exps.sum())
    ex.value("weights", "[0.482, 0.298, 0.220]", weights)
    ex.value("top_weight_percent", "48.2%", weights[0])
    terms = (weights[:, None] * V).T  # (d_v, n): row = component, column = α_i v_i
    ex.value("output_terms", "[[0.241, 0.060, -0.066], [0.386, -0.119, 0.110], "
             "[-0.096, 0.209, 0.088], [0.289, 0.030, -0.132], [0.145, 0.268, 0.044]]", terms)
    ex.value("output", "[0.235, 0.377, 0.201, 0.187, 0.457]", steps.output[0],
             from_rounded=np.sum(np.round(terms, 3), axis=1),
             cause=f"{ROUNDED_TERMS} (0.386 − 0.119 + 0.110 = 0.377); weights·V gives 0.3762 "
                   "and 0.2003")


@register("fund.qkv-example", "Projecting 5 tokens of width 512 to one 64-wide head",
          f'{FUND}, section "Projecting to QKV", Example')
def _qkv_example(ex: Builder) -> None:
    rng = np.random.default_rng(7)
    X = rng.standard_normal((5, 512))  # (n, d_model)
    W_Q, W_K, W_V = (rng.standard_normal((512, 64)) / math.sqrt(512) for _ in range(3))
    ex.inputs.update(X=X, W_Q=W_Q, W_K=W_K, W_V=W_V, seed=7)
    steps = self_attention_steps(X, W_Q, W_K, W_V)
    ex.steps = steps
    ex.say("X and the weights are random (seed 7): the text fixes only the shapes.",
           *(f"{name:14s} shape {shape}" for name, shape in steps.shapes.items()))
    ex.value("params_per_matrix", "32,768", costs.qkv_params(512, 64) // 3)
    ex.value("flops_per_projection", "327,680", costs.matmul_flops(5, 512, 64))
    ex.value("flops_three_projections", "983,040", costs.qkv_projection_flops(5, 512, 64))
    for name in ("Q", "K", "V"):
        ex.shape(f"{name}_shape", "5 × 64", steps[name].shape)
    ex.shape("weights_shape", "5 × 5", steps.weights.shape)
    ex.shape("output_shape", "5 × 64", steps.output.shape)


@register("fund.attention-matrix-example", "A 5 × 5 attention matrix and how to read it",
          f'{FUND}, section "Projecting to QKV", Example (attention computation)')
def _attention_matrix_example(ex: Builder) -> None:
    A = np.array([[0.45, 0.25, 0.15, 0.10, 0.05], [0.10, 0.50, 0.25, 0.10, 0.05],
                  [0.05, 0.15, 0.40, 0.30, 0.10], [0.05, 0.10, 0.20, 0.50, 0.15],
                  [0.05, 0.05, 0.10, 0.25, 0.55]])  # (5, 5)
    V = np.random.default_rng(11).standard_normal((5, 64))  # (n, d_v); random, seed 11
    ex.inputs.update(A=A, V=V)
    output = A @ V  # (5, 64)
    ex.computed.update(row_sums=A.sum(axis=1), output=output)
    ex.say("A is given (nothing to compute it from); rows are queries, columns keys.",
           f"Row sums: {A.sum(axis=1)}; output A V with a random V (seed 11): shape {output.shape}")
    ex.given("rows_are_distributions", "each row of A sums to 1", A.sum(axis=1),
             bool(np.allclose(A.sum(axis=1), 1.0) and np.all(A >= 0)), "non-negative, rows sum to 1")
    ex.value("position_1_on_itself", "45%", A[0, 0])
    ex.value("position_1_on_2", "25%", A[0, 1])
    ex.value("position_5_on_itself", "55%", A[4, 4])
    ex.value("position_5_on_4", "25%", A[4, 3])
    ex.given("largest_on_itself", "positions 1 and 5 attend most to themselves",
             [int(np.argmax(A[0])) + 1, int(np.argmax(A[4])) + 1],
             int(np.argmax(A[0])) == 0 and int(np.argmax(A[4])) == 4, "row maxima on the diagonal")
    ex.shape("output_shape", "5 × 64", output.shape)


@register("fund.causal-mask", "Masked (causal) attention: M_ij = −∞ for j > i",
          f'{FUND}, section "Attention Variants", Masked Attention')
def _causal_mask(ex: Builder) -> None:
    rng = np.random.default_rng(3)
    Q, K, V = rng.standard_normal((4, 3)), rng.standard_normal((4, 3)), rng.standard_normal((4, 2))
    mask = causal_mask(4)  # (4, 4) bool, True = may attend
    ex.inputs.update(Q=Q, K=K, V=V, mask=mask, seed=3)
    steps = scaled_dot_product_attention_steps(Q, K, V, mask)
    ex.steps = steps
    future = ~mask
    ex.say("mask[i, j] = (j ≤ i); the chapter's additive M is 0 where the mask is True, −∞ elsewhere.",
           "Masked scores become −∞ before the softmax, so exp(−∞) = 0 weight on every future key.")
    ex.value("future_weights", "0", float(np.max(np.abs(steps.weights[future]))))
    M = np.where(mask, 0.0, -np.inf)  # (4, 4)
    chapter_form = softmax((Q @ K.T + M) / math.sqrt(3))  # the text adds M before dividing
    ex.answer("chapter_formula_agrees", "softmax((QKᵀ + M)/√d_k) equals masking after scaling",
              float(np.max(np.abs(chapter_form - steps.weights))),
              bool(np.allclose(chapter_form, steps.weights)), "−∞/√d_k is still −∞")
    V_changed = V.copy()
    V_changed[2:] += 10.0  # change the last two tokens only
    K_changed = K.copy()
    K_changed[2:] -= 5.0
    changed = scaled_dot_product_attention_steps(Q, K_changed, V_changed, mask).output
    ex.answer("past_ignores_future", "outputs 1-2 do not change when tokens 3-4 change",
              float(np.max(np.abs(changed[:2] - steps.output[:2]))),
              bool(np.array_equal(changed[:2], steps.output[:2])))
    ex.answer("rows_sum_to_1", "every row of the weights sums to 1", steps.weights.sum(axis=1),
              bool(np.allclose(steps.weights.sum(axis=1), 1.0)))
