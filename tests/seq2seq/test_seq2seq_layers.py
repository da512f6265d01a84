"""The seq2seq layers, each against an independent oracle.

The GRU cell equals ``torch.nn.GRUCell`` with copied weights (forward and
backward); every layer's backward equals central differences of its forward
(float64).
"""

from __future__ import annotations

import numpy as np
import pytest

import attention_edu as ae
from attention_edu.seq2seq.gru import gru_cell, gru_cell_backward, gru_cell_steps
from attention_edu.seq2seq.recurrence import gru_sequence, gru_sequence_backward

TOLERANCE = 1e-7  # central differences in float64 agree to about 1e-9; a wrong term is off by far more


def check(forward, backward, inputs, outputs):
    """Every gradient ``backward`` returns, against ae.gradcheck's central differences."""
    errors = ae.gradcheck(forward, backward, inputs, outputs=outputs)
    assert errors and max(errors.values()) < TOLERANCE, errors
    return errors


def gru_weights(rng, d_in, d_h):
    return {"W_ih": rng.normal(size=(3 * d_h, d_in)), "W_hh": rng.normal(size=(3 * d_h, d_h)),
            "b_ih": rng.normal(size=3 * d_h), "b_hh": rng.normal(size=3 * d_h)}


@pytest.mark.torch
def test_gru_cell_equals_torch_forward_and_backward(rng):
    torch = pytest.importorskip("torch")
    B, d_in, d_h = 4, 3, 5
    x, h = rng.normal(size=(B, d_in)), rng.normal(size=(B, d_h))
    w = gru_weights(rng, d_in, d_h)
    cell = torch.nn.GRUCell(d_in, d_h).double()
    with torch.no_grad():
        for ours, theirs in (("W_ih", "weight_ih"), ("W_hh", "weight_hh"), ("b_ih", "bias_ih"),
                             ("b_hh", "bias_hh")):
            getattr(cell, theirs).copy_(torch.from_numpy(w[ours]))
    x_t, h_t = torch.tensor(x, requires_grad=True), torch.tensor(h, requires_grad=True)
    out = cell(x_t, h_t)
    d_out = rng.normal(size=(B, d_h))
    out.backward(torch.from_numpy(d_out))
    steps = gru_cell_steps(x, h, **w)
    np.testing.assert_allclose(steps.h_new, out.detach().numpy(), rtol=0, atol=1e-12)
    grads = gru_cell_backward(steps, d_out)
    theirs = {"x": x_t.grad, "h": h_t.grad, "W_ih": cell.weight_ih.grad, "W_hh": cell.weight_hh.grad,
              "b_ih": cell.bias_ih.grad, "b_hh": cell.bias_hh.grad}
    for name, grad in theirs.items():
        np.testing.assert_allclose(grads[name], grad.numpy(), rtol=0, atol=1e-12, err_msg=name)


def test_gru_cell_backward_equals_central_differences(rng):
    B, d_in, d_h = 3, 4, 2
    inputs = {"x": rng.normal(size=(B, d_in)), "h": rng.normal(size=(B, d_h)), **gru_weights(rng, d_in, d_h)}
    errors = check(gru_cell_steps, gru_cell_backward, inputs, ("h_new",))
    assert sorted(errors) == ["W_hh", "W_ih", "b_hh", "b_ih", "h", "x"]


def test_gru_cell_rejects_weights_of_the_wrong_size():
    with pytest.raises(ValueError, match=r"gru_cell: W_ih .* 3 d_h = 6 rows"):
        gru_cell(np.ones((1, 3)), np.ones((1, 2)), np.ones((4, 3)), np.ones((4, 2)), np.ones(4), np.ones(4))


@pytest.mark.parametrize("lead", [(), (2,)], ids=["one-direction", "two-stacked-directions"])
def test_gru_sequence_with_padding_backward_equals_central_differences(rng, lead):
    B, T, d_in, d_h = 3, 4, 2, 3
    X, h0 = rng.normal(size=lead + (B, T, d_in)), rng.normal(size=lead + (B, d_h))
    w = {k: rng.normal(size=lead + v.shape) for k, v in gru_weights(rng, d_in, d_h).items()}
    mask = np.broadcast_to(np.array([[1, 1, 1, 1], [1, 1, 0, 0], [1, 0, 0, 0]], dtype=float), lead + (B, T))

    def forward(X, h0, **weights):
        return gru_sequence(X, h0, weights, mask)

    def backward(cache, d_states, d_last):
        grads = gru_sequence_backward(cache, w, d_states, d_last)
        assert all(grads[k].shape == v.shape for k, v in w.items())
        return grads

    check(forward, backward, {"X": X, "h0": h0, **w}, ("states", "last"))


def test_stacked_directions_run_each_with_its_own_weights(rng):
    B, T, d_in, d_h = 2, 3, 2, 3
    X = rng.normal(size=(2, B, T, d_in))
    w = [gru_weights(rng, d_in, d_h) for _ in range(2)]
    both = gru_sequence(X, np.zeros((2, B, d_h)), {k: np.stack([w[0][k], w[1][k]]) for k in w[0]})
    for i in range(2):
        alone = gru_sequence(X[i], np.zeros((B, d_h)), w[i])
        np.testing.assert_allclose(both["states"][i], alone["states"], atol=1e-12)


def test_gru_sequence_holds_the_state_on_padding_and_matches_the_cell_loop(rng):
    B, T, d_in, d_h = 2, 5, 3, 4
    X, h0 = rng.normal(size=(B, T, d_in)), rng.normal(size=(B, d_h))
    w = gru_weights(rng, d_in, d_h)
    mask = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], dtype=float)
    out = gru_sequence(X, h0, w, mask)
    h = h0[1:]
    for t in range(3):
        h = gru_cell(X[1:, t], h, **w)
    np.testing.assert_allclose(out["last"][1:], h, atol=1e-12)
    np.testing.assert_array_equal(out["states"][1, 2], out["states"][1, 4])


def test_the_encoder_backward_direction_starts_at_each_source_own_last_character():
    from attention_edu.seq2seq.config import ModelConfig
    from attention_edu.seq2seq.encoder import encode
    from attention_edu.seq2seq.model import Seq2Seq
    model = Seq2Seq.initialize(ModelConfig.for_task("reverse", "none", hidden=8, embedding=4), seed=0)
    padded = model.source_arrays(["abcdef", "cab"])
    alone = model.source_arrays(["cab"])
    H = encode(model.params, padded["src_ids"], padded["step_mask"])["H"]
    H_alone = encode(model.params, alone["src_ids"], alone["step_mask"])["H"]
    np.testing.assert_allclose(H[1, :3], H_alone[0], atol=1e-12)
