"""Checkers for the additive (Bahdanau) and general (Luong) scores (exercise notebook 03), with their mistakes.

Additive: e_{t,i} = vᵀ tanh(W1 s_t + W2 h_i) with the chapter's column-vector weights W1 (d_a, d_s),
W2 (d_a, d_h), v (d_a,) ("Attention Mechanisms: Fundamentals", section "Additive Attention (Bahdanau)",
Step 1). General: e_{t,i} = s_tᵀ W h_i with W (d_s, d_h) (table "Attention Score Computation Methods",
row "General (Luong)"). Decoder states S (m, d_s) and encoder states H (n, d_h) are stacked as rows; the
scores are (m, n), before the softmax.

>>> from attention_edu.checkers import check_bahdanau_scores, check_luong_general_scores
>>> check_bahdanau_scores(lambda S, H, W1, W2, v: np.tanh((S @ W1.T)[:, None] + H @ W2.T) @ v).passed
True
>>> check_luong_general_scores(lambda S, H, W: S @ H.T).hint_id
'luong_general_scores.ignores-W'
"""

import math

from ...additive import bahdanau_attention_steps
from ...backend import host_numpy as np
from ...luong import luong_attention_steps
from . import normal_arrays, register_mistakes, stable_softmax, variant
from ..diagnosis.evidence import reads, temperature
from ..records import Case, Exercise, Property

__all__ = ["BAHDANAU_SCORES", "LUONG_GENERAL_SCORES"]


def _bahdanau_cases() -> list[Case]:
    names = ("S", "H", "W1", "W2", "v")
    W1, W2 = np.array([[0.5, -0.3, 0.2], [0.4, 0.6, -0.1]]), np.array([[0.3, 0.5, 0.2], [-0.2, 0.4, 0.6]])
    H = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    S, v = np.array([[0.5, 0.5, 0.5]]), np.array([1.0, 0.8])
    small = Case("small", "m = 1, n = 4, d_s = d_h = 3, d_a = 2", (S, H, W1, W2, v), names, literal=True,
                 note="These are the inputs of Exercise 1 of \"Attention Mechanisms: Fundamentals\".")
    random = [Case("random", f"seed {seed}, m={m} n={n} d_s={d_s} d_h={d_h} d_a={d_a}",
                   normal_arrays(seed, (m, d_s), (n, d_h), (d_a, d_s), (d_a, d_h), (d_a,)), names)
              for seed, (m, n, d_s, d_h, d_a) in ((1, (2, 3, 4, 5, 6)), (2, (3, 5, 2, 4, 7)), (3, (4, 2, 5, 3, 6)))]
    float32 = tuple(a.astype(np.float32) for a in normal_arrays(4, (3, 4), (5, 2), (6, 4), (6, 2), (6,)))
    return [small, *random, Case("random", "float32, m=3 n=5 d_s=4 d_h=2 d_a=6", float32, names)]


def _encoder_order(student) -> str | None:
    S, H, W1, W2, v = normal_arrays(31, (2, 3), (6, 5), (4, 3), (4, 5), (4,))
    order = np.array([2, 4, 0, 5, 1, 3])
    (a,), (b,) = student(S, H, W1, W2, v), student(S, H[order], W1, W2, v)
    return None if np.allclose(a[:, order], b, rtol=1e-4, atol=1e-6) else "reordering H did not reorder the columns"


def _row_independence(student) -> str | None:
    S, H, W1, W2, v = normal_arrays(32, (4, 2), (3, 3), (5, 2), (5, 3), (5,))
    (a,), (b,) = student(S, H, W1, W2, v), student(S + np.eye(len(S))[:, :1], H, W1, W2, v)   # state 0 changed
    row_0_only = np.allclose(a[1:], b[1:], rtol=1e-4, atol=1e-6) and not np.allclose(a[0], b[0])
    return None if row_0_only else "changing decoder state 0 should change score row 0 and no other row"


