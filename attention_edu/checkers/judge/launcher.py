"""The sandbox's launcher, run by path (``python -I -S launcher.py``) for :mod:`.sandbox`; stdlib only.

It enters the namespaces an unprivileged user may (tmpfs over the private directory and, empty, the class's folder) and
forks the worker, PID 1 of the new PID namespace, which takes the rlimits, ``no_new_privs``, no capabilities and the
seccomp filter, then execs. When the worker ends, the judge sends SIGTERM or its lifeline closes (the judge died), the
launcher, a child subreaper, kills every descendant left and exits as the worker did. Outside Linux only rlimits apply.
"""
import contextlib
import ctypes
import json
import os
import re
import select
import signal
import struct
import sys

NAMESPACE_LAYERS = ("user-namespace", "pid-namespace", "net-namespace", "mount-namespace", "ipc-namespace")
_LINUX = sys.platform.startswith("linux")
_CLONE_NEWNS, _CLONE_NEWIPC, _CLONE_NEWUSER, _CLONE_NEWPID, _CLONE_NEWNET = 1 << 17, 1 << 27, 1 << 28, 1 << 29, 1 << 30
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, _PR_SET_SECCOMP, _PR_SET_CHILD_SUBREAPER, _PR_SET_NO_NEW_PRIVS = 1, 4, 22, 36, 38
_CAPABILITY_VERSION_3 = 0x20080522    # capset(2): a header (version, pid), then two sets of three 32-bit masks

# The seccomp filter refuses (EACCES) what gets around another layer: a process (a fresh memory limit); socket(2),
# socketpairs and io_uring (no filter sees into them); metadata changes, truncate, xattrs, watches (inotify, fanotify,
# dnotify, leases: no Landlock check; a watch names files opened); System V IPC, POSIX queues, keys (they outlive it);
# memfds, fallocate and its ioctls (memory or disk no rlimit counts); a signal, SIGIO, limits or scheduling aimed at
# another process; a terminal ioctl that changes it. clone3 (flags out of a filter's reach): ENOSYS; another ABI: kill.
SYSCALLS = {     # per machine, each number checked by test_seccomp_table.py; own, own_or_zero, who: name only itself
    "x86_64": dict(arch=0xC000003E, clone=56, clone3=435, fcntl=72, ioctl=16, own=(62, 129, 234, 297, 434),
                   own_or_zero=(302, 203, 144, 142, 314), who=((141, 0), (251, 1)), denied=(
        41, 57, 58, 200, 424, 425, 426, 427,                  # socket, fork, vfork, tkill, pidfd_send_signal, io_uring
        76, *range(90, 95), 132, 235, 260, 261, 268, 280, 452,   # truncate, chmod, chown, utime and their kin
        *range(188, 200), *range(463, 467), 253, 254, 255, 294, 300, 301,    # xattrs, inotify, fanotify
        *range(29, 32), *range(64, 72), 220, 240, 241, 248, 249, 250,     # System V IPC, mq_open, mq_unlink, keys
        53, 319, 447, 285)),                                  # socketpair, memfd_create, memfd_secret, fallocate
    "aarch64": dict(arch=0xC00000B7, clone=220, clone3=435, fcntl=25, ioctl=29, own=(129, 138, 131, 240, 434),
                    own_or_zero=(261, 122, 119, 118, 274), who=((140, 0), (30, 1)), denied=(
        198, 130, 424, 425, 426, 427,                         # socket, tkill, pidfd_send_signal, io_uring
        45, 52, 53, 54, 55, 88, 452,                          # truncate, chmod, chown, utime and their kin
        *range(5, 17), *range(463, 467), 26, 27, 28, 262, 263,         # xattrs, inotify, fanotify
        *range(180, 182), *range(186, 198), 217, 218, 219,    # mq_open, mq_unlink, System V IPC, keys
        199, 279, 447, 47))}                                  # socketpair, memfd_create, memfd_secret, fallocate
