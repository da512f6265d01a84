"""Checker for the additive (Bahdanau) score exercise, with its misconceptions.

e_{t,i} = vᵀ tanh(W1 s_t + W2 h_i) with the chapter's column-vector weights
W1 (d_a, d_s), W2 (d_a, d_h), v (d_a,) ("Attention Mechanisms: Fundamentals",
section "Additive Attention (Bahdanau)", Step 1). Decoder states S (m, d_s)
and encoder states H (n, d_h) are stacked as rows; the scores are (m, n),
before the softmax.

Examples
--------
>>> from attention_edu.checkers import check_bahdanau_scores
>>> import numpy as np
>>> good = lambda S, H, W1, W2, v: np.tanh((S @ W1.T)[:, None, :] + (H @ W2.T)[None, :, :]) @ v
>>> check_bahdanau_scores(good).passed
True
"""

from __future__ import annotations

from ...additive import bahdanau_attention_steps
from ...backend import host_numpy as np
from ..diagnosis.mutants import mistake
from ..records import Case, Exercise, Property

__all__ = ["BAHDANAU_SCORES", "normal_arrays"]

_B = ("S", "H", "W1", "W2", "v")


def normal_arrays(seed: int, *shapes: tuple[int, ...]) -> tuple:
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal(shape) for shape in shapes)


def _bahdanau_cases() -> list[Case]:
    W1 = np.array([[0.5, -0.3, 0.2], [0.4, 0.6, -0.1]])
    W2 = np.array([[0.3, 0.5, 0.2], [-0.2, 0.4, 0.6]])
    v = np.array([1.0, 0.8])
    H = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    S = np.array([[0.5, 0.5, 0.5]])
    cases = [Case("small", "m = 1, n = 4, d_s = d_h = 3, d_a = 2", (S, H, W1, W2, v), _B, literal=True,
                  note="These are the inputs of Exercise 1 of \"Attention Mechanisms: Fundamentals\".")]
    for seed, (m, n, d_s, d_h, d_a) in ((1, (2, 3, 4, 5, 6)), (2, (3, 5, 2, 4, 7)), (3, (4, 2, 5, 3, 6))):
        args = normal_arrays(seed, (m, d_s), (n, d_h), (d_a, d_s), (d_a, d_h), (d_a,))
        cases.append(Case("random", f"seed {seed}, m={m} n={n} d_s={d_s} d_h={d_h} d_a={d_a}", args, _B))
    args = tuple(a.astype(np.float32) for a in normal_arrays(4, (3, 4), (5, 2), (6, 4), (6, 2), (6,)))
    cases.append(Case("random", "float32, m=3 n=5 d_s=4 d_h=2 d_a=6", args, _B))
    return cases


def _encoder_order(student) -> str | None:
    S, H, W1, W2, v = normal_arrays(31, (2, 3), (6, 5), (4, 3), (4, 5), (4,))
    order = np.array([2, 4, 0, 5, 1, 3])
    (a,), (b,) = student(S, H, W1, W2, v), student(S, H[order], W1, W2, v)
    if np.allclose(a[:, order], b, rtol=1e-4, atol=1e-6):
        return None
    return "reordering the encoder states did not simply reorder the score columns"


def _row_independence(student) -> str | None:
    S, H, W1, W2, v = normal_arrays(32, (4, 2), (3, 3), (5, 2), (5, 3), (5,))
    S2 = S.copy()
    S2[0] += 1.0                                            # change decoder state 0 only
    (a,), (b,) = student(S, H, W1, W2, v), student(S2, H, W1, W2, v)
    if np.allclose(a[1:], b[1:], rtol=1e-4, atol=1e-6) and not np.allclose(a[0], b[0]):
        return None
    return "changing decoder state 0 should change score row 0 and no other row"


