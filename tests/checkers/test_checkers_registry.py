"""Adding an exercise touches its own module and nothing else (issue 16, item 9).

The test copies the package, writes one new exercise module -- its cases, reference and one known
mistake -- into the copy's ``checkers/exercises/`` and nothing else, and checks in a fresh
interpreter that the exercise is then everywhere a shipped one is: ``EXERCISES``, its
``check_<name>`` function, ``hint_ids()``, ``attention-edu check --list``, ``check`` and ``grade``
(in the sandbox, import rule included), with its mistake named.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import attention_edu

MODULE = '''
"""A made-up exercise for the registry test: double(x) -> 2 x."""

from ...backend import host_numpy as np
from . import normal_arrays, register_mistakes
from ..records import Case, Exercise

__all__ = ["DOUBLE"]


def _cases():
    return [Case("small", "x (2,)", (np.array([1.0, -2.0]),), ("x",), literal=True),
            Case("random", "seed 1, x (3, 4)", normal_arrays(1, (3, 4)), ("x",))]


DOUBLE = Exercise(name="double", notebook="99_made_up", number=1, summary="Check ``double(x)``.",
                  signature="double(x) -> y (...)", reference=lambda x: 2 * x, outputs=("y",), cases=_cases)

register_mistakes("double", (("triple", "small", lambda x: 3 * x, "You multiply by 3: double means times 2."),))
'''

DRIVER = '''
import json, sys
import attention_edu.checkers as checkers
from attention_edu.cli import main

report = {"package": checkers.__file__.rsplit("/", 2)[0], "names": list(checkers.EXERCISES)[-1:],
          "hint": "double.triple" in checkers.hint_ids(), "right": checkers.check_double(lambda x: x + x).passed,
          "wrong": checkers.check_double(lambda x: 3 * x).hint_id}
print(json.dumps(report))
sys.stdout.flush()
sys.exit(main(sys.argv[1:]))
'''


def _run(tmp_path, *argv):
    copy = tmp_path / "copy"
    if not copy.exists():
        shutil.copytree(Path(attention_edu.__file__).parent, copy / "attention_edu",
                        ignore=shutil.ignore_patterns("__pycache__"))
        (copy / "attention_edu" / "checkers" / "exercises" / "double.py").write_text(MODULE, encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", DRIVER, *argv], capture_output=True, text=True,
                          timeout=300, cwd=copy)        # the copy comes first on sys.path
    first, _, rest = done.stdout.partition("\n")
    report = json.loads(first or "{}")
    assert Path(report.pop("package", "")).parent == copy, done.stderr
    return report, rest, done


def test_an_exercise_in_one_new_module_is_checkable_everywhere(tmp_path):
    right = tmp_path / "right.py"
    right.write_text("def double(x):\n    return x * 2.0\n", encoding="utf-8")
    wrong = tmp_path / "wrong.py"
    wrong.write_text("def double(x):\n    return x * 3.0\n", encoding="utf-8")
    cheat = tmp_path / "cheat.py"
    cheat.write_text("import scipy\ndef double(x):\n    return x * 2.0\n", encoding="utf-8")

    report, listed, done = _run(tmp_path, "check", "--list")
    assert done.returncode == 0, done.stderr
    assert report == {"names": ["double"], "hint": True, "right": True, "wrong": "double.triple"}
    assert "double(x) -> y (...)" in listed

    _, printed, done = _run(tmp_path, "check", "double", str(right), "--seed", "1")
    assert done.returncode == 0, printed + done.stderr
    assert printed.startswith("check double: passed.")

    _, printed, done = _run(tmp_path, "grade", str(right), str(wrong), str(cheat), "--exercise", "double",
                            "--seed", "2", "--json", "--no-progress")
    assert done.returncode == 0, done.stderr
    rows = {row["file"].rsplit("/", 1)[-1]: row for row in json.loads(printed)}
    assert rows["right.py"]["passed"] and rows["right.py"]["probes_passed"] == rows["right.py"]["probes_total"]
    assert rows["wrong.py"]["hint_id"] == "double.triple" and not rows["wrong.py"]["passed"]
    assert not rows["cheat.py"]["passed"] and "`import scipy` is not allowed" in rows["cheat.py"]["error"]


def test_the_shipped_package_does_not_know_the_made_up_exercise():
    # the control: without the extra folder, "double" is no exercise (so the test above measures the module)
    done = subprocess.run([sys.executable, "-m", "attention_edu.cli", "check", "double", "x.py"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "unknown exercise 'double'" in done.stderr
