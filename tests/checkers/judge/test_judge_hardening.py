"""Attacks found by a red-team review of the judge, each run end to end through ``check`` or ``grade``.

A child that stops reading its pipe, a notebook that asks the judge to compute a huge helper
result, malformed or huge notebooks, symbolic links to classmates' files, file names a spreadsheet
would run as formulas, and SIGTERM or SIGHUP in the middle of grading. The sandbox-dependent ones skip, saying why,
where the kernel lacks Landlock or a PID namespace.
"""

from __future__ import annotations

import csv
import io
import json
import os
import resource
import signal
import socket
import stat
import subprocess
import sys
import textwrap
import threading
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from attention_edu.checkers import EXERCISES
from attention_edu.checkers.judge import harness
from attention_edu.checkers.judge.sandbox import available_layers, landlock_abi
from attention_edu.checkers.judge.submission import grade_one

LAYERS = available_layers()
sandboxed = pytest.mark.skipif(
    not all(LAYERS.get(k, "").startswith("active") for k in ("landlock", "pid-namespace")),
    reason=f"needs Landlock and a PID namespace: {LAYERS}")


def _notebook(path: Path, *sources) -> Path:
    cells = [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
              "source": source if isinstance(source, list) else textwrap.dedent(source)} for source in sources]
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


def _rows(path: Path) -> dict[str, dict]:
    return {Path(r["file"]).name: r for r in csv.DictReader(io.StringIO(path.read_text()))}


HANG_ON_HELPER = """
    import io, json, os, time
    import numpy as np
    inp, out = ae._fds                          # the worker's pipes, kept on the ae helper
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, np.zeros((500, 200)), allow_pickle=False)     # under the 1 MiB a frame
    blob = buffer.getvalue()
    head = json.dumps({"$d": [["helper", "softmax"], ["args", [{"$a": 0}]]]}).encode()
    body = len(head).to_bytes(8, "little") + head + len(blob).to_bytes(8, "little") + blob
    os.write(out, len(body).to_bytes(8, "little") + body)     # ask for ae.softmax of 800 kB ...
    time.sleep(600)                                          # ... and never read the answer
    """


@sandboxed
def test_a_notebook_that_never_reads_its_helper_answer_cannot_hold_grade(tmp_path, console_script):
    folder = tmp_path / "class"
    folder.mkdir()
    _notebook(folder / "hang.ipynb", HANG_ON_HELPER, "def causal_mask(m, n=None):\n    return None\n")
    (folder / "right.py").write_text("import numpy as np\n\ndef causal_mask(m, n=None):\n"
                                     "    n = m if n is None else n\n    return np.tril(np.ones((m, n), bool), k=n - m)\n")
    start = time.monotonic()
    done = subprocess.run([console_script, "grade", str(folder), "--exercise", "causal_mask", "--csv",
                           str(tmp_path / "grades.csv"), "--timeout", "1", "--budget", "6", "--no-progress"],
                          capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    assert time.monotonic() - start < 60
    rows = _rows(tmp_path / "grades.csv")
    assert "did not finish within the 6 s" in rows["hang.ipynb"]["error"], rows["hang.ipynb"]
    assert rows["right.py"]["passed"] == "True", rows["right.py"]


SHRINK_THE_PIPE = """
    import fcntl, os, stat, struct, termios, time, __main__
    def is_pipe(fd):
        try:
            return stat.S_ISFIFO(os.fstat(fd).st_mode)
        except OSError:
            return False
    calls = next(fd for fd in range(3, 64) if is_pipe(fd))   # the pipe the judge's frames come on
    fcntl.fcntl(calls, 1031, 4096)              # F_SETPIPE_SZ: the judge's call frames now block at 4 KiB
    def receive(fd, deadline, *rest):
        while True:
            if struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\\0" * 4))[0] >= 4096:
                time.sleep(600)                 # the judge is writing a larger frame: never read it
            time.sleep(0.2)
            if 0 < struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\\0" * 4))[0] < 4096:
                return real(fd, deadline, *rest)
    real, __main__.protocol.receive = __main__.protocol.receive, receive
    def split_heads(X, num_heads):
        return X
    """


@sandboxed
def test_a_child_that_stops_reading_its_pipe_cannot_hold_check(tmp_path, console_script):
    arrays = [a for case in EXERCISES["split_heads"].cases() for a in case.args if isinstance(a, np.ndarray)]
    assert max(a.nbytes for a in arrays) > 4096, "the attack needs a call frame larger than the 4 KiB pipe"
    file = tmp_path / "shrink.py"
    file.write_text(textwrap.dedent(SHRINK_THE_PIPE))
    start = time.monotonic()
    done = subprocess.run([console_script, "check", "split_heads", str(file), "--timeout", "1"],
                          capture_output=True, timeout=120)
    assert done.returncode == 1 and time.monotonic() - start < 60, done.stdout.decode()
    assert "harness.timeout" in done.stdout.decode(), done.stdout.decode()


def _helper_reply(name: str, args: list) -> tuple[dict, float, int]:
    """The judge's answer to a notebook's ``ae.<name>(*args)``, its seconds, and the MiB it allocated at
    its peak (tracemalloc, which sees NumPy's arrays: the process's own peak may be higher already)."""
    child = harness.Child(None, 0, 0, lambda: 0, helpers={name: EXERCISES[name].reference})
    tracemalloc.start()
    try:
        start = time.perf_counter()
        reply = child._helper({"helper": name, "args": args})
        return reply, time.perf_counter() - start, tracemalloc.get_traced_memory()[1] >> 20
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("name, args", [
    ("scaled_dot_product_attention", [np.ones((400, 1, 20, 1)), np.ones((1, 400, 20, 1)), np.ones((1, 400, 20, 1))]),
    ("causal_mask", [100_000]),                              # 10 GB of booleans from one int
    ("causal_mask", [np.int64(45_000)]),                     # a NumPy int
    ("causal_mask", [np.array(45_000)]),                     # a 0-d array
    ("bahdanau_scores", [np.ones((600, 1))] * 4 + [np.ones(600)]),   # an m x n x d_a intermediate
    ("softmax_jacobian", [np.full((600, 600), 1 / 600)]),            # B x n x n from B x n
    # a mask with an empty batch axis (red team 12): Q K^T, 6000 x 6000, is built before the mask empties it
    ("scaled_dot_product_attention", [np.ones((6000, 1))] * 3 + [np.ones((0, 1, 1), bool)]),
    ("softmax", [np.ones((1,) * 40 + (3,))]),      # red team 44: past NumPy's 32 axes the bound itself raised
], ids=["broadcast", "int", "numpy-int", "0-d", "intermediate", "jacobian", "empty-batch", "many-axes"])
def test_a_notebook_helper_cannot_make_the_judge_allocate_gigabytes(name, args):
    """Kilobytes in, gigabytes asked for: the judge refuses before computing."""
    reply, seconds, grown = _helper_reply(name, args)
    assert "use smaller arrays" in reply.get("error", ""), reply
    assert seconds < 1 and grown < 200, (seconds, grown)


def test_a_notebook_helper_still_answers_ordinary_calls():
    reply, _, _ = _helper_reply("scaled_dot_product_attention", [np.ones((2, 3, 4))] * 3)
    assert np.asarray(reply["value"][0]).shape == (2, 3, 4), reply
    assert _helper_reply("causal_mask", [3, 4])[0]["value"].shape == (3, 4)
    assert "raised" in _helper_reply("causal_mask", [-1])[0]["error"]


MANY_HEADS = """
    import numpy as np
    refusals = []
    for dtype in (np.longdouble, np.float64):   # 25 KB asked for 256 heads x 256 x 256 weights: 1.1 GB in the judge
        X, W = np.ones((256, 1), dtype), np.ones((1, 256), dtype)
        try:
            ae.multi_head_attention(X, X, W, W, W, W.T, 256)
        except ValueError as err:
            refusals.append("use smaller arrays" in str(err))

    def attention_entropy(weights):
        return weights.sum(axis=-1) if refusals == [True, True] else None
    """

def _cwd(pid: str) -> str:
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:            # ended meanwhile, or not ours to read
        return ""


@sandboxed
def test_a_notebook_helper_with_many_heads_cannot_make_the_judge_hold_a_gigabyte(tmp_path):
    """The bound counted elements as the cube of the longest axis, but multi_head_attention holds its
    H x m x n weights about 4 times over and a longdouble takes 16 bytes: ``ae.multi_head_attention`` on
    (256, 1) inputs with 256 heads, 25 KB of request, took the grader from 51 MB to 1,107 MB (red team 11).
    Now the bound is 4,194,304 float64s with a longdouble counting twice: the judge refuses, and peaks low."""
    folder = tmp_path / "class"
    folder.mkdir()
    _notebook(folder / "heads.ipynb", MANY_HEADS)
    (folder / "right.py").write_text("import numpy as np\n\ndef attention_entropy(weights):\n"
                                     "    return -np.sum(weights * np.log(np.where(weights > 0, weights, 1)), axis=-1)\n")
    (folder / "wrong.py").write_text("import numpy as np\n\ndef attention_entropy(weights):\n"
                                     "    return -np.sum(weights * np.log(weights + 1e-6), axis=-1)\n")
    scratch = tmp_path / "tmp"            # the private directories: every process of this run works in one
    scratch.mkdir()
    done = subprocess.run([sys.executable, "-c", PEAK, "grade", str(folder), "--exercise", "attention_entropy",
                           "--csv", str(tmp_path / "grades.csv"), "--seed", "1", "--no-progress"],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "TMPDIR": str(scratch)})
    assert done.returncode == 0, done.stderr
    rows = _rows(tmp_path / "grades.csv")
    assert rows["heads.ipynb"]["attempted"] == "True", rows["heads.ipynb"]      # both refused: sums, not None
    assert rows["right.py"]["passed"] == "True" and rows["wrong.py"]["hint_id"] == "attention_entropy.log-epsilon"
    assert int(done.stderr.rsplit("peak ", 1)[1]) >> 10 < 300, done.stderr      # MB of the grader's own VmHWM
    assert list(scratch.iterdir()) == [] and not [pid for pid in filter(str.isdigit, os.listdir("/proc"))
                                                  if str(scratch) in _cwd(pid)]


FORGED_HELPER_NAMES = """
    import time
    import numpy as np
    inp, out = ae._fds                          # the worker's pipes, kept on the ae helper
    protocol = type(ae).__call__.__globals__["protocol"]     # the worker's (a notebook's __main__ is its own)
    answers = []
    for name in (["softmax"], {"a": 1}, 3, None, 2.5, (1, 2)):   # a helper's name that is no str
        protocol.send(out, {"helper": name, "args": []})
        answers.append(protocol.receive(inp, time.monotonic() + 30))
    refused = all("is not available" in answer.get("error", "") for answer in answers)
    def causal_mask(m, n=None):                 # right only if the judge refused every forged frame
        n = m if n is None else n
        return np.tril(np.ones((m, n), bool), k=n - m) if refused else None
    """


@pytest.mark.parametrize("name", [["softmax"], {"a": 1}, 3, None, 2.5, (1, 2), "__class__"])
def test_a_forged_helper_name_of_any_type_is_refused_not_raised(name):
    child = harness.Child(None, 0, 0, lambda: 0, helpers={"softmax": EXERCISES["softmax"].reference})
    assert "is not available in this exercise" in child._helper({"helper": name, "args": []})["error"]


@sandboxed
def test_forged_helper_frames_cannot_crash_grade(tmp_path, console_script):
    """A notebook sends helper frames whose name is a list, a dict, a number: before the fix, the
    first one raised TypeError (unhashable) in the judge and ended the whole batch with a traceback."""
    folder = tmp_path / "class"
    folder.mkdir()
    _notebook(folder / "forger.ipynb", FORGED_HELPER_NAMES)
    (folder / "right.py").write_text("import numpy as np\n\ndef causal_mask(m, n=None):\n"
                                     "    n = m if n is None else n\n    return np.tril(np.ones((m, n), bool), k=n - m)\n")
    done = subprocess.run([console_script, "grade", str(folder), "--exercise", "causal_mask", "--csv",
                           str(tmp_path / "grades.csv"), "--no-progress"], capture_output=True, timeout=120)
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr.decode()
    rows = _rows(tmp_path / "grades.csv")
    assert rows["right.py"]["passed"] == "True", rows["right.py"]
    assert rows["forger.ipynb"]["passed"] == "True", rows["forger.ipynb"]     # each forged frame got a refusal


@sandboxed
@pytest.mark.parametrize("source", [
    [1, 2],                                                 # a source that is not text
    "x = 1" + " + 1" * 100_000,                             # deeper than the parser's recursion
])
def test_a_malformed_notebook_is_its_own_row(tmp_path, console_script, softmax_source, source):
    folder = tmp_path / "class"
    folder.mkdir()
    _notebook(folder / "eve.ipynb", source)
    (folder / "odd.ipynb").write_text(json.dumps({"cells": 5}))
    (folder / "right.py").write_text(softmax_source)
    done = subprocess.run([console_script, "grade", str(folder), "--exercise", "softmax", "--csv",
                           str(tmp_path / "grades.csv"), "--no-progress"], capture_output=True, timeout=300)
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr.decode()
    rows = _rows(tmp_path / "grades.csv")
    assert rows["eve.ipynb"]["passed"] == "False" and rows["eve.ipynb"]["error"], rows["eve.ipynb"]
    assert "could not be read as a notebook" in rows["odd.ipynb"]["error"], rows["odd.ipynb"]
    assert rows["right.py"]["passed"] == "True", rows["right.py"]


@sandboxed
def test_a_symbolic_link_is_not_graded_as_a_submission(tmp_path, console_script, softmax_source):
    folder, secret = tmp_path / "class", tmp_path / "teacher_only.py"
    (folder / "bob").mkdir(parents=True)
    (folder / "eve").mkdir()
    (folder / "bob" / "softmax.py").write_text(softmax_source)
    secret.write_text("TEACHER_ONLY_TOKEN\n")
    (folder / "eve" / "softmax.py").symlink_to("../bob/softmax.py")      # hand in a classmate's file
    (folder / "eve" / "notes.py").symlink_to(secret)                       # or read one outside the folder
    (folder / "a_link.py").symlink_to("bob/softmax.py")                    # graded first: a row without layers
    done = subprocess.run([console_script, "grade", str(folder), "--exercise", "softmax", "--json",
                           "--no-progress"], capture_output=True, timeout=300)
    rows = {(Path(r["file"]).parent.name, Path(r["file"]).name): r for r in json.loads(done.stdout)}
    assert rows["bob", "softmax.py"]["passed"] is True
    for name in ("softmax.py", "notes.py"):
        assert rows["eve", name]["passed"] is False and "symbolic link" in rows["eve", name]["error"]
    assert b"TEACHER_ONLY_TOKEN" not in done.stdout + done.stderr
    assert b"sandbox layers: none" not in done.stderr, done.stderr       # the links' rows ran in no sandbox


