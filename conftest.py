"""A test marked ``quiet`` runs while no other test runs, even under pytest-xdist.

The suite runs on four workers (most of the judge's tests wait on child interpreters and time
limits, not on the cores), so a wall-clock target measured beside three busy workers would
measure the load, not the code. Every test of a worker holds a shared ``flock`` on one file
for the run; a ``quiet`` test first leaves its worker's name in a folder of requests, so that
no test starts meanwhile, then takes the lock exclusively once the running tests end.
(``flock`` alone would let a stream of shared holders starve the exclusive one.)

Run in one process (``-n 0``) there is nobody to wait for, and nothing is locked.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest


_FOLDER = "ATTENTION_EDU_QUIET"  # the run's lock and requests, made by the controller, inherited by its workers


def pytest_configure(config):
    config.addinivalue_line("markers", "quiet: a wall-clock target; runs while no other test runs (conftest.py)")
    if hasattr(config, "workerinput"):                # a worker: the controller made the folder
        return
    os.environ.pop(_FOLDER, None)                     # a pytest run by a test has its own workers, or none
    if config.pluginmanager.hasplugin("xdist") and config.getoption("numprocesses"):
        folder = Path(tempfile.mkdtemp(prefix="attention-edu-quiet-"))
        (folder / "requests").mkdir()
        os.environ[_FOLDER] = str(folder)


def pytest_unconfigure(config):
    if not hasattr(config, "workerinput") and _FOLDER in os.environ:
        shutil.rmtree(os.environ.pop(_FOLDER), ignore_errors=True)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if _FOLDER not in os.environ:
        yield
        return
    lock, requests = Path(os.environ[_FOLDER]) / "lock", Path(os.environ[_FOLDER]) / "requests"
    quiet = item.get_closest_marker("quiet") is not None
    request = requests / os.environ.get("PYTEST_XDIST_WORKER", "main")
    if quiet:
        request.touch()
    else:
        while any(requests.iterdir()):                # a quiet test is waiting or running: do not start
            time.sleep(0.05)
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX if quiet else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
            if quiet:
                request.unlink()
