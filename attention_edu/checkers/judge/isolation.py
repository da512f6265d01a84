"""Running a job in a child process: a hard time limit, a memory limit, captured output.

:func:`run_isolated` runs a zero-argument job in a child process and returns its report (plain
data, see :mod:`.protocol`), or how the child ended without one. Limits: the wall clock (the
child is killed); the address space (``RLIMIT_AS``: what the child inherited plus ``memory_mb``,
a guard against accidents, not a sandbox); the output (stdout and stderr go to a file of which
:data:`OUTPUT_LIMIT` bytes are kept); no input. On POSIX systems but macOS the child is an
``os.fork()`` (milliseconds; it inherits lambdas and notebook functions); elsewhere it is
``spawn``-ed (pickled job, importable functions only). ``ATTENTION_EDU_START_METHOD=fork|spawn|inline``
overrides the choice.
"""

from __future__ import annotations

import builtins
import multiprocessing
import os
import select
import signal
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable

from . import protocol

try:
    import resource
except ImportError:  # Windows: no resource limits, the time limit still holds
    resource = None

__all__ = ["Ended", "run_isolated", "start_method", "unlimit_memory", "OUTPUT_LIMIT", "START_METHOD_ENV"]

_exit = os._exit      # kept: a student may replace os._exit, and the child must still end here
OUTPUT_LIMIT = 64_000      # bytes of a call's printed output that are kept
_SPAWN_STARTUP = 20.0      # seconds a spawned child may take to start before its time limit begins
#: Environment variable choosing how children start: fork, spawn or inline.
START_METHOD_ENV = "ATTENTION_EDU_START_METHOD"


def start_method() -> str:
    """``"fork"``, ``"spawn"`` or ``"inline"``: how the next call will start its child."""
    chosen = os.environ.get(START_METHOD_ENV, "").strip().lower()
    if chosen in ("fork", "spawn", "inline"):
        return chosen
    forkable = "fork" in multiprocessing.get_all_start_methods() and sys.platform != "darwin"
    return "fork" if forkable else "spawn"


@dataclass
class Ended:
    """What became of an isolated job."""

    report: Any = None               # what the job returned, or None
    timed_out: bool = False
    exitcode: int | None = None      # the child's exit status; -N when signal N ended it
    printed: str = ""
    printed_bytes: int = 0
    seconds: float = 0.0


class _CappedWriter:
    """``sys.stdout``/``sys.stderr`` in the child: writes to a file descriptor, up to a byte budget."""

    def __init__(self, fd: int, budget: int):
        self.fd, self.budget, self.written = fd, budget, 0

    def write(self, text: str) -> int:
        text = str(text)
        room = self.budget - self.written
        if room > 0:
            try:
                os.write(self.fd, text[:room].encode("utf-8", "replace"))
            except OSError:
                pass
        self.written += len(text)
        return len(text)

    def flush(self) -> None:
        pass


def _limit_memory(memory_mb: float | None) -> None:
    """Cap the address space at what the child has now plus ``memory_mb``; cap the output file."""
    if resource is None or not os.path.exists("/proc/self/statm"):
        return                                     # only where the current size can be read
    with open("/proc/self/statm") as statm:
        now = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    for which, cap in ((resource.RLIMIT_AS, now + int(memory_mb * 2**20) if memory_mb else None),
                       (resource.RLIMIT_FSIZE, 4 * OUTPUT_LIMIT + 2**20)):
        hard = resource.getrlimit(which)[1]
        if cap is not None and (hard == resource.RLIM_INFINITY or cap < hard):
            resource.setrlimit(which, (cap, hard))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)      # an over-long write fails instead of killing


def unlimit_memory() -> None:
    """Lift the soft address-space limit again (reporting a MemoryError needs some memory)."""
    if resource is not None:
        resource.setrlimit(resource.RLIMIT_AS, (resource.getrlimit(resource.RLIMIT_AS)[1],) * 2)


def _child(writer: Any, job: Callable[[], Any], out_path: str, memory_mb: float | None) -> None:
    """The child's whole life: captured output, limits, the job, its report down the pipe."""
    for fd, path, flags in ((0, os.devnull, os.O_RDONLY), (1, out_path, os.O_WRONLY | os.O_APPEND)):
        os.dup2(os.open(path, flags), fd)                  # no input; output to the capture file
    os.dup2(1, 2)
    sys.stdout = sys.stderr = _CappedWriter(1, OUTPUT_LIMIT)
    sys.stdin = open(os.devnull)                           # input() ends at once, notebook kernel or not
    builtins.input = _no_input
    _limit_memory(memory_mb)
    report = job()
    unlimit_memory()
    writer.send_bytes(protocol.encode(report))       # plain data only: the parent never unpickles
    writer.close()
    if sys.stdout.written > OUTPUT_LIMIT:
        os.write(1, f"\n[... {sys.stdout.written - OUTPUT_LIMIT:,} more bytes not kept]\n".encode())


