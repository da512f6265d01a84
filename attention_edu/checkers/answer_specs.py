"""What each pen-and-paper answer consists of, and the typical ways to get it wrong.

The expected values are never typed here: they come from the worked-example catalogue
(``ae.worked_examples.get(id).computed``), and so do the inputs from which the typical wrong answers
are derived (a FLOP count off by exactly 2, a transposed shape, scaled instead of unscaled weights).
Part names are the catalogue's keys.
"""

import math
from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["Wrong", "Part", "AnswerSpec", "SPECS"]


@dataclass(frozen=True)
class Wrong:
    """A typical wrong answer: how to derive it from the catalogue entry, and the hint."""

    hint_id: str
    hint: str
    value: Callable[[Any], Any]       # Example -> the wrong value
    accept: bool = False              # a defensible reading: passes, with the hint as a note


@dataclass(frozen=True)
class Part:
    """One quantity the student gives (its keyword is the catalogue's computed key)."""

    name: str
    kind: str                         # "number", "array", "shape" or "bool"
    method: str                       # what to recheck when the answer is off
    required: bool = True
    abs_tol: float = 0.0
    rel_tol: float = 0.02
    wrongs: tuple[Wrong, ...] = ()


@dataclass(frozen=True)
class AnswerSpec:
    """A pen-and-paper exercise: its catalogue id, the question, the parts of the answer."""

    id: str
    question: str
    parts: tuple[Part, ...]

    def hint_ids(self) -> list[str]:
        """The hint ids of its typical wrong answers."""
        return [w.hint_id for p in self.parts for w in p.wrongs]


def _dims(ex: Any) -> tuple[int, int, int, int]:
    """m, n, d_k, d_v from an entry's Q, K, V."""
    Q, V = ex.inputs["Q"], ex.inputs["V"]
    return Q.shape[0], V.shape[0], Q.shape[1], V.shape[1]


def _swap(shape: tuple) -> tuple:
    return tuple(shape[:-2]) + (shape[-1], shape[-2])


def _transposed(key: str) -> Wrong:
    return Wrong("answer.transposed-shape", "That shape is transposed: rows are the queries (m) and "
                 "columns the keys (n) or features.", lambda ex: _swap(ex.computed[key]))


def _used_d_k(value: Callable[[Any], Any]) -> Wrong:
    return Wrong("answer.used-d_k", "The output takes its width from the values (d_v), not from the "
                 "queries and keys (d_k).", value)


def _log2(key: str) -> Wrong:
    return Wrong("answer.log2", "That is in bits (log base 2); use the natural logarithm (nats).",
                 lambda ex: ex.computed[key] / math.log(2))


_SCALED = ("answer.scaled", "These are the values with the scores divided by √d_k; this section's "
           "dot-product attention is unscaled, softmax(Q Kᵀ) V.")
_SWAPPED = ("answer.swapped-projections", "These come from W1 h_i + W2 s (W1 and W2 swapped, as in the "
            "chapter's printed solution); by the definition W1 acts on the decoder state: "
            "e_i = vᵀ tanh(W1 s + W2 h_i).")

