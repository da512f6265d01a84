"""Calling a student's function in a child process, with only plain data coming back.

:class:`Child` is the judge's end of a child that :mod:`.worker` runs: it sends a call frame, waits at most the call's
time limit for the reply and turns the reply, or how the child ended, into an :class:`Outcome`. :func:`call` forks one
per call (a notebook's ``check_<exercise>(fn)``: an exit, crash, loop, memory bomb or NumPy's settings changed end with
it, never with the kernel); :class:`.submission.Remote` runs a submission in the sandbox. Where ``fork`` is not safe
(Windows, macOS), :func:`call` runs the function here, unprotected, and the result says so."""

import contextlib
import faulthandler
import math
import os
import random
import signal
import stat
import sys
import time
import warnings
from typing import Any, Callable

from ...backend import host_numpy as np
from . import ErrorInfo, Outcome, escape, launcher, protocol, worker

__all__ = ["Outcome", "ErrorInfo", "Child", "call", "ending", "texts", "DEFAULT_TIMEOUT", "DEFAULT_MEMORY_MB",
           "OUTPUT_LIMIT", "START_METHOD_ENV"]

DEFAULT_TIMEOUT = 3.0  #: Seconds one call of the student's function may take.
DEFAULT_MEMORY_MB = 1024  #: Megabytes of address space a call may add to what its process inherited.
OUTPUT_LIMIT = 64_000  #: Bytes of a call's printed output that are kept.
START_METHOD_ENV = "ATTENTION_EDU_START_METHOD"  #: How :func:`call` runs the function: fork or inline.
_REPLY_CAP = (1 << 20, protocol.REPLY_VALUES + 256)     # bytes, values: the judge keeps each reply until the verdict
HELPER_LIMIT, HELPER_SECONDS = 1 << 20, 3.0    # an ae call's bound (_helper_size); the grader's CPU for a submission's
_exit = os._exit      # kept: a student may replace os._exit, and the child must still end here
_LINKS = (stat.S_IFSOCK, stat.S_IFIFO)     # the descriptors a notebook check's child closes: to other processes
_SIGNALS = {"SIGSEGV": "crashed with a segmentation fault (it touched memory it does not own)",
            "SIGABRT": "crashed: it aborted (SIGABRT)", "SIGBUS": "crashed with a bus error (SIGBUS)",
            "SIGFPE": "crashed with a floating-point exception (SIGFPE)", "SIGKILL": "was killed by SIGKILL (it "
            "killed itself, or the system stopped it, for instance for using too much memory)"}


def ending(exitcode: int | None) -> tuple[str, str]:
    """(words, hint id) for a child that ended without replying."""
    if exitcode is not None and exitcode >= 0:
        return f"ended the process with os._exit({exitcode}) or another hard exit", "harness.exit"
    name = next((s.name for s in signal.Signals if exitcode is not None and s == -exitcode), str(exitcode))
    return _SIGNALS.get(name, f"was ended by signal {name}"), "harness.crash"


def texts(reply: Any, key: str, count: int = 20, size: int = 300, keep: Callable[[str], bool] = bool) -> list[str]:
    """The list ``reply[key]`` a child sent, as at most ``count`` escaped one-line strings of ``size`` chars, or []."""
    value = reply.get(key) if isinstance(reply, dict) else None
    return [escape(str(v)[:size], False) for v in value[:count] if keep(str(v))] if type(value) is list else []


