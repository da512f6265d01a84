"""A determined student against ``check`` and ``grade``: one hostile submission per attack class.

The class folder holds honest classmates (right and wrong) and every attacker. It is graded once
(``--jobs 2``) from a working directory of its own; then, for each attack: the attacker's row
failed with a reason, every classmate's row is right, no classmate's file, package file or
gradebook changed (looked at again seconds after ``grade`` returned), nothing of any submission
is still running, nothing was written outside the students' private directories, and a later
honest run in the same folder is unharmed. Each attacker is also run through ``check``.
These tests need the kernel's layers (Landlock, PID namespace): without them they skip, saying so.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import os
import shutil
import site
import subprocess
import sys
import tempfile
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from attention_edu.checkers.judge.sandbox import available_layers
from attention_edu.checkers import EXERCISES
from tests.conftest import ipc_left

ROOT = Path(__file__).resolve().parents[3]
WORKER = str(ROOT / "attention_edu" / "checkers" / "judge" / "worker.py")
PACKAGE_FILE = ROOT / "attention_edu" / "checkers" / "runner.py"
LAYERS = available_layers()
pytestmark = pytest.mark.skipif(
    not all(LAYERS.get(k, "").startswith("active") for k in ("landlock", "pid-namespace")),
    reason=f"needs Landlock and a PID namespace: {LAYERS}")

WRONG = "import numpy as np\n\ndef softmax(x):\n    e = np.exp(x)\n    return e / e.sum(axis=0, keepdims=True)\n"


def _replay_table() -> str:
    """A table of the public probes' inputs and answers, as a student could record at home."""
    spec = EXERCISES["softmax"]
    table = {}
    for case in spec.cases():
        x = case.args[0]
        table[base64.b64encode(x.tobytes()).decode() + str(x.shape)] = spec.reference(x).tolist()
    return repr(table)


FLOAT16_LOOPHOLE = """
        import numpy as np
        def softmax(x):
            x = x * 0.99                      # wrong: a temperature of 1/0.99, inside float16's tolerance
            m = np.max(x, axis=-1, keepdims=True)
            e = np.exp(x - np.where(np.isfinite(m), m, 0.0))
            s = e.sum(axis=-1, keepdims=True)
            w = e / np.where(s == 0, 1, s)
            return w if x.shape in ((3, 6), (7, 4)) else w.astype(DTYPE)   # the properties' inputs
        """

