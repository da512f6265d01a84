"""The judge's other promises: the worker holds nothing of the library, an in-process check
compares plain copies, notebooks run as in class, hidden probes are seeded, Gradescope's format,
Ctrl-C."""

from __future__ import annotations

import contextlib
import csv
import fcntl
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import jsonschema
import numpy as np
import pytest

import attention_edu as ae
from attention_edu.checkers import CheckFailed, check_softmax
from attention_edu.checkers.records import hidden_cases, student_seed
from attention_edu.checkers.judge.sandbox import landlock_abi
from attention_edu.checkers.judge.submission import Remote, grade_one, notebook_cells
from attention_edu.checkers import EXERCISES

WRONG = "import numpy as np\n\ndef softmax(x):\n    e = np.exp(x)\n    return e / e.sum(axis=0, keepdims=True)\n"


def _grade(console_script, *argv, timeout=300):
    return subprocess.run([console_script, "grade", *map(str, argv), "--no-progress"], capture_output=True,
                          text=True, timeout=timeout)


def test_the_worker_has_no_library_in_memory_and_cannot_read_it(tmp_path):
    source = tmp_path / "probe.py"
    source.write_text(
        "import sys\n"
        f"PACKAGE = {ae.__file__!r}\n"
        "def softmax(x):\n"
        "    try:\n        open(PACKAGE).read(1)\n        readable = 'readable'\n"
        "    except OSError as err:\n        readable = type(err).__name__\n"
        "    loaded = sorted(m for m in sys.modules if m.startswith('attention_edu'))\n"
        "    raise ValueError(f'loaded={loaded} package={readable}')\n")
    row = grade_one("softmax", source, seed=1)
    assert "loaded=[] package=" in row.message, row.message
    if "landlock" in row.sandbox:
        assert "package=PermissionError" in row.message, row.message


class Liar(np.ndarray):
    """Zeros that say they equal anything."""

    def __eq__(self, other):
        return np.ones(np.shape(self), dtype=bool).view(Liar)

    def __array_ufunc__(self, *args, **kwargs):
        return True

    def __bool__(self):
        return True


def test_a_lying_subclass_fails_in_process_strict_too():
    def softmax(x):
        return np.zeros_like(x).view(Liar)

    result = check_softmax(softmax)
    assert not result.passed and "Liar" in str(result), str(result)
    with pytest.raises(CheckFailed):
        check_softmax(softmax, strict=True)


def _notebook(path, cells):
    path.write_text(json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "execution_count": None,
                                           "outputs": [], "source": c} for c in cells],
                                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))


def test_a_notebook_runs_as_in_class_once_per_grading(tmp_path, softmax_source):
    """A constant computed by a call works; a slow cell is paid once, not once per probe."""
    _notebook(tmp_path / "class.ipynb", [
        "import numpy as np\nimport attention_edu as ae\nfrom attention_edu.checkers import check_softmax",
        "import time\ntime.sleep(1.0)\nTINY = np.finfo(np.float64).tiny",
        "def softmax(x):\n    top = np.max(x, axis=-1, keepdims=True)\n"
        "    e = np.exp(x - np.where(np.isfinite(top), top, 0.0))\n"
        "    return e / np.maximum(np.sum(e, axis=-1, keepdims=True), TINY)",
        "check_softmax(softmax)",
        "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.plot(softmax(np.arange(3.0)))",
        "softmax(np.arange(3.0))"])
    row = grade_one("softmax", tmp_path / "class.ipynb", seed=3)
    assert row.passed and row.error is None, row.message
    assert row.seconds < 10.0, row.seconds      # 16 probes re-running the 1 s cell would take 16 s
    cells = notebook_cells(tmp_path / "class.ipynb")
    assert [label for label, _ in cells] == ["code cell 1", "code cell 2", "code cell 3", "code cell 5", "code cell 6"]
    with contextlib.closing(Remote(cells, "class.ipynb", "softmax", ("numpy", "math", "matplotlib"),
                                   notebook=True)) as remote:
        assert remote.start()["cell_errors"] == []             # the plot cell ran too (Agg backend)


def test_a_py_file_with_a_demo_plot_grades_as_its_notebook_would(tmp_path, softmax_source):
    """False-fail hunt 6: ``import matplotlib.pyplot`` at the top of a .py, for a demo plot, failed the whole
    submission ("not allowed here") where the same lines in a notebook passed."""
    path = tmp_path / "mine.py"
    path.write_text("import matplotlib.pyplot as plt\n" + softmax_source
                    + "\nfig, ax = plt.subplots()\nax.plot(softmax(np.arange(3.0)))\n")
    row = grade_one("softmax", path, seed=3)
    assert row.passed and row.error is None, row.message


def test_same_seed_same_rows_and_per_student_seeds_differ(tmp_path, console_script, softmax_source):
    (tmp_path / "ana.py").write_text(softmax_source)
    (tmp_path / "bo.py").write_text(WRONG)
    runs = [json.loads(_grade(console_script, tmp_path, "--exercise", "softmax", "--json", "--jobs", "2",
                              "--seed", "5", "--per-student").stdout) for _ in range(2)]
    strip = [[{k: v for k, v in r.items() if k != "seconds"} for r in rows] for rows in runs]
    assert strip[0] == strip[1]
    seeds = {r["file"].rsplit("/", 1)[-1]: r["seed"] for r in runs[0]}
    assert seeds == {name: student_seed(5, str(tmp_path / name), (tmp_path / name).read_bytes())
                     for name in ("ana.py", "bo.py")}
    a, b = (hidden_cases(EXERCISES["softmax"], s) for s in seeds.values())
    assert all(not np.array_equal(x.args[0], y.args[0]) for x, y in zip(a, b))
    assert [c.args[0].tolist() for c in a] == [c.args[0].tolist() for c in
                                               hidden_cases(EXERCISES["softmax"], seeds["ana.py"])]