class Child:
    """The judge's end of a child that answers call frames; ``end()`` kills it, returns its status. ``printed_fd``: the
    pipe its fds 1 and 2 write to, read while a reply is awaited (printing never blocks) and after, so what it printed
    before it crashed or hung is kept too. Not a file, whose blocks it could reserve past every limit (red team 41)."""

    def __init__(self, send_fd: int | None, receive_fd: int, printed_fd: int, end: Callable[[], int | None],
                 deadline: float = math.inf, helpers: dict | None = None, spent: list | None = None):
        self.send_fd, self.receive_fd, self.printed_fd, self._end = send_fd, receive_fd, printed_fd, end
        self.deadline, self.helpers, self.kept, self.count = deadline, helpers or {}, bytearray(), 0
        self.alive, self.status, self.violations, self.spent = True, None, [], spent or [0.0]   # of HELPER_SECONDS
        for fd in (fd for fd in (printed_fd, send_fd) if fd is not None):   # a child not reading cannot hold us
            os.set_blocking(fd, False)

    def ask(self, message: Any, seconds: float) -> dict | Outcome:
        """Send ``message`` (unless None) and read the reply; a failure is an Outcome, the child gone."""
        deadline = min(time.monotonic() + seconds, self.deadline)
        try:
            if message is not None:
                protocol.send(self.send_fd, message, deadline)
            reply = protocol.receive(self.receive_fd, deadline, _REPLY_CAP, (self.printed_fd, self._drain))
            while type(reply) is dict and ("violation" in reply or self.helpers and "helper" in reply):
                if time.monotonic() > deadline:      # a frame read late (see protocol._read), and more: no end to them
                    raise TimeoutError
                if self.spent[0] > HELPER_SECONDS:   # a loop of ae calls or refused imports would keep the grader busy
                    raise protocol.ProtocolError("more ae calls or refused imports than the grader serves")
                started = time.thread_time()         # for the whole budget (red teams 59 and 60)
                if "violation" in reply:      # sent the moment the rule refused an import (see worker.Refuse)
                    told = escape(str(reply["violation"])[:500], False)
                    if told not in self.violations and len(self.violations) < 20:
                        self.violations.append(told)
                else:                         # ae.softmax(...) in a notebook
                    protocol.send(self.send_fd, self._helper(reply), deadline)
                reply = protocol.receive(self.receive_fd, deadline, _REPLY_CAP, (self.printed_fd, self._drain))
                self.spent[0] += time.thread_time() - started        # its CPU here: computing, decoding the next
            if type(reply) is not dict:
                raise protocol.ProtocolError("a reply that is not a message")
            return reply
        except (TimeoutError, protocol.ProtocolError) as err:
            self.end()
            return Outcome(timed_out=True) if isinstance(err, TimeoutError) else Outcome(
                ended=f"sent back an answer the checker cannot take ({err})", ended_id="harness.reply")
        except (EOFError, OSError):       # it ended (or Ctrl-C ended it)
            words, hint_id = ending(self.end())
            return Outcome(ended=words, ended_id=hint_id)

    def _helper(self, request: dict) -> dict:
        """Compute a library function the exercise lets the submission call, on plain data, here."""
        name, args, kwargs = request.get("helper"), request.get("args"), request.get("kwargs", {})
        function = self.helpers.get(name) if type(name) is str else None     # a forged frame's name: any plain value
        if function is None or type(args) is not list or type(kwargs) is not dict:
            return {"error": f"ae.{str(name)[:40]} is not available in this exercise"}
        if _helper_size(args + list(kwargs.values())) > HELPER_LIMIT:      # computed here, outside the sandbox's limits
            return {"error": f"ae.{name} is computed here only on smaller inputs: use smaller arrays"}
        try:
            return {"value": protocol.plain(function(*args, **kwargs))}
        except Exception as err:  # a wrong argument of the student's: the student's error
            return {"error": f"ae.{name} raised {type(err).__name__}: {str(err)[:300]}"}

    def _drain(self) -> bool:
        """Read up to 1 MiB the child printed (the first OUTPUT_LIMIT bytes kept, all counted); False at its end."""
        time.sleep(0.002 * (throttled := self.count > 16 << 20))   # past 16 MiB since the last look, 32 kB a ms
        with contextlib.suppress(OSError):      # nothing more now (BlockingIOError); closed: grading was interrupted
            for _ in range(1 if throttled else 16):     # not "until empty": prints from threads may never end
                if not (chunk := os.read(self.printed_fd, 1 << 16)):
                    return False
                self.kept += chunk[:max(OUTPUT_LIMIT - len(self.kept), 0)]
                self.count += len(chunk)
        return True

    def printed(self) -> tuple[str, int]:
        """What the child printed since the last look, cut at :data:`OUTPUT_LIMIT` bytes."""
        self._drain()
        kept, count, self.kept, self.count = self.kept.decode("utf-8", "replace"), self.count, bytearray(), 0
        cut = f" [... {count - OUTPUT_LIMIT:,} more bytes not kept]\n" if count > OUTPUT_LIMIT else ""
        return kept + cut, min(count, OUTPUT_LIMIT) + len(cut)

    def outcome(self, reply: dict | Outcome, names: tuple[str, ...], memory_mb: float | None) -> Outcome:
        """The :class:`Outcome` of one call, with what the child printed."""
        outcome = read_reply(reply, names, memory_mb)
        outcome.printed, outcome.printed_bytes = self.printed()
        return outcome

    def end(self) -> int | None:
        """Kill the child (once) and return its exit status (-N: ended by signal N)."""
        if self.alive:
            self.alive, self.status = False, self._end()
        return self.status