SPECS: tuple[AnswerSpec, ...] = (
    AnswerSpec("fund.exercise-1", "Bahdanau weights for 4 encoder states (d_s = 3, d_a = 2)", (
        Part("weights", "array", "Compute W1 s once, W2 h_i per state, add, tanh, dot with v, then softmax.",
             abs_tol=0.006, wrongs=(
                 Wrong(*_SWAPPED, lambda ex: ex.computed["weights_solution_order"]),
                 Wrong("answer.scores-for-weights", "These are the scores e_i; the weights are their "
                       "softmax.", lambda ex: ex.computed["scores"]))),
        Part("scores", "array", "e_i = vᵀ tanh(W1 s + W2 h_i), one number per encoder state.",
             required=False, abs_tol=0.006,
             wrongs=(Wrong(*_SWAPPED, lambda ex: ex.computed["scores_solution_order"]),)),
    )),
    AnswerSpec("fund.exercise-2", "shapes and the QKᵀ FLOP count for Q (10, 64), K (20, 64), V (20, 128)", (
        Part("output_shape", "shape", "The output has one row per query and the width of the values.",
             wrongs=(_transposed("output_shape"), _used_d_k(lambda ex: (_dims(ex)[0], _dims(ex)[2])))),
        Part("attention_shape", "shape", "One row per query, one column per key.",
             wrongs=(_transposed("attention_shape"),)),
        Part("qk_flops", "number", "Each of the m·n scores is a dot product of length d_k.", wrongs=(
            Wrong("answer.half-flops", "Exactly half the count: a multiply-add is two FLOPs (one multiply, "
                  "one add), so a dot product of length d costs 2d.", lambda ex: ex.computed["qk_flops"] / 2),
            Wrong("answer.counted-av", "That is the cost of the product with V (length n, width d_v); "
                  "the question asks for Q Kᵀ, whose dot products have length d_k.",
                  lambda ex: 2 * _dims(ex)[0] * _dims(ex)[1] * _dims(ex)[3]),
            Wrong("answer.both-products", "That counts both products, Q Kᵀ and A V; the question asks "
                  "for Q Kᵀ alone.", lambda ex: 2 * _dims(ex)[0] * _dims(ex)[1] * (_dims(ex)[2] + _dims(ex)[3])))),
    )),
    AnswerSpec("fund.exercise-3", "variance and standard deviation of q·k for d_k = 64; the softmax demo", (
        Part("variance", "number", "Var(q·k) is a sum of d_k independent terms of variance 1.", wrongs=(
            Wrong("answer.std-for-variance", "That is the standard deviation; the variance is its square, "
                  "d_k.", lambda ex: ex.computed["std"]),
            Wrong("answer.scaled-variance", "1 is the variance after dividing by √d_k; without scaling the "
                  "variance grows with d_k.", lambda ex: 1.0))),
        Part("std", "number", "The standard deviation is the square root of the variance.", wrongs=(
            Wrong("answer.variance-for-std", "That is the variance; the standard deviation is its square "
                  "root.", lambda ex: ex.computed["variance"]),)),
        Part("softmax_unscaled", "array", "softmax of z itself.", required=False, abs_tol=0.006),
        Part("softmax_scaled", "array", "softmax of z / √d_k.", required=False, abs_tol=0.006, wrongs=(
            Wrong("answer.unscaled", "These are the weights of the unscaled scores; divide z by √d_k "
                  "first.", lambda ex: ex.computed["softmax_unscaled"]),)),
        Part("gradient_scaled", "array", "The diagonal of the softmax Jacobian, p_i (1 − p_i).",
             required=False, abs_tol=0.006),
    )),
    AnswerSpec("fund.exercise-4", "output and weight shapes of batched attention, d_k = 32, d_v = 48", (
        Part("output_shape_5", "shape", "(batch, queries, d_v).",
             wrongs=(_used_d_k(lambda ex: (1, 5, ex.inputs["d_k"])), _transposed("output_shape_5"))),
        Part("weights_shape_5", "shape", "(batch, queries, keys)."),
        Part("output_shape_10", "shape", "(batch, queries, d_v).", required=False),
        Part("weights_shape_10", "shape", "(batch, queries, keys).", required=False),
        Part("weights_shape_5_by_10", "shape", "(batch, queries, keys).", required=False,
             wrongs=(_transposed("weights_shape_5_by_10"),)),
    )),
    AnswerSpec("dot.exercise-1", "hand-computed dot-product attention, Q = [[1,0],[0,1]], K = V = [[1,1],[1,0]]", (
        Part("output", "array", "Scores Q Kᵀ, softmax over each row, then weights @ V.", abs_tol=0.006,
             wrongs=(Wrong(*_SCALED, lambda ex: ex.computed["output_scaled"]),
                     Wrong("answer.transposed-output", "Row i of the output belongs to query i: it is "
                           "weights @ V, not its transpose.", lambda ex: ex.computed["output"].T))),
        Part("weights", "array", "softmax of each row of Q Kᵀ.", required=False, abs_tol=0.006, wrongs=(
            Wrong(*_SCALED, lambda ex: ex.computed["weights_scaled"]),
            Wrong("answer.scores-for-weights", "These are the scores Q Kᵀ; the weights are their "
                  "row-wise softmax.", lambda ex: ex.computed["scores"]))),
    )),
    AnswerSpec("dot.exercise-3", "FLOPs of attention for n = 1000, d = 512", (
        Part("total_flops", "number", "Two n × n products, Q Kᵀ and A V, each n² dot products of length d.",
             wrongs=(
                 Wrong("answer.half-flops", "Exactly half the count: either a multiply-add was counted as "
                       "one FLOP (it is two) or one of the two products (Q Kᵀ, A V) was left out.",
                       lambda ex: ex.computed["total_flops"] / 2),
                 Wrong("answer.quarter-flops", "A quarter of the count: include both products (Q Kᵀ and "
                       "A V) and count two FLOPs per multiply-add.", lambda ex: ex.computed["total_flops"] / 4),
                 Wrong("answer.score-count", "That is the number of scores, n²; each costs a dot product "
                       "of length d.", lambda ex: ex.computed["score_entries"]),
                 Wrong("answer.with-projections", "Your count includes the Q, K, V projections (3 · 2nd²); "
                       "attention itself, the two n × n products, is the rest.", accept=True,
                       value=lambda ex: ex.computed["total_flops"] + ex.computed["projection_flops"]))),
    )),
    AnswerSpec("dot.exercise-4", "is the score matrix symmetric when W^Q = W^K?", (
        Part("is_symmetric_tied", "bool", "Write S_ij with one shared W and swap i and j.", wrongs=(
            Wrong("answer.not-symmetric", "With W^Q = W^K = W, S_ij = (x_i W)·(x_j W) = S_ji: the scores "
                  "are symmetric (the weights still are not, each row is normalised on its own).",
                  lambda ex: not ex.computed["is_symmetric_tied"]),)),
    )),
    AnswerSpec("dot.exercise-5", "entropy of attention rows (natural log)", (
        Part("max_entropy", "number", "A row spread evenly over n = 3 keys has the largest entropy.",
             wrongs=(_log2("max_entropy"),)),
        Part("entropy_cat_sat_mat", "array", "−Σ_j α_ij ln α_ij for each row of the \"cat sat mat\" weights.",
             required=False, abs_tol=0.006, wrongs=(
                 _log2("entropy_cat_sat_mat"),
                 Wrong("answer.missing-minus", "Entropy is minus Σ p ln p; without the minus sign it is "
                       "negative.", lambda ex: -ex.computed["entropy_cat_sat_mat"]))),
        Part("entropy_one_hot", "number", "A row with all its weight on one key.", required=False,
             abs_tol=1e-3),
    )),
)