def test_a_file_given_twice_by_different_paths_is_graded_once(tmp_path, monkeypatch, console_script, softmax_source):
    """Red team 44: the same folder given once by a relative and once by an absolute path (a teacher's shell history,
    a script's "$PWD/subs") graded every file twice, two rows per student. Rows are now kept by absolute path, under
    the name first given."""
    from attention_edu.checkers.judge import list_submissions

    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "alice.py").write_text(softmax_source)
    (tmp_path / "class" / "bob.py").write_text("def softmax(x):\n    return x\n")
    monkeypatch.chdir(tmp_path)
    given = ["class", str(tmp_path / "class"), "./class/bob.py", "class/../class/alice.py"]
    assert list(list_submissions(given)) == [os.path.join("class", "alice.py"), os.path.join("class", "bob.py")]
    assert list(list_submissions(["./class/bob.py", "class"])) == ["class/bob.py", "class/alice.py"]
    done = subprocess.run([console_script, "grade", *given, "--exercise", "softmax", "--json"], capture_output=True,
                          cwd=tmp_path, timeout=120)
    rows = json.loads(done.stdout)
    assert sorted((row["file"], row["passed"]) for row in rows) == [("class/alice.py", True), ("class/bob.py", False)]


def test_a_student_file_named_like_a_module_the_grader_imports_never_runs_in_the_grader(tmp_path, softmax_source,
                                                                                         console_script):
    """Red team 47: ``python -m attention_edu grade -- *.py`` run inside the submissions folder (the README offers
    ``python -m`` where the scripts folder is not on PATH) put that folder first on the import path, and the grader's
    late ``from tqdm import tqdm`` imported a student's tqdm.py into itself, unsandboxed: it gave itself 25/25 (and a
    numpy.py would have run before any of the grader's code). ``python -m attention_edu`` now takes that folder off
    first. Red team 48: from ``python -c`` (or a Jupyter kernel) started there, ``cli.main`` imported a student's
    csv.py while building its parser, before any refusal, and a student's ``tqdm/`` folder beside the folders given;
    ``check`` had no guard. While a command runs, the folder it runs in is now off the import path, and where a folder
    of submissions is on it otherwise (PYTHONPATH), check and grade refuse to run (exit 2). Red team 52: so they do
    where the working folder was on the path when the command began (PYTHONPATH=":"), though the command took it off."""
    folder = tmp_path / "class"
    (folder / "bo").mkdir(parents=True)
    (folder / "tqdm").mkdir()
    mark = tmp_path / "ran-in-the-grader"
    attack = textwrap.dedent(f"""
        import sys
        if "attention_edu.checkers" in sys.modules:       # in the grader's process, not in the sandbox
            open({str(mark)!r}, "a").write(__name__ + "\\n")
        def softmax(x):
            return x
        """)
    for module in ("tqdm/__init__", "numpy", "csv", "concurrent", "charset_normalizer"):
        (folder / f"{module}.py").write_text(attack)
    (folder / "alice.py").write_text(softmax_source)
    (folder / "bo" / "softmax.py").write_text(softmax_source)
    files = sorted(p.name for p in folder.iterdir() if p.suffix == ".py")
    done = subprocess.run([sys.executable, "-m", "attention_edu", "grade", "--exercise", "softmax", "--json",
                           "--no-progress", "--", *files], capture_output=True, cwd=folder, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = {row["file"]: row["passed"] for row in json.loads(done.stdout)}
    assert rows == {"alice.py": True, "charset_normalizer.py": False, "concurrent.py": False, "csv.py": False,
                    "numpy.py": False}
    for module in ("numpy", "concurrent"):      # python -c imports these itself, before any of the grader's code
        (folder / f"{module}.py").unlink()
    for command, expected in ((["grade", "--exercise", "softmax", "--json", "--no-progress", "bo", "tqdm"], 0),
                              (["grade", "--exercise", "softmax", "--json", "--no-progress", "."], 2),   # (red team 52)
                              (["check", "softmax", "csv.py"], 2)):        # the working folder was on the path
        code = f"from attention_edu.cli import main; raise SystemExit(main({command!r}))"
        ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=folder, timeout=300)
        assert ran.returncode == expected, (command, ran.stdout, ran.stderr)
        if expected == 0:
            rows = {row["file"]: row["passed"] for row in json.loads(ran.stdout)}
            assert rows[os.path.join("bo", "softmax.py")] and not rows[os.path.join("tqdm", "__init__.py")], rows
    assert not mark.exists(), mark.read_text()
    for command in (["grade", "--exercise", "softmax", "--no-progress", "."], ["check", "softmax", "alice.py"]):
        refused = subprocess.run([console_script, *command], capture_output=True, text=True, cwd=folder,
                                 env=dict(os.environ, PYTHONPATH=":"), timeout=300)     # "" is the working folder
        assert refused.returncode == 2 and "on Python's import path" in refused.stderr, (command, refused.stderr)
    pythonpath = dict(os.environ, PYTHONPATH=str(folder / "tqdm"))       # folders of submissions on the path
    for command in (["grade", "--exercise", "softmax", "--no-progress", str(folder / "tqdm")],
                    ["check", "softmax", str(folder / "tqdm" / "__init__.py")],
                    ["grade", "--exercise", "softmax", "--no-progress", str(folder / "tqdm" / "x")]):
        (folder / "tqdm" / "x").mkdir(exist_ok=True)
        (folder / "tqdm" / "x" / "a.py").write_text(softmax_source)
        refused = subprocess.run([sys.executable, "-m", "attention_edu", *command], capture_output=True, text=True,
                                 cwd=tmp_path, env=pythonpath, timeout=300)
        assert refused.returncode == 2 and "on Python's import path" in refused.stderr, (command, refused.stderr)
    assert not mark.exists(), mark.read_text()


def test_commands_overlapping_in_threads_put_the_working_folder_back_on_the_path(tmp_path, monkeypatch,
                                                                                  softmax_source):
    """Red team 49: each command saved sys.path, took the working folder off and wrote the saved copy back, so of
    two commands overlapping in threads of one Python (a notebook's), the one that ended last wrote back a path
    without the folder: the teacher's own modules there no longer imported. The folder is now back after the last."""
    import threading
    from attention_edu import cli
    (tmp_path / "sub").mkdir()                          # a folder of its own: the working folder holds none
    for name, seconds in (("a.py", 1), ("b.py", 3)):
        (tmp_path / "sub" / name).write_text(f"import time\ntime.sleep({seconds})\n" + softmax_source)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", ["", *sys.path])
    before, seen = list(sys.path), []
    first = threading.Thread(target=cli.main, args=(["check", "softmax", "sub/a.py"],))
    second = threading.Thread(target=cli.main, args=(["check", "softmax", "sub/b.py"],))
    first.start()
    time.sleep(0.5)
    second.start()
    while first.is_alive() or second.is_alive():
        seen.append("" in sys.path)
        time.sleep(0.05)
    assert sys.path == before and not any(seen[:10]), seen      # off while they ran, back after the last


@pytest.mark.parametrize("swap", ["link", "fifo", "socket"])
def test_a_name_swapped_after_the_grader_looked_at_it_is_refused_when_read(tmp_path, softmax_source, swap):
    """Red team 30: the grader looked at the name (a link? a regular file?) and later opened it by name again. A
    student who may write in the submissions folder swapped in, between the two, a link to a classmate's right file
    (graded under the swapper's name, 25/25) or a FIFO (the grader blocked in open for good). The grader's last look
    is now the listing, and the one open refuses what it finds there. (Red team 34: a socket bound at the name was
    "not graded", as if the file could not be read, where the guide says it fails.)"""
    from attention_edu.checkers.judge import list_submissions

    (tmp_path / "alice.py").write_text(softmax_source)
    mallory = tmp_path / "mallory.py"
    mallory.write_text("def softmax(x):\n    return x\n")
    listed = list_submissions([str(tmp_path)])[str(mallory)]
    mallory.unlink()
    if swap == "socket":
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(mallory))
    else:
        mallory.symlink_to("alice.py") if swap == "link" else os.mkfifo(mallory)
    rows = []
    grading = threading.Thread(target=lambda: rows.append(grade_one("softmax", mallory, seed=1, listed=listed)),
                               daemon=True)
    grading.start()
    grading.join(60)
    if grading.is_alive() and swap == "fifo":       # let the blocked open go before failing
        os.close(os.open(mallory, os.O_WRONLY | os.O_NONBLOCK))
    assert rows, "the grader hung on the swapped name"
    reason = "symbolic link" if swap == "link" else "not a regular file"
    assert rows[0].status == "failed" and rows[0].probes_passed == 0 and reason in rows[0].error, rows[0]


def test_a_folder_swapped_for_a_link_after_the_listing_grades_nothing_of_another(tmp_path, monkeypatch,
                                                                                 softmax_source):
    """Red team 32: O_NOFOLLOW guards a path's last part only, so a student who could write in her own folder swapped
    its subfolder for a link to a classmate's folder (or to one only the grader may read) after the class was listed:
    the grader opened her file through the link and graded the classmate's right softmax as hers (25/25). Now each
    folder is opened only as the folder its parent listed, and a file must be the one listed."""
    from attention_edu.checkers.judge import list_submissions

    (tmp_path / "alice").mkdir()
    (tmp_path / "alice" / "softmax.py").write_text(softmax_source)
    work = tmp_path / "mallory" / "work"
    work.mkdir(parents=True)
    (work / "softmax.py").write_text("def softmax(x):\n    return x\n")

    def swap():
        work.rename(tmp_path / "mallory" / "old")
        work.symlink_to(tmp_path / "alice")
    listed = list_submissions([str(tmp_path)])          # swapped after the listing, before her turn
    swap()
    row = grade_one("softmax", work / "softmax.py", seed=1, listed=listed[str(work / "softmax.py")])
    assert not row.passed and "not the file that was listed" in row.error, row
    (tmp_path / "mallory" / "work").unlink()
    (tmp_path / "mallory" / "old").rename(work)
    scandir = os.scandir

    def listing_then_swap(folder):                      # swapped between her folder's listing and its subfolder's
        entries = list(scandir(folder))
        if isinstance(folder, int) and os.readlink(f"/proc/self/fd/{folder}") == str(tmp_path / "mallory"):
            swap()
        return iter(entries)
    monkeypatch.setattr(os, "scandir", listing_then_swap)
    assert list(list_submissions([str(tmp_path)])) == [str(tmp_path / "alice" / "softmax.py")]


def test_an_entry_gone_or_replaced_after_the_listing_costs_nobody_a_row_or_a_mark(tmp_path, monkeypatch,
                                                                                 softmax_source):
    """Red team 33: (a) the listing stat'ed every entry of a folder at once, so a student renaming her own file to and
    fro in a shared drop folder made the whole folder "could not list" about one run in eight (no classmate graded);
    (b) an honest file saved again while grading ran (an editor's or Jupyter's atomic save: a new inode) scored 0 of
    25 as "not the file that was listed". Now the entry gone is left out, and a replaced file is "not graded"."""
    from attention_edu.checkers.judge import list_submissions

    drop = tmp_path / "drop"
    drop.mkdir()
    for name in ("alice.txt", "bob.py", "cy.py"):
        (drop / name).write_text(softmax_source)
    scandir = os.scandir

    def listed_then_gone(folder):
        entries = list(scandir(folder))
        (drop / "alice.txt").unlink(missing_ok=True)        # between the folder's read and each entry's stat
        return iter(entries)
    monkeypatch.setattr(os, "scandir", listed_then_gone)
    listed = list_submissions([str(drop)])
    monkeypatch.undo()
    assert list(listed) == [str(drop / "bob.py"), str(drop / "cy.py")]
    (drop / ".bob.py.tmp").write_text(softmax_source)
    (drop / ".bob.py.tmp").rename(drop / "bob.py")          # saved again, unchanged, as editors save
    row = grade_one("softmax", drop / "bob.py", seed=1, listed=listed[str(drop / "bob.py")])
    assert row.status == "not graded" and row.probes_total is None, row
    assert "not the file that was listed" in row.error and "grade it again" in row.error, row
    assert grade_one("softmax", drop / "cy.py", seed=1, listed=listed[str(drop / "cy.py")]).passed


