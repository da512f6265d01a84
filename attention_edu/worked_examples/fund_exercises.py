"""The four exercises of "Attention Mechanisms: Fundamentals" and their printed solutions.

``computed`` holds the answers a checker compares with (keys documented in
each builder); the checks compare the chapter's printed solutions.
"""

from __future__ import annotations

import math

from .. import costs
from ..additive import bahdanau_attention_steps
from ..backend import host_numpy as np
from ..dot_product import scaled_dot_product_attention_steps
from ..softmax import softmax, softmax_jacobian
from .catalogue import Builder, register

EXERCISES = 'Attention Mechanisms: Fundamentals, sections "Exercises" and "Solutions"'


@register("fund.exercise-1", "Exercise 1: Bahdanau weights for 4 encoder states, d_a = 2",
          f"{EXERCISES}, Exercise 1")
def _exercise_1(ex: Builder) -> None:
    """computed: scores, weights (the definition, W1 s + W2 h_i); *_solution_order (W1 h_i + W2 s)."""
    W1 = np.array([[0.5, -0.3, 0.2], [0.4, 0.6, -0.1]])  # (d_a=2, 3)
    W2 = np.array([[0.3, 0.5, 0.2], [-0.2, 0.4, 0.6]])  # (d_a=2, 3)
    v = np.array([1.0, 0.8])  # (d_a,)
    H = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])  # (n=4, d_h=3)
    s = np.array([[0.5, 0.5, 0.5]])  # (m=1, d_s=3)
    ex.inputs.update(W1=W1, W2=W2, v=v, H=H, s=s)
    steps = bahdanau_attention_steps(s, H, W1, W2, v)  # the definition: W1 s + W2 h_i
    swapped = bahdanau_attention_steps(s, H, W2, W1, v)  # the solution's order: W1 h_i + W2 s
    ex.steps = steps
    ex.computed.update(scores=steps.scores[0], weights=steps.weights[0],
                       scores_solution_order=swapped.scores[0],
                       weights_solution_order=swapped.weights[0])
    pre_1 = W1 @ H[0] + W2 @ s[0]  # (2,): the solution's first pre-activation, recomputed
    ex.say("The chapter defines e_i = vᵀ tanh(W1 s + W2 h_i); its solution writes W1 h_i + W2 s.",
           "Both are computable here (d_s = d_h = 3), so both are shown:",
           f"definition:     W1 s = {W1 @ s[0]}, scores {np.round(steps.scores[0], 4)}, "
           f"weights {np.round(steps.weights[0], 4)}",
           f"solution order: W1 h_1 = {W1 @ H[0]}, W2 s = {W2 @ s[0]}, scores "
           f"{np.round(swapped.scores[0], 4)}, weights {np.round(swapped.weights[0], 4)}",
           f"features tanh(W1 s + W2 h_i): shape {steps.features.shape}; weights shape {steps.weights.shape}")
    ex.value("W1_h1", "[0.3, 0.3]", W1 @ H[0],
             cause="W1 h_1 = [0.5 + 0.2, 0.4 − 0.1] = [0.7, 0.3]; the text writes 0.5 − 0.2",
             convention="printed as [0.5 − 0.2, 0.4 − 0.1]")
    ex.value("W2_s", "[0.5, 0.4]", W2 @ s[0])
    ex.value("preactivation_1", "[0.8, 0.7]", pre_1, cause="carries the slip in W1 h_1: [1.2, 0.7]")
    ex.value("tanh_1", "[0.664, 0.604]", np.tanh(pre_1), cause="tanh of the slipped [0.8, 0.7]")
    ex.value("score_1", "1.147", steps.scores[0, 0],
             cause="from the slipped pre-activation; e_1 = 1.157 by the definition, 1.317 in the "
                   "solution's own order")
    ex.value("scores", "[1.147, 1.089, 1.118, 0.856]", steps.scores[0],
             cause="no reading reproduces them: the definition gives [1.157, 1.433, 1.219, 1.005], "
                   "the solution's order [1.317, 0.953, 1.313, 0.837]")
    ex.value("weights", "[0.268, 0.252, 0.260, 0.220]", steps.weights[0],
             cause="the definition gives [0.236, 0.311, 0.251, 0.203]; the printed weights are not "
                   "the softmax of the printed scores either ([0.273, 0.258, 0.265, 0.204])")


@register("fund.exercise-2", "Exercise 2: shapes and Q Kᵀ FLOPs for Q (10, 64), K (20, 64), V (20, 128)",
          f"{EXERCISES}, Exercise 2")
