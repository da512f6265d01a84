"""``attention-edu train`` and ``translate``: results, JSON, and clear errors with the right exit code."""

from __future__ import annotations

import json
import os
import stat
import subprocess

import numpy as np
import pytest

from attention_edu.cli import main
from attention_edu.seq2seq.config import ModelConfig
from attention_edu.seq2seq.model import Seq2Seq

QUICK = ["--steps", "3", "--batch-size", "8", "--eval-per-length", "1", "--quiet"]


def test_train_json_is_stdout_alone_with_the_design_fields_and_saves_a_model(tmp_path, capsys):
    out = tmp_path / "m.npz"
    assert main(["train", "--task", "reverse", "--attention", "none", "--seed", "3", "--out", str(out),
                 "--json", *QUICK]) == 0
    printed = capsys.readouterr()
    metrics = json.loads(printed.out)  # one JSON object and nothing else; the summary is on stderr
    assert printed.out.count("\n") == 1 and "held-out exact match" in printed.err and "saved" in printed.err
    assert {"task", "attention", "seed", "seconds", "exact_match", "exact_match_by_length"} <= set(metrics)
    assert metrics["task"] == "reverse" and metrics["attention"] == "none" and metrics["seed"] == 3
    assert set(metrics["exact_match_by_length"]) == {str(n) for n in range(4, 25)}
    assert all(0 <= v <= 1 for v in metrics["exact_match_by_length"].values())
    assert out.exists()


def test_train_without_json_prints_its_summary_on_stdout(capsys):
    assert main(["train", "--task", "reverse", "--attention", "none", *QUICK]) == 0
    printed = capsys.readouterr()
    assert "held-out exact match" in printed.out and "{" not in printed.out and printed.err == ""


@pytest.mark.parametrize("argv, message", [
    (["train", "--task", "copy"], "invalid choice: 'copy'"),
    (["train", "--attention", "cosine"], "invalid choice: 'cosine'"),
    (["train", "--steps", "0"], "must be a positive integer"),
    (["train", "--seed", "-1"], "argument --seed: must be a whole number of at least 0, got -1"),
])
def test_train_usage_errors_exit_2(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_train_to_a_missing_directory_is_a_usage_error_before_training(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["train", "--out", str(tmp_path / "no" / "m.npz"), *QUICK])
    assert exit_info.value.code == 2
    assert f"argument --out: the folder {tmp_path / 'no'} does not exist" in capsys.readouterr().err


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
    (lambda p: p.parent / "missing.npz", 2, "no such file"),
    (lambda p: (p.write_bytes(p.read_bytes()[:100]), p)[1], 2, "not a readable .npz checkpoint"),
    (lambda p: (p.write_text("not a model\n"), p)[1], 2, "a checkpoint is what 'attention-edu train --out' writes"),
    (lambda p: (np.savez(p, x=np.zeros(2)), p)[1], 2, "has no 'config' string"),
])
def test_translate_with_a_missing_or_foreign_checkpoint_is_a_usage_error(checkpoint, capsys, make, code,
                                                                        message):
    assert main(["translate", str(make(checkpoint)), "abcd"]) == code
    err = capsys.readouterr().err
    assert message in err and "allow_pickle" not in err and "Traceback" not in err


@pytest.mark.parametrize("text, warned", [("abcd", None), ("abc", "trained on 4 to 24 letters"),
                                          ("abcdefghij" * 3, "has 30, so the output is a guess")])
def test_translate_warns_outside_the_trained_lengths_and_still_prints(checkpoint, capsys, text, warned):
    assert main(["translate", str(checkpoint), text]) == 0
    captured = capsys.readouterr()
    assert set(captured.out.splitlines()[0]) <= set("abcdefghij")
    assert ("warning" in captured.err) == (warned is not None) and (warned or "") in captured.err


def test_translate_warns_on_an_impossible_or_unknown_date(tmp_path, capsys):
    path = tmp_path / "dates.npz"
    Seq2Seq.initialize(ModelConfig.for_task("dates", "bahdanau"), seed=0).save(path)
    for text, warned in (("31 February 2001", True), ("May 3 1979", True), ("3 May 2079", True),
                         ("3 May 1979", False), ("14 Feb 1990", False)):  # the untrained model's output is wrong:
        assert main(["translate", str(path), text]) == 0                  # the input alone decides (audit 73)
        assert ("warning" in capsys.readouterr().err) == warned, text
    from attention_edu.seq2seq.translate_command import warnings_for
    assert warnings_for("dates", "Thursday, May 3, 1979", "1979-05-03") == []
    assert warnings_for("dates", "Friday, May 3, 1979", "1979-05-03") != []  # wrong weekday
    assert "not a calendar date" in warnings_for("dates", "31 February 2001", "2001-02-31")[0]
    assert warnings_for("dates", "3 May 2079", "2079-05-03") != []           # outside 1950-2049
    assert warnings_for("dates", "Wed 14 Feb 1990", "1990-04-24") == []      # a wrong output of a date it reads


def test_translate_help_lists_what_a_model_reads(capsys):
    with pytest.raises(SystemExit):
        main(["translate", "--help"])
    out = capsys.readouterr().out
    assert "abcdefghij" in out and "4 to 24" in out
    for example in ("14 February 1990", "February 14, 1990", "Wednesday, February 14, 1990", "14 Feb 1990",
                    "14.02.1990", "1990/02/14", "Feb 14, 1990", "Wed 14 Feb 1990"):
        assert example in out


def test_translate_outside_the_alphabet_exits_2(checkpoint, capsys):
    assert main(["translate", str(checkpoint), "abc!"]) == 2
    assert "'!' not in the model's alphabet" in capsys.readouterr().err


def test_the_console_script_reports_errors_without_a_traceback(console_script, checkpoint):
    done = subprocess.run([console_script, "translate", str(checkpoint.parent / "nope.npz"), "abc"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr and "no such file" in done.stderr
    done = subprocess.run([console_script, "translate", str(checkpoint), "ABC"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr


def test_train_to_what_is_not_a_regular_file_exits_2_before_training_and_leaves_it(tmp_path, capsys):
    """The model is written beside --out and renamed over it: as root, --out /dev/null would have replaced the
    device with a regular file for the whole machine. A FIFO stands in for the device."""
    os.mkfifo(tmp_path / "pipe.npz")
    with pytest.raises(SystemExit) as exit_info:
        main(["train", "--out", str(tmp_path / "pipe.npz"), *QUICK])
    assert exit_info.value.code == 2
    assert "not a regular file" in capsys.readouterr().err
    assert stat.S_ISFIFO(os.stat(tmp_path / "pipe.npz").st_mode)
