"""The layers every model shares, each against an independent oracle.

Every backward equals ae.gradcheck's central differences of its forward
(float64); the optimizer's steps and the schedule are checked by their
defining properties.
"""

from __future__ import annotations

import numpy as np
import pytest

import attention_edu as ae
from attention_edu.layers.embedding import embed, embed_backward
from attention_edu.layers.linear import linear, linear_backward
from attention_edu.layers.loss import cross_entropy, cross_entropy_backward
from attention_edu.layers.optim import Adam, clip_by_global_norm, learning_rate

TOLERANCE = 1e-7  # central differences in float64 agree to about 1e-9; a wrong term is off by far more


def check(forward, backward, inputs, outputs):
    """Every gradient ``backward`` returns, against ae.gradcheck's central differences."""
    errors = ae.gradcheck(forward, backward, inputs, outputs=outputs)
    assert errors and max(errors.values()) < TOLERANCE, errors
    return errors


def test_embedding_backward_adds_the_rows_of_repeated_ids(rng):
    ids = np.array([[1, 4, 1], [0, 1, 2]])
    check(lambda table: {"rows": embed(table, ids)},
          lambda cache, g: {"table": embed_backward(np.zeros((5, 3)), ids, g)},
          {"table": rng.normal(size=(5, 3))}, ("rows",))
    table = rng.normal(size=(5, 3))
    np.testing.assert_array_equal(embed(table, ids)[0, 0], table[1])


def test_linear_backward_equals_central_differences(rng):
    x, W, b = rng.normal(size=(2, 3, 4)), rng.normal(size=(5, 4)), rng.normal(size=5)
    check(lambda x, W, b: {"y": linear(x, W, b)}, lambda cache, g: linear_backward(x, W, g),
          {"x": x, "W": W, "b": b}, ("y",))


def test_cross_entropy_matches_its_definition_and_its_backward_central_differences(rng):
    logits, targets = rng.normal(size=(2, 3, 4)), np.array([[1, 3, 0], [2, 2, 1]])
    mask = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]])
    loss, cache = cross_entropy(logits, targets, mask)
    log_p = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    by_hand = -sum(log_p[b, t, targets[b, t]] for b in range(2) for t in range(3) if mask[b, t]) / 5
    assert float(loss) == pytest.approx(by_hand, rel=1e-12)
    check(lambda logits: dict(zip(("loss", "cache"), cross_entropy(logits, targets, mask))),
          lambda c, g: {"logits": cross_entropy_backward(c["cache"], g)}, {"logits": logits}, ("loss",))
    assert np.all(cross_entropy_backward(cache)[0, 2] == 0), "a padded position must get no gradient"


def test_cross_entropy_is_stable_for_huge_logits():
    loss, _ = cross_entropy(np.array([[[1000.0, 0.0]]]), np.array([[0]]), np.array([[1.0]]))
    assert float(loss) == pytest.approx(0.0, abs=1e-12)


def test_adam_first_step_moves_each_parameter_by_the_learning_rate():
    """Bias correction makes Adam's first step lr · sign(g), whatever the gradient's size."""
    params = {"a": np.array([1.0, -2.0]), "b": np.array([[0.5]])}
    grads = {"a": np.array([1e-3, -50.0]), "b": np.array([[7.0]])}
    new = Adam().step(params, grads, lr=0.1)
    np.testing.assert_allclose(new["a"], [0.9, -1.9], atol=1e-6)
    np.testing.assert_allclose(new["b"], [[0.4]], atol=1e-6)
    assert params["a"][0] == 1.0, "inputs are never modified"


def test_adam_weight_decay_shrinks_matrices_by_lr_times_decay_and_leaves_vectors_alone():
    """Decoupled decay (AdamW): with a zero gradient Adam's own step is 0, so a matrix becomes
    (1 − lr·λ)·θ and a vector stays; with a gradient the decay is added to Adam's step, not fed
    through its moments."""
    params = {"W": np.array([[2.0, -4.0]]), "b": np.array([3.0])}
    zero = {k: np.zeros_like(v) for k, v in params.items()}
    new = Adam(weight_decay=0.5).step(params, zero, lr=0.1)
    np.testing.assert_allclose(new["W"], [[1.9, -3.8]], rtol=1e-12)
    np.testing.assert_array_equal(new["b"], [3.0])
    grads = {"W": np.array([[1.0, -1.0]]), "b": np.array([2.0])}
    plain, decayed = Adam().step(params, grads, lr=0.1), Adam(weight_decay=0.5).step(params, grads, lr=0.1)
    np.testing.assert_allclose(decayed["W"] - plain["W"], -0.1 * 0.5 * params["W"], rtol=1e-12)
    np.testing.assert_array_equal(decayed["b"], plain["b"])
    assert params["W"][0, 0] == 2.0, "inputs are never modified"
    for bad in (-0.1, float("nan"), float("inf"), True, "1"):
        with pytest.raises(ValueError, match="weight_decay must be a finite number >= 0"):
            Adam(weight_decay=bad)


