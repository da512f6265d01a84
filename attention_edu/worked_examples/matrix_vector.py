"""Worked examples of "The matrix formulation of scaled dot-product attention" and
"Neural attention mechanism vectorization" (shapes, masks, loops against one matmul)."""

from __future__ import annotations

import math

from ..backend import host_numpy as np
from ..dot_product import scaled_dot_product_attention_steps
from ..loops import attention_loop
from ..masks import causal_mask, padding_mask
from ..multi_head import multi_head_attention_steps
from ..projections import self_attention_steps
from .catalogue import Builder, register

MATRIX = "The matrix formulation of scaled dot-product attention"
VECTOR = "Neural attention mechanism vectorization: alignment scores between queries and keys"


@register("matrix.flow", "Scores, scaling, row-wise softmax, weighted sum: every shape",
          f"{MATRIX} (the four steps and the flowchart)")
def _flow(ex: Builder) -> None:
    rng = np.random.default_rng(12)
    n, d_k, d_v = 4, 3, 2
    Q, K, V = rng.standard_normal((n, d_k)), rng.standard_normal((n, d_k)), rng.standard_normal((n, d_v))
    ex.inputs.update(Q=Q, K=K, V=V, seed=12)
    steps = scaled_dot_product_attention_steps(Q, K, V)
    ex.steps = steps
    dims = {"n": n, "d_k": d_k, "d_v": d_v}
    ex.say(f"n = {n}, d_k = {d_k}, d_v = {d_v} (random, seed 12)",
           f"1. Scores = Q Kᵀ: (n × d_k)(d_k × n) → {steps.scores.shape}",
           f"2. Scaled = Scores / √d_k: {steps.scaled_scores.shape}",
           f"3. W = softmax by rows: {steps.weights.shape}, row sums {np.round(steps.weights.sum(axis=1), 12)}",
           f"4. Output = W V: (n × n)(n × d_v) → {steps.output.shape}")
    ex.shape("Q_shape", "n × d_k", Q.shape, dims)
    ex.shape("K_transpose_shape", "d_k × n", K.T.shape, dims)
    ex.shape("scores_shape", "n × n", steps.scores.shape, dims)
    ex.shape("scaled_scores_shape", "n × n", steps.scaled_scores.shape, dims)
    ex.shape("weights_shape", "n × n", steps.weights.shape, dims)
    ex.shape("output_shape", "n × d_v", steps.output.shape, dims)
    ex.answer("rows_sum_to_1", "each row of W sums to 1", steps.weights.sum(axis=1),
              bool(np.allclose(steps.weights.sum(axis=1), 1.0)))


@register("matrix.exercise", "Exercise: implement scaled dot-product attention",
          f"{MATRIX}, closing paragraph (it announces the hands-on exercise)")
def _matrix_exercise(ex: Builder) -> None:
    """computed: weights, output for the inputs Q (4, 8), K (6, 8), V (6, 5) (seed 13)."""
    rng = np.random.default_rng(13)
    Q, K, V = rng.standard_normal((4, 8)), rng.standard_normal((6, 8)), rng.standard_normal((6, 5))
    ex.inputs.update(Q=Q, K=K, V=V, seed=13)
    steps = scaled_dot_product_attention_steps(Q, K, V)
    ex.steps = steps
    ex.computed.update(weights=steps.weights, output=steps.output)
    ex.say("A reference answer on random inputs (seed 13), m = 4 queries, n = 6 keys:",
           *(f"{name:14s} shape {shape}" for name, shape in steps.shapes.items()))
    loop_out, loop_w = attention_loop(Q, K, V)
    ex.answer("matches_loop", "the vectorized answer equals the loop oracle",
              float(np.max(np.abs(loop_out - steps.output))),
              bool(np.allclose(loop_out, steps.output) and np.allclose(loop_w, steps.weights)))


@register("vector.shapes", "Single-head, multi-head and batched shapes of Q, K and the scores",
          f"{VECTOR}, sections 1 and 3")
def _shapes(ex: Builder) -> None:
    rng = np.random.default_rng(14)
    B, H, L, d_k, d_model = 2, 4, 6, 8, 32
    X = rng.standard_normal((B, L, d_model))  # (B, L, d_model)
    W_Q, W_K, W_V, W_O = (rng.standard_normal((d_model, d_model)) / math.sqrt(d_model)
                          for _ in range(4))
    ex.inputs.update(X=X, W_Q=W_Q, W_K=W_K, W_V=W_V, W_O=W_O, num_heads=H, seed=14)
    single = self_attention_steps(X[0], W_Q[:, :d_k], W_K[:, :d_k], W_V[:, :d_k])
    heads = multi_head_attention_steps(X[0], X[0], W_Q, W_K, W_V, W_O, H)
    batched = multi_head_attention_steps(X, X, W_Q, W_K, W_V, W_O, H)
    ex.steps = batched
    dims = {"B": B, "H": H, "L": L, "d_k": d_k, "d_v": d_k}
    ex.say(f"B = {B}, H = {H}, L = {L}, d_k = d_model / H = {d_k} (random, seed 14)",
           f"single head: Q {single.Q.shape}, S {single.scores.shape}, O {single.output.shape}",
           f"multi-head:  Q {heads.Q.shape}, S {heads.scores.shape}",
           f"batched:     Q {batched.Q.shape}, K {batched.K.shape}, S {batched.scores.shape}")
    ex.shape("single_Q", "(L, d_k)", single.Q.shape, dims)
    ex.shape("single_K_transpose", "(d_k, L)", single.K.T.shape, dims)
    ex.shape("single_S", "(L, L)", single.scores.shape, dims)
    ex.shape("single_A", "(L, L)", single.weights.shape, dims)
    ex.shape("single_V", "(L, d_v)", single.V.shape, dims)
    ex.shape("single_O", "(L, d_v)", single.output.shape, dims)
    ex.shape("multi_head_Q", "(H, L, d_k)", heads.Q.shape, dims)
    ex.shape("batched_Q", "(B, H, L, d_k)", batched.Q.shape, dims)
    ex.shape("batched_K", "(B, H, L, d_k)", batched.K.shape, dims)
    ex.shape("batched_S", "(B, H, L, L)", batched.scores.shape, dims)


