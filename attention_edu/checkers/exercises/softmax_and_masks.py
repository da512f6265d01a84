"""Checkers for softmax, the causal mask and the padding mask (exercise notebook 01), with their mistakes.

``softmax(x)`` weighs the last axis (the keys), stably, giving −inf entries weight 0 and an all −inf
row zeros ("Attention Mechanisms: Fundamentals", "Additive Attention (Bahdanau)", Step 2, and "Masked
Attention"). Masks are boolean, True = may attend; with n > m keys query i sees keys j ≤ i + n − m,
and a padding mask (B, 1, n) broadcasts over the queries.

>>> from attention_edu.checkers import check_softmax, check_causal_mask
>>> check_softmax(lambda x: np.exp(x) / np.exp(x).sum(axis=0, keepdims=True)).hint_id
'softmax.wrong-axis'
>>> check_causal_mask(lambda m, n=None: np.triu(np.ones((m, n or m), dtype=bool), k=1)).hint_id
'causal_mask.inverted'
"""

from functools import partial

from ...backend import host_numpy as np
from ...masks import causal_mask as reference_causal, padding_mask as reference_padding
from ...softmax import softmax as reference_softmax, softmax_naive
from . import normal_arrays, register_mistakes, stable_softmax, variant
from ..records import Case, Exercise, Property

__all__ = ["SOFTMAX", "CAUSAL_MASK", "PADDING_MASK"]


def _softmax_cases() -> list[Case]:
    x = ("x",)
    small = np.array([[0.8, 2.1, 0.5], [1.0, -2.0, 0.5]])
    cases = [Case("small", "x (2, 3)", (small,), x, literal=True,
                  note="Row 0 holds the scores (0.8, 2.1, 0.5) of the chapter's Bahdanau example.")]
    for seed, shape in ((1, (3, 5)), (2, (4, 7)), (3, (6, 2))):
        cases.append(Case("random", f"seed {seed}, x {shape}", normal_arrays(seed, shape, scale=2.0), x))
    cases.append(Case("random", "float32 x (5, 3)", (normal_arrays(4, (5, 3))[0].astype(np.float32),), x))
    for seed, shape in ((5, (4,)), (6, (1, 3, 4)), (7, (2, 3, 4, 5))):   # (1, 3, 4): an axis .squeeze() drops
        cases.append(Case("batched", f"{len(shape)}-D x {shape}", normal_arrays(seed, shape), x))
    big = np.array([[1000.0, 1001.5, 999.25, 1002.0], [-1000.0, -998.5, -1001.0, -999.75], [0.5, -0.25, 1.0, -11.0],
                    [-1e9, 0.5, -1e9, 1.5]])    # row 2 holds a weight of 3e-6: zeroing tiny weights fails
    cases.append(Case("stability", "rows near +1000, -1000 and 0, and one masked with -1e9", (big,), x, literal=True,
                      note="Only the row maximum is safe to subtract: x - mean or x - min overflows in row 3."))
    partial = np.array([[1.0, -np.inf, 2.0, -np.inf, 0.5], [-np.inf, 0.0, 0.0, 1.0, -np.inf],
                        [-np.inf, -np.inf, 3.0, -np.inf, -np.inf]])
    cases.append(Case("masks", "-inf entries, row 2 with a single key left", (partial,), x, literal=True,
                      note="Like row 0 under a causal mask: the one key left gets weight 1."))
    full = np.array([[-np.inf] * 4, [0.5, -np.inf, 1.5, 0.0], [2.0, 1.0, 0.0, -1.0]])
    cases.append(Case("masks", "row 0 entirely -inf", (full,), x, literal=True,
                      note="A fully masked row must come out as zeros, not NaN."))
    return cases


def _shift_invariance(student) -> str | None:
    (x,), (shift,) = normal_arrays(11, (3, 6), scale=3.0), normal_arrays(12, (3, 1), scale=40.0)
    (a,), (b,) = student(x), student(x + shift)
    if np.allclose(a, b, rtol=1e-4, atol=1e-6):
        return None
    with np.errstate(invalid="ignore"):     # inf - inf; fmax skips NaN as np.nanmax does, without its warning
        return f"softmax(x) and softmax(x + c) differ by up to {np.fmax.reduce(abs(a - b), axis=None):.3g} (c per row)"


def _rows_sum_to_one(student) -> str | None:
    (w,) = student(*normal_arrays(13, (7, 4), scale=5.0))
    sums = np.sum(w, axis=-1)
    right = np.all(w >= 0) and np.allclose(sums, 1.0, atol=1e-5)
    return None if right else f"row sums {np.array2string(sums, precision=4)}, smallest weight {float(np.min(w)):.3g}"


