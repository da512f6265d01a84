"""Ctrl-C in a long command: one line on stderr, exit 130, no file left behind (a real SIGINT)."""

from __future__ import annotations

import signal
import subprocess
import threading
import time

import pytest


def _interrupt_once_started(argv: list[str], started: str, cwd) -> tuple[int, str]:
    """Run ``argv``; when its stderr shows ``started``, wait a second and send SIGINT."""
    process = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    chunks: list[str] = []
    reader = threading.Thread(target=lambda: chunks.extend(iter(lambda: process.stderr.read(1), "")))
    reader.start()
    deadline = time.monotonic() + 120
    while started not in "".join(chunks):
        assert process.poll() is None, f"ended before it started: {''.join(chunks)}"
        assert time.monotonic() < deadline, "never started"
        time.sleep(0.1)
    time.sleep(1.0)
    process.send_signal(signal.SIGINT)
    code = process.wait(timeout=60)
    reader.join(timeout=10)
    process.stdout.close()
    return code, "".join(chunks)


@pytest.mark.parametrize("command, started", [
    (["train", "--out", "m.npz"], "reverse/bahdanau"),  # the progress bar has appeared
    (["bench", "--plot", "b.png"], "bench"),
])
def test_ctrl_c_ends_in_one_line_with_exit_130_and_writes_nothing(console_script, tmp_path, command, started):
    code, stderr = _interrupt_once_started([console_script, *command], started, tmp_path)
    assert code == 130, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    last = stderr.replace("\r", "\n").strip().splitlines()[-1]
    assert last == f"attention-edu {command[0]}: interrupted (Ctrl-C)", stderr
    assert list(tmp_path.iterdir()) == []  # no model, no plot, no partial file
