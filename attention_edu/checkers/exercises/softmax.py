"""Checker for the softmax exercise, with its misconceptions.

The student writes ``softmax(x)``: weights over the last axis (the keys),
computed stably, with −inf entries (masked scores) getting weight 0 and an
all −inf row giving all zeros ("Attention Mechanisms: Fundamentals",
sections "Additive Attention (Bahdanau)", Step 2, and "Masked Attention").

Examples
--------
>>> from attention_edu.checkers import check_softmax
>>> import attention_edu as ae
>>> check_softmax(ae.softmax).passed
True
>>> import numpy as np
>>> result = check_softmax(lambda x: np.exp(x) / np.exp(x).sum(axis=0, keepdims=True))
>>> result.hint_id
'softmax.wrong-axis'
"""

from __future__ import annotations

from ...backend import host_numpy as np
from ...softmax import softmax as reference_softmax
from ..diagnosis.mutants import mistake
from ..records import Case, Exercise, Property

__all__ = ["SOFTMAX"]

_INF = np.inf


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _cases() -> list[Case]:
    x = ("x",)
    small = np.array([[0.8, 2.1, 0.5], [1.0, -2.0, 0.5]])
    cases = [Case("small", "x (2, 3)", (small,), x, literal=True,
                  note="Row 0 holds the scores (0.8, 2.1, 0.5) of the chapter's Bahdanau example.")]
    for seed, shape in ((1, (3, 5)), (2, (4, 7)), (3, (6, 2))):
        cases.append(Case("random", f"seed {seed}, x {shape}", (2.0 * _rng(seed).standard_normal(shape),), x))
    cases.append(Case("random", "float32 x (5, 3)", (_rng(4).standard_normal((5, 3)).astype(np.float32),), x))
    for seed, shape in ((5, (4,)), (6, (2, 3, 4)), (7, (2, 3, 4, 5))):
        cases.append(Case("batched", f"{len(shape)}-D x {shape}", (_rng(seed).standard_normal(shape),), x))
    big = np.array([[1000.0, 1001.5, 999.25, 1002.0], [-1000.0, -998.5, -1001.0, -999.75],
                    [0.5, -0.25, 1.0, 0.0]])
    cases.append(Case("stability", "rows near +1000, -1000 and 0", (big,), x, literal=True))
    partial = np.array([[1.0, -_INF, 2.0, -_INF, 0.5], [-_INF, 0.0, 0.0, 1.0, -_INF]])
    cases.append(Case("masks", "-inf entries", (partial,), x, literal=True))
    full = np.array([[-_INF, -_INF, -_INF, -_INF], [0.5, -_INF, 1.5, 0.0], [2.0, 1.0, 0.0, -1.0]])
    cases.append(Case("masks", "row 0 entirely -inf", (full,), x, literal=True,
                      note="A fully masked row must come out as zeros, not NaN."))
    return cases


def _shift_invariance(student) -> str | None:
    x = 3.0 * _rng(11).standard_normal((3, 6))
    shift = 40.0 * _rng(12).standard_normal((3, 1))
    (a,), (b,) = student(x), student(x + shift)
    if np.allclose(a, b, rtol=1e-4, atol=1e-6):
        return None
    return f"softmax(x) and softmax(x + c) differ by up to {float(np.nanmax(np.abs(a - b))):.3g} (c constant per row)"


def _rows_sum_to_one(student) -> str | None:
    (w,) = student(5.0 * _rng(13).standard_normal((7, 4)))
    sums = np.sum(w, axis=-1)
    if np.all(w >= 0) and np.allclose(sums, 1.0, atol=1e-5):
        return None
    return f"row sums {np.array2string(sums, precision=4)}, smallest weight {float(np.min(w)):.3g}"


SOFTMAX = Exercise(
    name="softmax", notebook="01_softmax_and_masks", number=1,
    summary="Check a student's ``softmax(x)``: weights over the last axis of ``x``.",
    signature="softmax(x) -> weights (..., n)",
    reference=lambda x: reference_softmax(x, axis=-1),
    outputs=("weights",),
    cases=_cases,
    properties=(
        Property("softmax.property-shift", "adding a constant to a row changes nothing",
                 "Softmax is unchanged when the same constant is added to every entry of a row; yours "
                 "changed, so it depends on the scores' absolute level.", _shift_invariance),
        Property("softmax.property-rows", "weights are non-negative and rows sum to 1",
                 "Every row of weights must be non-negative and add up to 1 over the last axis.",
                 _rows_sum_to_one),
    ),
    row_sums=("weights",),
)


