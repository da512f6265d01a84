"""``attention-edu train`` and ``translate``: results, JSON, and clear errors with the right exit code."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

from attention_edu.cli import main
from attention_edu.seq2seq.config import ModelConfig
from attention_edu.seq2seq.model import Seq2Seq

QUICK = ["--steps", "3", "--batch-size", "8", "--eval-per-length", "1", "--quiet"]


def test_train_json_has_the_design_fields_on_the_last_line_and_saves_a_model(tmp_path, capsys):
    out = tmp_path / "m.npz"
    assert main(["train", "--task", "reverse", "--attention", "none", "--seed", "3", "--out", str(out),
                 "--json", *QUICK]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    metrics = json.loads(last)
    assert {"task", "attention", "seed", "seconds", "exact_match", "exact_match_by_length"} <= set(metrics)
    assert metrics["task"] == "reverse" and metrics["attention"] == "none" and metrics["seed"] == 3
    assert set(metrics["exact_match_by_length"]) == {str(n) for n in range(4, 25)}
    assert all(0 <= v <= 1 for v in metrics["exact_match_by_length"].values())
    assert out.exists()


@pytest.mark.parametrize("argv, message", [
    (["train", "--task", "copy"], "invalid choice: 'copy'"),
    (["train", "--attention", "cosine"], "invalid choice: 'cosine'"),
    (["train", "--steps", "0"], "must be a positive integer"),
])
def test_train_usage_errors_exit_2(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_train_to_a_missing_directory_exits_1_before_training(tmp_path, capsys):
    assert main(["train", "--out", str(tmp_path / "no" / "m.npz"), *QUICK]) == 1
    assert "no directory" in capsys.readouterr().err


@pytest.fixture
def checkpoint(tmp_path):
    path = tmp_path / "bahdanau.npz"
    Seq2Seq.initialize(ModelConfig.for_task("reverse", "none"), seed=0).save(path)
    return path


def test_translate_prints_the_output(checkpoint, capsys):
    assert main(["translate", str(checkpoint), "abcd"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert set(lines[0]) <= set("abcdefghij") and "no alignment" in lines[1]


@pytest.mark.parametrize("make, code, message", [
    (lambda p: p.parent / "missing.npz", 1, "no such file"),
    (lambda p: (p.write_bytes(p.read_bytes()[:100]), p)[1], 1, "not a readable .npz checkpoint"),
    (lambda p: (np.savez(p, x=np.zeros(2)), p)[1], 1, "has no 'config' string"),
])
def test_translate_with_a_missing_or_corrupt_checkpoint_exits_1(checkpoint, capsys, make, code, message):
    assert main(["translate", str(make(checkpoint)), "abc"]) == code
    assert message in capsys.readouterr().err


def test_translate_outside_the_alphabet_exits_2(checkpoint, capsys):
    assert main(["translate", str(checkpoint), "abc!"]) == 2
    assert "'!' not in the model's alphabet" in capsys.readouterr().err


def test_the_console_script_reports_errors_without_a_traceback(console_script, checkpoint):
    done = subprocess.run([console_script, "translate", str(checkpoint.parent / "nope.npz"), "abc"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr and "no such file" in done.stderr
    done = subprocess.run([console_script, "translate", str(checkpoint), "ABC"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