def test_learning_rate_warms_up_then_decays_to_its_floor():
    rates = [learning_rate(s, 1000, 0.01, warmup=100) for s in range(1000)]
    assert rates[0] < rates[50] < rates[99] == pytest.approx(0.01)
    assert all(a >= b for a, b in zip(rates[99:], rates[100:]))
    assert rates[-1] == pytest.approx(0.0005)


def test_clipping_scales_all_gradients_together_and_only_above_the_limit():
    grads = {"a": np.array([6.0]), "b": np.array([8.0])}
    clipped, norm = clip_by_global_norm(grads, 5.0)
    assert norm == 10.0 and clipped["a"][0] == 3.0 and clipped["b"][0] == 4.0
    same, _ = clip_by_global_norm(grads, 20.0)
    assert same["a"][0] == 6.0
    with pytest.raises(FloatingPointError, match="diverged"):
        clip_by_global_norm({"a": np.array([np.nan])}, 1.0)


def test_layer_norm_backward_equals_central_differences(rng):
    from attention_edu.layers.layer_norm import layer_norm, layer_norm_backward
    inputs = {"x": rng.normal(size=(2, 3, 5)), "gamma": rng.normal(size=5), "beta": rng.normal(size=5)}
    errors = check(lambda x, gamma, beta: dict(zip(("y", "cache"), layer_norm(x, gamma, beta))),
                   lambda c, g: layer_norm_backward(c["cache"], g), inputs, ("y",))
    assert sorted(errors) == ["beta", "gamma", "x"]


def test_layer_norm_rows_have_mean_zero_and_unit_variance_before_the_affine(rng):
    from attention_edu.layers.layer_norm import layer_norm
    x = rng.normal(loc=3.0, scale=7.0, size=(4, 6))
    y, _ = layer_norm(x, np.full(6, 2.0), np.full(6, 1.0))
    np.testing.assert_allclose(y.mean(axis=-1), 1.0, atol=1e-12)
    np.testing.assert_allclose(((y - 1.0) / 2.0).var(axis=-1), 1.0, rtol=1e-5)


@pytest.mark.torch
def test_layer_norm_equals_torch(rng):
    torch = pytest.importorskip("torch")
    from attention_edu.layers.layer_norm import layer_norm
    x, gamma, beta = rng.normal(size=(2, 3, 5)), rng.normal(size=5), rng.normal(size=5)
    theirs = torch.nn.functional.layer_norm(torch.from_numpy(x), (5,), torch.from_numpy(gamma),
                                            torch.from_numpy(beta))
    np.testing.assert_allclose(layer_norm(x, gamma, beta)[0], theirs.numpy(), atol=1e-12)


def test_mlp_backward_equals_central_differences(rng):
    from attention_edu.layers.mlp import mlp, mlp_backward
    d, h = 3, 6
    inputs = {"x": rng.normal(size=(2, 4, d)), "W1": rng.normal(size=(h, d)), "b1": rng.normal(size=h),
              "W2": rng.normal(size=(d, h)), "b2": rng.normal(size=d)}
    errors = check(lambda **a: dict(zip(("y", "cache"), mlp(**a))),
                   lambda c, g: mlp_backward(c["cache"], g), inputs, ("y",))
    assert sorted(errors) == ["W1", "W2", "b1", "b2", "x"]


def test_mlp_passes_no_gradient_through_a_unit_that_was_off():
    from attention_edu.layers.mlp import mlp, mlp_backward
    _, cache = mlp(np.array([[2.0]]), np.array([[1.0], [-1.0]]), np.zeros(2), np.ones((1, 2)), np.zeros(1))
    grads = mlp_backward(cache, np.ones((1, 1)))
    np.testing.assert_array_equal(grads["W1"], [[2.0], [0.0]])
