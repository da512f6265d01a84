"""The whole model: its gradient, that it learns, that it is reproducible, saved and loaded intact,
and that it runs unchanged on array_api_strict."""

from __future__ import annotations

import numpy as np
import pytest

import attention_edu as ae
from attention_edu import seq2seq
from attention_edu.backend import Backend, cupy_if_available, to_numpy
from attention_edu.seq2seq.config import FORMAT, ModelConfig
from attention_edu.seq2seq.model import Seq2Seq

TINY = dict(steps=150, batch_size=32, hidden=16, embedding=8, attention_size=16, eval_per_length=0,
            lengths=(3, 5), peak_learning_rate=0.02)


def tiny_model(attention: str, seed: int = 1) -> Seq2Seq:
    config = ModelConfig("reverse", attention, "abcd", "abcd", embedding=3, hidden=4, attention_size=3,
                         max_output=8)
    return Seq2Seq.initialize(config, seed=seed)


@pytest.mark.parametrize("attention", seq2seq.ATTENTIONS)
def test_the_whole_model_gradient_equals_gradcheck(attention):
    """Every parameter, through encoder, attention (the library's backward passes) and decoder."""
    model = tiny_model(attention)
    batch = model.batch([("abc", "cba"), ("dabcd", "dcbad"), ("ab", "ba")])

    def forward(**params):
        return model.forward(batch, params)

    errors = ae.gradcheck(forward, lambda cache, g: model.backward(cache, g), model.params, outputs=("loss",))
    assert sorted(errors) == sorted(model.params)
    assert max(errors.values()) < 1e-5, errors


@pytest.mark.parametrize("attention, factor", [("none", 2.5), ("bahdanau", 3.5)])
def test_a_tiny_model_learns_to_reverse(attention, factor):
    """The loss falls by the stated factor in 150 steps (about 2 s each on a quiet machine)."""
    _, history = seq2seq.train("reverse", attention, seed=0, **TINY)
    first, last = np.mean(history["loss"][:10]), np.mean(history["loss"][-10:])
    assert first / last > factor, (first, last)


def test_one_seed_twice_gives_identical_parameters_and_another_seed_others():
    small = dict(TINY, steps=5)
    a, _ = seq2seq.train("reverse", "none", seed=4, **small)
    b, _ = seq2seq.train("reverse", "none", seed=4, **small)
    c, _ = seq2seq.train("reverse", "none", seed=5, **small)
    for name in a.params:
        np.testing.assert_array_equal(a.params[name], b.params[name])
    assert any(not np.array_equal(a.params[k], c.params[k]) for k in a.params)


def test_save_then_load_gives_the_same_outputs(tmp_path):
    model, _ = seq2seq.train("reverse", "none", seed=0, **dict(TINY, steps=20))
    path = tmp_path / "model.npz"
    model.save(path)
    loaded = seq2seq.load(path)
    assert loaded.config == model.config
    for source in ("abc", "jihgfedcba", "aaaa"):
        assert loaded.translate(source) == model.translate(source)
    with np.load(path, allow_pickle=False) as archive:  # a learner can open it with plain NumPy
        assert "config" in archive.files and "decoder.W_hh" in archive.files


def test_translate_rejects_characters_outside_the_alphabet():
    model = Seq2Seq.initialize(ModelConfig.for_task("reverse", "none"))
    with pytest.raises(ValueError, match=r"Seq2Seq.translate: 'XY' not in the model's alphabet"):
        model.translate("abXY")
    with pytest.raises(ValueError, match="the text is empty"):
        model.translate("")


def test_train_rejects_unknown_task_and_attention():
    with pytest.raises(ValueError, match="train: unknown task 'sort'"):
        seq2seq.train("sort")
    with pytest.raises(ValueError, match="train: unknown attention 'luong-cosine'; choose one of none, "):
        seq2seq.train("reverse", "luong-cosine")
    with pytest.raises(ValueError, match="train: steps must be a positive int"):
        seq2seq.train("reverse", "none", steps=0)


def write_bad(path, kind, good):
    """A checkpoint spoilt in one way, or another kind of file."""
    if kind == "truncated":
        path.write_bytes(good.read_bytes()[:200])
    elif kind == "text":
        path.write_text("not a checkpoint\n")
    else:
        with np.load(good, allow_pickle=False) as archive:
            arrays = {k: archive[k] for k in archive.files}
        if kind == "foreign":
            arrays = {"x": np.zeros(3)}
        elif kind == "missing":
            del arrays["decoder.W_hh"]
        elif kind == "shape":
            arrays["output.b"] = np.zeros(2)
        elif kind == "nan":
            arrays["output.b"] = np.full_like(arrays["output.b"], np.nan)
        elif kind == "config":
            arrays["config"] = np.asarray(f'{{"format": "{FORMAT}", "task": "x"}}')
        elif kind == "old":  # written before Bahdanau read the characters: format 1
            arrays["config"] = np.asarray(str(arrays["config"]).replace(FORMAT, "attention_edu.seq2seq/1"))
        with open(path, "wb") as f:
            np.savez(f, **arrays)


@pytest.mark.parametrize("kind, message", [
    ("truncated", "not a readable .npz checkpoint"), ("text", "not a readable .npz checkpoint"),
    ("foreign", "has no 'config' string"), ("missing", r"missing \['decoder.W_hh'\]"),
    ("shape", r"output.b has shape \(2,\) but its config needs \(13,\)"),
    ("nan", "output.b contains NaN"), ("config", "its config does not describe a model"),
    ("old", "does not carry the format tag 'attention_edu.seq2seq/2'; this checkpoint is tagged "
            "'attention_edu.seq2seq/1'"),
])
def test_load_refuses_a_bad_file_with_a_clear_error(tmp_path, kind, message):
    good = tmp_path / "good.npz"
    Seq2Seq.initialize(ModelConfig.for_task("reverse", "none")).save(good)
    bad = tmp_path / "bad.npz"
    write_bad(bad, kind, good)
    with pytest.raises(seq2seq.CheckpointError, match=message):
        seq2seq.load(bad)


@pytest.mark.parametrize("device, dtype", [("CPU_DEVICE", "float64"), ("device1", "float32")])
def test_training_runs_unchanged_on_array_api_strict(device, dtype):
    xps = pytest.importorskip("array_api_strict")
    _trains_as_on_numpy(Backend(xps, xps.Device(device), dtype), dtype)


@pytest.mark.gpu
@pytest.mark.skipif(cupy_if_available() is None, reason="needs CuPy and a CUDA device")
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_training_runs_unchanged_on_cupy(dtype):
    _trains_as_on_numpy(Backend(cupy_if_available(), None, dtype), dtype)


def _trains_as_on_numpy(backend, dtype):
    """Three steps on ``backend`` give NumPy's losses and weights (the weights are drawn on the host)."""
    small = dict(TINY, steps=3, batch_size=4)
    model, history = seq2seq.train("reverse", "none", seed=2, backend=backend, **small)
    reference, ref_history = seq2seq.train("reverse", "none", seed=2, dtype=dtype, **small)
    tol = 1e-12 if dtype == "float64" else 1e-4
    np.testing.assert_allclose(history["loss"], ref_history["loss"], rtol=tol)
    for name, value in model.params.items():
        np.testing.assert_allclose(to_numpy(value), reference.params[name], rtol=tol, atol=tol)
    if dtype == "float64":
        assert model.translate("abc")[0] == reference.translate("abc")[0]
