"""The operating-system sandbox, attacked end to end: every test runs a hostile worker for real.

Each attack runs as a child interpreter through ``sandbox.spawn`` (with and without namespaces)
and, where the attack is one Landlock stops, after ``worker.restrict`` loaded by path, as the
student's interpreter does. Each attack has a control beside it (the same move on a place it
may reach succeeds), so a test fails when a layer is missing, not only when the attack works.
A test skips only where this kernel lacks the layer, and says so. The seccomp filter refuses a
new process: the tests of the kill sweeps and of the process bound fork on purpose, so they run
with ``seccomp=False``, testing the other layers alone.
"""

from __future__ import annotations

import ast
import ctypes
import json
import os
import re
import signal
import socket
import subprocess
import sys
import sysconfig
import textwrap
import time
import uuid
from pathlib import Path

import numpy
import pytest

from attention_edu.checkers.judge import sandbox, worker
from attention_edu.checkers.judge.sandbox import Limits, landlock_abi, package_dirs, readable, spawn
from tests.conftest import ipc_left, processes_with

ROOT = Path(__file__).resolve().parents[3]
JUDGE = ROOT / "attention_edu" / "checkers" / "judge"
SITE = str(Path(numpy.__file__).parents[1])         # NumPy and landlockpy, which worker.py imports
LAYERS = sandbox.available_layers()
needs_landlock = pytest.mark.skipif(
    landlock_abi() < 1, reason=f"landlock: {LAYERS['landlock']}")
needs_namespaces = pytest.mark.skipif(
    not LAYERS["pid-namespace"].startswith("active"), reason=f"namespaces: {LAYERS['pid-namespace']}")
needs_seccomp = pytest.mark.skipif(
    not LAYERS["seccomp"].startswith("active"), reason=f"seccomp: {LAYERS['seccomp']}")
both_modes = pytest.mark.parametrize("namespaces", [
    pytest.param(True, marks=needs_namespaces, id="namespaces"),
    pytest.param(False, id="fallback")])

# The hostile worker's first lines: load worker.py by path and restrict (where asked), then
# report each attempt as one JSON line [name, "done" | "<errno name>"].
PRELUDE = f"""
import errno, importlib.util, json, os, sys
ARGS = json.loads(sys.argv[1])
def load_worker():
    sys.path.append({SITE!r})
    spec = importlib.util.spec_from_file_location("worker", {str(JUDGE / "worker.py")!r})
    worker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(worker)
    return worker
if ARGS["landlock"]:
    load_worker().restrict(ARGS["read"], [os.getcwd()])
def attempt(name, action):
    try:
        action()
        outcome = "done"
    except OSError as error:
        outcome = errno.errorcode.get(error.errno, str(error))
    except MemoryError:
        outcome = "MemoryError"
    print(json.dumps([name, outcome]), flush=True)
"""


def run_attack(body: str, private: Path, *, namespaces: bool, use_landlock: bool = True,
               limits: Limits = Limits(), timeout: float = 60, site: bool = False,
               seccomp: bool = True, **args) -> tuple[dict, object]:
    """Run PRELUDE + body sandboxed in ``private``; the attempts' outcomes and the process."""
    private.mkdir(exist_ok=True)
    args = {"landlock": use_landlock, "read": [sys.base_prefix, sys.prefix], **args}
    code = PRELUDE + textwrap.dedent(body)
    flags = ["-I"] if site else ["-I", "-S"]
    with spawn([sys.executable, *flags, "-c", code, json.dumps(args)], cwd=str(private),
               env={"PATH": os.defpath}, limits=limits, namespaces=namespaces,
               seccomp=seccomp) as sandboxed:
        out, err = sandboxed.process.communicate(timeout=timeout)
    outcomes = dict(json.loads(line) for line in out.decode().splitlines() if line.startswith("["))
    assert outcomes or sandboxed.process.returncode != 0, err.decode()
    return outcomes, sandboxed.process


@pytest.fixture
def classroom(tmp_path):
    """A class folder with two submissions, a grader's working directory and a private one."""
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "alice.py").write_text("def softmax(x): return x\n")
    (tmp_path / "class" / "bob.py").write_text("SECRET = 'bob'\n")
    (tmp_path / "grader").mkdir()
    return tmp_path


# ------------------------------------------------------------------ Landlock: files

@needs_landlock
@both_modes
def test_a_student_reads_only_its_own_submission_and_the_interpreter(classroom, namespaces):
    body = """
    attempt("own submission", lambda: open(ARGS["own"]).read())
    attempt("stdlib import", lambda: __import__("socket"))
    attempt("classmate", lambda: open(ARGS["classmate"]).read())
    attempt("class folder listing", lambda: os.listdir(ARGS["folder"]))
    attempt("home", lambda: os.listdir(ARGS["home"]))
    attempt("package source", lambda: open(ARGS["package"]).read())
    attempt("/etc/passwd", lambda: open("/etc/passwd").read())
    """
    own = str(classroom / "class" / "alice.py")
    outcomes, _ = run_attack(
        body, classroom / "private", namespaces=namespaces,
        read=[sys.base_prefix, sys.prefix, own], own=own, folder=str(classroom / "class"),
        classmate=str(classroom / "class" / "bob.py"), home=str(Path.home()),
        package=str(ROOT / "attention_edu" / "checkers" / "judge" / "sandbox.py"))
    assert outcomes["own submission"] == outcomes["stdlib import"] == "done"
    for name in ("classmate", "class folder listing", "home", "package source", "/etc/passwd"):
        assert outcomes[name] == "EACCES", (name, outcomes)


@needs_landlock
@both_modes
def test_a_student_writes_only_its_private_directory(classroom, namespaces):
    body = """
    attempt("private file", lambda: open("work.txt", "w").write("mine"))
    attempt("private rename", lambda: os.rename("work.txt", "done.txt"))
    attempt("overwrite classmate", lambda: open(ARGS["classmate"], "w").write("x = 0"))
    attempt("remove classmate", lambda: os.unlink(ARGS["classmate"]))
    attempt("shlex.py in the grader's cwd", lambda: open(ARGS["grader"] + "/shlex.py", "w"))
    attempt("gradebook", lambda: open(ARGS["grader"] + "/grades.csv", "a").write("eve,1"))
    attempt("move own into class", lambda: os.rename("done.txt", ARGS["grader"] + "/x.py"))
    """
    grader, classmate = classroom / "grader", classroom / "class" / "bob.py"
    outcomes, _ = run_attack(body, classroom / "private", namespaces=namespaces,
                             classmate=str(classmate), grader=str(grader))
    assert outcomes["private file"] == outcomes["private rename"] == "done"
    for name in ("overwrite classmate", "remove classmate", "shlex.py in the grader's cwd",
                 "gradebook"):
        assert outcomes[name] == "EACCES", (name, outcomes)
    assert outcomes["move own into class"] in ("EACCES", "EXDEV")
    assert classmate.read_text() == "SECRET = 'bob'\n"
    assert list(grader.iterdir()) == []
    # with namespaces the writes went to the worker's own tmpfs over the directory, gone with it
    held = [] if namespaces else ["done.txt"]
    assert sorted(p.name for p in (classroom / "private").iterdir()) == held


METADATA = """
attempt("chmod classmate", lambda: os.chmod(ARGS["classmate"], 0))
attempt("utime classmate", lambda: os.utime(ARGS["classmate"], (0, 0)))
attempt("chmod grader's cwd", lambda: os.chmod(ARGS["grader"], 0))
attempt("xattr classmate", lambda: os.setxattr(ARGS["classmate"], "user.grade", b"A"))
"""