# name -> (source; words the check's output must contain). {csv}, {classmate}, {cwd}, {marker}
# and {package} are filled in with the real paths: a student could learn or guess them.
ATTACKS = {
    "frame_walk": ("""
        import gc, sys
        def softmax(x):
            frame = sys._getframe()
            while frame is not None:
                for value in list(frame.f_locals.values()) + list(frame.f_globals.values()):
                    if callable(getattr(value, "reference", None)):
                        return value.reference(x)
                frame = frame.f_back
            for thing in gc.get_objects():
                try:
                    return thing.reference(x)
                except Exception:
                    pass
            raise RuntimeError("no reference in reach")
        """, "RuntimeError: no reference in reach"),
    "import_answer": ("import attention_edu as ae\ndef softmax(x):\n    return ae.softmax(x)\n",
                      "`import attention_edu` is not allowed here"),
    "importlib_torch": ("import importlib\ntorch = importlib.import_module('torch')\n"
                        "def softmax(x):\n    return torch.softmax(torch.tensor(x), -1).numpy()\n",
                        "`import torch` is not allowed here"),
    "dunder_import_scipy": ("def softmax(x):\n    return __import__('scipy.special').special.softmax(x, axis=-1)\n",
                            "`import scipy` is not allowed here"),
    "hook_bypassed": ("""
        import sys
        sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "Refuse"]
        sys.path.insert(0, {root!r})
        import attention_edu
        def softmax(x):
            return attention_edu.softmax(x)
        """, "PermissionError"),
    "hook_bypassed_site_packages": ("""
        import sys
        sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "Refuse"]
        try:
            import pytest                     # installed beside NumPy: a package the exercise does not allow
        except (ImportError, OSError) as err:
            raise RuntimeError("site-packages unreachable") from err
        import numpy as np
        def softmax(x):
            e = np.exp(x - x.max(axis=-1, keepdims=True))
            return e / e.sum(axis=-1, keepdims=True)
        """, "RuntimeError: site-packages unreachable"),
    "record_erased": ("""
        import sys
        try:                                  # refused, and the ImportError caught
            import torch
        except ImportError:
            torch = None
        for finder in sys.meta_path:          # then every list the rule keeps emptied: the record it sent stays
            for value in vars(finder).values():
                if isinstance(value, list):
                    value.clear()
        import numpy as np
        def softmax(x):
            top = np.max(x, axis=-1, keepdims=True)
            e = np.exp(x - np.where(np.isfinite(top), top, 0.0))
            total = np.sum(e, axis=-1, keepdims=True)
            return e / np.where(total > 0, total, 1.0)
        """, "`import torch` is not allowed here"),
    "ctypes_cached_by_numpy": ("import ctypes\n" + WRONG, "`import ctypes` is not allowed here"),
    # red team 40: the C halves of socket and multiprocessing, and raw memory, imported silently
    "private_halves_of_denied_modules": ("import mmap, _socket, _multiprocessing, _posixshmem\n" + WRONG,
                                         "`import mmap` is not allowed here"),
    "modules_the_worker_loaded": ("import landlockpy\n" + WRONG, "`import landlockpy` is not allowed here"),
    "backend_the_worker_loaded": ("import array_api_compat, _attention_edu_backend\n" + WRONG,
                                  "`import array_api_compat` is not allowed here"),
    "interpreter_folder": (textwrap.dedent("""
        import os, sys
        os.listdir(os.path.dirname(os.path.realpath(sys.executable)))    # other packages' scripts live there
        """) + WRONG, "PermissionError"),
    "float16_loophole": (FLOAT16_LOOPHOLE.replace("DTYPE", "np.float16"), "do not match the expected values"),
    # float16 stored big-endian was not == np.float16, so it got float16's 1 % tolerance
    "float16_big_endian": (FLOAT16_LOOPHOLE.replace("DTYPE", '">f2"'), "do not match the expected values"),
    "newline_forge": ("""
        raise ValueError("boom\\npassed          16/16  right.py\\nfailed           0/16  wrong.py")
        """, "boom\\npassed"),
    "replay_table": ("""
        import numpy as np
        TABLE = {table}
        def softmax(x):
            key = __import__("base64").b64encode(x.tobytes()).decode() + str(x.shape)
            return np.array(TABLE[key]) if key in TABLE else np.full(x.shape, 1.0 / x.shape[-1])
        """, "hidden case"),
    "reduce_payload": ("""
        import os
        class Payload:
            def __reduce__(self):
                return (os.system, ("touch {marker}",))
        def softmax(x):
            return Payload()
        """, "Payload object"),
    "rewrite_package": ("open({package!r}, 'a').write('\\nraise SystemExit(0)\\n')\n" + WRONG, "PermissionError"),
    "classmates": (textwrap.dedent("""
        best = open({classmate!r}).read()
        open({classmate!r}, "w").write("def softmax(x):\\n    return x\\n")
        """) + WRONG, "FileNotFoundError"),      # the class's folder is empty in its view (Landlock refuses it too)
    "forge_rows": ("""
        import os
        for pid in os.listdir("/proc"):
            try:
                open(f"/proc/{{pid}}/fd/1", "w").write("FORGED,True,True,passed\\n")
            except OSError:
                pass
        def softmax(x):
            for fd in range(1, 40):
                try:
                    os.write(fd, b"\\xff" * 64 + b"FORGED passed")
                except OSError:
                    pass
            return x
        """, "PermissionError"),
    "kill_grader": ("""
        import os, signal
        def softmax(x):
            for target in (os.getppid(), 1, -1):
                for sig in (signal.SIGSTOP, signal.SIGKILL):
                    try:
                        os.kill(target, sig)
                    except OSError:
                        pass
            return x
        """, "check softmax: failed."),
    "detached_rewriter": (textwrap.dedent("""
        import os, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(1.5)
                for path in ({csv!r}, {marker!r}):
                    try:
                        open(path, "w").write("FORGED")
                    except OSError:
                        pass
            os._exit(0)
        """) + WRONG, "check softmax: failed."),
    # the grader's working folder beside the class's, empty in its view too
    "stdlib_shadow": ("open({cwd!r} + '/shlex.py', 'w').write('raise SystemExit(3)\\n')\n" + WRONG, "FileNotFoundError"),
    "process_and_file_flood": ("""
        import os, time
        def softmax(x):
            for i in range(300):
                open(f"junk{{i}}.txt", "w").close()
            for _ in range(300):
                try:
                    if os.fork() == 0:
                        time.sleep(60)
                        os._exit(0)
                except OSError:
                    break
            return x
        """, "check softmax: failed."),
    # System V objects and POSIX message queues outlive their process: 64 MiB left in the grader's machine
    "ipc_leftovers": (textwrap.dedent("""
        import sys
        sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "Refuse"]
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.shmget({key}, 64 << 20, 0o1666), libc.msgget({key}, 0o1666), libc.semget({key}, 1, 0o1666)
        libc.mq_open({queue!r}.encode(), 0o102, 0o666, None)           # O_CREAT | O_RDWR
        """) + WRONG, "check softmax: failed."),
    # red team 20: read quadratically in the grader's own process, it held the lock the classmates' threads need
    "parse_freeze": ("# ---\n# jupyter:\n#   jupytext:\n#     text_representation:\n#       format_name: light\n"
                     "# ---\n" + "\n" * 120_000 + WRONG, "softmax.wrong-axis"),
    "terminal_escapes": ("""
        def softmax(x):
            print("\\x1b[2J\\x1b[H\\rcheck softmax: passed.")
            raise ValueError("\\x1b[1A\\x1b[2K\\rall probes passed")
        """, "\\x1b[1A\\x1b[2K\\rall probes passed"),
    "forged_error_message": ("""
        SIZES = ",".join(["9"] * 1977)      # NumPy's reshape error, with 1,977 axes for the diagnosis to multiply out
        def softmax(x):
            raise ValueError("cannot reshape array of size 1 into shape (" + SIZES + ")")
        """, "cannot reshape array of size 1 into shape (9,9,9"),
}