BAHDANAU_SCORES = Exercise(
    name="bahdanau_scores", notebook="03_bahdanau_and_luong_scores", number=1,
    summary='Check ``bahdanau_scores(S, H, W1, W2, v) -> scores (m, n)``, e = vᵀ tanh(W1 s_t + W2 h_i).',
    signature="bahdanau_scores(S, H, W1, W2, v) -> scores (m, n)",
    reference=lambda S, H, W1, W2, v: bahdanau_attention_steps(S, H, W1, W2, v).scores,
    outputs=("scores",),
    cases=_bahdanau_cases,
    properties=(
        Property("bahdanau_scores.property-key-order", "reordering encoder states reorders the columns",
                 "Score (t, i) depends on s_t and h_i only, so permuting the rows of H must permute "
                 "the columns of the scores the same way.", _encoder_order),
        Property("bahdanau_scores.property-rows", "row t depends on decoder state t only",
                 "Row t of the scores uses decoder state s_t alone; changing another state must "
                 "leave it unchanged.", _row_independence),
    ),
)


# -- misconceptions: Bahdanau -----------------------------------------------------------------

def _features(S_proj, H_proj):
    return S_proj[:, None, :] + H_proj[None, :, :]          # (m, 1, d_a) + (1, n, d_a) -> (m, n, d_a)


def _b(id: str, probe: str, hint: str):
    return mistake("bahdanau_scores", "bahdanau_scores." + id, probe, hint)


@_b("swapped-projections", "small", "W1 acts on the decoder state and W2 on the encoder states: "
    "e = vᵀ tanh(W1 s_t + W2 h_i) with W1 (d_a, d_s) and W2 (d_a, d_h).")
def _swapped(S, H, W1, W2, v):
    return np.tanh(_features(S @ W2.T, H @ W1.T)) @ v


@_b("row-vector-weights", "runs", "In the chapter's column-vector form W1 is (d_a, d_s) and computes "
    "W1 s_t, so for states stacked as rows use S @ W1.T (and H @ W2.T).")
def _row_vector(S, H, W1, W2, v):
    return np.tanh(_features(S @ W1, H @ W2)) @ v


@_b("no-tanh", "small", "The score applies tanh to W1 s_t + W2 h_i before the product with v; "
    "yours leaves it out.")
def _no_tanh(S, H, W1, W2, v):
    return _features(S @ W1.T, H @ W2.T) @ v


@_b("tanh-after-v", "small", "Apply tanh to the d_a-dimensional sum W1 s_t + W2 h_i, then take the "
    "dot product with v; you applied tanh to the final score.")
def _tanh_after(S, H, W1, W2, v):
    return np.tanh(_features(S @ W1.T, H @ W2.T) @ v)


@_b("tanh-each-term", "small", "Add W1 s_t and W2 h_i first and take tanh of the sum; tanh(a) + tanh(b) "
    "is not tanh(a + b).")
def _tanh_each(S, H, W1, W2, v):
    return _features(np.tanh(S @ W1.T), np.tanh(H @ W2.T)) @ v


@_b("sum-instead-of-v", "small", "Weight the tanh features with v (a dot product, features @ v) "
    "instead of adding them up.")
def _sum_features(S, H, W1, W2, v):
    return np.sum(np.tanh(_features(S @ W1.T, H @ W2.T)), axis=-1)


@_b("softmaxed", "small", "This exercise asks for the raw scores e_{t,i}; the softmax that turns them "
    "into weights is the next step.")
def _softmaxed(S, H, W1, W2, v):
    e = np.tanh(_features(S @ W1.T, H @ W2.T)) @ v
    p = np.exp(e - np.max(e, axis=-1, keepdims=True))
    return p / np.sum(p, axis=-1, keepdims=True)


@_b("transposed", "returns", "Rows of the scores are decoder steps t and columns encoder positions i, "
    "shape (m, n); yours is (n, m).")
def _transposed(S, H, W1, W2, v):
    return (np.tanh(_features(S @ W1.T, H @ W2.T)) @ v).T