BAHDANAU_SCORES = Exercise(
    name="bahdanau_scores", notebook="03_bahdanau_and_luong_scores", number=1,
    summary='Check ``bahdanau_scores(S, H, W1, W2, v) -> scores (m, n)``, e = vᵀ tanh(W1 s_t + W2 h_i).',
    signature="bahdanau_scores(S, H, W1, W2, v) -> scores (m, n)",
    reference=lambda S, H, W1, W2, v: bahdanau_attention_steps(S, H, W1, W2, v).scores, outputs=("scores",),
    cases=_bahdanau_cases,
    properties=(
        Property("bahdanau_scores.property-key-order", "reordering encoder states reorders the columns",
                 "Score (t, i) uses s_t and h_i alone: permuting the rows of H permutes the columns.", _encoder_order),
        Property("bahdanau_scores.property-rows", "row t depends on decoder state t only",
                 "Row t of the scores uses s_t alone: changing another state leaves it as it was.", _row_independence),
    ),
)


def _luong_cases() -> list[Case]:
    names = ("S", "H", "W")
    S, W = np.array([[1.0, 0.0], [0.5, -1.0]]), np.array([[1.0, 2.0], [0.0, -1.0]])
    H = np.array([[1.0, 2.0], [0.0, 1.0], [-1.0, 0.5]])
    random = [Case("random", f"seed {seed}, m={m} n={n} d_s={d_s} d_h={d_h}",
                   normal_arrays(seed, (m, d_s), (n, d_h), (d_s, d_h)), names)
              for seed, (m, n, d_s, d_h) in ((1, (2, 3, 4, 5)), (2, (4, 2, 3, 6)), (3, (5, 4, 2, 3)))]
    float32 = tuple(a.astype(np.float32) for a in normal_arrays(4, (1, 2), (4, 5), (2, 5)))
    return [Case("small", "m = 2, n = 3, d_s = d_h = 2", (S, H, W), names, literal=True), *random,
            Case("random", "float32, m=1 n=4 d_s=2 d_h=5", float32, names)]


def _linear_in_w(student) -> str | None:
    S, H, A, B = normal_arrays(33, (3, 4), (5, 2), (4, 2), (4, 2))
    (a,), (b,), (both,) = student(S, H, A), student(S, H, B), student(S, H, A + B)
    return None if np.allclose(a + b, both, rtol=1e-4, atol=1e-6) else "scores(W = A + B) are not scores(A) + scores(B)"


def _identity_is_dot(student) -> str | None:
    S, H = normal_arrays(34, (3, 4), (5, 4))
    dot = np.allclose(student(S, H, np.eye(4))[0], S @ H.T, rtol=1e-4, atol=1e-6)
    return None if dot else "with W = I the general score should equal the dot score S Hᵀ"


LUONG_GENERAL_SCORES = Exercise(
    name="luong_general_scores", notebook="03_bahdanau_and_luong_scores", number=2,
    summary='Check ``luong_general_scores(S, H, W) -> scores (m, n)``, e = s_tᵀ W h_i.',
    signature="luong_general_scores(S, H, W) -> scores (m, n)",
    reference=lambda S, H, W: luong_attention_steps(S, H, "general", W=W).scores, outputs=("scores",),
    cases=_luong_cases,
    properties=(
        Property("luong_general_scores.property-linear", "the scores are linear in W",
                 "sᵀ W h is linear in W: the scores for W = A + B must be those for A plus those for B.", _linear_in_w),
        Property("luong_general_scores.property-identity", "W = I gives the dot score",
                 "With W the identity the general score sᵀ W h is the plain dot product s · h.", _identity_is_dot),
    ),
)


# -- misconceptions -------------------------------------------------------------------------------

#: a weight as a product's first operand, on the line that raised: the column form (red team 73: not S @ W1.T @ W2 @ H);
#: W by its name (W, Wa, W_a, w) in a line that raised, for Luong's mutants (red team 77)
_WEIGHT_FIRST, _W = r"(^|[=(,+:-]\s*)[Ww]\w*\s*@|dot\(\s*[Ww]", r"\b[Ww]\w{0,3}\b"
_W_NAME = r"(W(_\w*|[A-Za-z]{0,3})|w(_\w+|[A-Za-z]{1,3}))"     # W, Wa, W_mult, w_a; not w alone (w = S @ W)

#: code that goes on to the attention's output, softmax(scores) @ H (hint studies 37 to 40)
_CONTEXT = ("Your function goes on to the attention's output, the context vectors softmax(scores) @ H (and the "
            "weights, where it returns two). This exercise asks for the raw scores e_{t,i} (m, n), before the softmax.")


def _with_weights(weights, H):
    return weights @ H, weights                              # the context vectors and the weights, as attention returns


