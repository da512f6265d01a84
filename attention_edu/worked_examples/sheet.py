"""Worked examples of the one-page sheet "Self-Attention Matrix Operations" (5 tokens, d = 3)."""

from __future__ import annotations

import math

from .. import costs
from ..backend import host_numpy as np
from ..dot_product import scaled_dot_product_attention_steps
from ..softmax import softmax
from .catalogue import Builder, register
from .printed import parse_printed

SHEET = "Self-attention matrix operations (one-page sheet)"
PRINTED_SCORES = ("[[0.67, 0.71, 0.58, 0.69, 0.64], [0.52, 0.49, 0.44, 0.51, 0.53], "
                  "[0.61, 0.67, 0.54, 0.63, 0.56], [0.68, 0.73, 0.59, 0.69, 0.70], "
                  "[0.50, 0.58, 0.48, 0.55, 0.48]]")
PRINTED_WEIGHTS = ("[[0.189, 0.204, 0.176, 0.201, 0.190], [0.203, 0.199, 0.192, 0.201, 0.205], "
                   "[0.194, 0.205, 0.188, 0.199, 0.194], [0.197, 0.208, 0.185, 0.197, 0.203], "
                   "[0.196, 0.208, 0.189, 0.201, 0.196]]")


@register("sheet.example-5x3", "Five tokens, d = 3: scores, weights and output",
          f'{SHEET}, "Computation Example"')
def _example(ex: Builder) -> None:
    X = np.array([[0.5, 0.8, 0.3], [0.2, 0.6, 0.9], [0.7, 0.4, 0.1], [0.3, 0.9, 0.5], [0.6, 0.2, 0.8]])
    Q = np.array([[0.6, 0.4, 0.5], [0.3, 0.7, 0.2], [0.5, 0.3, 0.6], [0.4, 0.8, 0.3], [0.7, 0.2, 0.4]])
    K = np.array([[0.4, 0.6, 0.3], [0.5, 0.4, 0.7], [0.3, 0.5, 0.4], [0.6, 0.3, 0.5], [0.2, 0.7, 0.6]])
    V = np.array([[0.7, 0.3, 0.5], [0.4, 0.6, 0.2], [0.6, 0.4, 0.7], [0.5, 0.7, 0.3], [0.3, 0.5, 0.8]])
    ex.inputs.update(X=X, Q=Q, K=K, V=V)
    steps = scaled_dot_product_attention_steps(Q, K, V)
    ex.steps = steps
    printed_scores = parse_printed(PRINTED_SCORES).value  # (5, 5)
    printed_weights = parse_printed(PRINTED_WEIGHTS).value  # (5, 5)
    ex.computed.update(softmax_of_printed_scores=softmax(printed_scores / math.sqrt(3)))
    ex.say("The sheet gives Q, K, V directly (W_Q, W_K, W_V are not printed, so X is not used).",
           f"Scores Q Kᵀ {steps.scores.shape}, ÷ √3, softmax by rows {steps.weights.shape}, "
           f"times V → output {steps.output.shape}",
           f"V's columns all average {V.mean(axis=0).tolist()}: near-uniform weights give outputs near 0.5.")
    ex.shape("X_shape", "(5, 3)", X.shape)
    for name, array in (("Q", Q), ("K", K), ("V", V)):
        ex.shape(f"{name}_shape", "(5, 3)", array.shape)
    ex.value("sqrt_d_k", "1.732", math.sqrt(3))
    ex.value("scores", PRINTED_SCORES, steps.scores,
             cause="not Q Kᵀ of the printed Q and K: q_1·k_1 = 0.6·0.4 + 0.4·0.6 + 0.5·0.3 = 0.63")
    ex.shape("scores_shape", "(5, 5)", steps.scores.shape)
    ex.value("weights", PRINTED_WEIGHTS, steps.weights,
             cause="neither softmax(Q Kᵀ/√3) nor softmax of the printed scores / √3 (row 1 would be "
                   "[0.201, 0.206, 0.191, 0.204, 0.198])")
    sums = printed_weights.sum(axis=1)
    slack = printed_weights.shape[1] * 0.0005  # five weights, each rounded to 3 decimals
    ex.given("printed_weight_rows_sum_to_1", "Sum = 1.0 (each row)", sums,
             bool(np.all(np.abs(sums - 1) <= slack + 1e-12)),
             f"a softmax row sums to 1, and rounding its five weights to 3 decimals moves the sum "
             f"by at most {slack:.4f}; the printed rows add to "
             f"{', '.join(f'{x:.3f}' for x in sums)}")
    ex.value("output", "[[0.50, 0.50, 0.50], [0.50, 0.50, 0.50], [0.50, 0.50, 0.50], "
             "[0.50, 0.50, 0.50], [0.50, 0.50, 0.50]]", steps.output,
             cause="the output with uniform weights (each V column averages 0.5); the actual "
                   "outputs range from 0.488 to 0.507")
    ex.shape("output_shape", "(5, 3)", steps.output.shape)


@register("sheet.memory", "Score entries for n = 5 and n = 1000",
          f'{SHEET}, "Computation Example", Key Point on O(n²) memory')
def _memory(ex: Builder) -> None:
    ex.inputs.update(n_small=5, n_large=1000)
    ex.computed.update(bytes_fp32_1000=costs.attention_matrix_bytes(1, 1, 1000, 1000, 4))
    ex.say("One score per (query, key) pair: n² entries.",
           f"n = 1000 in FP32: {costs.attention_matrix_bytes(1, 1, 1000, 1000, 4):,} bytes per head")
    ex.value("entries_5", "25", 5 * 5)
    ex.value("entries_1000", "1,000,000", 1000 * 1000)
