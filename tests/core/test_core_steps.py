"""The steps objects: names and shapes of every intermediate, read-only, printable,
and the plain call returning exactly the steps' output and weights."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import attention_edu as ae

B, m, n, d_k, d_v = 2, 3, 5, 4, 6  # all different, so a swapped axis shows
d_s, d_h, d_a, d_model, H = 4, 7, 8, 9, 2

r = np.random.default_rng(3)
a = lambda *shape: r.normal(size=shape)
Q, K, V = a(B, m, d_k), a(B, n, d_k), a(B, n, d_v)
S, Hs = a(B, m, d_s), a(B, n, d_h)
W1, W2, v = a(d_a, d_s), a(d_a, d_h), a(d_a)
X_q, X_kv = a(B, m, d_model), a(B, n, d_model)
MASK = ae.causal_mask(m, n)

# name -> (steps function, args, kwargs, plain function, result step name, {step: shape})
CASES = {
    "dot_product": (ae.dot_product_attention_steps, (Q, K, V), {}, ae.dot_product_attention, "output",
                    {"scores": (B, m, n), "weights": (B, m, n), "output": (B, m, d_v)}),
    "scaled_dot_product": (ae.scaled_dot_product_attention_steps, (Q, K, V), {"mask": MASK},
                           ae.scaled_dot_product_attention, "output",
                           {"scores": (B, m, n), "scaled_scores": (B, m, n), "masked_scores": (B, m, n),
                            "weights": (B, m, n), "output": (B, m, d_v)}),
    "bahdanau": (ae.bahdanau_attention_steps, (S, Hs, W1, W2, v), {}, ae.bahdanau_attention, "context",
                 {"W1_s": (B, m, d_a), "W2_h": (B, n, d_a), "features": (B, m, n, d_a), "scores": (B, m, n),
                  "weights": (B, m, n), "context": (B, m, d_h)}),
    "luong_dot": (ae.luong_attention_steps, (S, Hs[..., :d_s]), {"score": "dot"}, ae.luong_attention, "context",
                  {"scores": (B, m, n), "weights": (B, m, n), "context": (B, m, d_s)}),
    "luong_general": (ae.luong_attention_steps, (S, Hs), {"score": "general", "W": a(d_s, d_h), "mask": MASK},
                      ae.luong_attention, "context",
                      {"S_W": (B, m, d_h), "scores": (B, m, n), "masked_scores": (B, m, n), "weights": (B, m, n),
                       "context": (B, m, d_h)}),
    "luong_concat": (ae.luong_attention_steps, (S, Hs), {"score": "concat", "W": a(d_a, d_s + d_h), "v": v},
                     ae.luong_attention, "context",
                     {"W1_s": (B, m, d_a), "W2_h": (B, n, d_a), "features": (B, m, n, d_a), "scores": (B, m, n),
                      "weights": (B, m, n), "context": (B, m, d_h)}),
    "self": (ae.self_attention_steps, (X_kv, a(d_model, d_k), a(d_model, d_k), a(d_model, d_v)),
             {"mask": ae.causal_mask(n)}, ae.self_attention, "output",
             {"Q": (B, n, d_k), "K": (B, n, d_k), "V": (B, n, d_v), "scores": (B, n, n), "scaled_scores": (B, n, n),
              "masked_scores": (B, n, n), "weights": (B, n, n), "output": (B, n, d_v)}),
    "cross": (ae.cross_attention_steps, (X_q, X_kv, a(d_model, d_k), a(d_model, d_k), a(d_model, d_v)), {},
              ae.cross_attention, "output",
              {"Q": (B, m, d_k), "K": (B, n, d_k), "V": (B, n, d_v), "scores": (B, m, n),
               "scaled_scores": (B, m, n), "weights": (B, m, n), "output": (B, m, d_v)}),
    "multi_head": (ae.multi_head_attention_steps,
                   (X_q, X_kv, a(d_model, H * d_k), a(d_model, H * d_k), a(d_model, H * d_v), a(H * d_v, d_model), H),
                   {"mask": MASK}, ae.multi_head_attention, "output",
                   {"Q": (B, H, m, d_k), "K": (B, H, n, d_k), "V": (B, H, n, d_v), "scores": (B, H, m, n),
                    "scaled_scores": (B, H, m, n), "masked_scores": (B, H, m, n), "weights": (B, H, m, n),
                    "heads": (B, H, m, d_v), "concat": (B, m, H * d_v), "output": (B, m, d_model)}),
}


def run(name):
    steps_fn, args, kwargs, *_ = CASES[name]
    return steps_fn(*args, **kwargs)


@pytest.mark.parametrize("name", CASES)
def test_step_names_and_shapes(name):
    expected = CASES[name][-1]
    steps = run(name)
    assert steps.names == tuple(expected)  # also the order in which they are computed
    assert steps.shapes == expected
    for step, shape in expected.items():
        assert getattr(steps, step).shape == shape and steps[step].shape == shape
        assert step in steps


@pytest.mark.parametrize("name", CASES)
def test_plain_call_returns_exactly_the_steps_result_and_weights(name):
    steps_fn, args, kwargs, plain, result, _ = CASES[name]
    steps = steps_fn(*args, **kwargs)
    out, w = plain(*args, **kwargs)
    np.testing.assert_array_equal(out, steps[result])
    np.testing.assert_array_equal(w, steps.weights)


@pytest.mark.parametrize("name", CASES)
def test_steps_are_read_only(name):
    steps = run(name)
    first = steps.names[0]
    with pytest.raises(AttributeError, match="read-only"):
        setattr(steps, first, np.zeros(1))
    with pytest.raises(AttributeError, match="read-only"):
        steps.extra = 1
    with pytest.raises(AttributeError, match="read-only"):
        steps.mechanism = "edited"
    with pytest.raises(TypeError):
        steps["weights"] = np.zeros(1)
    with pytest.raises(AttributeError):
        del steps.weights
    assert steps.shapes == CASES[name][-1]  # nothing changed


@pytest.mark.parametrize("name", CASES)
def test_printed_table_lists_every_step_with_its_shape(name):
    steps = run(name)
    for text in (str(steps), repr(steps), steps.table(values=False)):
        for step, shape in steps.shapes.items():
            line = next((ln for ln in text.splitlines() if f". {step} " in ln and "shape" in ln), None)
            assert line is not None, f"no table line for {step} in:\n{text}"
            assert f"shape {shape}" in line
    assert len(steps.table(values=False).splitlines()) == len(steps.names) + 1  # title + one line per step


def test_printed_values_are_the_steps_values():
    q = np.array([[1.0, 0.5, -0.3, 0.8]])
    keys = np.array([[0.8, 0.2, -0.1, 0.5], [0.3, 0.7, 0.4, -0.2], [-0.5, 0.1, 0.9, 0.6]])
    text = str(ae.scaled_dot_product_attention_steps(q, keys, np.eye(3)))
    assert "[[ 0.665  0.185 -0.120]]" in text  # the chapter's scaled scores
    assert "0.482" in text and "0.298" in text and "0.220" in text


@pytest.mark.parametrize("copier", [copy.copy, copy.deepcopy, lambda s: pickle.loads(pickle.dumps(s))],
                         ids=["copy", "deepcopy", "pickle"])
def test_steps_can_be_copied_and_pickled_and_stay_read_only(copier):
    steps = run("bahdanau")
    clone = copier(steps)
    assert clone.names == steps.names and clone.mechanism == steps.mechanism
    for name in steps.names:
        np.testing.assert_array_equal(clone[name], steps[name])
    with pytest.raises(AttributeError, match="read-only"):
        clone.weights = None


def test_unknown_step_names_the_existing_ones():
    steps = run("bahdanau")
    with pytest.raises(AttributeError, match="no step 'output'; steps are W1_s, W2_h, features"):
        steps.output


def test_mask_adds_a_masked_scores_step_that_is_minus_inf_exactly_where_masked():
    steps = run("scaled_dot_product")
    masked = steps.masked_scores
    assert np.all(np.isneginf(masked[..., ~MASK]))
    np.testing.assert_array_equal(masked[..., MASK], steps.scaled_scores[..., MASK])


@pytest.mark.parametrize("name", CASES)
def test_step_arrays_are_read_only_and_plain_results_writable(name):
    steps_fn, args, kwargs, plain, result, _ = CASES[name]
    steps = steps_fn(*args, **kwargs)
    for step in steps.names:
        with pytest.raises(ValueError, match="read-only"):
            steps[step][(0,) * steps[step].ndim] = 99.0
    out, weights = plain(*args, **kwargs)
    weights[(0,) * weights.ndim] = 99.0  # the plain call's arrays belong to the caller
    out[(0,) * out.ndim] = 99.0
