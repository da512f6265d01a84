"""Calling a student's function safely: in a child process, on copies of its inputs.

Every call of a student's function runs in a child process of its own (see
:mod:`.isolation` for the limits and the fork/spawn difference). The inputs go
in (inherited on fork, pickled on spawn); the result comes back as plain data:
the returned value with arrays of any backend converted to NumPy, or the
exception as an :class:`ErrorInfo`, plus NumPy's warnings, the names of the
arguments the function changed in place, and what it printed. Whatever the
function does -- ``os._exit``, ``sys.exit``, a segfault, an endless loop in C,
a memory bomb, changes to NumPy's error or print options, monkeypatched modules
-- ends with that child: the caller (the command line or a notebook kernel)
survives, gets an :class:`Outcome`, and the next call starts from the caller's
untouched state.
"""

from __future__ import annotations

import copy
import functools
import dataclasses
import pickle
import time
import traceback
import warnings
import signal
from dataclasses import dataclass, field
from typing import Any, Callable

from ...backend import host_numpy as np
from ...backend import to_numpy
from .protocol import plain
from .isolation import OUTPUT_LIMIT, START_METHOD_ENV, run_isolated, start_method, unlimit_memory

__all__ = ["Outcome", "ErrorInfo", "call", "DEFAULT_TIMEOUT", "DEFAULT_MEMORY_MB", "OUTPUT_LIMIT",
           "START_METHOD_ENV", "start_method", "student_line"]

#: Seconds one call of the student's function may take.
DEFAULT_TIMEOUT = 3.0
#: Megabytes of address space a call may add to what its process inherited.
DEFAULT_MEMORY_MB = 1024
#: How a child ended by a signal is told to the student (signal names, as some are POSIX only).
_SIGNALS = {"SIGSEGV": "crashed with a segmentation fault (it touched memory it does not own)",
            "SIGABRT": "crashed: it aborted (SIGABRT)", "SIGBUS": "crashed with a bus error (SIGBUS)",
            "SIGFPE": "crashed with a floating-point exception (SIGFPE)",
            "SIGKILL": "was killed by SIGKILL (it killed itself, or the system stopped it, for instance "
                       "for using too much memory)"}


@dataclass(frozen=True)
class ErrorInfo:
    """An exception raised in the child, described in plain data (it crossed a process boundary).

    Examples
    --------
    >>> info = ErrorInfo.of(ValueError("bad"))
    >>> info.type_name, info.message, info.is_a("Exception"), info.is_a("TypeError")
    ('ValueError', 'bad', True, False)
    """

    type_name: str
    message: str
    bases: tuple[str, ...] = ()
    line: str = ""

    @classmethod
    def of(cls, error: BaseException) -> ErrorInfo:
        try:
            message = str(error)
        except Exception:  # a student's exception whose __str__ fails
            message = f"<{type(error).__name__}>"
        bases = tuple(k.__name__ for k in type(error).__mro__)
        return cls(type(error).__name__, message[:4000], bases, student_line(error))

    def is_a(self, name: str) -> bool:
        """True when the exception's class, or one of its bases, is called ``name``."""
        return name in self.bases


@dataclass
class Outcome:
    """What happened when the function was called once."""

    value: Any = None
    error: ErrorInfo | None = None
    timed_out: bool = False
    ended: str = ""                  # how the child ended abnormally, in a student's words
    ended_id: str | None = None      # the hint id for that ending
    printed: str = ""
    printed_bytes: int = 0
    warnings: list[str] = field(default_factory=list)
    mutated: list[str] = field(default_factory=list)   # names of arguments changed in place
    seconds: float = 0.0
    isolated: bool = True

    @property
    def ok(self) -> bool:
        return self.error is None and not self.timed_out and not self.ended


def _same(a: Any, b: Any) -> bool:
    """Exact equality of an input before and after the call (NaN equals NaN)."""
    if isinstance(a, np.ndarray):
        same_kind = isinstance(b, np.ndarray) and a.shape == b.shape and a.dtype == b.dtype
        return same_kind and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    try:
        return bool(a == b)
    except Exception:  # objects without a truthful ==
        return True


