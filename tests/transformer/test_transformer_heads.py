"""head_scores finds patterns planted in hand-set weights, and the ablation removes a head."""

from __future__ import annotations

import numpy as np
import pytest

from attention_edu.transformer import Transformer, TransformerConfig, ablate, head_scores, make_dataset
from attention_edu.transformer.heads import pattern_targets


def planted_previous_token_model(strength):
    """One layer, one head whose query at position t matches the key at t − 1: positions are
    one-hot embeddings, W_K = I and W_Q maps position t's direction onto t − 1's, times ``strength``."""
    config = TransformerConfig("induction", layers=1, heads=1, d_model=26, mlp=False)
    model = Transformer.initialize(config, seed=0)
    params = dict(model.params)
    params["token_embedding"] = np.zeros((21, 26))
    params["position_embedding"] = np.eye(26)
    params["blocks.0.W_K"] = np.eye(26)
    params["blocks.0.W_Q"] = strength * np.eye(26, k=-1)  # row t has its entry in column t − 1
    return Transformer(config, params, model.backend)


def test_head_scores_find_a_planted_previous_token_head_and_miss_it_in_random_weights():
    planted = head_scores(planted_previous_token_model(60.0), seed=2, size=32, ablation=False)
    assert planted[0]["previous_token"] > 0.95, planted
    random = Transformer.initialize(TransformerConfig("induction", layers=1, heads=1, d_model=26, mlp=False), seed=0)
    assert head_scores(random, seed=2, size=32, ablation=False)[0]["previous_token"] < 0.4


def test_pattern_targets_follow_their_definitions_on_a_hand_made_sequence():
    # | a b c | a b   (inputs), next tokens a b c | a b c; answer positions 4, 5, 6
    ids = np.array([[0, 1, 2, 3, 0, 1, 2]])
    targets = np.array([[1, 2, 3, 0, 1, 2, 3]])
    answer = np.array([[0, 0, 0, 0, 1, 1, 1]])
    p = pattern_targets(ids, targets, answer)
    assert [int(np.argmax(p["previous_token"][0, t])) for t in range(1, 7)] == [0, 1, 2, 3, 4, 5]
    assert p["induction"][0, :4].sum() == 0, "no earlier occurrence, no induction target"
    assert [int(np.argmax(p["induction"][0, t])) for t in (4, 5, 6)] == [1, 2, 3]
    assert [int(np.argmax(p["source_of_output"][0, t])) for t in (4, 5, 6)] == [1, 2, 3]
    assert p["source_of_output"][0, :4].sum() == 0


def test_ablating_a_head_removes_its_contribution_and_only_that():
    model = Transformer.initialize(TransformerConfig("sort", layers=1, heads=2, d_model=8), seed=1)
    batch = model.batch([("5031", "0135")])
    without = ablate(model, 0, 1)
    logits, cache = model.forward(batch["ids"])
    logits_without, _ = without.forward(batch["ids"])
    assert not np.allclose(logits, logits_without)
    np.testing.assert_array_equal(without.params["blocks.0.W_O"][:4], model.params["blocks.0.W_O"][:4])
    assert np.all(without.params["blocks.0.W_O"][4:] == 0) and np.any(model.params["blocks.0.W_O"][4:] != 0)
    with pytest.raises(ValueError, match="no head 2 in layer 0"):
        ablate(model, 0, 2)


def test_head_scores_score_a_model_on_another_tasks_pattern_in_its_own_tokens():
    # DESIGN's example: a sort model scored on induction sequences (digits, distinct, repeated)
    sort_model = Transformer.initialize(TransformerConfig("sort", layers=1, heads=2, d_model=8), seed=1)
    scores = head_scores(sort_model, "induction", seed=1, size=16)
    assert [(s["layer"], s["head"]) for s in scores] == [(0, 0), (0, 1)]
    assert all(0 <= s["induction"] <= 1 and np.isfinite(s["accuracy_drop"]) for s in scores)
    # the planted previous-token head is found on the other task's sequences too
    planted = head_scores(planted_previous_token_model(60.0), "sort", seed=2, size=32, ablation=False)
    assert planted[0]["previous_token"] > 0.95, planted
    # every answer token of an induction sequence has an induction target, so a head attending
    # uniformly scores about 1/t on it: the probe used sequences of the induction pattern
    uniform = Transformer.initialize(TransformerConfig("sort", layers=1, heads=1, d_model=8), seed=1)
    params = dict(uniform.params, **{"blocks.0.W_Q": np.zeros((8, 8))})
    flat = Transformer(uniform.config, params, uniform.backend)
    induction, sort = (head_scores(flat, task, seed=3, size=32, ablation=False)[0]["induction"]
                       for task in ("induction", "sort"))
    assert 0.03 < induction < 0.2 and induction != sort
    with pytest.raises(ValueError, match="unknown task 'copy'"):
        head_scores(sort_model, "copy")


def test_make_dataset_draws_a_pattern_in_another_alphabet_and_refuses_a_bad_one():
    pairs = make_dataset("induction", 20, seed=0, alphabet="0123456789", lengths=(6, 10))
    assert all(s == t and s.isdigit() and len(set(s)) == len(s) and 6 <= len(s) <= 10 for s, t in pairs)
    assert make_dataset("induction", 5, seed=0) == make_dataset("induction", 5, seed=0, alphabet="abcdefghijklmnopqrst")
    with pytest.raises(ValueError, match="lengths must be"):
        make_dataset("induction", 2, alphabet="0123456789", lengths=(6, 12))
    for bad in ("", "aa", "a|b", 5):
        with pytest.raises(ValueError, match="alphabet must be"):
            make_dataset("sort", 2, alphabet=bad)
