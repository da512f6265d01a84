"""The worked-example catalogue: every inventory id, statuses derived honestly, read-only entries."""

import json
import math

import numpy as np
import pytest

import attention_edu as ae
from attention_edu.worked_examples.printed import matches, parse_printed

# The 39 ids of the chapters' inventory (the chapter index, which lives outside this
# repository), in its order. Hard-coded so that CI does not need the chapter files.
INVENTORY_IDS = (
    "fund.seq2seq-memory", "fund.attention-matrix-memory", "fund.translation-distributions",
    "fund.bahdanau-flops", "fund.bahdanau-memory", "fund.bahdanau-params", "fund.bahdanau-example",
    "fund.scaling-variance", "fund.softmax-saturation", "fund.scaling-gradients", "fund.sdpa-flops",
    "fund.arithmetic-intensity", "fund.sdpa-example", "fund.qkv-flops", "fund.qkv-example",
    "fund.attention-matrix-example", "fund.bert-attention-memory", "fund.causal-mask",
    "fund.exercise-1", "fund.exercise-2", "fund.exercise-3", "fund.exercise-4",
    "dot.similarity", "dot.cat-sat-mat", "dot.soft-lookup", "dot.attention-pattern",
    "dot.complexity", "dot.exercise-1", "dot.exercise-2", "dot.exercise-3", "dot.exercise-4",
    "dot.exercise-5", "matrix.flow", "matrix.exercise", "vector.shapes", "vector.masks",
    "vector.loops-vs-matmul", "sheet.example-5x3", "sheet.memory",
)

# What the comparison finds today. A change here means a printed value now compares
# differently: look at the entry before updating these tables.
ERRATA = {  # wrong beyond rounding
    "fund.sdpa-flops": {"bahdanau_flops", "ratio"},
    "fund.arithmetic-intensity": {"flops", "flops_in_ratio", "flops_per_byte"},
    "fund.qkv-flops": {"qkv_share_of_attention"},
    "fund.exercise-1": {"W1_h1", "preactivation_1", "tanh_1", "score_1", "scores", "weights"},
    "fund.exercise-3": {"softmax_scaled", "gradient_scaled"},
    "dot.cat-sat-mat": {"weights", "output_sat", "output_mat"},
    "sheet.example-5x3": {"scores", "weights", "printed_weight_rows_sum_to_1", "output"},
}
ROUNDING = {  # off only by rounding, with the cause the comparison finds
    "fund.bahdanau-memory": {"intermediate": ("truncation",)},
    "fund.bahdanau-example": {"exp_sum": ("rounded intermediates",),
                              "context_terms": ("rounded intermediates",),
                              "context": ("rounded intermediates",)},
    "fund.softmax-saturation": {"softmax_10": ("truncation", "last digit")},
    "fund.sdpa-example": {"exp_scaled_scores": ("last digit",), "output": ("rounded intermediates",)},
}
ILLUSTRATIVE = {
    "fund.translation-distributions", "fund.scaling-gradients", "fund.attention-matrix-example",
    "dot.soft-lookup", "dot.attention-pattern", "dot.exercise-1", "dot.exercise-2",
    "dot.exercise-3", "dot.exercise-4", "dot.exercise-5", "matrix.exercise", "vector.masks",
    "vector.loops-vs-matmul",
}
MECHANISMS = {  # entries that run a library mechanism and keep its Steps
    "fund.bahdanau-example", "fund.sdpa-example", "fund.qkv-example", "fund.causal-mask",
    "fund.exercise-1", "fund.exercise-2", "fund.exercise-4", "dot.similarity", "dot.cat-sat-mat",
    "dot.exercise-1", "dot.exercise-4", "matrix.flow", "matrix.exercise", "vector.shapes",
    "vector.masks", "sheet.example-5x3",
}


def test_every_inventory_id_is_present_in_inventory_order():
    assert len(INVENTORY_IDS) == 39
    assert ae.worked_examples.ids()[:39] == INVENTORY_IDS
    assert [e.id for e in ae.worked_examples.entries()] == list(ae.worked_examples.ids())


def _recheck_rounding(check):
    """Each element that misses is explained by one of the check's causes, recomputed here."""
    printed = parse_printed(check.printed, check.byte_base)
    got = np.asarray(check.computed, dtype=float)
    want, tol = np.asarray(printed.value, dtype=float), np.asarray(printed.tol, dtype=float)
    explained = np.zeros(got.shape, dtype=bool)
    for cause in check.rounding:
        if cause == "last digit":
            explained |= np.abs(got - want) <= 2 * tol * (1 + 1e-9)
        elif cause == "truncation":
            cut = np.trunc(np.round(got / (2 * tol), 9)) * (2 * tol)
            explained |= np.abs(cut - want) <= tol * 1e-6
        else:
            assert cause == "rounded intermediates" and check.from_rounded is not None
            explained |= np.abs(np.asarray(check.from_rounded) - want) <= tol * (1 + 1e-9)
    assert np.all(explained | (np.abs(got - want) <= tol * (1 + 1e-9))), check.name