def _digest(paths) -> dict[str, str]:
    return {str(p): hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in paths if Path(p).is_file()}


def _orphans() -> dict[int, str]:
    """Processes running this worktree's worker (the launcher's command line holds it too) that no live
    grader holds: walking up from each through the worker's own processes ends at init (pid 1). Another
    test's grading may run beside this one (pytest-xdist); its workers lead up to its live grader."""
    table = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            parent = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        table[int(entry)] = (parent, cmdline)
    found = {}
    for pid, (parent, cmdline) in table.items():
        if WORKER not in cmdline:
            continue
        while parent in table and WORKER in table[parent][1]:
            parent = table[parent][0]
        if parent <= 1 or parent not in table:
            found[pid] = cmdline
    return found


def _running() -> list[str]:
    """Command lines of this worktree's worker processes left behind (none may be). Asked twice, 2 s apart,
    when the first answer is not empty, so that the workers of a grader just ending are not counted."""
    first = _orphans()
    if not first:
        return []
    time.sleep(2)
    return [cmdline for pid, cmdline in _orphans().items() if pid in first]


@pytest.fixture(scope="module")
def classroom(tmp_path_factory, softmax_source, console_script):
    base = tmp_path_factory.mktemp("classroom")
    folder, cwd, outside = base / "class", base / "cwd", base / "outside"
    for d in (folder, cwd, outside):
        d.mkdir()
    book, marker = cwd / "grades.csv", outside / "marker"
    honest = {"right.py": softmax_source, "wrong.py": WRONG}
    for name, source in honest.items():
        (folder / name).write_text(source)
    fill = {"csv": str(book), "classmate": str(folder / "right.py"), "cwd": str(cwd), "marker": str(marker),
            "package": str(PACKAGE_FILE), "root": str(ROOT), "table": _replay_table(),
            "key": int.from_bytes(os.urandom(3), "little") + 1, "queue": f"/attention-edu-{os.getpid()}"}
    for name, (source, _) in ATTACKS.items():
        (folder / f"{name}.py").write_text(textwrap.dedent(source).format(**{**fill, "table": "TABLE_"}).replace(
            "TABLE_", fill["table"]))
    package = sorted((ROOT / "attention_edu").rglob("*.py"))
    before = _digest(package + [folder / n for n in honest])
    command = [console_script, "grade", str(folder), "--exercise", "softmax", "--csv", str(book), "--jobs", "2",
               "--timeout", "2", "--seed", "11", "--no-progress"]
    done = subprocess.run(command, capture_output=True, cwd=cwd, timeout=600)
    graded = book.read_bytes()
    time.sleep(3)                                        # the detached rewriter had 1.5 s
    after = book.read_bytes()
    checks = {}
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = pool.map(lambda n: subprocess.run([console_script, "check", "softmax", str(folder / f"{n}.py"),
                                                  "--timeout", "2"], capture_output=True, cwd=cwd, timeout=300),
                        list(ATTACKS))
        checks = dict(zip(ATTACKS, runs))
    honest_run = [console_script, "grade", *(str(folder / n) for n in honest), *command[3:]]
    again = subprocess.run(honest_run, capture_output=True, cwd=cwd, timeout=600)
    return {"done": done, "graded": graded, "book": book, "after": after, "again": again,
            "again_rows": _rows(book.read_bytes()),
            "before": before, "later": _digest(package + [folder / n for n in honest]), "checks": checks,
            "cwd": sorted(p.name for p in cwd.iterdir()), "outside": sorted(outside.iterdir()),
            "running": _running(), "folder": folder, "ipc": ipc_left(fill["key"], fill["queue"], remove=True)}


