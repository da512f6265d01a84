"""``attention-edu grade``: a folder of right, wrong, hostile and stub submissions, every row right."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import textwrap

import pytest

SUBMISSIONS = {
    "right.py": "{right}",
    "wrong_axis.py": "import numpy as np\n\ndef softmax(x):\n    e = np.exp(x)\n    return e / e.sum(axis=0, keepdims=True)\n",
    "stub.py": "def softmax(x):\n    raise NotImplementedError\n",
    "exits.py": "import os\n\ndef softmax(x):\n    os._exit(0)\n",
    "exits_on_import.py": "import os\nos._exit(1)\n{right}",
    "loops.py": "def softmax(x):\n    while True:\n        pass\n",
    "segfault.py": "import faulthandler\n\ndef softmax(x):\n    faulthandler._read_null()\n",
    "syntax_error.py": "def softmax(x)\n    return x\n",
    "other_name.py": "def soft_max(x):\n    return x\n",
}

# file -> (passed, attempted, status, hint_id, probe, error contains)
EXPECTED = {
    "right.py": (True, True, "passed", None, None, None),
    "wrong_axis.py": (False, True, "failed", "softmax.wrong-axis", "small", None),
    "stub.py": (False, False, "not attempted", None, None, None),
    "exits.py": (False, True, "failed", "harness.exit", "runs", None),
    "exits_on_import.py": (False, True, "failed", None, None, "os._exit(1)"),
    "loops.py": (False, True, "failed", "harness.timeout", "runs", None),
    "segfault.py": (False, True, "failed", "harness.crash", "runs", None),
    "syntax_error.py": (False, True, "failed", None, None, "SyntaxError"),
    "other_name.py": (False, False, "not graded", None, None, "defines no function 'softmax'"),
    "notebook.ipynb": (True, True, "passed", None, None, None),
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory, softmax_source):
    root = tmp_path_factory.mktemp("submissions")
    for name, source in SUBMISSIONS.items():
        (root / name).write_text(textwrap.dedent(source).replace("{right}", softmax_source))
    cells = [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": softmax_source},
             {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
              "source": "from attention_edu.checkers import check_softmax\ncheck_softmax(softmax)"},
             {"cell_type": "code", "metadata": {"tags": ["demo"]}, "execution_count": None, "outputs": [],
              "source": "import matplotlib.pyplot as plt\nTINY = np.finfo(np.float64).tiny\nplt.plot([1, TINY])"},
             {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
              "source": "%timeit softmax(np.ones(3))"}]
    (root / "notebook.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                                                     "nbformat_minor": 5}))
    return root


def _rows_by_file(rows):
    return {row["file"].rsplit("/", 1)[-1]: row for row in rows}


def test_every_row_is_right(folder, console_script):
    done = subprocess.run([console_script, "grade", str(folder), "--exercise", "softmax", "--json",
                           "--jobs", "2", "--timeout", "1"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "sandbox layers:" in done.stderr
    rows = _rows_by_file(json.loads(done.stdout))
    assert set(rows) == set(EXPECTED)
    for name, (passed, attempted, status, hint_id, probe, error) in EXPECTED.items():
        row = rows[name]
        got = (row["passed"], row["attempted"], row["status"], row["hint_id"], row["probe"])
        assert got == (passed, attempted, status, hint_id, probe), f"{name}: {row}"
        assert (row["error"] is None) == (error is None) and (error is None or error in row["error"]), row
        assert set(row) >= {"file", "passed", "attempted", "hint_id", "probe", "seconds", "error"}
    assert rows["right.py"]["probes_passed"] == rows["right.py"]["probes_total"] == 25        # 14 public + 11 hidden
    # every probe runs now: only the 1-D cases (public and hidden: axis 0 is the last) and determinism pass
    assert rows["wrong_axis.py"]["probes_passed"] == 3


def test_one_file_given_in_several_spellings_is_graded_once(folder, console_script, tmp_path):
    """right.py, ./right.py, sub//../right.py and the folder holding it were 3 rows for one file (a red team's find).
    (A folder of its own with a second file: the class folder's every file took 8 s of CI.)"""
    (tmp_path / "sub").mkdir()
    (tmp_path / "right.py").write_text((folder / "right.py").read_text())
    (tmp_path / "stub.py").write_text((folder / "stub.py").read_text())
    done = subprocess.run([console_script, "grade", "right.py", "./right.py", "sub//../right.py", ".", "--exercise",
                           "softmax", "--json", "--no-progress"], capture_output=True, text=True, cwd=tmp_path,
                          timeout=300)
    rows = json.loads(done.stdout)
    assert sorted(r["file"] for r in rows) == ["right.py", "stub.py"], [r["file"] for r in rows]


def test_csv_gradebook_and_summary(folder, console_script, tmp_path):
    book = tmp_path / "grades.csv"
    files = [str(folder / "right.py"), str(folder / "stub.py")]
    done = subprocess.run([console_script, "grade", *files, "--exercise", "check_softmax", "--csv", str(book),
                           "--no-progress"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("graded 2 of 2 with seed ") and "1 of 2 submissions passed" in done.stdout
    assert "wrote 2 rows to" in done.stdout
    with open(book, newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["status"] for r in rows] == ["passed", "not attempted"]
    assert list(rows[0])[:4] == ["file", "passed", "attempted", "status"]


@pytest.mark.parametrize("argv,message", [
    (["--exercise", "softmaks"], "unknown exercise"),
    (["--exercise", "softmax", "--jobs", "0"], "argument --jobs: must be a positive integer, got 0"),
    (["--exercise", "softmax", "--memory", "-5"], "argument --memory: must be a number of megabytes above 0, got -5"),
    (["/nonexistent/folder", "--exercise", "softmax"], "no such file or folder: /nonexistent/folder"),
])
def test_usage_errors_exit_2(folder, console_script, argv, message):
    done = subprocess.run([console_script, "grade", str(folder / "right.py"), *argv], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and message in done.stderr


def test_the_shipped_notebooks_grade_as_their_checks_say(console_script):
    """A real exercise notebook (heavy cells: a simulation, a plot) and its solution, two workers."""
    from pathlib import Path

    notebooks = Path(__file__).resolve().parents[2] / "notebooks"
    name = "05_entropy_and_pen_and_paper.ipynb"
    done = subprocess.run([console_script, "grade", str(notebooks / "solutions" / name),
                           str(notebooks / "exercises" / name), "--exercise", "attention_entropy", "--json",
                           "--jobs", "2", "--no-progress"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [(r["status"], r["error"]) for r in rows] == [("passed", None), ("not attempted", None)]


def test_the_shipped_notebooks_provided_cells_run_in_the_grader():
    """Exercise notebooks 02, 03, 05 and 06 load the chapter's inputs with ae.worked_examples.get(...) in
    cells the student does not write; 05 also drew the weights with ae.dot_product_attention. Graded, those
    cells raised, and a failing row carried a note about a cell the student never touched. Each notebook is
    graded on its first exercise, where ``ae`` offers the least."""
    from pathlib import Path

    from attention_edu.checkers import EXERCISES
    from attention_edu.checkers.judge.submission import grade_one

    notebooks = Path(__file__).resolve().parents[2] / "notebooks"
    first = {}
    for name, exercise in EXERCISES.items():
        first.setdefault(exercise.notebook, name)
    for notebook, name in first.items():
        for folder, status in (("exercises", "not attempted"), ("solutions", "passed")):
            row = grade_one(name, notebooks / folder / f"{notebook}.ipynb", seed=1)
            assert (row.status, row.error) == (status, None), (folder, notebook, row.message)
            assert "Note:" not in row.message, (folder, notebook, row.message)


@pytest.mark.parametrize("name", ["right.py", "wrong_axis.py", "loops.py"])
def test_rows_are_the_same_where_python_has_no_waitid_and_there_are_no_namespaces(folder, monkeypatch, name):
    """As on macOS, whose Python before 3.13 has no ``os.waitid`` (every row failed on it) and whose kernel offers
    no namespaces."""
    from attention_edu.checkers.judge.submission import grade_one

    monkeypatch.delattr(os, "waitid")
    monkeypatch.setenv("ATTENTION_EDU_SANDBOX_NO_NAMESPACES", "1")
    row = grade_one("softmax", folder / name, seed=1)
    passed, attempted, status, hint_id, probe, _ = EXPECTED[name]
    assert (row.passed, row.attempted, row.status, row.hint_id, row.probe, row.error) == (
        passed, attempted, status, hint_id, probe, None)
