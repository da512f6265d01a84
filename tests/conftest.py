"""Shared test configuration: a quick hypothesis profile, a seeded generator, the backend matrix,
the notebook readers and the sandbox tests' :func:`ipc_left` and :func:`processes_with` (``from
tests.conftest import load_notebook, ipc_left``: pytest registers this module as ``tests.conftest``).

Tests may import NumPy freely; only the library is restricted to attention_edu/backend.py.
"""

from __future__ import annotations

import ctypes
import json
import os
import pathlib
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

from attention_edu.backend import Backend, cupy_if_available, numpy_backend

# Small, fast property tests: no per-example deadline (the first call of a
# function pays for imports), and a modest number of examples per property.
settings.register_profile(
    "attention_edu", deadline=None, max_examples=50, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("attention_edu")


@pytest.fixture
def rng() -> np.random.Generator:
    """A fresh generator with a fixed seed, so every test sees the same numbers."""
    return np.random.default_rng(20240607)


def _strict(device: str, dtype: str) -> Backend:
    array_api_strict = pytest.importorskip("array_api_strict")
    return Backend(array_api_strict, array_api_strict.Device(device), dtype)


def _cupy(dtype: str) -> Backend:
    return Backend(cupy_if_available(), None, dtype)


def _torch(dtype: str) -> Backend:
    torch = pytest.importorskip("torch")
    return Backend(torch, torch.device("cpu"), dtype)


_NEEDS_GPU = [
    pytest.mark.gpu,
    pytest.mark.skipif(cupy_if_available() is None, reason="needs CuPy and a CUDA device"),
]

#: Every place the library must run: (id, factory, marks). PyTorch tensors (CPU) go
#: through array-api-compat like CuPy arrays do. array_api_strict's
#: "device1" simulates an accelerator that refuses silent trips through NumPy;
#: "no_float64" simulates a float32-only device (like Apple's MPS).
BACKENDS = [
    ("numpy-float64", lambda: numpy_backend("float64"), []),
    ("numpy-float32", lambda: numpy_backend("float32"), []),
    ("strict-cpu-float64", lambda: _strict("CPU_DEVICE", "float64"), []),
    ("strict-cpu-float32", lambda: _strict("CPU_DEVICE", "float32"), []),
    ("strict-device1-float64", lambda: _strict("device1", "float64"), []),
    ("strict-device1-float32", lambda: _strict("device1", "float32"), []),
    ("strict-no_float64-float32", lambda: _strict("no_float64", "float32"), []),
    ("torch-cpu-float64", lambda: _torch("float64"), [pytest.mark.torch]),
    ("torch-cpu-float32", lambda: _torch("float32"), [pytest.mark.torch]),
    ("cupy-float64", lambda: _cupy("float64"), _NEEDS_GPU),
    ("cupy-float32", lambda: _cupy("float32"), _NEEDS_GPU),
]


@pytest.fixture(params=[pytest.param(make, id=name, marks=marks) for name, make, marks in BACKENDS])
def backend(request) -> Backend:
    """Each backend of the matrix in turn (CuPy ones skip without a GPU)."""
    return request.param()


@pytest.fixture
def calls_inline(monkeypatch):
    """A notebook's checks run each call in this process instead of a fork: the same verdict, hint and report
    (``tests/checkers/test_checkers.py::test_a_forked_and_an_inline_check_agree_on_every_exercise``) without a fork
    per probe, which is most of the time of the modules of many checks that use it."""
    from attention_edu.checkers.judge.harness import START_METHOD_ENV
    monkeypatch.setenv(START_METHOD_ENV, "inline")


@pytest.fixture(scope="session")
def console_script():
    """The installed ``attention-edu`` script of the running environment.

    Looked up beside the interpreter, not on PATH: CI runs ``.venv/bin/python -m pytest``
    without activating the environment.
    """
    script = pathlib.Path(sys.executable).parent / "attention-edu"
    assert script.exists(), f"{script} is missing: install the package (pip install -e .)"
    return str(script)


@pytest.fixture(scope="session")
def site(tmp_path_factory, worker_id) -> pathlib.Path:
    """The documentation site, built once per run with ``-W`` (warnings are errors): under pytest-xdist the first
    worker that asks builds it in the run's shared temporary folder while the others wait (xdist's own recipe)."""
    import fcntl
    import subprocess

    docs = pathlib.Path(__file__).resolve().parents[1] / "docs"
    shared = tmp_path_factory.getbasetemp() if worker_id == "master" else tmp_path_factory.getbasetemp().parent
    out = shared / "site" / "html"
    with open(shared / "site.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (shared / "site" / "built").exists():
            result = subprocess.run(
                [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(docs), str(out)],
                capture_output=True, text=True, timeout=600,
            )
            assert result.returncode == 0, result.stderr[-4000:]
            (shared / "site" / "built").touch()
    return out


NOTEBOOKS = pathlib.Path(__file__).resolve().parents[1] / "notebooks"


def load_notebook(relative: str) -> dict:
    """The JSON of ``notebooks/<relative>`` (e.g. ``"exercises/01_softmax_and_masks.ipynb"``)."""
    return json.loads((NOTEBOOKS / relative).read_text(encoding="utf-8"))


def cell_source(cell: dict) -> str:
    """A cell's source as one string (nbformat stores a string or a list of lines)."""
    source = cell.get("source", "")
    return source if isinstance(source, str) else "".join(source)


def cell_output_text(cell: dict, mimes: tuple[str, ...] = ("text/plain", "text/html")) -> str:
    """What a code cell's stored outputs show as text: streams, then the given MIME types."""
    parts = []
    for out in cell.get("outputs", []):
        if "text" in out:
            parts.append(cell_source({"source": out["text"]}))
        for mime in mimes:
            if mime in out.get("data", {}):
                parts.append(cell_source({"source": out["data"][mime]}))
    return "\n".join(parts)


#: A correct softmax over the last axis (a fully masked row comes out as zeros), as submitted.
SOFTMAX_SOURCE = '''
import numpy as np

def softmax(x):
    top = np.max(x, axis=-1, keepdims=True)
    e = np.exp(x - np.where(np.isfinite(top), top, 0.0))
    total = np.sum(e, axis=-1, keepdims=True)
    return e / np.where(total > 0, total, 1.0)
'''


@pytest.fixture(scope="session")
def softmax_source() -> str:
    """The source of a correct softmax submission (:data:`SOFTMAX_SOURCE`)."""
    return SOFTMAX_SOURCE


def processes_with(marker: str) -> list[int]:
    """Pids whose command line holds ``marker`` (forked children inherit the command line)."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            if marker.encode() in pathlib.Path(f"/proc/{entry}/cmdline").read_bytes():
                found.append(int(entry))
        except OSError:
            continue
    return found


def ipc_left(key: int, queue: str, remove: bool) -> list[str]:
    """The System V objects of ``key`` and the message queue ``queue`` that exist outside (removed if asked)."""
    libc, left = ctypes.CDLL(None, use_errno=True), []
    for kind, get, drop in (("shm", lambda: libc.shmget(key, 0, 0), lambda i: libc.shmctl(i, 0, None)),
                            ("msg", lambda: libc.msgget(key, 0), lambda i: libc.msgctl(i, 0, None)),
                            ("sem", lambda: libc.semget(key, 0, 0), lambda i: libc.semctl(i, 0, 0))):
        if (ident := get()) >= 0:                               # IPC_RMID is 0 for all three
            left.append(kind)
            if remove:
                drop(ident)
    if (mq := libc.mq_open(queue.encode(), os.O_RDONLY)) >= 0:
        left.append("mq")
        os.close(mq)
        if remove:
            libc.mq_unlink(queue.encode())
    return left
