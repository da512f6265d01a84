"""Start the student's interpreter inside the layers the kernel gives an unprivileged user.

:func:`spawn` runs the worker's command line through :mod:`.launcher` (a stdlib-only file run
by path) and returns a :class:`Sandboxed` whose pipes the judge talks over. What each layer
protects, and what it does not:

* **user + PID + network namespaces** (where an unprivileged user may create them): the worker
  is PID 1 of a fresh PID namespace; it sees and signals only its own descendants, never the
  judge, and when it dies the kernel kills everything left in the namespace, ``setsid``'ed and
  double-forked grandchildren included. The network namespace has only a loopback that is
  down: no TCP or UDP leaves it. ``RLIMIT_NPROC`` counts only the namespace's processes. They
  do not hide files (``/proc`` still lists the host's processes): that is Landlock's work.
* **rlimits**: memory (``RLIMIT_DATA`` bounds private writable memory to ``memory_mb``;
  ``RLIMIT_AS`` bounds every mapping, shared anonymous ones included, to ``memory_mb`` + 1 GiB,
  room for what glibc's arenas and BLAS reserve but never touch), CPU seconds, file size, open
  files, processes, no core files; ``no_new_privs``, and a root judge's worker holds no
  capabilities. Wall-clock time is the judge's to bound.
* **fallback** without namespaces (another kernel, or ``namespaces=False``): the launcher is a
  child subreaper, so every orphan (``setsid``, double forks) becomes its child and is killed
  when the worker ends or :meth:`Sandboxed.kill` is called; :meth:`Sandboxed.kill` then also
  sweeps the launcher's session. It cannot catch a ``setsid``'ed descendant once the launcher
  itself is dead, which a worker can cause only where Landlock's signal scope (ABI >= 6) is
  missing. ``RLIMIT_NPROC`` then counts every process of the user (the limit is set to those
  already running plus ``processes``).
* **uid 0**: the kernel exempts the root user from ``RLIMIT_NPROC`` whatever its capabilities,
  so a grader run as root bounds a fork bomb only through its PID namespace's ``pid_max``
  (301, Linux >= 6.14) and, without namespaces, not at all (``kill()`` still ends it all).
  Run the grader as an ordinary user.
* **seccomp** (x86_64 and aarch64 Linux): ``socket(2)`` fails whatever the family, so the
  worker reaches no unix socket by its path (a desktop's D-Bus, ``docker.sock``: Landlock up to
  ABI 7 does not guard them) and sends no UDP even without a network namespace; ``chmod``,
  ``chown``, ``utime`` and xattr calls fail too (Landlock lets them through by any path, so a
  worker could ``chmod 000`` a classmate's submission), even in its private directory; system
  calls of another ABI (i386, x32) kill it. Pipes and ``socketpair`` still work.

**Landlock** (files, TCP, signals, see :mod:`.landlock`) is applied by the worker itself, so
that it can first load its interpreter; the worker reports it. Setting
``ATTENTION_EDU_SANDBOX_NO_NAMESPACES=1`` in the judge's environment (never read in the
worker) forces the fallback, for tests.
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
import select
import signal
import subprocess
import sys
import time
from typing import Mapping, Sequence

from .landlock import abi_version
from .launcher import NAMESPACE_LAYERS

NO_NAMESPACES_VARIABLE = "ATTENTION_EDU_SANDBOX_NO_NAMESPACES"
_LAUNCHER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "launcher.py")


@dataclasses.dataclass(frozen=True)
class Limits:
    """Resource limits of the worker (each a positive int): MiB, seconds, MiB, count, count."""

    memory_mb: int = 1024
    cpu_seconds: int = 60
    file_size_mb: int = 16
    open_files: int = 256
    processes: int = 64

    def __post_init__(self):
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"Limits.{field.name} must be a positive int, got {value!r}")


def _launcher_command(*args: str) -> list[str]:
    return [sys.executable, "-I", "-S", "-B", _LAUNCHER, *args]


@functools.lru_cache(maxsize=None)
def _probed() -> tuple[tuple[str, str], ...]:
    abi = abi_version()
    found = {"landlock": f"active (ABI {abi})" if abi else "unavailable: the kernel has no Landlock"}
    done = subprocess.run(_launcher_command("--probe"), capture_output=True, text=True,
                          env={}, timeout=60, check=False)
    try:
        found.update(json.loads(done.stdout))
    except ValueError:
        found.update(dict.fromkeys([*NAMESPACE_LAYERS, "rlimits"],
                                   f"unavailable: the probe failed ({done.stderr.strip()[-200:]})"))
    return tuple(found.items())


def available_layers() -> dict[str, str]:
    """Each layer -> ``"active ..."`` or ``"unavailable: <reason>"``, probed once per process.

    Layers: ``landlock`` (with its ABI), ``user-namespace``, ``pid-namespace``,
    ``net-namespace``, ``seccomp``, ``rlimits``. The ``ATTENTION_EDU_SANDBOX_NO_NAMESPACES`` switch is
    not applied here: this says what the machine offers.
    """
    return dict(_probed())


class SandboxError(RuntimeError):
    """The launcher could not start the worker."""


class Sandboxed:
    """A worker started by :func:`spawn`; ``with`` it, or call :meth:`kill` when done.

    Attributes
    ----------
    process : subprocess.Popen
        The launcher; its binary ``stdin``/``stdout``/``stderr`` pipes are the worker's.
        ``returncode`` is the worker's (negative: killed by that signal).
    layers : list of str
        The layers active for this worker, e.g. ``["user-namespace", "pid-namespace",
        "net-namespace", "rlimits"]`` (Landlock is applied and reported by the worker).
    """

    def __init__(self, process: subprocess.Popen, layers: list[str], lifeline: int):
        self.process, self.layers, self._lifeline = process, layers, lifeline

    def kill(self, grace: float = 5.0) -> None:
        """Stop the worker and everything it started; return when nothing of it runs."""
        process, pid = self.process, self.process.pid
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)      # the launcher kills the tree, then exits
            deadline = time.monotonic() + grace
            while _running(pid):
                if time.monotonic() > deadline:
                    os.kill(pid, signal.SIGKILL)     # still unreaped: the pid is still ours
                time.sleep(0.002)
            if not set(NAMESPACE_LAYERS) <= set(self.layers):
                _kill_session(pid)                   # the launcher's zombie keeps the sid ours
            process.wait()
        if self._lifeline >= 0:
            os.close(self._lifeline)
            self._lifeline = -1

    def __enter__(self) -> "Sandboxed":
        return self

    def __exit__(self, *exc_info) -> None:
        self.kill()
        for pipe in (self.process.stdin, self.process.stdout, self.process.stderr):
            try:
                pipe.close()
            except OSError:
                pass


def _running(pid: int) -> bool:
    """Whether our child ``pid`` has not exited yet (without reaping it)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is None
    except ChildProcessError:
        return False