SOFTMAX = Exercise(
    name="softmax", notebook="01_softmax_and_masks", number=1,
    summary="Check a student's ``softmax(x)``: weights over the last axis of ``x``.",
    signature="softmax(x) -> weights (..., n)", row_sums=("weights",),
    reference=lambda x: reference_softmax(x, axis=-1), outputs=("weights",), cases=_softmax_cases,
    properties=(
        Property("softmax.property-shift", "adding a constant to a row changes nothing",
                 "Softmax is unchanged when the same constant is added to every entry of a row; yours "
                 "changed, so it depends on the scores' absolute level.", _shift_invariance),
        Property("softmax.property-rows", "weights are non-negative and rows sum to 1",
                 "Every row of weights must be non-negative and add up to 1 over the last axis.",
                 _rows_sum_to_one),
    ),
)


def _causal_cases() -> list[Case]:
    small = [Case("small", "m = 4 (n left out)", (4,), ("m",), literal=True),
             Case("small", "m = 3, n = 5", (3, 5), ("m", "n"), literal=True,
                  note="With more keys than queries the last query lines up with the last key."),
             Case("small", "m = 4, n = 2 (more queries than keys)", (4, 2), ("m", "n"), literal=True,
                  note="Still j ≤ i + n − m: the last query lines up with the last key, the first two see none.")]
    sizes = ((5, 5), (2, 6), (6, 9), (1, 4), (7, 9))      # n = m + 1 would make j > i an upper triangle (red team 71)
    return small + [Case("random", f"m = {m}, n = {n}", (m, n), ("m", "n")) for m, n in sizes]


def _keys_per_row(student) -> str | None:
    counts, want = np.sum(student(6, 8)[0], axis=-1), np.arange(6) + 1 + 8 - 6
    return None if np.array_equal(counts, want) else f"m = 6, n = 8: rows allow {counts.tolist()}, not {want.tolist()}"


def _default_n(student) -> str | None:
    (one,), (two,) = student(5), student(5, 5)
    return None if np.array_equal(one, two) else "causal_mask(5) differs from causal_mask(5, 5)"


CAUSAL_MASK = Exercise(
    name="causal_mask", notebook="01_softmax_and_masks", number=2,
    summary="Check a student's ``causal_mask(m, n=None)``: bool (m, n), True where j ≤ i + n − m.",
    signature="causal_mask(m, n=None) -> mask (m, n), bool",
    reference=lambda m, n=None: reference_causal(m, n), outputs=("mask",), cases=_causal_cases,
    properties=(
        Property("causal_mask.property-counts", "row i allows i + 1 + (n - m) keys",
                 "Query i may attend to exactly the keys 0 … i + (n − m); count the True entries "
                 "of each row to see where yours differs.", _keys_per_row),
        Property("causal_mask.property-default", "n left out means n = m",
                 "Leaving n out must give the same mask as passing n = m.", _default_n),
    ),
    dtype_hint="Return a boolean array (True = may attend), for example from a comparison of positions.",
)


def _padding_cases() -> list[Case]:
    names = ("lengths", "n")
    cases = [Case("small", "lengths (2, 4, 1), n = 5", (np.array([2, 4, 1]), 5), names, literal=True)]
    for seed, (batch, n) in ((1, (4, 6)), (2, (2, 3)), (3, (5, 8))):
        lengths = np.random.default_rng(seed).integers(1, n, size=batch)
        cases.append(Case("random", f"seed {seed}, B = {batch}, n = {n}", (lengths, n), names))
    cases.append(Case("masks", "lengths 0 and n included", (np.array([0, 7, 3]), 7), names))   # a row fully masked
    return cases


def _counts_match(student) -> str | None:
    lengths = np.array([3, 0, 6, 1])
    counts = np.sum(student(lengths, 6)[0], axis=(-2, -1))
    right = np.array_equal(counts, lengths)
    return None if right else f"for lengths {lengths.tolist()} and n = 6 the masks allow {counts.tolist()} keys"


PADDING_MASK = Exercise(
    name="padding_mask", notebook="01_softmax_and_masks", number=3,
    summary="Check a student's ``padding_mask(lengths, n)``: bool (B, 1, n), True where j < lengths[b].",
    signature="padding_mask(lengths, n) -> mask (B, 1, n), bool",
    reference=lambda lengths, n: reference_padding(lengths, n), outputs=("mask",), cases=_padding_cases,
    properties=(Property("padding_mask.property-counts", "sequence b allows lengths[b] keys",
                         "Sequence b must allow exactly its first lengths[b] keys.", _counts_match),),
    dtype_hint="Return a boolean array (True = may attend); the comparison j < lengths[b] gives one.",
)


