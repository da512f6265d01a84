"""Attacks of the fifth red-team round, each run end to end through ``grade`` or ``check``: what a
student's archive can plant beside the gradebook, and notebook cells the grader must run as class did.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import stat
import subprocess
import textwrap
from pathlib import Path

RIGHT = """
import numpy as np

def softmax(x):
    top = np.max(x, axis=-1, keepdims=True)
    e = np.exp(x - np.where(np.isfinite(top), top, 0.0))
    total = np.sum(e, axis=-1, keepdims=True)
    return e / np.where(total == 0, 1.0, total)
"""
WRONG = "import numpy as np\n\ndef softmax(x):\n    return np.exp(x) / np.sum(np.exp(x))\n"


def _sha1(path: Path) -> str:
    return hashlib.sha1(path.read_bytes()).hexdigest()


def test_a_link_planted_at_the_gradebooks_temporary_name_is_not_written_through(tmp_path, console_script):
    # The gradebook was written to ".grades.partial-<pid>.csv" beside it, opened for writing through
    # whatever stood there: a student's archive that planted a symbolic link under that name (a PID is
    # easy to guess in a grading container) had the grader, as root, overwrite the file the link named
    # -- a classmate's submission here, any file of the machine in general -- and grades.csv became a link.
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "right.py").write_text(RIGHT)
    (folder / "wrong.py").write_text(WRONG)
    victim = folder / "victim.py"
    victim.write_text(RIGHT)
    before = _sha1(victim)
    script = f'ln -s victim.py "{folder}/.grades.partial-$$.csv"; exec "$0" "$@"'   # exec keeps the PID
    done = subprocess.run(["sh", "-c", script, console_script, "grade", str(folder), "--exercise", "softmax",
                           "--per-student", "--jobs", "2", "--csv", str(folder / "grades.csv"), "--no-progress"],
                          capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr.decode()
    assert _sha1(victim) == before
    gradebook = folder / "grades.csv"
    assert not gradebook.is_symlink()
    rows = {Path(r["file"]).name: r for r in csv.DictReader(io.StringIO(gradebook.read_text()))}
    assert rows["right.py"]["passed"] == rows["victim.py"]["passed"] == "True", rows
    assert rows["wrong.py"]["passed"] == "False", rows


def _notebook(path: Path, *sources: str) -> None:
    cells = [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
              "source": textwrap.dedent(source)} for source in sources]
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))


def test_a_notebook_is_graded_on_the_function_it_had_in_class(tmp_path, console_script):
    # The grader ran the body of every %%cell magic as Python and dropped a cell of expressions whole:
    # a notebook whose softmax in class was wrong -- its right one only in a %%script false cell, or
    # replaced by (softmax := ...) or %time softmax = ..., or after a %%magic below a cell's first line,
    # where IPython stops the cell with a UsageError -- passed; an honest one failed when a later
    # %%writefile cell held a draft of softmax, or when the cell defining it assigned a magic's result
    # (t = %timeit -o ..., files = !ls) or asked for help (np.exp?): a SyntaxError, so no softmax at all).
    folder = tmp_path / "class"
    folder.mkdir()
    wrong_then = {"skipped": (WRONG, "%%script false --no-raise-error\n" + RIGHT),
                  "walrus": (RIGHT, "(softmax := lambda x: x / x.sum())"),
                  "time": (RIGHT, "%time softmax = lambda x: x / x.sum()"),
                  "below": (WRONG, "# the right one, kept for later\n%%script false\n" + RIGHT)}
    for name, cells in wrong_then.items():
        _notebook(folder / f"{name}.ipynb", *cells)
    _notebook(folder / "draft.ipynb", RIGHT, "%%writefile draft.py\ndef softmax(x):\n    return x\n",
              "%%time\nimport numpy as np\n")
    _notebook(folder / "assigned.ipynb", RIGHT + "t = %timeit -o softmax(np.ones((2, 3)))\nfiles = !ls\nnp.exp?\n")
    (folder / "right.py").write_text(RIGHT)
    (folder / "wrong.py").write_text(WRONG)
    done = subprocess.run([console_script, "grade", str(folder), "--exercise", "softmax", "--per-student",
                           "--jobs", "2", "--json", "--no-progress"], capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr.decode()
    passed = {Path(row["file"]).name: row["passed"] for row in json.loads(done.stdout)}
    assert passed == {"skipped.ipynb": False, "walrus.ipynb": False, "time.ipynb": False, "below.ipynb": False,
                      "draft.ipynb": True, "assigned.ipynb": True, "right.py": True, "wrong.py": False}, passed
    check = subprocess.run([console_script, "check", "softmax", str(folder / "skipped.ipynb")],
                           capture_output=True, timeout=120)
    assert check.returncode == 1 and b"failed" in check.stdout, check.stdout.decode()


def test_a_gradebook_is_never_written_over_a_submission(tmp_path, console_script):
    # grade --exercise softmax --csv submissions/*.py: the shell makes the first submission the gradebook,
    # and the grader wrote the CSV over that student's file (the others were graded without it).
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "a.py").write_text(RIGHT)
    (folder / "b.ipynb").write_text("{}")
    (folder / "c.py").write_text(WRONG)
    before = {path.name: _sha1(path) for path in folder.iterdir()}
    for flag, target in (("--csv", "a.py"), ("--gradescope", "b.ipynb")):
        done = subprocess.run([console_script, "grade", "--exercise", "softmax", flag, str(folder / target),
                               str(folder / "c.py")], capture_output=True, timeout=120)
        assert done.returncode == 2 and b"never a .py or .ipynb" in done.stderr, done.stderr.decode()
    assert {path.name: _sha1(path) for path in folder.iterdir()} == before


def test_a_macos_zips_resource_copies_are_not_submissions(tmp_path, console_script):
    """Finder's zip holds __MACOSX/._right.py beside right.py (binary resource data under the same name):
    graded as a second file, it made a Gradescope submission "2 files came in" and scored 0 of 25. So did a copy in
    a hidden folder of a submitted repository (JupyterLab's .virtual_documents, .git, a .venv: false-fail hunt 4)."""
    folder = tmp_path / "submission"
    (folder / "__MACOSX").mkdir(parents=True)
    (folder / "right.py").write_text(RIGHT)
    apple_double = b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        \x00\x02\x00\x00\x00\x09\x00\x00\x00\x32"
    for junk in (folder / "__MACOSX" / "._right.py", folder / "._right.py"):
        junk.write_bytes(apple_double)
    for hidden in (".virtual_documents", ".git", ".venv/lib/site-packages/six"):
        (folder / hidden).mkdir(parents=True)
        (folder / hidden / "right.py").write_text(RIGHT)
    out = tmp_path / "results.json"
    done = subprocess.run([console_script, "grade", str(folder), "--exercise", "softmax", "--gradescope", str(out),
                           "--seed", "2", "--no-progress"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    results = json.loads(out.read_text())
    assert results["score"] == results["max_score"] == 25, results
    assert "._right.py" not in done.stdout + done.stderr, done.stdout


def test_a_submission_whose_suffix_is_in_capitals_is_graded(tmp_path, console_script):
    """Windows keeps ALICE.PY as it was typed: a folder's walk skipped it (no row at all, the student
    missing from the gradebook) and check refused it as "not a Python file or notebook"."""
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "ALICE.PY").write_text(RIGHT)
    cell = {"cell_type": "code", "metadata": {}, "source": RIGHT, "outputs": [], "execution_count": None}
    notebook = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (folder / "Bob.IPYNB").write_text(json.dumps(notebook))
    done = subprocess.run([console_script, "grade", str(folder), "--exercise", "softmax", "--json", "--seed", "2",
                           "--no-progress"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = {Path(row["file"]).name: row for row in json.loads(done.stdout)}
    assert sorted(rows) == ["ALICE.PY", "Bob.IPYNB"] and all(row["passed"] for row in rows.values()), rows


def test_a_gradebook_never_replaces_what_is_not_a_regular_file(tmp_path, console_script):
    """The gradebook is written by renaming a finished file over its path, so a --csv or --gradescope that named
    a FIFO (or, for a grader run as root, a device: `--csv /dev/null` as root made /dev/null a regular file for the
    whole machine) was replaced by a regular file after grading. Such a path is now a usage error, before any
    submission runs; a link to a FIFO too. (A FIFO stands in for the device here.)"""
    (tmp_path / "a.py").write_text(RIGHT)
    os.mkfifo(tmp_path / "pipe.csv")
    (tmp_path / "link.json").symlink_to(tmp_path / "pipe.csv")
    for flag, target in (("--csv", "pipe.csv"), ("--gradescope", "link.json")):
        done = subprocess.run([console_script, "grade", str(tmp_path / "a.py"), "--exercise", "softmax", "--no-progress",
                               flag, str(tmp_path / target)], capture_output=True, timeout=120)
        assert done.returncode == 2 and done.stdout == b"", done.stdout + done.stderr
        assert b"is not a regular file (a device such as /dev/null, or a FIFO)" in done.stderr, done.stderr
    assert stat.S_ISFIFO(os.stat(tmp_path / "pipe.csv").st_mode) and (tmp_path / "link.json").is_symlink()