def _helper_size(args: list) -> int:
    """A bound on the float64s a helper may build: the leading axes' broadcast (an empty axis counts as 1: Q K^T comes
    before a mask of batch 0 empties it) times the cube of the longest trailing axis or int (m x n x d, B x n x n,
    H x m x n), a longdouble counting twice; 0 where they do not broadcast (the function refuses)."""
    arrays = [a for a in args if isinstance(a, np.ndarray) and a.ndim > 0]
    sizes = [int(a) for a in args if isinstance(a, (int, np.integer))
             or isinstance(a, np.ndarray) and a.ndim == 0 and a.dtype.kind in "iub"]
    try:
        batch = math.prod(max(d, 1) for d in np.broadcast_shapes(*(a.shape[:-2] for a in arrays)))
    except (ValueError, RuntimeError) as error:          # RuntimeError: NumPy's 32 axes exceeded (red team 44)
        return 0 if isinstance(error, ValueError) else HELPER_LIMIT + 1    # refused as too large
    width = max([8, *(a.itemsize for a in arrays)]) // 8
    return batch * width * max([1, *(d for a in arrays for d in a.shape[-2:]), *(abs(n) for n in sizes)]) ** 3


def read_reply(reply: dict | Outcome, names: tuple[str, ...], memory_mb: float | None) -> Outcome:
    """The :class:`Outcome` of one call from its reply: plain data, but of any shape."""
    if isinstance(reply, Outcome):
        return reply
    error = ErrorInfo.read(reply.get("error"), names)
    seconds = reply.get("seconds") if type(reply.get("seconds")) in (int, float) else 0.0
    if error is not None and error.is_a("MemoryError"):
        limit = f"more than its limit (--memory {memory_mb:g} MB)" if memory_mb else "more than the machine has"
        return Outcome(error=error, ended=f"ran out of memory (MemoryError): it asked for {limit}",
                       ended_id="harness.memory", seconds=seconds)
    return Outcome(value=reply.get("value"), error=error, warnings=texts(reply, "warnings"), seconds=seconds,
                   mutated=texts(reply, "mutated", keep=lambda name: name in names))


def _kill(pid: int) -> int:
    """Kill a forked child and its process group (a pool's workers would run on, orphaned), then reap it."""
    for kill in (os.killpg, os.kill):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            kill(pid, signal.SIGKILL)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def _limit(memory_mb: float | None) -> None:
    """A forked child's limits: its address space plus ``memory_mb``; 1 MiB a file; the sandbox's seccomp filter (no
    process of its own, to outlive the call); with Landlock ABI 6+ no signal out of it (docs/teachers.md, notebooks)."""
    import resource      # POSIX only, as fork is
    launcher.deny_calls()       # where the kernel offers it (Linux on x86_64 or aarch64)
    with contextlib.suppress(ImportError, OSError):      # no landlockpy, another OS, an older kernel
        from landlockpy import AccessFS, AccessNet, Ruleset, Scope
        with Ruleset(handled_fs=AccessFS.NONE, handled_net=AccessNet.NONE, scoped=Scope.SIGNAL) as ruleset:
            ruleset.restrict()
    caps = {resource.RLIMIT_FSIZE: 2**20}
    if memory_mb and os.path.exists("/proc/self/statm"):      # only where the current size can be read
        with open("/proc/self/statm") as statm:
            pages = int(statm.read().split()[0])
        caps[resource.RLIMIT_AS] = pages * os.sysconf("SC_PAGE_SIZE") + int(memory_mb * 2**20)
    for which, cap in caps.items():
        hard = resource.getrlimit(which)[1]
        resource.setrlimit(which, (cap if hard == resource.RLIM_INFINITY else min(cap, hard), hard))


