"""Start the student's interpreter inside the layers the kernel gives an unprivileged user.

:func:`spawn` runs a command line through :mod:`.launcher` (a stdlib-only file run by path), which applies every layer
but Landlock; the worker applies that itself. What each layer stops, and what it does not: docs/teachers.md.
"""
import contextlib
import dataclasses
import functools
import importlib.machinery
import json
import os
import re
import select
import signal
import subprocess
import sys
import sysconfig
import threading
import time
from importlib import metadata
from typing import Mapping, Sequence

from .launcher import NAMESPACE_LAYERS, PR_SET_DUMPABLE, prctl, process_stats

_LAUNCHER = [sys.executable, "-I", "-S", "-B", os.path.join(os.path.dirname(os.path.abspath(__file__)), "launcher.py")]
NO_NAMESPACES_VARIABLE = "ATTENTION_EDU_SANDBOX_NO_NAMESPACES"
_FIRST_CALLS = threading.RLock()      # one for every :func:`_once` function (reentrant: readable calls another)


@dataclasses.dataclass(frozen=True)
class Limits:
    """Resource limits of the worker, each a positive int."""

    memory_mb: int = 1024
    cpu_seconds: int = 60
    file_size_mb: int = 16
    open_files: int = 256
    processes: int = 64
    disk_mb: int = 64           # what its private directory may hold: a tmpfs, where the mount namespace is allowed

    def __post_init__(self):
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"Limits.{field.name} must be a positive int, got {value!r}")


def namespaces_allowed() -> bool:
    """Whether the judge asks for namespaces: on Linux, unless ``ATTENTION_EDU_SANDBOX_NO_NAMESPACES`` is set."""
    return sys.platform.startswith("linux") and os.environ.get(NO_NAMESPACES_VARIABLE, "") in ("", "0")


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 without Landlock (or without ``landlockpy``: not Linux)."""
    try:
        import landlockpy
        return landlockpy.abi_version()
    except (ImportError, OSError):  # OSError: a container's seccomp profile refuses the probe
        return 0


def _once(function):
    """``function``'s value per argument, once per process, one thread at a time: sysconfig's lazy set-up is not
    thread-safe (under ``grade --jobs 2`` a thread read MULTIARCH as None: its worker lost ``/lib/<arch>``)."""
    cached = functools.cache(function)
    @functools.wraps(function)
    def once(*args):
        with _FIRST_CALLS:
            return cached(*args)
    return once


def _canonical(name: str) -> str:
    return name.lower().replace("-", "_").replace(".", "_")


@_once
def package_dirs(names: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """(directories, top-level module names) of the installed packages ``names`` and of those they require: what the
    worker may read beyond the interpreter, from the distributions' metadata (nothing imported)."""
    owners, dirs, found, todo = metadata.packages_distributions(), set(), set(), list(names)
    while todo:
        name = todo.pop()
        spec = None if name in found else importlib.machinery.PathFinder.find_spec(name)
        if spec is None:
            continue
        found.add(name)
        places = [p for p in spec.submodule_search_locations or [] if p not in sys.path]
        dirs.update(places or [spec.origin], [p + ".libs" for p in places])          # origin: a one-file module
        for dist in owners.get(name, []):
            if spec.origin:                              # e.g. site-packages/numpy.libs
                dirs.add(os.path.join(os.path.dirname(os.path.dirname(spec.origin)), dist + ".libs"))
            wanted = {_canonical(dist)} | {_canonical(re.match(r"[\w.-]*", r).group()) for r in
                                           metadata.requires(dist) or [] if "extra ==" not in r}
            todo += [top for top, dists in owners.items() if wanted & {_canonical(d) for d in dists}]
    return sorted(d for d in dirs if d and os.path.exists(d)), sorted(found | set(names))


@_once
def standard_library() -> list[str]:
    """The base interpreter's standard-library folders (a virtual environment's hold only site-packages)."""
    paths = sysconfig.get_paths(vars={"installed_base": sys.base_prefix, "platbase": sys.base_exec_prefix})
    return sorted({paths["stdlib"], paths["platstdlib"], os.path.dirname(os.__file__)})


@_once
def readable(packages: tuple[str, ...]) -> list[str]:
    """What a worker may read besides its own directory: the standard library entry by entry without ``site-packages``
    (Landlock grants whole subtrees, and other packages live beneath it), the interpreter, C libraries, ``packages``."""
    arch = sysconfig.get_config_var("MULTIARCH") or ""
    read = {os.path.realpath(sys.executable), "/dev/null", "/dev/urandom", "/proc/self",
            "/etc/ld.so.cache", "/lib64", *packages, *(f"{root}/{arch}" for root in ("/lib", "/usr/lib") if arch)}
    for folder in filter(os.path.isdir, standard_library()):
        read |= {entry.path for entry in os.scandir(folder) if entry.name not in ("site-packages", "dist-packages")}
    return sorted(path for path in read if path and os.path.exists(path))


@_once
def _probed() -> tuple[tuple[str, str], ...]:
    abi = landlock_abi()
    found = {"landlock": f"active (ABI {abi})" if abi else "unavailable: the kernel has no Landlock",
             "rlimits": "active" + ("" if os.getuid() else " (uid 0 is exempt from the process"
                                    " limit: only a PID namespace's pid_max, Linux >= 6.14)")}
    done = subprocess.run([*_LAUNCHER, "--probe"], capture_output=True, text=True, env={}, timeout=60, check=False)
    try:
        found.update(json.loads(done.stdout))
    except ValueError:
        found.update(dict.fromkeys([*NAMESPACE_LAYERS, "seccomp", "rlimits"],
                                   f"unavailable: the probe failed ({done.stderr.strip()[-200:]})"))
    return tuple(found.items())