def _kill_session(sid: int, wait: float = 2.0) -> None:
    """SIGKILL every process still in session ``sid`` and wait (briefly) until each is dead:
    the fallback's last sweep, for a launcher that was killed before it could clean up."""
    if not os.path.isdir("/proc"):
        return
    killed = [pid for pid, state, session in _processes() if session == sid and pid != sid]
    for pid in killed:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and any(
            state != "Z" for pid, state, _ in _processes() if pid in killed):
        time.sleep(0.005)


def _processes() -> list[tuple[int, str, int]]:
    """(pid, state, session id) of every process /proc shows."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat") as file:
                fields = file.read().rsplit(")", 1)[1].split()
            found.append((int(entry), fields[0], int(fields[3])))
        except (OSError, IndexError, ValueError):
            continue
    return found


def spawn(argv: Sequence[str], *, cwd: str, env: Mapping[str, str], limits: Limits = Limits(),
          namespaces: bool = True, seccomp: bool = True,
          start_timeout: float = 30.0) -> Sandboxed:
    """Run ``argv`` in ``cwd`` with exactly ``env``, the rlimits and (where allowed) namespaces.

    Parameters
    ----------
    argv : sequence of str
        The worker's command line (``argv[0]`` looked up in ``env["PATH"]`` if not a path).
    cwd : str
        The worker's private directory (must exist).
    env : mapping of str to str
        The worker's whole environment.
    limits : Limits
        Resource limits.
    namespaces : bool
        False (or ``ATTENTION_EDU_SANDBOX_NO_NAMESPACES=1`` in the judge's environment) uses
        the fallback without namespaces.
    seccomp : bool
        False leaves out the seccomp filter (sockets, metadata changes), for tests of the
        other layers alone.

    Returns
    -------
    Sandboxed
        The running worker; the judge talks over ``.process.stdin`` / ``.process.stdout``.
    """
    if isinstance(argv, (str, bytes)) or not argv or not all(isinstance(a, str) for a in argv):
        raise TypeError(f"spawn: argv must be a non-empty list of str, got {argv!r}")
    if not os.path.isdir(cwd):
        raise ValueError(f"spawn: cwd {cwd!r} is not a directory")
    if not isinstance(limits, Limits):
        raise TypeError(f"spawn: limits must be a Limits, got {type(limits).__name__}")
    if os.environ.get(NO_NAMESPACES_VARIABLE, "") not in ("", "0"):
        namespaces = False
    status_r, status_w = os.pipe()
    lifeline_r, lifeline_w = os.pipe()
    config = {"namespaces": bool(namespaces) and sys.platform.startswith("linux"),
              "seccomp": bool(seccomp), "limits": dataclasses.asdict(limits), "status_fd": status_w,
              "lifeline_fd": lifeline_r}
    try:
        process = subprocess.Popen(
            _launcher_command("--launch", json.dumps(config), "--", *argv),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd,
            env=dict(env), start_new_session=True, pass_fds=(status_w, lifeline_r))
    finally:
        os.close(status_w), os.close(lifeline_r)
    sandboxed = Sandboxed(process, [], lifeline_w)
    with os.fdopen(status_r, "rb") as status:
        ready = select.select([status], [], [], start_timeout)[0]
        report = status.read() if ready else b""
    try:
        sandboxed.layers = [l for l in json.loads(report)["layers"] if "refused" not in l]
    except (ValueError, KeyError, TypeError):
        sandboxed.kill()
        error = process.stderr.read(4096).decode(errors="replace").strip()
        raise SandboxError(f"the sandbox launcher did not start {argv[0]!r}: {error}") from None
    return sandboxed

