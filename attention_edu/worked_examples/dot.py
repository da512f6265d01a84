"""Worked examples of "Section 5.2: Dot-Product Attention — The Core Mechanism".

The section uses unscaled attention, softmax(Q Kᵀ) V, so these entries call
:func:`attention_edu.dot_product_attention_steps`.
"""

from __future__ import annotations

from .. import costs
from ..backend import host_numpy as np
from ..dot_product import dot_product_attention_steps
from .catalogue import Builder, register

DOT = "Section 5.2: Dot-Product Attention — The Core Mechanism"
SENTENCE = ["The", "cat", "sat", "on", "the", "mat"]


@register("dot.similarity", "Dot products as similarity: q = [1, 0, 1] against two keys",
          f'{DOT}, section "Computing Attention", Step 1: Measure Similarity')
def _similarity(ex: Builder) -> None:
    q = np.array([[1.0, 0.0, 1.0]])  # (m=1, d_k=3)
    K = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])  # (n=2, d_k=3): k_j, k_m
    ex.inputs.update(q=q, K=K)
    steps = dot_product_attention_steps(q, K, K)
    ex.steps = steps
    ex.say(f"Element-wise products q ⊙ k_j = {q[0] * K[0]}, q ⊙ k_m = {q[0] * K[1]}",
           f"Scores q Kᵀ = {steps.scores[0]}  shape {steps.scores.shape}")
    ex.value("products_j", "[1, 0, 1]", q[0] * K[0])
    ex.value("score_j", "2", steps.scores[0, 0])
    ex.value("products_m", "[0, 0, 0]", q[0] * K[1])
    ex.value("score_m", "0", steps.scores[0, 1])


@register("dot.cat-sat-mat", '"cat sat mat" with W^Q = W^K = W^V = I',
          f'{DOT}, section "Worked Example"')
def _cat_sat_mat(ex: Builder) -> None:
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])  # (n=3, d=2): cat, sat, mat
    W = np.eye(2)  # W^Q = W^K = W^V = I (d, d)
    ex.inputs.update(X=X, W_Q=W, W_K=W, W_V=W, tokens=["cat", "sat", "mat"])
    Q, K, V = X @ W, X @ W, X @ W  # (3, 2) each
    steps = dot_product_attention_steps(Q, K, V)
    ex.steps = steps
    out = steps.output  # (3, 2)
    ex.say("Q = K = V = X, shape (3, 2). Unscaled, as in this section.",
           f"Step 1  scores Q Kᵀ, shape {steps.scores.shape}", f"Step 2  softmax by rows, shape "
           f"{steps.weights.shape}: {np.round(steps.weights, 4).tolist()}",
           f"Step 3  output = weights V, shape {out.shape}: {np.round(out, 4).tolist()}")
    ex.value("scores", "[[1, 0, 1], [0, 1, 1], [1, 1, 2]]", steps.scores)
    ex.value("weights", "[[0.42, 0.16, 0.42], [0.18, 0.33, 0.49], [0.18, 0.18, 0.64]]",
             steps.weights,
             cause="rows 2-3 are not the softmax of the printed scores: softmax([0, 1, 1]) = "
                   "[0.16, 0.42, 0.42], softmax([1, 1, 2]) = [0.21, 0.21, 0.58]")
    ex.value("output_cat", "[0.84, 0.58]", out[0])
    ex.value("output_sat", "[0.67, 0.82]", out[1],
             cause="weighs the values with the wrong row-2 weights (0.18 + 0.49, 0.33 + 0.49)")
    ex.value("output_mat", "[0.82, 0.82]", out[2],
             cause="weighs the values with the wrong row-3 weights (0.18 + 0.64)")


