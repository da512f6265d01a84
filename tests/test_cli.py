"""The command line's edges: --version, and output into a pipe whose reader stopped early."""

from __future__ import annotations

import subprocess

import attention_edu as ae


def test_version_prints_the_package_version(console_script):
    done = subprocess.run([console_script, "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == f"attention-edu {ae.__version__}"


def test_output_into_a_closed_pipe_ends_quietly(console_script):
    """`attention-edu examples --json | head -1`: the reader closes the pipe after one line (of 3 MB)."""
    done = subprocess.run(f"'{console_script}' examples --json | head -1; exit ${{PIPESTATUS[0]}}", shell=True,
                          executable="/bin/bash", capture_output=True, text=True, timeout=120)
    assert done.stdout.count("\n") == 1
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    assert done.returncode == 0