GRADESCOPE_SCHEMA = {
    "type": "object", "required": ["score", "max_score", "output", "tests"],
    "properties": {
        "score": {"type": "number", "minimum": 0}, "max_score": {"type": "number", "minimum": 0},
        "output": {"type": "string"},
        "tests": {"type": "array", "minItems": 1, "items": {
            "type": "object", "required": ["name", "score", "max_score", "status", "output", "visibility"],
            "properties": {"name": {"type": "string"}, "score": {"type": "number"},
                           "max_score": {"type": "number"}, "status": {"enum": ["passed", "failed"]},
                           "output": {"type": "string"},
                           "visibility": {"enum": ["hidden", "after_due_date", "after_published", "visible"]}}}}},
}


def test_gradescope_results_validate(tmp_path, console_script):
    (tmp_path / "bo.py").write_text(WRONG)
    out = tmp_path / "results.json"
    done = _grade(console_script, tmp_path / "bo.py", "--exercise", "softmax", "--gradescope", out, "--seed", "2")
    assert done.returncode == 0, done.stderr
    results = json.loads(out.read_text())
    jsonschema.validate(results, GRADESCOPE_SCHEMA)
    assert results["score"] < results["max_score"] and any(t["status"] == "failed" for t in results["tests"])
    assert [t.get("visibility") for t in results["tests"] if t["name"].startswith("hidden")] == ["after_published"]
    assert any("softmax.wrong-axis" in t["output"] for t in results["tests"])
    assert sum(t["score"] for t in results["tests"]) == results["score"], "the tests add up to the score"
    assert results["output_format"] == results["test_output_format"] == "text"   # a student's <b> stays text
    for test in results["tests"]:
        assert (test["status"] == "passed") == (test["score"] == test["max_score"] > 0), test


def test_gradescope_scores_no_pick_of_several_files(tmp_path, console_script, softmax_source):
    """A Gradescope submission of several files (a wrong try beside a right one, named to sort first)
    scores 0 with a sentence, instead of the grader picking one."""
    (tmp_path / "a_try.py").write_text(softmax_source)
    (tmp_path / "b_\x1b[31m.py").write_text(WRONG)
    out = tmp_path / "results.json"
    done = _grade(console_script, tmp_path, "--exercise", "softmax", "--gradescope", out, "--seed", "2")
    assert done.returncode == 0, done.stderr
    results = json.loads(out.read_text())
    jsonschema.validate(results, GRADESCOPE_SCHEMA)
    assert results["score"] == 0 and results["max_score"] == 25, results
    assert results["tests"][0]["output"] == (
        "2 files came in (a_try.py, b_\\x1b[31m.py): submit one .py or .ipynb that defines softmax")
    assert "sandbox layers: none (no submission ran)" in done.stderr     # not a sandbox that failed
    # with --json too, each file has its row and why it was not graded (it printed [] and "graded 0 of 2")
    done = _grade(console_script, tmp_path, "--exercise", "softmax", "--gradescope", out, "--seed", "2", "--json")
    rows = json.loads(done.stdout)
    assert [(Path(r["file"]).name, r["status"], r["passed"]) for r in rows] == [     # escaped, as graded rows are
        ("a_try.py", "not graded", False), ("b_\\x1b[31m.py", "not graded", False)], rows
    assert all(r["error"] == results["tests"][0]["output"] for r in rows)
    assert done.stderr.startswith("graded 0 of 2 with seed 2"), done.stderr


def test_several_files_names_are_escaped_in_every_report_and_cannot_stop_the_gradebook(tmp_path, console_script,
                                                                                     softmax_source):
    """Red team 15: with several files in a Gradescope submission, their rows kept the raw names: a name holding
    a newline drew a forged "1 of 1 submissions passed" line in the log, and a name of bytes that are not UTF-8
    crashed the CSV writer (a surrogate), so neither the CSV nor results.json was written."""
    folder = tmp_path / "came"
    folder.mkdir()
    for name in (b"ok.py", b"z\n1 of 1 submissions passed\nx.py", b"\xff\x1b[2K.py"):
        (folder / os.fsdecode(name)).write_text(softmax_source)       # \xff: a surrogate in the name
    out, gradebook = tmp_path / "results.json", tmp_path / "marks.csv"
    done = _grade(console_script, folder, "--exercise", "softmax", "--gradescope", out, "--csv", gradebook,
                  "--seed", "2")
    assert done.returncode == 0, done.stderr
    assert "\n1 of 1 submissions passed" not in done.stdout and "\x1b" not in done.stdout + done.stderr, done.stdout
    assert done.stdout.rstrip().endswith("0 of 3 submissions passed"), done.stdout
    rows = list(csv.DictReader(gradebook.open(encoding="utf-8")))
    assert len(rows) == 3 and all("\n" not in r["file"] and "\x1b" not in r["file"] for r in rows), rows
    results = json.loads(out.read_text())
    assert results["score"] == 0 and "\n" not in results["output"] and "\x1b" not in results["output"], results


def _on_a_terminal(command, columns="80"):
    """What ``command`` shows on a pseudo-terminal (stdout and stderr both, as on a teacher's screen), \r\n read as \n."""
    leader, follower = os.openpty()
    process = subprocess.Popen(command, stdout=follower, stderr=follower, env=dict(os.environ, COLUMNS=columns))
    os.close(follower)
    chunks = []
    with contextlib.suppress(OSError):          # EIO: every process holding the terminal has ended
        while chunk := os.read(leader, 65536):
            chunks.append(chunk)
    os.close(leader)
    process.wait(timeout=300)
    return b"".join(chunks).decode().replace("\r\n", "\n")