def _soft_lookup_loop(query: np.ndarray, keys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The section's soft lookup, one key at a time (the oracle for the library call)."""
    scores = np.array([float(np.dot(query, k)) for k in keys])
    weights = np.exp(scores - scores.max()) / np.sum(np.exp(scores - scores.max()))
    blended = np.zeros(values.shape[1])  # (d_v,)
    for j in range(keys.shape[0]):
        blended += weights[j] * values[j]
    return blended


@register("dot.soft-lookup", "Hard dictionary lookup against soft (attention) lookup",
          f'{DOT}, section "Attention as Soft Dictionary Lookup"')
def _soft_lookup(ex: Builder) -> None:
    keys = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])  # (n=3, d_k=3)
    values = np.array([[10.0, 0.0], [0.0, 10.0], [5.0, 5.0]])  # (n=3, d_v=2)
    names = ["red", "green", "blue"]
    table = {name: values[i] for i, name in enumerate(names)}
    query = np.array([[0.9, 0.4, 0.0]])  # (1, 3): mostly "red", a little "green"
    ex.inputs.update(keys=keys, values=values, key_names=names, query=query)
    steps = dot_product_attention_steps(query, keys, values)
    ex.steps = steps
    try:
        hard_missing = table["purple"]
    except KeyError:
        hard_missing = "KeyError"
    sharpened = {beta: dot_product_attention_steps(beta * keys[:1], keys, values).output[0]
                 for beta in (1.0, 5.0, 50.0)}
    ex.computed.update(hard_red=table["red"], hard_missing=hard_missing, soft=steps.output[0],
                       soft_weights=steps.weights[0],
                       soft_red_sharpened={str(b): o for b, o in sharpened.items()})
    ex.say("Hard lookup: table['red'] returns one value; table['purple'] raises KeyError.",
           f"Soft lookup of q = {query[0]}: weights {np.round(steps.weights[0], 3)}, "
           f"result {np.round(steps.output[0], 3)} (a blend, never an error)",
           "Scaling the query 'red' by β sharpens the blend towards the hard answer: "
           + ", ".join(f"β={b:g} → {np.round(o, 3)}" for b, o in sharpened.items()))
    ex.answer("soft_matches_loop", "library output equals the one-key-at-a-time loop",
              _soft_lookup_loop(query[0], keys, values),
              bool(np.allclose(_soft_lookup_loop(query[0], keys, values), steps.output[0])))
    ex.answer("soft_never_fails", "the soft result is a convex blend of the values",
              steps.output[0], bool(np.all(steps.output[0] >= values.min(axis=0))
                                    and np.all(steps.output[0] <= values.max(axis=0))))
    ex.answer("sharp_soft_is_hard", "as β grows the soft lookup of 'red' becomes table['red']",
              sharpened[50.0], bool(np.allclose(sharpened[50.0], table["red"], atol=1e-6)))


@register("dot.attention-pattern", 'The attention of "sat" in "The cat sat on the mat"',
          f'{DOT}, section "Attention Patterns"')
def _attention_pattern(ex: Builder) -> None:
    weights = np.array([0.05, 0.70, 0.02, 0.03, 0.05, 0.15])
    ex.inputs.update(tokens=SENTENCE, weights_of_sat=weights)
    ex.computed.update(weights=weights)
    ex.say("Given weights for the query \"sat\" over the six tokens (nothing to compute them from):",
           *(f"{t:4s} {'█' * round(40 * w):<28s} {w:.2f}" for t, w in zip(SENTENCE, weights)))
    ex.given("is_a_distribution", str(weights.tolist()), float(weights.sum()),
             bool(np.all(weights >= 0)) and abs(float(weights.sum()) - 1) < 1e-9,
             "non-negative, sums to 1")
    ex.given("peaks_at_cat", '"cat" (who sat?)', SENTENCE[int(np.argmax(weights))],
             int(np.argmax(weights)) == 1, "largest weight")
    ex.note("The text's bars are not to scale: the two 0.05 weights get 3 and 2 blocks.")


@register("dot.complexity", "Cost table; score entries for n = 100,000",
          f'{DOT}, section "Computational Complexity"')
def _complexity(ex: Builder) -> None:
    n, d = 100_000, 64
    ex.inputs.update(n=n, d_k=d, d_v=d)
    flops = costs.scaled_dot_product_flops(n, n, d, d)
    ex.computed.update(score_entries=n * n, flops_d_64=flops,
                       growth_when_n_doubles=costs.scaled_dot_product_flops(2 * n, 2 * n, d, d) / flops)
    ex.say(f"n² = {n * n:,} score entries: the \"10 billion operations\" count one per entry.",
           f"With d_k = d_v = 64 and 2 FLOPs per multiply-add: 2·n²·(64 + 64) = {flops:,.0f} FLOPs.")
    ex.value("score_entries", "10 billion", n * n)
    ex.answer("quadratic", "doubling n multiplies the cost by 4", ex.computed["growth_when_n_doubles"],
              ex.computed["growth_when_n_doubles"] == 4.0)
