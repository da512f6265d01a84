"""head_scores finds patterns planted in hand-set weights, and the ablation removes a head."""

from __future__ import annotations

import numpy as np
import pytest

from attention_edu.transformer import Transformer, TransformerConfig, ablate, head_scores
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


def test_head_scores_refuse_another_task():
    model = Transformer.initialize(TransformerConfig("sort", layers=1, heads=2, d_model=8), seed=1)
    with pytest.raises(ValueError, match="trained on 'sort', not 'induction'"):
        head_scores(model, "induction")