def available_layers() -> dict[str, str]:
    """``landlock`` (with its ABI), ``user-namespace``, ``pid-namespace``, ``net-namespace``, ``mount-namespace``,
    ``seccomp``, ``rlimits`` -> ``"active ..."`` or ``"unavailable: <reason>"``: what this machine offers
    (``ATTENTION_EDU_SANDBOX_NO_NAMESPACES`` not applied), probed once per process."""
    return dict(_probed())


class SandboxError(RuntimeError):
    """The launcher could not start the worker."""


class Sandboxed:
    """A worker started by :func:`spawn`; ``with`` it, or call :meth:`kill` when done.

    ``process`` is the launcher: its pipes are the worker's, its ``returncode`` the worker's (negative: ended by
    that signal). ``layers``: those active, of :func:`available_layers`' names (the worker adds Landlock).
    """

    def __init__(self, process: subprocess.Popen, layers: list[str], lifeline: int):
        self.process, self.layers, self._lifeline = process, layers, lifeline
        self._lock = threading.Lock()      # Ctrl-C's thread and the grading thread may both end it

    def kill(self, grace: float = 5.0) -> None:
        """Stop the worker and everything it started; return when nothing of it runs (from any thread)."""
        with self._lock:
            process, pid = self.process, self.process.pid
            if process.returncode is None:
                process.send_signal(signal.SIGTERM)      # the launcher kills the tree, then exits
                deadline = time.monotonic() + grace
                while _running(process):
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
            with contextlib.suppress(OSError):
                pipe.close()


def _running(process: subprocess.Popen) -> bool:
    """Whether our child has not exited yet, without reaping it; reaped where Python has no ``os.waitid`` (macOS before
    3.13, which has no /proc either: no sweep needs the pid to stay ours)."""
    if not hasattr(os, "waitid"):
        return process.poll() is None
    try:
        return os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is None
    except ChildProcessError:
        return False


def _kill_session(sid: int, wait: float = 2.0) -> None:
    """SIGKILL every process still in session ``sid`` and wait (briefly) until each is dead: the fallback's last sweep,
    for a launcher that was killed before it could clean up."""
    killed = [pid for pid, fields in process_stats().items() if fields[3] == str(sid) and pid != sid]
    for pid in killed:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and any(
            fields[0] != "Z" for pid, fields in process_stats().items() if pid in killed):
        time.sleep(0.005)


def spawn(argv: Sequence[str], *, cwd: str, env: Mapping[str, str], limits: Limits = Limits(),
          namespaces: bool = True, seccomp: bool = True, pass_fds: Sequence[int] = (), hide: str = "") -> Sandboxed:
    """Run ``argv`` in the existing directory ``cwd`` with exactly ``env``, the rlimits and (where allowed) namespaces;
    the judge talks over the returned worker's ``.process`` pipes, and the worker inherits ``pass_fds`` (files outside
    ``cwd``, which the tmpfs hides). In the mount namespace the folder ``hide`` (the class's) is empty.

    ``namespaces=False`` (or ``ATTENTION_EDU_SANDBOX_NO_NAMESPACES=1``) uses the fallback without namespaces;
    ``seccomp=False`` leaves the filter out, for tests of the other layers alone.
    """
    if isinstance(argv, (str, bytes)) or not argv or not all(isinstance(a, str) for a in argv):
        raise TypeError(f"spawn: argv must be a non-empty list of str, got {argv!r}")
    if not os.path.isdir(cwd):
        raise ValueError(f"spawn: cwd {cwd!r} is not a directory")
    if not isinstance(limits, Limits):
        raise TypeError(f"spawn: limits must be a Limits, got {type(limits).__name__}")
    prctl(PR_SET_DUMPABLE, 0)       # the grader too: without Landlock, no user namespace keeps the worker out
    status_r, status_w = os.pipe()
    lifeline_r, lifeline_w = os.pipe()
    config = {"namespaces": bool(namespaces) and namespaces_allowed(), "seccomp": bool(seccomp),
              "limits": dataclasses.asdict(limits), "status_fd": status_w, "lifeline_fd": lifeline_r, "hide": hide}
    try:
        process = subprocess.Popen(
            [*_LAUNCHER, "--launch", json.dumps(config), "--", *argv],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd,
            env=dict(env), start_new_session=True, pass_fds=(status_w, lifeline_r, *pass_fds))
    finally:
        os.close(status_w), os.close(lifeline_r)
    sandboxed = Sandboxed(process, [], lifeline_w)
    with os.fdopen(status_r, "rb") as status:
        ready = select.select([status], [], [], 30.0)[0]         # seconds the launcher may take to start
        report = status.read() if ready else b""
    try:
        sandboxed.layers = json.loads(report)["layers"]
    except (ValueError, KeyError, TypeError):
        sandboxed.kill()
        error = process.stderr.read(4096).decode(errors="replace").strip()
        raise SandboxError(f"the sandbox launcher did not start {argv[0]!r}: {error}") from None
    return sandboxed

