"""The root conftest's ``quiet`` marker: under pytest-xdist, a quiet test runs while no other test
runs, and it is not starved by a stream of tests on the other workers. Checked on a suite of its
own, run by pytest in a subprocess with this project's conftest.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SUITE = '''
import json, os, time
import pytest

def record(name, seconds):
    start = time.time()
    time.sleep(seconds)
    with open(os.environ["INTERVALS"], "a") as out:
        out.write(json.dumps([name, start, time.time()]) + "\\n")

@pytest.mark.parametrize("k", range(8))
def test_busy_{file}(k):
    record("busy", 0.2)
'''

QUIET = '''
import pytest
from test_busy_0 import record

def test_nothing_first():
    record("busy", 0.2)

@pytest.mark.quiet
def test_quiet():
    record("quiet", 1.0)
'''


def run_suite(tmp_path: Path, marked: bool) -> list:
    """[name, start, end] of every test of the suite, run on four workers with this project's conftest.py."""
    shutil.copy(ROOT / "conftest.py", tmp_path / "conftest.py")
    for k in range(3):
        (tmp_path / f"test_busy_{k}.py").write_text(SUITE.replace("{file}", str(k)))
    (tmp_path / "test_quiet_one.py").write_text(QUIET if marked else QUIET.replace("@pytest.mark.quiet\n", ""))
    intervals = tmp_path / "intervals.jsonl"
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "xdist", "-p", "no:cacheprovider", "-n", "4",
                           "--dist", "loadfile", "--rootdir", str(tmp_path), str(tmp_path)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "INTERVALS": str(intervals), "PYTHONPATH": str(tmp_path),
                               "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})       # xdist alone: a quick start
    assert done.returncode == 0, done.stdout + done.stderr
    return [json.loads(line) for line in intervals.read_text().splitlines()]


def overlapping(rows: list) -> list:
    """The other tests that ran while the quiet one did."""
    (quiet,) = [r for r in rows if r[0] == "quiet"]
    return [r for r in rows if r[0] == "busy" and r[1] < quiet[2] and quiet[1] < r[2]]


def test_a_quiet_test_runs_alone_under_xdist_and_is_not_starved(tmp_path):
    rows = run_suite(tmp_path, marked=True)
    assert len(rows) == 26 and overlapping(rows) == [], overlapping(rows)
    (quiet,) = [r for r in rows if r[0] == "quiet"]
    assert any(r[1] >= quiet[2] for r in rows), "the other workers' tests all ran first: the quiet one starved"
    assert not list(Path(tempfile.gettempdir()).glob("attention-edu-quiet-*/requests/gw*")), "a request was left"


def test_without_the_marker_the_same_suite_overlaps(tmp_path):
    """The check above can fail: unmarked, the same test runs beside the others."""
    assert overlapping(run_suite(tmp_path, marked=False)) != []