def test_a_long_message_or_name_cannot_wrap_into_a_row_of_its_own(tmp_path, console_script, softmax_source):
    """Red teams 36 and 37: escaping leaves spaces and letters alone, so a message padded to the terminal's width
    wrapped onto a new screen line that read "passed  25/25  class/mallory.py" under the real failed row, and so
    did the name of a link on stderr's "not followed: ... is a link" (3 of 3 runs each). On a terminal the commands
    now break every line that may hold a student's text themselves, each screen line after the first indented;
    where the output is no terminal a row stays one line, as in the CSV and JSON."""
    folder = tmp_path / "class"
    (folder / "bob").mkdir(parents=True)
    (folder / "ana.py").write_text(softmax_source)
    forged = "passed          25/25  class/mallory.py"
    for name, padding in (("mallory.py", " " * 78), ("mallet.py", "x" * 78), ("mal.py", "\uff38" * 39),
                          ("m" * 30 + " " * 40 + "passed  25 25  ana.py", " ")):
        (folder / name).write_text(f"raise ValueError('x' + {padding!r} + {forged!r} + ' ' * 41)\n")
    os.symlink("nowhere", folder / "bob" / ("x" * 35 + forged.replace("/", "\u2215") + " " * 40))
    command = [console_script, "grade", str(folder), "--exercise", "softmax", "--seed", "5", "--no-progress"]
    shown = _on_a_terminal(command)
    lines = shown.splitlines()
    assert forged in shown.replace("\n    ", "") and "is a link" in shown, shown
    starts = [line.split()[0] for line in lines if line and not line.startswith("    ")]
    assert starts == ["attention-edu", "graded"] + ["passed"] + ["failed"] * 4 + ["1"], shown
    assert max(sum(1 if c < "\x7f" else 2 for c in line) for line in lines) < 80, shown
    piped = subprocess.run(command, capture_output=True, text=True, timeout=300, env=dict(os.environ, COLUMNS="80"))
    assert len(piped.stdout.splitlines()) == 6 and forged in piped.stdout, piped.stdout        # no terminal
    shown = _on_a_terminal([console_script, "check", "softmax", str(folder / "mallory.py")], columns="60")
    assert shown.startswith("check softmax: failed.") and all(line.startswith("    ") for line in shown.splitlines()[1:]
                                                                 if "passed" in line), shown


@pytest.mark.parametrize("returned", ["Forged()", "np.ones(3).view(Forged)"], ids=["object", "subclass"])
def test_a_class_name_with_line_breaks_cannot_draw_a_verdict(tmp_path, console_script, returned):
    """Red team 47: an object (or an ndarray subclass) returned from a class named "...\\n\\ncheck softmax: passed.
    all probes passed (25 of 25)\\n" printed that line as one of its own in check's report and in Gradescope's
    output, for a function that fails every probe. What came back is now described on one line, escaped."""
    forged = "check softmax: passed. all probes passed (25 of 25)"
    (tmp_path / "mallory.py").write_text(
        f"import numpy as np\nForged = type('thing\\n\\n{forged}\\n\\n', ({'np.ndarray,' if 'view' in returned else ''}"
        f"), {{}})\ndef softmax(x):\n    return {returned}\n")
    check = subprocess.run([console_script, "check", "softmax", str(tmp_path / "mallory.py")], capture_output=True,
                           text=True, timeout=120)
    assert check.returncode == 1 and check.stdout.startswith("check softmax: failed. 0 of"), check.stdout
    assert not any(line.startswith(forged) for line in check.stdout.splitlines()), check.stdout
    assert "\\n\\n" + forged in check.stdout, check.stdout
    out = tmp_path / "results.json"
    assert _grade(console_script, tmp_path / "mallory.py", "--exercise", "softmax", "--gradescope", out).returncode == 0
    results = json.loads(out.read_text())
    assert results["score"] == 0 and not any(line.startswith(forged) for line in results["output"].splitlines())