@pytest.mark.parametrize("example_id", INVENTORY_IDS)
def test_status_is_derived_from_checks_that_hold(example_id):
    example = ae.worked_examples.get(example_id)
    assert example.checks, "every entry checks something"
    for check in example.checks:
        if check.kind == "printed":  # recompare independently of the stored verdict
            assert check.ok == matches(check.printed, check.computed, check.byte_base), check.name
        if not check.ok:
            assert check.note and not check.note.startswith("no cause found"), check.name
        if check.severity == "rounding":
            _recheck_rounding(check)
    errata = {c.name for c in example.checks if c.severity == "erratum"}
    rounding = {c.name: c.rounding for c in example.checks if c.severity == "rounding"}
    assert errata == ERRATA.get(example_id, set())
    assert rounding == ROUNDING.get(example_id, {})
    assert {c.name for c in example.errata} == errata
    assert {c.name for c in example.checks if not c.ok} == errata | set(rounding)
    if errata:
        assert example.status == "erratum"
        assert example.status_reason == (f"{len(errata)} of {len(example.checks)} checks wrong "
                                         "beyond rounding")
    elif rounding:
        assert example.status == "rounding"
        assert example.status_reason.startswith(
            f"{len(rounding)} of {len(example.checks)} checks off only by rounding")
    elif example_id in ILLUSTRATIVE:
        assert example.status == "illustrative"
        assert any(c.kind == "given" for c in example.checks) or not any(
            c.kind in ("printed", "shape") for c in example.checks)
    else:
        assert example.status == "reproduced"
        assert any(c.kind in ("printed", "shape") for c in example.checks)
        assert not any(c.kind == "given" for c in example.checks)


def test_approximate_bert_memory_is_reproduced_not_an_erratum():
    """"~402 MB" for 402.65 MB is right at its printed precision (it truncates)."""
    check = ae.worked_examples.get("fund.bert-attention-memory").checks[0]
    assert check.printed == "~402 MB" and check.computed == 402_653_184 and check.ok


@pytest.mark.parametrize("example_id", INVENTORY_IDS)
def test_entries_are_complete_and_json_able(example_id):
    example = ae.worked_examples.get(example_id)
    assert example.id == example_id and example.title and example.source
    assert example.source.startswith((
        "Attention Mechanisms: Fundamentals, section", "Attention Mechanisms: Fundamentals, sections",
        "Section 5.2: Dot-Product Attention — The Core Mechanism, section",
        "The matrix formulation of scaled dot-product attention",
        "Neural attention mechanism vectorization: alignment scores between queries and keys, section",
        "Self-attention matrix operations (one-page sheet)"))
    for check in example.checks:
        if check.kind in ("printed", "shape", "given"):
            assert example.printed[check.name] == check.printed
    data = json.loads(json.dumps(example.to_dict(), allow_nan=False))
    assert {"id", "source", "title", "status", "checks"} <= set(data)
    assert all({"name", "printed", "computed", "ok", "note"} <= set(c) for c in data["checks"])
    if example_id in MECHANISMS:
        assert example.steps is not None


@pytest.mark.parametrize("example_id", INVENTORY_IDS)
def test_show_walks_through_every_step_shape_and_check(example_id):
    example = ae.worked_examples.get(example_id)
    text = example.show()
    assert example_id in text and example.status in text
    for check in example.checks:
        assert check.name in text
    if example.steps is not None:
        for name, shape in example.steps.shapes.items():
            assert f"{name}" in text and f"shape {shape}" in text


@pytest.mark.parametrize("example_id", sorted(MECHANISMS))
def test_mechanism_entries_keep_the_library_steps(example_id):
    steps = ae.worked_examples.get(example_id).steps
    assert isinstance(steps, ae.Steps) and "weights" in steps.names


def test_examples_are_read_only():
    example = ae.worked_examples.get("dot.cat-sat-mat")
    with pytest.raises(AttributeError, match="read-only"):
        example.status = "reproduced"
    inputs = example.inputs
    inputs["X"] = None  # a copy: the example keeps its own
    assert example.inputs["X"] is not None
    with pytest.raises(ValueError):
        example.inputs["X"][0, 0] = 5.0
    with pytest.raises(ValueError):
        example.computed["scores"][0, 0] = 5.0


def test_unknown_id_names_close_matches():
    with pytest.raises(KeyError, match="dot.cat-sat-mat"):
        ae.worked_examples.get("dot.cat-sat-mt")
    with pytest.raises(KeyError, match="no worked example 'nothing-like-it'"):
        ae.worked_examples.get("nothing-like-it")


# Independent oracles: the key computations redone with math only.

def _softmax(xs):
    exps = [math.exp(x) for x in xs]
    return [e / sum(exps) for e in exps]


def test_cat_sat_mat_rows_two_and_three_are_the_softmax_of_the_printed_scores():
    example = ae.worked_examples.get("dot.cat-sat-mat")
    expected = [_softmax([1, 0, 1]), _softmax([0, 1, 1]), _softmax([1, 1, 2])]
    np.testing.assert_allclose(example.computed["weights"], expected, rtol=1e-12)
    assert matches("[0.42, 0.16, 0.42]", expected[0])
    assert not matches("[0.18, 0.33, 0.49]", expected[1])
    assert not matches("[0.18, 0.18, 0.64]", expected[2])