# -- misconceptions ---------------------------------------------------------------------------

def _stable(x, axis=-1, guard=True):
    top = np.max(x, axis=axis, keepdims=True)
    if guard:
        top = np.where(np.isfinite(top), top, 0.0)
    e = np.exp(x - top)
    total = np.sum(e, axis=axis, keepdims=True)
    return e / np.where(total > 0, total, 1.0) if guard else e / total


@mistake("softmax", "softmax.wrong-axis", "small",
         "Your weights sum to 1 down each column (over the queries), not along each row: softmax the "
         "last axis (the keys), axis=-1.")
def _wrong_axis(x):
    return _stable(x, axis=0)


@mistake("softmax", "softmax.whole-array", "small",
         "Your weights sum to 1 over the whole array instead of per row: sum over the last axis "
         "with keepdims=True.")
def _whole_array(x):
    e = np.exp(x - np.max(x))
    return e / np.sum(e)


@mistake("softmax", "softmax.missing-keepdims", "runs",
         "A row reduction without keepdims=True has shape (m,) and no longer lines up with (m, n): "
         "write np.max(x, axis=-1, keepdims=True) and the same for the sum.")
def _missing_keepdims(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1)


@mistake("softmax", "softmax.unnormalised", "small",
         "You stop at exp(x - max): divide by the row sum so that each row adds up to 1.")
def _unnormalised(x):
    return np.exp(x - np.max(x, axis=-1, keepdims=True))


@mistake("softmax", "softmax.log-softmax", "small",
         "These are log-probabilities (log-softmax): the weights are exp(x - max) divided by "
         "their row sum.")
def _log_softmax(x):
    shifted = x - np.max(x, axis=-1, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))


@mistake("softmax", "softmax.no-exp", "small",
         "You normalise the raw scores: exponentiate first so that every weight is positive, then "
         "divide by the row sum.")
def _no_exp(x):
    return x / np.sum(x, axis=-1, keepdims=True)


@mistake("softmax", "softmax.shift-mismatch", "small",
         "Shift numerator and denominator by the same row maximum: "
         "exp(x - max) / sum(exp(x - max)).")
def _shift_mismatch(x):
    return np.exp(x) / np.sum(np.exp(x - np.max(x, axis=-1, keepdims=True)), axis=-1, keepdims=True)


@mistake("softmax", "softmax.unshifted-denominator", "small",
         "Shift numerator and denominator by the same row maximum: exp(x - max) / sum(exp(x - max)); "
         "your denominator sums exp(x) unshifted.")
def _unshifted_denominator(x):
    top = np.max(x, axis=-1, keepdims=True)
    return np.exp(x - top) / np.sum(np.exp(x), axis=-1, keepdims=True)


@mistake("softmax", "softmax.column-max-shift", "small",
         "Subtract each row's own maximum, np.max(x, axis=-1, keepdims=True): a maximum taken down the "
         "columns is not a constant within a row, so it changes the weights.")
def _column_max(x):
    e = np.exp(x - np.max(x, axis=0, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


@mistake("softmax", "softmax.no-max-shift", "stability",
         "exp overflows for scores near 1000, and inf / inf is NaN: subtract each row's maximum "
         "before exp (mathematically the result is the same).")
def _no_max_shift(x):
    e = np.exp(x)
    return e / np.sum(e, axis=-1, keepdims=True)


@mistake("softmax", "softmax.global-max-shift", "stability",
         "One maximum for the whole array leaves rows far below it as 0 / 0: subtract each row's "
         "own maximum, np.max(x, axis=-1, keepdims=True).")
def _global_max(x):
    e = np.exp(x - np.max(x))
    return e / np.sum(e, axis=-1, keepdims=True)


@mistake("softmax", "softmax.masked-row-nan", "masks",
         "A row of all -inf has maximum -inf, and -inf - (-inf) is NaN: where the row maximum is "
         "not finite subtract 0 instead (and divide by 1 where the sum is 0), so the row comes out "
         "as zeros.")
def _masked_row_nan(x):
    return _stable(x, guard=False)
