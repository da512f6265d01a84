"""Linux Landlock through ctypes: a process takes away its own file, network and signal rights.

Landlock (Linux >= 5.13) lets an unprivileged process restrict itself and all its future
children; nothing it does afterwards can undo the restriction. The student's interpreter calls
:func:`restrict` once, before it loads the submission, and from then on:

* **files**: it can read (and execute) only beneath the ``read`` paths (the Python installation,
  its own submission) and write, create, rename or remove only beneath the ``write`` directories
  (its private directory). The submissions folder, the gradebook, the package source, the home
  directory, the grader's working directory and ``/proc/<pid>/fd`` of other processes are out of
  reach; so are ``mount`` and ``pivot_root``.
* **network** (ABI >= 4): TCP ``bind`` and ``connect`` are denied on every port.
* **scopes** (ABI >= 6): it cannot signal a process outside its own Landlock domain (the
  judge, the launcher) nor connect to abstract unix sockets created outside it.
* ``ptrace`` of a process outside the domain is denied by every ABI.

What it does NOT stop (up to ABI 7): reading or writing through file descriptors it already
holds (its pipes), metadata changes (``chmod``, ``chown``, ``utime``) of files its user owns,
connecting to a unix socket by its path (a desktop's D-Bus, ``docker.sock``), UDP, and memory
or CPU use: the launcher's seccomp filter, namespaces and rlimits cover those (``sandbox.py``).
The restriction applies to the calling thread and threads it starts later, so call
:func:`restrict` before any thread is started (before importing NumPy, whose BLAS starts
threads). This module imports only the standard library: the student's interpreter loads it
by file path without the ``attention_edu`` package in memory.

The constants follow the kernel's ``include/uapi/linux/landlock.h`` and
``Documentation/userspace-api/landlock.rst``.
"""
from __future__ import annotations

import ctypes
import os
import platform
import sys
import sysconfig
from typing import Sequence

_SYSCALLS = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446)}
_CREATE_RULESET_VERSION = 1 << 0
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

# File-system access rights, in bit order: (name, bit, first ABI that knows it).
_FS_RIGHTS = (
    ("EXECUTE", 1 << 0, 1), ("WRITE_FILE", 1 << 1, 1), ("READ_FILE", 1 << 2, 1),
    ("READ_DIR", 1 << 3, 1), ("REMOVE_DIR", 1 << 4, 1), ("REMOVE_FILE", 1 << 5, 1),
    ("MAKE_CHAR", 1 << 6, 1), ("MAKE_DIR", 1 << 7, 1), ("MAKE_REG", 1 << 8, 1),
    ("MAKE_SOCK", 1 << 9, 1), ("MAKE_FIFO", 1 << 10, 1), ("MAKE_BLOCK", 1 << 11, 1),
    ("MAKE_SYM", 1 << 12, 1), ("REFER", 1 << 13, 2), ("TRUNCATE", 1 << 14, 3),
    ("IOCTL_DEV", 1 << 15, 5),
)
FS = {name: bit for name, bit, _ in _FS_RIGHTS}
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1          # ABI >= 4
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI >= 6

# Where compiled extensions find their shared libraries, and the few devices Python opens.
_SYSTEM_READ = ("/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/local/lib", "/etc/ld.so.cache",
                "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/dev/null", "/dev/zero", "/dev/urandom")
_READ = FS["EXECUTE"] | FS["READ_FILE"] | FS["READ_DIR"]
_FILE_ONLY = FS["EXECUTE"] | FS["WRITE_FILE"] | FS["READ_FILE"] | FS["TRUNCATE"] | FS["IOCTL_DEV"]
_NEVER = FS["MAKE_CHAR"] | FS["MAKE_BLOCK"] | FS["IOCTL_DEV"]   # devices stay out of reach


class LandlockUnavailable(OSError):
    """Landlock cannot be applied here; ``str()`` says why (old kernel, other OS, disabled)."""


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64),
                ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1                         # the kernel's struct is __attribute__((packed)): 12 bytes
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def _syscall(number: int, *args) -> int:
    """Call a raw system call; raise OSError with the errno on failure."""
    result = _libc().syscall(ctypes.c_long(number), *args)
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return result