@needs_seccomp
@both_modes
def test_a_student_cannot_lock_out_a_classmate_by_metadata(classroom, namespaces):
    """Landlock (ABI <= 7) lets chmod/utime/xattrs through by any path: ``chmod 000`` on a
    classmate's submission would fail that classmate's row. The seccomp filter stops it."""
    classmate, grader = classroom / "class" / "bob.py", classroom / "grader"
    before = classmate.stat(), grader.stat()
    arguments = dict(classmate=str(classmate), grader=str(grader))
    outcomes, _ = run_attack(METADATA, classroom / "private", namespaces=namespaces,
                             **arguments)
    assert set(outcomes.values()) == {"EACCES"}, outcomes
    after = classmate.stat(), grader.stat()
    assert [(s.st_mode, s.st_mtime_ns) for s in after] == [(s.st_mode, s.st_mtime_ns)
                                                           for s in before]
    control, _ = run_attack(METADATA, classroom / "control", namespaces=namespaces,
                            seccomp=False, **arguments)          # Landlock alone: it works
    assert control["chmod classmate"] == "done" and classmate.stat().st_mode & 0o777 == 0
    classmate.chmod(0o644), grader.chmod(0o755)


# ------------------------------------------------------------------ network

@pytest.fixture
def server():
    """A TCP server listening on 127.0.0.1 only, never accepting by itself."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.setblocking(False)
        yield listener


def someone_connected(listener: socket.socket) -> bool:
    try:
        listener.accept()[0].close()
        return True
    except BlockingIOError:
        return False


CONNECT = """
import socket
def connect():
    with socket.create_connection(("127.0.0.1", ARGS["port"]), timeout=2):
        pass
attempt("connect", connect)
"""


@pytest.mark.parametrize("namespaces, use_landlock, seccomp, refusal", [
    pytest.param(False, True, False, "EACCES", marks=needs_landlock, id="landlock-alone"),
    pytest.param(True, False, False, "ENETUNREACH", marks=needs_namespaces,
                 id="net-namespace-alone"),
    pytest.param(False, False, True, "EACCES", marks=needs_seccomp, id="seccomp-alone"),
])
def test_a_student_cannot_reach_a_server_on_loopback(tmp_path, server, namespaces,
                                                     use_landlock, seccomp, refusal):
    if use_landlock and landlock_abi() < 4:
        pytest.skip(f"Landlock ABI {landlock_abi()} < 4 has no TCP rules")
    outcomes, _ = run_attack(CONNECT, tmp_path / "private", namespaces=namespaces,
                             use_landlock=use_landlock, seccomp=seccomp,
                             port=server.getsockname()[1])
    assert outcomes["connect"] == refusal
    assert not someone_connected(server)


def test_the_network_attack_is_a_real_one(tmp_path, server):
    """Control: with no layer at all, the same worker does connect."""
    outcomes, _ = run_attack(CONNECT, tmp_path / "private", namespaces=False,
                             use_landlock=False, seccomp=False, port=server.getsockname()[1])
    assert outcomes["connect"] == "done"
    assert someone_connected(server)


UNIX_AND_UDP = """
import socket
def unix():
    with socket.socket(socket.AF_UNIX) as client:
        client.connect(ARGS["path"])
def udp():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as client:
        client.sendto(b"forged row", ("127.0.0.1", ARGS["port"]))
