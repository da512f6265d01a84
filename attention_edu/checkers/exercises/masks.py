"""Checkers for the two mask exercises (causal and padding), with their misconceptions.

Masks are boolean with True = may attend ("Attention Mechanisms:
Fundamentals", section "Masked Attention", writes the same causal mask as an
additive matrix, −∞ above the diagonal). For n > m keys the causal mask
lines up the last query with the last key: query i sees keys j ≤ i + n − m.
A padding mask has shape (B, 1, n) so that it broadcasts over the queries.

Examples
--------
>>> from attention_edu.checkers import check_causal_mask, check_padding_mask
>>> import attention_edu as ae, numpy as np
>>> check_causal_mask(ae.causal_mask).passed
True
>>> check_causal_mask(lambda m, n=None: np.triu(np.ones((m, n or m), dtype=bool), k=1)).hint_id
'causal_mask.inverted'
>>> import attention_edu as ae
>>> check_padding_mask(ae.padding_mask).passed
True
"""

from __future__ import annotations

from ...backend import host_numpy as np
from ...masks import causal_mask as reference_causal
from ...masks import padding_mask as reference_padding
from ..diagnosis.mutants import mistake
from ..records import Case, Exercise, Property

__all__ = ["CAUSAL_MASK", "PADDING_MASK"]


def _causal_cases() -> list[Case]:
    cases = [Case("small", "m = 4 (n left out)", (4,), ("m",), literal=True),
             Case("small", "m = 3, n = 5", (3, 5), ("m", "n"), literal=True,
                  note="With more keys than queries the last query lines up with the last key.")]
    for m, n in ((5, 5), (2, 6), (6, 9), (1, 4), (7, 8)):
        cases.append(Case("random", f"m = {m}, n = {n}", (m, n), ("m", "n")))
    return cases


def _keys_per_row(student) -> str | None:
    (mask,) = student(6, 8)
    counts = np.sum(mask, axis=-1)
    want = np.arange(6) + 1 + 8 - 6
    if np.array_equal(counts, want):
        return None
    return f"for m = 6, n = 8 the rows allow {counts.tolist()} keys; expected {want.tolist()}"


def _default_n(student) -> str | None:
    (one,), (two,) = student(5), student(5, 5)
    return None if np.array_equal(one, two) else "causal_mask(5) differs from causal_mask(5, 5)"


