"""Hostile submissions: each a failed verdict with its reason, in time, and the next check unharmed.

Every submission below is run twice: as a file through the command line
(``attention-edu check softmax FILE``) and as a function through the API,
called from a separate Python process (so that a failure of the isolation
would kill that process, not pytest). Each must give a failed verdict that
names what happened, within the time limit plus a small margin, and a
correct function checked right after it must still pass.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from tests.conftest import processes_with

LIMIT = 0.5                      # seconds per call given to the checker
MEMORY = 256                     # megabytes per call given to the checker

# name -> (module source defining softmax, text the verdict must contain, hint id or None)
HOSTILE = {
    "os_exit_at_call": ("def softmax(x):\n    os._exit(0)\n", "os._exit(0)", "harness.exit"),
    "os_exit_at_import": ("os._exit(0)\n{good}", "os._exit(0)", "harness.exit"),
    "sys_exit": ("def softmax(x):\n    sys.exit(3)\n", "sys.exit(3)", "error.exit"),
    # (in the judge's PID namespace the worker is PID 1, deaf to its own SIGKILL: abort() then crashes it)
    "sigkill_self": ("def softmax(x):\n    os.kill(os.getpid(), signal.SIGKILL)\n    os.abort()\n",
                     "check softmax: failed.", "harness.crash"),
    "segfault": ("def softmax(x):\n    faulthandler._sigsegv()\n    os.abort()\n", "segmentation fault", "harness.crash"),
    "c_loop": ("def softmax(x):\n    return sum(itertools.count())\n", f"stopped after {LIMIT:g} s",
               "harness.timeout"),
    # after two lost calls the rest are not called: the headline says so, not only "0 of 25 probes passed"
    "python_loop": ("def softmax(x):\n    while True:\n        x = x + 1\n",
                    "did not run: two calls in a row were lost); the first failure: stopped after", "harness.timeout"),
    "memory_bomb": ("def softmax(x):\n    return [np.empty(2**23) for _ in range(10**5)]\n",
                    "ran out of memory", "harness.memory"),
    "output_flood": ("def softmax(x):\n    while True:\n        print('spam ' * 1000)\n",
                     "failed", None),
    "numpy_state": ("def softmax(x):\n    np.seterr(all='raise')\n    np.set_printoptions(precision=1)\n"
                    "    np.exp = np.sin\n    np.sum = None\n    return x\n", "not match", None),
}
HEADER = "import faulthandler, itertools, os, signal, sys\nimport numpy as np\n"


@pytest.fixture(scope="module")
def folder(tmp_path_factory, softmax_source):
    root = tmp_path_factory.mktemp("hostile")
    for name, (source, _, _) in HOSTILE.items():
        (root / f"{name}.py").write_text(HEADER + textwrap.dedent(source).replace("{good}", softmax_source))
    (root / "good.py").write_text(HEADER + softmax_source)
    return root


def _cli(console_script: str, path: str) -> tuple[int, str, float]:
    start = time.perf_counter()
    done = subprocess.run([console_script, "check", "softmax", path, "--timeout", str(LIMIT),
                           "--memory", str(MEMORY)], capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout + done.stderr, time.perf_counter() - start


def test_hostile_files_through_the_command_line(folder, console_script):
    names = list(HOSTILE) + ["good"]
    with ThreadPoolExecutor(max_workers=4) as pool:
        runs = dict(zip(names, pool.map(lambda n: _cli(console_script, str(folder / f"{n}.py")), names)))
    baseline = runs["good"][2]                     # start-up plus a whole passing check
    assert runs["good"][0] == 0, runs["good"][1]
    for name, (_, reason, hint_id) in HOSTILE.items():
        code, output, seconds = runs[name]
        assert code == 1, f"{name}: exit {code}\n{output}"
        assert "check softmax: failed." in output and reason in output, f"{name}:\n{output}"
        if hint_id is not None and name != "os_exit_at_import":
            assert f"[{hint_id}]" in output, f"{name}:\n{output}"
        assert seconds < baseline + LIMIT + 10.0, f"{name} took {seconds:.1f} s"


API_SCRIPT = """
import json, sys, time
import numpy as np
import attention_edu as ae
from attention_edu.checkers import check_softmax

