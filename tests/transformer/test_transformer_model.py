"""The transformer's gradient, its mask, its data and its checkpoints, each against an oracle.

The whole model's hand-written gradient equals central differences (float64)
and PyTorch autograd on a torch model written here with the same weights.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import attention_edu as ae
from attention_edu.layers.loss import cross_entropy, cross_entropy_backward
from attention_edu.transformer import (CheckpointError, Transformer, TransformerConfig, load,
                                       head_scores, make_dataset, train)
from attention_edu.transformer.tasks import is_held_out
from attention_edu.transformer.training import DEFAULT_WEIGHT_DECAYS

PAIRS = [("301", "013"), ("221", "122")]


def tiny(mlp=True, causal=True, shift=0, seed=0):
    config = TransformerConfig("sort", layers=2, heads=2, d_model=4, mlp=mlp, causal=causal, shift=shift)
    return Transformer.initialize(config, seed)


def loss_functions(model, batch, offset):
    def forward(**params):
        logits, cache = model.forward(batch["ids"], params, offset=offset)
        loss, loss_cache = cross_entropy(logits, batch["targets"], batch["mask"])
        return {"loss": loss, "loss_cache": loss_cache, "cache": cache}

    def backward(out, d_loss):
        return model.backward(out["cache"], cross_entropy_backward(out["loss_cache"], float(d_loss)))
    return forward, backward


@pytest.mark.parametrize("mlp, offset", [(True, 0), (False, 2)], ids=["with-mlp", "attention-only-shifted"])
def test_whole_model_gradient_equals_central_differences(mlp, offset):
    model = tiny(mlp=mlp, shift=2)
    forward, backward = loss_functions(model, model.batch(PAIRS), offset)
    errors = ae.gradcheck(forward, backward, dict(model.params), outputs=("loss",))
    assert sorted(errors) == sorted(model.params)
    assert max(errors.values()) < 1e-6, errors


def torch_loss(torch, model, params, batch):
    """The same transformer, written in torch ops: token + position embeddings, pre-LN blocks of
    multi-head causal self-attention (and an MLP), final LN, head, masked mean cross-entropy."""
    F = torch.nn.functional
    config = model.config
    ids = torch.from_numpy(np.asarray(batch["ids"]))
    B, T = ids.shape
    H, d = config.heads, config.d_model
    x = params["token_embedding"][ids] + params["position_embedding"][:T]
    future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    for layer in range(config.layers):
        p = {k[len(f"blocks.{layer}."):]: v for k, v in params.items() if k.startswith(f"blocks.{layer}.")}
        a = F.layer_norm(x, (d,), p["ln1.gamma"], p["ln1.beta"], eps=1e-5)
        q, k, v = ((a @ p[w]).view(B, T, H, d // H).transpose(1, 2) for w in ("W_Q", "W_K", "W_V"))
        scores = (q @ k.transpose(-1, -2)) / (d // H) ** 0.5
        weights = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
        x = x + (weights @ v).transpose(1, 2).reshape(B, T, d) @ p["W_O"]
        if config.mlp:
            m = F.layer_norm(x, (d,), p["ln2.gamma"], p["ln2.beta"], eps=1e-5)
            x = x + F.linear(torch.relu(F.linear(m, p["mlp.W1"], p["mlp.b1"])), p["mlp.W2"], p["mlp.b2"])
    x = F.layer_norm(x, (d,), params["ln_f.gamma"], params["ln_f.beta"], eps=1e-5)
    logits = F.linear(x, params["head.W"], params["head.b"])
    per_token = F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                torch.from_numpy(np.asarray(batch["targets"])).reshape(-1), reduction="none")
    mask = torch.from_numpy(np.asarray(batch["mask"])).reshape(-1)
    return (per_token * mask).sum() / mask.sum()


@pytest.mark.torch
@pytest.mark.parametrize("mlp", [True, False], ids=["with-mlp", "attention-only"])
def test_whole_model_gradient_equals_torch_autograd(mlp):
    torch = pytest.importorskip("torch")
    model = Transformer.initialize(TransformerConfig("sort", layers=2, heads=2, d_model=8, mlp=mlp), seed=3)
    batch = model.batch([("5031", "0135"), ("9922", "2299"), ("1000", "0001")])
    loss, grads, _ = model.loss_and_grads(batch)
    theirs = {k: torch.tensor(v, requires_grad=True) for k, v in model.params.items()}
    their_loss = torch_loss(torch, model, theirs, batch)
    their_loss.backward()
    assert loss == pytest.approx(their_loss.item(), abs=1e-12)
    for name, value in theirs.items():
        np.testing.assert_allclose(grads[name], value.grad.numpy(), rtol=0, atol=1e-10, err_msg=name)


def test_changing_a_later_token_leaves_earlier_logits_unchanged_only_with_the_causal_mask():
    for causal, unchanged in ((True, True), (False, False)):
        model = tiny(causal=causal)
        a, b = model.batch([("301", "013")]), model.batch([("301", "093")])  # input token 6 differs
        logits_a, _ = model.forward(a["ids"])
        logits_b, _ = model.forward(b["ids"])
        assert np.allclose(logits_a[:, :6], logits_b[:, :6], atol=1e-12) == unchanged
        assert not np.allclose(logits_a[:, 6], logits_b[:, 6])


def test_batch_counts_only_the_answer_tokens_and_shifts_the_targets():
    model = tiny()
    batch = model.batch([("31", "13")])
    vocab = model.config.vocabulary
    assert "".join(vocab[i] for i in batch["ids"][0]) == "|31|1"
    assert "".join(vocab[i] for i in batch["targets"][0]) == "31|13"
    np.testing.assert_array_equal(batch["mask"][0], [0, 0, 0, 1, 1])


def test_held_out_sources_never_appear_in_training_data():
    for task in ("sort", "induction"):
        train_sources = {s for s, _ in make_dataset(task, 3000, seed=0, lengths=(4, 4))}
        held = {s for s, _ in make_dataset(task, 300, seed=0, held_out=True, lengths=(4, 4))}
        assert held and not (train_sources & held)
        assert all(is_held_out(s) for s in held) and not any(is_held_out(s) for s in train_sources)


def test_induction_sources_have_distinct_tokens_and_targets_repeat_them():
    for source, target in make_dataset("induction", 200, seed=5):
        assert source == target and len(set(source)) == len(source) and 6 <= len(source) <= 12


def test_one_seed_gives_identical_parameters_twice_and_another_seed_does_not():
    kwargs = dict(steps=5, batch_size=4, layers=1, heads=2, d_model=8, eval_size=0, lengths=(3, 4))
    first, _ = train("sort", seed=4, **kwargs)
    second, _ = train("sort", seed=4, **kwargs)
    other, _ = train("sort", seed=5, **kwargs)
    for name in first.params:
        np.testing.assert_array_equal(first.params[name], second.params[name])
    assert any(not np.array_equal(first.params[k], other.params[k]) for k in first.params)


def test_weight_decay_has_a_default_per_task_and_shrinks_the_matrices():
    kwargs = dict(steps=20, batch_size=4, layers=1, heads=2, d_model=8, eval_size=0, lengths=(6, 7))
    plain, no_decay = train("induction", seed=3, weight_decay=0.0, **kwargs)
    decayed, strong = train("induction", seed=3, weight_decay=20.0, **kwargs)
    _, default = train("induction", seed=3, **kwargs)
    assert (no_decay["weight_decay"], strong["weight_decay"]) == (0.0, 20.0)
    assert default["weight_decay"] == DEFAULT_WEIGHT_DECAYS["induction"] > DEFAULT_WEIGHT_DECAYS["sort"] == 0
    for name in ("blocks.0.W_Q", "blocks.0.W_O", "token_embedding", "position_embedding"):
        assert np.linalg.norm(decayed.params[name]) < 0.8 * np.linalg.norm(plain.params[name]), name
    for bad in (-1.0, float("nan"), "0.1"):
        with pytest.raises(ValueError, match="weight_decay must be a finite number >= 0"):
            train("induction", weight_decay=bad, **kwargs)


def test_a_tiny_configuration_learns_a_tiny_sort_in_seconds():
    model, history = train("sort", seed=0, steps=400, batch_size=32, layers=1, heads=2, d_model=16,
                           eval_size=200, lengths=(2, 3), peak_learning_rate=1e-2)
    assert history["exact_match"] >= 0.9, history["exact_match"]
    assert history["loss"][-1] < 0.25 * history["loss"][0]


def test_a_tiny_configuration_trains_on_array_api_strict():
    array_api_strict = pytest.importorskip("array_api_strict")
    be = ae.Backend(array_api_strict, array_api_strict.Device("device1"), "float32")
    model, history = train("induction", seed=0, steps=3, batch_size=4, layers=1, heads=2, d_model=8,
                           eval_size=4, lengths=(6, 7), backend=be, shift=2)
    # the induction curriculum's second phase: round(1.2 * 3) more steps, 13 more positions
    assert len(history["loss"]) == history["steps"] == 3 + 4 and 0 <= history["exact_match"] <= 1
    assert model.config.shift == 2 + 13
    assert len(model.predict("abcdef")) == 6


@pytest.mark.gpu
@pytest.mark.skipif(ae.backend.cupy_if_available() is None, reason="needs CuPy and a CUDA device")
def test_a_tiny_configuration_trains_on_cupy_as_on_numpy():
    """Both curriculum phases on a GPU give NumPy's losses and weights (the weights are drawn on the host)."""
    be = ae.Backend(ae.backend.cupy_if_available(), None, "float64")
    kwargs = dict(seed=0, steps=3, batch_size=4, layers=1, heads=2, d_model=8, eval_size=4, lengths=(6, 7),
                  shift=2, dtype="float64")
    model, history = train("induction", backend=be, **kwargs)
    reference, ref_history = train("induction", **kwargs)
    np.testing.assert_allclose(history["loss"], ref_history["loss"], rtol=1e-10)
    for name, value in model.params.items():
        np.testing.assert_allclose(ae.to_numpy(value), reference.params[name], rtol=1e-8, atol=1e-10, err_msg=name)
    assert model.predict("abcdef") == reference.predict("abcdef")