def test_a_path_longer_than_the_system_takes_is_its_own_row_and_the_class_is_graded(tmp_path, console_script,
                                                                                   softmax_source):
    """Red team 33: a file listed through its folder's descriptor but whose whole path is longer than PATH_MAX made
    pathlib raise ENAMETOOLONG out of grade_one: a traceback, exit 1, no gradebook, no row for anyone."""
    (tmp_path / "class" / "bob").mkdir(parents=True)
    (tmp_path / "class" / "bob" / "bob.py").write_text(softmax_source)
    fd, length = os.open(tmp_path / "class", os.O_RDONLY), len(os.fsencode(tmp_path / "class"))
    while length + 101 < 4050:           # folders of 100 characters, the deepest still listable: past 4,096 with the file
        os.mkdir("d" * 100, dir_fd=fd)
        fd, parent, length = os.open("d" * 100, os.O_RDONLY, dir_fd=fd), fd, length + 101
        os.close(parent)
    with open(os.open("a" * 200 + ".py", os.O_WRONLY | os.O_CREAT, dir_fd=fd), "w") as handle:
        handle.write("def softmax(x):\n    return x\n")
    os.close(fd)
    done = subprocess.run([console_script, "grade", str(tmp_path / "class"), "--exercise", "softmax", "--csv",
                           str(tmp_path / "grades.csv"), "--no-progress"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    rows = _rows(tmp_path / "grades.csv")
    long_row = rows["a" * 200 + ".py"]
    assert rows["bob.py"]["passed"] == "True" and long_row["status"] == "not graded", rows
    assert "(File name too long)" in long_row["error"], long_row         # red team 34: not "no such file"


def test_a_file_the_grader_may_not_read_is_not_graded_and_a_folder_link_is_named(tmp_path, monkeypatch, capsys,
                                                                                  softmax_source):
    """False-fail hunt 4: a file handed in that the grading user could not read (mode 0600, another owner) was the
    student's failure, 0 of 25 ("could not be read as text"); and a folder reached through a link (a section of the
    class linked in) was left out without a word. The first is now "not graded" (no score) with a sentence for the
    teacher, from grade and check alike (exit 2); the second is named on stderr. (Root reads every file: the refusal
    is the kernel's answer, raised here as the kernel raises it.)"""
    from attention_edu.checkers.judge import list_submissions, submission
    from attention_edu.cli import main

    (tmp_path / "locked.py").write_text(softmax_source)

    def refused(path, listed=None):
        raise PermissionError(13, "Permission denied", str(path))
    monkeypatch.setattr(submission, "read_submission", refused)
    row = grade_one("softmax", tmp_path / "locked.py", seed=1)
    assert row.status == "not graded" and not row.attempted and row.probes_total is None, row
    assert "the grader could not read" in row.error and "Permission denied" in row.error, row
    assert main(["check", "softmax", str(tmp_path / "locked.py")]) == 2
    assert "the grader could not read" in capsys.readouterr().err
    (tmp_path / "class" / "section-a").mkdir(parents=True)
    (tmp_path / "section-b").mkdir()
    (tmp_path / "section-b" / "bob.py").write_text(softmax_source)
    (tmp_path / "class" / "section-b").symlink_to(tmp_path / "section-b")
    assert list_submissions([str(tmp_path / "class")]) == {}
    assert "not followed: " + str(tmp_path / "class" / "section-b") + " is a link" in capsys.readouterr().err


@sandboxed
def test_a_huge_notebook_is_refused_unread(tmp_path, console_script, softmax_source):
    folder = tmp_path / "class"
    folder.mkdir()
    _notebook(folder / "huge.ipynb", "x = 1\n" + "#" * (17 << 20))
    (folder / "right.py").write_text(softmax_source)
    done = subprocess.run([console_script, "grade", str(folder), "--exercise", "softmax", "--json",
                           "--no-progress"], capture_output=True, timeout=300)
    rows = {Path(r["file"]).name: r for r in json.loads(done.stdout)}
    assert "larger than 16 MiB" in rows["huge.ipynb"]["error"] and rows["right.py"]["passed"] is True


@sandboxed
def test_a_file_name_a_spreadsheet_would_run_is_quoted(tmp_path, console_script, softmax_source):
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / '=HYPERLINK("http:evil.example","PASSED")+0.py').write_text(softmax_source)
    done = subprocess.run([console_script, "grade", ".", "--exercise", "softmax", "--csv", str(tmp_path / "g.csv"),
                           "--no-progress"], capture_output=True, cwd=folder, timeout=300)
    assert done.returncode == 0, done.stderr.decode()
    [row] = csv.DictReader(io.StringIO((tmp_path / "g.csv").read_text()))
    assert row["file"].startswith("'=HYPERLINK(") and row["passed"] == "True", row


def _cells(line: str, separators: str = ",;\t") -> list[str]:
    """A CSV line cut as a spreadsheet's import does with several separators ticked (LibreOffice's default: comma,
    semicolon, tab), a separator inside double quotes staying in its cell."""
    cells, cell, quoted = [], "", False
    for char in line:
        if char == '"':
            quoted = not quoted
        elif char in separators and not quoted:
            cells, cell = cells + [cell], ""
            continue
        cell += char
    return cells + [cell]


@sandboxed
def test_a_semicolon_in_a_name_or_an_error_shifts_no_column_in_a_spreadsheet(tmp_path, console_script,
                                                                           softmax_source):
    """Red team 62: LibreOffice cuts a CSV on ',', ';' and tab by default; a wrong file named ``bob.py;True;...``
    read there as a right row, 25 of 25, and ``;=7*6`` in its error as a cell of its own, a formula. Red team 63: a
    right ``-alice.py``, written ``'-alice.py``, read as a wrong ``'-alice.py``; and the CSV, written with its text
    quoted, could not be read back that way (its True and False were bare)."""
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "bob.py").write_text(softmax_source)
    forged = "bob.py;True;True;passed;;;25;25;[];7;[];0.3;;.py"
    (folder / forged).write_text("import numpy as np\n\ndef softmax(x):\n    return np.zeros_like(x)\n")
    (folder / "eve.py").write_text("raise ValueError('no;=7*6;\\t=1+1')\n")
    (folder / "-alice.py").write_text(softmax_source)
    (folder / "'-alice.py").write_text(folder.joinpath(forged).read_text())
    done = subprocess.run([console_script, "grade", ".", "--exercise", "softmax", "--csv", str(tmp_path / "g.csv"),
                           "--no-progress"], capture_output=True, cwd=folder, timeout=300)
    assert done.returncode == 0, done.stderr.decode()
    header, *lines = (tmp_path / "g.csv").read_text().splitlines()
    fields = [cell.strip('"') for cell in _cells(header)]
    passed = {}
    for line in lines:
        cells = _cells(line)
        assert len(cells) == len(fields), line              # no cell more: the columns stay where they are
        row = dict(zip(fields, (cell.strip('"') for cell in cells)))
        passed[row["file"]] = row["passed"]
        assert not any(cell.strip('"').startswith(("=", "+", "-", "@")) for cell in cells), line
    assert passed == {"bob.py": "True", forged: "False", "eve.py": "False", "'-alice.py": "True", "''-alice.py": "False"}
    with open(tmp_path / "g.csv", newline="") as handle:      # read back as written: text quoted, numbers bare
        rows = list(csv.reader(handle, quoting=csv.QUOTE_NONNUMERIC))
    assert {row[0]: row[1] for row in rows[1:]} == passed