def call(fn: Callable, args: tuple, names: tuple[str, ...], timeout: float = DEFAULT_TIMEOUT,
         memory_mb: float | None = DEFAULT_MEMORY_MB, errors: dict | None = None) -> Outcome:
    """Call ``fn(*copies of args)`` in a forked child, killed after ``timeout`` seconds; its address space may grow
    by ``memory_mb`` megabytes (None: no limit). ``names`` name the arguments, to say which one was modified;
    ``errors`` is NumPy's error state the call runs under (``np.seterr``'s; default: this thread's).

    >>> outcome = call(lambda x: x * 2, (3,), ("x",))
    >>> outcome.value, outcome.ok
    (6, True)
    >>> call(lambda: print("hi"), (), ()).printed
    'hi\\n'
    >>> call(lambda: __import__("os")._exit(0), (), ()).ended_id
    'harness.exit'
    """
    chosen = os.environ.get(START_METHOD_ENV, "").strip().lower()
    if chosen != "fork" and (chosen == "inline" or not hasattr(os, "fork") or sys.platform == "darwin"):
        with np.errstate(**(errors or np.geterr())):
            outcome = read_reply(worker.answer(fn, args, names), names, memory_mb)
        outcome.isolated = False
        return outcome
    with contextlib.suppress(ImportError, OSError):     # once, here: in each forked child, importing landlockpy and
        __import__("landlockpy").abi_version()             # finding libc (ldconfig -p) took 13 of a call's 17 ms
    (read_end, write_end), (printed, printed_end), parent = os.pipe(), os.pipe(), os.getpid()
    with warnings.catch_warnings():    # 3.12+: fork() in a threaded kernel may deadlock (then the child times out)
        warnings.filterwarnings("ignore", message=r".*fork\(\) may lead to deadlocks", category=DeprecationWarning)
        pid = os.fork()
    if pid == 0:                                   # the child: never returns
        try:
            os.setsid()              # a session and group of its own (_kill ends it whole), with no terminal to reach
            launcher.prctl(launcher.PR_SET_PDEATHSIG, signal.SIGKILL)   # a kernel killed mid-call (a restart) takes it
            os.getppid() == parent or _exit(70)    # along, even one killed before prctl: a loop would run on, orphaned
            faulthandler.disable(), np.random.seed(), random.seed()   # a crash told in the result; fresh draws
            for fd in map(int, os.listdir("/proc/self/fd" if os.path.isdir("/proc/self") else "/dev/fd")):  # mac
                with contextlib.suppress(OSError):    # the kernel's sockets and pipes (red teams 43, 45) closed
                    if fd > 2 and fd not in (write_end, printed_end) and stat.S_IFMT(os.fstat(fd).st_mode) in _LINKS:
                        os.close(fd)
            _limit(memory_mb)
            np.seterr(**(errors or np.geterr()))   # the notebook's own np.seterr(invalid="raise"), say
            worker.quiet(printed_end)              # its prints go to the pipe the judge reads
            worker.send_reply(write_end, worker.answer(fn, args, names))
            _exit(0)
        finally:
            _exit(70)
    os.close(write_end), os.close(printed_end)
    child = Child(None, read_end, printed, lambda: _kill(pid))
    try:
        reply = child.ask(None, timeout)
        child.end()                                # before reading what it printed: all of it is in the pipe
        return child.outcome(reply, names, memory_mb)
    finally:
        child.end(), os.close(read_end), os.close(printed)