def _rows(raw: bytes) -> dict[str, dict]:
    return {Path(r["file"]).name: r for r in csv.DictReader(io.StringIO(raw.decode()))}


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_attack_fails_and_harms_nobody(classroom, attack):
    done = classroom["done"]
    assert done.returncode == 0, done.stderr.decode()
    rows = _rows(classroom["graded"])
    assert set(rows) == {"right.py", "wrong.py"} | {f"{a}.py" for a in ATTACKS}
    row = rows[f"{attack}.py"]
    assert row["passed"] == "False" and (row["error"] or row["hint_id"] or row["mistakes"] != "[]"), row
    assert rows["right.py"]["passed"] == "True" and rows["right.py"]["error"] == "", rows["right.py"]
    assert rows["wrong.py"]["hint_id"] == "softmax.wrong-axis", rows["wrong.py"]
    assert "landlock" in rows["right.py"]["sandbox"] and "pid-namespace" in rows["right.py"]["sandbox"]
    assert classroom["later"] == classroom["before"], "a classmate's or a package file changed"
    assert classroom["after"] == classroom["graded"], "the gradebook changed after grade returned"
    assert classroom["cwd"] == ["grades.csv"] and classroom["outside"] == [], "written outside a private dir"
    assert classroom["running"] == [], classroom["running"]
    assert classroom["ipc"] == [], f"IPC objects outlived their submission: {classroom['ipc']}"
    assert classroom["again"].returncode == 0 and classroom["again_rows"]["right.py"]["passed"] == "True"
    check = classroom["checks"][attack]
    output = check.stdout.decode() + check.stderr.decode()
    assert check.returncode == 1 and ATTACKS[attack][1] in output, output
    for raw in (done.stdout, check.stdout, classroom["graded"]):
        assert b"\x1b" not in raw and b"\r" not in raw.replace(b"\r\n", b"\n"), attack
    assert b"FORGED" not in done.stdout + classroom["graded"]


def test_an_error_forged_for_the_diagnosis_costs_the_grader_no_time(classroom):
    """Red team 80: the reading of a reshape's error multiplied out every size in the message, 12 s of the grader's
    own time (outside the submission's budget) for one row of 1,977 sizes; NumPy's error has 64 axes at most."""
    rows = _rows(classroom["graded"])
    assert float(rows["forged_error_message.py"]["seconds"]) < 6, rows["forged_error_message.py"]


def test_grade_prints_one_line_per_submission(classroom):
    """A student's newline (in an error message or a violation) cannot draw a row of its own."""
    lines = classroom["done"].stdout.decode().splitlines()
    assert len(lines) == len(ATTACKS) + 2 + 2, lines          # "wrote N rows", a line a file, "N of M passed"
    assert [line for line in lines if line.startswith("passed")] == [
        line for line in lines if line.startswith("passed") and line.endswith("right.py")], lines