def _numbers() -> tuple[int, int, int] | None:
    if not sys.platform.startswith("linux"):
        return None
    return _SYSCALLS.get(platform.machine())


def abi_version() -> int:
    """The Landlock ABI version of the running kernel, 0 when there is none.

    Returns
    -------
    int
        1 (Linux 5.13) and up; 0 on other operating systems, unknown machines, kernels built
        without Landlock or booted with it disabled.

    Examples
    --------
    >>> abi_version() >= 0
    True
    """
    numbers = _numbers()
    if numbers is None:
        return 0
    try:
        return _syscall(numbers[0], None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    except OSError:          # ENOSYS: not built in; EOPNOTSUPP: disabled at boot
        return 0


def interpreter_paths() -> list[str]:
    """What this interpreter needs to read to import the standard library and NumPy.

    The installation's prefixes and ``sysconfig`` paths (so site-packages: a package installed
    there, not in editable mode, is readable too), the system's library directories and the
    dynamic loader's cache. Pass it, plus the submission, as :func:`restrict`'s ``read``.

    Examples
    --------
    >>> sys.base_prefix in interpreter_paths()
    True
    """
    paths = {sys.base_prefix, sys.base_exec_prefix, sys.prefix, sys.exec_prefix, *_SYSTEM_READ}
    paths |= {sysconfig.get_path(name) for name in ("stdlib", "platstdlib", "purelib", "platlib")}
    return sorted(path for path in paths if path and os.path.exists(path))


def handled_rights(abi: int) -> tuple[int, int, int]:
    """The (fs, net, scoped) rights that ABI ``abi`` knows; a ruleset handles exactly these."""
    fs = sum(bit for _, bit, first in _FS_RIGHTS if abi >= first)
    net = NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0
    return fs, net, scoped


def _add_path(ruleset: int, path: str, access: int, add_rule: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except FileNotFoundError:
        return                                    # documented: missing paths are skipped
    try:
        if not os.path.isdir(path):
            access &= _FILE_ONLY                  # a file rule may hold only file rights
        rule = _PathBeneathAttr(access, fd)
        _syscall(add_rule, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH),
                 ctypes.byref(rule), ctypes.c_uint32(0))
    finally:
        os.close(fd)


def restrict(read: Sequence[str], write: Sequence[str]) -> int:
    """Restrict the calling thread, and every process it starts, to ``read`` and ``write``.

    Parameters
    ----------
    read : sequence of str
        Files or directories readable (and executable) beneath; missing ones are skipped.
    write : sequence of str
        Directories where reading, writing, creating, renaming and removing are allowed.

    Returns
    -------
    int
        The ABI applied. TCP ``bind``/``connect`` are denied from ABI 4; signals and abstract
        unix sockets leaving the domain from ABI 6. ``PR_SET_NO_NEW_PRIVS`` is set.

    Raises
    ------
    LandlockUnavailable
        When the kernel or OS has no Landlock, or a step fails; nothing is restricted then
        except possibly ``no_new_privs``.
    """
    if isinstance(read, (str, bytes)) or isinstance(write, (str, bytes)):
        raise TypeError("restrict: read and write must be sequences of paths, not one string")
    abi = abi_version()
    numbers = _numbers()
    if abi < 1 or numbers is None:
        raise LandlockUnavailable(f"Landlock is not available ({platform.system()} "
                                  f"{platform.release()}, {platform.machine()})")
    create, add_rule, restrict_self = numbers
    fs, net, scoped = handled_rights(abi)
    attr = _RulesetAttr(fs, net, scoped)
    try:
        ruleset = _syscall(create, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)),
                           ctypes.c_uint32(0))
    except OSError as error:
        raise LandlockUnavailable(f"landlock_create_ruleset failed: {error.strerror}") from error
    try:
        for path in read:
            _add_path(ruleset, os.fspath(path), _READ & fs, add_rule)
        for path in write:
            _add_path(ruleset, os.fspath(path), fs & ~_NEVER, add_rule)
        # net: no rule at all, so every port is denied for bind and connect
        if _libc().prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err))
        _syscall(restrict_self, ctypes.c_int(ruleset), ctypes.c_uint32(0))
    except OSError as error:
        raise LandlockUnavailable(f"Landlock rules could not be applied: {error}") from error
    finally:
        os.close(ruleset)
    return abi