# -- misconceptions -------------------------------------------------------------------------------

_row_max, _row_sum = (partial(reduce, axis=-1, keepdims=True) for reduce in (np.max, np.sum))     # (..., m, 1)


register_mistakes("softmax", (
    ("wrong-axis", "small", lambda x: stable_softmax(x, axis=0), "Your weights sum to 1 down each column (over "
     "the queries), not along each row: softmax the last axis (the keys), axis=-1."),
    ("whole-array", "small", lambda x: np.exp(x - np.max(x)) / np.sum(np.exp(x - np.max(x))),
     "Your weights sum to 1 over the whole array instead of per row: sum over the last axis with keepdims=True."),
    ("missing-keepdims", "runs", lambda x: np.exp(x - _row_max(x)) / np.sum(np.exp(x - _row_max(x)), axis=-1),
     "A row reduction without keepdims=True has shape (m,) and no longer lines up with (m, n): "
     "write np.max(x, axis=-1, keepdims=True) and the same for the sum."),
    ("unnormalised", "small", lambda x: np.exp(x - _row_max(x)),
     "You stop at exp(x - max): divide by the row sum so that each row adds up to 1."),
    ("log-softmax", "small", lambda x: (x - _row_max(x)) - np.log(_row_sum(np.exp(x - _row_max(x)))),
     "These are log-probabilities (log-softmax): the weights are exp(x - max) divided by their row sum."),
    ("no-exp", "small", lambda x: x / _row_sum(x),
     "You normalise the raw scores: exponentiate first so that every weight is positive, then divide by the row sum."),
    ("shift-mismatch", "small", lambda x: np.exp(x) / _row_sum(np.exp(x - _row_max(x))),
     "Shift numerator and denominator by the same row maximum: exp(x - max) / sum(exp(x - max))."),
    ("unshifted-denominator", "small", lambda x: np.exp(x - _row_max(x)) / _row_sum(np.exp(x)),
     "Shift numerator and denominator by the same row maximum: exp(x - max) / sum(exp(x - max)); "
     "your denominator sums exp(x) unshifted."),
    ("column-max-shift", "small", lambda x: softmax_naive(x - np.max(x, axis=0, keepdims=True)),
     "Subtract each row's own maximum, np.max(x, axis=-1, keepdims=True): a maximum taken down the "
     "columns is not a constant within a row, so it changes the weights."),
    ("no-max-shift", "stability", softmax_naive,
     "exp overflows for scores near 1000, and inf / inf is NaN: subtract each row's maximum "
     "before exp (mathematically the result is the same)."),
    ("global-max-shift", "stability", lambda x: softmax_naive(x - np.max(x)),
     "One maximum for the whole array leaves rows far below it as 0 / 0: subtract each row's "
     "own maximum, np.max(x, axis=-1, keepdims=True)."),
    ("causal-inside", "small",       # np.tril(np.ones_like(x)) as a mask inside softmax (nothing to mask in 1-D)
     lambda x: stable_softmax(np.where(np.tril(np.ones(x.shape[-2:], bool)), x, -np.inf) if x.ndim > 1 else x),
     "Your weights are 0 above the diagonal: softmax takes the scores as given; the causal mask belongs to "
     "attention, applied to the scores before softmax (a padded or encoder row may see every key)."),
    ("transpose-trick", "runs", lambda x: (np.exp(x - np.max(x)).T / np.sum(np.exp(x - np.max(x)), axis=0)).T,
     "(e.T / e.sum(axis=0)).T divides row i by the sum of column i (and needs a square x): the trick needs the row "
     "sums, e.sum(axis=-1), or with no transposes e / e.sum(axis=-1, keepdims=True)."),
    ("masked-row-nan", "masks", lambda x: stable_softmax(x, guard=False),
     "A row of all -inf has maximum -inf, and -inf - (-inf) is NaN: where the row maximum is not finite "
     "subtract 0 instead (and divide by 1 where the sum is 0), so the row comes out as zeros."),
))
variant("softmax.global-max-shift")(            # guarded: rows far below the one maximum come out as 0, not 0 / 0
    lambda x: (lambda e: e / np.where(_row_sum(e) > 0, _row_sum(e), 1.0))(np.exp(x - np.max(x))))


def _triangle(m, n, keep=np.tril, offset=0, sign=1):
    """keep(ones (m, n), k=sign · (n − m) + offset); the defaults give the causal mask."""
    n = m if n is None else n
    return keep(np.ones((m, n), dtype=bool), k=sign * (n - m) + offset)