def test_save_then_load_gives_the_same_outputs(tmp_path):
    model = tiny(seed=7)
    model.save(tmp_path / "m.npz")
    loaded = load(tmp_path / "m.npz")
    assert loaded.config == model.config
    for name, value in model.params.items():
        np.testing.assert_array_equal(loaded.params[name], value)
    assert loaded.predict("9152") == model.predict("9152")
    np.testing.assert_array_equal(loaded.attend("9152")[1], model.attend("9152")[1])


def test_load_refuses_broken_files_with_a_clear_error(tmp_path):
    with pytest.raises(CheckpointError, match="no such file"):
        load(tmp_path / "missing.npz")
    (tmp_path / "junk.npz").write_text("not a zip")
    with pytest.raises(CheckpointError, match="not a readable"):
        load(tmp_path / "junk.npz")
    model = tiny()
    arrays = model.host_parameters()
    model.save(tmp_path / "good.npz")
    with np.load(tmp_path / "good.npz") as archive:
        config = archive["config"]
    np.savez(tmp_path / "short.npz", config=config, **{k: v for k, v in arrays.items() if k != "head.b"})
    with pytest.raises(CheckpointError, match=r"missing \['head.b'\]"):
        load(tmp_path / "short.npz")
    np.savez(tmp_path / "shape.npz", config=config, **dict(arrays, **{"head.b": np.zeros(3)}))
    with pytest.raises(CheckpointError, match=r"head.b has shape \(3,\)"):
        load(tmp_path / "shape.npz")
    np.savez(tmp_path / "nan.npz", config=config, **dict(arrays, **{"head.b": np.full(11, np.nan)}))
    with pytest.raises(CheckpointError, match="NaN"):
        load(tmp_path / "nan.npz")
    from attention_edu import seq2seq
    seq2seq.Seq2Seq.initialize(seq2seq.ModelConfig.for_task("reverse", "none", hidden=4, embedding=2)).save(
        tmp_path / "s2s.npz")
    with pytest.raises(CheckpointError, match=r"format tag .*; this checkpoint is a seq2seq model's \(its command: "
                                              r"attention-edu translate\)"):        # which file it is (audit 73)
        load(tmp_path / "s2s.npz")


