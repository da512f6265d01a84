"""Scaling, saturation and cost figures of "Attention Mechanisms: Fundamentals".

Sections "Why Scaling Matters: Variance Analysis", "Computational
Efficiency" and "Projecting to QKV". Simulations are seeded.
"""

from __future__ import annotations

import math

from .. import costs
from ..backend import host_numpy as np
from ..softmax import softmax, softmax_jacobian
from .catalogue import Builder, register
from .fund_costs import units

FUND = "Attention Mechanisms: Fundamentals"
VARIANCE = f'{FUND}, section "Why Scaling Matters: Variance Analysis"'


def _simulated_scores(d_k: int, pairs: int, seed: int) -> np.ndarray:
    """q·k for ``pairs`` independent unit-variance query/key pairs of width d_k."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((pairs, d_k))  # (pairs, d_k)
    k = rng.standard_normal((pairs, d_k))  # (pairs, d_k)
    return np.sum(q * k, axis=1)  # (pairs,)


@register("fund.scaling-variance", "Var(q·k) = d_k, shown by simulation",
          f"{VARIANCE}, first part")
def _scaling_variance(ex: Builder) -> None:
    ex.inputs.update(d_k=(64, 512), pairs=(20000, 4000), seed=0)
    ex.say("q and k have independent N(0, 1) entries, so Var(q·k) = Σ Var(q_i k_i) = d_k.")
    for d_k, pairs in ((64, 20000), (512, 4000)):
        scores = _simulated_scores(d_k, pairs, seed=d_k)
        var = float(np.var(scores))
        se = float(np.std(scores ** 2) / math.sqrt(pairs))  # standard error of the variance
        scaled = scores / math.sqrt(d_k)
        inside = float(np.mean(np.abs(scaled) <= 3))
        ex.computed.update({f"simulated_var_{d_k}": var, f"simulated_std_{d_k}": math.sqrt(var),
                            f"scaled_within_3_{d_k}": inside})
        ex.say(f"d_k = {d_k:3d}: {pairs} simulated pairs give Var = {var:.1f} (± {se:.1f}), "
               f"std = {math.sqrt(var):.2f}; after ÷√d_k {100 * inside:.1f}% lie in [−3, 3]")
        ex.answer(f"simulated_variance_{d_k}", f"Var(q·k) = d_k = {d_k}", var,
                  abs(var - d_k) < 4 * se, "within 4 standard errors of the simulation")
        ex.answer(f"scaled_mostly_within_3_{d_k}", "scaled scores mostly lie in [−3, 3]", inside,
                  inside > 0.99)
    ex.value("std_d_k_64", "8", math.sqrt(64))
    ex.value("std_d_k_512", "≈ 22.6", math.sqrt(512))


@register("fund.softmax-saturation", "softmax([10, 0]), softmax([20, 0]) and the vanishing gradient",
          f"{VARIANCE}, Softmax Saturation Problem and Gradient Flow Analysis")
def _softmax_saturation(ex: Builder) -> None:
    z10, z20 = np.array([10.0, 0.0]), np.array([20.0, 0.0])
    ex.inputs.update(z_10=z10, z_20=z20)
    p10, p20 = softmax(z10), softmax(z20)
    J20 = softmax_jacobian(p20)  # (2, 2): J[i, j] = ∂p_i/∂z_j
    ex.computed.update(jacobian_10=softmax_jacobian(p10), jacobian_20=J20)
    ex.say(f"softmax([10, 0]) = {p10}", f"softmax([20, 0]) = {p20}",
           "∂p_i/∂z_j = p_i (δ_ij − p_j): with p ≈ (1, 0) every entry is ≈ 0:",
           f"Jacobian at z = [20, 0]: {J20.tolist()}")
    ex.value("softmax_10", "[0.9999, 0.0001]", p10,
             cause="exact [0.999955, 0.0000454] rounds to [1.0000, 0.0000] at 4 decimals: "
                   "0.9999 truncates, 0.0001 is one unit off in the last digit")
    ex.value("softmax_20", "[1.0, 2 × 10^-9]", p20)
    ex.value("dominant_self_gradient", "0", J20[0, 0])
    ex.value("dominant_cross_gradient", "0", J20[0, 1])


@register("fund.scaling-gradients", "Gradient size for d_k = 64 and 512, with and without scaling",
          f"{VARIANCE}, Numerical Example")
def _scaling_gradients(ex: Builder) -> None:
    p64 = np.array([0.45, 0.18, 0.12, 0.08, 0.06, 0.04, 0.03, 0.02, 0.01, 0.01])
    p512, p_scaled = np.array([0.9997, 0.0001, 0.0001, 0.0001]), np.array([0.38, 0.15, 0.12, 0.10])
    ex.inputs.update(distribution_64=p64, distribution_512_shown=p512,
                     distribution_scaled_shown=p_scaled, score_64=12.3, score_512=35.2)
    g64, g512, g_scaled = p64[0] * (1 - p64[0]), p512[0] * (1 - p512[0]), p_scaled[0] * (1 - p_scaled[0])
    ex.say("The distributions are illustrative (\"might be\"); the gradient of the top weight is",
           "read as the diagonal Jacobian entry p(1 − p), as the text does:",
           f"d_k = 64: {g64:.4f};  d_k = 512 unscaled: {g512:.6f};  scaled: {g_scaled:.4f}")
    ex.given("distribution_64_sums_to_1", str(p64.tolist()), float(p64.sum()),
             abs(float(p64.sum()) - 1) < 1e-9, "a full distribution over 10 keys")
    ex.given("shown_entries_at_most_1", "[0.9997, 0.0001, 0.0001, 0.0001, …] and [0.38, 0.15, 0.12, "
             "0.10, …]", [float(p512.sum()), float(p_scaled.sum())],
             p512.sum() <= 1 + 1e-9 and p_scaled.sum() <= 1, "partial rows cannot exceed 1")
    ex.value("gradient_64", "0.248", g64)
    ex.value("gradient_512", "0.0003", g512)
    ex.value("times_smaller", "800", g64 / g512)
    ex.value("sqrt_512", "≈ 22.6", math.sqrt(512))
    ex.value("scaled_score", "≈ 1.56", 35.2 / math.sqrt(512))
    ex.value("gradient_scaled", "0.236", g_scaled)
    _simulate_top_gradient(ex)
    ex.note("In the seeded simulation, unscaled scores at d_k = 64 are already fairly saturated "
            "(mean top gradient ≈ 0.09 against ≈ 0.20 scaled), less healthy than the text's 0.248.")


def _simulate_top_gradient(ex: Builder) -> None:
    """A seeded version of the illustration: 10 random keys, mean p_max (1 − p_max)."""
    rng = np.random.default_rng(5)
    result = {}
    for d_k in (64, 512):
        q = rng.standard_normal((500, 1, d_k))  # (trials, 1, d_k)
        K = rng.standard_normal((500, 10, d_k))  # (trials, keys, d_k)
        scores = np.sum(q * K, axis=-1)  # (trials, keys)
        for label, s in (("unscaled", scores), ("scaled", scores / math.sqrt(d_k))):
            p_max = np.max(softmax(s), axis=-1)  # (trials,)
            result[f"{label}_{d_k}"] = float(np.mean(p_max * (1 - p_max)))
    ex.computed["simulated_mean_top_gradient"] = result
    ex.say("Simulation (seed 5, 500 queries × 10 keys): mean p_max(1 − p_max) = "
           + ", ".join(f"{k} {v:.4f}" for k, v in result.items()))
    ex.answer("simulation_scaling_equalises", "scaled gradients agree across d_k; unscaled shrink",
              result, result["unscaled_512"] < result["unscaled_64"]
              and 0.5 < result["scaled_512"] / result["scaled_64"] < 2)


@register("fund.sdpa-flops", "FLOPs: scaled dot-product against additive attention, m = n = 512",
          f'{FUND}, section "Computational Efficiency", FLOP Count Comparison')
def _sdpa_flops(ex: Builder) -> None:
    ex.inputs.update(m=512, n=512, d_k=64, d_v=64, d_a=256, d_s=512, d_h=512)
    sdpa = costs.scaled_dot_product_flops(512, 512, 64, 64)
    with_softmax = costs.scaled_dot_product_flops(512, 512, 64, 64, softmax=True)
    additive = costs.bahdanau_flops(512, 512, 256, 512, 512)
    ex.computed.update(sdpa_with_softmax=with_softmax,
                       ratio_at_n_50=costs.bahdanau_flops(50, 50, 256, 512, 512)
                       / costs.scaled_dot_product_flops(50, 50, 64, 64))
    ex.say(f"Scaled dot-product: 2·512·512·(64 + 64) = {sdpa:,} ({with_softmax:,} with the 6mn "
           "scale and softmax terms)",
           f"Additive: 2·512·512·256·(512 + 512 + 3) = {additive:,}",
           f"Ratio: {additive / sdpa:,.0f}. It is d_a(d_s + d_h + 3)/(d_k + d_v) whatever n and m are.")
    ex.value("sdpa_flops", "67,108,864", sdpa)
    ex.value("sdpa_mflops", "≈ 67 MFLOPs", sdpa)
    ex.value("bahdanau_flops", "≈ 69 billion", additive,
             cause="2·512·512·256·1027 = 137.8 billion; 69 billion is half of it (a factor 2 dropped)")
    ex.value("ratio", "approximately 1000×", additive / sdpa,
             cause="follows the halved 69 billion (69e9 / 67.1e6 ≈ 1028); the formula gives ≈ 2054")
    ex.answer("softmax_terms_small", "the 6mn scale+softmax FLOPs are negligible (< 5%)",
              (with_softmax - sdpa) / sdpa, (with_softmax - sdpa) / sdpa < 0.05)
    ex.note("The text says the FLOP gap grows with sequence length; the ratio above does not "
            "depend on n or m (it is 2054 at n = m = 50 too).")
    ex.note('The "19× speedup" that follows refers to a timing table lost from the text; '
            "nothing here can check it.")


@register("fund.arithmetic-intensity", "Arithmetic intensity of Q Kᵀ for 512 × 64 operands in FP16",
          f'{FUND}, section "Computational Efficiency", Memory Bandwidth Considerations')
def _arithmetic_intensity(ex: Builder) -> None:
    ex.inputs.update(m=512, n=512, d_k=64, bytes_per_element=2, a100_flops=312e12,
                     a100_bytes_per_s=1.5e12)
    loaded = costs.qk_bytes_loaded(512, 512, 64, 2)
    flops = costs.matmul_flops(512, 64, 512)
    intensity = costs.qk_arithmetic_intensity(512, 512, 64, 2)
    ridge = 312e12 / 1.5e12
    ex.computed.update(a100_ridge_point=ridge)
    ex.say(f"Loaded: Q and K, 2 × 512 × 64 × 2 bytes = {loaded:,} B; FLOPs: 2·512·512·64 = {flops:,}",
           f"Intensity {flops:,} / {loaded:,} = {intensity:g} FLOPs per byte",
           f"A100 ridge point 312 TFLOPS / 1.5 TB/s = {ridge:.0f} FLOPs/byte: above it, compute-bound")
    ex.value("bytes_loaded", "131 KB", loaded, byte_base=1000, convention=units("131 KB", loaded, 1000))
    both = "67 MFLOPs is Q Kᵀ and A V together, 2·512·512·(64 + 64) = 67,108,864"
    ex.value("flops", "67 MFLOPs", flops, cause=f"2·512·512·64 = 33,554,432 for Q Kᵀ; {both}")
    ex.value("flops_in_ratio", "67,000,000", flops,
             cause="the Q Kᵀ + A V count, rounded; Q Kᵀ alone is 33,554,432")
    ex.value("bytes_in_ratio", "131,072", loaded)
    ex.value("flops_per_byte", "≈ 511", intensity,
             cause="Q Kᵀ gives 33,554,432 / 131,072 = 256; 511 divides the rounded Q Kᵀ + A V "
                   "count (unrounded it would be 512)")
    ex.value("flops_per_byte_hardware_section", "~256", intensity,
             convention='printed in section "Hardware Implications of Attention"; it agrees '
                        "with Q Kᵀ alone in FP16")
    ex.answer("compute_bound_on_a100", "the intensity exceeds the A100's ridge point", intensity,
              intensity > ridge)


@register("fund.qkv-flops", "QKV projection FLOPs and parameters of BERT-base",
          f'{FUND}, section "Projecting to QKV", Computational Cost and Parameter Count')
def _qkv_flops(ex: Builder) -> None:
    n, d, layers, heads = 512, 768, 12, 12
    ex.inputs.update(n=n, d_model=d, layers=layers, heads=heads, bert_total_params=110e6)
    flops = costs.qkv_projection_flops(n, d, d)
    params = costs.qkv_params(d, d // heads, heads=heads)
    attention = heads * costs.scaled_dot_product_flops(n, n, d // heads, d // heads)
    share = flops / (flops + attention)
    ex.computed.update(attention_flops_all_heads=attention,
                       qkv_share_with_output_projection=flops / (flops + attention
                                                                 + costs.matmul_flops(n, d, d)))
    ex.say(f"6·n·d_model² = 6·512·768² = {flops:,} FLOPs;  3·d_model² = {params:,} parameters",
           f"× 12 layers = {layers * params:,} parameters",
           f"QKᵀ and AV over 12 heads: {attention:,} FLOPs, so the projections are "
           f"{100 * share:.0f}% of projections + QKᵀ + AV")
    ex.value("qkv_flops", "1,811,939,328", flops)
    ex.value("qkv_gflops", "≈ 1.8 GFLOPs", flops)
    ex.value("qkv_share_of_attention", "about 20%", share,
             cause="at n = 512 the projections (1.81 GFLOPs) exceed QKᵀ + AV (0.81 GFLOPs): 69%, "
                   "or 56% with the output projection; 20% needs n ≈ 4,600")
    ex.value("params_per_layer", "1,769,472", params)
    ex.value("params_per_layer_millions", "1.77 million", params)
    ex.value("params_12_layers", "21.2 million", layers * params)
    ex.value("share_of_bert", "about 19%", layers * params / 110e6)
