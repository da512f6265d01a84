"""``attention-edu check EXERCISE FILE.py``: exit 0 on pass, 1 on fail, 2 on usage errors."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from attention_edu import cli

WRONG_AXIS = """
import numpy as np

def softmax(x):
    e = np.exp(x - np.max(x, axis=0, keepdims=True))
    return e / np.sum(e, axis=0, keepdims=True)

def my_mask(m, n=None):
    return np.tril(np.ones((m, n or m), dtype=bool), k=(n or m) - m)
"""


@pytest.fixture
def write(tmp_path):
    def _write(source: str, name: str = "solution.py") -> str:
        path = tmp_path / name
        path.write_text(textwrap.dedent(source))
        return str(path)
    return _write


@pytest.fixture
def run():
    return cli.main


def test_pass_exits_0(run, write, capsys, softmax_source):
    assert run(["check", "softmax", write(softmax_source)]) == 0
    assert capsys.readouterr().out.startswith("check softmax: passed.")


def test_fail_exits_1_and_names_the_mistake(run, write, capsys):
    assert run(["check", "softmax", write(WRONG_AXIS)]) == 1
    assert "Hint [softmax.wrong-axis]" in capsys.readouterr().out


def test_function_option_and_check_prefix(run, write, capsys):
    assert run(["check", "check_causal_mask", write(WRONG_AXIS), "--function", "my_mask"]) == 0
    assert "check causal_mask: passed." in capsys.readouterr().out


def test_unknown_exercise_exits_2_and_lists_the_valid_ones(run, write, capsys, softmax_source):
    assert run(["check", "softmaks", write(softmax_source)]) == 2
    err = capsys.readouterr().err
    assert "unknown exercise 'softmaks'" in err and "scaled_dot_product_attention" in err


@pytest.mark.parametrize("argv_tail,message", [
    (["softmax"], "give an exercise and a file"),
    (["softmax", "/nonexistent/solution.py"], "no such file"),
])
def test_usage_errors_exit_2(run, argv_tail, message, capsys):
    assert run(["check"] + argv_tail) == 2
    assert message in capsys.readouterr().err


def test_a_folder_or_a_file_of_another_kind_is_a_usage_error(run, write, tmp_path, capsys):
    """check's FILE names one .py file or notebook: a folder or notes.txt exited 1, "failed", as if graded."""
    for path in (str(tmp_path), write("def softmax(x):\n    return x\n", "notes.txt")):
        assert run(["check", "softmax", path]) == 2
        assert "is not a .py file or an .ipynb notebook" in capsys.readouterr().err


def test_missing_function_exits_2_and_lists_what_the_file_defines(run, write, capsys):
    assert run(["check", "causal_mask", write(WRONG_AXIS)]) == 2
    assert "defines no function 'causal_mask'" in capsys.readouterr().err


def test_a_file_that_fails_to_import_exits_1(run, write, capsys):
    assert run(["check", "softmax", write("raise RuntimeError('oops')\n")]) == 1
    assert "raised RuntimeError: oops" in capsys.readouterr().out


def test_list(run, capsys):
    assert run(["check", "--list"]) == 0
    out = capsys.readouterr().out
    assert "multi_head_attention" in out and "padding_mask(lengths, n)" in out


def test_console_script_in_a_subprocess(write, console_script, softmax_source):
    good, bad = write(softmax_source, "good.py"), write(WRONG_AXIS, "bad.py")
    command = [console_script]
    codes = [subprocess.run(command + ["check", exercise, path], capture_output=True, text=True,
                            timeout=120).returncode
             for exercise, path in (("softmax", good), ("softmax", bad), ("nonsense", good))]
    assert codes == [0, 1, 2]


def test_a_stub_exits_1_not_attempted(run, write, capsys):
    stub = "def softmax(x):\n    raise NotImplementedError\n"
    assert run(["check", "softmax", write(stub)]) == 1
    assert "check softmax: not attempted." in capsys.readouterr().out


@pytest.mark.parametrize("source", ["import os\nos._exit(0)\n", "import sys\nsys.exit(0)\n",
                                    "import os\nos.abort()\n"])
def test_a_file_that_ends_the_process_at_import_exits_1(run, write, capsys, source, softmax_source):
    assert run(["check", "softmax", write(source + softmax_source)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("check softmax: failed. importing the file")


def test_without_the_posix_resource_module_every_command_still_loads_and_check_lists(tmp_path):
    """Windows has no ``resource``: importing the judge's launcher at the top of the CLI stopped every command there."""
    code = ("import sys; sys.modules['resource'] = None\n"
            "from attention_edu import cli\n"
            "raise SystemExit(cli.main(['check', '--list']))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "softmax" in done.stdout and "attention_backward" in done.stdout


@pytest.mark.parametrize("argv", [["check", "softmax"], ["grade", "--exercise", "softmax"]])
def test_check_and_grade_refuse_windows_with_a_sentence(run, write, capsys, monkeypatch, softmax_source, argv):
    from attention_edu.checkers.judge import command

    class Windows:          # the command module's os, as on Windows; the rest of the process keeps its own
        name = "nt"

        def __getattr__(self, attr):
            return getattr(os, attr)

    monkeypatch.setattr(command, "os", Windows())
    code = run([*argv, write(softmax_source)])
    err = capsys.readouterr().err
    assert code == 2 and "needs Linux or macOS" in err and "WSL" in err
    assert err.count("\n") == 1