def test_sdpa_example_by_hand():
    example = ae.worked_examples.get("fund.sdpa-example")
    w = _softmax([1.33 / 2, 0.37 / 2, -0.24 / 2])
    np.testing.assert_allclose(example.computed["weights"], w, rtol=1e-12)
    V = example.inputs["V"]
    out = [sum(w[i] * V[i, j] for i in range(3)) for j in range(5)]
    np.testing.assert_allclose(example.computed["output"], out, rtol=1e-12)
    assert round(out[1], 3) == 0.376 and round(out[2], 3) == 0.200  # printed 0.377, 0.201


def test_bahdanau_example_context_by_hand():
    example = ae.worked_examples.get("fund.bahdanau-example")
    w = _softmax([0.8, 2.1, 0.5])
    H = [[1.0, 0.5, -0.3, 0.8], [0.3, 0.9, 0.6, -0.2], [-0.4, 0.2, 0.7, 0.5]]
    context = [sum(w[i] * H[i][j] for i in range(3)) for j in range(4)]
    np.testing.assert_allclose(example.computed["context"], context, atol=1e-12)
    assert round(context[0], 3) == 0.334


def test_exercise_1_follows_the_definition_order():
    example = ae.worked_examples.get("fund.exercise-1")
    W1, W2, v = example.inputs["W1"], example.inputs["W2"], example.inputs["v"]
    s, H = example.inputs["s"][0], example.inputs["H"]
    scores = [sum(v[a] * math.tanh(sum(W1[a, b] * s[b] + W2[a, b] * h[b] for b in range(3)))
                  for a in range(2)) for h in H]
    np.testing.assert_allclose(example.computed["scores"], scores, rtol=1e-12)
    np.testing.assert_allclose(example.computed["weights"], _softmax(scores), rtol=1e-12)
    swapped = [sum(v[a] * math.tanh(sum(W1[a, b] * h[b] + W2[a, b] * s[b] for b in range(3)))
                   for a in range(2)) for h in H]
    np.testing.assert_allclose(example.computed["scores_solution_order"], swapped, rtol=1e-12)


def test_exercise_3_scaled_softmax_by_hand():
    example = ae.worked_examples.get("fund.exercise-3")
    p = _softmax([2.5, 2.25, -1.875, -2.25])
    np.testing.assert_allclose(example.computed["softmax_scaled"], p, rtol=1e-12)
    np.testing.assert_allclose(example.computed["gradient_scaled"], [x * (1 - x) for x in p], rtol=1e-12)


def test_sheet_scores_are_q_dot_k():
    example = ae.worked_examples.get("sheet.example-5x3")
    assert example.computed["scores"][0, 0] == pytest.approx(0.6 * 0.4 + 0.4 * 0.6 + 0.5 * 0.3)


def test_cost_entries_use_the_cost_formulas():
    assert ae.worked_examples.get("fund.sdpa-flops").computed["bahdanau_flops"] == \
        2 * 512 * 512 * 256 * (512 + 512 + 3)
    intensity = ae.worked_examples.get("fund.arithmetic-intensity").computed["flops_per_byte"]
    assert intensity == (2 * 512 * 512 * 64) / (2 * 512 * 64 * 2) == 256


def test_exercise_answers_for_the_checkers_are_documented_keys():
    assert ae.worked_examples.get("dot.exercise-3").computed["total_flops"] == 2_048_000_000
    out = ae.worked_examples.get("dot.exercise-1").computed["output"]
    np.testing.assert_allclose(out, [[1.0, 0.5], [1.0, math.e / (math.e + 1)]], rtol=1e-12)
    tied = ae.worked_examples.get("dot.exercise-4").computed["scores_tied"]
    np.testing.assert_allclose(tied, tied.T, rtol=1e-12)
    H = ae.worked_examples.get("dot.exercise-5").computed["entropy_cat_sat_mat"]
    w = _softmax([1, 0, 1])
    assert H[0] == pytest.approx(-sum(x * math.log(x) for x in w))


def test_chapter_map_names_every_id_and_only_real_functions():
    import importlib.util
    import pathlib
    import re

    text = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "chapter-map.md").read_text()
    ids = set(re.findall(r"`((?:fund|dot|matrix|vector|sheet)\.[a-z0-9-]+)`", text))
    ranges = re.findall(r"`(\w+)\.exercise-1` … `\1\.exercise-(\d)`", text)
    for prefix, last in ranges:
        ids |= {f"{prefix}.exercise-{i}" for i in range(1, int(last) + 1)}
    assert ids == set(INVENTORY_IDS)
    rows = [line for line in text.splitlines() if line.startswith("| ") and "`" in line]
    for row in rows:
        library = row.rstrip(" |").split(" | ")[-1]
        for name in re.findall(r"`([\w.]+)`", library):
            if name.startswith("costs."):
                assert hasattr(ae.costs, name.split(".", 1)[1]), name
            else:
                assert hasattr(ae, name) or importlib.util.find_spec(f"attention_edu.{name}"), name
