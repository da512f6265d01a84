"""Severity: a value off only by rounding is a rounding slip, never an erratum; the causes hold."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_edu.worked_examples.builder import Builder
from attention_edu.worked_examples.example import Example
from attention_edu.worked_examples.printed import matches, parse_printed
from attention_edu.worked_examples.severity import ROUNDING_CAUSES, classify

DIGITS = st.integers(min_value=0, max_value=4)
COUNTS = st.integers(min_value=-99_999, max_value=99_999)  # the printed value, in units of its last digit
FRACTION = st.floats(min_value=0.0, max_value=0.999)


def _text(count: int, digits: int) -> str:
    value = count / 10**digits
    return f"{value:.{digits}f}" if digits else f"{count}.0"[:-2]


def _example(build) -> Example:
    ex = Builder()
    build(ex)
    return Example("t", "t", "t", ex.inputs, ex.printed, ex.computed, tuple(ex.checks), None, (), ())


@settings(max_examples=300, deadline=None)
@given(count=COUNTS, digits=st.integers(1, 4), fraction=FRACTION, marker=st.sampled_from(
    ["~", "≈ ", "about ", "roughly ", "approximately "]), rounded=st.booleans())
def test_an_approximate_value_right_at_its_printed_precision_matches(count, digits, fraction,
                                                                     marker, rounded):
    """"~v" matches any x that rounds to v, or that truncates (towards zero) to v."""
    unit = 10.0**-digits
    sign = -1.0 if count < 0 else 1.0
    offset = (fraction - 0.5) * unit * 0.999 if rounded else sign * fraction * unit
    computed = count * unit + offset
    grade = classify(parse_printed(marker + _text(count, digits)), computed)
    assert grade.severity == "match"


@settings(max_examples=300, deadline=None)
@given(count=COUNTS, digits=DIGITS, within=st.floats(min_value=-0.999, max_value=0.999),
       scale=st.sampled_from(["", "%"]))
def test_a_value_within_one_unit_of_its_last_digit_is_never_an_erratum(count, digits, within, scale):
    unit = 10.0**-digits
    if not digits and count % 10 == 0:
        count += 1  # "80" is a round figure with its own precision; keep to significant digits
    computed = (count + within) * unit * (0.01 if scale == "%" else 1)
    grade = classify(parse_printed(_text(count, digits) + scale), computed)
    assert grade.severity in ("match", "rounding")
    if grade.severity == "rounding":
        assert grade.causes and set(grade.causes) <= set(ROUNDING_CAUSES)


@settings(max_examples=200, deadline=None)
@given(count=COUNTS, digits=st.integers(1, 4), units_off=st.floats(min_value=1.01, max_value=50))
def test_a_value_explained_only_by_rounded_intermediates_is_a_rounding_slip(count, digits, units_off):
    """Far from the exact value, but exactly what the chapter's rounded intermediates give."""
    unit = 10.0**-digits
    text = _text(count, digits)
    exact = (count + units_off) * unit
    grade = classify(parse_printed(text), exact, from_rounded=count * unit)
    assert grade.severity == "rounding" and grade.causes == ("rounded intermediates",)
    assert classify(parse_printed(text), exact).severity == "erratum"  # nothing explains it


@pytest.mark.parametrize("text, computed, from_rounded, causes", [
    ("1.945", 1.94449, None, ("last digit",)),
    ("2.5 MB", 2_560_000, None, ("truncation",)),
    ("12.05", 12.0404, 2.23 + 8.17 + 1.65, ("rounded intermediates",)),
    ("[0.9999, 0.0001]", [0.999955, 4.54e-5], None, ("truncation", "last digit")),
    ("[0.333, 0.730]", [0.333535, 0.730212], [0.333, 0.730], ("rounded intermediates",)),
])
def test_the_chapters_slips_are_graded_with_their_cause(text, computed, from_rounded, causes):
    grade = classify(parse_printed(text, byte_base=1000), computed, from_rounded)
    assert (grade.severity, grade.causes) == ("rounding", causes)


@pytest.mark.parametrize("text, computed, from_rounded", [
    ("≈ 69 billion", 137_841_606_656, None),        # a factor 2 dropped
    ("approximately 1000×", 2054.0, None),
    ("≈ 511", 256.0, None),
    ("[0.268, 0.252]", [0.2358, 0.3107], None),     # wrong weights
    ("12.05", 12.02, 12.10),                         # 3 units off; the rounded intermediates do not explain it
    ("[0.50, 0.50]", [0.4927, 0.4885], None),        # one element 1.15 units off: beyond rounding
])
def test_values_wrong_beyond_rounding_are_errata(text, computed, from_rounded):
    assert classify(parse_printed(text), computed, from_rounded).severity == "erratum"


def test_example_status_ranks_erratum_over_rounding_over_reproduced():
    def slip(ex):
        ex.value("a", "0.482", 0.48195)
        ex.value("b", "1.945", math.exp(0.665), cause="exp(0.665) = 1.94449")
    example = _example(slip)
    assert example.status == "rounding" and not example.errata
    assert [c.name for c in example.rounding] == ["b"]
    b = example.checks[1]
    assert (b.ok, b.severity, b.cause) == (False, "rounding", "last digit")
    assert b.to_dict()["severity"] == "rounding" and b.to_dict()["cause"] == "last digit"
    assert "1 of 2 checks off only by rounding (last digit)" == example.status_reason

    def both(ex):
        slip(ex)
        ex.value("c", "≈ 69 billion", 137_841_606_656, cause="a factor 2 dropped")
    example = _example(both)
    assert example.status == "erratum" and [c.name for c in example.errata] == ["c"]
    assert example.checks[2].to_dict()["cause"] == "beyond rounding"
    assert _example(lambda ex: ex.value("a", "0.482", 0.48195)).status == "reproduced"


def test_a_rounding_slip_without_a_written_cause_still_says_why():
    example = _example(lambda ex: ex.value("x", "2.5 MB", 2_560_000, byte_base=1000))
    assert example.status == "rounding"
    assert example.checks[0].note == "off only by rounding: truncation"


def test_an_approximate_match_by_truncation_is_noted():
    example = _example(lambda ex: ex.value("m", "~402 MB", 402_653_184, byte_base=1000))
    assert example.status == "reproduced" and example.checks[0].ok
    assert "truncated" in example.checks[0].note
    assert matches("~402 MB", 402_653_184, 1000) and not matches("402 MB", 402_653_184, 1000)


def test_from_rounded_is_kept_for_an_independent_recheck():
    def build(ex):
        exps = np.exp([0.8, 2.1, 0.5])
        ex.value("exp_sum", "12.05", exps.sum(), from_rounded=np.round(exps, 2).sum())
    check = _example(build).checks[0]
    assert check.from_rounded == pytest.approx(12.05)
    assert check.to_dict()["from_rounded"] == pytest.approx(12.05)
