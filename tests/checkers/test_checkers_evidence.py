"""Diagnosis by evidence, every probe run, and every distinct mistake reported (issue 17).

A hint that names a mistake must be given only when its evidence holds: the readers are
tested on inputs where it holds and where it does not (then the generic message stays).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import attention_edu as ae
from attention_edu.checkers import CHECKERS, EXERCISES, all_mistakes, hint_ids
from attention_edu.checkers.diagnosis.evidence import (constant_relation, extra_axis, rank_hint,
                                                      sums_to_one_axis)
from attention_edu.checkers.diagnosis.mutants import variants_of

pytestmark = pytest.mark.usefixtures("calls_inline")  # each check's calls in this process (conftest.py)

VARIANTS = [(m, v) for m in all_mistakes() for v in variants_of(m)[1:]]


def test_variants_exist_for_the_mask_fills():
    ids = {m.id for m, _ in VARIANTS}
    assert {"attention.finite-fill", "attention.inverted-mask-finite-fill",
            "attention_backward.finite-fill", "attention_backward.inverted-mask-finite-fill"} <= ids


@pytest.mark.parametrize("mistake,mutant", VARIANTS,
                         ids=[f"{m.id}-{getattr(v, '__name__', 'partial')}" for m, v in VARIANTS])   # a partial: no name
def test_every_variant_spelling_gets_its_mistake(mistake, mutant):
    result = CHECKERS[mistake.exercise](mutant)
    raised = "\nError: " in result.details        # a spelling that raises ((d_a, n) + (d_a, m)) is told where it ran
    named = {mistake.id, LINE_TWINS.get(mistake.id) if raised else None}      # a twin: told apart by its line
    assert result.hint_id in named and result.probe == ("runs" if raised else mistake.probe), str(result)


#: spellings that raise as another mistake's variant does: a mutant shows no line of the student's, and the line that
#: raised tells them apart (tests/checkers/test_checkers_real_code.py runs both, np.dot's among them)
LINE_TWINS = {"luong_general_scores.untransposed-H": "luong_general_scores.states-as-columns"}


@pytest.mark.parametrize("kind", ["U8", "complex128", "datetime64[s]"])
@pytest.mark.parametrize("name", sorted(EXERCISES))
def test_outputs_of_text_or_complex_numbers_are_told_their_dtype_by_every_exercise(name, kind):
    """Red team 80: text returned where the entropies go crashed the exercise's own readers ("the grader failed on
    this submission"): the right numbers as text, complex or dates are told their dtype, in every exercise."""
    reference = EXERCISES[name].reference

    def student(*args):
        out = reference(*args)
        converted = tuple(np.asarray(o).astype("int64" if kind.startswith("datetime") else o.dtype).astype(kind)
                          for o in (out if isinstance(out, tuple) else (out,)))
        return converted if isinstance(out, tuple) else converted[0]

    result = CHECKERS[name](student)
    assert not result.passed and result.hint_id == "harness.dtype", str(result)


def test_readers_ids_are_listed():
    assert {"attention_backward.chain", "attention_entropy.log-epsilon", "error.fixed-ndim",
            "value.wrong-axis", "shape.extra-axis", "shape.broadcast-axis", "value.factor",
            "value.offset", "value.partly-right"} <= set(hint_ids())


# -- the readers, where their evidence holds and where it does not ----------------------------

def test_sums_to_one_axis_needs_exactly_one_axis():
    w = ae.softmax(np.random.default_rng(0).standard_normal((2, 3, 4)), axis=1)
    assert sums_to_one_axis(w) == 1
    assert sums_to_one_axis(np.full((2, 2), 0.5)) is None                 # both axes: ambiguous
    assert sums_to_one_axis(-w) is None and sums_to_one_axis(2 * w) is None


def test_extra_axis_and_constant_relation_refuse_what_they_cannot_explain():
    assert extra_axis((2, 3, 1), (2, 3)) == (2, 1) and extra_axis((3, 2), (2, 3)) is None
    rng = np.random.default_rng(1)
    e = rng.standard_normal(20)
    assert constant_relation(e + rng.standard_normal(20) * 1e-2, e) is None
    assert constant_relation(3 * e, e) == ("factor", pytest.approx(3.0))
    assert constant_relation(e - 0.25, e) == ("offset", pytest.approx(-0.25))


def test_rank_hint_only_when_ranks_split_cleanly():
    assert rank_hint({2: [True], 3: [True]}) is None                          # nothing fails
    assert rank_hint({2: [False], 3: [False]}) is None                        # nothing works
    assert rank_hint({2: [True, False], 3: [True]}) is None                   # a rank both works and fails
    text = rank_hint({2: [False, False], 3: [True], 4: [False]})
    assert "runs on 3-D input only" in text and "2-D and 4-D" in text