attempt("unix socket by path", unix)
attempt("udp", udp)
attempt("socketpair", lambda: socket.socketpair()[0].close())
"""


@needs_seccomp
@both_modes
def test_a_student_reaches_no_unix_socket_and_sends_no_udp(tmp_path, namespaces):
    """Landlock (ABI <= 7) and the network namespace let a pathname unix socket through (a
    desktop's D-Bus, docker.sock); the seccomp filter stops it, and UDP, in both modes."""
    path = tmp_path / "service.sock"
    with socket.socket(socket.AF_UNIX) as service, \
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        service.bind(str(path))
        service.listen(1)
        service.setblocking(False)
        udp.bind(("127.0.0.1", 0))
        udp.setblocking(False)
        arguments = dict(path=str(path), port=udp.getsockname()[1])
        outcomes, _ = run_attack(UNIX_AND_UDP, tmp_path / "private", namespaces=namespaces,
                                 **arguments)
        assert outcomes == {"unix socket by path": "EACCES", "udp": "EACCES",
                            "socketpair": "EACCES"}
        assert not someone_connected(service)
        with pytest.raises(BlockingIOError):
            udp.recv(64)
        control, _ = run_attack(UNIX_AND_UDP, tmp_path / "control", namespaces=namespaces,
                                seccomp=False, **arguments)
        assert control["unix socket by path"] == "done" and someone_connected(service)


URING_SOCKET = """
import ctypes, mmap, socket, struct
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def uring_socket():
    # socket(AF_UNIX, SOCK_STREAM) as io_uring's IORING_OP_SOCKET, never as socket(2)
    params = ctypes.create_string_buffer(120)                       # struct io_uring_params
    ring_fd = libc.syscall(425, 4, params)                          # io_uring_setup, 4 entries
    if ring_fd < 0:
        raise OSError(ctypes.get_errno(), "io_uring_setup")
    sq_entries, cq_entries = struct.unpack_from("II", params, 0)
    _, sq_tail, sq_mask, _, _, _, sq_array = struct.unpack_from("7I", params, 40)
    cq_head, _, cq_mask, _, _, cqes = struct.unpack_from("6I", params, 80)
    both = mmap.PROT_READ | mmap.PROT_WRITE
    ring = mmap.mmap(ring_fd, max(sq_array + 4 * sq_entries, cqes + 16 * cq_entries), mmap.MAP_SHARED, both)
    sqes = mmap.mmap(ring_fd, 64 * sq_entries, mmap.MAP_SHARED, both, offset=0x10000000)
    sqes[:32] = struct.pack("BBHiQQI4x", 45, 0, 0, socket.AF_UNIX, socket.SOCK_STREAM, 0, 0)   # IORING_OP_SOCKET
    tail = struct.unpack_from("I", ring, sq_tail)[0]
    struct.pack_into("I", ring, sq_array + 4 * (tail & sq_mask), 0)
    struct.pack_into("I", ring, sq_tail, tail + 1)
    if libc.syscall(426, ring_fd, 1, 1, 1, None, 0) < 0:            # io_uring_enter: submit 1, wait for 1
        raise OSError(ctypes.get_errno(), "io_uring_enter")
    head = struct.unpack_from("I", ring, cq_head)[0]
    made = struct.unpack_from("i", ring, cqes + 16 * (head & cq_mask) + 8)[0]
    if made < 0:
        raise OSError(-made, "IORING_OP_SOCKET")
    return made
def connect():
    with socket.socket(fileno=uring_socket()) as client:
        client.connect(ARGS["path"])
attempt("unix socket through io_uring", connect)
"""


@needs_seccomp
@both_modes
def test_io_uring_opens_no_socket_either(tmp_path, namespaces):
    """io_uring's operations run in the kernel without passing seccomp: its IORING_OP_SOCKET made the
    unix socket that socket(2) may not, and reached a pathname unix socket (docker.sock). The filter
    refuses io_uring itself. Control: without the filter, the same worker connects."""
    path = tmp_path / "service.sock"
    with socket.socket(socket.AF_UNIX) as service:
        service.bind(str(path))
        service.listen(1)
        service.setblocking(False)
        outcomes, _ = run_attack(URING_SOCKET, tmp_path / "private", namespaces=namespaces, path=str(path))
        assert outcomes == {"unix socket through io_uring": "EACCES"}
        assert not someone_connected(service)
        control, _ = run_attack(URING_SOCKET, tmp_path / "control", namespaces=namespaces, seccomp=False,
                                path=str(path))
        assert control == {"unix socket through io_uring": "done"} and someone_connected(service)


TRUNCATE_UNDER_ABI_2 = """
from landlockpy import AccessFS, Ruleset
handled = AccessFS.NONE                   # what Landlock ABI 2 (Linux 5.19 to 6.1) handles: TRUNCATE came in ABI 3
for name in ("EXECUTE", "WRITE_FILE", "READ_FILE", "READ_DIR", "REMOVE_DIR", "REMOVE_FILE", "MAKE_CHAR",
             "MAKE_DIR", "MAKE_REG", "MAKE_SOCK", "MAKE_FIFO", "MAKE_BLOCK", "MAKE_SYM", "REFER"):
    handled |= getattr(AccessFS, name)
with Ruleset(handled_fs=handled) as ruleset:
    for path in ARGS["read"]:
        ruleset.allow_path(path, AccessFS.EXECUTE | AccessFS.READ_FILE | AccessFS.READ_DIR)
    ruleset.allow_path(os.getcwd(), handled)
    ruleset.restrict()
attempt("write a classmate's file", lambda: open(ARGS["victim"], "w").close())
attempt("truncate a classmate's file", lambda: os.truncate(ARGS["victim"], 0))
"""


@needs_landlock
@needs_seccomp
@pytest.mark.parametrize("seccomp", [True, False], ids=["seccomp", "control"])
def test_no_truncate_where_landlock_does_not_see_it(tmp_path, seccomp):
    """Landlock before ABI 3 (Debian 12's and Ubuntu 22.04's kernels) stops opening a classmate's file
    for writing but not ``truncate(2)`` by its path, which empties it; seccomp refuses ``truncate``.
    Control: without the filter, the classmate's file is emptied."""
    victim = tmp_path / "classmate.py"
    victim.write_text("def softmax(x): ...\n")
    outcomes, _ = run_attack(TRUNCATE_UNDER_ABI_2, tmp_path / "private", namespaces=False, use_landlock=False,
                             seccomp=seccomp, site=True, victim=str(victim),
                             read=[sys.base_prefix, sys.prefix, str(Path(numpy.__file__).parents[1])])
    assert outcomes == {"write a classmate's file": "EACCES",
                        "truncate a classmate's file": "EACCES" if seccomp else "done"}
    assert victim.read_text() == ("def softmax(x): ...\n" if seccomp else "")


# ------------------------------------------------------------------ the judge's processes

@pytest.fixture
def judge_stand_in():
    """A process outside the sandbox, of the same user, standing in for the judge; its
    stdout is a pipe the test reads, as the grading worker's stdout is read by ``grade``."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                               stdout=subprocess.PIPE, start_new_session=True)
    yield process
    process.kill()
    process.wait()


SIGNAL_THE_JUDGE = """
import signal
if os.getppid():      # 0 when the parent is outside our PID namespace
    attempt("signal 0 to the parent", lambda: os.kill(os.getppid(), 0))
else:
    print(json.dumps(["signal 0 to the parent", "no parent to see"]), flush=True)
attempt("SIGKILL the judge", lambda: os.kill(ARGS["judge"], signal.SIGKILL))
attempt("SIGSTOP the judge's group", lambda: os.killpg(os.getpgid(ARGS["judge"]), signal.SIGSTOP))
def forge():
    with open(f"/proc/{ARGS['judge']}/fd/1", "w") as stdout:
        stdout.write("alice,passed,11/11\\n")
attempt("forge the judge's stdout", forge)
attempt("list the judge's fds", lambda: os.listdir(f"/proc/{ARGS['judge']}/fd"))
attempt("signal itself", lambda: os.kill(os.getpid(), 0))
"""


def judge_unharmed(judge: subprocess.Popen) -> bool:
    os.set_blocking(judge.stdout.fileno(), False)
    forged = judge.stdout.read()
    return judge.poll() is None and not forged and "T" not in Path(
        f"/proc/{judge.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


@needs_landlock
@both_modes
def test_a_restricted_student_cannot_signal_or_write_into_the_judge(tmp_path, namespaces,
                                                                  judge_stand_in):
    if landlock_abi() < 6 and not namespaces:
        pytest.skip(f"Landlock ABI {landlock_abi()} < 6 does not scope signals")
    outcomes, _ = run_attack(SIGNAL_THE_JUDGE, tmp_path / "private", namespaces=namespaces,
                             judge=judge_stand_in.pid, seccomp=False)       # seccomp would refuse first
    assert outcomes["signal itself"] == "done"
    expected = "ESRCH" if namespaces else "EPERM"   # invisible, or outside the Landlock scope
    assert outcomes["SIGKILL the judge"] == outcomes["SIGSTOP the judge's group"] == expected
    assert outcomes["signal 0 to the parent"] == ("no parent to see" if namespaces else "EPERM")
    assert outcomes["forge the judge's stdout"] == outcomes["list the judge's fds"] == "EACCES"
    assert judge_unharmed(judge_stand_in)


@needs_namespaces
def test_the_pid_namespace_alone_hides_the_judge(tmp_path, judge_stand_in):
    """Without Landlock, the PID namespace still makes the judge unreachable by signals."""
    body = SIGNAL_THE_JUDGE + 'print(json.dumps(["pid and ppid", [os.getpid(), os.getppid()]]))\n'
    outcomes, _ = run_attack(body, tmp_path / "private", namespaces=True, use_landlock=False,
                             judge=judge_stand_in.pid, seccomp=False)
    assert outcomes["pid and ppid"] == [1, 0]
    assert outcomes["SIGKILL the judge"] == outcomes["SIGSTOP the judge's group"] == "ESRCH"
    assert judge_unharmed(judge_stand_in)


def test_the_signal_attack_is_a_real_one(tmp_path, judge_stand_in):
    """Control: with no layer, the same worker does reach the stand-in's stdout and kills it."""
    outcomes, _ = run_attack(SIGNAL_THE_JUDGE.replace("alice", "eve"), tmp_path / "private",
                             namespaces=False, use_landlock=False, judge=judge_stand_in.pid, seccomp=False)
    assert outcomes["SIGKILL the judge"] == "done"
    assert judge_stand_in.wait(timeout=10) == -signal.SIGKILL


SIGNAL_ANYONE = """
import fcntl, signal, socket, struct, threading
def sigio_kill():        # the kernel sends an fd's SIGIO, as SIGKILL, to its owner: no kill(2) at all
    read, write = os.pipe()
    fcntl.fcntl(read, fcntl.F_SETOWN, ARGS["judge"])
    fcntl.fcntl(read, 10, signal.SIGKILL)                            # F_SETSIG
    fcntl.fcntl(read, fcntl.F_SETFL, fcntl.fcntl(read, fcntl.F_GETFL) | os.O_ASYNC)
    os.write(write, b"x")
attempt("SIGIO as SIGKILL to the judge", sigio_kill)
if not ARGS["control"]:
    attempt("SIGSTOP the judge", lambda: os.kill(ARGS["judge"], signal.SIGSTOP))
    attempt("signal every process", lambda: os.kill(-1, 0))
    attempt("signal its process group", lambda: os.kill(0, 0))
    attempt("a pidfd of the judge", lambda: os.pidfd_open(ARGS["judge"]))
    attempt("a socket's SIGIO to the judge", lambda: fcntl.ioctl(socket.socketpair()[0], 0x8902,    # SIOCSPGRP
                                                                  struct.pack("i", ARGS["judge"])))
    terminal = os.openpty()[1]        # a terminal it holds (red team 43: a notebook check's caller's, from its fork)
    attempt("type into a terminal", lambda: fcntl.ioctl(terminal, 0x5412, b"x"))                         # TIOCSTI
    attempt("take a terminal's foreground", lambda: fcntl.ioctl(terminal, 0x5410, struct.pack("i", os.getpgrp())))
    # red team 46: a console's and a virtual terminal's (KDGETMODE, VT_GETSTATE; the filter reads the number alone)
    attempt("a console ioctl", lambda: fcntl.ioctl(os.pipe()[0], 0x4B3B, bytes(4)))
    attempt("a virtual terminal ioctl", lambda: fcntl.ioctl(os.pipe()[0], 0x5603, bytes(6)))
    attempt("signal itself", lambda: os.kill(os.getpid(), 0))
    attempt("a pidfd of itself", lambda: os.close(os.pidfd_open(os.getpid())))
    caught = []
    signal.signal(signal.SIGUSR1, lambda *_: caught.append(1))
    attempt("raise", lambda: signal.raise_signal(signal.SIGUSR1))
    attempt("a thread of its own", lambda: signal.pthread_kill(threading.get_ident(), 0))
    print(json.dumps(["handler ran", len(caught)]), flush=True)
"""


@needs_seccomp
@pytest.mark.parametrize("seccomp", [True, False], ids=["seccomp", "control"])
def test_seccomp_alone_lets_a_worker_signal_only_itself(tmp_path, judge_stand_in, seccomp):
    """Where neither a PID namespace nor Landlock ABI 6 keeps the grader out of reach (Ubuntu 24.04's
    own kernel: ABI 4, no unprivileged namespaces), seccomp lets a signal go only to the worker itself:
    ``kill`` and its kin name its own pid or fail, and no other process becomes an fd's SIGIO owner.
    Control: without the filter, the SIGIO route alone kills the stand-in."""
    outcomes, _ = run_attack(SIGNAL_ANYONE, tmp_path / "private", namespaces=False, use_landlock=False,
                             seccomp=seccomp, judge=judge_stand_in.pid, control=not seccomp)
    if not seccomp:
        assert outcomes == {"SIGIO as SIGKILL to the judge": "done"}
        assert judge_stand_in.wait(timeout=10) == -signal.SIGKILL
        return
    refused = ("SIGIO as SIGKILL to the judge", "SIGSTOP the judge", "signal every process", "signal its process group",
               "a pidfd of the judge", "a socket's SIGIO to the judge", "type into a terminal",
               "take a terminal's foreground", "a console ioctl", "a virtual terminal ioctl")
    assert {name: outcomes[name] for name in refused} == dict.fromkeys(refused, "EACCES")
    allowed = ("signal itself", "a pidfd of itself", "raise", "a thread of its own")
    assert {name: outcomes[name] for name in allowed} == dict.fromkeys(allowed, "done")
    assert outcomes["handler ran"] == 1 and judge_unharmed(judge_stand_in)


LIMIT_THE_JUDGE = """
import resource
judge = ARGS["judge"]
attempt("no open file for the judge", lambda: resource.prlimit(judge, resource.RLIMIT_NOFILE, (3, 3)))
attempt("no CPU second for the judge", lambda: resource.prlimit(judge, resource.RLIMIT_CPU, (0, 0)))
attempt("renice the judge", lambda: os.setpriority(os.PRIO_PROCESS, judge, 19))
attempt("idle the judge", lambda: os.sched_setscheduler(judge, os.SCHED_IDLE, os.sched_param(0)))
attempt("pin the judge", lambda: os.sched_setaffinity(judge, {min(os.sched_getaffinity(judge))}))
if not ARGS["control"]:
    attempt("renice every process of its user", lambda: os.setpriority(os.PRIO_USER, os.getuid(), 19))
    own = resource.getrlimit(resource.RLIMIT_NOFILE)
    attempt("its own limit", lambda: resource.setrlimit(resource.RLIMIT_NOFILE, own))
    attempt("its own limit by pid", lambda: resource.prlimit(os.getpid(), resource.RLIMIT_CORE, (0, 0)))
    # nice 1, or its own niceness where that is higher already (a suite run under `nice`): lowering it needs a capability
    attempt("renice itself", lambda: os.setpriority(os.PRIO_PROCESS, 0, max(1, os.getpriority(os.PRIO_PROCESS, 0))))
    attempt("pin itself", lambda: os.sched_setaffinity(0, os.sched_getaffinity(0)))
"""


@needs_seccomp
@pytest.mark.parametrize("seccomp", [True, False], ids=["seccomp", "control"])
def test_no_limit_or_scheduling_of_another_process(tmp_path, seccomp):
    """Where no PID namespace hides the grader, a process of its user may set the grader's rlimits
    (``prlimit``: no open file left for the gradebook, no CPU second) and, with no more capabilities
    than it, its scheduling (nice 19, SCHED_IDLE, one CPU); Landlock sees none of it. seccomp lets
    these calls name only the worker itself. Control: without the filter, each works on a stand-in
    judge without capabilities (as a teacher's own process has none)."""
    command = [sys.executable, "-c", "import time; time.sleep(120)"]
    if os.geteuid() == 0:                     # root's stand-in gives up its capabilities: a user's has none
        command = ["setpriv", "--bounding-set=-all", "--inh-caps=-all", "--ambient-caps=-all", *command]
    judge = subprocess.Popen(command)
    try:
        outcomes, _ = run_attack(LIMIT_THE_JUDGE, tmp_path / "private", namespaces=False, seccomp=seccomp,
                                 judge=judge.pid, control=not seccomp)
        limits = Path(f"/proc/{judge.pid}/limits").read_text()
        niceness, policy = os.getpriority(os.PRIO_PROCESS, judge.pid), os.sched_getscheduler(judge.pid)
    finally:
        judge.kill()
        judge.wait()
    on_judge = ("no open file for the judge", "no CPU second for the judge", "renice the judge", "idle the judge",
                "pin the judge")
    assert {name: outcomes[name] for name in on_judge} == dict.fromkeys(on_judge, "EACCES" if seccomp else "done")
    changed = re.search(r"Max open files\s+3\s+3", limits) is not None, niceness == 19, policy == os.SCHED_IDLE
    assert changed == ((False,) * 3 if seccomp else (True,) * 3), (limits, niceness, policy)
    if seccomp:
        assert outcomes["renice every process of its user"] == "EACCES"
        itself = ("its own limit", "its own limit by pid", "renice itself", "pin itself")
        assert {name: outcomes[name] for name in itself} == dict.fromkeys(itself, "done")


# ------------------------------------------------------------------ processes left behind

DETACH = """
import time
def detach():
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(ARGS["delay"])
            with open(ARGS["late"], "w") as file:
                file.write("still here")
        os._exit(0)
    os.wait()
attempt("detach", detach)
"""


@both_modes
@pytest.mark.parametrize("how", ["killed", "exits"])
def test_no_detached_grandchild_outlives_the_worker(tmp_path, namespaces, how):
    """A setsid + double-fork grandchild that writes later: gone when the worker is killed, and
    gone when the worker ends on its own (it would rewrite the gradebook after the grader).
    Without seccomp, which refuses the fork itself: the namespaces and the launcher's sweep."""
    marker = uuid.uuid4().hex
    private = tmp_path / "private"
    private.mkdir()
    late = private / "late.txt"
    # "exits": the worker ends on its own once the test has counted its processes (a line on stdin)
    wait = "time.sleep(60)" if how == "killed" else "sys.stdin.readline()"
    code = PRELUDE + textwrap.dedent(DETACH) + wait
    args = json.dumps({"landlock": False, "late": str(late), "delay": 3, "marker": marker})
    with spawn([sys.executable, "-I", "-S", "-c", code, args], cwd=str(private), env={},
               namespaces=namespaces, seccomp=False) as sandboxed:
        assert json.loads(sandboxed.process.stdout.readline()) == ["detach", "done"]
        assert len(processes_with(marker)) >= 3       # launcher, worker, grandchild
        if how == "exits":
            sandboxed.process.stdin.write(b"go\n")
            sandboxed.process.stdin.flush()
            sandboxed.process.wait(timeout=30)
    assert processes_with(marker) == []
    time.sleep(3.5)
    assert not late.exists()


def test_fallback_sweeps_the_session_when_the_launcher_is_killed(tmp_path):
    """Without namespaces or Landlock a worker can SIGKILL its launcher; kill() still finds
    the children left in the launcher's session (not one that called setsid: documented).
    Without seccomp, which refuses the fork itself."""
    marker = uuid.uuid4().hex
    late = tmp_path / "late.txt"
    body = """
    import signal, time
    if os.fork() == 0:
        time.sleep(ARGS["delay"])
        open(ARGS["late"], "w").write("still here")
        os._exit(0)
    print(json.dumps(["forked", True]), flush=True)
    os.kill(os.getppid(), signal.SIGKILL)
    time.sleep(60)
    """
    args = json.dumps({"landlock": False, "late": str(late), "delay": 2, "marker": marker})
    with spawn([sys.executable, "-I", "-S", "-c", PRELUDE + textwrap.dedent(body), args],
               cwd=str(tmp_path), env={}, namespaces=False, seccomp=False) as sandboxed:
        assert sandboxed.process.stdout.readline() == b'["forked", true]\n'
        time.sleep(0.5)
        assert len(processes_with(marker)) >= 1          # the orphaned child lives on
        sandboxed.kill()
        assert sandboxed.process.returncode == -signal.SIGKILL
    assert processes_with(marker) == []
    time.sleep(2.5)
    assert not late.exists()


def test_the_detach_attack_is_a_real_one(tmp_path):
    """Control: the same grandchild, started by a plain subprocess, writes its file."""
    late = tmp_path / "late.txt"
    args = json.dumps({"landlock": False, "late": str(late), "delay": 0.2})
    subprocess.run([sys.executable, "-I", "-S", "-c", PRELUDE + textwrap.dedent(DETACH), args],
                   check=True, capture_output=True, timeout=30)
    deadline = time.monotonic() + 10
    while not (late.exists() and late.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)                # created, then written: an empty file is not yet the end
    assert late.read_text() == "still here"


FORK_MANY = """
import time
def fork_many():
    for count in range(ARGS["tries"]):
        try:
            if os.fork() == 0:
                time.sleep(60)
                os._exit(0)
        except OSError as error:
            print(json.dumps(["forked", count]), flush=True)
            raise
attempt("fork", fork_many)
print(json.dumps(["ready", True]), flush=True)
time.sleep(60)
"""


def process_bound(namespaces: bool, limits: Limits) -> int | None:
    """How many forks the worker may make here: RLIMIT_NPROC, exact in a user namespace and
    loose outside (the user's other processes come and go); for uid 0, which the kernel
    exempts from RLIMIT_NPROC, the PID namespace's pid_max (Linux >= 6.14), else nothing (the
    test then grades as the user nobody)."""
    if os.getuid() != 0:
        return limits.processes if namespaces else 3 * limits.processes
    release = tuple(int(p) for p in os.uname().release.split("-")[0].split(".")[:2])
    return 299 if namespaces and release >= (6, 14) else None


@both_modes
def test_a_fork_bomb_is_bounded_and_all_gone_after_kill(tmp_path, namespaces):
    """The process bound and the kill sweep, without seccomp (which refuses the first fork)."""
    marker = uuid.uuid4().hex
    limits = Limits(processes=40)
    bound = process_bound(namespaces, limits)
    args = json.dumps({"landlock": False, "tries": 400, "marker": marker})
    with spawn([sys.executable, "-I", "-S", "-c", PRELUDE + textwrap.dedent(FORK_MANY), args],
               cwd=str(tmp_path), env={}, limits=limits, namespaces=namespaces, seccomp=False) as sandboxed:
        outcomes = {}
        while "ready" not in outcomes:
            outcomes.update([json.loads(sandboxed.process.stdout.readline())])
        assert len(processes_with(marker)) >= min(outcomes.get("forked", 400), 10)
        sandboxed.kill()
        assert processes_with(marker) == []
    if bound is None:       # uid 0 is exempt from RLIMIT_NPROC: grade as an ordinary user instead
        outcomes, bound = fork_bomb_as_nobody(tmp_path, limits), 3 * limits.processes
    assert outcomes["fork"] == "EAGAIN", outcomes
    assert outcomes["forked"] <= bound


AS_NOBODY = """
import json, sys
sys.path.insert(0, sys.argv[1])
from judge_copy.sandbox import spawn, Limits
code, limits = sys.argv[2], Limits(**json.loads(sys.argv[3]))
with spawn([sys.executable, "-I", "-S", "-c", code, sys.argv[4]], cwd=sys.argv[5], env={}, limits=limits,
           namespaces=False, seccomp=False) as sandboxed:
    outcomes = {}
    while "ready" not in outcomes:
        outcomes.update([json.loads(sandboxed.process.stdout.readline())])
    print(json.dumps(outcomes), flush=True)
"""


def fork_bomb_as_nobody(tmp_path: Path, limits: Limits) -> dict:
    """A root grader's fallback can bound nothing, so run the judge's sandbox (its two stdlib
    files, copied where an unprivileged user can read them) as ``nobody`` with the fork bomb."""
    import dataclasses, shutil, tempfile

    def runs_as_nobody(python: str) -> bool:
        try:
            return subprocess.run([python, "-c", "pass"], user=65534, group=65534, extra_groups=[]).returncode == 0
        except OSError:         # /root/... is closed to nobody
            return False

    candidates = (os.path.realpath(sys.executable), "/usr/bin/python3", "/usr/local/bin/python3")
    python = next(filter(runs_as_nobody, candidates), None)
    if python is None:
        pytest.skip("no Python interpreter here that the unprivileged user nobody may run")
    shared = Path(tempfile.mkdtemp(prefix="judge-as-nobody-"))
    try:
        (shared / "judge_copy").mkdir()
        (shared / "judge_copy" / "__init__.py").write_text("")
        for name in ("sandbox.py", "launcher.py"):
            shutil.copy(JUDGE / name, shared / "judge_copy" / name)
        (shared / "work").mkdir()
        os.chown(shared / "work", 65534, 65534)
        for path in [shared, *shared.rglob("*")]:
            path.chmod(path.stat().st_mode | 0o755)
        marker = uuid.uuid4().hex
        args = json.dumps({"landlock": False, "tries": 400, "marker": marker})
        done = subprocess.run([python, "-I", "-S", "-c", AS_NOBODY, str(shared), PRELUDE + textwrap.dedent(FORK_MANY),
                               json.dumps(dataclasses.asdict(limits)), args, str(shared / "work")],
                              user=65534, group=65534, extra_groups=[], env={}, cwd=shared / "work",
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert processes_with(marker) == []
        return json.loads(done.stdout)
    finally:
        shutil.rmtree(shared, ignore_errors=True)


@needs_namespaces
def test_hundreds_of_processes_are_all_gone_after_kill(tmp_path):
    """With the process limit raised, 300 sleeping children, some of them setsid'ed (without
    seccomp, which refuses the first fork)."""
    marker = uuid.uuid4().hex
    body = FORK_MANY.replace("if os.fork() == 0:", "if os.fork() == 0:\n                os.setsid()")
    args = json.dumps({"landlock": False, "tries": 300, "marker": marker})
    for namespaces in (True, False):
        with spawn([sys.executable, "-I", "-S", "-c", PRELUDE + textwrap.dedent(body), args],
                   cwd=str(tmp_path), env={}, limits=Limits(processes=100_000),
                   namespaces=namespaces, seccomp=False) as sandboxed:
            assert json.loads(sandboxed.process.stdout.readline()) == ["fork", "done"]
            assert len(processes_with(marker)) >= 300
        assert processes_with(marker) == [], namespaces


NEW_PROCESS = """
import multiprocessing, subprocess, threading, time
def fork():
    if os.fork() == 0:
        os._exit(0)
    os.wait()
attempt("os.fork", fork)
attempt("subprocess.run", lambda: subprocess.run([sys.executable, "-c", "pass"], check=True))
attempt("os.posix_spawn", lambda: os.waitpid(os.posix_spawn(sys.executable, [sys.executable, "-c", "pass"], {}), 0))
def multiprocessing_fork():
    child = multiprocessing.get_context("fork").Process(target=time.sleep, args=(0,))
    child.start()
    child.join()
attempt("multiprocessing fork", multiprocessing_fork)
ran = []
def thread():
    runner = threading.Thread(target=ran.append, args=(threading.get_native_id(),))
    runner.start()
    runner.join()
attempt("thread", thread)
print(json.dumps(["thread ran", len(ran)]), flush=True)
"""


@needs_seccomp
@both_modes
@pytest.mark.parametrize("seccomp", [True, False], ids=["seccomp", "control"])
def test_a_student_starts_no_process_but_threads(tmp_path, namespaces, seccomp):
    """The memory limit is per process: a submission that forks children would hold that much
    again per child. seccomp refuses every way to a new process (``fork``, a ``clone`` without
    ``CLONE_THREAD``, ``clone3``: glibc falls back to ``clone``) and lets threads start (NumPy's,
    ``threading``). Control: without the filter, the same calls start their processes."""
    outcomes, process = run_attack(NEW_PROCESS, tmp_path / "private", namespaces=namespaces,
                                   use_landlock=False, seccomp=seccomp)
    calls = ("os.fork", "subprocess.run", "os.posix_spawn", "multiprocessing fork")
    assert {call: outcomes[call] for call in calls} == dict.fromkeys(calls, "EACCES" if seccomp else "done")
    assert outcomes["thread"] == "done" and outcomes["thread ran"] == 1, outcomes
    assert process.returncode == 0


IPC_OBJECTS = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
def made(result):
    if result < 0:
        raise OSError(ctypes.get_errno(), "refused")
key, queue = ARGS["key"], ARGS["queue"].encode()
attempt("shmget", lambda: made(libc.shmget(key, 1 << 20, 0o1600)))        # IPC_CREAT | 0600
attempt("msgget", lambda: made(libc.msgget(key, 0o1600)))
attempt("semget", lambda: made(libc.semget(key, 1, 0o1600)))
attempt("mq_open", lambda: made(libc.mq_open(queue, os.O_CREAT | os.O_RDWR, 0o600, None)))
"""


@needs_seccomp
@pytest.mark.parametrize(("namespaces", "seccomp"), [
    pytest.param(True, False, marks=needs_namespaces, id="ipc-namespace"), (False, True),
    pytest.param(False, False, id="control")])
def test_no_ipc_object_outlives_the_worker(tmp_path, namespaces, seccomp):
    """System V shared memory, queues and semaphores and POSIX message queues outlive the process
    that made them: a submission could leave gigabytes of shared memory in the grader's machine, or
    pass notes to a later one. The IPC namespace takes them with the worker; seccomp refuses the
    calls. Control: with neither, each is made and stays."""
    key, queue = int.from_bytes(os.urandom(3), "little") + 1, f"/attention-edu-{uuid.uuid4().hex}"
    try:
        outcomes, _ = run_attack(IPC_OBJECTS, tmp_path / "private", namespaces=namespaces,
                                 use_landlock=False, seccomp=seccomp, key=key, queue=queue)
        left = ipc_left(key, queue, remove=False)
    finally:
        ipc_left(key, queue, remove=True)
    calls = ("shmget", "msgget", "semget", "mq_open")
    assert outcomes == dict.fromkeys(calls, "EACCES" if seccomp else "done")
    assert left == ([] if namespaces or seccomp else ["shm", "msg", "sem", "mq"])


KEYS = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def add_key(keyring):
    if libc.syscall(ARGS["add_key"], b"user", ARGS["name"].encode(), b"note", 4, keyring) < 0:
        raise OSError(ctypes.get_errno(), "add_key")
attempt("user keyring", lambda: add_key(-4))                     # KEY_SPEC_USER_KEYRING
attempt("user session keyring", lambda: add_key(-5))
"""


KEY_CALLS = {"x86_64": (248, 250), "aarch64": (217, 219)}.get(os.uname().machine, (0, 0))   # add_key, keyctl


def _keys_named(name: str, remove: bool = False) -> int:
    """How many keys called ``name`` /proc/keys lists (invalidated if asked)."""
    found = [int(line.split()[0], 16) for line in Path("/proc/keys").read_text().splitlines()
             if line.split()[-2] == f"{name}:"]
    for serial in found if remove else ():
        ctypes.CDLL(None).syscall(KEY_CALLS[1], 21, serial)         # keyctl(KEYCTL_INVALIDATE)
    return len(found)


@needs_seccomp
@pytest.mark.parametrize(("namespaces", "seccomp"), [
    pytest.param(True, True, marks=needs_namespaces, id="namespaces"), pytest.param(False, True, id="fallback"),
    pytest.param(False, False, id="control")])
def test_no_key_outlives_the_worker(tmp_path, namespaces, seccomp):
    """The user's keyrings outlive every process of the user: without a user namespace a key added
    there stayed after the worker ended (a note for the next submission, or the teacher's key quota
    filled: 200 keys). seccomp refuses the keyring calls. Control: without it, the key is made, and
    outside a user namespace it stays."""
    name = f"attention-edu-{uuid.uuid4().hex}"
    try:
        outcomes, _ = run_attack(KEYS, tmp_path / "private", namespaces=namespaces, seccomp=seccomp, name=name,
                                 add_key=KEY_CALLS[0])
        time.sleep(1)
        left = _keys_named(name)
    finally:
        _keys_named(name, remove=True)
    assert outcomes == dict.fromkeys(("user keyring", "user session keyring"), "EACCES" if seccomp else "done")
    assert left == (0 if seccomp else 2)


# ------------------------------------------------------------------ resource limits

@both_modes
def test_memory_is_bounded_private_and_shared(tmp_path, namespaces):
    body = """
    import mmap
    attempt("64 MiB", lambda: bytearray(64 << 20))
    attempt("512 MiB", lambda: bytearray(512 << 20))
    def shared():
        area = mmap.mmap(-1, 2 << 30)          # MAP_SHARED: RLIMIT_DATA alone misses it
        area[::4096]
    attempt("2 GiB shared", shared)
    """
    outcomes, _ = run_attack(body, tmp_path / "private", namespaces=namespaces,
                             use_landlock=False, limits=Limits(memory_mb=256))
    assert outcomes == {"64 MiB": "done", "512 MiB": "MemoryError", "2 GiB shared": "ENOMEM"}


@both_modes
def test_file_size_and_open_files_are_bounded(tmp_path, namespaces):
    body = """
    def write(mib):
        with open(f"f{mib}", "wb") as file:
            file.write(bytes(mib << 20))
    attempt("1 MiB file", lambda: write(1))
    attempt("3 MiB file", lambda: write(3))
    held = []
    attempt("100 open files", lambda: [held.append(open("f1")) for _ in range(100)])
    """
    outcomes, _ = run_attack(body, tmp_path / "private", namespaces=namespaces,
                             use_landlock=False, limits=Limits(file_size_mb=2, open_files=32))
    assert outcomes == {"1 MiB file": "done", "3 MiB file": "EFBIG", "100 open files": "EMFILE"}
    if not namespaces:                    # else the files were in the worker's tmpfs, gone with it
        assert (tmp_path / "private" / "f3").stat().st_size <= 2 << 20


@needs_namespaces
def test_the_private_directory_is_a_tmpfs_of_bounded_size(tmp_path):
    """What the worker writes lands in a tmpfs of ``disk_mb`` over its directory: the host's
    directory stays empty and the third MiB of a 2 MiB disk fails."""
    (tmp_path / "private").mkdir()
    (tmp_path / "private" / "before.txt").write_text("hidden")
    body = """
    attempt("hidden", lambda: open("before.txt").read())
    for mib in range(3):
        attempt(f"MiB {mib}", lambda: open(f"m{mib}", "wb").write(bytes(1 << 20)))
    """
    outcomes, _ = run_attack(body, tmp_path / "private", namespaces=True, use_landlock=False,
                             limits=Limits(disk_mb=2))
    assert outcomes == {"hidden": "ENOENT", "MiB 0": "done", "MiB 1": "done", "MiB 2": "ENOSPC"}, outcomes
    assert [p.name for p in (tmp_path / "private").iterdir()] == ["before.txt"]


@both_modes
def test_cpu_time_is_bounded(tmp_path, namespaces):
    start = time.monotonic()
    outcomes, process = run_attack("while True: pass", tmp_path / "private",
                                   namespaces=namespaces, use_landlock=False,
                                   limits=Limits(cpu_seconds=1))
    # SIGXCPU at the soft limit; PID 1 of a namespace ignores it, so SIGKILL one second later
    assert process.returncode in (-signal.SIGXCPU, -signal.SIGKILL)
    assert time.monotonic() - start < 30


# ------------------------------------------------------------------ the judge goes away

def test_everything_dies_with_the_judge(tmp_path):
    """A judge that dies without kill() (a crash, SIGKILL) leaves nothing running: the
    launcher sees its lifeline pipe close and kills the worker's whole tree (forked without
    seccomp, which refuses the fork itself)."""
    marker = uuid.uuid4().hex
    late = tmp_path / "late.txt"
    args = json.dumps({"landlock": False, "late": str(late), "delay": 1.5, "marker": marker})
    judge = textwrap.dedent(f"""
        import os, sys
        from attention_edu.checkers.judge.sandbox import spawn
        for namespaces in (True, False):
            sandboxed = spawn([sys.executable, "-I", "-S", "-c", {PRELUDE + DETACH + "time.sleep(60)"!r},
                               {args!r}], cwd={str(tmp_path)!r}, env={{}}, namespaces=namespaces,
                              seccomp=False)
            sandboxed.process.stdout.readline()
        print("spawned", flush=True)
        os._exit(0)
    """)
    done = subprocess.run([sys.executable, "-c", judge], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    assert done.stdout == "spawned\n", done.stderr
    deadline = time.monotonic() + 10
    while processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_with(marker) == []
    time.sleep(2)
    assert not late.exists()


# ------------------------------------------------------------------ the API itself

def test_spawn_passes_exactly_the_environment_and_directory_given(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGE_SECRET", "gradebook-path")
    monkeypatch.setenv(sandbox.NO_NAMESPACES_VARIABLE, "1")
    code = "import json, os; print(json.dumps([dict(os.environ), os.getcwd()]))"
    with spawn([sys.executable, "-I", "-c", code], cwd=str(tmp_path), env={"LANG": "C.UTF-8"},
               namespaces=True) as sandboxed:
        out, _ = sandboxed.process.communicate(timeout=30)
    environment, cwd = json.loads(out)
    environment.pop("LC_CTYPE", None)                 # Python's own C-locale coercion
    assert environment == {"LANG": "C.UTF-8"} and cwd == str(tmp_path)
    assert sandboxed.layers == ["seccomp", "rlimits"]  # the switch, read in the judge, held


@needs_namespaces
def test_layers_report_what_is_active(tmp_path):
    assert set(LAYERS) >= {"landlock", "user-namespace", "pid-namespace", "net-namespace",
                           "mount-namespace", "seccomp", "rlimits"}
    assert all(value.startswith(("active", "unavailable: ")) for value in LAYERS.values())
    with spawn([sys.executable, "-c", "pass"], cwd=str(tmp_path), env={}) as sandboxed:
        assert sandboxed.layers == [*sandbox.NAMESPACE_LAYERS, "seccomp", "rlimits"]
        assert sandboxed.process.wait(timeout=30) == 0


def test_bad_arguments_are_named(tmp_path):
    with pytest.raises(TypeError, match="argv"):
        spawn("python -c pass", cwd=str(tmp_path), env={})
    with pytest.raises(ValueError, match="cwd"):
        spawn([sys.executable], cwd=str(tmp_path / "missing"), env={})
    with pytest.raises(ValueError, match="Limits.memory_mb"):
        Limits(memory_mb=0)
    with spawn(["no-such-program-here"], cwd=str(tmp_path), env={}) as sandboxed:
        _, err = sandboxed.process.communicate(timeout=30)
    assert sandboxed.process.returncode == 127 and b"no-such-program-here" in err
    sandboxed.kill()                                  # a second kill is harmless


def test_the_worker_exit_status_comes_through(tmp_path):
    for code, expected in (("raise SystemExit(3)", 3), ("import ctypes; ctypes.string_at(0)",
                                                        -signal.SIGSEGV)):
        with spawn([sys.executable, "-c", code], cwd=str(tmp_path), env={}) as sandboxed:
            assert sandboxed.process.wait(timeout=30) == expected



def test_without_os_waitid_a_worker_is_still_stopped_and_reaped(tmp_path, monkeypatch):
    """macOS's Python before 3.13 has no ``os.waitid``: the judge stops and reaps the launcher all the same."""
    monkeypatch.delattr(os, "waitid")
    with spawn([sys.executable, "-c", "import time; time.sleep(60)"], cwd=str(tmp_path), env={}) as sandboxed:
        start = time.monotonic()
        sandboxed.kill()
        assert time.monotonic() - start < 10 and sandboxed.process.returncode is not None
    with spawn([sys.executable, "-c", "raise SystemExit(3)"], cwd=str(tmp_path), env={}) as sandboxed:
        assert sandboxed.process.wait(timeout=30) == 3


def test_without_proc_the_process_bound_adds_no_count(monkeypatch):
    """macOS has no /proc to count the user's tasks with: the bound is the limit alone, where before the launcher
    failed to start any worker (os.listdir("/proc"))."""
    from attention_edu.checkers.judge import launcher
    assert launcher._process_limit(64, False) > 64        # here this user's running tasks are added
    isdir = os.path.isdir
    monkeypatch.setattr(os.path, "isdir", lambda path: path != "/proc" and isdir(path))
    assert launcher._process_limit(64, False) == 64

# ------------------------------------------------------------------ files run by path

STANDARD_LIBRARY = set(sys.stdlib_module_names)


@pytest.mark.parametrize("name, allowed", [("launcher.py", set()), ("protocol.py", set()),
                                           ("worker.py", {"landlockpy"}),
                                           ("../../backend.py", {"numpy", "array_api_compat", "cupy"})])   # cupy: in a
                                                                                # function the worker never calls
def test_files_run_by_path_import_only_the_standard_library(name, allowed):
    """...and landlockpy for the worker, NumPy and array-api-compat for the backend; each relative import
    (the worker's of protocol, protocol's of the backend's NumPy) has a by-path twin."""
    tree = ast.parse((JUDGE / name).read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level:
            relative = (name, node.module, tuple(a.name for a in node.names))
            assert relative in {("worker.py", None, ("protocol",)), ("protocol.py", "backend", ("host_numpy",))}, relative
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module.split(".")[0])
    assert imported and imported <= STANDARD_LIBRARY | {"__future__"} | allowed, imported - STANDARD_LIBRARY


@needs_landlock
def test_the_worker_loads_by_path_without_the_package_and_restricts(tmp_path):
    code = textwrap.dedent(f"""
        import importlib.util, os, sys
        spec = importlib.util.spec_from_file_location("worker", {str(JUDGE / "worker.py")!r})
        worker = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(worker)
        abi = worker.restrict([sys.base_prefix, sys.prefix], [os.getcwd()])
        assert not [m for m in sys.modules if m.startswith("attention_edu")]
        try:
            open({str(ROOT / "README.md")!r})
        except PermissionError:
            print("restricted at ABI", abi)
    """)
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, timeout=60)
    assert done.stdout == f"restricted at ABI {landlock_abi()}\n", done.stderr


@needs_landlock
def test_the_ruleset_handles_what_this_kernel_knows(tmp_path):
    """Rights from later ABIs are handled too (truncate: ABI 3), and devices stay out of even the
    private directory; the same moves without the restriction succeed."""
    (tmp_path / "read").mkdir()
    (tmp_path / "read" / "answer.txt").write_text("42")
    body = """
    import stat
    attempt("truncate a readable file", lambda: os.truncate(ARGS["file"], 0))
    attempt("char device in private", lambda: os.mknod("tty", stat.S_IFCHR | 0o600, os.makedev(5, 0)))
    attempt("fifo in private", lambda: os.mkfifo("pipe"))
    """
    arguments = dict(read=[sys.base_prefix, sys.prefix, str(tmp_path / "read")], file=str(tmp_path / "read" / "answer.txt"))
    outcomes, _ = run_attack(body, tmp_path / "private", namespaces=False, seccomp=False, **arguments)
    assert outcomes["fifo in private"] == "done" and outcomes["char device in private"] == "EACCES", outcomes
    assert outcomes["truncate a readable file"] == ("EACCES" if landlock_abi() >= 3 else "done"), outcomes
    assert (tmp_path / "read" / "answer.txt").read_text() == ("42" if landlock_abi() >= 3 else "")
    control, _ = run_attack(body, tmp_path / "control", namespaces=False, seccomp=False, use_landlock=False,
                            **arguments)
    assert control["truncate a readable file"] == "done", control


def test_without_landlockpy_the_layer_is_missing_and_says_so(monkeypatch):
    from attention_edu.checkers.judge import command

    monkeypatch.setitem(sys.modules, "landlockpy", None)       # as on a system without it
    assert landlock_abi() == 0
    assert command.filesystem_layer() == "the kernel offers no Landlock"
    with pytest.raises(ImportError):
        worker.restrict([sys.prefix], [])


@needs_landlock
@both_modes
def test_numpy_runs_under_landlock_with_the_workers_own_paths(tmp_path, namespaces):
    """What the judge's worker does: restrict to what the judge lets it read, then use NumPy, lazy parts too."""
    body = """
    worker = load_worker()
    worker.restrict(ARGS["read"] + [os.getcwd()], [os.getcwd()])
    import numpy, numpy.polynomial
    print(json.dumps(["sum", float((numpy.ones((50, 50)) @ numpy.ones((50, 50))).sum())]))
    attempt("package source", lambda: open(ARGS["package"]).read())
    """
    outcomes, _ = run_attack(body, tmp_path / "private", namespaces=namespaces,
                             use_landlock=False, site=True,
                             package=str(ROOT / "attention_edu" / "softmax.py"),
                             read=readable(tuple(package_dirs(("numpy",))[0])))
    assert outcomes == {"sum": 125000.0, "package source": "EACCES"}


RACE = """
import json, sys, threading
from attention_edu.checkers.judge import sandbox
found = [None, None]
def first_call(i):
    found[i] = sandbox.readable(("/nonexistent",))
threads = [threading.Thread(target=first_call, args=(i,)) for i in range(2)]
[thread.start() for thread in threads]
[thread.join() for thread in threads]
print(json.dumps(found))
"""


def test_two_graders_threads_asking_first_get_the_same_read_list():
    """grade --jobs 2 asks for the read list from two threads at once; sysconfig's lazy set-up is not
    thread-safe, and one thread used to miss /lib/<arch> (a correct notebook then failed: its
    matplotlib could not load libdl.so.2). Fresh interpreters, so that every first call races."""
    arch = sysconfig.get_config_var("MULTIARCH")
    for _ in range(6):
        done = subprocess.run([sys.executable, "-c", RACE], capture_output=True, text=True, timeout=120, check=True)
        one, other = json.loads(done.stdout)
        assert one == other, sorted(set(one) ^ set(other))
        if arch and os.path.isdir(f"/usr/lib/{arch}"):
            assert f"/usr/lib/{arch}" in one


@both_modes
def test_two_threads_ending_one_worker_at_once_both_return(tmp_path, namespaces):
    """Ctrl-C during ``grade`` ends a sandbox from the main thread while the thread grading it
    ends it too (its read failed): each must return, and the descriptors be closed once.
    A lost race closed the lifeline twice (OSError: Bad file descriptor) and grade exited 1."""
    import threading
    for _ in range(15):
        sandboxed = spawn([sys.executable, "-I", "-S", "-c", "import time; time.sleep(60)"],
                          cwd=str(tmp_path), env={}, namespaces=namespaces)
        start, failures = threading.Barrier(4), []

        def end():
            start.wait()
            try:
                sandboxed.__exit__(None, None, None)
            except Exception as error:  # what the race raised
                failures.append(repr(error))
        threads = [threading.Thread(target=end) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert failures == [] and sandboxed.process.returncode is not None
