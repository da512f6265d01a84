"""``attention-edu train --task sort|induction`` and ``attention-edu heads``: results and clear errors."""

from __future__ import annotations

import json
import subprocess

import pytest

from attention_edu.cli import main
from attention_edu.transformer import Transformer, TransformerConfig

QUICK = ["--steps", "3", "--batch-size", "8", "--eval-per-length", "1", "--quiet"]


@pytest.fixture
def checkpoint(tmp_path):
    path = tmp_path / "sort.npz"
    Transformer.initialize(TransformerConfig("sort", layers=2, heads=2, d_model=8), seed=0).save(path)
    return path


@pytest.mark.parametrize("task", ["sort", "induction"])
def test_train_a_transformer_task_prints_json_with_head_scores_and_saves(tmp_path, capsys, task):
    out = tmp_path / "m.npz"
    assert main(["train", "--task", task, "--seed", "3", "--out", str(out), "--json", *QUICK]) == 0
    printed = capsys.readouterr()
    metrics = json.loads(printed.out)  # one JSON object and nothing else; the summary and heads are on stderr
    assert printed.out.count("\n") == 1 and "heads (layer.head)" in printed.err and "saved" in printed.err
    assert {"task", "seed", "seconds", "exact_match", "head_scores"} <= set(metrics)
    assert metrics["task"] == task and metrics["seed"] == 3 and 0 <= metrics["exact_match"] <= 1
    layers, heads = metrics["config"]["layers"], metrics["config"]["heads"]
    assert [(s["layer"], s["head"]) for s in metrics["head_scores"]] == [
        (layer, head) for layer in range(layers) for head in range(heads)]
    assert all(0 <= s["previous_token"] <= 1 and 0 <= s["induction"] <= 1 for s in metrics["head_scores"])
    assert out.exists()


def test_train_without_json_prints_the_heads_on_stdout(capsys):
    assert main(["train", "--task", "sort", *QUICK]) == 0
    printed = capsys.readouterr()
    assert "heads (layer.head)" in printed.out and "{" not in printed.out and printed.err == ""


def test_train_to_a_missing_directory_is_a_usage_error_before_training(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["train", "--task", "sort", "--out", str(tmp_path / "no" / "m.npz"), *QUICK])
    assert exit_info.value.code == 2
    assert "does not exist" in capsys.readouterr().err


def test_an_attention_for_a_transformer_task_is_a_usage_error(capsys):
    assert main(["train", "--task", "induction", "--attention", "luong-dot", *QUICK]) == 2
    assert "--attention applies to the seq2seq tasks" in capsys.readouterr().err


def test_heads_prints_the_output_and_a_heatmap_per_head(checkpoint, capsys):
    assert main(["heads", str(checkpoint), "5031"]) == 0
    out = capsys.readouterr().out
    assert len(out.splitlines()[0]) == 4 and set(out.splitlines()[0]) <= set("0123456789")
    assert [f"layer {layer}, head {head}" in out for layer in range(2) for head in range(2)] == [True] * 4


@pytest.mark.parametrize("text, message", [("50a1", "outside the sort vocabulary"),
                                           ("1" * 13, "exceed this model's longest"),
                                           ("12|3", "attend: source '12|3' holds the separator '|'")])
def test_heads_with_bad_text_exits_2(checkpoint, capsys, text, message):
    assert main(["heads", str(checkpoint), text]) == 2
    assert message in capsys.readouterr().err


def test_heads_warns_on_text_unlike_the_training_sources_and_still_answers(checkpoint, capsys):
    assert main(["heads", str(checkpoint), "503"]) == 0           # sort trained on 4 to 12 digits
    captured = capsys.readouterr()
    assert 'warning: the sort model was trained on 4 to 12 digits; "503" has 3' in captured.err
    assert len(captured.out.splitlines()[0]) == 3
    assert main(["heads", str(checkpoint), "5031"]) == 0 and capsys.readouterr().err == ""


def test_heads_with_a_missing_or_foreign_checkpoint_exits_1(tmp_path, capsys):
    assert main(["heads", str(tmp_path / "none.npz"), "5031"]) == 2
    assert "no such file" in capsys.readouterr().err
    (tmp_path / "junk.npz").write_bytes(b"PK\x03\x04junk")
    assert main(["heads", str(tmp_path / "junk.npz"), "5031"]) == 2
    assert "not a readable" in capsys.readouterr().err


def test_heads_usage_error_exits_2(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["heads"])
    assert exit_info.value.code == 2


def test_the_console_script_reports_errors_without_a_traceback(console_script, checkpoint):
    done = subprocess.run([console_script, "heads", str(checkpoint), "xyz"], capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr and "vocabulary" in done.stderr
