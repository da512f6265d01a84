"""check_answer: the catalogue's values pass, rounding passes, typical mistakes and misprints are named."""

from __future__ import annotations

import numpy as np
import pytest

import attention_edu as ae
from attention_edu.checkers import check_answer
from attention_edu.checkers.answers import ANSWERS

SPECS = list(ANSWERS.values())
WRONGS = [(spec.id, part.name, wrong) for spec in SPECS for part in spec.parts for wrong in part.wrongs]


def _computed(answer_id):
    return ae.worked_examples.get(answer_id).computed


def _right(spec, rounding=None):
    computed = _computed(spec.id)
    answer = {}
    for part in spec.parts:
        value = computed[part.name]
        if rounding and part.kind in ("number", "array"):
            value = np.asarray(rounding(np.asarray(value, dtype=float))).tolist()
        answer[part.name] = value
    return answer


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.id)
def test_the_catalogue_values_pass(spec):
    result = check_answer(spec.id, **_right(spec))
    assert result.passed, str(result)


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.id)
def test_sensible_rounding_passes(spec):
    def three_significant(x):
        out = np.array([float(f"{v:.3g}") for v in np.ravel(x)]).reshape(np.shape(x))
        return out if out.ndim else float(out)

    assert check_answer(spec.id, **_right(spec, three_significant)).passed
    assert check_answer(spec.id, **_right(spec, lambda x: np.round(x, 2))).passed


def test_only_required_parts_are_needed_and_positional_answer_is_the_first_part():
    assert check_answer("fund.exercise-1", weights=_computed("fund.exercise-1")["weights"]).passed
    assert check_answer("fund.exercise-1", weights=_computed("fund.exercise-1")["weights"][None, :]).passed
    assert check_answer("dot.exercise-3", np.array([2.048e9])).passed
    assert check_answer("dot.exercise-3", 2.048e9).passed
    assert check_answer("dot.exercise-3", "2,048,000,000").passed


@pytest.mark.parametrize("answer_id,part,wrong", WRONGS, ids=lambda x: getattr(x, "hint_id", str(x)))
def test_typical_wrong_answers_get_their_hint(answer_id, part, wrong):
    spec = ANSWERS[answer_id]
    answer = _right(spec)
    answer[part] = wrong.value(ae.worked_examples.get(answer_id))
    result = check_answer(answer_id, **answer)
    assert result.hint_id == wrong.hint_id and result.passed == wrong.accept, str(result)
    assert wrong.hint in str(result)


def _misprints():
    for spec in SPECS:
        example = ae.worked_examples.get(spec.id)
        for part in spec.parts:
            for check in example.checks:
                if check.name == part.name and not check.ok:
                    yield spec.id, part.name, check.printed


MISPRINTS = list(_misprints())


def test_the_known_errata_are_covered():
    assert {(a, p) for a, p, _ in MISPRINTS} >= {("fund.exercise-1", "weights"),
                                                 ("fund.exercise-3", "softmax_scaled")}


@pytest.mark.parametrize("answer_id,part,printed", MISPRINTS)
def test_the_books_misprint_gets_the_misprint_message(answer_id, part, printed):
    from attention_edu.worked_examples.printed import parse_printed

    answer = _right(ANSWERS[answer_id])
    answer[part] = parse_printed(printed).value
    result = check_answer(answer_id, **answer)
    assert not result.passed and result.hint_id == "answer.misprint"
    assert "misprint" in result.summary and "right value" in result.hint
    right = np.round(np.asarray(_computed(answer_id)[part], dtype=float), 4)
    assert np.array2string(right, precision=4, suppress_small=True) in result.hint


def test_half_the_flops_names_the_multiply_add():
    result = check_answer("fund.exercise-2", output_shape=(10, 128), attention_shape=(10, 20), qk_flops=12_800)
    assert result.hint_id == "answer.half-flops" and "multiply-add" in result.hint


def test_transposed_shape_and_shape_strings():
    assert check_answer("fund.exercise-2", output_shape="10 × 128", attention_shape="(10, 20)",
                        qk_flops=25_600).passed
    result = check_answer("fund.exercise-2", output_shape=(10, 128), attention_shape=(20, 10), qk_flops=25_600)
    assert result.hint_id == "answer.transposed-shape"


def test_unscaled_versus_scaled():
    scaled = _computed("dot.exercise-1")["output_scaled"]
    assert check_answer("dot.exercise-1", output=scaled).hint_id == "answer.scaled"


def test_far_off_answers_say_how_far_without_the_answer():
    result = check_answer("fund.exercise-2", output_shape=(10, 128), attention_shape=(10, 20), qk_flops=30_000)
    assert result.hint_id == "answer.mismatch" and "17% above" in result.summary
    assert "25,600" not in str(result) and "25600" not in str(result)