def test_a_value_wrong_on_every_case_of_a_rank_it_runs_on_comes_before_the_rank_hint():
    """From real code (an outside study of 66 public implementations): ``axis=1`` hard-coded raises on 1-D and is
    wrong on every 3-D and 4-D case, but the first hint said "works on 2-D, 3-D and 4-D". The wrong axis leads now;
    where the ranks it runs on are right but for an edge case (no max shift), the rank hint still leads."""
    def axis_one(x):
        return np.exp(x) / np.expand_dims(np.sum(np.exp(x), axis=1), 1)

    def two_d(x):
        n, _ = x.shape
        return np.exp(x) / np.exp(x).sum(axis=1).reshape(n, 1)
    first = CHECKERS["softmax"](axis_one)
    assert [m["hint_id"] for m in first.mistakes][::2] == ["value.wrong-axis", "error.fixed-ndim"], str(first)
    assert "axis 1 of the 3-D input" in first.hint and "runs on 2-D, 3-D and 4-D" in first.mistakes[-1]["hint"]
    second = CHECKERS["softmax"](two_d)
    assert [m["hint_id"] for m in second.mistakes] == ["error.fixed-ndim", "softmax.no-max-shift"], str(second)


def test_a_function_that_always_raises_gets_no_rank_hint():
    def broken(x):
        return np.zeros(6).reshape(7)     # NumPy's "cannot reshape array of size 6 into shape (7,)", on every rank
    result = CHECKERS["softmax"](broken)
    assert result.hint_id == "error.other"
    assert [m["hint_id"] for m in result.mistakes] == ["error.other"]


def test_unexplained_values_keep_the_generic_hint():
    def noisy(x):        # rows of weights that sum to 1 (noise added to them instead is value.not-weights)
        return ae.softmax(x + 0.1 * np.sin(np.arange(x.size).reshape(x.shape) * 7.3))
    result = CHECKERS["softmax"](noisy)
    assert result.hint_id == "value.mismatch", str(result)


def test_a_constant_factor_is_named():
    def bits(weights):
        safe = np.where(weights > 0, weights, 1.0)
        return -np.sum(weights * np.log(safe), axis=-1) * 1.5
    result = CHECKERS["attention_entropy"](bits)
    assert result.hint_id == "value.factor" and "1.5 times" in result.hint, str(result)
    assert "look for a constant factor" in result.hint      # 1.5 is no telling constant: the generic advice stays


def _entropy(log=np.log, total=np.sum):
    def attention_entropy(weights):
        return -total(weights * log(np.where(weights > 0, weights, 1.0)), axis=-1)
    return attention_entropy


@pytest.mark.parametrize("exercise, fn, told", [
    ("attention_entropy", _entropy(log=np.log10), "0.4343 times the expected one, 1/ln 10: a base-10 logarithm"),
    ("attention_entropy", _entropy(total=np.mean), "0.25 times the expected one, one over the size of axis -1 of "
                                                   "weights (4)"),
    ("backward_ds", lambda W, dW: W * (np.sum(W * dW, axis=-1, keepdims=True) - dW), "-1 times the expected one: "
                                                                                     "the opposite sign everywhere"),
    ("backward_dq", lambda dS, K: dS @ K * math.sqrt(K.shape[-1]), "4 times the expected one, the size of axis -1 "
                                                                   "of K (4)"),
    ("backward_dk", lambda dS, Q: np.swapaxes(dS, -1, -2) @ Q / Q.shape[-1], "0.5 times the expected one, one over "
                                                                            "the square root of the size of axis -1"),
])
def test_a_telling_factor_is_named_by_its_cause(exercise, fn, told):
    """A factor of −1, 1/ln 10 or a size of an input axis (or its square root) says where to look; an epsilon inside
    the log is not read from a factor (it fitted a base-10 log and a mean, where a factor holds exactly)."""
    result = CHECKERS[exercise](fn)
    assert result.hint_id == "value.factor" and told in result.hint, str(result)
    assert "attention_entropy.log-epsilon" not in {m["hint_id"] for m in result.mistakes}, str(result)


