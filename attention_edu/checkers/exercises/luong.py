"""Checker for the general (Luong) score exercise, with its misconceptions.

e_{t,i} = s_tᵀ W h_i with W (d_s, d_h) ("Attention Mechanisms: Fundamentals",
table "Attention Score Computation Methods", row "General (Luong)"). Decoder
states S (m, d_s) and encoder states H (n, d_h) are rows; scores are (m, n).

Examples
--------
>>> from attention_edu.checkers import check_luong_general_scores
>>> check_luong_general_scores(lambda S, H, W: S @ W @ H.T).passed
True
>>> check_luong_general_scores(lambda S, H, W: S @ H.T).hint_id
'luong_general_scores.ignores-W'
"""

from __future__ import annotations

import math

from ...backend import host_numpy as np
from ...luong import luong_attention_steps
from .bahdanau import normal_arrays as _normal
from ..diagnosis.mutants import mistake
from ..records import Case, Exercise, Property

__all__ = ["LUONG_GENERAL_SCORES"]

_L = ("S", "H", "W")


def _luong_cases() -> list[Case]:
    S = np.array([[1.0, 0.0], [0.5, -1.0]])
    H = np.array([[1.0, 2.0], [0.0, 1.0], [-1.0, 0.5]])
    W = np.array([[1.0, 2.0], [0.0, -1.0]])
    cases = [Case("small", "m = 2, n = 3, d_s = d_h = 2", (S, H, W), _L, literal=True)]
    for seed, (m, n, d_s, d_h) in ((1, (2, 3, 4, 5)), (2, (4, 2, 3, 6)), (3, (5, 4, 2, 3))):
        cases.append(Case("random", f"seed {seed}, m={m} n={n} d_s={d_s} d_h={d_h}",
                          _normal(seed, (m, d_s), (n, d_h), (d_s, d_h)), _L))
    args = tuple(a.astype(np.float32) for a in _normal(4, (3, 2), (4, 5), (2, 5)))
    cases.append(Case("random", "float32, m=3 n=4 d_s=2 d_h=5", args, _L))
    return cases


def _linear_in_w(student) -> str | None:
    S, H, A, B = _normal(33, (3, 4), (5, 2), (4, 2), (4, 2))
    (a,), (b,), (both,) = student(S, H, A), student(S, H, B), student(S, H, A + B)
    if np.allclose(a + b, both, rtol=1e-4, atol=1e-6):
        return None
    return "scores(W = A + B) differ from scores(A) + scores(B)"


def _identity_is_dot(student) -> str | None:
    S, H = _normal(34, (3, 4), (5, 4))
    (a,) = student(S, H, np.eye(4))
    if np.allclose(a, S @ H.T, rtol=1e-4, atol=1e-6):
        return None
    return "with W = I the general score should equal the dot score S Hᵀ"


LUONG_GENERAL_SCORES = Exercise(
    name="luong_general_scores", notebook="03_bahdanau_and_luong_scores", number=2,
    summary='Check ``luong_general_scores(S, H, W) -> scores (m, n)``, e = s_tᵀ W h_i.',
    signature="luong_general_scores(S, H, W) -> scores (m, n)",
    reference=lambda S, H, W: luong_attention_steps(S, H, "general", W=W).scores,
    outputs=("scores",),
    cases=_luong_cases,
    properties=(
        Property("luong_general_scores.property-linear", "the scores are linear in W",
                 "sᵀ W h is linear in W: the scores for W = A + B must be the sum of the scores "
                 "for A and for B.", _linear_in_w),
        Property("luong_general_scores.property-identity", "W = I gives the dot score",
                 "With W the identity the general score sᵀ W h is the plain dot product s · h.",
                 _identity_is_dot),
    ),
)


# -- misconceptions: Luong general --------------------------------------------------------------

def _l(id: str, probe: str, hint: str):
    return mistake("luong_general_scores", "luong_general_scores." + id, probe, hint)


@_l("transposed-W", "small", "With W (d_s, d_h) the score s_tᵀ W h_i is (S @ W) @ Hᵀ for stacked "
    "states; you used W transposed.")
def _w_t(S, H, W):
    return S @ W.T @ H.T


@_l("ignores-W", "small", "The general score puts W between the states, s_tᵀ W h_i; without W it "
    "is the dot score.")
def _no_w(S, H, W):
    return S @ H.T


@_l("scaled", "small", "Luong's general score is not scaled: leave out the division by a square root.")
def _scaled(S, H, W):
    return S @ W @ H.T / math.sqrt(H.shape[-1])


@_l("softmaxed", "small", "This exercise asks for the raw scores; the softmax over the encoder "
    "positions comes afterwards.")
def _l_softmaxed(S, H, W):
    e = S @ W @ H.T
    p = np.exp(e - np.max(e, axis=-1, keepdims=True))
    return p / np.sum(p, axis=-1, keepdims=True)


@_l("transposed", "returns", "Rows are decoder steps and columns encoder positions: the scores "
    "are (m, n), S @ W @ Hᵀ.")
def _l_transposed(S, H, W):
    return H @ W.T @ S.T