def test_not_attempted_incomplete_unreadable_and_usage_errors():
    assert check_answer("fund.exercise-2", output_shape=..., attention_shape=..., qk_flops=...).status == \
        "not attempted"
    assert check_answer("fund.exercise-2").status == "not attempted"
    incomplete = check_answer("fund.exercise-2", output_shape=(10, 128))
    assert incomplete.hint_id == "answer.incomplete" and "qk_flops" in incomplete.hint
    assert check_answer("fund.exercise-2", output_shape=(10, 128), attention_shape=(10, 20),
                        qk_flops="lots").hint_id == "answer.unreadable"
    with pytest.raises(ValueError, match="unknown answer id 'fund.exercise-9'.*fund.exercise-1"):
        check_answer("fund.exercise-9", 1)
    with pytest.raises(ValueError, match="unknown part.*flops.*output_shape"):
        check_answer("fund.exercise-2", flops=1)


def test_strict_mode_for_answers():
    from attention_edu.checkers import CheckFailed

    with pytest.raises(CheckFailed):
        check_answer("dot.exercise-3", 1.024e9, strict=True)


def test_answers_with_no_number_in_them_are_unreadable_and_say_how_to_write_them():
    """Red team 13B. "abc" for weights read "weights has shape (0,); the expected answer has shape (4,)";
    "ten" for a shape read "output_shape = () is not the expected shape" (not what was typed); NaN read
    "total_flops = nan is nan% below the expected value"; the unreadable hint read "Give qk_flops as a
    number (Each of the m·n scores ...)"; an entry was named "(np.int64(3),)"."""
    letters = check_answer("fund.exercise-1", weights="abc")
    assert letters.hint_id == "answer.unreadable" and "cannot read weights = 'abc'" in letters.summary, letters
    assert letters.hint.startswith("Give weights as an array or a list of numbers. "), letters
    word = check_answer("fund.exercise-2", output_shape="ten", attention_shape=(10, 20), qk_flops=25_600)
    assert word.hint_id == "answer.unreadable" and "= ()" not in word.summary, word
    for value in (float("nan"), float("inf")):
        endless = check_answer("dot.exercise-3", total_flops=value)
        assert "is not a finite number" in endless.summary and "%" not in endless.summary, endless
    lots = check_answer("fund.exercise-2", output_shape=(10, 128), attention_shape=(10, 20), qk_flops="lots")
    assert lots.hint.startswith("Give qk_flops as a number. Each"), lots
    entry = check_answer("fund.exercise-1", weights="[0.1, 0.2, 0.3, 0.4]")
    assert "entry (3,) = 0.4" in entry.summary and "np." not in entry.summary, entry


def test_an_incomplete_answer_says_what_is_right_in_a_sentence():
    """Red team 13B: it read "output_shape right so far; still missing: ..." (no verb)."""
    one = check_answer("fund.exercise-2", output_shape=(10, 128))
    two = check_answer("fund.exercise-2", output_shape=(10, 128), attention_shape=(10, 20))
    assert one.summary.startswith("output_shape is right so far; still missing: attention_shape, qk_flops"), one
    assert two.summary.startswith("output_shape, attention_shape are right so far; still missing: qk_flops"), two


def test_an_optional_part_left_as_ellipsis_is_asked_for_not_skipped():
    """A notebook's stub passes every part as ``...``: one still blank is missing, optional or not (it passed
    before, with only the required parts filled in); a part not passed at all stays optional."""
    given = _computed("fund.exercise-4")
    filled = dict(output_shape_5=given["output_shape_5"], weights_shape_5=given["weights_shape_5"])
    blank = check_answer("fund.exercise-4", **filled, output_shape_10=..., weights_shape_10=None)
    assert not blank.passed and blank.hint_id == "answer.incomplete", blank
    assert blank.summary.endswith("still missing: output_shape_10, weights_shape_10"), blank
    assert check_answer("fund.exercise-4", **filled).passed
    stub = check_answer("dot.exercise-5", max_entropy=..., entropy_cat_sat_mat=...)
    assert stub.status == "not attempted" and stub.summary == "no answer yet: fill in max_entropy, entropy_cat_sat_mat."


def test_a_yes_no_answer_typed_in_quotes_is_told_to_drop_them():
    """Red team 13B: is_symmetric_tied="True" read "Give is_symmetric_tied as True or False": what was typed."""
    quoted = check_answer("dot.exercise-4", is_symmetric_tied="True")
    assert quoted.hint_id == "answer.unreadable" and "True or False, without quotes." in quoted.hint, quoted