def _exercise_2(ex: Builder) -> None:
    """computed: output_shape, attention_shape, qk_flops."""
    rng = np.random.default_rng(2)
    Q, K, V = (rng.standard_normal(shape) for shape in ((10, 64), (20, 64), (20, 128)))
    ex.inputs.update(Q=Q, K=K, V=V, seed=2)
    steps = scaled_dot_product_attention_steps(Q, K, V)
    ex.steps = steps
    flops = costs.matmul_flops(10, 64, 20)
    ex.computed.update(output_shape=steps.output.shape, attention_shape=steps.weights.shape,
                       qk_flops=flops)
    ex.say("Random Q, K, V of the given shapes (seed 2) through the library:",
           *(f"{name:14s} shape {shape}" for name, shape in steps.shapes.items()),
           f"Q Kᵀ: 2 · m · d_k · n = 2 · 10 · 64 · 20 = {flops:,} FLOPs (multiply and add counted)")
    ex.shape("output_shape", "10 × 128", steps.output.shape)
    ex.shape("attention_shape", "10 × 20", steps.weights.shape)
    ex.value("qk_flops", "25,600", flops)
    ex.note("The solution names the score matrix Q Kᵀ \"A\"; the weights softmax(Q Kᵀ/√d_k) "
            "have the same shape.")


@register("fund.exercise-3", "Exercise 3: unscaled variance 64 and its effect on softmax gradients",
          f"{EXERCISES}, Exercise 3")
def _exercise_3(ex: Builder) -> None:
    """computed: softmax_unscaled, gradient_unscaled, softmax_scaled, gradient_scaled.

    "Gradient" is read as the diagonal of the softmax Jacobian, p_i (1 − p_i):
    the values printed for the unscaled case match that reading.
    """
    z = np.array([20.0, 18.0, -15.0, -18.0])
    ex.inputs.update(d_k=64, z=z)
    p, p_scaled = softmax(z), softmax(z / math.sqrt(64))
    grad = np.diagonal(softmax_jacobian(p))  # (4,): p_i (1 − p_i)
    grad_scaled = np.diagonal(softmax_jacobian(p_scaled))
    ex.computed.update(softmax_unscaled=p, gradient_unscaled=grad, softmax_scaled=p_scaled,
                       gradient_scaled=grad_scaled)
    ex.say("Var(q·k) = 64 · 1 · 1 = 64, σ = 8, so ±3σ is ±24.",
           f"softmax(z) = {np.round(p, 4)}, ∂p_i/∂z_i = p_i(1 − p_i) = {np.round(grad, 4)}",
           f"z/8 = {z / 8}; softmax = {np.round(p_scaled, 4)}, p_i(1 − p_i) = {np.round(grad_scaled, 4)}")
    ex.value("variance", "64", 64 * 1.0 * 1.0)
    ex.value("std", "8", math.sqrt(64))
    ex.value("three_sigma_range", "[-24, 24]", [-3 * math.sqrt(64), 3 * math.sqrt(64)])
    ex.value("softmax_unscaled", "[0.881, 0.119, 0, 0]", p)
    ex.value("gradient_unscaled", "[0.105, 0.105, 0, 0]", grad)
    ex.value("z_scaled", "[2.5, 2.25, -1.875, -2.25]", z / math.sqrt(64))
    ex.value("softmax_scaled", "[0.476, 0.378, 0.061, 0.085]", p_scaled,
             cause="softmax(z/8) is [0.556, 0.433, 0.0070, 0.0048]; the printed row even puts "
                   "more weight on −2.25 than on −1.875")
    ex.value("gradient_scaled", "[0.249, 0.235, 0.057, 0.078]", grad_scaled,
             cause="p(1 − p) of the wrong printed softmax (0.476 × 0.524 = 0.249)")


@register("fund.exercise-4", "Exercise 4: scaled dot-product attention, lengths 5 and 10, d_k = 32, d_v = 48",
          f"{EXERCISES}, Exercise 4")
def _exercise_4(ex: Builder) -> None:
    """computed: output_shape_5, weights_shape_5, weights_5 (heatmap), *_10, *_5_by_10."""
    rng = np.random.default_rng(4)
    ex.inputs.update(seed=4, d_k=32, d_v=48)
    lines = []
    for label, m, n in (("5", 5, 5), ("10", 10, 10), ("5_by_10", 5, 10)):
        Q, K, V = rng.standard_normal((1, m, 32)), rng.standard_normal((1, n, 32)), rng.standard_normal((1, n, 48))
        steps = scaled_dot_product_attention_steps(Q, K, V)  # batch of 1, as in the solution
        if label == "5":
            ex.steps = steps
        ex.computed.update({f"output_shape_{label}": steps.output.shape,
                            f"weights_shape_{label}": steps.weights.shape,
                            f"weights_{label}": steps.weights[0]})
        lines.append(f"m = {m:2d}, n = {n:2d}: output {steps.output.shape}, weights {steps.weights.shape}")
    ex.say("Random inputs (seed 4) with a batch axis of 1, as the solution uses:", *lines,
           "The solution tests length 5 only; lengths 10 and 5 queries × 10 keys are added here.")
    ex.shape("output_shape_5", "(1, 5, 48)", ex.computed["output_shape_5"])
    ex.shape("weights_shape_5", "(1, 5, 5)", ex.computed["weights_shape_5"])
    w = ex.computed["weights_5"]
    ex.answer("rows_sum_to_1", "each heatmap row sums to 1", w.sum(axis=-1),
              bool(np.allclose(w.sum(axis=-1), 1.0)))