@register("vector.masks", "Padding and causal masks applied before the softmax",
          f"{VECTOR}, section 4.1 (Causal or padding masks) and 4.2")
def _masks(ex: Builder) -> None:
    rng = np.random.default_rng(15)
    B, L, d_k = 2, 4, 3
    Q, K, V = (rng.standard_normal((B, L, d)) for d in (d_k, d_k, 2))
    lengths = np.array([4, 2])
    mask = padding_mask(lengths, L) & causal_mask(L)  # (B, 1, L) & (L, L) -> (B, L, L)
    ex.inputs.update(Q=Q, K=K, V=V, lengths=lengths, mask=mask, seed=15)
    steps = scaled_dot_product_attention_steps(Q, K, V, mask)
    ex.steps = steps
    big_negative = np.where(mask, steps.scaled_scores, steps.scaled_scores - 1e9)  # "a large negative value"
    w_big = np.exp(big_negative - big_negative.max(axis=-1, keepdims=True))
    w_big = w_big / w_big.sum(axis=-1, keepdims=True)
    after = np.where(mask, scaled_dot_product_attention_steps(Q, K, V).weights, 0.0)  # masking too late
    ex.computed.update(weights=steps.weights, mask_after_softmax_row_sums=after.sum(axis=-1))
    ex.say(f"Sequence lengths {lengths.tolist()} padded to L = {L}; padding mask {padding_mask(lengths, L).shape}"
           f" & causal mask {causal_mask(L).shape} → mask {mask.shape} (True = may attend)",
           f"masked scores are −inf before the softmax; weights {steps.weights.shape}",
           "Zeroing weights after the softmax instead leaves rows that no longer sum to 1: "
           f"{np.round(after.sum(axis=-1), 3).tolist()}")
    ex.answer("masked_weights_zero", "disallowed positions get weight exactly 0",
              float(np.max(np.abs(steps.weights[~mask]))), bool(np.all(steps.weights[~mask] == 0)))
    ex.answer("rows_sum_to_1", "every row still sums to 1", steps.weights.sum(axis=-1),
              bool(np.allclose(steps.weights.sum(axis=-1), 1.0)))
    ex.answer("large_negative_same", "adding −1e9 instead of −inf gives the same weights",
              float(np.max(np.abs(w_big - steps.weights))), bool(np.allclose(w_big, steps.weights)))
    ex.answer("after_softmax_differs", "masking after the softmax breaks the row sums",
              after.sum(axis=-1), not np.allclose(after.sum(axis=-1), 1.0))


def _scores_by_loops(Q: np.ndarray, K: np.ndarray) -> np.ndarray:
    scores = np.empty((Q.shape[0], K.shape[0]))  # (L, L)
    for i in range(Q.shape[0]):
        for j in range(K.shape[0]):
            scores[i, j] = float(np.dot(Q[i], K[j])) / math.sqrt(Q.shape[1])
    return scores


@register("vector.loops-vs-matmul", "Scoring one pair at a time against one matrix product",
          f"{VECTOR}, section 3 (Vectorization) and section 5")
def _loops_vs_matmul(ex: Builder) -> None:
    rng = np.random.default_rng(16)
    L, d_k = 64, 16
    Q, K = rng.standard_normal((L, d_k)), rng.standard_normal((L, d_k))
    ex.inputs.update(Q=Q, K=K, seed=16)
    steps = scaled_dot_product_attention_steps(Q, K, K)
    ex.steps = steps
    looped = _scores_by_loops(Q, K)
    # No timing here: the catalogue is deterministic. Notebook 06 and `attention-edu bench`
    # time the two versions.
    ex.computed.update(dot_products_in_loop=L * L, matrix_products=1)
    ex.say(f"L = {L}, d_k = {d_k}: {L * L:,} separate dot products against one (L, d_k) @ (d_k, L);",
           "notebook 06 and `attention-edu bench` time them.")
    ex.answer("same_scores", "the loop and the matrix product give the same scores",
              float(np.max(np.abs(looped - steps.scaled_scores))),
              bool(np.allclose(looped, steps.scaled_scores)))