def test_every_wrong_part_is_listed_as_a_mistake_not_only_the_first():
    result = check_answer("fund.exercise-2", output_shape=(128, 10), attention_shape=(20, 10), qk_flops=12_800)
    assert (result.hint_id, result.probe) == ("answer.transposed-shape", "output_shape")
    assert [(m["hint_id"], m["probe"]) for m in result.mistakes] == [
        ("answer.transposed-shape", "output_shape"), ("answer.transposed-shape", "attention_shape"),
        ("answer.half-flops", "qk_flops")]
    text = str(result)      # each part told once: the first as the hint, the others as mistakes 2 and 3
    assert text.count("output_shape = (128, 10)") == 1 and "Mistake 2 [answer.transposed-shape]" in text
    assert "attention_shape = (20, 10) is not right" in text and "Mistake 3 [answer.half-flops]" in text
    right_and_unreadable = check_answer("fund.exercise-2", output_shape=(10, 128), attention_shape="ten",
                                        qk_flops=12_800)
    assert [(m["hint_id"], m["probe"]) for m in right_and_unreadable.mistakes] == [
        ("answer.unreadable", "attention_shape"), ("answer.half-flops", "qk_flops")]


def test_answers_that_are_no_sizes_or_no_real_numbers_fail_and_none_raises():
    """Red team 14: (10.9, 128.9) and "(-10, -128)" passed as the shape (10, 128) (int() cut the fraction, the
    pattern dropped the sign); a NumPy complex or a date passed as a number (its imaginary part cast away, with a
    raw ComplexWarning); a list for one number, 10**400 and [] raised raw tracebacks."""
    ok = dict(attention_shape=(10, 20), qk_flops=25_600)
    for shape in [(10.9, 128.9), np.array([10.99, 128.5]), "(-10, -128)"]:
        assert not check_answer("fund.exercise-2", output_shape=shape, **ok).passed, shape
    for flops in [np.complex128(25_600 + 90_000j), np.datetime64(25_600, "s"), 25_600 + 90_000j]:
        result = check_answer("fund.exercise-2", output_shape=(10, 128), attention_shape=(10, 20), qk_flops=flops)
        assert result.hint_id == "answer.unreadable", (flops, result)
    right = np.array([0.2358, 0.3107, 0.2509, 0.2026])
    assert check_answer("fund.exercise-1", weights=right).passed
    assert check_answer("fund.exercise-1", weights=right + 5j).hint_id == "answer.unreadable"
    for answer_id, parts in [("dot.exercise-3", dict(total_flops=[1_024_000_000, 1_024_000_000])),
                             ("dot.exercise-3", dict(total_flops=10**400)),
                             ("fund.exercise-2", dict(output_shape=(10, 128), attention_shape=(10, 20),
                                                      qk_flops=(200, 128))),
                             ("fund.exercise-3", dict(variance=64, std=[]))]:
        result = check_answer(answer_id, **parts)
        assert not result.passed and result.hint_id == "answer.unreadable", (parts, result)


def test_right_answers_written_as_people_write_numbers_pass():
    """Red team 14: "(10.0, 128.0)" was read as (10, 0, 128, 0), ".236" as 236 and "2.36E-1" as 2.36 and 1."""
    ok = dict(attention_shape=(10, 20), qk_flops=25_600)
    assert check_answer("fund.exercise-2", output_shape="(10.0, 128.0)", **ok).passed
    for weights in ["[.236, .311, .251, .203]", "2.36E-1, 3.11E-1, 2.51E-1, 2.03E-1", "0.236 0.311 0.251 0.203"]:
        assert check_answer("fund.exercise-1", weights=weights).passed, weights
    zero = check_answer("dot.exercise-5", max_entropy=1.0986, entropy_cat_sat_mat=[1.017, 1.017, 0.975],
                        entropy_one_hot=0.01)
    assert not zero.passed and "inf" not in zero.summary and "off by more than rounding" in zero.summary, zero


def test_honest_answer_forms_from_false_fail_hunt_3_are_read():
    """np.array(True) for a yes/no answer was "give True or False"; Fraction(64) and Decimal("64") were "give a
    number"; a 2 x 2 answer pasted as NumPy printed it was read flat, "shape (4,); the expected answer has shape
    (2, 2)". Each is read now, and a wrong one still fails."""
    from decimal import Decimal
    from fractions import Fraction

    assert check_answer("dot.exercise-4", is_symmetric_tied=np.array(True)).passed
    assert check_answer("dot.exercise-4", is_symmetric_tied=np.array(False)).hint_id == "answer.not-symmetric"
    for variance in (Fraction(64), Decimal("64")):
        assert check_answer("fund.exercise-3", variance=variance, std=Fraction(8)).passed, variance
    assert check_answer("fund.exercise-3", variance=Decimal("8"), std=8).hint_id == "answer.std-for-variance"
    right = ae.worked_examples.get("dot.exercise-1").computed["output"]
    printed = np.array2string(right, precision=4)
    assert "\n" in printed and check_answer("dot.exercise-1", output=printed).passed, printed
    assert not check_answer("dot.exercise-1", output=np.array2string(right.T, precision=4)).passed
    assert not check_answer("dot.exercise-1", output="[[1 2 3]\n [4 5]]").passed      # rows of two lengths
