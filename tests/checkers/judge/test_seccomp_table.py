"""The seccomp filter's system-call numbers, checked against the kernel's own headers by name.

A wrong number in :data:`seccomp.SYSCALLS` would refuse a harmless call or let a harmful one through without
any other test noticing (most of these calls are never made by an honest submission). The headers of the
Linux API (Debian's ``linux-libc-dev``) name every number: x86_64's in ``asm/unistd_64.h``, aarch64's in the
generic table ``asm-generic/unistd.h``. Calls newer than the installed headers are named here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from attention_edu.checkers.judge import launcher as seccomp

HEADERS = {"x86_64": "/usr/include/x86_64-linux-gnu/asm/unistd_64.h", "aarch64": "/usr/include/asm-generic/unistd.h"}
NEWER = {452: "fchmodat2", 463: "setxattrat", 464: "getxattrat", 465: "listxattrat",   # Linux 6.6 and 6.13:
         466: "removexattrat"}                                                        # the same on both
DENIED = {
    "socket", "fork", "vfork", "tkill", "pidfd_send_signal", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "chmod", "fchmod", "fchmodat", "chown", "fchown", "lchown", "fchownat", "utime", "utimes", "futimesat",
    "utimensat", "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr", "truncate",
    "getxattr", "lgetxattr", "fgetxattr", "listxattr", "llistxattr", "flistxattr", "inotify_init", "inotify_init1",
    "inotify_add_watch", "inotify_rm_watch", "fanotify_init", "fanotify_mark",
    "shmget", "shmat", "shmctl", "shmdt", "semget", "semop", "semctl", "semtimedop", "msgget", "msgsnd", "msgrcv",
    "msgctl", "mq_open", "mq_unlink", "add_key", "request_key", "keyctl", "memfd_create", "memfd_secret", "socketpair",
    "fallocate", *NEWER.values()}
OWN_PID_ONLY = {"kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "pidfd_open"}
OWN_PID_OR_ZERO = {"prlimit64", "sched_setaffinity", "sched_setscheduler", "sched_setparam", "sched_setattr"}
WHO = {"setpriority": 0, "ioprio_set": 1}        # PRIO_PROCESS, IOPRIO_WHO_PROCESS


def names(header: str) -> dict[int, str]:
    """number -> name of every ``__NR_<name>`` the header defines (the generic table's 3264 aliases resolved)."""
    defined = dict(re.findall(r"^#define (__NR\w+)\s+(\w+)", Path(header).read_text(), re.M))
    found = {}
    for macro, value in defined.items():
        while value in defined:
            value = defined[value]
        if macro.startswith("__NR_") and value.isdigit():
            found.setdefault(int(value), macro[len("__NR_"):])
    return found


@pytest.mark.parametrize("machine", list(seccomp.SYSCALLS))
def test_every_number_is_the_call_it_is_meant_to_be(machine):
    if not Path(HEADERS[machine]).exists():
        pytest.skip(f"no {HEADERS[machine]} (Debian's linux-libc-dev) to read the numbers from")
    table = {**names(HEADERS[machine]), **NEWER}
    calls = seccomp.SYSCALLS[machine]
    assert [table[calls[n]] for n in ("clone", "clone3", "fcntl", "ioctl")] == ["clone", "clone3", "fcntl", "ioctl"]
    for key, expected in (("own", OWN_PID_ONLY), ("own_or_zero", OWN_PID_OR_ZERO)):
        assert {table[n] for n in calls[key]} == expected and len(calls[key]) == len(expected)
    assert {table[n]: which for n, which in calls["who"]} == WHO
    refused = [table[n] for n in calls["denied"]]
    assert len(refused) == len(set(refused)), "a number written twice"
    assert set(refused) == {name for name in DENIED if name in table.values()}, set(refused) ^ DENIED