CAN_FILTER = _LINUX and os.uname().machine in SYSCALLS
_X32_SYSCALL_BIT, _CLONE_THREAD, _SECCOMP_MODE_FILTER = 0x40000000, 0x10000, 2
_REFUSED_ARGS = ((8, 15, 1024, 1026), (0x8901, 0x8902, 0x40305828, 0x4030582A, 0x4030583D))   # fcntl's, ioctl's: above
_TERMINAL_READS = (0x5401, 0x540F, 0x5413, 0x541B, 0x5421, 0x5450, 0x5451, 0x80045430, 0x40045431)  # isatty... openpty
_RETURNS = {"allow": 0x7FFF0000, "deny": 0x50000 | 13, "kill": 0x80000000, "enosys": 0x50000 | 38}   # EACCES, ENOSYS


def _libc_call(name: str, *args: int | bytes) -> None:
    if getattr(ctypes.CDLL(None, use_errno=True), name)(*(a if type(a) is bytes else ctypes.c_ulong(a) for a in args)):
        raise OSError(err := ctypes.get_errno(), f"{name}{args}: {os.strerror(err)}")


def prctl(option: int, value: int) -> None:
    """``prctl(option, value)`` on Linux, elsewhere nothing: ``PR_SET_DUMPABLE`` or ``PR_SET_PDEATHSIG`` here."""
    if _LINUX:
        _libc_call("prctl", option, value, 0, 0, 0)


def _enter_namespaces(disk_mb: int, hide: str = "") -> str:
    """``unshare(2)`` by ctypes (3.11 has no ``os.unshare``), uid and gid mapped onto themselves, a tmpfs over the
    working directory, an empty read-only one over ``hide`` (neither propagates out: mount_namespaces(7)); "active", or
    why not."""
    uid, gid, private = os.geteuid(), os.getegid(), os.getcwd()
    try:
        _libc_call("unshare", _CLONE_NEWUSER | _CLONE_NEWPID | _CLONE_NEWNET | _CLONE_NEWNS | _CLONE_NEWIPC)
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
            with open(f"/proc/self/{name}", "w") as file:
                file.write(text)
        _libc_call("mount", b"tmpfs", os.fsencode(private), b"tmpfs", 2 | 4 | 8,   # MS_NOSUID | MS_NODEV | MS_NOEXEC
                   f"size={disk_mb}m,nr_inodes={64 * disk_mb},mode=700".encode())
        os.chdir(private)               # into the tmpfs, which now hides the directory
    except OSError as error:
        return (f"unavailable: an unprivileged user may not create namespaces here ({error};"
                " see user.max_user_namespaces, kernel.unprivileged_userns_clone, AppArmor)")
    with contextlib.suppress(OSError):  # the class's files, kept from os.stat (red team 53); none, or gone: uncovered
        _libc_call("mount", b"tmpfs", os.fsencode(hide), b"tmpfs", 1 | 2 | 4 | 8, b"size=4k,nr_inodes=16")  # MS_RDONLY
    return "active"