CAUSAL_MASK = Exercise(
    name="causal_mask", notebook="01_softmax_and_masks", number=2,
    summary="Check a student's ``causal_mask(m, n=None)``: bool (m, n), True where j ≤ i + n − m.",
    signature="causal_mask(m, n=None) -> mask (m, n), bool",
    reference=lambda m, n=None: reference_causal(m, n),
    outputs=("mask",),
    cases=_causal_cases,
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
    cases.append(Case("random", "lengths 0 and n included", (np.array([0, 7, 3]), 7), names))
    return cases


def _counts_match(student) -> str | None:
    lengths = np.array([3, 0, 6, 1])
    (mask,) = student(lengths, 6)
    counts = np.sum(mask, axis=(-2, -1))
    if np.array_equal(counts, lengths):
        return None
    return f"for lengths {lengths.tolist()} and n = 6 the masks allow {counts.tolist()} keys"


PADDING_MASK = Exercise(
    name="padding_mask", notebook="01_softmax_and_masks", number=3,
    summary="Check a student's ``padding_mask(lengths, n)``: bool (B, 1, n), True where j < lengths[b].",
    signature="padding_mask(lengths, n) -> mask (B, 1, n), bool",
    reference=lambda lengths, n: reference_padding(lengths, n),
    outputs=("mask",),
    cases=_padding_cases,
    properties=(Property("padding_mask.property-counts", "sequence b allows lengths[b] keys",
                         "Sequence b must allow exactly its first lengths[b] keys.", _counts_match),),
    dtype_hint="Return a boolean array (True = may attend); the comparison j < lengths[b] gives one.",
)


# -- misconceptions: causal mask ----------------------------------------------------------------

def _grid(m, n):
    n = m if n is None else n
    return np.ones((m, n), dtype=bool), n


@mistake("causal_mask", "causal_mask.inverted", "small",
         "Your mask is True on the future keys; True means 'may attend', so keep the lower "
         "triangle j ≤ i (np.tril).")
def _inverted(m, n=None):
    ones, n = _grid(m, n)
    return np.triu(ones, k=1 + n - m)


@mistake("causal_mask", "causal_mask.no-diagonal", "small",
         "Your mask hides each query's own position: query i may attend to keys j ≤ i, the "
         "diagonal included.")
def _no_diagonal(m, n=None):
    ones, n = _grid(m, n)
    return np.tril(ones, k=n - m - 1)


@mistake("causal_mask", "causal_mask.upper-triangle", "small",
         "Rows are queries and columns keys: query i may attend to keys j ≤ i, which is the lower "
         "triangle (np.tril), not the upper one.")
def _upper(m, n=None):
    ones, n = _grid(m, n)
    return np.triu(ones, k=n - m)


@mistake("causal_mask", "causal_mask.float", "returns",
         "Return booleans (True = may attend), not 1.0 and 0.0: compare positions, or pass "
         "dtype=bool to np.ones.")
def _float(m, n=None):
    ones, n = _grid(m, n)
    return np.tril(ones, k=n - m).astype(np.float64)


@mistake("causal_mask", "causal_mask.additive", "returns",
         "That is the additive form (0 and -inf); this exercise wants the boolean mask, True = may "
         "attend, and the -inf only appears when the mask is applied to the scores.")
def _additive(m, n=None):
    ones, n = _grid(m, n)
    return np.where(np.tril(ones, k=n - m), 0.0, -np.inf)


@mistake("causal_mask", "causal_mask.top-left", "small",
         "With n > m the last query lines up with the last key: query i may attend to keys "
         "j ≤ i + (n − m), that is np.tril(..., k=n - m).")
def _top_left(m, n=None):
    ones, _ = _grid(m, n)
    return np.tril(ones)


@mistake("causal_mask", "causal_mask.offset-sign", "small",
         "The offset has the wrong sign: with n > m every query sees n − m extra keys, so use "
         "k = n - m, not m - n.")
def _offset_sign(m, n=None):
    ones, n = _grid(m, n)
    return np.tril(ones, k=m - n)


@mistake("causal_mask", "causal_mask.ignores-n", "returns",
         "The mask needs one column per key, shape (m, n); n falls back to m only when it is None.")
def _ignores_n(m, n=None):
    return np.tril(np.ones((m, m), dtype=bool))


# -- misconceptions: padding mask ---------------------------------------------------------------

def _positions(lengths, n):
    return np.arange(n)[None, None, :], np.asarray(lengths)[:, None, None]  # (1, 1, n), (B, 1, 1)


@mistake("padding_mask", "padding_mask.inverted", "small",
         "Your mask is True on the padding; True means 'may attend', so key j is visible exactly "
         "when j < lengths[b].")
def _pad_inverted(lengths, n):
    j, length = _positions(lengths, n)
    return j >= length


@mistake("padding_mask", "padding_mask.off-by-one", "small",
         "Positions count from 0: a sequence of length L owns keys 0 … L − 1, so the test is "
         "j < lengths[b], not j ≤ lengths[b].")
def _pad_off_by_one(lengths, n):
    j, length = _positions(lengths, n)
    return j <= length


@mistake("padding_mask", "padding_mask.no-query-axis", "returns",
         "Keep a size-1 query axis, shape (B, 1, n), so that the mask broadcasts over the m "
         "queries of the scores (B, m, n).")
def _pad_flat(lengths, n):
    j, length = _positions(lengths, n)
    return (j < length)[:, 0, :]


@mistake("padding_mask", "padding_mask.axis-order", "returns",
         "Put the size-1 axis in the middle, (B, 1, n): shaped (B, n, 1) the mask would broadcast "
         "over the keys instead of the queries.")
def _pad_column(lengths, n):
    j, length = _positions(lengths, n)
    return np.swapaxes(j < length, -1, -2)


@mistake("padding_mask", "padding_mask.float", "returns",
         "Return booleans (True = may attend), not numbers: the comparison j < lengths[b] already "
         "gives them.")
def _pad_float(lengths, n):
    j, length = _positions(lengths, n)
    return (j < length).astype(np.float64)


@mistake("padding_mask", "padding_mask.longest-length", "returns",
         "Size the mask by n, the padded number of keys, not by the longest sequence in the batch.")
def _pad_longest(lengths, n):
    return _pad_correct_width(lengths, int(np.max(lengths)))


def _pad_correct_width(lengths, n):
    j, length = _positions(lengths, n)
    return j < length
