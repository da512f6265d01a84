"""The command line's edges: --version, and output into a pipe whose reader stopped early or onto a full disk."""

from __future__ import annotations

import os
import stat
import subprocess
import time

import pytest

import attention_edu as ae


def test_version_prints_the_package_version(console_script):
    done = subprocess.run([console_script, "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == f"attention-edu {ae.__version__}"


def test_python_dash_m_runs_the_same_command(tmp_path):
    """``python -m attention_edu``, for an environment whose scripts folder is not on PATH."""
    import sys

    done = subprocess.run([sys.executable, "-m", "attention_edu", "--version"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == f"attention-edu {ae.__version__}"
    done = subprocess.run([sys.executable, "-m", "attention_edu"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and "the following arguments are required: COMMAND" in done.stderr


def test_output_into_a_closed_pipe_ends_quietly(console_script):
    """`attention-edu examples --json | head -1`: the reader closes the pipe after one line (of 3 MB)."""
    done = subprocess.run(f"'{console_script}' examples --json | head -1; exit ${{PIPESTATUS[0]}}", shell=True,
                          executable="/bin/bash", capture_output=True, text=True, timeout=120)
    assert done.stdout.count("\n") == 1
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    assert done.returncode == 0


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_output_onto_a_full_disk_is_one_line_and_exit_1(console_script):
    """`attention-edu examples --json > /dev/full` ended in an OSError traceback (audit 73)."""
    with open("/dev/full", "w") as full:
        done = subprocess.run([console_script, "examples", "--json"], stdout=full, stderr=subprocess.PIPE, text=True,
                              timeout=120)
    assert (done.returncode, done.stderr) == (1, "attention-edu examples: could not write the output: No space left "
                                                 "on device\n")


@pytest.mark.parametrize("args, words", [
    (["examples", "--errata-md", "/missing/x.md"], ["--errata-md", "/missing does not exist"]),
    (["bench", "--quick", "--plot", "/missing/dir/x.png"], ["--plot", "/missing/dir does not exist"]),
    (["grade", "x.py", "--exercise", "softmax", "--csv", "/missing/g.csv"], ["--csv", "/missing does not exist"]),
    (["check", "softmax", "x.py", "--timeout", "-1"], ["--timeout", "above 0, got -1"]),
    (["grade", "x.py", "--exercise", "softmax", "--timeout", "nan"], ["--timeout", "above 0, got nan"]),
])
def test_bad_arguments_are_refused_before_any_work(console_script, args, words):
    start = time.perf_counter()
    done = subprocess.run([console_script, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    for word in words:
        assert word in done.stderr, done.stderr
    assert time.perf_counter() - start < 20  # refused while parsing: the quick bench alone takes longer


def test_an_unknown_example_suggests_close_ids_and_the_listing_command(console_script):
    done = subprocess.run([console_script, "examples", "fund-sdpa-example"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2
    assert "did you mean fund.sdpa-example" in done.stderr and "`attention-edu examples` lists all" in done.stderr
    assert "ids()" not in done.stderr  # a command, not a Python function


def test_bench_help_is_plain_text(console_script):
    done = subprocess.run([console_script, "bench", "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "``" not in done.stdout and ":mod:" not in done.stdout


def test_an_output_path_that_is_not_a_regular_file_is_refused_and_left_as_it_was(tmp_path, console_script):
    """Every output is written beside its path and renamed over it, so a device or a FIFO given as the output
    would be replaced by a regular file (`--csv /dev/null` as root did that to the machine's /dev/null).
    A FIFO stands in for the device; written_atomically refuses it too, for callers without output_path."""
    from attention_edu.arguments import written_atomically

    os.mkfifo(tmp_path / "pipe.md")
    done = subprocess.run([console_script, "examples", "--errata-md", str(tmp_path / "pipe.md")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "is not a regular file" in done.stderr and "Traceback" not in done.stderr
    with pytest.raises(OSError, match="not a regular file"):
        with written_atomically(tmp_path / "pipe.md") as partial:
            partial.write_text("rows")
    assert stat.S_ISFIFO(os.stat(tmp_path / "pipe.md").st_mode) and sorted(os.listdir(tmp_path)) == ["pipe.md"]