def _features(S_proj, H_proj):
    return S_proj[:, None, :] + H_proj[None, :, :]          # (m, 1, d_a) + (1, n, d_a) -> (m, n, d_a)


register_mistakes("bahdanau_scores", (
    ("swapped-projections", "small", lambda S, H, W1, W2, v: np.tanh(_features(S @ W2.T, H @ W1.T)) @ v,
     "W1 acts on the decoder state and W2 on the encoder states: e = vᵀ tanh(W1 s_t + W2 h_i) with "
     "W1 (d_a, d_s) and W2 (d_a, d_h)."),
    ("dot-product", "small", lambda S, H, W1, W2, v: S @ H.T,
     "Your scores are the dot products s_t · h_i, Luong's dot score: the additive score projects both states and "
     "adds them, e = vᵀ tanh(W1 s_t + W2 h_i), so W1, W2 and v all take part."),
    ("row-vector-weights", "runs", lambda S, H, W1, W2, v: np.tanh(_features(S @ W1, H @ W2)) @ v,
     "In the chapter's column-vector form W1 is (d_a, d_s) and computes W1 s_t, so for states stacked "
     "as rows use S @ W1.T (and H @ W2.T)."),
    ("states-as-columns", "runs", lambda S, H, W1, W2, v: np.tanh(W1 @ S + H @ W2.T) @ v,
     "W1 @ S and W2 @ H are the chapter's column-vector form, one state in a column, but S and H hold the states as "
     "rows, (m, d_s) and (n, d_h): project them all with S @ W1.T and H @ W2.T.", _WEIGHT_FIRST),
    ("no-tanh", "small", lambda S, H, W1, W2, v: _features(S @ W1.T, H @ W2.T) @ v,
     "The score applies tanh to W1 s_t + W2 h_i before the product with v; yours leaves it out."),
    ("tanh-after-v", "small", lambda S, H, W1, W2, v: np.tanh(_features(S @ W1.T, H @ W2.T) @ v),
     "Apply tanh to the d_a-dimensional sum W1 s_t + W2 h_i, then take the dot product with v; you "
     "applied tanh to the final score."),
    ("tanh-each-term", "small", lambda S, H, W1, W2, v: _features(np.tanh(S @ W1.T), np.tanh(H @ W2.T)) @ v,
     "Add W1 s_t and W2 h_i first and take tanh of the sum; tanh(a) + tanh(b) is not tanh(a + b)."),
    ("sum-instead-of-v", "small",
     lambda S, H, W1, W2, v: np.sum(np.tanh(_features(S @ W1.T, H @ W2.T)), axis=-1),
     "Weight the tanh features with v (a dot product, features @ v) instead of adding them up."),
    ("sum-over-positions", "returns",
     lambda S, H, W1, W2, v: np.sum(np.tanh(_features(S @ W1.T, H @ W2.T)) * v, axis=1),
     "The product with v runs over the d_a features, the last axis (features @ v, or a sum over axis=-1); a sum over "
     "axis 1 adds up the encoder positions, which the scores keep, one per position."),
    ("softmaxed", "small", lambda S, H, W1, W2, v: stable_softmax(np.tanh(_features(S @ W1.T, H @ W2.T)) @ v),
     "This exercise asks for the raw scores e_{t,i}; the softmax that turns them into weights is the next step."),
    ("transposed", "returns", lambda S, H, W1, W2, v: (np.tanh(_features(S @ W1.T, H @ W2.T)) @ v).T,
     "Rows of the scores are decoder steps t and columns encoder positions i, shape (m, n); yours is (n, m)."),
    ("context", "returns", lambda S, H, W1, W2, v: stable_softmax(np.tanh(_features(S @ W1.T, H @ W2.T)) @ v) @ H,
     _CONTEXT),
    ("no-pairs", "returns", lambda S, H, W1, W2, v: np.tanh(S @ W1.T + H @ W2.T) @ v,
     "Your scores are not one per pair (t, i): S @ W1.T + H @ W2.T adds state t to state t, or one decoder state "
     "to all. Pair them: (S @ W1.T)[:, None, :] + (H @ W2.T)[None, :, :] is (m, n, d_a); then tanh, then @ v."),
))
for _at in (0, -1):              # code for one decoder step: S[0] or S[-1] as the state, scores (n,) or (1, n)
    variant("bahdanau_scores.no-pairs")(lambda S, H, W1, W2, v, at=_at: np.tanh(S[at] @ W1.T + H @ W2.T) @ v)
    variant("bahdanau_scores.no-pairs")(lambda S, H, W1, W2, v, at=_at: (np.tanh(S[at] @ W1.T + H @ W2.T) @ v)[None])
    variant("bahdanau_scores.context")(
        lambda S, H, W1, W2, v, at=_at: stable_softmax(np.tanh(S[at] @ W1.T + H @ W2.T) @ v) @ H)
    variant("bahdanau_scores.context")(
        lambda S, H, W1, W2, v, at=_at: _with_weights(stable_softmax(np.tanh(S[at] @ W1.T + H @ W2.T) @ v), H))