register_mistakes("causal_mask", (
    ("inverted", "small", lambda m, n=None: _triangle(m, n, np.triu, offset=1),
     "Your mask is True on the future keys; True means 'may attend', so keep the lower triangle j ≤ i (np.tril)."),
    ("no-diagonal", "small", lambda m, n=None: _triangle(m, n, offset=-1),
     "Your mask hides each query's own position: query i may attend to keys j ≤ i, the diagonal included."),
    ("upper-triangle", "small", lambda m, n=None: _triangle(m, n, np.triu),
     "Rows are queries, columns keys: query i may attend to keys j ≤ i, the lower triangle (np.tril), not upper."),
    ("float", "returns", lambda m, n=None: _triangle(m, n).astype(np.float64),
     "Return booleans (True = may attend), not 1.0 and 0.0: compare positions, or pass dtype=bool to np.ones."),
    ("additive", "returns", lambda m, n=None: np.where(_triangle(m, n), 0.0, -np.inf),
     "That is the additive form (0, and -inf or -1e9); this exercise wants the boolean mask of shape (m, n), True = "
     "may attend, and the -inf only appears when the mask is applied to the scores."),
    ("float-inverted", "returns", lambda m, n=None: 1.0 - _triangle(m, n), "Your mask is 1.0 on the future keys "
     "(TensorFlow's look-ahead mask, 1 = hide); here True means may attend: np.tril(np.ones((m, n), bool), k=n - m)."),
    ("top-left", "small", lambda m, n=None: _triangle(m, n, sign=0),
     "With n > m the last query lines up with the last key: query i sees j ≤ i + (n − m), np.tril(..., k=n - m)."),
    ("offset-sign", "small", lambda m, n=None: _triangle(m, n, sign=-1),
     "The offset has the wrong sign: with n > m every query sees n − m extra keys, so use k = n - m, not m - n."),
    ("ignores-n", "returns", lambda m, n=None: np.tril(np.ones((m, m), dtype=bool)),
     "The mask needs one column per key, shape (m, n); n falls back to m only when it is None."),
))
for fill in (-1e9, -1e10):      # finite fills in place of -inf (-1e10: picoGPT's), shaped (m, n) or (1, 1, m, n)
    variant("causal_mask.additive")(lambda m, n=None, fill=fill: np.where(_triangle(m, n), 0.0, fill))
    variant("causal_mask.additive")(lambda m, n=None, fill=fill: np.where(_triangle(m, n), 0.0, fill)[None, None])


def _visible(lengths, n, compare=np.less):                  # compare(j, lengths[b]) for every key j: (B, 1, n)
    return compare(np.arange(n)[None, None, :], np.asarray(lengths)[:, None, None])  # (1, 1, n) with (B, 1, 1)


register_mistakes("padding_mask", (
    ("inverted", "small", lambda lengths, n: _visible(lengths, n, np.greater_equal),
     "Your mask is True on the padding; True means 'may attend', so key j is visible exactly when j < lengths[b]."),
    ("off-by-one", "small", lambda lengths, n: _visible(lengths, n, np.less_equal),
     "Positions count from 0: a sequence of length L owns keys 0 … L − 1, so the test is j < lengths[b], "
     "not j ≤ lengths[b]."),
    ("no-query-axis", "returns", lambda lengths, n: _visible(lengths, n)[:, 0, :],
     "Keep a size-1 query axis, shape (B, 1, n): then the mask broadcasts over the queries of the scores (B, m, n)."),
    ("axis-order", "returns", lambda lengths, n: np.swapaxes(_visible(lengths, n), -1, -2),
     "Put the size-1 axis in the middle, (B, 1, n): shaped (B, n, 1) it broadcasts over the keys, not the queries."),
    ("float", "returns", lambda lengths, n: _visible(lengths, n).astype(np.float64),
     "Return booleans (True = may attend), not numbers (1 and 0, or the additive form: 0, and -inf or -1e9, which "
     "belongs to the scores): the comparison j < lengths[b] already gives them."),
    ("longest-length", "returns", lambda lengths, n: _visible(lengths, int(np.max(lengths))),
     "Size the mask by n, the padded number of keys, not by the longest sequence in the batch."),
    ("longest-no-query-axis", "returns", lambda lengths, n: _visible(lengths, int(np.max(lengths)))[:, 0, :],
     "Size the mask by n, the padded number of keys, not by the longest sequence, and keep a size-1 query axis: "
     "shape (B, 1, n), so that it broadcasts over the queries."),
))
for fill in (-np.inf, -1e9):      # the additive form, 0 where a key is seen (hint studies 35's 15 and 38's 06)
    variant("padding_mask.float")(lambda lengths, n, fill=fill: np.where(_visible(lengths, n), 0.0, fill))