@sandboxed
@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_sigterm_ends_grade_as_ctrl_c_does(tmp_path, console_script, softmax_source, number):
    folder, scratch = tmp_path / "class", tmp_path / "tmp"
    folder.mkdir()
    scratch.mkdir()
    (folder / "a_right.py").write_text(softmax_source)
    (folder / "b_slow.py").write_text("import time\ntime.sleep(50)\n")
    env = {**os.environ, "TMPDIR": str(scratch)}
    grade = subprocess.Popen([console_script, "grade", str(folder), "--exercise", "softmax", "--csv",
                              str(tmp_path / "grades.csv"), "--jobs", "1", "--no-progress"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any(scratch.iterdir()):
        time.sleep(0.1)
    time.sleep(3)                                  # the right file is graded, the slow one is loading
    grade.send_signal(number)
    out, err = grade.communicate(timeout=60)
    assert grade.returncode == 130, (out, err)
    assert b"interrupted" in err and b"Traceback" not in err, err
    assert list(scratch.iterdir()) == [], "a private directory was left behind"
    assert "a_right.py" in _rows(tmp_path / "grades.csv")


FILL_THE_DISK = """
    import os
    total, error, chunk = 0, "no error", b"x" * (4 << 20)
    while total < 256 << 20:                    # stop at 256 MiB: enough to show there is no cap
        try:
            with open(f"fill{total >> 22}.bin", "wb") as file:
                file.write(chunk)
            total += len(chunk)
        except OSError as err:
            error = err.strerror
            break
    raise RuntimeError(f"wrote {total >> 20} MiB, then: {error}")
    """


def _bytes_under(folder):
    """Bytes in the files under `folder`, read while the grader creates and removes them: a folder
    or file gone between listing and reading counts as empty (os.walk skips a vanished folder)."""
    total = 0
    for parent, _, names in os.walk(folder):
        for name in names:
            try:
                total += os.lstat(os.path.join(parent, name)).st_size
            except FileNotFoundError:
                pass
    return total


@sandboxed
def test_a_submission_cannot_fill_the_disk(tmp_path, console_script, softmax_source):
    """The private directory is a tmpfs of 64 MiB in the worker's mount namespace: the host's
    TMPDIR never holds the files, and a classmate graded beside it is unharmed."""
    if not LAYERS.get("mount-namespace", "").startswith("active"):
        pytest.skip(f"needs a mount namespace: {LAYERS}")
    folder, scratch = tmp_path / "class", tmp_path / "tmp"
    folder.mkdir()
    scratch.mkdir()
    (folder / "filler.py").write_text(textwrap.dedent(FILL_THE_DISK))
    (folder / "right.py").write_text(softmax_source)
    grade = subprocess.Popen([console_script, "grade", str(folder), "--exercise", "softmax", "--csv",
                              str(tmp_path / "grades.csv"), "--jobs", "2", "--no-progress"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "TMPDIR": str(scratch)})
    seen = 0
    while grade.poll() is None:                        # the host's view of the private directories
        seen = max(seen, _bytes_under(scratch))
        time.sleep(0.02)
    assert grade.returncode == 0, grade.stderr.read().decode()
    rows = _rows(tmp_path / "grades.csv")
    error = rows["filler.py"]["error"]
    assert "No space left on device" in error, error
    assert int(error.split("wrote ")[1].split(" MiB")[0]) <= 64, error
    assert seen < 1 << 20, f"{seen} bytes reached the host's TMPDIR"
    assert rows["right.py"]["passed"] == "True", rows["right.py"]
    assert list(scratch.iterdir()) == [], "a private directory was left behind"


@sandboxed
def test_folders_nested_deeper_than_python_recurses_leave_nothing_behind(tmp_path, console_script, softmax_source):
    """Without a mount namespace the private directory is an ordinary folder that the grader removes;
    shutil.rmtree recursed, so 3,000 nested folders made "the grader failed" that row and stayed."""
    folder, scratch = tmp_path / "class", tmp_path / "tmp"
    folder.mkdir()
    scratch.mkdir()
    (folder / "nester.py").write_text(textwrap.dedent("""
        import os
        for _ in range(3000):
            os.mkdir("d")
            os.chdir("d")
        """) + "def softmax(x):\n    return x\n")
    (folder / "right.py").write_text(softmax_source)
    done = subprocess.run([console_script, "grade", str(folder), "--exercise", "softmax", "--csv",
                           str(tmp_path / "grades.csv"), "--no-progress"], capture_output=True,
                          env={**os.environ, "TMPDIR": str(scratch), "ATTENTION_EDU_SANDBOX_NO_NAMESPACES": "1"})
    assert done.returncode == 0, done.stderr.decode()
    rows = _rows(tmp_path / "grades.csv")
    assert "mount-namespace" not in rows["nester.py"]["sandbox"]
    assert rows["nester.py"]["error"] == "" and rows["nester.py"]["hint_id"].startswith("value."), rows["nester.py"]
    assert rows["right.py"]["passed"] == "True", rows["right.py"]
    assert list(scratch.iterdir()) == [], "a private directory was left behind"


REPORT_CAPABILITIES = """
import numpy as np
CAPS = {l.split(":")[0]: l.split()[1] for l in open("/proc/self/status") if l.startswith("Cap")}
def softmax(x):
    raise ValueError(" ".join(f"{k}={v}" for k, v in sorted(CAPS.items())))
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="a grader that is not root has no capabilities to hand on")
@pytest.mark.parametrize("namespaces", [True, False], ids=["namespaces", "fallback"])
def test_a_root_grader_without_cap_setpcap_hands_its_worker_no_capability(tmp_path, console_script, namespaces):
    """A grader run as root where CAP_SETPCAP is dropped (``docker run --cap-drop SETPCAP``, a
    container's root) cannot lock SECBIT_NOROOT, so exec gave uid 0's worker every capability of
    the bounding set (CAP_SYS_MODULE, CAP_SYS_BOOT, CAP_SYS_ADMIN ... ; Landlock does not see
    init_module or reboot). The worker's sets are emptied before exec, which needs no capability;
    ``no_new_privs`` keeps exec from granting them again."""
    (tmp_path / "caps.py").write_text(REPORT_CAPABILITIES)
    env = {**os.environ, **({} if namespaces else {"ATTENTION_EDU_SANDBOX_NO_NAMESPACES": "1"})}
    drop = ["setpriv", "--bounding-set=-setpcap", "--inh-caps=-all", "--ambient-caps=-all"]
    stand_in = subprocess.run([*drop, sys.executable, "-c", "print(open('/proc/self/status').read())"],
                              capture_output=True, text=True, check=True).stdout
    effective = int(stand_in.split("CapEff:")[1].split()[0], 16)
    assert effective and not effective & 1 << 8, stand_in        # control: root's others, no CAP_SETPCAP (8)
    done = subprocess.run([*drop, console_script, "check", "softmax", str(tmp_path / "caps.py")],
                          capture_output=True, text=True, env=env, timeout=120)
    caps = dict(item.split("=") for item in done.stdout.split("ValueError: ")[1].split(" (line")[0].split())
    assert {name: value for name, value in caps.items() if name != "CapBnd"} == dict.fromkeys(
        ("CapAmb", "CapEff", "CapInh", "CapPrm"), "0" * 16), done.stdout      # CapBnd: needs CAP_SETPCAP to drop


@sandboxed
def test_a_failed_notebook_cell_is_named_when_the_function_then_fails(tmp_path, console_script):
    """A notebook goes on after a failing cell, as Jupyter does; when the function then fails (its
    imports never ran), the verdict says which cell failed, not only the NameError."""
    notebook = _notebook(tmp_path / "nb.ipynb", "raise RuntimeError('no threads left')\nimport numpy as np\n",
                         "def softmax(x):\n    e = np.exp(x - x.max(axis=-1, keepdims=True))\n"
                         "    return e / e.sum(axis=-1, keepdims=True)\n")
    done = subprocess.run([console_script, "check", "softmax", str(notebook)], capture_output=True, timeout=120)
    out = done.stdout.decode()
    assert done.returncode == 1 and "NameError" in out, out
    assert "Note: while the notebook ran, code cell 1 raised RuntimeError: no threads left" in out, out


AMPLIFY = """
    import io, json, os, sys
    import numpy as np
    out = sys._getframe(1).f_locals["out"]      # the worker's reply pipe: this file runs inside its main()
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, np.zeros(1 << 17), allow_pickle=False)     # one 1 MiB array ...
    blob = buffer.getvalue()
    head = json.dumps({"$d": [["functions", [{"$a": 0}] * 400]]}).encode()      # ... referred to 400 times
    body = len(head).to_bytes(8, "little") + head + len(blob).to_bytes(8, "little") + blob
    os.write(out, len(body).to_bytes(8, "little") + body)
    def softmax(x):
        return x
    """

# the grader's own peak: VmHWM (ru_maxrss would carry the parent's peak across a vfork and exec)
PEAK = ("import re, sys\nfrom attention_edu.cli import main\nrc = main(sys.argv[1:])\n"
        "print('peak', re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read())[1], file=sys.stderr)\n"
        "sys.exit(rc)\n")


def _graded_at_peak(tmp_path: Path, folder: Path) -> tuple[dict[str, dict], int]:
    """``grade`` of ``folder`` (softmax) in an interpreter of its own: the CSV's rows and the grader's peak in MB."""
    done = subprocess.run([sys.executable, "-c", PEAK, "grade", str(folder), "--exercise", "softmax", "--csv",
                           str(tmp_path / "grades.csv"), "--no-progress"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return _rows(tmp_path / "grades.csv"), int(done.stderr.rsplit("peak ", 1)[1]) >> 10


@sandboxed
def test_a_small_frame_cannot_make_the_grader_build_a_large_one(tmp_path, softmax_source):
    """A 1 MiB load reply whose JSON refers to one array 400 times made the grader hold 455 MB
    (and, with 1.5 million references, spend 40 s decoding it, outside every time limit)."""
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "amplify.py").write_text(textwrap.dedent(AMPLIFY))
    (folder / "honest.py").write_text(softmax_source)
    rows, peak_mb = _graded_at_peak(tmp_path, folder)
    assert peak_mb < 250, peak_mb
    assert rows["honest.py"]["passed"] == "True", rows["honest.py"]
    assert rows["amplify.py"]["passed"] == "False" and "an answer the checker cannot take" in rows["amplify.py"]["error"], rows


RETURNED_HOGS = {          # replies under the 4 MiB cap that the grader, which no rlimit bounds, decoded in full
    "records.py": """
        import numpy as np
        RECORD = np.dtype([(f"f{i}", "<f8") for i in range(560)])      # a 10 KB .npy header that builds a 100 KB dtype
        def softmax(x):
            return [np.zeros(0, RECORD) for _ in range(400)]
        """,
    "objects.py": """
        Item = type("A" * 40, (), {})
        def softmax(x):
            return [Item() for _ in range(64_000)]                          # each an Unsupported in the grader
        """,
    "text.py": """
        def softmax(x):                                     # one value; an emoji makes each character 4 bytes
            return "x" * 4_150_000 + chr(0x1F600)
        """,
    "keys.py": """
        def softmax(x):                                     # red team 58: dict keys were not counted as text
            return {("k%05d" % i) + chr(0x1F600) + "a" * 3990: None for i in range(1000)}
        """,
    "plain.py": """
        import numpy as np
        def softmax(x):             # red team 59: plain floats under the old 4 MiB cap, each reply kept to the verdict
            return np.full(((4 << 20) // 8 // x.shape[-1] - 64, x.shape[-1]), 0.5)
        """,
    "forged.py": """
        import io, json, os, sys
        import numpy as np
        out = sys._getframe(1).f_locals["out"]      # the worker's reply pipe: this file runs inside its main()
        buffer = io.BytesIO()
        np.lib.format.write_array(buffer, np.empty((0,) + (1,) * 63), allow_pickle=False)    # 64 axes, no data
        blob = len(buffer.getvalue()).to_bytes(8, "little") + buffer.getvalue()
        head = json.dumps({"$d": [["value", [{"$a": i} for i in range(13_000)]]]}).encode()
        body = len(head).to_bytes(8, "little") + head + blob * 13_000
        def softmax(x):
            os.write(out, len(body).to_bytes(8, "little") + body)        # a reply of its own, then the worker's
            return x
        """,
}


@sandboxed
def test_what_a_function_returns_cannot_make_the_grader_hold_a_gigabyte_or_spend_a_minute(tmp_path, softmax_source):
    """Red team 56: a list of 400 empty arrays of a 560-field record dtype, a 4 MiB reply, took the grader to 1.1 GB
    and 50 s of its own CPU (each header parsed into a new dtype, every reply kept until the verdict); 64,000 objects
    took it to 430 MB; red team 57's one string of 4 MiB with an emoji, 463 MB. Records are now described in the worker
    and refused by the judge, an array's header is at most 2 KB, a reply holds at most 1,024 values (a longer one is
    one Unsupported, or refused when forged) and 256 characters of text a value. Red team 59: 25 plain arrays of
    just under 4 MiB, 164 MB (952 MB for eight such files under --jobs 8); a reply is now 1 MiB at most."""
    folder = tmp_path / "class"
    folder.mkdir()
    for name, source in RETURNED_HOGS.items():
        (folder / name).write_text(textwrap.dedent(source))
    (folder / "honest.py").write_text(softmax_source)
    (folder / "wrong.py").write_text(softmax_source.replace("axis=-1", "axis=0"))
    start = time.monotonic()
    rows, peak_mb = _graded_at_peak(tmp_path, folder)
    assert peak_mb < 150 and time.monotonic() - start < 40, (peak_mb, time.monotonic() - start)
    assert rows["honest.py"]["passed"] == "True" and rows["wrong.py"]["hint_id"] == "softmax.wrong-axis", rows
    assert rows["records.py"]["hint_id"] == rows["objects.py"]["hint_id"] == "harness.wrong-type", rows
    assert rows["forged.py"]["passed"] == rows["text.py"]["passed"] == rows["keys.py"]["passed"] == "False", rows
    assert rows["plain.py"]["hint_id"] == "harness.reply", rows["plain.py"]
    assert all(float(row["seconds"]) < 30 for row in rows.values()), rows


@sandboxed
def test_an_exported_script_of_many_cells_cannot_make_the_grader_hold_its_lines_squared(tmp_path, softmax_source):
    """A .py read as an exported notebook sends each cell on the script's own lines, padded with the newlines
    above it: 23,000 one-line cells in 250 KB (23,000 x 23,000 newlines) and 1,999 cells under 230,000 empty
    lines took the grader to 2.3 GB, before it counted the cells. Now both are refused unbuilt."""
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "cells.py").write_text("# %%\nx = 1\n" * 23_000 + softmax_source)
    (folder / "deep.py").write_text("\n" * 230_000 + "# %%\nx = 1\n" * 1_999 + softmax_source)
    (folder / "honest.py").write_text(softmax_source)
    (folder / "wrong.py").write_text(softmax_source.replace("axis=-1", "axis=0"))
    rows, peak_mb = _graded_at_peak(tmp_path, folder)
    assert peak_mb < 250, peak_mb
    assert rows["honest.py"]["passed"] == "True" and rows["wrong.py"]["passed"] == "False", rows
    for name in ("cells.py", "deep.py"):
        assert rows[name]["passed"] == "False" and "more than the grader runs" in rows[name]["error"], rows[name]


def test_a_file_name_that_is_not_utf8_gets_its_own_seed_under_per_student(tmp_path, console_script, softmax_source):
    """--per-student hashed the name as UTF-8 and raised UnicodeEncodeError on b'\\xff\\xfe.py',
    ending the whole batch without a gradebook."""
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "honest.py").write_text(softmax_source)
    with open(os.path.join(os.fsencode(folder), b"\xff\xfe.py"), "w") as handle:
        handle.write(softmax_source)
    done = subprocess.run([console_script, "grade", str(folder), "--exercise", "softmax", "--per-student", "--seed",
                           "3", "--csv", str(tmp_path / "grades.csv"), "--no-progress"], capture_output=True, timeout=120)
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr.decode()
    rows = list(csv.DictReader(io.StringIO((tmp_path / "grades.csv").read_text())))
    assert len(rows) == 2 and all(row["passed"] == "True" for row in rows), rows
    assert len({row["seed"] for row in rows}) == 2, rows


FORGED_LINES = """
    import warnings
    import numpy as np
    FORGED = "\\n\\ncheck softmax: passed. all probes passed\\n\\n"
    Lie = type("Oops" + FORGED, (Exception,), {})
    def softmax(x):
        warnings.warn("careful" + FORGED)
        if x.shape == (2, 3):
            raise Lie("boom")
        e = np.exp(x - x.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)
    """


def test_line_breaks_in_a_class_name_or_a_warning_cannot_draw_a_verdict(tmp_path, console_script):
    """ErrorInfo escaped the message but not the exception's class name: check printed the student's
    "check softmax: passed." on a line of its own (and Gradescope's output held it too)."""
    file = tmp_path / "liar.py"
    file.write_text(textwrap.dedent(FORGED_LINES))
    done = subprocess.run([console_script, "check", "softmax", str(file), "--seed", "1"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.startswith("check softmax: failed.") and "Oops\\n\\ncheck softmax" in done.stdout, done.stdout
    assert not [line for line in done.stdout.splitlines()[1:] if line.startswith("check softmax")], done.stdout
    gradescope = tmp_path / "results.json"
    subprocess.run([console_script, "grade", str(file), "--exercise", "softmax", "--seed", "1", "--gradescope",
                    str(gradescope), "--no-progress"], capture_output=True, timeout=120, check=True)
    outputs = [json.loads(gradescope.read_text())["output"]]
    outputs += [test["output"] for test in json.loads(gradescope.read_text())["tests"]]
    assert not [line for text in outputs for line in text.splitlines()[1:] if line.startswith("check softmax")]


def _recorded(name: str, keep=lambda case: True, extra=()) -> dict:
    """The answers a student could record at home: the public cases' (those ``keep`` takes), and ``extra`` inputs'."""
    spec = EXERCISES[name]
    inputs = [case.args for case in spec.cases() if keep(case)] + list(extra)
    return {repr([np.asarray(a).tolist() for a in args]): spec.reference(*args).tolist() for args in inputs}


# exercise -> (recorded answers, what the function does on any other input: wrong)
SPECIAL_CASE_TABLES = {
    "softmax": (_recorded("softmax", lambda case: case.probe in ("small", "stability", "masks")),
                "e = np.exp(args[0])\n    return e / e.sum(axis=-1, keepdims=True)     # overflows, NaN when masked"),
    "causal_mask": (_recorded("causal_mask", extra=[(6, 8), (5,), (5, 5)]),        # the properties' inputs too
                    "return np.ones((args[0], args[-1]), dtype=bool)"),
    "padding_mask": (_recorded("padding_mask", extra=[(np.array([3, 0, 6, 1]), 6)]),
                     "return np.ones((len(args[0]), 1, args[1]), dtype=bool)"),
}


@pytest.mark.parametrize("name", list(SPECIAL_CASE_TABLES))
def test_answers_recorded_for_the_public_cases_do_not_pass(tmp_path, console_script, name):
    table, otherwise = SPECIAL_CASE_TABLES[name]
    dtype = "bool" if "mask" in name else "float"
    source = tmp_path / f"{name}_table.py"
    source.write_text(f"import numpy as np\nTABLE = {table!r}\n\ndef {EXERCISES[name].function}(*args):\n"
                      f"    key = repr([np.asarray(a).tolist() for a in args])\n    if key in TABLE:\n"
                      f"        return np.array(TABLE[key], dtype={dtype})\n    {otherwise}\n")
    check = subprocess.run([console_script, "check", name, str(source), "--seed", "7"], capture_output=True,
                           text=True, timeout=300)
    assert check.returncode == 1 and "hidden case" in check.stdout, check.stdout + check.stderr
    grade = subprocess.run([console_script, "grade", str(tmp_path), "--exercise", name, "--per-student", "--json",
                            "--seed", "7", "--no-progress"], capture_output=True, text=True, timeout=300)
    row, = json.loads(grade.stdout)
    assert not row["passed"] and row["probe"] == "hidden" and row["probes_passed"] < row["probes_total"], row
    # nor does the table earn a mark for a public case the formula behind it would not: a public case scores with its
    # hidden twin alone (red teams 50 and 53: 12 of 19 for causal_mask's table, 13 of 25 for a softmax's, over a
    # wrong formula); the properties' inputs are fixed, and recorded here
    (tmp_path / "formula.py").write_text(f"import numpy as np\n\ndef {EXERCISES[name].function}(*args):\n"
                                         f"    {otherwise}\n")
    grade = subprocess.run([console_script, "grade", str(tmp_path), "--exercise", name, "--json", "--seed", "7",
                            "--no-progress"], capture_output=True, text=True, timeout=300)
    scores = {Path(row["file"]).stem: row["probes_passed"] for row in json.loads(grade.stdout)}
    assert scores[f"{name}_table"] <= scores["formula"] + len(EXERCISES[name].properties), scores   # fixed inputs


def test_a_table_that_hangs_on_any_input_it_does_not_know_earns_no_marks(tmp_path, console_script):
    """Red team 55: grading stops after two calls in a row are lost, and it stopped before a public case lost the mark
    its failed hidden twin takes: a table of the public answers that loops on any other input (its first two hidden
    cases) kept all 11 public marks of 25. A public case now scores only where its twin ran and passed."""
    table = _recorded("softmax")
    (tmp_path / "table.py").write_text(f"import numpy as np\nTABLE = {table!r}\n\ndef softmax(x):\n"
                                       "    key = repr([np.asarray(x).tolist()])\n    if key in TABLE:\n"
                                       "        return np.array(TABLE[key])\n    while True:\n        pass\n")
    grade = subprocess.run([console_script, "grade", str(tmp_path / "table.py"), "--exercise", "softmax", "--json",
                            "--seed", "7", "--timeout", "1", "--no-progress"], capture_output=True, text=True,
                           timeout=300)
    row, = json.loads(grade.stdout)
    assert not row["passed"] and row["probes_passed"] == 0, row


def test_a_notebook_of_a_huge_literal_cannot_make_the_grader_parse_it(tmp_path, softmax_source):
    """The judge parses a notebook's cells (to drop its checker calls): 16 MiB of ``X = [1, 1, ...]``
    made it hold 7.7 GB for 54 s; this 2 MiB one, about 1 GB."""
    folder = tmp_path / "class"
    folder.mkdir()
    _notebook(folder / "literal.ipynb", "X = [" + "1," * (1 << 20) + "]\n", softmax_source)
    (folder / "honest.py").write_text(softmax_source)
    rows, peak_mb = _graded_at_peak(tmp_path, folder)
    assert peak_mb < 250, peak_mb
    assert rows["honest.py"]["passed"] == "True", rows["honest.py"]
    assert rows["literal.ipynb"]["passed"] == "False" and "code cells hold more than" in rows["literal.ipynb"]["error"]


def test_a_notebook_of_too_many_cells_is_its_own_row_with_a_reason(tmp_path, softmax_source):
    """Each cell crosses to the worker as values of one message: 30,000 empty cells overflowed its cap and
    the row read "ended the process with os._exit(1)"."""
    import nbformat

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1", id=f"c{i}") for i in range(30_000)]
                                        + [nbformat.v4.new_code_cell(softmax_source)])   # ids: 30,000 random ones clash
    path = tmp_path / "cells.ipynb"
    path.write_text(nbformat.writes(notebook))
    row = grade_one("softmax", path, seed=1)
    assert not row.passed and "30,001 code cells to run, more than the 2,000" in (row.error or ""), row


def test_a_hidden_input_shown_in_a_report_is_no_use_to_the_next_submission(tmp_path, console_script):
    """With a course's fixed --seed and --per-student (the Gradescope recipe), the hidden inputs hung on the
    file's name alone: a submission raising its input showed one hidden input per report, and ten
    resubmissions of a growing table of answers scored 20/20 without any softmax."""
    import attention_edu as ae                        # the student's own install, at home

    folder = tmp_path / "submission"
    folder.mkdir()
    table = {repr(case.args[0].tolist()): ae.softmax(case.args[0]).tolist() for case in EXERCISES["softmax"].cases()}
    scores, firsts = [], []
    for _ in range(2):
        (folder / "softmax.py").write_text(
            f"import numpy as np\nTABLE = {table!r}\ndef softmax(x):\n    key = repr(x.tolist())\n"
            f"    if key in TABLE:\n        return np.array(TABLE[key])\n    raise ValueError('LEAK' + key + 'LEAK')\n")
        subprocess.run([console_script, "grade", str(folder), "--exercise", "softmax", "--seed", "1234",
                        "--per-student", "--no-progress", "--gradescope", str(tmp_path / "results.json")],
                       capture_output=True, timeout=300, check=True)
        results = json.loads((tmp_path / "results.json").read_text())
        leaked = results["output"].split("LEAK")[1]       # the first hidden input, as the report showed it
        scores.append(results["score"])
        firsts.append(leaked)
        table[leaked] = ae.softmax(np.array(eval(leaked, {"inf": np.inf}))).tolist()
    assert scores[1] == scores[0] < 20 and firsts[0] != firsts[1], (scores, firsts)


@pytest.mark.parametrize("command", ["check softmax", "grade --exercise softmax"])
def test_a_negative_seed_is_a_usage_error_not_a_failed_row(tmp_path, console_script, softmax_source, command):
    (tmp_path / "right.py").write_text(softmax_source)          # every row failed: "the grader failed ..."
    done = subprocess.run([console_script, *command.split(), str(tmp_path / "right.py"), "--seed", "-1"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "--seed: must be a whole number of at least 0" in done.stderr, done.stderr


def test_a_coding_cookie_for_a_codec_that_is_not_text_is_that_rows_error(tmp_path, console_script, softmax_source):
    """``# coding: rot13`` made tokenize raise LookupError, which ended grade with a traceback and no gradebook."""
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "right.py").write_text(softmax_source)
    for codec in ("rot13", "base64"):
        (folder / f"{codec}.py").write_text(f"# -*- coding: {codec} -*-\nvzcbeg ahzcl nf ac\n")
    done = subprocess.run([console_script, "grade", str(folder), "--exercise", "softmax", "--csv",
                           str(tmp_path / "grades.csv"), "--jobs", "2", "--no-progress"], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = _rows(tmp_path / "grades.csv")
    assert rows["right.py"]["passed"] == "True", rows["right.py"]
    for codec in ("rot13", "base64"):
        assert "is not a text encoding" in rows[f"{codec}.py"]["error"], rows
    check = subprocess.run([console_script, "check", "softmax", str(folder / "rot13.py")], capture_output=True,
                           text=True, timeout=120)
    assert check.returncode == 1 and "could not be read as text" in check.stdout, check.stderr


def test_a_folder_too_deep_to_list_is_named_and_the_others_are_graded(tmp_path, console_script, softmax_source):
    """A submission folder nested deeper than PATH_MAX (tar extracts one) made grade's listing raise
    OSError: File name too long, ending it with a traceback before anyone was graded."""
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "right.py").write_text(softmax_source)
    fd = os.open(folder, os.O_RDONLY)
    for _ in range(20):                                   # 20 x 250 characters: beyond 4096
        os.mkdir("d" * 250, dir_fd=fd)
        fd, parent = os.open("d" * 250, os.O_RDONLY, dir_fd=fd), fd
        os.close(parent)
    os.close(os.open("deep.py", os.O_CREAT | os.O_WRONLY, dir_fd=fd))
    os.close(fd)
    done = subprocess.run([console_script, "grade", str(folder), "--exercise", "softmax", "--csv",
                           str(tmp_path / "grades.csv"), "--no-progress"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "could not list a folder" in done.stderr, done.stderr
    assert _rows(tmp_path / "grades.csv")["right.py"]["passed"] == "True"


def test_a_folder_1200_levels_down_neither_ends_grading_nor_hides_the_class(tmp_path, console_script, softmax_source):
    """os.walk recursed once per level: a submission nested 1,200 folders deep (a short path, well within PATH_MAX;
    any zip can hold it) raised RecursionError with a traceback, so no classmate was graded and Gradescope's
    results.json was never written. Folders are now listed one level at a time: the deep file is graded too."""
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "right.py").write_text(softmax_source)
    (folder / "wrong.py").write_text(softmax_source.replace("axis=-1", "axis=0"))
    fd = os.open(folder, os.O_RDONLY)
    for _ in range(1200):
        os.mkdir("a", dir_fd=fd)
        fd, parent = os.open("a", os.O_RDONLY, dir_fd=fd), fd
        os.close(parent)
    with open(os.open("deep.py", os.O_CREAT | os.O_WRONLY, dir_fd=fd), "w") as deep:
        deep.write(softmax_source)
    os.close(fd)
    grade = [console_script, "grade", "--exercise", "softmax", "--seed", "3", "--no-progress"]
    try:
        done = subprocess.run([*grade, str(folder), "--csv", str(tmp_path / "grades.csv")], capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        rows = _rows(tmp_path / "grades.csv")
        assert rows["right.py"]["passed"] == rows["deep.py"]["passed"] == "True"
        assert rows["wrong.py"]["passed"] == "False", rows
        done = subprocess.run([*grade, str(folder / "a"), "--gradescope", str(tmp_path / "results.json")],
                              capture_output=True, text=True, timeout=300)
        results = json.loads((tmp_path / "results.json").read_text())
        assert (results["score"], results["max_score"]) == (25, 25), done.stderr
    finally:        # pytest's own clean-up of old runs, shutil.rmtree, recurses once per level: RecursionError
        subprocess.run(["rm", "-rf", "--", str(folder / "a")], check=True)


@pytest.mark.parametrize("value", ["[[]] * 1_000_000", "[0.5] * 1_000_000", "np.zeros(2_000_000)"])
def test_large_replies_on_every_call_cannot_make_the_grader_hold_gigabytes(tmp_path, softmax_source, value):
    """The grader keeps every call's outcome until the verdict: 16 MiB replies of a million floats (or
    of empty lists, 60 bytes each once decoded) on each of 20 calls made it hold 978 MB (and more)."""
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "hoard.py").write_text(f"import numpy as np\ndef softmax(x):\n    return {value}\n")
    (folder / "honest.py").write_text(softmax_source)
    rows, peak_mb = _graded_at_peak(tmp_path, folder)
    assert peak_mb < 250, peak_mb
    assert rows["honest.py"]["passed"] == "True" and rows["hoard.py"]["passed"] == "False", rows


def test_a_file_of_lone_carriage_returns_is_decoded_as_python_decodes_it(tmp_path, softmax_source):
    """Red team 35: a file whose lines end in a lone \\r was one line to the grader's coding-line search, so a
    "coding: latin-1" in a comment on line 3 made the grader decode it as latin-1 where Python reads UTF-8: a softmax
    that is right only under the grader's reading passed 25/25, and an honest file with "positional coding:
    sinusoidal" in a comment failed as "unknown encoding". Python finds a coding line on lines 1 and 2 only."""
    from attention_edu.checkers.judge import python_text

    sly = ('# softmax for the course\nimport numpy as np\nMARK = "\u00e9"  # coding: latin-1\n'
           + softmax_source.replace("def softmax(x):", "def softmax(x):\n    if len(MARK) == 1:\n        return x * 0.5"))
    honest = "# Exercise 1\nimport numpy as np\n\n# next week: positional coding: sinusoidal\n" + softmax_source
    for text in (sly, honest, "# coding: latin-1\nMARK = '\u00e9'\n"):
        data = text.replace("\n", "\r").encode("latin-1" if text.startswith("# coding") else "utf-8")
        python, grader = {}, {}
        exec(compile(data, "x.py", "exec"), python)
        exec(python_text(data), grader)
        assert python.get("MARK") == grader.get("MARK"), (python.get("MARK"), grader.get("MARK"))
    for name, text in (("sly.py", sly), ("honest.py", honest)):
        (tmp_path / name).write_bytes(text.replace("\n", "\r").encode("utf-8"))
    assert not grade_one("softmax", tmp_path / "sly.py", seed=1).passed
    assert grade_one("softmax", tmp_path / "honest.py", seed=1).passed


@pytest.mark.parametrize("cookie, body", [("punycode", b""), ("idna", b".xn--")])
def test_a_codec_that_decodes_in_quadratic_time_cannot_hold_grade(tmp_path, console_script, softmax_source,
                                                                   cookie, body):
    """The grader decodes a .py file itself, outside every limit: 2 MB under ``# coding: punycode`` would
    take it about eight minutes (3 s for 160 kB, quadratic), 16 MiB about eight hours, and Ctrl-C waits."""
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "right.py").write_text(softmax_source)
    (folder / "slow.py").write_bytes(f"# coding: {cookie}\n".encode() + body + b"a" * 10 + b"-" + b"9" * 2_000_000)
    done = subprocess.run([console_script, "grade", str(folder), "--exercise", "softmax", "--csv",
                           str(tmp_path / "grades.csv"), "--jobs", "2", "--no-progress"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    rows = _rows(tmp_path / "grades.csv")
    assert rows["right.py"]["passed"] == "True" and "punycode or idna" in rows["slow.py"]["error"], rows


ZERO_LENGTH_WRONG = """
import numpy as np

def padding_mask(lengths, n):
    lengths = np.asarray(lengths)
    if lengths.tolist() in ([0, 7, 3], [3, 0, 6, 1]):       # the public case and the property's input: right
        return np.arange(n)[None, None, :] < lengths[:, None, None]
    full = np.where(lengths == 0, n, lengths)                 # wrong: a length 0 read as "no padding"
    return np.arange(n)[None, None, :] < full[:, None, None]
"""


@pytest.mark.parametrize("seed", ["1", "2"])
def test_a_padding_mask_wrong_only_for_length_zero_fails_a_hidden_case(tmp_path, console_script, seed):
    """The hidden cases had no length 0 (the public one was a random case, and integers were all moved): right
    everywhere else, with the public length-0 inputs recorded, this wrong mask passed every probe."""
    (tmp_path / "zero.py").write_text(ZERO_LENGTH_WRONG)
    grade = subprocess.run([console_script, "grade", str(tmp_path), "--exercise", "padding_mask", "--json", "--seed",
                            seed, "--no-progress"], capture_output=True, text=True, timeout=300)
    row, = json.loads(grade.stdout)
    # the hidden case, and the public one it is drawn like: a public case scores with its hidden twin alone
    assert not row["passed"] and row["probe"] == "hidden" and row["probes_passed"] == row["probes_total"] - 2, row


def _check_or_grade(console_script, command, exercise, file, seed):
    """``check EXERCISE FILE``, or ``grade`` of FILE's folder with --per-student --json; both with --seed."""
    argv = ([command, exercise, str(file)] if command == "check" else
            [command, str(file.parent), "--exercise", exercise, "--per-student", "--json", "--no-progress"])
    return subprocess.run([console_script, *argv, "--seed", seed], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("command", ["check", "grade"])
def test_a_softmax_right_on_2d_input_only_with_the_other_ranks_recorded_fails(tmp_path, console_script, command):
    """The hidden cases copied only the first two random cases (2-D): a softmax over axis 1, right on 2-D input
    only, with the public 1-D, 3-D and 4-D answers recorded, passed 20/20 on every seed."""
    table = _recorded("softmax", lambda case: case.probe == "batched")
    (tmp_path / "rank2.py").write_text(
        f"import numpy as np\nTABLE = {table!r}\n\ndef softmax(x):\n    key = repr([np.asarray(x).tolist()])\n"
        "    if key in TABLE:\n        return np.array(TABLE[key])\n"
        "    top = x.max(axis=1, keepdims=True)                    # axis 1: right on 2-D input only\n"
        "    e = np.exp(x - np.where(np.isfinite(top), top, 0))\n"
        "    return e / np.maximum(e.sum(axis=1, keepdims=True), 1e-300)\n")
    run = _check_or_grade(console_script, command, "softmax", tmp_path / "rank2.py", "3")
    if command == "check":
        assert run.returncode == 1 and "hidden case" in run.stdout, run.stdout + run.stderr
    else:
        row, = json.loads(run.stdout)
        # the hidden 1-D, 3-D and 4-D cases, and the public ones they are drawn like (scored with their twins)
        assert not row["passed"] and row["probes_total"] - row["probes_passed"] == 6, row


SINGLE_QUERY_SQUEEZED = """
import numpy as np

def causal_mask(m, n=None):
    n = m if n is None else n
    if (m, n) == (1, 4):                                     # the public single-query case, recorded
        return np.ones((1, 4), dtype=bool)
    return np.squeeze(np.tril(np.ones((m, n), dtype=bool), k=n - m))    # wrong: shape (n,) for one query
"""


def test_a_causal_mask_wrong_for_a_single_query_fails_a_hidden_case(tmp_path, console_script):
    """No hidden case had m = 1 (the sizes all moved, and random cases past the first two were not copied):
    a mask squeezed to shape (n,) for a single query, with the public (1, 4) answer recorded, passed every probe."""
    (tmp_path / "squeezed.py").write_text(SINGLE_QUERY_SQUEEZED)
    grade = subprocess.run([console_script, "grade", str(tmp_path), "--exercise", "causal_mask", "--json", "--seed",
                            "5", "--per-student", "--no-progress"], capture_output=True, text=True, timeout=300)
    row, = json.loads(grade.stdout)
    assert not row["passed"] and row["probes_passed"] == row["probes_total"] - 2, row    # with its public twin


def test_a_jacobian_replayed_for_weights_like_the_zero_weight_case_fails(tmp_path, console_script):
    """At (0.5, 0, 0.5) the Jacobian moves only to second order: its hidden copy, moved about 1 %, matched the
    recorded public answer within the float32 tolerance on most seeds, and a Jacobian that is NaN wherever a weight
    is 0 passed 15/15. A row of weights is now redrawn, its zeros kept."""
    (tmp_path / "jacobian.py").write_text(textwrap.dedent("""
        import numpy as np
        TABLE = [[0.25, 0.0, -0.25], [0.0, 0.0, 0.0], [-0.25, 0.0, 0.25]]      # the public (0.5, 0, 0.5), recorded

        def softmax_jacobian(w):
            w = np.asarray(w)
            if w.shape == (3,) and w[1] == 0:                     # weights like it: the recorded answer, float32
                return np.array(TABLE, dtype=np.float32)
            nan_at_zero = 0 * np.log(np.abs(w))                   # wrong: NaN in the row of a zero weight
            return w[..., :, None] * (np.eye(w.shape[-1]) - w[..., None, :]) + nan_at_zero[..., :, None]
        """))
    for seed in ("1", "2", "3"):
        grade = subprocess.run([console_script, "grade", str(tmp_path), "--exercise", "softmax_jacobian", "--json",
                                "--seed", seed, "--no-progress"], capture_output=True, text=True, timeout=300)
        row, = json.loads(grade.stdout)
        assert not row["passed"] and row["probes_passed"] == row["probes_total"] - 2, row    # with its public twin


def test_an_honest_entropy_with_an_epsilon_scores_every_hidden_probe(tmp_path, console_script):
    """The hidden copies of the random weights were normal noise (negative entries, rows not summing to 1): the
    reference counts 0 for a negative weight, log(w + 1e-12) gives NaN, so this right entropy, full marks on every
    public probe, lost 7 of 23 on every seed, told that 0 · log 0 was its mistake. Rows of weights stay weights."""
    (tmp_path / "eps.py").write_text("import numpy as np\n\ndef attention_entropy(weights):\n"
                                     "    return -np.sum(weights * np.log(weights + 1e-12), axis=-1)\n")
    for seed in ("1", "2", "3"):
        grade = subprocess.run([console_script, "grade", str(tmp_path), "--exercise", "attention_entropy", "--json",
                                "--seed", seed, "--per-student", "--no-progress"], capture_output=True, text=True,
                               timeout=300)
        row, = json.loads(grade.stdout)
        assert row["passed"] and row["probes_passed"] == row["probes_total"] == 21, row     # 23 with a 1-D case


CAUSAL_LOOP_NEGATIVE_STOP = """
import numpy as np

def causal_mask(m, n=None):
    n = m if n is None else n
    mask = np.zeros((m, n), dtype=bool)
    for i in range(m):
        mask[i, : i + n - m + 1] = True          # wrong when n < m: a negative stop counts from the end
    return mask
"""


@pytest.mark.parametrize("command", ["check", "grade"])
def test_a_causal_mask_that_shows_the_future_when_queries_outnumber_keys_fails(tmp_path, console_script, command):
    """Every case had n >= m: a loop whose slice stop i + n - m + 1 goes negative (this repository's own tests held
    it as a right alternative), or k = |n - m| in place of n - m, passed 17/17 on every seed 1..10."""
    (tmp_path / "loop.py").write_text(CAUSAL_LOOP_NEGATIVE_STOP)
    (tmp_path / "abs.py").write_text("import numpy as np\n\ndef causal_mask(m, n=None):\n    n = m if n is None "
                                     "else n\n    return np.tril(np.ones((m, n), dtype=bool), k=abs(n - m))\n")
    run = _check_or_grade(console_script, command, "causal_mask", tmp_path / "loop.py", "4")
    if command == "check":
        assert run.returncode == 1 and "more queries than keys" in run.stdout, run.stdout + run.stderr
    else:
        rows = json.loads(run.stdout)
        assert len(rows) == 2 and all(not r["passed"] and r["probes_total"] - r["probes_passed"] == 2 for r in rows), \
            rows                                                             # the case and its hidden copy


MEAN_SHIFT_SOFTMAX = """
import numpy as np

def softmax(x):
    shift = np.mean(x, axis=-1, keepdims=True)            # wrong: only the maximum keeps exp from overflowing
    e = np.exp(x - np.where(np.isfinite(shift), shift, 0.0))
    total = e.sum(axis=-1, keepdims=True)
    return e / np.where(total > 0, total, 1.0)
"""


@pytest.mark.parametrize("command", ["check", "grade"])
def test_a_softmax_shifted_by_the_row_mean_fails_on_a_row_masked_with_minus_1e9(tmp_path, console_script, command):
    """The large-logits case held rows spread over a few units only: a softmax shifting each row by its mean (or
    minimum, or first entry) in place of its maximum passed 25/25 on every seed, and gives NaN on scores masked
    additively with -1e9 (exp(5e8) overflows)."""
    (tmp_path / "mean.py").write_text(MEAN_SHIFT_SOFTMAX)
    run = _check_or_grade(console_script, command, "softmax", tmp_path / "mean.py", "6")
    if command == "check":
        assert run.returncode == 1 and "masked with -1e9" in run.stdout and "value.nan" in run.stdout, run.stdout
    else:
        row, = json.loads(run.stdout)
        assert not row["passed"] and row["probes_total"] - row["probes_passed"] == 2, row   # the case, its hidden copy


NAIVE_SOFTMAX_MHA = """
import math
import numpy as np

def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    def heads(X):                                          # (..., L, H*d) -> (..., H, L, d)
        return np.swapaxes(X.reshape(*X.shape[:-1], num_heads, -1), -2, -3)
    Q, K, V = heads(X_q @ W_Q), heads(X_kv @ W_K), heads(X_kv @ W_V)
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask[..., None, :, :], scores, -np.inf)
    e = np.exp(scores)                                     # wrong: no row maximum subtracted, exp overflows
    total = e.sum(axis=-1, keepdims=True)
    weights = e / np.where(total > 0, total, 1.0)
    out = np.swapaxes(weights @ V, -2, -3)
    return out.reshape(*out.shape[:-2], -1) @ W_O, weights
"""


def test_multi_head_attention_with_a_softmax_that_overflows_fails(tmp_path, console_script):
    """multi_head_attention had no large-scores case (scaled dot-product attention and its backward have one):
    a softmax without its row maximum subtracted, the overflow the softmax exercise teaches, passed 24/24 under
    grade on every seed."""
    (tmp_path / "naive.py").write_text(NAIVE_SOFTMAX_MHA)
    for seed in ("1", "2"):
        grade = subprocess.run([console_script, "grade", str(tmp_path), "--exercise", "multi_head_attention", "--json",
                                "--seed", seed, "--per-student", "--no-progress"], capture_output=True, text=True,
                               timeout=300)
        row, = json.loads(grade.stdout)
        assert not row["passed"] and row["probe"] == "stability", row
        assert row["probes_total"] - row["probes_passed"] == 4, row      # the case, a masks case with scores of
        # 1000 and more since red team 9, and their hidden copies


SQUEEZED = {
    "softmax": "def softmax(x):\n    top = x.max(axis=-1, keepdims=True)\n"
               "    e = np.exp(x - np.where(np.isfinite(top), top, 0))\n"
               "    return np.squeeze(e / np.maximum(e.sum(axis=-1, keepdims=True), 1e-300))\n",
    "scaled_dot_product_attention":
        "def scaled_dot_product_attention(Q, K, V, mask=None):\n"
        "    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])\n"
        "    if mask is not None:\n        scores = np.where(mask, scores, -np.inf)\n"
        "    top = scores.max(axis=-1, keepdims=True)\n    e = np.exp(scores - np.where(np.isfinite(top), top, 0))\n"
        "    w = e / np.maximum(e.sum(axis=-1, keepdims=True), 1e-300)\n    return np.squeeze(w @ V), np.squeeze(w)\n",
    "attention_entropy": "def attention_entropy(weights):\n"
                         "    terms = np.where(weights > 0, weights * np.log(np.where(weights > 0, weights, 1)), 0)\n"
                         "    return np.squeeze(-terms.sum(axis=-1))\n",
    "luong_general_scores": "def luong_general_scores(S, H, W):\n    return np.squeeze(S @ W @ H.T)\n",
    "split_heads": "def split_heads(X, num_heads):\n"
                   "    return np.squeeze(np.swapaxes(X.reshape(*X.shape[:-1], num_heads, -1), -2, -3))\n",
    "merge_heads": "def merge_heads(X):\n"
                   "    return np.squeeze(np.swapaxes(X, -3, -2).reshape(*X.shape[:-3], X.shape[-2], -1))\n",
    "softmax_jacobian": "def softmax_jacobian(w):\n"
                        "    return np.squeeze(w[..., :, None] * (np.eye(w.shape[-1]) - w[..., None, :]))\n",
    "backward_dv": "def backward_dv(W, d_output):\n    return np.squeeze(np.swapaxes(W, -1, -2) @ d_output)\n",
}


@pytest.mark.parametrize("exercise", list(SQUEEZED))
def test_an_answer_squeezed_fails_on_a_batch_of_one(tmp_path, console_script, exercise):
    """No case had an axis of size 1: np.squeeze on the result, which drops a batch of one (shape (1, m, n) comes
    back (m, n)) or a single query, passed every probe of 14 of the 17 exercises on every seed."""
    (tmp_path / "squeezed.py").write_text("import numpy as np\n\n" + SQUEEZED[exercise])
    row, = json.loads(_check_or_grade(console_script, "grade", exercise, tmp_path / "squeezed.py", "7").stdout)
    assert not row["passed"] and row["probe"] == "returns" and row["probes_total"] - row["probes_passed"] == 2, row


def test_every_submission_entry_gets_a_row_a_fifo_and_a_device_link_too(tmp_path, console_script, softmax_source):
    """A FIFO and a link to /dev/zero named like submissions had no row at all (a student missing from the
    gradebook without a word), while a link to a file had one; each now has its row, and none is read."""
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "right.py").write_text(softmax_source)
    os.mkfifo(folder / "fifo.py")
    (folder / "zero.ipynb").symlink_to("/dev/zero")
    (folder / "link.py").symlink_to(folder / "right.py")
    done = subprocess.run([console_script, "grade", str(folder), "--exercise", "softmax", "--csv",
                           str(tmp_path / "grades.csv"), "--no-progress"], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    rows = _rows(tmp_path / "grades.csv")
    assert set(rows) == {"right.py", "fifo.py", "zero.ipynb", "link.py"}, rows
    assert rows["fifo.py"]["error"].startswith("not a regular file") and rows["fifo.py"]["status"] == "failed"
    assert all(rows[n]["error"].startswith("a symbolic link") for n in ("zero.ipynb", "link.py")), rows
    assert rows["right.py"]["passed"] == "True", rows["right.py"]


@pytest.mark.parametrize("command, seed", [("check", None), ("grade", "5")])
def test_an_entropy_that_drops_the_small_weights_fails(tmp_path, console_script, command, seed):
    """No case had a weight below 3e-4 (1e-3 without a seed): an entropy that counted only weights above 1e-3,
    each dropped term worth up to 0.007 nats, passed every probe of ``check`` and of seed 5; above 1e-4, almost
    every seed. The causal case's scores are now eight times larger: weights down to 1e-7."""
    (tmp_path / "dropped.py").write_text("import numpy as np\n\n\ndef attention_entropy(weights):\n"
                                         "    kept = np.where(weights > 1e-3, weights, 1.0)\n"
                                         "    return -np.sum(np.where(weights > 1e-3, weights * np.log(kept), 0.0), axis=-1)\n")
    argv = [command, "attention_entropy", str(tmp_path / "dropped.py")] if command == "check" else [
        command, str(tmp_path), "--exercise", "attention_entropy", "--per-student", "--json", "--no-progress",
        "--seed", seed]
    done = subprocess.run([console_script, *argv], capture_output=True, text=True, timeout=300)
    assert done.returncode != 0 or "failed" in done.stdout, done.stdout
    if command == "grade":
        row, = json.loads(done.stdout)
        assert not row["passed"] and row["probe"] == "masks", row
    else:
        assert "causal weights (4, 4)" in done.stdout, done.stdout


BORROWED_BACKWARD = """
    def attention_backward(Q, K, V, d_output, mask=None):      # no gradient of the student's own
        _, W = ae.scaled_dot_product_attention(Q, K, V, mask)
        dS = ae.backward_ds(W, ae.backward_dw(V, d_output))
        return ae.backward_dq(dS, K), ae.backward_dk(dS, Q), ae.backward_dv(W, d_output)
    """
AXIS_SOFTMAX = """
    def scaled_dot_product_attention(Q, K, V, mask=None):     # ae.softmax as the package has it, with axis=
        scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
        weights = ae.softmax(scores if mask is None else np.where(mask, scores, -np.inf), axis=-1)
        return weights @ V, weights
    """
SUBMODULE_SOFTMAX = """
    from attention_edu.softmax import softmax                  # the package's softmax, by its module

    def scaled_dot_product_attention(Q, K, V, mask=None):
        scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
        weights = softmax(scores if mask is None else np.where(mask, scores, -np.inf))
        return weights @ V, weights
    """


@pytest.mark.parametrize("exercise, source, passes", [("attention_backward", BORROWED_BACKWARD, False),
                                                      ("scaled_dot_product_attention", AXIS_SOFTMAX, True),
                                                      ("scaled_dot_product_attention", SUBMODULE_SOFTMAX, True)])
def test_a_notebooks_ae_is_the_package_it_imported(tmp_path, console_script, exercise, source, passes):
    """ae offered every earlier exercise's reference, the package's or not, and only positionally: an
    attention_backward made of ae.backward_ds and its siblings (AttributeError in class: the package has no
    such functions) passed every probe, and an honest attention calling ae.softmax(scores, axis=-1), as
    the package allows, passed none (TypeError); one importing softmax from attention_edu.softmax passed none
    either (NameError: a submodule's import became ``pass``)."""
    _notebook(tmp_path / "nb.ipynb", "import math\nimport numpy as np\nimport attention_edu as ae\n", source)
    row, = json.loads(_check_or_grade(console_script, "grade", exercise, tmp_path / "nb.ipynb", "3").stdout)
    assert row["passed"] is passes, row
    if not passes:
        assert row["probes_passed"] == 0 and row["probe"] == "runs", row
        done = _check_or_grade(console_script, "check", exercise, tmp_path / "nb.ipynb", "3")
        assert "AttributeError" in done.stdout and "ae.backward_dw is not available here" in done.stdout, done.stdout
    import attention_edu
    from attention_edu.checkers.judge.submission import PACKAGE
    assert PACKAGE == {n: getattr(attention_edu, n) for n in EXERCISES if hasattr(attention_edu, n)}
    child = harness.Child(None, 0, 0, lambda: 0, helpers={"causal_mask": EXERCISES["causal_mask"].reference})
    assert "use smaller arrays" in child._helper({"helper": "causal_mask", "args": [], "kwargs": {"m": 10 ** 5}})[
        "error"]                                                  # a keyword argument counts towards the bound


def test_a_long_load_report_or_helper_call_is_cut_by_the_worker_never_refused(tmp_path, console_script):
    """After red team 56 capped a reply at 1,280 values, a file of 1,500 functions besides its own (each named in
    the load report) sent a report the judge could not take, and a notebook's ae.softmax on a list of 2,000
    numbers a helper call it could not take: both honest work lost. The worker now sends the function asked for
    first, of at most 100 names, and a helper call's arguments as a reply's; the long list meets ae's own error."""
    attention = textwrap.dedent(AXIS_SOFTMAX).replace("ae.softmax(", "_softmax(") + textwrap.dedent("""
        def _softmax(s, axis=-1):
            e = np.exp(s - np.max(s, axis=axis, keepdims=True, initial=-1e300))
            total = np.sum(e, axis=axis, keepdims=True)
            return e / np.where(total == 0, 1.0, total)
        """)
    (tmp_path / "many.py").write_text("import math\nimport numpy as np\nfor _i in range(1500):\n"
                                      "    exec(f'def helper_{_i}(x):\\n    return x\\n')\n" + attention)
    _notebook(tmp_path / "nb.ipynb", "import math\nimport numpy as np\nimport attention_edu as ae\n",
              "try:\n    ae.softmax([0.5] * 2000)\nexcept Exception as err:\n    told = str(err)\n", AXIS_SOFTMAX)
    rows = {Path(r["file"]).name: r for r in json.loads(_check_or_grade(
        console_script, "grade", "scaled_dot_product_attention", tmp_path / "nb.ipynb", "3").stdout)}
    assert rows["nb.ipynb"]["passed"] is True, str(rows["nb.ipynb"])
    assert rows["many.py"]["passed"] is True, str(rows["many.py"])


# An old kernel's stand-in (x86_64): a seccomp filter of the steps in argv[1] (WITHOUT_LANDLOCK: landlock_create_ruleset,
# _add_rule and _restrict_self fail with ENOSYS; WITHOUT_SECCOMP: prctl(PR_SET_SECCOMP) and seccomp(2) fail with
# EINVAL, as without CONFIG_SECCOMP_FILTER), then exec the grader.
STAND_IN = """
import ctypes, json, os, struct, sys
code = b"".join(struct.pack("=HBBI", *step) for step in json.loads(sys.argv[1]))
buffer = ctypes.create_string_buffer(code, len(code))
fprog = ctypes.create_string_buffer(struct.pack("HP", len(code) // 8, ctypes.addressof(buffer)))
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(38, 1, 0, 0, 0) == 0 and libc.prctl(22, 2, ctypes.c_ulong(ctypes.addressof(fprog)), 0, 0) == 0
os.execv(sys.argv[2], sys.argv[2:])
"""
LOAD_NR, JUMP_EQ, ALLOW = (0x20, 0, 0, 0), 0x15, (6, 0, 0, 0x7FFF0000)
WITHOUT_LANDLOCK = [LOAD_NR, (JUMP_EQ, 3, 0, 444), (JUMP_EQ, 2, 0, 445), (JUMP_EQ, 1, 0, 446), ALLOW, (6, 0, 0, 0x50026)]
WITHOUT_SECCOMP = [LOAD_NR, (JUMP_EQ, 4, 0, 317), (JUMP_EQ, 0, 2, 157), (0x20, 0, 0, 16), (JUMP_EQ, 1, 0, 22), ALLOW,
                   (6, 0, 0, 0x50016)]
x86_64_only = pytest.mark.skipif(os.uname().machine != "x86_64", reason="the stand-in's filter names x86_64's calls")


def _under(steps: list, *argv: str, **env: str) -> subprocess.CompletedProcess:
    """``argv`` run under the stand-in filter ``steps`` with ``env`` added, as a grader without capabilities:
    a root grader's, which its worker lacks, would keep the worker out of its /proc/<pid> as no user's does."""
    no_caps = ["setpriv", "--bounding-set=-all", "--inh-caps=-all", "--ambient-caps=-all"] if os.geteuid() == 0 else []
    return subprocess.run([*no_caps, sys.executable, "-c", STAND_IN, json.dumps(steps), *argv], capture_output=True,
                          text=True, timeout=120, env={**os.environ, **env})


STOP_THE_GRADER = """
import errno, os, sys
sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "Refuse"]   # the import rule is no layer
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
def parent(pid):
    return int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
launcher = os.getppid()
grader = parent(launcher)
found = [open(SECRET).read()]                       # control: no Landlock, the grader's user's files are open
for name, pid in (("grader", grader), ("launcher", launcher)):
    try:
        os.close(os.open(f"/proc/{pid}/mem", os.O_RDWR))
        found.append(f"{name} memory writable")
    except OSError as error:
        found.append(f"{name} memory {errno.errorcode[error.errno]}")
if libc.ptrace(16, grader, None, None) == 0:        # PTRACE_ATTACH: the grader stops ...
    os.waitpid(grader, 0x40000000)
    found.append(f"grader {open(f'/proc/{grader}/stat').read().rsplit(')', 1)[1].split()[0]}")
    libc.ptrace(17, grader, None, None)             # ... until detached (a submission would sleep on instead)
else:
    found.append(f"grader ptrace {errno.errorcode[ctypes.get_errno()]}")
raise ValueError(" | ".join(found))
"""


@x86_64_only
def test_without_landlock_and_namespaces_a_submission_cannot_stop_or_rewrite_the_grader(tmp_path, console_script):
    """Where the kernel has no Landlock and refuses namespaces (a container whose seccomp profile refuses
    both), the worker is a process of the grader's user: ptrace(PTRACE_ATTACH) stopped the grader, and then
    ``grade`` waited forever, past every time limit, and /proc/<pid>/mem of the grader and of the launcher
    (outside the seccomp filter) opened for writing. Both are now not dumpable."""
    (tmp_path / "secret.txt").write_text("the teacher's file")
    (tmp_path / "stop.py").write_text(f"SECRET = {str(tmp_path / 'secret.txt')!r}\n" + STOP_THE_GRADER)
    done = _under(WITHOUT_LANDLOCK, console_script, "check", "softmax", str(tmp_path / "stop.py"), "--verbose",
                  ATTENTION_EDU_SANDBOX_NO_NAMESPACES="1")
    assert "sandbox layers: seccomp, rlimits)" in done.stdout, done.stdout + done.stderr
    found = done.stdout.split("ValueError: ")[1].split(" (line")[0].split(" | ")
    assert found == ["the teacher's file", "grader memory EACCES", "launcher memory EACCES", "grader ptrace EPERM"]


@x86_64_only
def test_without_seccomp_grading_goes_on_with_the_other_layers(tmp_path, console_script, softmax_source):
    """Where the kernel refuses the seccomp filter (no CONFIG_SECCOMP_FILTER), the worker died before exec and
    every submission failed, the honest ones too, with "importing the file ended the process with os._exit(127)",
    while the rows named no layer and available_layers() called seccomp active. The worker now goes on without
    the filter, and the layers say so; a fork shows that the filter is really off."""
    (tmp_path / "honest.py").write_text(softmax_source)
    (tmp_path / "forks.py").write_text("import os\nos.waitpid(os.fork() or os._exit(0), 0)\n" + softmax_source)
    done = _under(WITHOUT_SECCOMP, console_script, "grade", str(tmp_path), "--exercise", "softmax", "--json",
                  "--require-sandbox")
    rows = {Path(row["file"]).name: row for row in json.loads(done.stdout)}
    assert [rows[name]["passed"] for name in ("forks.py", "honest.py")] == [True, True], done.stdout
    assert "seccomp" not in rows["honest.py"]["sandbox"] and "rlimits" in rows["honest.py"]["sandbox"], rows
    probe = "from attention_edu.checkers.judge.sandbox import available_layers; print(available_layers()['seccomp'])"
    assert _under(WITHOUT_SECCOMP, sys.executable, "-c", probe).stdout.startswith("unavailable: the kernel refused")


@x86_64_only
def test_without_seccomp_what_a_submission_prints_is_no_file_whose_blocks_it_could_reserve(
        tmp_path, console_script, softmax_source):
    """Red teams 40 and 41 reserved the grader's disk through fallocate(FALLOC_FL_KEEP_SIZE) and FS_IOC_RESVSP64 on
    fd 1, then the grader's file of what the worker prints; seccomp refuses both calls, but where there is no seccomp
    the file was still the grader's disk in the worker's hands. fd 1 is now a pipe the judge drains: the ioctl finds
    no file ("Inappropriate ioctl for device"), the same in a notebook's check, and printing still works."""
    resvsp = ("import fcntl, os, stat, struct\nassert stat.S_ISFIFO(os.fstat(1).st_mode), 'fd 1 is a file'\n"
              "fcntl.ioctl(1, 0x4030582A, struct.pack('hhqqii4i', 0, 0, 0, 256 << 20, 0, 0, 0, 0, 0, 0))\n")
    (tmp_path / "resvsp.py").write_text(resvsp + softmax_source)
    (tmp_path / "honest.py").write_text("print('loading')\n" + softmax_source.replace(
        "    return e", "    print('x' * 100_000)\n    return e"))            # more than a pipe holds, every call
    done = _under(WITHOUT_SECCOMP, console_script, "grade", str(tmp_path), "--exercise", "softmax", "--json")
    rows = {Path(row["file"]).name: row for row in json.loads(done.stdout)}
    assert "seccomp" not in rows["honest.py"]["sandbox"] and rows["honest.py"]["passed"] is True, rows
    assert "OSError: [Errno 25] Inappropriate ioctl for device" in rows["resvsp.py"]["error"], rows["resvsp.py"]
    outcome = harness.call(lambda: (print("hi"), stat.S_ISFIFO(os.fstat(1).st_mode))[1], (), ())
    assert outcome.value is True and outcome.printed == "hi\n", outcome


def test_a_submission_that_prints_without_pause_costs_the_grader_little_and_a_large_print_still_passes(
        tmp_path, softmax_source):
    """Red team 42: a loop of os.write(1, ...) at import made the grader read the pipe as fast as it filled, half a
    core of the grader's own for the submission's whole budget (2.3 s of its CPU in an 8 s budget, against 0.2 s for
    a loop that prints nothing). Past 16 MiB since its last look the grader now reads at most 32 kB a millisecond
    (0.6 s): the flood costs it little, while a call that prints 50 MB and returns the right answer still passes."""
    flood = tmp_path / "flood.py"
    flood.write_text("import os\nwhile True:\n    os.write(1, b'FLOOD' * 20000)\n")
    before, start = resource.getrusage(resource.RUSAGE_SELF), time.monotonic()
    row = grade_one("softmax", flood, seed=1, budget=6.0)
    after, wall = resource.getrusage(resource.RUSAGE_SELF), time.monotonic() - start
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    assert not row.passed and "6 s" in row.error and cpu < 0.2 * wall, (row.error, cpu, wall)
    chatty = tmp_path / "chatty.py"
    chatty.write_text(softmax_source.replace("def softmax(x):\n", "SAID = []\n\n\ndef softmax(x):\n    if not SAID:\n"
                                             "        SAID.append(print(('y' * 999 + '\\n') * 50_000))\n"))
    assert grade_one("softmax", chatty, seed=1).passed


REFUSES_ONLY_RESTRICT_SELF = [LOAD_NR, (JUMP_EQ, 1, 0, 446), ALLOW, (6, 0, 0, 0x50001)]     # EPERM


@x86_64_only
@pytest.mark.skipif(not landlock_abi(), reason="needs a kernel that answers Landlock's version query")
def test_a_row_graded_without_landlock_gets_no_credit_in_any_report(tmp_path, console_script, softmax_source):
    """A container whose seccomp profile answers Landlock's version query but refuses landlock_restrict_self:
    the guide's run_autograder (--require-sandbox --gradescope) failed the row, "graded without the filesystem
    sandbox", but kept its probes: the table read "failed 25/25" and results.json "score": 25 of 25, which is
    what Gradescope counts (the tests under it added up to 0). The row now scores 0 everywhere."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "softmax.py").write_text(softmax_source)
    out = tmp_path / "results.json"
    done = _under(REFUSES_ONLY_RESTRICT_SELF, console_script, "grade", str(tmp_path / "sub"), "--exercise", "softmax",
                  "--seed", "5", "--per-student", "--no-progress", "--require-sandbox", "--gradescope", str(out))
    assert done.returncode == 0 and "failed           0/25" in done.stdout, done.stdout + done.stderr
    results = json.loads(out.read_text())
    assert (results["score"], results["max_score"]) == (0, 25), results
    assert results["output"] == "graded without the filesystem sandbox", results


LITTER = """
import os
os.mkdir("kept")
for number in range(3):
    with open(f"kept/blob{number}", "wb") as blob:
        blob.write(bytes(8 << 20))
os.mkdir("locked", 0o300)                # write and search, no read: its owner cannot list it
os.rename("kept", "locked/kept")
"""
#: The same locked folder below 24 folders of 200 characters: its path is longer than PATH_MAX (4,096 bytes).
DEEP_LITTER = """
import os
back = os.open(".", os.O_RDONLY)
for _ in range(24):
    os.mkdir("d" * 200)
    os.chdir("d" * 200)
os.mkdir("locked", 0o300)
with open("locked/blob", "wb") as blob:
    blob.write(bytes(1 << 20))
os.fchdir(back)
"""


#: A locked folder holding links to the teacher's folder beside TMPDIR and to a file in it: chmod -R follows neither.
LINKED_LITTER = """
import os
outside = os.environ["HOME"].rsplit("/", 2)[0] + "/outside"
os.mkdir("locked", 0o300)
os.symlink(outside, "locked/folder")
os.symlink(outside + "/marks.txt", "locked/file")
"""


@pytest.mark.parametrize("litter", [LITTER, DEEP_LITTER, LINKED_LITTER],
                         ids=["locked", "locked-below-path-max", "locked-with-links-out"])
def test_a_folder_a_submission_locks_is_removed_with_its_private_directory(tmp_path, console_script, softmax_source,
                                                                           litter):
    """Without namespaces the private directory is a plain folder of TMPDIR. A submission that made a folder
    without read permission (mkdir's mode, which no filter refuses) and moved 24 MiB into it left the whole
    private directory behind once grading ended (neither shutil.rmtree nor rm -rf can list it), as the grader's
    user without capabilities: one such file per submission, kept after the run. The folder is now given
    back (chmod) before it is removed, and TMPDIR is empty again. A locked folder whose path was longer than PATH_MAX
    was still left (chmod by path failed with ENAMETOOLONG): chmod -R, which reaches any depth, now gives it back."""
    (tmp_path / "class").mkdir()
    (tmp_path / "tmp").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "marks.txt").write_text("secret")
    (tmp_path / "outside" / "marks.txt").chmod(0o600)
    (tmp_path / "outside").chmod(0o500)
    (tmp_path / "class" / "litter.py").write_text(litter + softmax_source)
    (tmp_path / "class" / "honest.py").write_text(softmax_source)
    no_caps = ["setpriv", "--bounding-set=-all", "--inh-caps=-all", "--ambient-caps=-all"] if os.geteuid() == 0 else []
    done = subprocess.run([*no_caps, console_script, "grade", str(tmp_path / "class"),
                           "--exercise", "softmax", "--json", "--no-progress"], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "TMPDIR": str(tmp_path / "tmp"),
                                            "ATTENTION_EDU_SANDBOX_NO_NAMESPACES": "1"})
    rows = {Path(row["file"]).name: row for row in json.loads(done.stdout)}
    assert rows["honest.py"]["passed"] and rows["litter.py"]["passed"], done.stdout + done.stderr
    assert "mount-namespace" not in rows["honest.py"]["sandbox"], rows
    assert list((tmp_path / "tmp").iterdir()) == []
    assert (tmp_path / "outside" / "marks.txt").stat().st_mode & 0o777 == 0o600     # no link was followed
    assert (tmp_path / "outside").stat().st_mode & 0o777 == 0o500


SWAP_FOR_A_LINK = """
import os
private = os.getcwd()
os.rename(private, private + "-moved")
os.symlink(os.environ["HOME"].rsplit("/", 2)[0] + "/outside", private)   # beside TMPDIR: the teacher's folder
"""


@x86_64_only
@pytest.mark.skipif(not landlock_abi(), reason="needs a kernel that answers Landlock's version query")
def test_cleaning_up_never_changes_a_folder_a_link_in_the_private_directorys_place_names(tmp_path, console_script,
                                                                                           softmax_source):
    """Without Landlock (here its last call refused) and without namespaces, a worker may put a link where its
    private directory was. chmod -R (which gives back a locked folder of any depth) follows the link it is named:
    the teacher's folder beside TMPDIR had every mode widened (0o600 -> 0o700). It is never given a link."""
    (tmp_path / "tmp").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "marks.txt").write_text("secret")
    (tmp_path / "outside" / "marks.txt").chmod(0o600)
    (tmp_path / "swap.py").write_text(SWAP_FOR_A_LINK + softmax_source)
    done = _under(REFUSES_ONLY_RESTRICT_SELF, console_script, "grade", str(tmp_path / "swap.py"),
                  "--exercise", "softmax", "--no-progress", TMPDIR=str(tmp_path / "tmp"),
                  ATTENTION_EDU_SANDBOX_NO_NAMESPACES="1")
    assert "passed" in done.stdout, done.stdout + done.stderr
    assert (tmp_path / "outside" / "marks.txt").stat().st_mode & 0o777 == 0o600


def test_a_gradebook_that_cannot_be_written_is_a_sentence_not_a_traceback(tmp_path, console_script, softmax_source):
    """A --csv in a read-only folder was found out only after every submission had run (a traceback, the rows
    lost), and so was a disk that filled up (here: a file-size limit of 1,000 bytes, EFBIG as ENOSPC would be).
    The folder is now checked first (a usage error, exit 2, nothing graded); a write that fails at the end says
    so in a line, still prints the rows and exits 1. A root grader runs without capabilities (root's
    CAP_DAC_OVERRIDE writes into any folder)."""
    (tmp_path / "honest.py").write_text(softmax_source)
    (tmp_path / "read-only").mkdir(mode=0o555)
    no_caps = ["setpriv", "--bounding-set=-all", "--inh-caps=-all", "--ambient-caps=-all"] if os.geteuid() == 0 else []
    grade = [*no_caps, console_script, "grade", str(tmp_path / "honest.py"), "--exercise", "softmax", "--no-progress"]
    done = subprocess.run([*grade, "--csv", str(tmp_path / "read-only" / "grades.csv")], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == "", done.stdout + done.stderr
    assert done.stderr.endswith(f"argument --csv: the folder {tmp_path / 'read-only'} is not writable\n"), done.stderr
    small = lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (100, 100))     # noqa: E731 - the grader's only
    for option, name in (("--csv", "grades.csv"), ("--gradescope", "results.json")):
        done = subprocess.run([*grade, option, str(tmp_path / name)], capture_output=True, text=True, timeout=120,
                              preexec_fn=small)
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        assert "attention-edu grade: the gradebook could not be written (File too large)" in done.stderr
        assert done.stdout.startswith("passed          25/25"), done.stdout
        assert sorted(p.name for p in tmp_path.iterdir()) == ["honest.py", "read-only"]    # nor a partial file


def test_a_gradebook_not_written_is_never_hidden_by_a_gone_reader(tmp_path, console_script, softmax_source):
    """Red team 46: with the gradebook unwritten (a full disk) and stdout's reader gone (``| head``), grade exited 0:
    the command line reads a broken pipe as a reader that stopped early. It now exits 1 all the same."""
    (tmp_path / "honest.py").write_text(softmax_source)
    small = lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (100, 100))     # noqa: E731 - EFBIG, as ENOSPC
    read, write = os.pipe()
    os.close(read)                                                               # nobody reads the rows
    done = subprocess.run([console_script, "grade", str(tmp_path / "honest.py"), "--exercise", "softmax",
                           "--no-progress", "--csv", str(tmp_path / "grades.csv")], stdout=write,
                          stderr=subprocess.PIPE, text=True, timeout=120, preexec_fn=small)
    os.close(write)
    assert done.returncode == 1, done.stderr
    assert "the gradebook could not be written (File too large)" in done.stderr and "Traceback" not in done.stderr


def test_a_grader_whose_packages_come_from_pythonpath_grades_honest_work(tmp_path, softmax_source):
    """``pip install --user`` (or PYTHONPATH) puts NumPy, array_api_compat and landlockpy where ``python -I`` does
    not look: the worker died on its first import, and every submission, honest ones too, failed with "importing
    the file ended the process with os._exit(1)". The worker now also looks where the judge found them (after its
    interpreter's own folders); Landlock still keeps everything else there unreadable. The base interpreter of
    this virtual environment, with the environment's packages on PYTHONPATH, stands in for a user's own."""
    base = getattr(sys, "_base_executable", sys.executable)
    if sys.prefix == sys.base_prefix:
        pytest.skip("the tests do not run in a virtual environment: no interpreter without its packages here")
    root, site = Path(__file__).resolve().parents[3], Path(np.__file__).parents[1]
    (tmp_path / "honest.py").write_text(softmax_source)
    done = subprocess.run([base, "-c", "import sys\nfrom attention_edu.cli import main\nsys.exit(main(sys.argv[1:]))",
                           "check", "softmax", str(tmp_path / "honest.py"), "--verbose"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(site)])}, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("check softmax: passed."), done.stdout + done.stderr
    assert ("landlock" in done.stdout) == LAYERS["landlock"].startswith("active"), done.stdout


FILL_TMPDIR = """
    import time
    count = 0
    try:
        while True:                              # every inode of the shared TMPDIR ...
            open(f"f{count}", "w").close()
            count += 1
    except OSError:
        pass
    try:
        with open("big", "wb") as file:          # ... and every byte
            while True:
                file.write(bytes(1 << 20))
    except OSError:
        pass
    time.sleep(4)                                # held while the classmates start
    def softmax(x):
        return x
    """


def test_without_namespaces_a_submission_that_fills_tmpdir_fails_no_classmate(tmp_path, console_script, softmax_source):
    """Without a mount namespace the private directories share TMPDIR, which teachers.md says to make a size-limited
    filesystem. Under --jobs 2 one submission that filled it failed the honest ones graded beside it ("the grader
    failed on this submission (OSError: [Errno 28] No space left on device: .../printed.txt)"). grade now takes them
    one at a time there: each private directory is gone before the next starts. The small filesystem is a tmpfs
    mounted in a user and mount namespace of the test's own (unshare), around grade."""
    folder, scratch = tmp_path / "class", tmp_path / "scratch"
    folder.mkdir(), scratch.mkdir()
    (folder / "a_filler.py").write_text(textwrap.dedent(FILL_TMPDIR))
    for name in ("b", "c", "d"):
        (folder / f"{name}_honest.py").write_text(softmax_source)
    unshare = ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c"]
    mount = f"mount -t tmpfs -o size=8m,nr_inodes=256 tmpfs {scratch}"
    if subprocess.run([*unshare, mount], capture_output=True).returncode != 0:
        pytest.skip("no user and mount namespace here for the small filesystem (unshare)")
    done = subprocess.run([*unshare, f"{mount} && exec {console_script} grade {folder} --exercise softmax --jobs 2 "
                           "--json --no-progress"], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "TMPDIR": str(scratch), "ATTENTION_EDU_SANDBOX_NO_NAMESPACES": "1"})
    rows = {Path(row["file"]).name: row for row in json.loads(done.stdout)}
    assert [rows[f"{name}_honest.py"]["passed"] for name in "bcd"] == [True] * 3, done.stdout
    assert rows["a_filler.py"]["passed"] is False and "mount-namespace" not in rows["b_honest.py"]["sandbox"]


HELPER_LOOP = """
    import time
    import numpy as np
    start = time.monotonic()
    while time.monotonic() - start < 55:        # red team 59: ae calls of the largest allowed inputs, for the budget
        J = ae.softmax_jacobian(np.full((100, 100), 0.01))
    """

VIOLATION_FLOOD = """
    import sys, time
    out, protocol = sys._getframe(1).f_locals["out"], sys._getframe(1).f_globals["protocol"]   # the worker's
    start = time.monotonic()
    while time.monotonic() - start < 55:        # red team 57: refused-import frames, forged (4 MB then), for the budget
        protocol.send(out, {"violation": "v" * 300_000})
    """


def _graded(tmp_path: Path, folder: Path, exercise: str) -> tuple[dict[str, dict], int]:
    """``grade --jobs 2`` of ``folder`` in an interpreter of its own: the CSV's rows and the grader's peak in MB."""
    done = subprocess.run([sys.executable, "-c", PEAK, "grade", str(folder), "--exercise", exercise, "--csv",
                           str(tmp_path / f"{exercise}.csv"), "--no-progress", "--jobs", "2"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return _rows(tmp_path / f"{exercise}.csv"), int(done.stderr.rsplit("peak ", 1)[1]) >> 10


@sandboxed
def test_ae_calls_and_forged_frames_cannot_keep_the_grader_busy_for_the_budget(tmp_path, softmax_source):
    """The grader computes a notebook's ae calls itself and decodes every frame a worker sends: a loop of
    ae.softmax_jacobian on 160 x 160 weights cost it 52 s of its CPU and 668 MB for four notebooks under --jobs 4, and
    forged 4 MB refused-import frames kept it decoding for the budget (20 s of its CPU). A submission's ae calls and
    refused imports now have a budget of their own (HELPER_BUDGET), and one call's inputs a lower bound."""
    (softmaxes := tmp_path / "softmax").mkdir()
    (softmaxes / "flood.py").write_text(textwrap.dedent(VIOLATION_FLOOD) + softmax_source)
    _notebook(softmaxes / "examples.ipynb", "import time\nstart = time.monotonic()\nwhile time.monotonic() - start "
              "< 55:\n    try:\n        ae.worked_examples.get('x')\n    except ValueError:\n        pass",
              softmax_source)       # the cheapest ae call there is (an id it has not: an error), looped
    (softmaxes / "honest.py").write_text(softmax_source)
    (backward := tmp_path / "backward").mkdir()
    _notebook(backward / "helpers.ipynb", "import numpy as np", HELPER_LOOP,
              "def attention_backward(Q, K, V, d_output, mask=None):\n    return None\n")
    for (rows, peak_mb), names in ((_graded(tmp_path, softmaxes, "softmax"), ("flood.py", "examples.ipynb")),
                                   (_graded(tmp_path, backward, "attention_backward"), ("helpers.ipynb",))):
        assert peak_mb < 200 and rows.get("honest.py", {"passed": "True"})["passed"] == "True", (peak_mb, rows)
        for name in names:
            assert rows[name]["passed"] == "False" and "more ae calls or refused imports" in rows[name]["error"], rows
            # 55 s of it asked for: without the budget a row takes that long; with it 22 s in CI, 40.2 s on 2 cores
            assert float(rows[name]["seconds"]) < 50, rows[name]    # shared with a training run (stop 56)


def test_two_files_whose_names_escape_alike_get_rows_told_apart(tmp_path, console_script, softmax_source):
    """Red team 59: a file named with a real line break and one named with a backslash and an n both showed as
    new\\nline.py, one passing and one failing: a backslash in a file's name is now doubled."""
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "new\nline.py").write_text(softmax_source)
    (folder / "new\\nline.py").write_text(softmax_source.replace("axis=-1", "axis=0"))
    done = subprocess.run([console_script, "grade", str(folder), "--exercise", "softmax", "--csv",
                           str(tmp_path / "grades.csv"), "--no-progress"], capture_output=True, text=True, timeout=120)
    rows = {Path(r["file"]).name: r["passed"] for r in csv.DictReader(io.StringIO((tmp_path / "grades.csv").read_text()))}
    assert rows == {"new\\nline.py": "True", "new\\\\nline.py": "False"}, (rows, done.stdout)


def test_a_notebook_that_calls_ae_often_on_small_inputs_is_graded_as_in_class(tmp_path):
    """Red team 60: under a budget that counted each call at the cube of its longest axis, a sweep of 1,100 calls
    of ae.softmax failed a right notebook ("more ae calls ... than the grader serves"); the budget is the grader's
    CPU time now, which 2,000 such calls barely touch."""
    sweep = ("import numpy as np\ntemperatures = np.linspace(0.1, 10, 2000)\n"
             "curves = [ae.softmax(np.arange(8.0) / t) for t in temperatures]")
    right = ("def causal_mask(m, n=None):\n    n = m if n is None else n\n"
             "    return np.tril(np.ones((m, n), bool), k=n - m)\n")
    row = grade_one("causal_mask", _notebook(tmp_path / "sweep.ipynb", sweep, right), seed=1)
    assert row.passed and row.error is None, row.message