variant("bahdanau_scores.context")(lambda S, H, W1, W2, v: _with_weights(stable_softmax(np.tanh(_features(
    S @ W1.T, H @ W2.T)) @ v), H))
variant("bahdanau_scores.states-as-columns")(lambda S, H, W1, W2, v: np.tanh(W2 @ H + W1 @ S) @ v)   # W2 @ H first
variant("bahdanau_scores.states-as-columns")(lambda S, H, W1, W2, v: np.tanh(np.dot(W1, S) + np.dot(W2, H)) @ v)
variant("bahdanau_scores.states-as-columns")(lambda S, H, W1, W2, v: np.tanh(np.dot(W2, H) + np.dot(W1, S)) @ v)
variant("bahdanau_scores.no-pairs")(lambda S, H, W1, W2, v: v[None] @ np.tanh(W2 @ H.T + W1 @ S.T))  # states as columns
variant("bahdanau_scores.no-pairs")(lambda S, H, W1, W2, v: v[None] @ np.tanh(W1 @ S.T + W2 @ H.T))

register_mistakes("luong_general_scores", (
    ("transposed-W", "small", lambda S, H, W: S @ W.T @ H.T,
     "With W (d_s, d_h) the score s_tᵀ W h_i is (S @ W) @ Hᵀ for stacked states; you used W transposed.",
     rf"{_W}\s*\.\s*m?T\b|(transpose|swapaxes)\(\s*{_W}|{_W}\.(transpose|swapaxes)\("),   # W's own (studies 41, 77)
    ("states-as-columns", "runs", lambda S, H, W: S.T @ W @ H,
     "S and H hold the states as rows, (m, d_s) and (n, d_h): s_tᵀ W h_i for every pair is S @ W @ H.T, "
     "not the column-vector form S.T @ W @ H.",     # a transposed first operand on the line (red team 77)
     r"(^|[=(,:]|return)\s*\w+\s*\.\s*m?T\s*@|dot\(\s*\w+\.m?T\b|transpose\(\s*\w+\s*\)\s*@|"   # or W first
     rf"(^|[=,:]|return)\s*{_W_NAME}\s*@|(?<![\w.])(?![Ss]\b)\w+\s*@\s*\(?\s*{_W}\s*@|^(?!.*dot\(\s*S\s*,).*dot\(\s*"
     rf"{_W_NAME}\s*,"),   # St @ W @ H, np.dot(St, np.dot(W, H)); not S @ (W @ H), where H alone lacks its .T (81)
    ("untransposed-H", "runs", lambda S, H, W: S @ W @ H,     # red team 79's left: no transpose on the line, W then H
     "H holds the encoder states as rows, (n, d_h): S @ W, (m, d_h), meets them as S @ W @ H.T, (m, n), not S @ W @ H.",
     rf"^(?!.*(\.\s*m?T\b|transpose|swapaxes|moveaxis|permute|einsum)).*{_W}.*(@\s*\(?|[,(])\s*[Hh]\b"),  # not Ht (81)
    ("ignores-W", "small", lambda S, H, W: S @ H.T,
     "The general score puts W between the states, s_tᵀ W h_i; without W it is the dot score.", rf"^(?!.*{_W})"),
    ("scaled", "small", lambda S, H, W: S @ W @ H.T / math.sqrt(H.shape[-1]),
     "Luong's general score is not scaled: leave out the division by a square root."),
    ("softmaxed", "small", lambda S, H, W: stable_softmax(S @ W @ H.T),
     "This exercise asks for the raw scores; the softmax over the encoder positions comes afterwards."),
    ("transposed", "returns", lambda S, H, W: H @ W.T @ S.T,
     "Rows are decoder steps and columns encoder positions: the scores are (m, n), S @ W @ Hᵀ."),
    ("elementwise", "runs", lambda S, H, W: np.sum((S @ W) * H, axis=-1),
     "`*` multiplies entry by entry, so it pairs decoder state t with encoder state t only (and needs m = n). The "
     "score of every decoder state with every encoder state is a matrix product: S @ W @ H.T, shape (m, n)."),
    ("no-encoder-states", "returns", lambda S, H, W: S @ W,      # hint study 24's 09
     "Your scores never meet the encoder states (S @ W is s_tᵀ W alone): pair it with each h_i, S @ W @ H.T, (m, n)."),
    ("one-decoder-state", "returns", lambda S, H, W: S[:1] @ W @ H.T,
     "Your scores are for one decoder state (S[0] or S[-1]), as code written for one decoder step is; S holds all m "
     "decoder states as rows, and S @ W @ H.T scores every one of them against every encoder state, (m, n)."),
    ("context", "returns", lambda S, H, W: stable_softmax(S @ W @ H.T) @ H, _CONTEXT),
    ("one-state-as-column", "returns", lambda S, H, W: H @ (W.T @ S),      # hint studies 37's 21 and 38's 26
     "Your code scores one decoder state s given as a vector (H @ W.T @ s); S holds all m decoder states as rows, "
     "(m, d_s), and W meets S on the wrong axis: score every pair at once, S @ W @ H.T, (m, n).",
     rf"(^|[=(,+:-]|return)\s*\(?\s*{_W}(\s*\.\s*m?T)?\s*@|dot\(\s*{_W}"),     # W first (red team 77)
))
variant("luong_general_scores.one-state-as-column")(lambda S, H, W: H @ (W @ S))    # W taken as (d_h, d_s)
for _nested in (lambda S, H, W: np.dot(np.dot(S, W), H), lambda S, H, W: np.dot(S, np.dot(W, H))):   # np.dot's errors
    variant("luong_general_scores.untransposed-H")(_nested)