def test_bad_input_gets_a_clear_error():
    model = tiny()
    with pytest.raises(ValueError, match="outside the sort vocabulary"):
        model.predict("12a")
    with pytest.raises(ValueError, match="exceed this model's longest, 12"):
        model.predict("1" * 13)
    with pytest.raises(ValueError, match="non-empty string"):
        model.predict("")
    with pytest.raises(ValueError, match="^attend: source must be a non-empty string"):
        model.attend("")
    for call in (model.predict, model.attend):      # the separator would end the source early
        with pytest.raises(ValueError, match=rf"^{call.__name__}: source '12\|3' holds the separator"):
            call("12|3")
    with pytest.raises(ValueError, match="^attend: '|12a|' has characters outside the sort vocabulary"):
        model.attend("12a")
    for call, message in ((lambda: train("sort", seed=-1), "train: seed must be an int >= 0, got -1"),
                          (lambda: train("sort", eval_size=-1), "train: eval_size must be an int >= 0"),
                          (lambda: make_dataset("sort", 3, seed=1.5), "make_dataset: seed must be an int >= 0, got 1.5"),
                          (lambda: head_scores(model, seed=-1), "head_scores: seed must be an int >= 0"),
                          (lambda: head_scores("model.npz"), "head_scores: model must be a Transformer")):
        with pytest.raises((ValueError, TypeError), match=f"^{re.escape(message)}"):
            call()      # before any training: a bad seed or size is refused at the door
    tiny_run = dict(steps=1, batch_size=2, layers=1, heads=2, d_model=8, eval_size=0)
    for kwargs, message in ((dict(peak_learning_rate=-1.0), "peak_learning_rate must be a finite number > 0, got -1.0"),
                            (dict(peak_learning_rate=float("nan")), "peak_learning_rate must be a finite number > 0"),
                            (dict(clip=0), "clip must be a finite number > 0, got 0"),
                            (dict(dtype="float16"), "dtype must be 'float32' or 'float64', got 'float16'"),
                            (dict(mlp="no"), "mlp must be True or False, got 'no'"),
                            (dict(causal="no"), "causal must be True or False, got 'no'"),
                            (dict(lengths=(5, 3)), "lengths must be (low, high) with 1 <= low <= high <= 64 for "
                                                   "sort, got (5, 3)"),
                            (dict(lengths=(0, 3)), "got (0, 3)"),
                            (dict(lengths=5), "lengths must be (low, high), two ints, got 5")):
        with pytest.raises(ValueError, match=f"^train: .*{re.escape(message)}"):
            train("sort", **{**tiny_run, **kwargs})     # at the door: NumPy's errors or NaNs came later
    for held_out in ("no", None, 1):
        with pytest.raises(ValueError, match=f"^make_dataset: held_out must be True or False, got {held_out!r}"):
            make_dataset("sort", 2, held_out=held_out)
    with pytest.raises(ValueError, match="unknown task 'copy'"):
        train("copy")
    with pytest.raises(ValueError, match="steps must be a positive int"):
        train("sort", steps=0)
    with pytest.raises(ValueError, match="does not split into heads = 3"):
        TransformerConfig("sort", heads=3, d_model=8)


def test_without_eval_size_train_evaluates_as_many_sources_as_the_command_line():
    """The CLI passes --eval-per-length N times the number of source lengths; the Python default is the same
    count, so that one seed's exact match is measured on the same held-out set both ways."""
    from attention_edu.cli import build_parser
    from attention_edu.transformer.training import EVAL_PER_LENGTH

    assert build_parser().parse_args(["train", "--task", "sort"]).eval_per_length == EVAL_PER_LENGTH
    tiny = dict(steps=1, batch_size=4, layers=1, heads=2, d_model=8, lengths=(3, 5))
    _, history = train("sort", seed=0, **tiny)
    assert history["eval_size"] == EVAL_PER_LENGTH * 3 and 0 <= history["exact_match"] <= 1
    _, skipped = train("sort", seed=0, eval_size=0, **tiny)
    assert skipped["eval_size"] == 0 and "exact_match" not in skipped
