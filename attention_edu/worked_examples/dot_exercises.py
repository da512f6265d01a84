"""Exercises of "Section 5.2: Dot-Product Attention" (no printed solutions).

``computed`` holds the answers (keys documented per builder) that
``check_answer`` compares with; checks here test properties of those answers.
"""

from __future__ import annotations

import math

from .. import costs
from ..backend import host_numpy as np
from ..dot_product import dot_product_attention_steps
from ..loops import attention_loop
from .catalogue import Builder, register

EXERCISES = 'Section 5.2: Dot-Product Attention — The Core Mechanism, section "Exercises"'


def entropy(weights: np.ndarray) -> np.ndarray:
    """Entropy −Σ p ln p of each row (nats), with 0 · ln 0 = 0."""
    safe = np.where(weights > 0, weights, 1.0)
    return -np.sum(weights * np.log(safe), axis=-1)


@register("dot.exercise-1", "Exercise 1: attention by hand for Q = I, K = V = [[1, 1], [1, 0]]",
          f"{EXERCISES}, 1 (Hand compute)")
def _exercise_1(ex: Builder) -> None:
    """computed: scores, weights, output (unscaled, as the section defines); *_scaled (÷√2)."""
    Q = np.array([[1.0, 0.0], [0.0, 1.0]])
    K = np.array([[1.0, 1.0], [1.0, 0.0]])
    V = K.copy()
    ex.inputs.update(Q=Q, K=K, V=V)
    steps = dot_product_attention_steps(Q, K, V)
    ex.steps = steps
    scaled_out, scaled_w = attention_loop(Q, K, V, scaled=True)
    ex.computed.update(scores=steps.scores, weights=steps.weights, output=steps.output,
                       weights_scaled=scaled_w, output_scaled=scaled_out)
    e = math.e
    ex.say("scores Q Kᵀ = [[1, 1], [1, 0]] (shape (2, 2))",
           "row 1: softmax([1, 1]) = [0.5, 0.5] → output 0.5·[1, 1] + 0.5·[1, 0] = [1, 0.5]",
           f"row 2: softmax([1, 0]) = [e/(e+1), 1/(e+1)] = [{e / (e + 1):.4f}, {1 / (e + 1):.4f}]"
           f" → output [1, {e / (e + 1):.4f}]",
           f"(with the next section's ÷√2: output {np.round(scaled_out, 4).tolist()})")
    loop_out, _ = attention_loop(Q, K, V, scaled=False)
    ex.answer("matches_loop", "library output equals the explicit loop", loop_out,
              bool(np.allclose(loop_out, steps.output)))
    ex.answer("closed_form", "output = [[1, 0.5], [1, e/(e+1)]]", steps.output,
              bool(np.allclose(steps.output, [[1.0, 0.5], [1.0, e / (e + 1)]])))


@register("dot.exercise-2", 'Exercise 2: attention weights of "The cat sat on the mat" as a heatmap',
          f"{EXERCISES}, 2 (Visualize)")
def _exercise_2(ex: Builder) -> None:
    """computed: weights (6, 6) for the heatmap, tokens. Embeddings are random (seed 21), W = I."""
    rng = np.random.default_rng(21)
    vocabulary = {word: rng.standard_normal(4) for word in ("the", "cat", "sat", "on", "mat")}
    tokens = ["The", "cat", "sat", "on", "the", "mat"]
    X = np.stack([vocabulary[t.lower()] for t in tokens])  # (6, 4)
    ex.inputs.update(X=X, tokens=tokens, seed=21)
    steps = dot_product_attention_steps(X, X, X)
    ex.steps = steps
    ex.computed.update(weights=steps.weights, tokens=tokens)
    ex.say("Random 4-dimensional word vectors (seed 21), one per word; \"The\" and \"the\" share one.",
           f"weights shape {steps.weights.shape}; plot rows (queries) against columns (keys).",
           "Patterns: each word's largest weight is usually itself (x·x = |x|² is large);",
           "the two \"the\" rows are identical and so are their columns.")
    ex.answer("rows_sum_to_1", "each row sums to 1", steps.weights.sum(axis=1),
              bool(np.allclose(steps.weights.sum(axis=1), 1.0)))
    ex.answer("same_word_same_row", 'the rows of "The" and "the" are equal', steps.weights[[0, 4]],
              bool(np.allclose(steps.weights[0], steps.weights[4])))


def _count_loop_flops(n: int, d: int) -> int:
    """Count every multiply and add of the two products, done as multiply-accumulate loops."""
    count = 0
    for _ in range(n):  # queries
        for _ in range(n):  # keys: score = Σ_a q_a k_a, then weighted sum Σ_j w_j v_j over d
            count += 2 * d  # scores: d multiplies + d adds (into an accumulator that starts at 0)
            count += 2 * d  # output: for each of d output entries, one multiply and one add
    return count


@register("dot.exercise-3", "Exercise 3: FLOPs of attention for n = 1000, d = 512",
          f"{EXERCISES}, 3 (Complexity)")