def test_an_extra_axis_of_size_one_is_named():
    def kept(x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return (e / e.sum(axis=-1, keepdims=True))[..., None, :]
    result = CHECKERS["softmax"](kept)
    assert result.hint_id == "shape.extra-axis", str(result)
    assert "extra axis 1 of size 1" in result.hint


def test_which_outputs_are_right_in_attention():
    def doubled_output(Q, K, V, mask=None):
        out, w = ae.scaled_dot_product_attention(Q, K, V, mask)
        return out + np.sin(out), w
    result = CHECKERS["scaled_dot_product_attention"](doubled_output)
    assert result.hint_id == "value.partly-right" and result.hint.startswith("weights is right; output is not")


def test_backward_says_where_the_chain_breaks():
    def dk_off(Q, K, V, d_output, mask=None):
        dQ, dK, dV = ae.checkers.exercises.backward.backward(Q, K, V, d_output, mask)
        return dQ, dK + np.cos(dK), dV
    result = CHECKERS["attention_backward"](dk_off)
    assert result.hint_id == "attention_backward.chain"
    assert result.hint.startswith("dQ and dV are right; dK is not: the error is in dK")


# -- every probe runs; every distinct mistake is listed --------------------------------------------

def two_mistakes(x):
    """Written for 2-D input only, and without the max shift."""
    N, D = x.shape
    e = np.exp(x)
    return e / e.sum(axis=1).reshape(N, 1)


def test_a_function_with_two_mistakes_gets_both_with_their_first_probes():
    result = CHECKERS["softmax"](two_mistakes)
    ids = [m["hint_id"] for m in result.mistakes]
    assert ids[0] == result.hint_id == "error.fixed-ndim"
    assert len(ids) >= 2 and any(i.startswith("softmax.") for i in ids[1:]), ids
    assert all(set(m) == {"hint_id", "probe", "hint"} for m in result.mistakes)
    assert result.mistakes[0]["probe"] == result.probe == "runs"
    text = str(result)
    assert f"{len(ids)} mistakes found" in text.splitlines()[0]
    for mistake in result.mistakes[1:]:
        assert f"[{mistake['hint_id']}]" in text and mistake["hint"] in text
        assert mistake["hint_id"] in result._repr_html_()


def test_probes_passed_counts_every_probe_not_only_those_before_the_first_failure():
    def unstable(x):
        e = np.exp(x)
        return e / e.sum(axis=-1, keepdims=True)
    result = CHECKERS["softmax"](unstable)
    assert result.probe != "small"                          # it fails late ...
    first_failure_index = 6
    assert result.probes_passed > first_failure_index       # ... and probes after it still count
    assert result.probes_passed < result.probes_total


def test_the_headline_stays_one_line():
    result = CHECKERS["softmax"](two_mistakes)
    assert "\n" not in result.headline and result.headline.startswith("check softmax: failed.")


def test_a_mistake_found_early_explains_later_probes():
    """The inverted +finite mask matches -inf inversion on cases with no fully masked row: one mistake."""
    def inverted(Q, K, V, mask=None):
        s = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
        s = s if mask is None else s + mask * -1e9
        w = ae.softmax(s)
        return w @ V, w
    result = CHECKERS["scaled_dot_product_attention"](inverted)
    assert [m["hint_id"] for m in result.mistakes] == ["attention.inverted-mask-finite-fill"]


def test_the_students_guide_shows_a_real_multi_mistake_report():
    from pathlib import Path
    guide = (Path(__file__).resolve().parents[2] / "docs" / "students.md").read_text(encoding="utf-8")
    import linecache

    code = "def softmax(x):" + guide.split("```python\ndef softmax(x):")[1].split("```")[0]
    namespace = {"np": np}
    linecache.cache["<guide cell>"] = (len(code), None, code.splitlines(True), "<guide cell>")   # as a notebook's cell
    exec(compile(code, "<guide cell>", "exec"), namespace)                 # noqa: S102 (our own docs)
    lines = str(CHECKERS["softmax"](namespace["softmax"])).splitlines()
    for line in lines[:5]:              # the error's line too, counted from the top of the cell (red team 13B)
        assert line in guide, line
    assert "2 mistakes found" in lines[0]


@pytest.mark.parametrize("axis", [0, -1])
def test_probes_failed_counts_each_group_as_a_loop_over_the_cases_does(axis):
    def naive(x):                                   # no max subtracted; axis 0 is also the wrong axis
        e = np.exp(x)
        return e / e.sum(axis=axis, keepdims=True)
    exercise = EXERCISES["softmax"]
    expected: dict[str, int] = {}
    for case in exercise.cases():                   # the oracle: every public case, called here
        with np.errstate(all="ignore"):
            mine, want = naive(*case.args), exercise.reference(*case.args)
        if not (np.shape(mine) == np.shape(want) and np.allclose(mine, want, rtol=1e-5, atol=1e-8)):
            expected[case.probe] = expected.get(case.probe, 0) + 1
    result = CHECKERS["softmax"](naive)
    cases_only = {k: v for k, v in result.probes_failed.items() if k not in ("properties", "determinism")}
    assert cases_only == expected
    assert sum(result.probes_failed.values()) == result.probes_total - result.probes_passed


def test_a_wrong_shape_on_a_propertys_call_alone_is_read_with_nothing_expected():
    """A property's call has no expected output: the exercise's own shape readers (multi-head's unprojected output)
    must not read one there (the grader failed on such a submission while they did)."""
    def odd(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
        out, weights = ae.multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask)
        return (out[..., :1] if X_q.shape == (3, 4) and W_V.shape == (4, 4) else out), weights
    result = CHECKERS["multi_head_attention"](odd)
    assert result.hint_id == "harness.shape" and result.case.probe == "properties", str(result)


def test_weights_over_the_wrong_sum_are_not_told_they_are_the_scores():
    """Hint study 25: exp(s) divided by the sum of the scores (not of the exponentials) was told to "return the
    weights the softmax makes, not the scores before it", which it did not return."""
    def over_score_sum(x):
        return np.exp(x) / np.sum(x, axis=-1, keepdims=True)
    result = CHECKERS["softmax"](over_score_sum)
    assert result.hint_id == "value.not-weights" and "their own row's sum" in result.hint, str(result)
    assert "not the scores before it" not in result.hint, result.hint
