"""The seccomp filter the launcher puts on a worker just before it execs: the system calls a submission may not make.

Stdlib only, loaded by path as the launcher is. Each refusal closes a way around another layer (docs/teachers.md): a
new process (``fork``, ``vfork``, a ``clone`` without ``CLONE_THREAD``) would hold the memory limit again;
``socket(2)`` and io_uring (whose operations pass no filter) would reach a pathname unix socket or send UDP;
metadata changes (``chmod``, ``chown``, ``utime``, xattrs) would lock a classmate out, and ``truncate`` by path
would empty a classmate's file where Landlock is older than ABI 3 (Linux 6.2), which does not see it; System V IPC,
POSIX message queues and keyrings make objects that outlive the worker; a ``memfd_create`` or ``memfd_secret`` file
or a ``socketpair``'s queue holds memory no rlimit counts (16 MiB a file, ``wmem_max`` a socket: GBs in 256 open
files); a signal to another process (``kill`` and its kin, ``pidfd_open`` for a pid not its own, ``tkill``,
``pidfd_send_signal``, or another process named the owner of an fd's SIGIO) would stop or kill the grader where
neither a PID namespace nor Landlock ABI 6 hides it, and where no PID namespace hides it, Landlock does not see
another process's limits or scheduling either (``prlimit``, ``setpriority``, ``sched_setscheduler`` and their kin
for a pid not its own: the grader left no open file, no CPU second, or idle). Those fail with EACCES. ``clone3``,
whose flags a filter cannot read, fails with ENOSYS (glibc then starts its threads with ``clone``); a call of
another ABI (i386, x32) kills the process.
"""
from __future__ import annotations

import os
import struct
import sys

# Per machine (tests/checkers/judge/test_seccomp_table.py names every number): the calls whose args[0] must be the
# worker's own pid (kill, rt_sigqueueinfo, tgkill, rt_tgsigqueueinfo, pidfd_open), its own or 0 (prlimit64,
# sched_setaffinity, sched_setscheduler, sched_setparam, sched_setattr), those whose args[0] must be a constant and
# args[1] its own pid or 0 (setpriority: PRIO_PROCESS, ioprio_set: IOPRIO_WHO_PROCESS), and the calls denied.
SYSCALLS = {
    "x86_64": dict(arch=0xC000003E, clone=56, clone3=435, fcntl=72, ioctl=16, own=(62, 129, 234, 297, 434),
                   own_or_zero=(302, 203, 144, 142, 314), who=((141, 0), (251, 1)), denied=(
        41, 57, 58, 200, 424, 425, 426, 427,                  # socket, fork, vfork, tkill, pidfd_send_signal, io_uring
        76, *range(90, 95), 132, 235, 260, 261, 268, 280, 452,   # truncate, chmod, chown, utime and their kin
        *range(188, 191), *range(197, 200), 463, 466,         # the xattr calls
        *range(29, 32), *range(64, 72), 220, 240, 241, 248, 249, 250,     # System V IPC, mq_open, mq_unlink, keys
        53, 319, 447)),                                       # socketpair, memfd_create, memfd_secret
    "aarch64": dict(arch=0xC00000B7, clone=220, clone3=435, fcntl=25, ioctl=29, own=(129, 138, 131, 240, 434),
                    own_or_zero=(261, 122, 119, 118, 274), who=((140, 0), (30, 1)), denied=(
        198, 130, 424, 425, 426, 427,                         # socket, tkill, pidfd_send_signal, io_uring
        45, 52, 53, 54, 55, 88, 452,                          # truncate, chmod, chown, utime and their kin
        *range(5, 8), *range(14, 17), 463, 466,               # the xattr calls
        *range(180, 182), *range(186, 198), 217, 218, 219,    # mq_open, mq_unlink, System V IPC, keys
        199, 279, 447))}                                      # socketpair, memfd_create, memfd_secret
CAN_FILTER = sys.platform.startswith("linux") and os.uname().machine in SYSCALLS
_X32_SYSCALL_BIT, _CLONE_THREAD = 0x40000000, 0x10000
_SET_OWNER = ((8, 15), (0x8901, 0x8902))   # fcntl F_SETOWN(_EX), ioctl FIOSETOWN, SIOCSPGRP: who gets an fd's SIGIO
_RETURNS = {"allow": 0x7FFF0000, "deny": 0x50000 | 13, "kill": 0x80000000, "enosys": 0x50000 | 38}   # EACCES, ENOSYS


def program(pid: int) -> bytes:
    """This machine's filter as ``struct sock_filter`` entries; ``pid`` is the worker's own, as it sees it.

    >>> len(program(1)) % 8 == 0 and program(1) != program(2)
    True
    """
    calls = SYSCALLS[os.uname().machine]
    load, jump_eq, jump_ge, jump_set, ret = 0x20, 0x15, 0x35, 0x45, 0x06   # BPF_LD|W|ABS, BPF_JMP|JEQ|K, ...
    steps = [                       # (code, jump if true, jump if false, operand k); a name: that return
        (load, 0, 0, 4), (jump_eq, 0, "kill", calls["arch"]),         # seccomp_data.arch
        (load, 0, 0, 0), (jump_ge, "kill", 0, _X32_SYSCALL_BIT),      # seccomp_data.nr
        (jump_eq, 0, 2, calls["clone"]), (load, 0, 0, 16),            # clone (else on by 2): its flags
        (jump_set, "allow", "deny", _CLONE_THREAD),                   # (args[0], low half): a thread only
        (jump_eq, "enosys", 0, calls["clone3"]),                      # clone3: glibc falls back to clone
        *((jump_eq, "deny", 0, number) for number in calls["denied"]),
        *(step for number in calls["own"] for step in                 # args[0], low half: its own pid only
          ((jump_eq, 0, 2, number), (load, 0, 0, 16), (jump_eq, "allow", "deny", pid))),
        *(step for number in calls["own_or_zero"] for step in         # args[0]: its own pid, or 0 for itself
          ((jump_eq, 0, 3, number), (load, 0, 0, 16), (jump_eq, "allow", 0, 0), (jump_eq, "allow", "deny", pid))),
        *(step for number, which in calls["who"] for step in          # args[0]: a process; args[1]: itself
          ((jump_eq, 0, 5, number), (load, 0, 0, 16), (jump_eq, 0, "deny", which), (load, 0, 0, 24),
           (jump_eq, "allow", 0, 0), (jump_eq, "allow", "deny", pid))),
        *(step for number, (first, second) in zip((calls["fcntl"], calls["ioctl"]), _SET_OWNER) for step in
          ((jump_eq, 0, 3, number), (load, 0, 0, 24), (jump_eq, "deny", 0, first), (jump_eq, "deny", "allow", second)))]
    at = {name: len(steps) + i for i, name in enumerate(_RETURNS)}      # a jump's offset counts from i + 1
    steps = [(code, *(at[to] - i - 1 if isinstance(to, str) else to for to in jumps), k)
             for i, (code, *jumps, k) in enumerate(steps)] + [(ret, 0, 0, k) for k in _RETURNS.values()]
    return b"".join(struct.pack("=HBBI", *step) for step in steps)
