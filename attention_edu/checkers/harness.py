"""Running a student's function safely: copies of the inputs, a time limit, captured prints.

Each call runs in a daemon worker thread. The caller waits at most
``timeout`` seconds; code that is still running after that is asked to stop
(an asynchronous exception, which interrupts pure-Python loops) and reported
as "did not finish", while the notebook carries on. The function receives
deep copies of the inputs, and the copies are compared with the originals
afterwards, so in-place changes are detected rather than silently corrupting
the next probe. Prints go to a buffer; NumPy floating-point warnings (overflow
in ``exp`` and the like) are recorded, not raised.
"""

from __future__ import annotations

import copy
import ctypes
import sys
import threading
import time
import traceback
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

from ..backend import host_numpy as np

__all__ = ["Outcome", "call", "DEFAULT_TIMEOUT", "student_line"]

#: Seconds one call of the student's function may take.
DEFAULT_TIMEOUT = 3.0


class _Stop(BaseException):
    """Injected into a worker thread that ran past its time limit."""


@dataclass
class Outcome:
    """What happened when the function was called once."""

    value: Any = None
    error: BaseException | None = None
    timed_out: bool = False
    printed: str = ""
    warnings: list[str] = field(default_factory=list)
    mutated: list[str] = field(default_factory=list)   # names of arguments changed in place
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None and not self.timed_out


class _ThreadRouter:
    """A stand-in for ``sys.stdout``/``sys.stderr``: the worker's writes go to a buffer."""

    def __init__(self, original: Any, worker: threading.Thread, sink: list[str]):
        self._original, self._worker, self._sink = original, worker, sink

    def write(self, text: str) -> int:
        if threading.current_thread() is self._worker:
            self._sink.append(text)
            return len(text)
        return self._original.write(text)

    def flush(self) -> None:
        if threading.current_thread() is not self._worker:
            self._original.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._original, name)


def _same(a: Any, b: Any) -> bool:
    """Exact equality of an input before and after the call (NaN equals NaN)."""
    if isinstance(a, np.ndarray):
        if not isinstance(b, np.ndarray) or a.shape != b.shape or a.dtype != b.dtype:
            return False
        if a.dtype.kind in "fc":
            return bool(np.array_equal(a, b, equal_nan=True))
        return bool(np.array_equal(a, b))
    try:
        return bool(a == b)
    except Exception:  # objects without a truthful ==
        return True


def _stop(thread: threading.Thread) -> None:
    """Ask a runaway worker to stop (works between Python bytecodes, not inside C calls)."""
    ident = thread.ident
    if ident is not None and thread.is_alive():
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(_Stop))


def call(fn: Callable, args: tuple, names: tuple[str, ...], timeout: float = DEFAULT_TIMEOUT) -> Outcome:
    """Call ``fn(*copies of args)`` in a worker thread with a time limit.

    Parameters
    ----------
    fn : callable
        The student's function.
    args : tuple
        Positional arguments; each is deep-copied before the call.
    names : tuple of str
        The arguments' names, used to report which one was modified.
    timeout : float
        Seconds to wait before giving up on the call.

    Examples
    --------
    >>> outcome = call(lambda x: x * 2, (3,), ("x",))
    >>> outcome.value, outcome.ok
    (6, True)
    >>> call(lambda: print("hi"), (), ()).printed
    'hi\\n'
    """
    copies = tuple(copy.deepcopy(a) for a in args)
    box: dict[str, Any] = {}
    printed: list[str] = []

    def work() -> None:
        try:
            with np.errstate(divide="warn", over="warn", invalid="warn", under="ignore"), warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    box["value"] = fn(*copies)
                except _Stop:
                    return
                except BaseException as err:  # student code may even call sys.exit()
                    box["error"] = err
                box["warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught]
        except _Stop:
            return

    worker = threading.Thread(target=work, name="attention-edu-check", daemon=True)
    saved = sys.stdout, sys.stderr
    sys.stdout = _ThreadRouter(saved[0], worker, printed)
    sys.stderr = _ThreadRouter(saved[1], worker, printed)
    start = time.perf_counter()
    try:
        worker.start()
        worker.join(timeout)
    finally:
        sys.stdout, sys.stderr = saved
    seconds = time.perf_counter() - start
    if worker.is_alive():
        _stop(worker)
        return Outcome(timed_out=True, printed="".join(printed), seconds=seconds)
    mutated = [name for name, a, c in zip(names, args, copies) if not _same(a, c)]
    return Outcome(value=box.get("value"), error=box.get("error"), printed="".join(printed),
                   warnings=list(dict.fromkeys(box.get("warnings", []))), mutated=mutated,
                   seconds=seconds)


def student_line(error: BaseException) -> str:
    """The last line of the traceback that lies outside NumPy and this package, or ""."""
    frames = traceback.extract_tb(error.__traceback__)
    mine = [f for f in frames
            if "numpy" not in f.filename.replace("\\", "/").split("/")
            and "attention_edu" not in f.filename.replace("\\", "/").split("/")]
    if not mine:
        return ""
    frame = mine[-1]
    code = f": {frame.line.strip()}" if frame.line else ""
    return f"line {frame.lineno} in {frame.name}{code}"