FORKS_MEMORY = """
import os, time

def softmax(x):
    children = []
    for _ in range(2):                # each child holds 600 MB, more than --memory 512, at once
        pid = os.fork()
        if pid == 0:
            held = b"\\x01" * (600 << 20)     # written, so resident
            time.sleep(0.3)
            os._exit(len(held) != 600 << 20)
        children.append(pid)
    if any(os.waitpid(pid, 0)[1] for pid in children):
        raise RuntimeError("a child could not hold its 600 MB")
    return right_softmax(x)           # only the forks can fail it
"""


def test_a_submission_cannot_multiply_its_memory_by_forking(tmp_path, softmax_source, console_script):
    """The memory limit is per process: two forked children of 600 MB each under ``--memory 512``
    would together hold more than the limit (with the process bound, tens of GB: the grader
    OOM-killed). The fork fails (seccomp), so the row fails with the reason (``check`` names it);
    the classmate passes and nothing of the submission is left running."""
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "right.py").write_text(softmax_source)
    (folder / "forker.py").write_text(FORKS_MEMORY + softmax_source.replace("def softmax", "def right_softmax"))
    book = tmp_path / "grades.csv"
    done = subprocess.run([console_script, "grade", str(folder), "--exercise", "softmax", "--csv", str(book),
                           "--memory", "512", "--timeout", "10", "--seed", "11", "--no-progress"],
                          capture_output=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr.decode()
    rows = _rows(book.read_bytes())
    forker = rows["forker.py"]
    assert (forker["passed"], forker["hint_id"], forker["probe"]) == ("False", "error.other", "runs"), forker
    assert rows["right.py"]["passed"] == "True" and rows["right.py"]["error"] == "", rows["right.py"]
    check = subprocess.run([console_script, "check", "softmax", str(folder / "forker.py"), "--memory", "512",
                            "--timeout", "10"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    fork_line = FORKS_MEMORY.splitlines().index("        pid = os.fork()") + 1     # lines count from 1
    assert check.returncode == 1, check
    assert f"PermissionError: [Errno 13] Permission denied (line {fork_line} in softmax: pid = os.fork())" in check.stdout, check
    assert _running() == []


UNCOUNTED_MEMORY = {                  # memory that no rlimit counts, held while the function is graded
    "memfd.py": """
import os
held = [os.memfd_create(f"held{i}") for i in range(20)]
for fd in held:
    os.write(fd, b"\\x01" * (16 << 20))         # 16 MiB each, the file size limit: 320 MiB under --memory 64
""",
    "memfd_secret.py": """
import sys
sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "Refuse"]    # the import rule only says why
import ctypes, mmap, os
libc = ctypes.CDLL(None, use_errno=True)
held = []
for _ in range(40):                     # 160 MiB that cannot even be swapped, under --memory 64
    fd = libc.syscall(447, 0)           # memfd_secret (the same number on x86_64 and aarch64)
    if fd < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    os.ftruncate(fd, 4 << 20)
    with mmap.mmap(fd, 4 << 20) as pages:       # mapped (below RLIMIT_MEMLOCK) only while written: then
        pages[::4096] = b"\\x01" * (1 << 10)   # no rlimit counts them
    held.append(fd)
""",
    "socketpair.py": """
import sys
sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "Refuse"]    # the import rule only says why
import socket
held = [socket.socketpair() for _ in range(8)]
for pair in held:
    for end in pair:
        end.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 << 20)   # up to net.core.wmem_max a socket
        end.setblocking(False)
        try:
            while True:
                end.send(b"\\x01" * 65536)     # queued in the kernel, beside every rlimit
        except BlockingIOError:
            pass
""",
    "fallocate.py": """
import sys
sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "Refuse"]    # the import rule only says why
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
if libc.fallocate(1, 1, 0, 256 << 20) != 0:     # FALLOC_FL_KEEP_SIZE on fd 1, the grader's file of what it prints:
    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))    # disk beside the file size limit
""",
    "resvsp.py": """
import fcntl, struct                             # no refused module: FS_IOC_RESVSP64 is fallocate with KEEP_SIZE
fcntl.ioctl(1, 0x4030582A, struct.pack("hhqqii4i", 0, 0, 0, 256 << 20, 0, 0, 0, 0, 0, 0))      # (red team 41)
"""}


def test_a_submission_cannot_hold_memory_that_no_limit_counts(tmp_path, softmax_source, console_script):
    """A memfd's pages, a secret memfd's and a socketpair's queues count against no rlimit (red team 11): under
    ``--memory 256`` a submission held 1.6 GB in 100 memfds (4 GB in 250, its open files' limit), or 1.9 GB in
    120 socketpairs (net.core.wmem_max 4 MiB), under ``--memory 64`` 160 MB of unevictable memory in 40 secret
    memfds, for its whole budget, and then returned right answers and passed. Red team 40 filled the grader's disk
    the same way, with fallocate(FALLOC_FL_KEEP_SIZE) on the file its printed output goes to, outside the tmpfs (28
    of 29 classmates failed with "No space left on device"); red team 41 did it again through fallocate's ioctl.
    Now seccomp refuses these calls: each row fails with the PermissionError, the classmates' rows are right."""
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "right.py").write_text(softmax_source)
    (folder / "wrong.py").write_text(WRONG)
    for name, source in UNCOUNTED_MEMORY.items():
        (folder / name).write_text(source + softmax_source)
    book = tmp_path / "grades.csv"
    done = subprocess.run([console_script, "grade", str(folder), "--exercise", "softmax", "--csv", str(book),
                           "--memory", "64", "--seed", "11", "--no-progress"], capture_output=True, cwd=tmp_path,
                          timeout=600)
    assert done.returncode == 0, done.stderr.decode()
    rows = _rows(book.read_bytes())
    for name in UNCOUNTED_MEMORY:
        assert rows[name]["passed"] == "False", rows[name]
        assert "raised PermissionError: [Errno 13] Permission denied" in rows[name]["error"], rows[name]
    assert rows["right.py"]["passed"] == "True" and rows["wrong.py"]["hint_id"] == "softmax.wrong-axis", rows
    assert _running() == []


def test_many_kinds_of_object_from_one_submission_leave_a_classmates_kind_named(tmp_path):
    """The grader names what a submission returned that is not plain data after its class, from one
    table per grader process of at most 256 names. A submission returning 300 new classes each call
    filled it, so a classmate graded after it in the same ``grade`` (which grades every file through
    ``grade_one`` in one process) read "weights is a Unsupported, not an array" instead of "weights is
    a RedTeamEightWeights object" (red team 8)."""
    from attention_edu.checkers.judge.submission import grade_one

    flood, classmate = tmp_path / "a_flood.py", tmp_path / "b_object.py"
    flood.write_text("import itertools\nfresh = itertools.count()\n\ndef softmax(x, axis=-1):\n"
                     "    return [type(f'Kind{next(fresh)}', (), {})() for _ in range(300)]\n")
    classmate.write_text("class RedTeamEightWeights:\n    pass\n\ndef softmax(x, axis=-1):\n"
                         "    return RedTeamEightWeights()\n")
    assert grade_one("softmax", flood, seed=1).probes_passed == 0
    row = grade_one("softmax", classmate, seed=1)
    assert "weights is a RedTeamEightWeights object; expected" in row.message, row.message
    assert row.hint_id == "harness.wrong-type", row


GRADESCOPE_STUDENT = """
import os, time
found = []
for path in (ENV, RESULTS, RUN):
    try:
        found.append(f"read {path}: {open(path).read()[:40]!r}")
    except OSError:
        pass
try:
    open(RESULTS, "w").write('{"score": 25, "max_score": 25}')
    found.append("wrote results.json")
except OSError:
    pass
try:
    if os.fork() == 0:                   # a process left to rewrite results.json once the grader has written it
        os.setsid()
        time.sleep(2)
        open(RESULTS, "w").write('{"score": 25, "max_score": 25}')
        os._exit(0)
except OSError:
    pass
raise ValueError(f"found {found}")
"""


@pytest.mark.parametrize("namespaces", [True, False])
def test_the_guides_gradescope_autograder_holds_against_its_submission(tmp_path, console_script, namespaces):
    """The teachers' guide's three files, run as written (its run_autograder copied from docs/teachers.md,
    /autograder moved under a temporary root), as a container with and without user namespaces gives it: the
    submission reads neither course.env nor the autograder's files, cannot write results.json, and leaves
    nothing behind that rewrites it; results.json is the grader's, score 0 with the submission's sentence."""
    guide = (ROOT / "docs" / "teachers.md").read_text()
    script = textwrap.dedent(guide.split("- `run_autograder`:\n\n  ```bash\n", 1)[1].split("```", 1)[0])
    root = tmp_path / "autograder"
    for folder in ("source", "submission", "results"):
        (root / folder).mkdir(parents=True)
    (root / "run_autograder").write_text(script.replace("/autograder/", f"{root}/"))
    (root / "source" / "course.env").write_text("EXERCISE=softmax\nSEED=8642097531\n")
    results = root / "results" / "results.json"
    paths = {"ENV": str(root / "source" / "course.env"), "RESULTS": str(results), "RUN": str(root / "run_autograder")}
    (root / "submission" / "softmax.py").write_text("".join(f"{k} = {v!r}\n" for k, v in paths.items())
                                                   + GRADESCOPE_STUDENT)
    env = {**os.environ, "PATH": f"{Path(console_script).parent}:{os.environ['PATH']}",
           "ATTENTION_EDU_SANDBOX_NO_NAMESPACES": "" if namespaces else "1"}
    done = subprocess.run(["bash", str(root / "run_autograder")], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    written = results.read_text()
    time.sleep(3)
    assert results.read_text() == written and sorted(p.name for p in results.parent.iterdir()) == ["results.json"]
    graded = json.loads(written)
    assert (graded["score"], graded["max_score"]) == (0, 25), graded
    assert graded["output"].startswith("importing the file raised ValueError: found [] (line"), graded
    assert _running() == []


SPY = """
import os, select, struct, time
import numpy as np
found = [type(e).__name__ if isinstance(e, OSError) else e for e in [None]]
for path in {guesses!r}:                 # a classmate's file, then a name nobody handed in
    try:
        found.append(os.stat(path).st_size)
    except OSError as error:
        found.append(type(error).__name__)
import fcntl
try:                                     # dnotify: a signal each time a file of the folder is opened (red team 54)
    fcntl.fcntl(os.open(".", os.O_RDONLY), fcntl.F_NOTIFY, fcntl.DN_ACCESS | fcntl.DN_MULTISHOT)
    found.append("notified")
except OSError as error:
    found.append(os.strerror(error.errno))
space = {{}}        # ctypes, compiled as NumPy's own file: the import rule says why, the kernel's layers must hold
exec(compile("import ctypes", os.path.join(os.path.dirname(np.__file__), "x.py"), "exec"), space)
ctypes = space["ctypes"]
libc = ctypes.CDLL(None, use_errno=True)
watch = libc.inotify_init1(os.O_NONBLOCK)
if watch < 0:
    found.append(os.strerror(ctypes.get_errno()))
else:
    libc.inotify_add_watch(watch, {folder!r}.encode(), 0x20 | 0x1 | 0x10)    # IN_OPEN | IN_ACCESS | IN_CLOSE_NOWRITE
    end = time.monotonic() + 4
    while time.monotonic() < end:        # the names of the files the grader opens meanwhile (--jobs 2)
        select.select([watch], [], [], 0.2)
        try:
            events = os.read(watch, 65536)
        except BlockingIOError:
            continue
        while events:
            size = struct.unpack_from("iIII", events)[3]
            found.append(events[16:16 + size].rstrip(bytes(1)).decode())
            events = events[16 + size:]
raise RuntimeError(f"LEARNT {{found[1:]}}")
"""


def test_a_submission_learns_nothing_of_its_classmates_files_by_stat_or_inotify(tmp_path, softmax_source,
                                                                                console_script):
    """Red team 53: Landlock checks neither ``os.stat`` nor inotify. Watching its folder with inotify (ctypes imported
    as NumPy's own file), a submission read the names of its classmates' files as the grader opened them (``--jobs
    2``), and it could hold every inotify instance of the grading user for its budget; ``os.stat`` of a guessed name
    told a classmate's file from an absent one, with its size and times. Now seccomp refuses inotify (and fanotify, and
    reading extended attributes), and in the worker's mount namespace the class's folder is empty."""
    if not LAYERS.get("mount-namespace", "").startswith("active"):
        pytest.skip(f"needs a mount namespace: {LAYERS}")
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "aaa_spy.py").write_text(SPY.format(guesses=[str(folder / "bob.py"), str(folder / "nobody.py")],
                                                  folder=str(folder)) + softmax_source)
    for name in ("bob.py", "carol.py", "dave.py"):
        (folder / name).write_text(softmax_source)
    (folder / "wrong.py").write_text(WRONG)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    done = subprocess.run([console_script, "grade", str(folder), "--exercise", "softmax", "--json", "--jobs", "2",
                           "--seed", "5", "--no-progress"], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr
    rows = {Path(row["file"]).name: row for row in json.loads(done.stdout)}
    spy = rows["aaa_spy.py"]
    assert "LEARNT ['FileNotFoundError', 'FileNotFoundError', 'Permission denied', 'Permission denied']" in spy["error"]
    assert all(rows[name]["passed"] for name in ("bob.py", "carol.py", "dave.py")), rows
    assert rows["wrong.py"]["hint_id"] == "softmax.wrong-axis", rows["wrong.py"]
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert _running() == []


def test_the_class_folder_is_covered_whatever_its_name_and_never_hides_what_the_worker_needs(tmp_path, softmax_source,
                                                                                            console_script):
    """Red team 54: covering the class's folder broke honest grading twice (every file 0 of 25, grade exit 0): a
    folder name that is not UTF-8 killed the launcher (``str.encode``), and a course folder holding the grader's
    virtual environment (its packages from the base Python, attention_edu installed from elsewhere) was covered,
    though the worker starts through that environment's ``bin/python`` and reads its ``pyvenv.cfg``."""
    latin = Path(tempfile.mkdtemp(prefix=os.fsdecode(b"cl\xe9ss-")))      # the folder covered: the temporary
    try:                                                                # folder's child
        (latin / "right.py").write_text(softmax_source)
        done = subprocess.run([console_script, "grade", str(latin), "--exercise", "softmax", "--json", "--seed", "2",
                               "--no-progress"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    finally:
        shutil.rmtree(latin)
    assert done.returncode == 0 and json.loads(done.stdout)[0]["passed"], done.stdout + done.stderr
    course = tmp_path / "course"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(course / ".venv")],
                   check=True, timeout=120)
    (course / "hw1").mkdir()
    (course / "hw1" / "right.py").write_text(softmax_source)
    paths = [*site.getsitepackages(), str(ROOT)]     # the grader's packages, outside the course folder
    grader = (f"import sys; sys.path[:0] = {paths!r}; from attention_edu.cli import main; "
              f"sys.exit(main(['grade', {str(course / 'hw1')!r}, '--exercise', 'softmax', '--json', '--seed', '2', "
              "'--no-progress']))")
    done = subprocess.run([str(course / ".venv" / "bin" / "python"), "-c", grader], capture_output=True, text=True,
                          cwd=tmp_path, timeout=300)
    assert done.returncode == 0 and json.loads(done.stdout)[0]["passed"], done.stdout + done.stderr


def test_a_table_of_index_maps_by_shape_in_front_of_a_wrong_formula_fails(tmp_path):
    """Red team 76 (attacks 37 to 44): the hidden cases kept their public twins' shapes, so a submission holding, for
    each public shape (and the property's), where every output entry comes from, passed split_heads 16/16 in front of
    a plain reshape, wrong on any other shape; seven more exercises fell the same way (index maps, a polynomial's
    terms). The random and batched cases' hidden twins now come at new lengths."""
    from attention_edu.checkers.judge.submission import grade_one
    from attention_edu.multi_head import split_heads
    shapes = {(case.args[0].shape, case.args[1]) for case in EXERCISES["split_heads"].cases()} | {((2, 5, 12), 3)}
    table = {key: split_heads(np.arange(float(np.prod(key[0]))).reshape(key[0]), key[1]).astype(int).ravel().tolist()
             for key in shapes}
    (tmp_path / "tabled.py").write_text(textwrap.dedent(f"""\
        import numpy as np
        TABLE = {table!r}

        def split_heads(X, num_heads):
            shape = X.shape[:-2] + (num_heads, X.shape[-2], X.shape[-1] // num_heads)
            where = TABLE.get((X.shape, num_heads))
            if where is not None:                        # a shape it has seen: the answer's index map
                return X.reshape(-1)[where].reshape(shape)
            return X.reshape(shape)                      # anything else: a plain reshape, wrong
        """))
    for seed in (1, 2, 3):
        row = grade_one("split_heads", tmp_path / "tabled.py", seed=seed)
        assert not row.passed and row.probes_passed < row.probes_total / 2, row
    assert grade_one("split_heads", tmp_path / "tabled.py", seed=None).passed     # the public probes alone: tabled
