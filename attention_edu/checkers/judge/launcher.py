"""The sandbox's launcher, run by path (``python -I -S launcher.py``) for :mod:`.sandbox`; stdlib only.

Where an unprivileged user may, it enters new user, PID, network, mount and IPC namespaces and mounts a tmpfs of
``disk_mb`` over the private directory. It becomes a child subreaper and forks the worker: PID 1 of the new PID
namespace, dying with the launcher, with the rlimits, ``no_new_privs``, no capabilities for a root judge (uid 0 is
exempt from ``RLIMIT_NPROC``: ``pid_max`` 301 in its PID namespace from Linux 6.14) and :mod:`.seccomp`'s filter. When
the worker ends, the judge sends SIGTERM or its lifeline pipe closes (the judge died), it kills every descendant
still attached and exits with the worker's status. Outside Linux only rlimits apply and only the worker is killed.
"""
from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import json
import os
import re
import resource
import select
import signal
import struct
import sys

NAMESPACE_LAYERS = ("user-namespace", "pid-namespace", "net-namespace", "mount-namespace", "ipc-namespace")
NO_NAMESPACES_VARIABLE = "ATTENTION_EDU_SANDBOX_NO_NAMESPACES"
_LINUX = sys.platform.startswith("linux")
_SPEC = importlib.util.spec_from_file_location(      # by path, as this file is run
    "attention_edu_seccomp", os.path.join(os.path.dirname(os.path.abspath(__file__)), "seccomp.py"))
seccomp = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(seccomp)
_CLONE_NEWNS, _CLONE_NEWIPC, _CLONE_NEWUSER, _CLONE_NEWPID, _CLONE_NEWNET = 1 << 17, 1 << 27, 1 << 28, 1 << 29, 1 << 30
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 2, 4, 8
_PR_SET_PDEATHSIG, _PR_SET_DUMPABLE, _PR_SET_CHILD_SUBREAPER = 1, 4, 36
_PR_SET_NO_NEW_PRIVS = 38
_CAPABILITY_VERSION_3 = 0x20080522    # capset(2): a header (version, pid) and two sets of three 32-bit masks
_PID_MAX_MIN = 301                    # the kernel's floor for pid_max
_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 22, 2
_ADDRESS_SPACE_HEADROOM_MB = 1024     # RLIMIT_AS room for reserved, never-touched mappings