for _columns in (lambda S, H, W: np.dot(np.dot(S.T, W), H), lambda S, H, W: np.dot(S.T, np.dot(W, H)),
                 lambda S, H, W: S.T @ (W @ H)):    # np.dot's errors (study 43's 19), W H first (44's 19)
    variant("luong_general_scores.states-as-columns")(_columns)
for _state in (slice(-1, None), 0, -1):                      # S[-1:], and one state without its axis; their contexts
    variant("luong_general_scores.one-decoder-state")(lambda S, H, W, at=_state: S[at] @ W @ H.T)
    variant("luong_general_scores.context")(lambda S, H, W, at=_state: stable_softmax(S[at] @ W @ H.T) @ H)
for _state in (slice(None), slice(-1, None), 0, -1):         # the context beside the weights
    variant("luong_general_scores.context")(
        lambda S, H, W, at=_state: _with_weights(stable_softmax(S[at] @ W @ H.T), H))


@reads("bahdanau_scores", "value.softmaxed-scores")
@reads("luong_general_scores", "value.softmaxed-scores")
def _weights_for_scores(case, mine, expected):
    """Rows that sum to 1 where the raw scores are asked: the softmax of c times them (c = 1 is ``softmaxed``)."""
    a, e = mine[0], expected[0]
    # temperature itself asks for positive rows that sum as the softmax's do, to 1
    if not isinstance(a, np.ndarray) or a.shape != e.shape or a.ndim == 0:
        return None
    if (c := temperature(a, stable_softmax(e))) is None:
        # rows of weights over scores that are wrong besides (a doubled projection): the softmax is still there to see
        if a.shape[-1] < 2 or np.any(a < 0) or not np.allclose(a.sum(-1), 1.0) or np.allclose(e.sum(-1), 1.0):
            return None
        return "value.softmaxed-scores", ("Your scores sum to 1 along each row: they are weights (a softmax, or a "
                                          "division by the row's sum): return the raw scores, before any normalising.")
    return "value.softmaxed-scores", (f"Your scores sum to 1 along each row: they are weights, the softmax of {c:.4g} "
                                      "times the scores asked for. Return the raw scores, before any softmax and "
                                      "without that factor.")