def deny_calls() -> str:
    """Put this machine's seccomp filter on this process for good (the worker's: it holds across exec); ``"active"``,
    or why not. A call that names a process may name only this one, by the pid it sees as its own."""
    if not CAN_FILTER:
        return f"unavailable: {sys.platform} {os.uname().machine}"
    calls, pid = SYSCALLS[os.uname().machine], os.getpid()
    load, jump_eq, jump_ge, jump_set, ret = 0x20, 0x15, 0x35, 0x45, 0x06   # BPF_LD|W|ABS, BPF_JMP|JEQ|K, ...
    arg0, arg1 = (load, 0, 0, 16), (load, 0, 0, 24)    # the low halves of seccomp_data.args[0] and args[1]
    steps = [     # (code, jump if true, jump if false, operand k): a jump skips that many steps, or to a named return
        (load, 0, 0, 4), (jump_eq, 0, "kill", calls["arch"]),         # seccomp_data.arch
        (load, 0, 0, 0), (jump_ge, "kill", 0, _X32_SYSCALL_BIT),      # seccomp_data.nr
        (jump_eq, 0, 2, calls["clone"]), arg0, (jump_set, "allow", "deny", _CLONE_THREAD),   # clone: a thread only
        (jump_eq, "enosys", 0, calls["clone3"]),                      # clone3: glibc falls back to clone
        *((jump_eq, "deny", 0, number) for number in calls["denied"])]
    for number in calls["own"]:                     # args[0]: its own pid only
        steps += [(jump_eq, 0, 2, number), arg0, (jump_eq, "allow", "deny", pid)]
    for number in calls["own_or_zero"]:             # args[0]: its own pid, or 0 for itself
        steps += [(jump_eq, 0, 3, number), arg0, (jump_eq, "allow", 0, 0), (jump_eq, "allow", "deny", pid)]
    for number, which in calls["who"]:              # args[0]: a process (PRIO_PROCESS...); args[1]: itself, or 0
        steps += [(jump_eq, 0, 5, number), arg0, (jump_eq, 0, "deny", which), arg1, (jump_eq, "allow", 0, 0),
                  (jump_eq, "allow", "deny", pid)]
    (*fcntl, last), refused = _REFUSED_ARGS                                # args[1]: not those, and for ioctl
    ioctl = [arg1, *((jump_eq, "deny", 0, k) for k in refused), *((jump_eq, "allow", 0, k) for k in _TERMINAL_READS),
             (0x54, 0, 0, 0xFF00), (jump_eq, "deny", 0, 0x5400), (jump_eq, "deny", 0, 0x4B00),
             (jump_eq, "deny", "allow", 0x5600)]   # BPF_ALU|AND|K: no other terminal, console or VT ioctl
    steps += [(jump_eq, 0, len(fcntl) + 2, calls["fcntl"]), arg1, *((jump_eq, "deny", 0, k) for k in fcntl),
              (jump_eq, "deny", "allow", last), (jump_eq, 0, len(ioctl), calls["ioctl"]), *ioctl]
    at = {name: len(steps) + i for i, name in enumerate(_RETURNS)}      # a jump's offset counts from i + 1
    steps = [(code, *(at[to] - i - 1 if isinstance(to, str) else to for to in jumps), k)
             for i, (code, *jumps, k) in enumerate(steps)] + [(ret, 0, 0, k) for k in _RETURNS.values()]
    code = b"".join(struct.pack("=HBBI", *step) for step in steps)      # struct sock_filter entries
    buffer = ctypes.create_string_buffer(code, len(code))
    fprog = ctypes.create_string_buffer(struct.pack("HP", len(code) // 8, ctypes.addressof(buffer)))
    try:
        _libc_call("prctl", _PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)         # which a filter needs (or CAP_SYS_ADMIN)
        _libc_call("prctl", _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0)
    except OSError as error:            # a kernel without seccomp filters: the worker goes on without
        return f"unavailable: the kernel refused the filter ({error})"
    return "active"


def _process_limit(processes: int, namespaces: bool) -> int:
    """RLIMIT_NPROC for ``processes`` more. Outside a user namespace it counts all the user's tasks: add them. In its
    own, uid 0 is exempt from it: cap pid_max, per PID namespace from Linux 6.14 (before, the host's: left alone)."""
    if namespaces:
        release = re.match(r"(\d+)\.(\d+)", os.uname().release)
        if os.getuid() == 0 and release and tuple(map(int, release.groups())) >= (6, 14):
            with contextlib.suppress(OSError), open("/proc/sys/kernel/pid_max", "w") as file:
                file.write(str(max(301, processes + 2)))     # 301: the kernel's floor; failing: no bound, no harm
        return processes
    # not self and thread-self (counted already); none without /proc (macOS: the worker, which needs none, starts few)
    for entry in filter(str.isdigit, os.listdir("/proc") if os.path.isdir("/proc") else []):
        with contextlib.suppress(OSError, ValueError, KeyError), open(f"/proc/{entry}/status") as file:
            fields = dict(line.split(":", 1) for line in file if ":" in line)
            processes += int(fields["Uid"].split()[0]) == os.getuid() and int(fields["Threads"])
    return processes


def _limit_and_exec(argv: list[str], config: dict, namespaces: bool) -> None:
    """In the worker: the rlimits, no capabilities and the filter, then report the layers and exec ``argv``."""
    import resource     # POSIX only: imported here, so that the package and its CLI import on Windows
    limits, layers = config["limits"], list(NAMESPACE_LAYERS) if namespaces else []
    processes, memory = _process_limit(limits["processes"], namespaces), limits["memory_mb"] << 20
    for kind, value in ((resource.RLIMIT_DATA, memory),
                        (resource.RLIMIT_AS, memory + (1 << 30)),    # 1 GiB for reserved, never-touched mappings
                        (resource.RLIMIT_FSIZE, limits["file_size_mb"] << 20),
                        (resource.RLIMIT_NOFILE, limits["open_files"]),
                        (resource.RLIMIT_NPROC, processes), (resource.RLIMIT_CORE, 0)):
        hard = resource.getrlimit(kind)[1]
        resource.setrlimit(kind, (value,) * 2 if hard == resource.RLIM_INFINITY else (min(value, hard),) * 2)
    resource.setrlimit(resource.RLIMIT_CPU, (limits["cpu_seconds"], limits["cpu_seconds"] + 1))  # SIGXCPU, SIGKILL
    if _LINUX:
        _libc_call("prctl", _PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        _libc_call("capset", struct.pack("Ii", _CAPABILITY_VERSION_3, 0), bytes(24))  # none: under no_new_privs
        # exec grants uid 0 none again, with no CAP_SETPCAP needed (SECBIT_NOROOT needed it: a container's root)
        if config["seccomp"] and deny_calls() == "active":
            layers.append("seccomp")
    with os.fdopen(config["status_fd"], "w") as file:   # the layers as they are, just before exec
        json.dump({"layers": [*layers, "rlimits"]}, file)
    os.execvp(argv[0], argv)


def process_stats() -> dict[int, list[str]]:
    """pid -> the fields of ``/proc/<pid>/stat`` after the command name (state, ppid, pgrp, session, ...)."""
    stats = {}
    for entry in filter(str.isdigit, os.listdir("/proc") if os.path.isdir("/proc") else []):
        with contextlib.suppress(OSError, IndexError), open(f"/proc/{entry}/stat") as file:
            stats[int(entry)] = file.read().rsplit(")", 1)[1].split()
    return stats


def _kill_descendants() -> None:
    """Kill every child until none is left; orphans reparent to us (subreaper) meanwhile."""
    while True:
        try:
            with open(f"/proc/self/task/{os.getpid()}/children") as file:
                children = [int(pid) for pid in file.read().split()]
        except OSError:     # a kernel without CONFIG_PROC_CHILDREN: scan every process (outside Linux: none)
            children = [pid for pid, fields in process_stats().items() if fields[1] == str(os.getpid())]
        for pid in children:
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
        while (reaped := os.waitpid(-1, os.WNOHANG))[0]:       # reap orphans as they end, too
            if reaped[0] == worker:
                return reaped[1]


def _launch(config: dict, argv: list[str]) -> None:
    namespaces = config["namespaces"] and _enter_namespaces(config["limits"]["disk_mb"], config["hide"]) == "active"
    prctl(_PR_SET_CHILD_SUBREAPER, 1)
    prctl(PR_SET_DUMPABLE, 0)       # a worker of this user (dumpable after exec) cannot ptrace it or write its memory
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
            prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            if os.read(sync_r, 1) != b"1":          # the launcher died before prctl took hold
                os._exit(125)
            for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGCHLD):
                signal.signal(number, signal.SIG_DFL)
            _limit_and_exec(argv, config, namespaces)
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


if __name__ == "__main__":
    if sys.argv[1:2] == ["--probe"]:    # for sandbox.available_layers, in a throw-away process: the filter last
        namespaces = _enter_namespaces(1) if _LINUX else f"unavailable: {sys.platform}"
        print(json.dumps({"seccomp": deny_calls(), **dict.fromkeys(NAMESPACE_LAYERS, namespaces)}))
    elif sys.argv[1:2] == ["--launch"] and sys.argv[3:4] == ["--"]:
        _launch(json.loads(sys.argv[2]), sys.argv[4:])
    else:
        sys.exit("usage: launcher.py --probe | --launch CONFIG -- ARGV...")