def _exercise_3(ex: Builder) -> None:
    """computed: qk_flops, av_flops, total_flops (the two products; the main answer),
    scale_flops, softmax_flops, total_flops_with_softmax, projection_flops, score_entries.

    Convention: a multiply and an add are 2 FLOPs (2·m·k·n per product);
    d_k = d_v = d = 512; the softmax is ≈ 5 FLOPs per score.
    """
    n, d = 1000, 512
    ex.inputs.update(n=n, d=d)
    qk, av = costs.matmul_flops(n, d, n), costs.matmul_flops(n, n, d)
    total = costs.scaled_dot_product_flops(n, n, d, d)
    ex.computed.update(qk_flops=qk, av_flops=av, total_flops=total, scale_flops=n * n,
                       softmax_flops=5 * n * n,
                       total_flops_with_softmax=costs.scaled_dot_product_flops(n, n, d, d, softmax=True),
                       projection_flops=costs.qkv_projection_flops(n, d, d), score_entries=n * n)
    ex.say(f"Q Kᵀ: 2·n·d·n = {qk:,};  A V: 2·n·n·d = {av:,};  together {total:,} FLOPs",
           f"scaling n² = {n * n:,} and softmax ≈ 5n² = {5 * n * n:,} add {6 * n * n:,} (0.3%)",
           f"(computing Q, K, V from X would add 6·n·d² = {costs.qkv_projection_flops(n, d, d):,})")
    counted = _count_loop_flops(4, 3)
    ex.answer("formula_matches_count", "2·n²·(d_k + d_v) equals an explicit count (n = 4, d = 3)",
              counted, counted == costs.scaled_dot_product_flops(4, 4, 3, 3))


@register("dot.exercise-4", "Exercise 4: tying W^Q = W^K makes the score matrix symmetric",
          f"{EXERCISES}, 4 (Separate projections)")
def _exercise_4(ex: Builder) -> None:
    """computed: scores_tied, scores_untied, weights_tied, is_symmetric_tied, is_symmetric_untied."""
    rng = np.random.default_rng(44)
    X = rng.standard_normal((5, 6))  # (n, d_model)
    W_tied, W_K = rng.standard_normal((6, 4)), rng.standard_normal((6, 4))  # (d_model, d_k)
    ex.inputs.update(X=X, W_Q=W_tied, W_K_untied=W_K, seed=44)
    tied = dot_product_attention_steps(X @ W_tied, X @ W_tied, X)
    untied = dot_product_attention_steps(X @ W_tied, X @ W_K, X)
    ex.steps = tied
    S, U = tied.scores, untied.scores  # (5, 5)
    ex.computed.update(scores_tied=S, scores_untied=U, weights_tied=tied.weights,
                       is_symmetric_tied=bool(np.allclose(S, S.T)),
                       is_symmetric_untied=bool(np.allclose(U, U.T)))
    ex.say("Tied: scores = (X W)(X W)ᵀ = X W Wᵀ Xᵀ, a symmetric (5, 5) matrix: i scores j as j scores i.",
           "Its diagonal |x_i W|² ≥ 0, so every token tends to attend to itself.",
           "The weights are still not symmetric (each row is normalised separately).",
           "Useful when the relation is symmetric (similarity, clustering) and to save d_model·d_k "
           "parameters; it cannot express one-way relations (a pronoun looking for its noun).")
    ex.answer("tied_is_symmetric", "S = Sᵀ when W^Q = W^K", float(np.max(np.abs(S - S.T))),
              bool(np.allclose(S, S.T)))
    ex.answer("untied_is_not", "S ≠ Sᵀ for separate W^Q, W^K", float(np.max(np.abs(U - U.T))),
              not np.allclose(U, U.T))
    ex.answer("self_scores_nonnegative", "diag(S) = |x_i W|² ≥ 0", np.diagonal(S),
              bool(np.all(np.diagonal(S) >= 0)))


@register("dot.exercise-5", "Exercise 5: entropy of attention rows",
          f"{EXERCISES}, 5 (Attention entropy)")
def _exercise_5(ex: Builder) -> None:
    """computed: entropy_cat_sat_mat (per row, nats), max_entropy (ln n), entropy_uniform,
    entropy_one_hot, entropy_chat, entropy_assis. Natural logarithm; 0 · ln 0 = 0."""
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])  # "cat sat mat"
    steps = dot_product_attention_steps(X, X, X)
    chat = np.array([0.05, 0.82, 0.03, 0.02, 0.03, 0.05])
    assis = np.array([0.03, 0.08, 0.75, 0.04, 0.05, 0.05])
    ex.inputs.update(X=X, chat=chat, assis=assis)
    ex.steps = steps
    H = entropy(steps.weights)  # (3,)
    ex.computed.update(entropy_cat_sat_mat=H, max_entropy=math.log(3),
                       entropy_uniform=float(entropy(np.full(3, 1 / 3))),
                       entropy_one_hot=float(entropy(np.array([0.0, 1.0, 0.0]))),
                       entropy_chat=float(entropy(chat)), entropy_assis=float(entropy(assis)))
    ex.say("H(row) = −Σ_j α_j ln α_j: 0 for a one-hot row (attends to one key), ln n for uniform.",
           f'"cat sat mat" rows: {np.round(H, 4)} nats (max ln 3 = {math.log(3):.4f})',
           f"chat: {ex.computed['entropy_chat']:.4f}, assis: {ex.computed['entropy_assis']:.4f} nats "
           f"(max ln 6 = {math.log(6):.4f}): low entropy = focused, high = spread out")
    ex.answer("bounds", "0 ≤ H ≤ ln n for every row", H,
              bool(np.all(H >= 0) and np.all(H <= math.log(3) + 1e-12)))
    ex.answer("uniform_is_max", "a uniform row has entropy ln n", ex.computed["entropy_uniform"],
              math.isclose(ex.computed["entropy_uniform"], math.log(3)))
    ex.answer("one_hot_is_zero", "a one-hot row has entropy 0", ex.computed["entropy_one_hot"],
              ex.computed["entropy_one_hot"] == 0.0)