def _libc_call(name: str, *args: int | bytes) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if getattr(libc, name)(*(a if isinstance(a, bytes) else ctypes.c_ulong(a) for a in args)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{name}{args}: {os.strerror(err)}")


def namespaces_allowed() -> bool:
    """Whether the judge asks for namespaces: on Linux, unless ``ATTENTION_EDU_SANDBOX_NO_NAMESPACES`` is set."""
    return _LINUX and os.environ.get(NO_NAMESPACES_VARIABLE, "") in ("", "0")


def undumpable() -> None:
    """Not dumpable: a worker of this user (dumpable after its exec) can neither ptrace it nor write its memory."""
    if _LINUX:
        _libc_call("prctl", _PR_SET_DUMPABLE, 0, 0, 0, 0)


def _enter_namespaces(disk_mb: int) -> None:
    """``unshare(2)`` through ctypes (3.11 has no ``os.unshare``), uid and gid mapped onto themselves; a
    tmpfs over the working directory (the new namespace's mounts never propagate out: mount_namespaces(7))."""
    uid, gid, private = os.geteuid(), os.getegid(), os.getcwd()
    _libc_call("unshare", _CLONE_NEWUSER | _CLONE_NEWPID | _CLONE_NEWNET | _CLONE_NEWNS | _CLONE_NEWIPC)
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as file:
            file.write(text)
    _libc_call("mount", b"tmpfs", private.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC,
               f"size={disk_mb}m,nr_inodes={64 * disk_mb},mode=700".encode())
    os.chdir(private)                   # into the tmpfs, which now hides the directory


def _threads_of(uid: int) -> int:
    """Tasks counted against RLIMIT_NPROC for ``uid`` outside a user namespace."""
    count = 0
    for entry in filter(str.isdigit, os.listdir("/proc")):      # not self and thread-self: counted already
        with contextlib.suppress(OSError, ValueError, KeyError), open(f"/proc/{entry}/status") as file:
            fields = dict(line.split(":", 1) for line in file if ":" in line)
            count += int(fields["Uid"].split()[0]) == uid and int(fields["Threads"])
    return count


def _bound_root_namespace(processes: int) -> None:
    """Cap pid_max, uid 0's only process bound; per PID namespace from Linux 6.14 (before,
    the file is the host's and is left alone)."""
    release = re.match(r"(\d+)\.(\d+)", os.uname().release)
    if os.getuid() == 0 and release and tuple(map(int, release.groups())) >= (6, 14):
        with contextlib.suppress(OSError), open("/proc/sys/kernel/pid_max", "w") as file:
            file.write(str(max(_PID_MAX_MIN, processes + 2)))  # failing: no bound, no harm


def _deny_calls() -> None:
    """Put :mod:`.seccomp`'s filter on this process (the worker, about to exec): it holds across the exec."""
    code = seccomp.program(os.getpid())
    buffer = ctypes.create_string_buffer(code, len(code))
    fprog = ctypes.create_string_buffer(struct.pack("HP", len(code) // 8, ctypes.addressof(buffer)))
    _libc_call("prctl", _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0)


def _limit_and_exec(argv: list[str], limits: dict, own_user_namespace: bool, layers: list[str], status: int) -> None:
    if own_user_namespace:
        _bound_root_namespace(limits["processes"])
    processes = limits["processes"] + (0 if own_user_namespace else _threads_of(os.getuid()))
    memory = limits["memory_mb"] << 20
    for kind, value in ((resource.RLIMIT_DATA, memory),
                        (resource.RLIMIT_AS, memory + (_ADDRESS_SPACE_HEADROOM_MB << 20)),
                        (resource.RLIMIT_FSIZE, limits["file_size_mb"] << 20),
                        (resource.RLIMIT_NOFILE, limits["open_files"]),
                        (resource.RLIMIT_NPROC, processes), (resource.RLIMIT_CORE, 0)):
        hard = resource.getrlimit(kind)[1]
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(kind, (value, value))
    resource.setrlimit(resource.RLIMIT_CPU, (limits["cpu_seconds"], limits["cpu_seconds"] + 1))  # SIGXCPU, SIGKILL
    if _LINUX:
        _libc_call("prctl", _PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        _libc_call("capset", struct.pack("Ii", _CAPABILITY_VERSION_3, 0), bytes(24))  # none: under no_new_privs
        # exec grants uid 0 none again, with no CAP_SETPCAP needed (SECBIT_NOROOT needed it: a container's root)
        if "seccomp" in layers:
            try:
                _deny_calls()
            except OSError as error:        # a kernel without seccomp filters: the row's layers say so
                layers[layers.index("seccomp")] = f"seccomp refused: {error}"
    with os.fdopen(status, "w") as file:   # the layers as they are, just before exec
        json.dump({"layers": [*layers, "rlimits"]}, file)
    os.execvp(argv[0], argv)


def _children() -> list[int]:
    if not _LINUX:
        return []                 # no /proc: only the worker itself is known (and killed)
    try:
        with open(f"/proc/self/task/{os.getpid()}/children") as file:
            return [int(pid) for pid in file.read().split()]
    except OSError:           # kernel without CONFIG_PROC_CHILDREN: scan every process
        return [pid for pid, fields in process_stats().items() if fields[1] == str(os.getpid())]


def process_stats() -> dict[int, list[str]]:
    """pid -> the fields of ``/proc/<pid>/stat`` after the command name (state, ppid, pgrp,
    session, ...), for every process /proc shows (one gone meanwhile is left out)."""
    stats = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError, IndexError), open(f"/proc/{entry}/stat") as file:
            stats[int(entry)] = file.read().rsplit(")", 1)[1].split()
    return stats


def _kill_descendants() -> None:
    """Kill every child until none is left; orphans reparent to us (subreaper) meanwhile."""
    while True:
        for pid in _children():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def _wait(worker: int, wake_r: int, lifeline: int) -> int:
    """Wait for the worker's exit, or stop it on a signal or when the judge's lifeline closes."""
    while True:
        ready = select.select([wake_r, lifeline], [], [])[0]
        signals = os.read(wake_r, 512) if wake_r in ready else b""
        if lifeline in ready or any(number != signal.SIGCHLD for number in signals):
            os.kill(worker, signal.SIGKILL)     # not reaped yet, so the pid is still ours
            return os.waitpid(worker, 0)[1]
        pid, code = os.waitpid(-1, os.WNOHANG)
        while pid:                              # reap orphans as they end, too
            if pid == worker:
                return code
            pid, code = os.waitpid(-1, os.WNOHANG)


def _launch(config: dict, argv: list[str]) -> None:
    layers, own = [], False
    if config["namespaces"]:
        try:
            _enter_namespaces(config["limits"]["disk_mb"])
            layers, own = list(NAMESPACE_LAYERS), True
        except OSError as error:
            layers = [f"namespaces refused: {error}"]
    if config["seccomp"] and seccomp.CAN_FILTER:
        layers.append("seccomp")
    if _LINUX:
        _libc_call("prctl", _PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), undumpable()
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGCHLD):
        signal.signal(number, lambda *_: None)
    sync_r, sync_w = os.pipe()
    worker = os.fork()
    if worker == 0:
        try:
            for fd in (sync_w, config["lifeline_fd"], wake_r, wake_w):
                os.close(fd)
            if _LINUX:
                _libc_call("prctl", _PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            if os.read(sync_r, 1) != b"1":          # the launcher died before prctl took hold
                os._exit(125)
            for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGCHLD):
                signal.signal(number, signal.SIG_DFL)
            _limit_and_exec(argv, config["limits"], own, layers, config["status_fd"])
        except BaseException as error:  # noqa: BLE001 - report any failure, never run on
            os.write(2, f"sandbox: cannot start {argv[0]!r}: {error}\n".encode())
        os._exit(127)
    os.write(sync_w, b"1"), os.close(config["status_fd"])     # the worker reports its layers
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0), os.dup2(null, 1)      # only the worker holds the judge's pipes
    code = _wait(worker, wake_r, config["lifeline_fd"])
    _kill_descendants()
    if os.WIFSIGNALED(code):                # die of the worker's signal, as Popen expects
        number = os.WTERMSIG(code)
        if number != signal.SIGKILL:
            signal.signal(number, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [number])
        os.kill(os.getpid(), number)
        os._exit(128 + number)
    os._exit(os.WEXITSTATUS(code))


def _probe() -> dict:
    """Launcher side of :func:`available_layers`: try the namespaces and the filter in this throw-away process."""
    found = {"rlimits": "active" + ("" if os.getuid() else " (uid 0 is exempt from the process"
                                    " limit: only a PID namespace's pid_max, Linux >= 6.14)")}
    reason = f"unavailable: {sys.platform}"
    if _LINUX:
        try:
            _enter_namespaces(1)       # a throw-away process: the tmpfs goes with it
            reason = "active"
        except OSError as error:
            reason = (f"unavailable: an unprivileged user may not create namespaces here ({error};"
                      " see user.max_user_namespaces, kernel.unprivileged_userns_clone, AppArmor)")
    found["seccomp"] = f"unavailable: {sys.platform} {os.uname().machine}"
    if seccomp.CAN_FILTER:             # last: the filter holds for the rest of this throw-away process
        try:
            _libc_call("prctl", _PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), _deny_calls()
            found["seccomp"] = "active"
        except OSError as error:
            found["seccomp"] = f"unavailable: the kernel refused the filter ({error})"
    return {**found, **dict.fromkeys(NAMESPACE_LAYERS, reason)}


if __name__ == "__main__":
    if sys.argv[1:2] == ["--probe"]:
        print(json.dumps(_probe()))
    elif sys.argv[1:2] == ["--launch"] and sys.argv[3:4] == ["--"]:
        _launch(json.loads(sys.argv[2]), sys.argv[4:])
    else:
        sys.exit("usage: launcher.py --probe | --launch CONFIG -- ARGV...")
