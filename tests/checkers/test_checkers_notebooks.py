"""The exercise notebooks and their solutions: identical apart from the solution cells.

nbval re-runs both sets against their stored outputs; these tests check what it cannot: that the
two versions did not drift apart, that every stub is still a stub in notebooks/exercises, that the
stored check results say "not attempted" there and "passed" in notebooks/solutions, and that
every checker and every pen-and-paper exercise of the chapters appears.
"""

from __future__ import annotations

import re

import pytest

from attention_edu.checkers import CHECKERS
from tests.conftest import NOTEBOOKS, cell_output_text, load_notebook
from tests.conftest import cell_source as _src

EXERCISES = sorted((NOTEBOOKS / "exercises").glob("*.ipynb"))
NAMES = [p.name for p in EXERCISES]
PEN_AND_PAPER = ["fund.exercise-1", "fund.exercise-2", "fund.exercise-3", "fund.exercise-4",
                 "dot.exercise-1", "dot.exercise-2", "dot.exercise-3", "dot.exercise-4",
                 "dot.exercise-5", "matrix.exercise"]


def _load(folder: str, name: str) -> dict:
    return load_notebook(f"{folder}/{name}")


def _tags(cell: dict) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def _shown(cell: dict) -> str:
    return cell_output_text(cell, mimes=("text/plain",))


def _check_cells(nb: dict) -> list[dict]:
    return [c for c in nb["cells"] if c["cell_type"] == "code" and "demo" not in _tags(c)
            and re.search(r"^check_\w+\(", _src(c), re.M)]


def test_six_notebooks_each_with_a_solution_twin():
    assert len(NAMES) == 6
    assert sorted(p.name for p in (NOTEBOOKS / "solutions").glob("*.ipynb")) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_exercise_and_solution_differ_only_in_solution_cells(name):
    exercise, solution = _load("exercises", name), _load("solutions", name)
    assert len(exercise["cells"]) == len(solution["cells"])
    solution_cells = 0
    for index, (a, b) in enumerate(zip(exercise["cells"], solution["cells"])):
        assert (a["cell_type"], _tags(a)) == (b["cell_type"], _tags(b)), f"{name}: cell {index}"
        if "solution" in _tags(a):
            solution_cells += 1
            assert _src(a) != _src(b), f"{name}: solution cell {index} is the same in both notebooks"
            stub = _src(a)
            assert "NotImplementedError" in stub or "= ..." in stub or all(
                line.startswith("#") for line in stub.splitlines() if line.strip()), stub
        else:
            assert _src(a) == _src(b), f"{name}: cell {index} differs but is not tagged 'solution'"
    assert solution_cells >= 2


@pytest.mark.parametrize("folder", ["exercises", "solutions"])
@pytest.mark.parametrize("name", NAMES)
def test_stored_outputs_come_from_one_clean_run(folder, name):
    cells = [c for c in _load(folder, name)["cells"] if c["cell_type"] == "code"]
    assert [c.get("execution_count") for c in cells] == list(range(1, len(cells) + 1))
    for cell in cells:
        for out in cell.get("outputs", []):
            assert out["output_type"] != "error", f"{folder}/{name}: {out.get('evalue')}"
            assert out.get("name") != "stderr", f"{folder}/{name}: wrote to stderr: {out.get('text')}"
        assert not re.search(r"0x[0-9a-fA-F]{6,}", _shown(cell))


@pytest.mark.parametrize("name", NAMES)
def test_checks_say_not_attempted_in_exercises_and_passed_in_solutions(name):
    exercise, solution = _load("exercises", name), _load("solutions", name)
    checks = list(zip(_check_cells(exercise), _check_cells(solution)))
    assert checks
    for a, b in checks:
        assert ": not attempted." in _shown(a), _src(a)
        assert ": passed." in _shown(b), _src(b) + _shown(b)
        assert "text/html" in b["outputs"][0]["data"]


def test_every_checker_and_every_pen_and_paper_exercise_appears():
    sources = "\n".join(_src(c) for name in NAMES for c in _load("solutions", name)["cells"])
    for checker in CHECKERS.values():
        assert f"{checker.__name__}(" in sources, checker.__name__
    for answer_id in PEN_AND_PAPER:
        assert answer_id in sources, answer_id
