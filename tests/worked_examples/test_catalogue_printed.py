"""The printed-value parser: text → value ± tolerance, and what must not match."""

import numpy as np
import pytest

from attention_edu.worked_examples.builder import parse_shape
from attention_edu.worked_examples.printed import matches, parse_printed


@pytest.mark.parametrize("text, value, tol", [
    ("0.482", 0.482, 0.0005),
    ("-0.24", -0.24, 0.005),
    ("−0.120", -0.12, 0.0005),            # Unicode minus, trailing zero significant
    ("≈ 1.3 billion", 1.3e9, 0.05e9),
    ("~402 MB", None, None),              # needs byte_base: checked separately
    ("262,400", 262400, 0.5),             # thousands separators: an exact count
    ("67,000,000", 67e6, 0.5),
    ("800", 800, 50),                     # round figure: trailing zeros not significant
    ("approximately 1000×", 1000, 500),
    ("1600", 1600, 50),
    ("25", 25, 0.5),
    ("0", 0, 0.5),
    ("82%", 0.82, 0.005),
    ("67.8%", 0.678, 0.0005),
    ("≈ 67 MFLOPs", 67e6, 0.5e6),
    ("≈ 1.8 GFLOPs", 1.8e9, 0.05e9),
    ("2 × 10^-9", 2e-9, 0.5e-9),
    ("1.77 million", 1.77e6, 0.005e6),
])
def test_scalars_parse_to_value_and_tolerance(text, value, tol):
    if value is None:
        with pytest.raises(ValueError, match="byte_base"):
            parse_printed(text)
        return
    p = parse_printed(text)
    assert p.value == pytest.approx(value) and p.tol == pytest.approx(tol)


def test_byte_units_follow_the_chosen_base():
    assert parse_printed("10 KB", byte_base=1000).value == 10_000
    assert parse_printed("400 KB", byte_base=1024).value == 409_600
    assert parse_printed("2.5 MB", byte_base=1000).tol == pytest.approx(50_000)
    with pytest.raises(ValueError, match="1000 or 1024"):
        parse_printed("4 MB", byte_base=1001)


def test_arrays_parse_elementwise_with_their_own_precisions():
    p = parse_printed("[0.881, 0.119, 0, 0]")
    np.testing.assert_allclose(p.value, [0.881, 0.119, 0, 0])
    np.testing.assert_allclose(p.tol, [0.0005, 0.0005, 0.5, 0.5])
    nested = parse_printed("[[1, 0, 1], [0, 1, 1]]")
    assert nested.value.shape == (2, 3)
    assert parse_printed("[1.0, 2 × 10^-9]").value[1] == pytest.approx(2e-9)
    assert list(parse_printed("[1,000, 2]").value) == [1000, 2]


@pytest.mark.parametrize("text, computed", [
    ("0.482", 0.48195), ("0.482", 0.48249), ("[0.42, 0.16, 0.42]", [0.4223, 0.1554, 0.4223]),
    ("≈ 1.3 billion", 1_314_560_000), ("800", 825.2), ("0.248", 0.45 * 0.55),
    ("[1.0, 2 × 10^-9]", [1 - 2.06e-9, 2.06e-9]), ("-0.055", -0.05477), ("19%", 0.193),
])
def test_values_that_round_to_the_printed_text_match(text, computed):
    assert matches(text, computed)


@pytest.mark.parametrize("text, exact, computed, byte_base", [
    ("~402 MB", "402 MB", 402_653_184, 1000),  # 402.65 MB: truncated, right at the printed precision
    ("≈ 0.99", "0.99", 0.9999, None), ("about -1.2", "-1.2", -1.29, None),
    ("roughly 7", "7", 7.9, None),
])
def test_approximate_values_match_when_truncated_at_their_precision(text, exact, computed, byte_base):
    assert matches(text, computed, byte_base)
    assert not matches(exact, computed, byte_base)  # the same text without "~" is exact


@pytest.mark.parametrize("text, computed", [
    ("≈ 511", 512.0),       # truncating 512 gives 512, not 511
    ("~402", 403.2), ("≈ 0.99", 0.98), ("about -1.2", -1.1),   # truncation goes towards zero
])
def test_approximate_values_still_miss_when_neither_rounded_nor_truncated(text, computed):
    assert not matches(text, computed)


@pytest.mark.parametrize("text, computed, byte_base", [
    ("0.482", 0.4826, None),                          # rounds to 0.483
    ("0.333", 0.33354, None),                         # the Bahdanau context component
    ("12.05", 12.0404, None),
    ("≈ 511", 512.0, None),
    ("≈ 69 billion", 137_842_573_312, None),
    ("approximately 1000×", 2054.0, None),
    ("67,000,000", 67_108_864, None),                 # separators make it exact
    ("80", 86.0, None),
    ("2.5 MB", 2_560_000, 1000),
    ("2.5 MB", 2_560_000, 1024),
    ("[0.42, 0.16, 0.42]", [0.4223, 0.1554], None),   # shape differs
    ("[0.18, 0.33, 0.49]", [0.1554, 0.4223, 0.4223], None),
    ("2 × 10^-9", 2.6e-9, None),
    ("82%", 0.826, None),
    ("0.0001", 4.54e-5, None),
])
def test_values_outside_the_printed_precision_do_not_match(text, computed, byte_base):
    assert not matches(text, computed, byte_base)


@pytest.mark.parametrize("text", ["", "about", "seven", "1.2.3", "[0.1, 0.2", "12 parsecs",
                                  "[[1, 2], [3]]"])
def test_unreadable_text_is_rejected_with_the_text_named(text):
    with pytest.raises(ValueError, match="parse_printed"):
        parse_printed(text)


def test_shapes_parse_with_symbols_bound():
    assert parse_shape("10 × 128") == (10, 128)
    assert parse_shape("(1, 5, 48)") == (1, 5, 48)
    assert parse_shape("(B, H, L, d_k)", {"B": 2, "H": 4, "L": 6, "d_k": 8}) == (2, 4, 6, 8)
    assert parse_shape("n × d_v", {"n": 4, "d_v": 2}) == (4, 2)
    with pytest.raises(ValueError, match="'d_k'.*bound: n"):
        parse_shape("n × d_k", {"n": 4})
