"""The induction curriculum: its batches, its suffix copies, its undecayed parameters, and training."""

import numpy as np
import pytest

from attention_edu.layers.optim import Adam
from attention_edu.transformer import Transformer, TransformerConfig, train
from attention_edu.transformer.curriculum import (DEFAULT_CURRICULA, Curriculum, curriculum_batches,
                                                  lead_separators, suffix_batch)
from attention_edu.transformer.heads import pattern_targets

TINY = dict(batch_size=4, layers=1, heads=2, d_model=8, eval_size=0, lengths=(6, 7))


def test_batches_lead_the_late_share_with_one_to_max_separators_and_the_rest_with_none():
    batches = curriculum_batches(5, 400, 2, (6, 12), late_share=0.5, max_lead=13, suffix_share=0.0)
    leads = np.array([lead for _, lead, _ in batches])
    assert set(leads[leads > 0]) == set(range(1, 14))
    assert 0.4 < np.mean(leads > 0) < 0.6
    assert all(start == 0 for _, _, start in batches)
    assert all(len({len(s) for s, _ in pairs}) == 1 and 6 <= len(pairs[0][0]) <= 12 for pairs, _, _ in batches)
    plain = curriculum_batches(5, 50, 2, (6, 12), late_share=0.0, max_lead=13, suffix_share=0.0)
    assert {lead for _, lead, _ in plain} == {0}
    again = curriculum_batches(5, 400, 2, (6, 12), late_share=0.5, max_lead=13, suffix_share=0.0)
    assert again == batches


def test_suffix_starts_lie_inside_the_source_and_leave_two_copied_tokens():
    batches = curriculum_batches(1, 400, 2, (6, 12), late_share=0.0, max_lead=0, suffix_share=0.5)
    starts = [(start, len(pairs[0][0])) for pairs, _, start in batches if start]
    assert 0.4 < len(starts) / len(batches) < 0.6
    assert all(1 <= start <= n - 2 for start, n in starts)
    assert {start for start, _ in starts} == set(range(1, 11))


def test_every_scored_token_of_a_suffix_copy_is_the_induction_target():
    model = Transformer.initialize(TransformerConfig("induction", layers=1, heads=1, d_model=4, mlp=False))
    pairs = [("qcmfab", "qcmfab"), ("tsrqpo", "tsrqpo")]
    batch = suffix_batch(model, pairs, start=2)
    ids, targets, mask = (np.asarray(batch[k]) for k in ("ids", "targets", "mask"))
    assert ids.shape == targets.shape == mask.shape == (2, 11)  # |qcmfab|mfa -> 11 inputs
    np.testing.assert_array_equal(ids[:, 1:], targets[:, :-1])
    assert mask.sum() == 2 * 3  # f, a, b after m: the first copied token is not scored
    induction = pattern_targets(ids, targets, mask)["induction"]  # (B, T, T)
    for b, t in zip(*np.nonzero(mask)):
        key = int(induction[b, t].argmax())
        assert induction[b, t].sum() == 1 and ids[b, key] == targets[b, t]


def test_leading_separators_move_the_scored_tokens_late_and_change_no_loss_target():
    model = Transformer.initialize(TransformerConfig("induction", layers=1, heads=1, d_model=4, mlp=False))
    plain = model.batch([("qcmfab", "qcmfab"), ("tsrqpo", "tsrqpo")])
    led = lead_separators(model, plain, 5)
    for key in ("ids", "targets", "mask"):
        assert np.asarray(led[key]).shape == (2, 5 + 13)
        np.testing.assert_array_equal(np.asarray(led[key])[:, 5:], np.asarray(plain[key]))
    assert not np.asarray(led["ids"])[:, :5].any() and not np.asarray(led["mask"])[:, :5].any()  # separators
    first = int(np.argmax(np.asarray(led["mask"])[0]))
    assert first == 5 + 7 and lead_separators(model, plain, 0) is plain


def test_adam_scales_the_decay_of_the_parameters_named_and_no_other():
    params = {"kept": np.ones((2, 2)), "shrunk": np.ones((2, 2)), "twice": np.ones((2, 2))}
    zero = {name: np.zeros((2, 2)) for name in params}
    optimizer = Adam(weight_decay=1.0, decay_scales={"kept": 0.0, "twice": 2.0})
    for _ in range(10):
        params = optimizer.step(params, zero, lr=0.1)
    np.testing.assert_array_equal(params["kept"], np.ones((2, 2)))
    np.testing.assert_allclose(params["shrunk"], 0.9 ** 10 * np.ones((2, 2)))
    np.testing.assert_allclose(params["twice"], 0.8 ** 10 * np.ones((2, 2)))
    with pytest.raises(ValueError, match="decay_scales must be finite numbers >= 0"):
        Adam(weight_decay=1.0, decay_scales={"kept": -1.0})


def test_the_curriculum_adds_position_rows_and_counts_both_phases():
    plan = Curriculum(late_ratio=0.5, max_lead=3)
    model, history = train("induction", seed=1, steps=10, curriculum=plan, **TINY)
    assert model.config.shift == 3 and model.params["position_embedding"].shape == (2 * 12 + 2 + 3, 8)
    assert history["steps"] == len(history["loss"]) == 15 and history["config"]["shift"] == 3
    assert history["curriculum"]["max_lead"] == 3
    plain, flat = train("induction", seed=1, steps=10, curriculum=False, **TINY)
    assert plain.config.shift == 0 and flat["steps"] == len(flat["loss"]) == 10 and flat["curriculum"] is None
    assert DEFAULT_CURRICULA["sort"] is None and train("sort", steps=3, **TINY)[1]["curriculum"] is None
    _, default = train("induction", seed=1, steps=10, **TINY)
    assert default["steps"] == 10 + DEFAULT_CURRICULA["induction"].late_steps(10)


def test_a_tiny_configuration_still_learns_induction_with_the_curriculum():
    model, history = train("induction", seed=0, steps=300, batch_size=32, layers=2, heads=2, d_model=16,
                           eval_size=100, lengths=(4, 5), peak_learning_rate=1e-2,
                           curriculum=Curriculum(late_ratio=0.5, max_lead=4))
    assert np.mean(history["loss"][-20:]) < 0.5 * np.mean(history["loss"][:20])
    assert history["answer_accuracy"] > 0.5, history["answer_accuracy"]


def test_bad_curricula_get_a_clear_error():
    with pytest.raises(ValueError, match="curriculum must be True, False or"):
        train("induction", steps=2, curriculum="yes", **TINY)
    with pytest.raises(ValueError, match="curriculum must be True, False or"):
        train("sort", steps=2, curriculum=Curriculum(), **TINY)
    for bad in (dict(late_share=1.5), dict(suffix_share=-0.1), dict(late_ratio=float("inf")),
                dict(late_decay_factor="3"), dict(last_layer_decay_factor=-1.0)):
        with pytest.raises(ValueError, match=f"Curriculum: {next(iter(bad))} must be a finite number"):
            Curriculum(**bad)
    with pytest.raises(ValueError, match="Curriculum: max_lead must be an int >= 0"):
        Curriculum(max_lead=-1)
    with pytest.raises(ValueError, match="Curriculum: undecayed must be a tuple of parameter names"):
        Curriculum(undecayed="position_embedding")
