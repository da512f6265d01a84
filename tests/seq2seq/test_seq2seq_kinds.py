"""The attention kinds are one table: a new kind is one entry plus its decoder, and no module
of the package imports another that imports it back."""

from __future__ import annotations

import ast
from functools import partial
from pathlib import Path

import numpy as np
import pytest

import attention_edu as ae
from attention_edu import seq2seq
from attention_edu.seq2seq import kinds
from attention_edu.seq2seq.config import ModelConfig, parameter_shapes
from attention_edu.seq2seq.decoder import decode_parallel, decode_parallel_backward, parallel_step
from attention_edu.seq2seq.model import Seq2Seq
from attention_edu.seq2seq.training import Smoothed

PACKAGE = Path(__file__).resolve().parents[2] / "attention_edu" / "seq2seq"


def test_the_table_holds_every_public_attention_in_order():
    assert seq2seq.ATTENTIONS == tuple(kinds.KINDS) == ("none", "bahdanau", "luong-dot", "luong-general",
                                                        "luong-concat")
    for name, kind in kinds.KINDS.items():
        assert kind.name == name


@pytest.mark.parametrize("attention", seq2seq.ATTENTIONS)
def test_parameter_shapes_follow_the_entry(attention):
    config = ModelConfig.for_task("reverse", attention)
    d, d_e, d_a = config.hidden, config.embedding, config.attention_size
    kind = kinds.KINDS[attention]
    shapes = parameter_shapes(config)
    assert {k: v for k, v in shapes.items() if k.startswith("attention.")} == kind.parameters(d, d_e, d_a)
    assert shapes["decoder.W_ih"] == (3 * d, kind.decoder_input(d, d_e))
    assert shapes["output.W"][1] == d + kind.memory_width(d, d_e)


def test_bahdanau_reads_the_source_characters_beside_the_encoder_states():
    model = Seq2Seq.initialize(ModelConfig.for_task("reverse", "bahdanau"), seed=0)
    batch = model.batch([("abcd", "dcba")])
    cache = model.forward(batch)
    M, H = cache["enc"]["M"], cache["enc"]["H"]
    assert M.shape == (1, 4, 32 + 16)
    np.testing.assert_array_equal(M[..., :32], H)
    np.testing.assert_array_equal(M[0, :, 32:], model.params["src_embedding"][batch["src_ids"][0]])


def test_a_new_kind_is_one_entry(monkeypatch):
    """A Luong decoder that scores with a bilinear W, registered under a new name, trains and its
    gradient is right, with nothing else edited."""
    entry = kinds.AttentionKind("luong-bilinear", lambda d, d_e, d_a: {"attention.W": (d, d)},
                                partial(decode_parallel, "general"), decode_parallel_backward,
                                partial(parallel_step, "general"))
    monkeypatch.setitem(kinds.KINDS, "luong-bilinear", entry)
    config = ModelConfig("reverse", "luong-bilinear", "abcd", "abcd", embedding=3, hidden=4,
                         attention_size=3, max_output=8)
    model = Seq2Seq.initialize(config, seed=1)
    batch = model.batch([("abc", "cba"), ("dabcd", "dcbad")])
    errors = ae.gradcheck(lambda **p: model.forward(batch, p), lambda cache, g: model.backward(cache, g),
                          model.params, outputs=("loss",))
    assert max(errors.values()) < 1e-5, errors
    output, weights = model.translate("abc")
    assert weights.shape == (len(output), 3)


def test_an_unknown_kind_is_refused_by_name():
    with pytest.raises(ValueError, match="ModelConfig: unknown attention 'luong-cos'; choose one of none, "):
        ModelConfig.for_task("reverse", "luong-cos")


def _imports(path: Path) -> set[str]:
    """Sibling modules of attention_edu.seq2seq that ``path`` imports, at any depth of its code."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                found.add(node.module.split(".")[0])
            else:
                found.update(alias.name for alias in node.names)
    return found


def test_no_module_of_the_package_imports_itself_back():
    graph = {p.stem: _imports(p) for p in PACKAGE.glob("*.py")}
    assert "model" in graph["checkpoint"] and "checkpoint" not in graph["model"]

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in graph.get(start, ()):
            if nxt == goal or (nxt not in seen and reaches(nxt, goal, seen | {nxt})):
                return True
        return False

    cycles = [name for name in graph if reaches(name, name, set())]
    assert not cycles, {name: sorted(graph[name]) for name in cycles}


def test_the_progress_average_matches_a_loop_and_starts_unbiased():
    values = [(2.0, 0.9), (1.0, 0.55), (0.5, 0.69), (0.25, 0.8)]
    smooth = Smoothed(decay=0.9)
    for step, (loss, accuracy) in enumerate(values, start=1):
        got = smooth.update(loss, accuracy)
        weights = [0.9 ** (step - i) for i in range(1, step + 1)]  # oracle: weighted mean of the past
        expected = [sum(w * v[j] for w, v in zip(weights, values)) / sum(weights) for j in (0, 1)]
        np.testing.assert_allclose(got, expected)
    assert Smoothed().update(3.0, 0.5) == pytest.approx((3.0, 0.5))