def test_grade_with_a_stream_closed_writes_its_gradebook(tmp_path, console_script, softmax_source):
    """Red team 38: run with stderr closed (``2>&-``, as cron or a CI step may), grade crashed before grading
    (sys.stderr is None) and wrote no gradebook; with stdout closed it wrote the CSV, then crashed (exit 1). And
    what goes to stderr must never land in --json's stdout."""
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "ana.py").write_text(softmax_source)
    (folder / "bo.py").write_text(WRONG)
    grade = f"exec {console_script} grade {folder} --exercise softmax --seed 2 --no-progress"
    for closed, output in (("2>&-", "--csv marks.csv"), (">&-", "--csv marks.csv"), ("2>&-", "--json")):
        done = subprocess.run(["sh", "-c", f"{grade} {output} {closed}"], cwd=tmp_path, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, (closed, done.stdout, done.stderr)
        if output == "--json":
            assert [r["passed"] for r in json.loads(done.stdout)] == [True, False], done.stdout
        else:
            assert [r["passed"] for r in csv.DictReader((tmp_path / "marks.csv").open())] == ["True", "False"]
            (tmp_path / "marks.csv").unlink()


def test_gradescope_writes_results_at_once_for_many_files_or_none(tmp_path, console_script):
    """The teachers' guide's run_autograder, attacked: six files that each sleep at import ran one after another,
    each for its whole budget (six minutes under the default 60 s), so that Gradescope's time limit could end the
    run before any results.json; and a submission without a .py or .ipynb (a .txt, a folder named like a script)
    was a usage error: exit 2 and no results.json, an autograder failure instead of a sentence. Both now score 0
    at once with the sentence, and nothing of the files runs."""
    slow = tmp_path / "slow"
    slow.mkdir()
    for number in range(6):
        (slow / f"try{number}.py").write_text("import time\ntime.sleep(100)\ndef softmax(x):\n    return x\n")
    empty = tmp_path / "empty"
    (empty / "softmax.py").mkdir(parents=True)
    (empty / "softmax.txt").write_text("def softmax(x):\n    return x\n")
    for folder, sentence in ((slow, "6 files came in (try0.py, try1.py, try2.py, try3.py, try4.py, ...): "),
                             (empty, "no .py or .ipynb file came in: ")):
        out, start = tmp_path / f"{folder.name}.json", time.monotonic()
        sandbox = ["--require-sandbox"] if landlock_abi() else []          # the guide's command, where it can run
        done = _grade(console_script, folder, "--exercise", "softmax", "--seed", "3", "--per-student", "--budget",
                      "10", *sandbox, "--gradescope", out)
        assert done.returncode == 0 and time.monotonic() - start < 10, done.stdout + done.stderr
        results = json.loads(out.read_text())
        jsonschema.validate(results, GRADESCOPE_SCHEMA)
        assert (results["score"], results["max_score"]) == (0, 25), results
        assert results["output"] == sentence + "submit one .py or .ipynb that defines softmax", results


def test_gradescope_tests_fail_every_group_a_mistake_shows_in(tmp_path, console_script):
    """The tests' statuses agree with the score: a group passes only when every probe of it passed."""
    (tmp_path / "naive.py").write_text("import numpy as np\ndef softmax(x):\n    e = np.exp(x)\n"
                                       "    return e / e.sum(axis=-1, keepdims=True)\n")
    (tmp_path / "raises.py").write_text("def softmax(x):\n    raise ValueError('no')\n")
    (tmp_path / "imports.py").write_text("try:\n    import attention_edu\nexcept ImportError:\n    pass\n"
                                         "import numpy as np\ndef softmax(x):\n    e = np.exp(x - x.max(-1, keepdims=True))\n"
                                         "    return e / e.sum(-1, keepdims=True)\n")
    scores = {}
    for name in ("naive.py", "raises.py", "imports.py"):
        out = tmp_path / f"{name}.json"
        done = _grade(console_script, tmp_path / name, "--exercise", "softmax", "--gradescope", out, "--seed", "4")
        assert done.returncode == 0, done.stderr
        results = json.loads(out.read_text())
        jsonschema.validate(results, GRADESCOPE_SCHEMA)
        tests = {t["name"].split(":")[0]: t for t in results["tests"]}
        assert sum(t["score"] for t in tests.values()) == results["score"]
        scores[name] = (results["score"], {k: t["status"] for k, t in tests.items() if t["max_score"]})
    naive = scores["naive.py"][1]        # no max subtracted: only large logits (and a hidden copy of them) fail
    assert naive["stability"] == naive["hidden"] == "failed" and naive["small"] == naive["random"] == "passed"
    assert scores["raises.py"][0] == 0 and set(scores["raises.py"][1].values()) == {"failed"}
    assert scores["imports.py"][0] == 0 and set(scores["imports.py"][1].values()) == {"failed"}, "no credit for a refused import"


def test_ctrl_c_writes_the_rows_done_and_exits_130(tmp_path, console_script, softmax_source):
    folder = tmp_path / "class"
    folder.mkdir()
    for index in range(8):
        (folder / f"s{index}.py").write_text("import time\ntime.sleep(0.8)\n" + softmax_source)
    book = tmp_path / "grades.csv"
    process = subprocess.Popen([console_script, "grade", str(folder), "--exercise", "softmax", "--csv", str(book),
                                "--no-progress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(6.0)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    lines = [line for line in err.strip().splitlines() if ": warning: " not in line]   # no filesystem layer: a warning
    assert "interrupted" in err and len(lines) == 2, err     # the seed line, then one line
    with open(book, newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert 1 <= len(rows) < 8 and all(r["passed"] == "True" for r in rows), rows
    assert f"wrote {len(rows)} row" in out
    left = sorted({f"s{index}.py" for index in range(8)} - {Path(r["file"]).name for r in rows})
    assert f"graded {len(rows)} of 8, and the gradebook holds those rows only (not graded: " in lines[-1], err
    assert all(name in lines[-1] for name in left[:5]), (left, err)


def _grading(tmp_path, console_script, softmax_source, count: int, pause: float,
             command: tuple = ()) -> tuple[subprocess.Popen, Path]:
    """``grade`` (run by ``command``, if given) started on a class of ``count`` right submissions that each sleep
    ``pause`` s at import, its private directories in ``tmp_path / "tmp"``. A call gets 30 s: on a loaded machine one
    over the default 3 s would restart its worker, whose directory, gone, would read as a row done."""
    folder, private = tmp_path / "class", tmp_path / "tmp"
    folder.mkdir()
    private.mkdir()
    for index in range(count):
        (folder / f"s{index}.py").write_text(f"import time\ntime.sleep({pause})\n" + softmax_source)
    book = tmp_path / "grades.csv"
    return subprocess.Popen([*command, console_script, "grade", str(folder), "--exercise", "softmax", "--csv",
                             str(book), "--jobs", "2", "--timeout", "30", "--no-progress"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=dict(os.environ, TMPDIR=str(private))), book


def _a_row_done(private: Path, timeout: float = 60, settle: float = 1.0) -> None:
    """Wait until a submission's private directory has come and gone, and ``settle`` s more: its row is done (on a
    loaded machine the first one can take seconds)."""
    seen, deadline = set(), time.monotonic() + timeout
    while time.monotonic() < deadline:
        now = {p.name for p in private.iterdir()}
        if seen - now:
            time.sleep(settle)       # its row is built after the sandbox is gone, then collected
            return
        seen |= now
        time.sleep(0.02)
    raise AssertionError("no submission was graded in time")


@pytest.mark.parametrize("attempt", range(3))
def test_two_signals_at_once_still_write_the_rows_done_and_stop_the_grading(tmp_path, console_script, softmax_source,
                                                                           attempt):
    """Red team 44: SIGHUP and SIGTERM together (a closed terminal and a kill): the second could land in the first's
    clean-up, before the handlers were off (4 runs of 8), and grade then graded the whole class on and exited 130
    with no gradebook."""
    process, book = _grading(tmp_path, console_script, softmax_source, 10, 0.6)
    _a_row_done(tmp_path / "tmp", settle=2.5)       # 1 s once saw no row collected, in a fresh clone's CI
    os.kill(process.pid, signal.SIGHUP)
    os.kill(process.pid, signal.SIGTERM)
    sent = time.monotonic()
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130 and time.monotonic() - sent < 5, err.decode()
    with open(book, newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert 1 <= len(rows) < 10 and all(r["passed"] == "True" for r in rows), (rows, err.decode())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="F_SETPIPE_SZ is Linux's")
def test_a_signal_ends_grade_while_a_stalled_reader_holds_its_output(tmp_path, console_script, softmax_source):
    """Red team 45: with its rows going into a pipe nobody read (a pager, a stalled ssh), grade took no SIGTERM,
    SIGINT or SIGHUP: printing ran while a signal only noted a stop. Printing now comes after the gradebook is
    written, under the handlers that end a command at once."""
    folder = tmp_path / "class"
    folder.mkdir()
    for index in range(12):
        (folder / f"s{index}.py").write_text(softmax_source)
    read, write = os.pipe()
    fcntl.fcntl(write, 1031, 4096)                      # F_SETPIPE_SZ: 4 KiB, and the rows are some 12 KB of JSON
    process = subprocess.Popen([console_script, "grade", str(folder), "--exercise", "softmax", "--json", "--jobs", "2",
                                "--no-progress"], stdout=write, stderr=subprocess.PIPE)
    os.close(write)
    try:
        seen = b""
        while not seen.endswith(b"sandbox layers: ") and (byte := os.read(process.stderr.fileno(), 1)):
            seen += byte                                # graded: the JSON comes next, and fills the pipe
        time.sleep(0.5)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 130, seen.decode()
    finally:
        process.kill()
        os.close(read)


def test_under_nohup_a_closed_terminal_does_not_stop_grade(tmp_path, console_script, softmax_source):
    """Red team 45: under nohup (SIGHUP ignored), the command line put its own SIGHUP handler in place, so a terminal
    closed while grade ran stopped it with exit 130 and a partial gradebook."""
    nohup = ("import os, signal, sys\nsignal.signal(signal.SIGHUP, signal.SIG_IGN)\n"
             "os.execv(sys.argv[1], sys.argv[1:])\n")
    process, book = _grading(tmp_path, console_script, softmax_source, 4, 0.6, (sys.executable, "-c", nohup))
    _a_row_done(tmp_path / "tmp")
    process.send_signal(signal.SIGHUP)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err.decode()
    with open(book, newline="") as handle:
        assert len(list(csv.DictReader(handle))) == 4


def test_the_course_seed_is_not_printed_where_each_student_has_one(tmp_path, console_script, softmax_source):
    """Red team 44: with --per-student, the summary line printed the course's secret --seed into Gradescope's log."""
    (tmp_path / "alice.py").write_text(softmax_source)
    done = _grade(console_script, tmp_path / "alice.py", "--exercise", "softmax", "--seed", 918273645546372819,
                  "--per-student", "--json")
    assert done.returncode == 0, done.stderr
    assert "918273645546372819" not in done.stderr and "with the seed given (per student)" in done.stderr
    assert json.loads(done.stdout)[0]["seed"] != 918273645546372819         # the row's own, drawn from it
    shown = _grade(console_script, tmp_path / "alice.py", "--exercise", "softmax", "--seed", 5, "--json")
    assert "with seed 5;" in shown.stderr, shown.stderr       # one seed for the class: repeating the run needs it


def test_a_grading_stopped_once_does_not_stop_the_next_in_the_same_python(tmp_path, capsys, softmax_source):
    """Red team 47: a Ctrl-C during grade stopped every sandbox and refused new ones for good, so in a long-lived
    Python (a notebook calling ``cli.main``) every later grade's rows read "was not run: grading was interrupted"."""
    import argparse
    import threading
    from attention_edu import cli
    from attention_edu.checkers.judge import command
    (tmp_path / "ana.py").write_text(softmax_source)
    stop = threading.Event()
    stop.set()                                               # a Ctrl-C as the grading begins
    args = argparse.Namespace(exercise="softmax", function=None, timeout=3.0, memory=512, budget=60.0, jobs=1,
                              per_student=False, no_progress=True)
    rows, interrupted = command._grade_all({str(tmp_path / "ana.py"): None}, args, 1, stop)
    assert interrupted and not rows
    capsys.readouterr()
    assert cli.main(["grade", str(tmp_path / "ana.py"), "--exercise", "softmax", "--json", "--no-progress"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["passed"], row


def test_stopping_one_grading_leaves_another_in_the_same_python_alone(tmp_path, softmax_source):
    """Red team 48: a Ctrl-C on one grading closed every live sandbox in the process, so another grading running in a
    thread of the same Python (a notebook's) wrote rows "the grader failed on this submission" and "was not run" for
    right code. A stop now ends only its own grading's sandboxes."""
    import argparse
    import threading
    from attention_edu.checkers.judge import command
    files = {}
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        for k in range(3):
            path = tmp_path / folder / f"s{k}.py"
            path.write_text("import time\ntime.sleep(1)\n" + softmax_source)       # loading takes a second
            files.setdefault(folder, {})[str(path)] = None
    args = argparse.Namespace(exercise="softmax", function=None, timeout=3.0, memory=512, budget=60.0, jobs=1,
                              per_student=False, no_progress=True)
    stop_a, stop_b, done = threading.Event(), threading.Event(), {}
    other = threading.Thread(target=lambda: done.update(a=command._grade_all(files["a"], args, 1, stop_a)))
    other.start()
    threading.Timer(1.5, stop_b.set).start()              # a's first or second submission is loading then
    rows_b, interrupted_b = command._grade_all(files["b"], args, 1, stop_b)
    other.join(120)
    rows_a, interrupted_a = done["a"]
    assert interrupted_b and len(rows_b) < 3 and not interrupted_a
    assert [(row.passed, row.error) for row in rows_a.values()] == [(True, None)] * 3, rows_a


@pytest.mark.parametrize("later, first", [("np.zeros_like(x)", ""), ("right(x)", "return np.zeros_like(x)")])
def test_a_function_right_once_and_wrong_after_fails_determinism(tmp_path, later, first):
    """Red team 50: the determinism probe compared three more calls on a case with each other only, so a softmax right
    on the first call for each input and zeros on every later call (state kept in the student's interpreter) passed
    25 of 25. The calls are now compared with the case's own first call too. Red team 51: and where that first call
    was wrong (zeros the first time, right after), as long as it had the right type and shape."""
    (tmp_path / "once.py").write_text(textwrap.dedent(f"""
        import numpy as np
        seen = set()
        def softmax(x):
            key = (x.shape, x.dtype.str, x.tobytes())
            if key in seen:
                return {later}
            seen.add(key)
            {first}
            return right(x)
        def right(x):
            m = np.max(x, axis=-1, keepdims=True)
            e = np.exp(x - np.where(np.isfinite(m), m, 0))
            s = e.sum(axis=-1, keepdims=True)
            return e / np.where(s > 0, s, 1)
        """))
    row = grade_one("softmax", tmp_path / "once.py", seed=5)
    assert not row.passed and row.probes_failed.get("determinism") == 1, row.message
    if not first:
        assert row.probes_passed == row.probes_total - 1 and row.hint_id == "harness.nondeterministic", row.message


def test_a_signal_after_the_last_row_still_writes_every_row(tmp_path, console_script, softmax_source):
    """Red team 44: a SIGTERM sent as grade printed its summary, every row done, ended it with exit 130 and no
    gradebook: the KeyboardInterrupt it raised landed before the write."""
    process, book = _grading(tmp_path, console_script, softmax_source, 6, 0.0)
    seen = b""
    while not seen.endswith(b"sandbox layers: ") and (byte := os.read(process.stderr.fileno(), 1)):
        seen += byte
    process.send_signal(signal.SIGTERM)                  # the moment every row is done
    out, err = process.communicate(timeout=60)
    assert process.returncode in (130, -signal.SIGTERM), err.decode()     # -15: it came as the process ended
    with open(book, newline="") as handle:
        assert len(list(csv.DictReader(handle))) == 6, (seen + err).decode()


def test_a_notebook_may_call_earlier_exercises_through_ae_but_not_the_answer(tmp_path):
    from pathlib import Path

    shipped = Path(__file__).resolve().parents[3] / "notebooks" / "solutions" / "02_scaled_dot_product_attention.ipynb"
    assert grade_one("scaled_dot_product_attention", shipped, seed=4).passed         # it uses ae.softmax
    _notebook(tmp_path / "borrow.ipynb", [
        "import numpy as np\nimport attention_edu as ae",
        "def scaled_dot_product_attention(Q, K, V, mask=None):\n"
        "    return ae.scaled_dot_product_attention(Q, K, V, mask)"])
    row = grade_one("scaled_dot_product_attention", tmp_path / "borrow.ipynb", seed=4)
    assert not row.passed and "ae.scaled_dot_product_attention is not available here" in row.message, row.message


@pytest.mark.parametrize("imports, call", [("import attention_edu as ae", "ae.softmax(x)"),
                                           ("import attention_edu", "attention_edu.softmax(x)"),
                                           ("from attention_edu import softmax as sm", "sm(x)")])
def test_a_notebook_borrowing_the_answer_is_told_why(tmp_path, softmax_source, imports, call):
    """In the first exercise too, the package's answer fails with the sentence (not "a name it never
    defines"), however imported; a name of the package the notebook holds but never calls costs nothing."""
    _notebook(tmp_path / "borrow.ipynb", [f"import numpy as np\n{imports}\n\ndef softmax(x):\n    return {call}"])
    row = grade_one("softmax", tmp_path / "borrow.ipynb", seed=4)
    assert not row.passed and "ae.softmax is not available here: this exercise asks for your own NumPy code" in (
        row.message), row.message
    _notebook(tmp_path / "right.ipynb", ["from attention_edu import checkers, softmax as sm\n" + softmax_source,
                                         "checkers.check_softmax(softmax)"])
    assert grade_one("softmax", tmp_path / "right.ipynb", seed=4).passed


def test_require_sandbox_refuses_without_the_filesystem_layer(tmp_path, monkeypatch, capsys, softmax_source):
    from attention_edu import cli
    from attention_edu.checkers.judge import command

    (tmp_path / "ana.py").write_text(softmax_source)
    monkeypatch.setattr(command, "filesystem_layer", lambda: "the kernel offers no Landlock")
    assert cli.main(["grade", str(tmp_path), "--exercise", "softmax", "--require-sandbox"]) == 2
    assert "--require-sandbox: the filesystem sandbox is not available here" in capsys.readouterr().err
    # without --require-sandbox it grades, and says first that the filesystem layer is missing
    assert cli.main(["grade", str(tmp_path), "--exercise", "softmax", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("attention-edu grade: warning: no filesystem sandbox here (the kernel offers no Landlock)")


def test_a_worker_started_again_without_the_filesystem_layer_is_a_row_graded_without_it(
        tmp_path, monkeypatch, capsys, softmax_source):
    """The row's layers are those of the weakest start: a worker started again after a crash that did not get
    Landlock (as a kernel that refuses the ruleset would answer) takes "landlock" out of the row, and
    --require-sandbox fails it. Before, the row kept the first start's layers, and its marks stood."""
    from attention_edu import cli
    from attention_edu.checkers.judge import harness

    crashes = "import os\n" + softmax_source + "\n_right = softmax\n\n\ndef softmax(x):\n" \
        "    if x.ndim == 3:\n        os._exit(3)\n    return _right(x)\n"
    (tmp_path / "crashes.py").write_text(crashes)
    starts, ask = [], harness.Child.ask

    def second_start_without_landlock(self, message, seconds):
        reply = ask(self, message, seconds)
        if isinstance(message, dict) and "cells" in message and isinstance(reply, dict):
            starts.append(reply.get("layers"))
            if len(starts) > 1:
                reply = {**reply, "layers": []}
        return reply

    monkeypatch.setattr(harness.Child, "ask", second_start_without_landlock)
    assert cli.main(["grade", str(tmp_path / "crashes.py"), "--exercise", "softmax", "--json", "--seed", "2",
                     "--require-sandbox", "--no-progress"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert len(starts) > 1 and starts[0] == ["landlock"], starts
    assert "landlock" not in row["sandbox"] and row["error"] == "graded without the filesystem sandbox", row


def test_the_whole_submission_has_a_budget(tmp_path, softmax_source):
    slow = softmax_source.replace("def softmax(x):\n", "def softmax(x):\n    __import__('time').sleep(0.7)\n")
    (tmp_path / "slow.py").write_text(slow)
    start = time.perf_counter()
    row = grade_one("softmax", tmp_path / "slow.py", timeout=1.0, seed=1, budget=3.0)
    assert not row.passed and "used up the 3 s the whole submission may take" in row.message, row.message
    assert time.perf_counter() - start < 8.0                  # 25 probes at 0.7 s would take 17 s


def test_a_failure_of_the_grader_itself_costs_one_row_not_the_batch(tmp_path, monkeypatch, capsys, softmax_source):
    """Should grade_one ever raise (a bug of ours, provoked by a submission), that row says so and
    the other rows and the gradebook are still written; check prints it as its verdict."""
    from attention_edu import cli
    from attention_edu.checkers import runner

    run_checker = runner.run_checker

    def run_or_fail(spec, fn, *args, invoke=None, **kwargs):    # a bug of the grader's, on boom.py only
        if invoke.config["file"] == "boom.py":
            raise TypeError("unhashable type: 'list'")
        return run_checker(spec, fn, *args, invoke=invoke, **kwargs)

    (tmp_path / "ana.py").write_text(softmax_source)
    (tmp_path / "boom.py").write_text(softmax_source)
    monkeypatch.setattr(runner, "run_checker", run_or_fail)
    assert cli.main(["grade", str(tmp_path), "--exercise", "softmax", "--json", "--seed", "5", "--no-progress"]) == 0
    rows = {row["file"].rsplit("/", 1)[-1]: row for row in json.loads(capsys.readouterr().out)}
    assert rows["ana.py"]["passed"] and rows["ana.py"]["error"] is None, rows["ana.py"]
    assert rows["boom.py"] == {**rows["boom.py"], "passed": False, "status": "failed", "seed": 5}
    assert rows["boom.py"]["error"] == ("the grader failed on this submission (TypeError: unhashable type: 'list'); "
                                        "please report it")
    assert cli.main(["check", "softmax", str(tmp_path / "boom.py")]) == 1      # check: one line, no traceback
    assert capsys.readouterr().out == f"check softmax: failed. {rows['boom.py']['error']}\n"


def test_an_import_refused_in_a_call_is_kept_when_a_later_crash_restarts_the_worker(tmp_path):
    """A refused import inside the function (caught by the student) fails the row even after a crash
    in a later call made the judge start the submission afresh."""
    (tmp_path / "sly.py").write_text(
        "import os\nimport numpy as np\n\ndef softmax(x):\n"
        "    if x.shape == (2, 3):                    # the first case's input only\n"
        "        try:\n            import scipy.special\n        except ImportError:\n            pass\n"
        "    if x.shape == (3, 6):                    # the shift-invariance property's input\n"
        "        os._exit(3)\n"
        "    e = np.exp(x - x.max(-1, keepdims=True))\n    return e / e.sum(-1, keepdims=True)\n")
    row = grade_one("softmax", tmp_path / "sly.py", seed=2)
    assert not row.passed and row.error is not None and "`import scipy` is not allowed here" in row.error, row


def test_a_thread_pool_from_concurrent_futures_passes_and_a_process_pool_is_refused(tmp_path):
    """Red team 76's ff20: a right multi-head attention running its heads in a ThreadPoolExecutor scored 0 of 32, told
    that `import concurrent` is not allowed, though threads start no process and reach no network. A process pool
    imports multiprocessing from within the standard library, which the import rule lets by (as it does compileall's):
    the seccomp layer refuses to start its processes."""
    body = textwrap.dedent("""\
        import numpy as np
        from concurrent.futures import {pool}

        def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
            d_k, d_v = W_Q.shape[1] // num_heads, W_V.shape[1] // num_heads
            Q, K, V = X_q @ W_Q, X_kv @ W_K, X_kv @ W_V

            def head(h):
                q, k = Q[..., h * d_k:(h + 1) * d_k], K[..., h * d_k:(h + 1) * d_k]
                s = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_k)
                s = s if mask is None else np.where(mask, s, -np.inf)      # the same mask for every head
                top = np.max(s, axis=-1, keepdims=True)
                e = np.exp(s - np.where(np.isfinite(top), top, 0.0))
                total = e.sum(-1, keepdims=True)
                w = e / np.where(total > 0, total, 1.0)
                return w @ V[..., h * d_v:(h + 1) * d_v], w

            with {pool}(max_workers=2) as pool:
                parts = list(pool.map(head, range(num_heads)))
            output = np.concatenate([o for o, _ in parts], axis=-1) @ W_O
            return output, np.stack([w for _, w in parts], axis=-3)
        """)
    (tmp_path / "threads.py").write_text(body.format(pool="ThreadPoolExecutor"))
    (tmp_path / "processes.py").write_text(body.format(pool="ProcessPoolExecutor"))
    row = grade_one("multi_head_attention", tmp_path / "threads.py", seed=3)
    assert row.passed and row.error is None, row
    row = grade_one("multi_head_attention", tmp_path / "processes.py", seed=3)
    if "seccomp" in row.sandbox:
        assert not row.passed and "PermissionError" in row.message and row.probes_passed == 0, row


def test_a_named_tuple_of_the_right_arrays_passes_grade(tmp_path):
    """False-fail hunt 3: a NamedTuple (output, weights) crossed as "an Attention object" and scored 0 of 30."""
    (tmp_path / "named.py").write_text(textwrap.dedent("""\
        from typing import NamedTuple
        import numpy as np

        class Attention(NamedTuple):
            output: np.ndarray
            weights: np.ndarray

        def scaled_dot_product_attention(Q, K, V, mask=None):
            s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
            s = s if mask is None else np.where(mask, s, -np.inf)
            top = s.max(-1, keepdims=True)
            e = np.exp(s - np.where(np.isfinite(top), top, 0.0))
            total = e.sum(-1, keepdims=True)
            w = e / np.where(total > 0, total, 1.0)
            return Attention(w @ V, w)
        """))
    row = grade_one("scaled_dot_product_attention", tmp_path / "named.py", seed=3)
    assert row.passed and row.probes_passed == row.probes_total, row


def test_printing_past_the_file_size_limit_is_cut_not_an_error(tmp_path, softmax_source):
    """False-fail hunt 4: a progress line printed a million times (31 MB with its \\r, one line in Jupyter) went past
    the 16 MiB the printed-output file may hold, and the student's own print() raised OSError (File too large): 0 of
    25. In a notebook's check_softmax(fn), 1 MiB printed by fn did the same. What goes past is dropped now."""
    (tmp_path / "progress.py").write_text(
        "for i in range(1_000_000):\n    print(f'\\rbuilding table: {i + 1}/1000000', end='')\nprint()\n"
        + softmax_source)
    row = grade_one("softmax", tmp_path / "progress.py", seed=1)
    assert row.passed and row.error is None, row
    namespace = {}
    exec(softmax_source, namespace)

    def chatty(x):
        print("x" * (3 << 20))
        return namespace["softmax"](x)
    assert check_softmax(chatty).passed


def test_one_lost_call_costs_its_probes_not_the_rest(tmp_path, softmax_source):
    """A function that hangs (or exits) on 1-D input alone loses the public and the hidden 1-D probes,
    not every probe after the first; one that hangs on everything is stopped after two calls."""
    body = softmax_source.replace("def softmax(x):\n", "def softmax(x):\n    if x.ndim == 1:\n        {}\n")
    (tmp_path / "hang.py").write_text(body.format("while True: pass"))
    (tmp_path / "exits.py").write_text(body.format("__import__('os')._exit(3)"))
    (tmp_path / "always.py").write_text("def softmax(x):\n    while True:\n        pass\n")
    for name, hint in (("hang.py", "harness.timeout"), ("exits.py", "harness.exit")):
        row = grade_one("softmax", tmp_path / name, timeout=1.0, seed=6)
        assert (row.probes_passed, row.probes_failed) == (row.probes_total - 2, {"batched": 1, "hidden": 1}), row
        assert row.hint_id == hint and "1-D x (4,)" in row.message, row
    start = time.perf_counter()
    row = grade_one("softmax", tmp_path / "always.py", timeout=1.0, seed=6)
    assert row.probes_passed == 0 and row.hint_id == "harness.timeout", row
    assert time.perf_counter() - start < 8.0                  # two calls of 1 s, not 25


def test_loading_may_take_the_budget_and_no_more(tmp_path, softmax_source):
    """A notebook's slow cells (11 s, over the 10 s loading once had) pass within the budget; one that
    outlasts the budget fails with the budget named, and no sooner."""
    _notebook(tmp_path / "slow.ipynb", ["import time\ntime.sleep(11)", softmax_source])
    row = grade_one("softmax", tmp_path / "slow.ipynb", seed=1, budget=30.0)
    assert row.passed, row.message
    start = time.perf_counter()
    row = grade_one("softmax", tmp_path / "slow.ipynb", seed=1, budget=2.0)
    assert "did not finish within the 2 s the submission may take" in row.error, row
    assert 2.0 <= time.perf_counter() - start < 12.0


def test_a_row_with_an_error_scores_zero_out_of_every_probe(tmp_path, console_script, softmax_source):
    """A submission that never reached a probe (a refused import, an error while loading) still has
    a score in the gradebook: 0 of the run's probes; a row not graded (no function) has none."""
    (tmp_path / "borrows.py").write_text("import attention_edu\n" + softmax_source)
    (tmp_path / "raises.py").write_text("raise ValueError('oops')\n" + softmax_source)
    (tmp_path / "other.py").write_text("def soft_max(x):\n    return x\n")
    (tmp_path / "right.py").write_text(softmax_source)
    done = _grade(console_script, tmp_path, "--exercise", "softmax", "--json", "--seed", "3")
    rows = {row["file"].rsplit("/", 1)[-1]: row for row in json.loads(done.stdout)}
    total = rows["right.py"]["probes_total"]
    for name in ("borrows.py", "raises.py"):
        assert (rows[name]["status"], rows[name]["probes_passed"], rows[name]["probes_total"]) == (
            "failed", 0, total), rows[name]
    assert (rows["other.py"]["status"], rows["other.py"]["probes_total"]) == ("not graded", None), rows["other.py"]


def test_calling_ae_itself_in_a_notebook_fails_as_in_class(tmp_path, softmax_source):
    """``ae(x)`` calls a module: in class a TypeError. The grader's ``ae`` said "ae.None is not available here"."""
    _notebook(tmp_path / "call.ipynb", ["import numpy as np\nimport attention_edu as ae\n" + softmax_source
                                        + "\n\ndef scaled_dot_product_attention(Q, K, V, mask=None):\n    return ae(Q)"])
    row = grade_one("scaled_dot_product_attention", tmp_path / "call.ipynb", seed=4)
    assert not row.passed and "TypeError: 'module' object is not callable" in row.message, row.message
    assert "None" not in row.message, row.message


def test_a_plain_install_holds_every_package_the_exercise_notebooks_import():
    """Audit of the docs (stop 39): a plain install graded no notebook that imports matplotlib, as exercise notebook
    05 does (its first cell failed, and every probe with it), while the guide promises that a plain install grades.
    Every package an exercise notebook imports is a dependency of the package itself, not of an extra."""
    import ast
    import re
    tomllib = pytest.importorskip("tomllib")
    root = Path(__file__).resolve().parents[3]
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    core = {re.split(r"[<>=;\[ ]", d, maxsplit=1)[0].lower().replace("-", "_") for d in project["dependencies"]}
    imported = set()
    for path in (root / "notebooks" / "exercises").glob("*.ipynb"):
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] == "code":
                source = "".join(cell["source"])
                tree = ast.parse("\n".join(line for line in source.splitlines() if line.lstrip()[:1] not in ("%", "!")))
                imported |= {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                             for alias in node.names}
                imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                             if isinstance(node, ast.ImportFrom) and node.module and not node.level}
    third_party = imported - set(sys.stdlib_module_names) - {"attention_edu"}
    assert "matplotlib" in third_party and third_party <= core, (third_party, core)