def _no_input(prompt: str = "") -> str:
    raise EOFError("input() is not available while your function is checked: take values as arguments")


class _PipeWriter:
    """The child's end of a plain pipe, with the ``send_bytes`` of a multiprocessing Connection."""

    def __init__(self, fd: int):
        self.fd = fd

    def send_bytes(self, data: bytes) -> None:
        view = memoryview(len(data).to_bytes(8, "little") + data)
        while view:
            view = view[os.write(self.fd, view):]

    def close(self) -> None:
        os.close(self.fd)


def _read_report(fd: int, deadline: float) -> tuple[bytes | None, bool]:
    """(payload or None, timed out) from a child's pipe: a length, then the plain-data report (see .protocol)."""
    data = bytearray()
    while len(data) < 8 or len(data) < 8 + int.from_bytes(data[:8], "little"):
        left = deadline - time.perf_counter()
        if left <= 0:
            return None, True
        if select.select([fd], [], [], left)[0]:
            chunk = os.read(fd, 1 << 20)
            if not chunk:                          # the child ended without a full report
                return None, False
            data += chunk
            if int.from_bytes(data[:8], "little") > protocol.MAX_FRAME:   # past the cap: no report
                return None, False
    return bytes(data[8:]), False


def _fork(job: tuple, timeout: float) -> tuple[tuple | None, bool, int | None, float]:
    """Run the job in ``os.fork()``-ed child: (report, timed out, exit code, seconds)."""
    read_end, write_end = os.pipe()
    with warnings.catch_warnings():
        # Python 3.12+ warns that fork() in a multi-threaded process (a notebook kernel) may deadlock
        # the child; it only runs the student's code, and a deadlock would end as a timeout.
        warnings.filterwarnings("ignore", message=r".*fork\(\) may lead to deadlocks",
                                category=DeprecationWarning)
        start = time.perf_counter()
        pid = os.fork()
    if pid == 0:                                   # the child: never returns
        try:
            os.close(read_end)
            _child(_PipeWriter(write_end), *job)
        except BaseException:
            _exit(70)
        _exit(0)
    os.close(write_end)
    try:
        payload, timed_out = _read_report(read_end, start + timeout)
    finally:
        os.close(read_end)
    seconds = time.perf_counter() - start
    exitcode = _reap(pid, 1.0 if payload is not None else 0.05 if not timed_out else 0.0)
    return payload, timed_out, exitcode, seconds


def _reap(pid: int, grace: float) -> int:
    """Wait up to ``grace`` seconds for the child to end, then kill it; its exit code (-signal if killed)."""
    deadline, pause = time.perf_counter() + grace, 0.0001
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.perf_counter() >= deadline:
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
            return os.waitstatus_to_exitcode(status)
        time.sleep(pause)
        pause = min(2 * pause, 0.01)


def _spawn(job: tuple, timeout: float) -> tuple[tuple | None, bool, int | None, float]:
    """Run the job in a spawned interpreter (multiprocessing): (report, timed out, exit code, seconds)."""
    context = multiprocessing.get_context("spawn")
    reader, writer = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(writer,) + job, daemon=True)
    start, report = time.perf_counter(), None
    with reader:
        child.start()
        writer.close()
        answered = reader.poll(timeout + _SPAWN_STARTUP)      # the child first imports the package
        try:
            report = reader.recv_bytes() if answered else None
        except (EOFError, OSError):                          # it ended without reporting
            pass
        seconds = time.perf_counter() - start
    child.join(1.0 if answered else 0.0)
    if child.is_alive():
        child.kill()
    child.join()
    return report, not answered, child.exitcode, seconds


def run_isolated(job: Callable[[], Any], timeout: float, memory_mb: float | None,
                 method: str | None = None) -> Ended:
    """Run ``job()`` in a child process (``method``: "fork" or "spawn", default :func:`start_method`).

    Examples
    --------
    >>> run_isolated(lambda: 6 * 7, timeout=5, memory_mb=None).report
    42
    >>> import os
    >>> ended = run_isolated(lambda: os._exit(3), timeout=5, memory_mb=None)
    >>> ended.report, ended.exitcode
    (None, 3)
    """
    method = method or start_method()
    handle, out_path = tempfile.mkstemp(prefix="attention-edu-out-")
    os.close(handle)
    try:
        run = _fork if method == "fork" else _spawn
        payload, timed_out, exitcode, seconds = run((job, out_path, memory_mb), timeout)
        with open(out_path, "rb") as handle:
            printed = handle.read(OUTPUT_LIMIT + 200).decode("utf-8", "replace")
        size = os.path.getsize(out_path)
    finally:
        os.unlink(out_path)
    try:
        report = protocol.decode(payload) if payload is not None else None
    except protocol.ProtocolError:                   # a child that sent garbage ended without a report
        report = None
    return Ended(report, timed_out, exitcode, printed, size, seconds)