def _run(fn: Callable, args: tuple, names: tuple[str, ...]) -> dict:
    """Call ``fn`` on copies of ``args``; everything the caller needs, as plain data."""
    copies = copy.deepcopy(args)
    report: dict[str, Any] = {}
    with np.errstate(divide="warn", over="warn", invalid="warn", under="ignore"), \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        try:
            report["value"] = fn(*copies)
        except BaseException as err:  # student code may even call sys.exit()
            if isinstance(err, MemoryError):
                unlimit_memory()
            report["error"] = ErrorInfo.of(err)
            err.__traceback__ = None
        report["seconds"] = time.perf_counter() - start
        report["warnings"] = list(dict.fromkeys(f"{w.category.__name__}: {w.message}" for w in caught))
    report["mutated"] = [name for name, a, c in zip(names, args, copies) if not _same(a, c)]
    unlimit_memory()
    report["value"] = plain(report.get("value"))       # a subclass or an object: described, not sent
    if "error" in report:
        report["error"] = dataclasses.asdict(report["error"])
    return report


def ending(exitcode: int | None) -> tuple[str, str]:
    """(words, hint id) for a child that ended without reporting."""
    if exitcode is not None and exitcode >= 0:
        return (f"ended the process with os._exit({exitcode}) (or another hard exit) instead of "
                f"returning", "harness.exit")
    try:
        name = signal.Signals(-exitcode).name
    except (TypeError, ValueError):
        name = str(exitcode)
    return _SIGNALS.get(name, f"was ended by signal {name}"), "harness.crash"


def _inline(fn: Callable, args: tuple, names: tuple[str, ...]) -> Outcome:
    """Last resort (spawn platforms, unpicklable function): call in this process, no protection."""
    report = _run(fn, args, names)
    if "error" in report:
        report["error"] = ErrorInfo(**{**report["error"], "bases": tuple(report["error"]["bases"])})
    return Outcome(value=report.get("value"), error=report.get("error"), warnings=report["warnings"],
                   mutated=report["mutated"], seconds=report["seconds"], isolated=False)


def call(fn: Callable, args: tuple, names: tuple[str, ...], timeout: float = DEFAULT_TIMEOUT,
         memory_mb: float | None = DEFAULT_MEMORY_MB) -> Outcome:
    """Call ``fn(*copies of args)`` in a child process with a hard time and memory limit.

    Parameters
    ----------
    fn : callable
        The student's function.
    args : tuple
        Positional arguments; the function receives deep copies.
    names : tuple of str
        The arguments' names, used to report which one was modified.
    timeout : float
        Seconds before the child is killed.
    memory_mb : float or None
        Megabytes the child's address space may grow by (None: no limit).

    Examples
    --------
    >>> outcome = call(lambda x: x * 2, (3,), ("x",))
    >>> outcome.value, outcome.ok
    (6, True)
    >>> call(lambda: print("hi"), (), ()).printed
    'hi\\n'
    >>> import os
    >>> call(lambda: os._exit(0), (), ()).ended_id
    'harness.exit'
    """
    method = start_method()
    if method == "inline":
        return _inline(fn, args, names)
    if method == "spawn":
        try:
            pickle.dumps((fn, args))
        except Exception:
            return _inline(fn, args, names)
    ended = run_isolated(functools.partial(_run, fn, args, names), timeout, memory_mb, method)
    printed, size = ended.printed, ended.printed_bytes
    if ended.timed_out or ended.report is None:
        words, hint_id = ("", None) if ended.timed_out else ending(ended.exitcode)
        return Outcome(timed_out=ended.timed_out, ended=words, ended_id=hint_id,
                       printed=printed, printed_bytes=size, seconds=ended.seconds)
    report = ended.report
    error = report.get("error") and ErrorInfo(**{**report["error"], "bases": tuple(report["error"]["bases"])})
    if error is not None and error.is_a("MemoryError"):
        limit = f"more than the {memory_mb:g} MB a call may use" if memory_mb else "more than the machine has"
        return Outcome(error=error, ended=f"ran out of memory (MemoryError): it asked for {limit}",
                       ended_id="harness.memory", printed=printed, printed_bytes=size,
                       seconds=report["seconds"])
    return Outcome(value=report.get("value"), error=error, printed=printed, printed_bytes=size,
                   warnings=report["warnings"], mutated=report["mutated"], seconds=report["seconds"])


def student_line(error: BaseException) -> str:
    """The last line of the traceback that lies outside NumPy and this package, or ""."""
    frames = traceback.extract_tb(error.__traceback__)
    mine = [f for f in frames
            if "numpy" not in f.filename.replace("\\", "/").split("/")
            and "attention_edu" not in f.filename.replace("\\", "/").split("/")
            and "multiprocessing" not in f.filename.replace("\\", "/").split("/")]
    if not mine:
        return ""
    frame = mine[-1]
    code = f": {frame.line.strip()}" if frame.line else ""
    return f"line {frame.lineno} in {frame.name}{code}"