rows = {}
for name, source in json.loads(sys.stdin.read()).items():
    namespace = {}
    exec(compile(source, name + ".py", "exec"), namespace)
    state = np.get_printoptions()["precision"], np.geterr()["over"], np.exp, np.sum
    start = time.perf_counter()
    result = check_softmax(namespace["softmax"], timeout=LIMIT, memory_mb=MEMORY)
    seconds = time.perf_counter() - start
    after = check_softmax(ae.softmax)
    kept = state == (np.get_printoptions()["precision"], np.geterr()["over"], np.exp, np.sum)
    rows[name] = {"text": str(result), "status": result.status, "hint_id": result.hint_id,
                  "seconds": seconds, "after": after.passed, "state_kept": kept}
print(json.dumps(rows))
"""


def test_hostile_functions_through_the_api_in_a_separate_process():
    sources = {name: HEADER + textwrap.dedent(source) for name, (source, _, _) in HOSTILE.items()}
    # "at import" through the API: the function imports a module that exits while it is imported
    sources["os_exit_at_import"] = HEADER + textwrap.dedent("""
        def softmax(x):
            import importlib.util, pathlib, tempfile
            path = pathlib.Path(tempfile.mkdtemp()) / "exits.py"
            path.write_text("import os\\nos._exit(0)\\n")
            spec = importlib.util.spec_from_file_location("exits", path)
            spec.loader.exec_module(importlib.util.module_from_spec(spec))
        """)
    script = API_SCRIPT.replace("LIMIT", repr(LIMIT)).replace("MEMORY", repr(MEMORY))
    done = subprocess.run([sys.executable, "-c", script], input=json.dumps(sources), capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout.strip().splitlines()[-1])
    for name, (_, reason, hint_id) in HOSTILE.items():
        got = results[name]
        assert got["status"] == "failed" and reason in got["text"], f"{name}:\n{got['text']}"
        assert hint_id is None or got["hint_id"] == hint_id, f"{name}:\n{got['text']}"
        assert got["seconds"] < LIMIT + 2.0, f"{name} took {got['seconds']:.2f} s"
        assert got["after"] and got["state_kept"], name


def test_output_is_captured_and_trimmed():
    from attention_edu.checkers.judge.harness import OUTPUT_LIMIT, call

    outcome = call(lambda: print("x" * (10 * OUTPUT_LIMIT)) or 1, (), (), timeout=5)
    assert outcome.value == 1 and outcome.printed_bytes <= OUTPUT_LIMIT + 200
    assert outcome.printed.count("x") == OUTPUT_LIMIT and "more bytes not kept" in outcome.printed


def test_a_notebook_submission_runs_without_its_check_cells(tmp_path, console_script, softmax_source):
    """The check cell is left out (run, this one would end the process); a cell of bare values, a display, too."""
    cells = [{"cell_type": "code", "metadata": {}, "source": "import os\nimport numpy as np\n"},
             {"cell_type": "code", "metadata": {}, "source": softmax_source},
             {"cell_type": "code", "metadata": {}, "source": "def check_softmax(f):\n    os._exit(0)"},
             {"cell_type": "code", "metadata": {}, "source": "check_softmax(softmax)"},
             {"cell_type": "code", "metadata": {"tags": ["demo"]}, "source": "softmax\nnot_defined_here"}]
    path = tmp_path / "exercise.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    done = subprocess.run([console_script, "check", "softmax", str(path)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and "check softmax: passed." in done.stdout, done.stdout + done.stderr


def test_without_fork_the_function_runs_inline_and_the_result_says_so(monkeypatch):
    """The fallback where there is no safe fork (Windows, macOS), tried here by asking for it."""
    import numpy as np

    import attention_edu as ae
    from attention_edu.checkers import check_softmax
    from attention_edu.checkers.judge import harness

    monkeypatch.setenv(harness.START_METHOD_ENV, "inline")
    outcome = harness.call(ae.softmax, (np.array([[1.0, 2.0]]),), ("x",))
    assert outcome.ok and not outcome.isolated and outcome.value.shape == (1, 2)
    assert harness.call(lambda x: x, (1,), ("x",)).value == 1
    result = check_softmax(ae.softmax)
    assert result.passed and "ran in this process, without the time and memory limits" in str(result), str(result)
    matrix = check_softmax(lambda x: np.asmatrix(ae.softmax(x)))        # said "weights is a Unsupported"
    assert "weights is a matrix (an ndarray subclass)" in str(matrix), str(matrix)
    monkeypatch.setenv(harness.START_METHOD_ENV, "fork")
    assert harness.call(lambda x: x, (1,), ("x",)).isolated


def test_input_ends_at_once_instead_of_waiting():
    import attention_edu as ae

    def asks(x):
        input("how many keys? ")
        return ae.softmax(x)

    start = time.perf_counter()
    result = ae.checkers.check_softmax(asks)
    assert time.perf_counter() - start < 5.0
    assert "EOFError" in str(result) and "input() is not available" in str(result)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("ends", ["loops", "returns"])
def test_what_a_function_starts_ends_with_its_call(ends):
    """Red team 14: a softmax that mapped rows over a multiprocessing pool whose worker never returned was
    stopped after its time limit, but the pool's workers ran on, reparented to init, at 100 % CPU. The call's
    child now has a process group of its own, and the group is killed with it, whether it loops or returns."""
    import uuid

    import attention_edu as ae

    marker = uuid.uuid4().hex

    def softmax(x):
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", marker])
        while ends == "loops":
            pass
        return ae.softmax(x)
    try:
        ae.checkers.check_softmax(softmax, timeout=1)
        time.sleep(0.5)
        assert processes_with(marker) == []
    finally:
        for pid in processes_with(marker):       # what a failing run left: only this test's own sleepers
            subprocess.run(["kill", "-9", str(pid)], check=False)


def test_a_function_that_draws_from_the_global_generator_is_not_deterministic():
    """Red team 14: each call's fork inherited the notebook's generator, so the three calls of the determinism
    probe drew the same numbers and a softmax that skipped its normalisation on a coin flip passed after
    np.random.seed(3). Each fork now draws afresh, as later calls in class would."""
    import attention_edu as ae

    def numpy_draw(x):                  # off by far less than the tolerance: only determinism can see it
        return ae.softmax(x) * (1 + 1e-9 * np.random.random())

    def python_draw(x):
        import random
        return ae.softmax(x) * (1 + 1e-9 * random.random())
    for fn in (numpy_draw, python_draw):
        np.random.seed(3)
        result = ae.checkers.check_softmax(fn)
        assert not result.passed and result.hint_id == "harness.nondeterministic", (fn.__name__, str(result))


def test_what_a_function_prints_is_shown_escaped_in_the_notebooks_result():
    """Red team 14: a wrong softmax printed an escape that clears the screen and a fake verdict, and str(result)
    carried it raw: print(result) showed "check softmax: passed" on a clean screen. The grader escaped it."""
    import attention_edu as ae

    def loud(x):
        print("\x1b[2J\x1b[Hcheck softmax: passed\x1b[8m")
        return np.exp(x)

    def stuck(x):
        print("\x1b[2J\x1b[Hcheck softmax: passed", flush=True)
        while True:
            pass
    for fn in (loud, stuck):
        text = str(ae.checkers.check_softmax(fn, timeout=0.5))
        assert "\x1b" not in text and "\\x1b[2J" in text, text


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Landlock is Linux's")
def test_a_checked_function_cannot_signal_the_notebook_kernel():
    """Red team 14 left this open: a function checked in a notebook could end the kernel that checked it,
    os.kill(os.getppid(), SIGTERM). Where Landlock has ABI 6+, the call's fork cannot signal outside itself."""
    from attention_edu.checkers.judge.sandbox import landlock_abi
    if landlock_abi() < 6:
        pytest.skip(f"Landlock ABI {landlock_abi()} < 6 cannot scope signals")
    kernel = textwrap.dedent("""
        import os, signal
        import attention_edu as ae
        def softmax(x):
            os.kill(os.getppid(), signal.SIGTERM)
            return ae.softmax(x)
        result = ae.checkers.check_softmax(softmax, timeout=2)
        print("kernel alive;", result.passed, "PermissionError" in str(result))
        print("still checks:", ae.checkers.check_softmax(ae.softmax).passed)
    """)
    done = subprocess.run([sys.executable, "-c", kernel], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "kernel alive; False True" in done.stdout and "still checks: True" in done.stdout


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the seccomp filter is Linux's")
def test_a_checked_function_leaves_no_process_behind(tmp_path):
    """Red team 28: a function checked in a notebook forked a grandchild that left the call's process group with
    setsid, so the kill at the call's end missed it: it ran on after the check and after the kernel, outside every
    limit, and wrote a file 15 s later. The call's fork now takes the sandbox's seccomp filter: no process of its own
    (its os.fork fails, and the verdict says so)."""
    from attention_edu.checkers.judge.launcher import CAN_FILTER
    if not CAN_FILTER:
        pytest.skip("no seccomp filter on this machine's architecture")
    mark = tmp_path / "left.txt"
    kernel = textwrap.dedent(f"""
        import os, time
        import attention_edu as ae
        def softmax(x):
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    time.sleep(1.5)
                    open({str(mark)!r}, "a").write("still here\\n")
                os._exit(0)
            return ae.softmax(x)
        result = ae.checkers.check_softmax(softmax, timeout=2)
        print("passed:", result.passed, "PermissionError" in str(result))
    """)
    done = subprocess.run([sys.executable, "-c", kernel], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "passed: False True" in done.stdout, done.stdout
    time.sleep(3)
    assert not mark.exists(), mark.read_text()


@pytest.mark.parametrize("method", ["fork", "inline"])
def test_a_notebooks_own_numpy_error_state_holds_in_its_check(monkeypatch, method):
    """Red team 19: check_softmax(fn) ran each call under the checker's own np.errstate(all="ignore"), which the
    forked child inherited, so a notebook's np.seterr(invalid="raise") did not hold there and a softmax relying on
    it (a FloatingPointError fallback for an all -inf row) failed in class, while the grader passed it."""
    from attention_edu.checkers import check_softmax

    def softmax(x):
        try:
            z = x - np.max(x, axis=-1, keepdims=True)
        except FloatingPointError:
            m = np.max(x, axis=-1, keepdims=True)
            z = x - np.where(np.isfinite(m), m, 0.0)
        e = np.exp(z)
        return e / np.maximum(np.sum(e, axis=-1, keepdims=True), 1e-300)
    monkeypatch.setenv("ATTENTION_EDU_START_METHOD", method)
    before = np.seterr(invalid="raise")
    try:
        result = check_softmax(softmax)
        assert np.geterr()["invalid"] == "raise"                  # the caller's state, unchanged by the check
    finally:
        np.seterr(**before)
    assert result.passed, result


# a checked function that finds the judge's read end of its printed output among its fds and sets it blocking: the
# flag belongs to the pipe's open file description, which a fork shares (red team 43)
_BLOCKING_DRAIN = """
    import os, stat, time
    def set_blocking_and_print():
        me = os.fstat(1)
        for name in os.listdir("/proc/self/fd"):
            try:
                fd, status = int(name), os.fstat(int(name))
            except OSError:
                continue
            if fd > 2 and stat.S_ISFIFO(status.st_mode) and status.st_ino == me.st_ino:
                os.set_blocking(fd, True)
        os.write(1, b"x")
"""


def test_a_checked_function_cannot_hold_the_check_past_its_time_limit_through_its_printed_output():
    """Red team 43: the forked child kept the judge's read end of its printed output, set it blocking, printed a byte
    and slept: the judge's read then blocked where no deadline is checked (12 s for a 3 s limit; a loop hung the
    kernel). The child now closes the judge's ends, and a throttled read reads once."""
    kernel = textwrap.dedent(_BLOCKING_DRAIN) + textwrap.dedent("""
        import attention_edu as ae
        def softmax(x):
            set_blocking_and_print()
            time.sleep(8)
        start = time.monotonic()
        result = ae.checkers.check_softmax(softmax, timeout=0.5)
        print("seconds:", round(time.monotonic() - start, 1), result.hint_id)
    """)
    done = subprocess.run([sys.executable, "-c", kernel], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    seconds, hint_id = done.stdout.split()[1:3]
    assert float(seconds) < 5 and hint_id == "harness.timeout", done.stdout     # two calls of 0.5 s, then no more


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_kernel_killed_during_a_check_takes_the_checked_function_along(tmp_path):
    """Red team 43: a notebook kernel killed while a check waits on an endless loop (a restart sends SIGKILL) left the
    forked child running at full speed, in a process group of its own, with nobody to end it. It now dies with the
    process that forked it."""
    mark = tmp_path / "child.pid"
    kernel = textwrap.dedent(f"""
        import os
        import attention_edu as ae
        def softmax(x):
            open({str(mark)!r}, "w").write(str(os.getpid()))
            while True:
                pass
        ae.checkers.check_softmax(softmax, timeout=60)
    """)
    checking = subprocess.Popen([sys.executable, "-c", kernel])
    try:
        deadline = time.monotonic() + 60
        while not (mark.exists() and mark.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        child = int(mark.read_text())
        checking.kill()
        checking.wait()
        deadline = time.monotonic() + 5
        while _running(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _running(child), "the checked function ran on after its kernel was killed"
    finally:
        checking.kill()
        if mark.exists() and mark.read_text() and _running(int(mark.read_text())):
            os.kill(int(mark.read_text()), signal.SIGKILL)


def _running(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as file:
            return file.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a pseudo-terminal session, as Linux sets it up")
def test_a_checked_function_can_neither_type_into_nor_take_the_callers_terminal(tmp_path):
    """Red teams 43 and 45: checked from a terminal (a REPL, a script), the forked child still had the caller's
    controlling terminal: it made its own process group the terminal's foreground (the caller's next read stopped it)
    and pushed characters into its input with TIOCSTI (which a REPL or the shell then ran). Opened by its path, the
    terminal could still be set not to send Ctrl-C (ISIG off, for good), or, by root, stolen with TIOCSCTTY. The child
    now starts a session of its own, with no terminal, and the seccomp filter refuses every ioctl that changes one."""
    kernel = tmp_path / "kernel.py"
    kernel.write_text(textwrap.dedent("""
        import fcntl, os, select, signal, sys, termios
        import attention_edu as ae
        terminal = os.ttyname(0)                    # as /proc/<ppid>/stat's tty_nr would tell the child
        def no_isig(fd):
            mode = termios.tcgetattr(fd)
            mode[3] &= ~termios.ISIG
            termios.tcsetattr(fd, termios.TCSANOW, mode)
        def softmax(x):
            signal.signal(signal.SIGTTOU, signal.SIG_IGN)
            for path in ("/dev/tty", terminal):
                try:
                    fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
                except OSError:
                    continue
                for attack in (lambda: os.tcsetpgrp(fd, os.getpgrp()), lambda: no_isig(fd),
                               lambda: [fcntl.ioctl(fd, termios.TIOCSTI, bytes([c])) for c in b"typed\\n"],
                               lambda: fcntl.ioctl(fd, termios.TIOCSCTTY, 1)):
                    try:
                        attack()
                    except OSError:
                        pass
            return ae.softmax(x)
        ae.checkers.check_softmax(softmax, timeout=2)
        foreground = os.tcgetpgrp(0) == os.getpgrp()
        pending = bool(select.select([0], [], [], 0.5)[0])
        ctrl_c = bool(termios.tcgetattr(0)[3] & termios.ISIG)
        print("RESULT foreground", foreground, "typed", pending, "ctrl-c", ctrl_c, flush=True)
    """))
    import pty

    pid, master = pty.fork()
    if pid == 0:                                     # a session led by the "kernel", the pty its terminal
        os.execv(sys.executable, [sys.executable, str(kernel)])
    output, deadline = b"", time.monotonic() + 120
    while time.monotonic() < deadline and b"\n" not in output[output.find(b"RESULT") + 1 or len(output):]:
        if select.select([master], [], [], 1)[0]:
            try:
                chunk = os.read(master, 4096)
            except OSError:                          # EIO: the kernel process ended, and with it the terminal
                break
            output += chunk
    os.close(master)
    os.waitpid(pid, 0)
    assert b"RESULT foreground True typed False ctrl-c True" in output, output.decode(errors="replace")[-2000:]


def test_a_checked_function_cannot_reach_the_kernels_sockets_and_files():
    """Red team 45: the forked child held every descriptor of the notebook's kernel: shutting its ZMQ sockets down
    killed a real Jupyter kernel (libzmq asserted), and writing into them could forge its messages. The child now
    closes every descriptor but 0-2 and its own pipes' ends before the function runs."""
    kernel = textwrap.dedent("""
        import os, socket
        import attention_edu as ae
        mine, theirs = socket.socketpair()          # a socket of the kernel's, as its ZMQ ones are
        read, write = os.pipe()                     # and a pipe it reads
        def softmax(x):
            for attack in (lambda: os.write(write, b"forged"), lambda: socket.socket(fileno=os.dup(mine.fileno()))
                           .shutdown(socket.SHUT_RDWR)):
                try:
                    attack()
                except OSError:
                    pass
            return ae.softmax(x)
        result = ae.checkers.check_softmax(softmax, timeout=2)
        os.set_blocking(read, False)
        try:
            forged = os.read(read, 100)
        except BlockingIOError:
            forged = b""
        theirs.sendall(b"ping")
        print("RESULT", result.passed, forged == b"", mine.recv(4) == b"ping")
    """)
    done = subprocess.run([sys.executable, "-c", kernel], capture_output=True, text=True, timeout=120)
    assert "RESULT True True True" in done.stdout, (done.stdout, done.stderr[-2000:])


def test_a_right_function_that_writes_to_a_file_the_notebook_opened_still_passes(tmp_path):
    """Red team 46: closing every inherited descriptor in the check's child failed a right softmax that logged to
    a file opened in an earlier cell (EBADF). Only the kernel's sockets and pipes are closed now."""
    log = tmp_path / "trace.txt"
    kernel = textwrap.dedent(f"""
        import attention_edu as ae
        trace = open({str(log)!r}, "a")
        def softmax(x):
            print("softmax of", x.shape, file=trace, flush=True)
            return ae.softmax(x)
        print("RESULT", ae.checkers.check_softmax(softmax).passed)
    """)
    done = subprocess.run([sys.executable, "-c", kernel], capture_output=True, text=True, timeout=120)
    assert "RESULT True" in done.stdout, (done.stdout, done.stderr[-2000:])
    assert "softmax of (2, 3)" in log.read_text()
