"""What the judge reads of a submission: honest notebooks and files that work in class work in the
grader (issue 16, item 7). Each case runs end to end through ``grade_one``, beside unit tests of
the cell filter (which cells and statements of a notebook run)."""

from __future__ import annotations

import contextlib
import io
import json
import random
import sys
import time
import tokenize
import types
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from attention_edu.checkers.judge.source import _INERT
from attention_edu.checkers.judge.submission import NOT_ALLOWED, grade_one, notebook_cells

SOFTMAX = ("def softmax(x):\n"
           "    top = np.max(x, axis=-1, keepdims=True)\n"
           "    e = np.exp(x - np.where(np.isfinite(top), top, 0.0))\n"
           "    total = np.sum(e, axis=-1, keepdims=True)\n"
           "    return e / np.where(total > 0, total, 1.0)\n")


def _refused(name: str, where: str) -> str:
    """What a row says of an import the exercise does not allow, and where it stands."""
    return f"{NOT_ALLOWED.format(name=name)} ({where})"


def _notebook(path, *sources):
    cells = [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": s}
             for s in sources]
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


def _code(tmp_path, *sources) -> list[str]:
    """The code of each cell the judge runs of a notebook with these cells."""
    return [code for _, code in notebook_cells(_notebook(tmp_path / "unit.ipynb", *sources))]


def _grade(tmp_path, *sources):
    return grade_one("softmax", _notebook(tmp_path / "class.ipynb", *sources), seed=2)


# --- the cell filter -----------------------------------------------------------------------------

def test_only_the_packages_checkers_count_as_checker_calls(tmp_path):
    helper = "def check_finite(x):\n    return x\n\ny = check_finite(1.0)"
    assert _code(tmp_path, helper) == [helper]
    assert _code(tmp_path, "check_softmax(f)", "ae.checkers.check_causal_mask(f)", "check_answer('x', a=1)") == []
    assert _code(tmp_path, "r = check_softmax(f)", "r: object = ae.checkers.check_answer('x', a=1)") == [
        f"r = {_INERT}(passed=True)"] * 2


def test_a_checkers_result_kept_in_a_name_reads_as_passed_and_the_rest_of_the_cell_runs(tmp_path):
    """Found by red team 12: ``res = check_causal_mask(causal_mask)`` was dropped, so ``assert res.passed`` below it
    raised NameError and the softmax defined after it was never defined: 0 of 25 for a notebook that ran in class.
    The name is bound to a stand-in that reads as passed; the grader's probes still give the mark."""
    checks = ("from attention_edu.checkers import check_causal_mask\nimport numpy as np\n"
              "res = check_causal_mask(lambda m, n=None: None)\nassert res.passed and res, res\n")
    row = _grade(tmp_path, checks + SOFTMAX)
    assert row.passed and row.error is None, row.message
    row = _grade(tmp_path, "import attention_edu as ae\nok = ae.checkers.check_softmax(max)", "assert ok.passed",
                 "import numpy as np\n" + SOFTMAX.replace(", axis=-1", "", 2))
    assert not row.passed and row.hint_id == "softmax.whole-array" and row.error is None, row.message


def test_a_checker_call_beside_a_definition_drops_that_statement_only(tmp_path):
    cell = "def f(x):\n    return x\n\nresult = check_softmax(\n    f)\nprint(result)\nTINY = 1e-300"
    assert _code(tmp_path, cell) == [f"def f(x):\n    return x\n\nresult = {_INERT}(passed=True)\n\nprint(result)\nTINY = 1e-300"]
    assert _code(tmp_path, "x = 1; check_softmax(f)") == ["x = 1; pass"]
    assert _code(tmp_path, "f\nprint(f.__doc__)\nx[0] + 1") == []      # display only: dropped whole
    assert _code(tmp_path, "f(1)\nprint(f(2))") == ["f(1)\nprint(f(2))"]     # a call may do more than show: runs
    definition = "def run_checks():\n    check_softmax(f)\n\nclass C:\n    def m(self):\n        check_answer('x')"
    assert _code(tmp_path, definition) == [definition]               # defining them calls nothing


def test_only_the_attention_edu_part_of_a_mixed_import_goes(tmp_path):
    assert _code(tmp_path, "import numpy as np, attention_edu as lib, math\nx = 1") == [
        "import numpy as np, math; lib = ae\nx = 1"]
    assert _code(tmp_path, "import attention_edu.checkers; import numpy") == ["attention_edu = ae; import numpy"]


def test_a_nested_import_of_attention_edu_binds_ae_and_a_submodules_names_too(tmp_path):
    cell = ("try:\n    import attention_edu as ae\n    from attention_edu.checkers import (check_softmax,\n"
            "        check_answer)\nexcept ImportError:\n    ae = None\n"
            "def g():\n    import numpy as np, attention_edu\n    return np")
    assert _code(tmp_path, cell) == [
        "try:\n    ae = ae\n    check_softmax = ae.check_softmax; check_answer = ae.check_answer\n\nexcept ImportError:\n"
        "    ae = None\n"
        "def g():\n    import numpy as np; attention_edu = globals()[\"ae\"]\n    return np"]


def test_cells_split_into_lines_as_python_does(tmp_path):
    for separator in "\u2028\u2029\x0b\x0c\x1c\x85":
        cell = f"s = 'a{separator}b'\nimport attention_edu\nt = 2"
        assert _code(tmp_path, cell) == [f"s = 'a{separator}b'\nattention_edu = ae\nt = 2"], repr(separator)
    assert _code(tmp_path, "a = 1\r\nimport attention_edu.checkers\rb = 2\n") == ["a = 1\nattention_edu = ae\nb = 2"]


def test_a_magic_or_shell_line_is_one_only_where_a_statement_starts(tmp_path):
    """As IPython reads a cell: never inside brackets, a string, or after a backslash."""
    cell = ("x = (a\n     != b\n     % c)\ns = '''\n!ls\nwhy?\n'''\nt = 'it\\'s (' + \\\n    !u\n!ls\n"
            "if x:\n    %timeit f(x)")
    assert _code(tmp_path, cell) == [cell.replace("\n!ls\nif", "\npass  # !ls\nif").replace("    %timeit",
                                                                                             "    pass  # %timeit")]


def test_a_statement_after_non_ascii_text_on_its_line_is_cut_at_the_right_place(tmp_path):
    assert _code(tmp_path, "s = 'é∑'; from attention_edu import softmax; t = 'ü'") == [
        "s = 'é∑'; softmax = ae.softmax; t = 'ü'"]


# --- end to end through grade_one ----------------------------------------------------------------

def test_a_softmax_calling_its_own_check_helper_passes(tmp_path):
    row = _grade(tmp_path, "import numpy as np\nimport attention_edu as ae",
                 "def check_finite(x):\n    return x\n\n"
                 + SOFTMAX.replace("    top =", "    x = check_finite(x)\n    top ="),
                 "ae.checkers.check_softmax(softmax)")
    assert row.passed and row.error is None, row.message


def test_a_definition_and_its_check_in_one_cell_passes(tmp_path):
    row = _grade(tmp_path, "import numpy as np\nfrom attention_edu.checkers import check_softmax",
                 SOFTMAX + "\ncheck_softmax(softmax)\n")
    assert row.passed and row.error is None, row.message


def test_a_mixed_import_line_passes(tmp_path):
    row = _grade(tmp_path, "import numpy as np, attention_edu as ae", SOFTMAX, "ae.checkers.check_softmax(softmax)")
    assert row.passed and row.error is None, row.message


def test_an_import_of_attention_edu_in_a_try_block_passes(tmp_path):
    row = _grade(tmp_path, "import numpy as np\ntry:\n    import attention_edu as ae\nexcept ImportError:\n"
                 "    ae = None", SOFTMAX)
    assert row.passed and row.error is None, row.message


SDPA = ("import math\n\ndef scaled_dot_product_attention(Q, K, V, mask=None):\n"
        "    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])\n"
        "    if mask is not None:\n        scores = np.where(mask, scores, -np.inf)\n"
        "    weights = SOFTMAX(scores)\n    return weights @ V, weights\n")


def test_an_import_of_attention_edu_as_ae_inside_the_function_passes(tmp_path):
    """Replaced by "ae = ae", a function-local import made ae local and read it unassigned: UnboundLocalError
    on every probe, with the hint "a name it never defines"."""
    local = SDPA.replace("    scores =", "    import attention_edu as ae\n    scores =", 1)
    notebook = _notebook(tmp_path / "class.ipynb", "import numpy as np", local.replace("SOFTMAX", "ae.softmax"))
    row = grade_one("scaled_dot_product_attention", notebook, seed=2)
    assert row.passed and row.error is None, row.message


@pytest.mark.parametrize("imports, call", [("from attention_edu import *", "softmax"),
                                           ("import attention_edu.softmax as sm", "sm.softmax"),
                                           ("import attention_edu.checkers", "attention_edu.softmax")])
def test_every_spelling_of_importing_attention_edu_binds_what_python_binds(tmp_path, imports, call):
    """``import *`` bound nothing and ``import attention_edu.x [as y]`` neither ``attention_edu`` nor ``y``:
    the earlier exercise's softmax, offered through ``ae``, raised NameError ("a name it never defines")."""
    notebook = _notebook(tmp_path / "class.ipynb", f"import numpy as np\n{imports}", SDPA.replace("SOFTMAX", call))
    row = grade_one("scaled_dot_product_attention", notebook, seed=2)
    assert row.passed and row.error is None, row.message


def test_a_line_separator_inside_a_string_passes(tmp_path):
    row = _grade(tmp_path, "import numpy as np\nimport attention_edu as ae",
                 "NOTE = 'rows sum to one\u2028(along the last axis)'\n" + SOFTMAX)
    assert row.passed and row.error is None, row.message


def test_the_graded_function_is_still_the_students_own(tmp_path):
    """Dropping a checker statement keeps the rest: a wrong softmax beside its check still fails."""
    wrong = SOFTMAX.replace("axis=-1", "axis=0")
    row = _grade(tmp_path, "import numpy as np\nfrom attention_edu.checkers import check_softmax",
                 wrong + "check_softmax(softmax)")
    assert not row.passed and row.attempted and row.error is None, row.message


@pytest.mark.parametrize("name, data", [
    ("bom.py", b"\xef\xbb\xbfimport numpy as np\r\n" + SOFTMAX.replace("\n", "\r\n").encode()),
    ("latin.py", b"# -*- coding: latin-1 -*-\nimport numpy as np\nNAME = 'Ren\xe9e'\n" + SOFTMAX.encode()),
])
def test_a_py_file_is_decoded_as_python_decodes_it(tmp_path, name, data):
    (tmp_path / name).write_bytes(data)
    row = grade_one("softmax", tmp_path / name, seed=2)
    assert row.passed and row.error is None, row.message


@pytest.mark.parametrize("data, reason", [
    (b"# -*- coding: no-such-codec -*-\ndef softmax(x):\n    return x\n", "no-such-codec"),
    (b"def softmax(x):\n    return x  # \xff\xfe\n", "utf-8"),
    (b"\xef\xbb\xbf# coding: latin-1\ndef softmax(x):\n    return x\n", "encoding problem"),
])
def test_a_py_file_python_cannot_decode_is_that_rows_error(tmp_path, data, reason):
    (tmp_path / "bad.py").write_bytes(data)
    row = grade_one("softmax", tmp_path / "bad.py", seed=2)
    assert not row.passed and row.error.startswith("the file could not be read as text ("), row.error
    assert reason in row.error, row.error


def test_an_nbformat_3_notebook_is_told_to_be_saved_again(tmp_path):
    """nbformat 3 keeps its cells under worksheets, each code cell's text under "input": read as
    today's format it held no cell, and its row said it defines no function."""
    old = {"nbformat": 3, "nbformat_minor": 0, "metadata": {}, "worksheets": [{"cells": [
        {"cell_type": "code", "input": SOFTMAX, "language": "python", "outputs": []}]}]}
    (tmp_path / "old.ipynb").write_text(json.dumps(old))
    row = grade_one("softmax", tmp_path / "old.ipynb", seed=1)
    assert row.status == "failed" and "nbformat 3" in row.error and "save it again" in row.error, row


@pytest.mark.parametrize("ending", ["exit()", "quit()", "import sys\nsys.exit(0)", "raise SystemExit",
                                    "if __name__ == '__main__':\n    print(softmax(np.zeros(3)))\nexit()"])
def test_a_py_file_that_exits_at_its_end_passes(tmp_path, ending):
    """A script's exit() or sys.exit(0) after the definitions ends its run as its last line would:
    the row said "importing the file raised SystemExit: None (line 26 in __call__)" (site's line)."""
    (tmp_path / "script.py").write_text("import numpy as np\n" + SOFTMAX + ending + "\n")
    row = grade_one("softmax", tmp_path / "script.py", seed=2)
    assert row.passed and row.error is None, row.message


def test_a_py_file_that_exits_with_an_error_status_fails_at_its_own_line(tmp_path):
    (tmp_path / "script.py").write_text("import numpy as np\n" + SOFTMAX + "exit(3)\n")
    row = grade_one("softmax", tmp_path / "script.py", seed=2)
    assert not row.passed and row.error == "importing the file raised SystemExit: 3 (line 7 in <module>: exit(3))", row.error


def test_the_function_may_be_any_callable_the_file_binds_to_its_name(tmp_path):
    """functools.partial has no __module__ of the submission's: the row said "defines no function
    'softmax' (functions found: softmax_axis); name it softmax", which the student had done."""
    general = SOFTMAX.replace("def softmax(x):", "def softmax_axis(x, axis):").replace("axis=-1", "axis=axis")
    (tmp_path / "partial.py").write_text(f"import functools\nimport numpy as np\n{general}"
                                         "softmax = functools.partial(softmax_axis, axis=-1)\n")
    assert grade_one("softmax", tmp_path / "partial.py", seed=2).passed
    row = _grade(tmp_path, "import numpy as np\nfrom functools import partial", general,
                 "softmax = partial(softmax_axis, axis=-1)")
    assert row.passed and row.error is None, row.message
    row = _grade(tmp_path, "from attention_edu import softmax")     # the package's own: told why, not "no function"
    assert not row.passed and "ae.softmax is not available here" in row.message, row.message


def test_a_notebooks_main_guard_runs_as_in_class(tmp_path):
    """A notebook's code runs as ``__main__`` in Jupyter, so its ``if __name__ == "__main__":`` blocks run."""
    guarded = "if __name__ == '__main__':\n" + "".join(f"    {line}\n" for line in SOFTMAX.splitlines())
    row = _grade(tmp_path, "import numpy as np", guarded)
    assert row.passed and row.error is None and row.message.startswith("check softmax: passed"), row.message


def test_a_refused_import_names_the_cell_and_line_that_holds_it(tmp_path):
    """A refused import caught by the notebook (or an exploration cell's, the function untouched) fails
    the submission: the sentence said which module, not where, in a notebook of thirty cells."""
    row = _grade(tmp_path, "import numpy as np", SOFTMAX,
                 "x = np.zeros(3)\nfrom tqdm import tqdm\nfor _ in tqdm(x):\n    pass")
    assert not row.passed and row.error.endswith(_refused("tqdm", "code cell 3, line 2")), row.error
    (tmp_path / "guarded.py").write_text("import numpy as np\ntry:\n    import scipy.special\nexcept ImportError:\n"
                                         "    scipy = None\n" + SOFTMAX)
    row = grade_one("softmax", tmp_path / "guarded.py", seed=2)
    assert not row.passed and row.error.endswith(_refused("scipy", "guarded.py, line 3")), row.error


def test_a_file_saved_by_a_windows_editor_is_read_or_told_how_to_save_it(tmp_path):
    """Notepad's UTF-8 byte-order mark before a notebook's JSON gave "Unexpected UTF-8 BOM (decode using
    utf-8-sig)"; PowerShell 5's `>` writes UTF-16, and the row did not say which encoding to use."""
    notebook = _notebook(tmp_path / "class.ipynb", "import numpy as np", SOFTMAX)
    notebook.write_text(notebook.read_text(), encoding="utf-8-sig")
    row = grade_one("softmax", notebook, seed=2)
    assert row.passed and row.error is None, row.message
    (tmp_path / "wide.py").write_text("import numpy as np\n" + SOFTMAX, encoding="utf-16")
    row = grade_one("softmax", tmp_path / "wide.py", seed=2)
    assert not row.passed and row.error.endswith("; save it as UTF-8)"), row.error


BLACK = """def causal_mask(m, n=None):
    n = m if n is None else n
    future = (
        np.arange(n)[None, :] - np.arange(m)[:, None]
        > n - m
    )
    allowed = ~future
    return (
        NAME
        != True
    )
"""


def test_a_line_black_starts_with_an_operator_is_python_not_a_shell_command(tmp_path):
    """black puts a wrapped operator first on its line: "!= True" inside brackets was read as a shell
    command and dropped, so the right mask (future != True) came back inverted ("True on the future
    keys") and the mask that is wrong in class (allowed != True) passed."""
    for name, right in (("future", True), ("allowed", False)):
        notebook = _notebook(tmp_path / f"{name}.ipynb", "import numpy as np", BLACK.replace("NAME", name))
        row = grade_one("causal_mask", notebook, seed=2)
        assert row.passed is right and row.error is None, (name, row.message)


def test_a_magic_continued_with_a_backslash_is_left_out_whole(tmp_path):
    """IPython joins "!pip install numpy \\" and the line below into one command: the grader ran the
    second line as Python (an unexpected indent), so the cell, and the function it defined, was lost."""
    row = _grade(tmp_path, "!pip install numpy \\\n    matplotlib\nimport numpy as np\n" + SOFTMAX)
    assert row.passed and row.error is None, row.message


def test_a_name_of_the_package_the_exercise_does_not_offer_says_why_when_looked_into(tmp_path):
    """A cell that draws with ae.plotting.attention_heatmap(...): the note said "'function' object has no
    attribute 'attention_heatmap'"; and the package's names a notebook imports are not listed as its functions."""
    row = _grade(tmp_path, "import numpy as np\nfrom attention_edu import causal_mask",
                 SOFTMAX.replace("axis=-1", "axis=0").replace("def softmax", "def soft_max"),
                 "ax = ae.plotting.attention_heatmap(np.eye(2))")
    assert row.error.startswith(f"{tmp_path / 'class.ipynb'} defines no function 'softmax' (functions found: soft_max)")
    assert row.error.endswith("code cell 3 raised AttributeError: ae.plotting is not available here: this "
                              "exercise asks for your own NumPy code (you may use ae.worked_examples.get)"), row.error


def test_a_notebook_reads_the_chapters_inputs_and_text_but_never_the_librarys_answers(tmp_path):
    """The shipped notebooks load the chapter's inputs with ae.worked_examples.get(id).inputs and print its
    text (.printed): graded, each such cell raised "ae.worked_examples is not available here", a note on a
    cell the student never wrote. Now the judge sends an entry's id, title, source, inputs and printed text;
    what the library computes (the answers of the pen-and-paper questions) never reaches the notebook."""
    import attention_edu as ae
    entry = ae.worked_examples.get("fund.exercise-1")
    reads = ("example = ae.worked_examples.get('fund.exercise-1')\n"
             "H, printed, where = example.inputs['H'], example.printed['weights'], (example.id, example.source)\n"
             "def softmax(x):\n    return np.full(np.shape(x), float(H.sum()))\n")
    row = _grade(tmp_path, "import numpy as np\nimport attention_edu as ae", reads)
    assert row.error is None and row.hint_id is not None and "Note:" not in row.message, row.message
    assert f"{float(entry.inputs['H'].sum()):.4g}" in row.message, row.message      # the inputs came through
    for cell, said in (("answers = example.computed", "'types.SimpleNamespace' object has no attribute 'computed'"),
                       ("answers = example.checks", "has no attribute 'checks'"),
                       ("every = ae.worked_examples.entries()", "ae.worked_examples.entries is not available here"),
                       ("other = ae.worked_examples.get('fund.exercise-99')", "no worked example 'fund.exercise-99'")):
        row = _grade(tmp_path, "import numpy as np\nimport attention_edu as ae", reads, cell)
        assert "Note: while the notebook ran, code cell 3 raised" in row.message and said in row.message, row.message
    assert printed_text_is(entry.printed["weights"], tmp_path)


def printed_text_is(text, tmp_path):
    """Whether a notebook's ``example.printed['weights']`` is the chapter's text ``text`` (a function returns it)."""
    probe = ("import numpy as np\nimport attention_edu as ae\n"
             "TEXT = ae.worked_examples.get('fund.exercise-1').printed['weights']\n"
             "def softmax(x):\n    raise ValueError(TEXT)\n")
    return f"ValueError: {text}" in _grade(tmp_path, probe).message


def test_a_notebook_too_large_for_its_outputs_is_told_to_clear_them(tmp_path):
    """A cell that printed a 1000 x 1000 array in full, saved with its output, made the notebook larger than
    the 16 MiB the grader reads, and the row said only "not a submission"."""
    notebook = _notebook(tmp_path / "class.ipynb", "import numpy as np", SOFTMAX)
    cells = json.loads(notebook.read_text())
    cells["cells"][1]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["0.001 " * 3_000_000]}]
    notebook.write_text(json.dumps(cells))
    row = grade_one("softmax", notebook, seed=2)
    assert not row.passed and row.error.endswith("(clear its outputs: Edit > Clear Outputs of All Cells, then save it)")


def test_a_notebook_out_of_time_is_told_that_every_cell_counts(tmp_path):
    """A right function beside a slow exploration cell: the row said only that the notebook did not
    finish in time, and a student reads that as "my function is too slow"."""
    notebook = _notebook(tmp_path / "class.ipynb", "import numpy as np", SOFTMAX,
                         "import time\nfor size in range(100):\n    time.sleep(0.1)")
    row = grade_one("softmax", notebook, seed=2, budget=2)
    assert not row.passed and row.error == ("running the notebook did not finish within the 2 s the submission may "
                                            "take (every code cell runs: a long experiment, a benchmark or a "
                                            "training loop too)"), row.error


def test_a_future_import_holds_in_the_cells_below_it_as_in_ipython(tmp_path):
    """IPython compiles every cell with the __future__ flags of the cells run before: with annotations
    postponed, a hint naming something defined later (or never) is a string; the grader evaluated it."""
    row = _grade(tmp_path, "from __future__ import annotations\nimport numpy as np",
                 SOFTMAX.replace("def softmax(x):", "def softmax(x: Array) -> Array:"), "Array = np.ndarray")
    assert row.passed and row.error is None, row.message


def test_a_cell_pasted_with_an_indent_runs_dedented_as_in_ipython(tmp_path):
    """IPython removes the indent every line of a cell shares (code pasted from a method or a web page);
    the grader ran it as Python, an unexpected indent that lost the cell and its function."""
    pasted = "".join(f"    {line}\n" if line else "\n" for line in ("import numpy as np\n" + SOFTMAX).split("\n"))
    assert _code(tmp_path, pasted) == ["import numpy as np\n" + SOFTMAX]
    row = _grade(tmp_path, pasted)
    assert row.passed and row.error is None, row.message


def test_display_left_in_a_notebooks_function_works_as_in_class(tmp_path):
    """IPython makes display() a builtin: a softmax that displays its exponentials (a debugging line left in)
    raised NameError on every probe, with the hint "a name it never defines"."""
    row = _grade(tmp_path, "import numpy as np", SOFTMAX.replace("    total =", "    display(e)\n    total ="))
    assert row.passed and row.error is None, row.message


@pytest.mark.parametrize("imports", ["from IPython.display import display, Markdown",
                                     "from IPython.display import (HTML,\n                            Markdown as md)"])
def test_an_import_of_ipython_display_in_a_notebook_only_displays(tmp_path, imports):
    """A notebook that shows its results with IPython.display failed whole: "`import IPython` is not allowed here".
    Its imports bind display to print and the other names to str; the real IPython stays out."""
    shown = "display(Markdown('**rows** sum to 1'))" if "md" not in imports else "display(md(HTML('<b>rows</b>')))"
    cells = ["import numpy as np\n" + imports, SOFTMAX + shown, "x = np.array([[1.0, 2.0]])\n" + shown]
    row = _grade(tmp_path, *cells)
    assert row.passed and row.error is None, row.message
    wrong = grade_one("softmax", _notebook(tmp_path / "wrong.ipynb", cells[0], cells[1].replace(", axis=-1", "", 2),
                                           cells[2]), seed=2)
    assert not wrong.passed and wrong.hint_id == "softmax.whole-array" and wrong.error is None, wrong.message


@pytest.mark.parametrize("imports, bound, shown", [
    ("import IPython.display as ipd, math", "ipd", "ipd.display(ipd.Markdown('w'))"),
    ("from IPython import display", "display", "display.display(x)"),
    ("import IPython", "IPython", "IPython.display.display(x)"),
    ("import IPython.display", "IPython", "IPython.display.clear_output(wait=True)")])
def test_every_spelling_of_an_ipython_display_import_only_displays(tmp_path, imports, bound, shown):
    """Found by a red team: only "from IPython.display import ..." was read as a display; these spellings failed an
    honest notebook with "`import IPython` is not allowed here". The rest of IPython is an inert stand-in."""
    row = _grade(tmp_path, "import numpy as np\n" + imports, SOFTMAX + "x = softmax(np.ones((1, 2)))\n" + shown)
    assert row.passed and row.error is None, row.message
    inert = f"shell = {bound}.get_ipython()\nassert type(shell).__name__ == 'StandIn' and shell.kernel is shell\n"
    row = _grade(tmp_path, "import numpy as np\n" + imports, inert + SOFTMAX)
    assert row.passed and row.error is None, row.message


@pytest.mark.parametrize("imports", [
    "from IPython.core.display import display, HTML\ndisplay(HTML('<b>rows</b>'))",
    "from IPython.core.interactiveshell import InteractiveShell\nInteractiveShell.ast_node_interactivity = 'all'",
    "from IPython import get_ipython\nget_ipython().run_line_magic('matplotlib', 'inline')",
    "from IPython.display import clear_output, Image\nclear_output(wait=True)\nImage(filename='x.png', width=9)"])
def test_what_else_a_notebook_imports_from_ipython_does_nothing(tmp_path, imports):
    """Found by red team 12: these lines, which only set up the display, failed an honest notebook with "`import
    IPython` is not allowed here" (0 of 25); clear_output(wait=True) raised TypeError (it was str). Each name is
    a stand-in that does nothing, called, read or set; the real IPython is never imported."""
    row = _grade(tmp_path, "import numpy as np\n" + imports + "\n" + SOFTMAX)     # in one cell: the def comes after
    assert row.passed and row.error is None, row.message
    row = _grade(tmp_path, "import numpy as np\n" + imports + "\n" + SOFTMAX.replace(", axis=-1", "", 2))
    assert not row.passed and row.hint_id == "softmax.whole-array" and row.error is None, row.message


def test_a_block_of_only_a_shell_or_magic_line_runs_as_in_ipython(tmp_path):
    """Found by a red team: a Colab guard (if ...: !pip install ...) left an if with an empty body, and the whole
    cell, the import of NumPy with it, failed to compile (NameError np). The line becomes "pass  # !pip ..."."""
    guard = "import sys\nif 'google.colab' in sys.modules:\n    !pip install -q attention-edu\nimport numpy as np"
    row = _grade(tmp_path, guard, SOFTMAX)
    assert row.passed and row.error is None, row.message
    exported = ("import sys\nif 'google.colab' in sys.modules:\n    get_ipython().system('pip install -q x')\n"
                "import numpy as np\n\n" + SOFTMAX)
    (tmp_path / "exported.py").write_text(exported)
    row = grade_one("softmax", tmp_path / "exported.py", seed=2)
    assert row.passed and row.error is None, row.message


@pytest.mark.parametrize("magic", ["%%file my_softmax.py", "%%writefile ./my_softmax.py", "%%file './my_softmax.py'"])
def test_a_module_written_by_the_file_alias_of_writefile_is_imported(tmp_path, magic):
    """%%file is IPython's other name for %%writefile; its module was refused as "`import my_softmax`". Red team 50: so
    was a module written as ./my_softmax.py, which is the same file in class."""
    row = _grade(tmp_path, "import numpy as np", f"{magic}\nimport numpy as np\n" + SOFTMAX,
                 "from my_softmax import softmax")
    assert row.passed and row.error is None, row.message


@pytest.mark.parametrize("cells", [
    ["%%writefile sm_impl.py\nimport numpy as np\n" + SOFTMAX, "%run sm_impl.py"],
    ["%%writefile helpers.py\nimport numpy as np\n", "%%writefile -a helpers.py\n" + SOFTMAX, "from helpers import softmax"],
    ["import os\nos.makedirs('utils', exist_ok=True)", "%%writefile utils/sm.py\nimport numpy as np\n" + SOFTMAX,
     "from utils.sm import softmax"],
    ["import os\nos.makedirs('pkg', exist_ok=True)\nopen('pkg/__init__.py', 'w').close()",
     "%%writefile pkg/sm.py\nimport numpy as np\n" + SOFTMAX, "import pkg.sm\nsoftmax = pkg.sm.softmax"],
    # red team 60: a cell saved without its last line break, appended to; a folder a shell line made; %run's spellings;
    # a script that raises or exits, the cell going on as in IPython
    ["%%writefile sm.py\nimport numpy as np", "%%writefile sm.py -a\n" + SOFTMAX, "from sm import softmax"],
    ["!mkdir -p utils", "%%writefile utils/sm.py\nimport numpy as np\n" + SOFTMAX, "from utils.sm import softmax"],
    ["%%writefile sm.py\nimport numpy as np\n" + SOFTMAX, "%run ./sm.py\n%run 'sm.py'  # defines softmax\n%run sm"],
    ["%%writefile demo.py\nimport numpy as np\n" + SOFTMAX + "np.load('scores.npy')\n", "%run demo.py\nx = 1"],
    ["%%writefile main.py\nimport sys\nimport numpy as np\n" + SOFTMAX + "sys.exit(0)\n",
     "%run main.py\ndef twice(x):\n    return 2 * x"],
    # red team 61: a name with a hyphen, a data file, a bare folder named as a standard module (html/)
    ["%%writefile my-sm.py\nimport numpy as np\n" + SOFTMAX, "%run my-sm.py"],
    ['%%writefile cfg.json\n{"axis": -1}', "import json\nAXIS = json.load(open('cfg.json'))['axis']",
     SOFTMAX.replace("axis=-1", "axis=AXIS")],
    ["import os\nos.makedirs('html', exist_ok=True)\nimport html",
     SOFTMAX.replace("    return ", "    return None if html.escape('<') != '&lt;' else ", 1)],
], ids=["run", "append", "folder", "package", "append-no-newline", "shell-mkdir", "run-spellings", "run-raises",
        "run-exits", "hyphen", "data-file", "stdlib-named-folder"])
def test_a_module_a_notebook_writes_and_runs_as_in_jupyter_is_used(tmp_path, cells):
    """Red team 59: %run of a script the notebook wrote, %%writefile -a and a module in a folder of its own all
    work in Jupyter; each scored 0, the folder's as a refused import ("`import utils` is not allowed"). Red team 60:
    so did the other spellings and uses above."""
    row = _grade(tmp_path, "import numpy as np", *cells)
    assert row.passed and row.error is None, row.message


def test_a_script_run_with_run_sees_its_own_names_only_as_in_ipython(tmp_path):
    """Red team 60: %run ran the script in the notebook's namespace, so a script that never imports numpy passed,
    where in class its softmax raises NameError: it runs in a namespace of its own now."""
    row = _grade(tmp_path, "import numpy as np", "%%writefile sm.py\n" + SOFTMAX, "%run sm.py")
    assert not row.passed and "NameError" in row.message, row.message


@pytest.mark.parametrize("cells, refused", [
    (["open('ctypes', 'w').close()\nimport ctypes"], "ctypes"),
    (["open('socket', 'w').close()\nimport socket"], "socket"),
], ids=["ctypes", "socket"])
def test_a_file_named_as_a_refused_module_does_not_open_the_import_rule(tmp_path, cells, refused):
    """Red team 60: a file (not a module) named ``ctypes`` in the private directory sent the import to the student's
    own modules, found nothing there, and the real ctypes was imported with no refusal."""
    row = _grade(tmp_path, "import numpy as np", *cells, SOFTMAX)
    assert not row.passed and f"`import {refused}` is not allowed here" in (row.error or ""), row.message


def test_a_compiled_module_in_a_folder_of_its_own_is_not_imported(tmp_path):
    """Red team 60: pkg/hidden.pyc, compiled with no source beside it, was imported through another finder."""
    row = _grade(tmp_path, "import numpy as np", "import os, py_compile\nos.makedirs('pkg', exist_ok=True)\n"
                 "open('src.py', 'w').write('VALUE = 42')\npy_compile.compile('src.py', cfile='pkg/hidden.pyc')\n"
                 "os.remove('src.py')", "try:\n    import pkg.hidden\n    LOADED = True\nexcept ImportError:\n"
                 "    LOADED = False", SOFTMAX.replace("    return ", "    return None if LOADED else ", 1))
    assert row.passed and row.error is None, row.message


def test_only_source_is_imported_from_what_a_notebook_writes(tmp_path):
    """The student's own modules are imported as source: a file beside one, named as an extension module would be,
    is never loaded (it could be native code outside the import rule)."""
    suffix = __import__("importlib.machinery").machinery.EXTENSION_SUFFIXES[0]
    row = _grade(tmp_path, "import numpy as np", f"open('mine{suffix}', 'wb').write(b'not an ELF file')",
                 "%%writefile mine.py\nimport numpy as np\n" + SOFTMAX, "from mine import softmax")
    assert row.passed and row.error is None, row.message


def test_a_cell_of_long_call_chains_is_read_in_linear_time(tmp_path):
    """Red team 59: a 256 KiB cell of lines like x.print().print()... 160 calls deep cost the grader 13 s of its own
    CPU before the worker started (each call's callee unparsed: the depth squared), with no budget applying."""
    chain = "x" + ".print()" * 160
    notebook = _notebook(tmp_path / "chains.ipynb", SOFTMAX, "\n".join([chain] * 200))
    start = __import__("time").process_time()
    cells = notebook_cells(notebook)
    assert len(cells) == 1 and __import__("time").process_time() - start < 2, len(cells)     # prints only: shown


def test_a_definition_inside_a_with_block_beside_its_check_stays(tmp_path):
    """A with block holding the def and check_softmax(softmax) was dropped whole ("defines no function"); now only
    the check goes. A check in a block's header (if check_softmax(f).passed:) still drops that statement."""
    cell = ("import warnings\nwith warnings.catch_warnings():\n    warnings.simplefilter('error')\n"
            + "".join("    " + line + "\n" for line in SOFTMAX.splitlines()) + "    check_softmax(softmax)\n")
    assert _code(tmp_path, cell) == [cell.rstrip("\n").replace("    check_softmax(softmax)", "    pass")]
    assert _code(tmp_path, "if check_softmax(f).passed:\n    print('yes')\ny = 1") == ["pass\n\ny = 1"]
    row = _grade(tmp_path, "import numpy as np\nfrom attention_edu.checkers import check_softmax", cell)
    assert row.passed and row.error is None, row.message


def _exported(*cells: str) -> str:
    """A script as ``jupyter nbconvert --to script`` writes a notebook with these code cells (red team 11A)."""
    parts = ["#!/usr/bin/env python\n# coding: utf-8\n\n# # Exercises 01\n# \n# Markdown becomes comments.\n"]
    parts += [f"\n# In[{index}]:\n\n\n{cell}\n\n" for index, cell in enumerate(cells, 1)]
    return "".join(parts) + "\n# In[ ]:\n\n\n\n\n"


def test_a_script_jupyter_exported_from_the_notebook_grades_as_the_notebook(tmp_path):
    """File > Download as > Python (.py) gives ``# In[3]:`` above each cell and get_ipython() calls for the
    magics (VS Code's export and jupytext ``# %%``, Colab's none): graded as a .py, it failed
    at its first line of the notebook's ("`import attention_edu` is not allowed here", or "name 'get_ipython'
    is not defined"); it now runs as the notebook did, magics and checker calls left out, %%time's cell run."""
    timed = SOFTMAX.replace("axis=-1", "axis=AXIS").replace("\n", "\\n")     # AXIS: from a %time line
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "ada.py").write_text(_exported(
        "import numpy as np\nimport attention_edu as ae\nfrom attention_edu.checkers import check_softmax",
        "get_ipython().run_line_magic('matplotlib', 'inline')\nget_ipython().system('pip install numpy')\n"
        "get_ipython().run_line_magic('time', 'AXIS = -1')",
        f"get_ipython().run_cell_magic('time', '', '{timed}')", "check_softmax(softmax)",
        "get_ipython().run_cell_magic('bash', '', 'ls\\n')"))
    (folder / "bo.py").write_text(_exported("import numpy as np\nimport attention_edu as ae",
                                            SOFTMAX.replace("axis=-1", "axis=0"), "check_softmax(softmax)"))
    (folder / "cy.py").write_text(_exported("import numpy as np", "def softmax(x):\n    return np.exp(x) / s"))
    (folder / "di.py").write_text("import numpy as np  # In[1]:\n# In[2]: a comment of a student's own\n" + SOFTMAX)
    (folder / "ed.py").write_text("import numpy as np\n" + _exported(SOFTMAX, "check_softmax(softmax)"))
    (folder / "fu.py").write_text("# %%\nfrom IPython import get_ipython\n\n# %% [markdown]\n# # Exercises 01\n\n# %%\n"
                                  "import numpy as np\nimport attention_edu as ae\n%matplotlib inline\n\n# %%\n"
                                  f"{SOFTMAX}\n# %%\ncheck_softmax(softmax)\n")     # VS Code's export, jupytext's
    (folder / "gi.py").write_text('# -*- coding: utf-8 -*-\n"""01_softmax_and_masks.ipynb\n\nAutomatically generated by '
                                  'Colab.\n\nOriginal file is located at\n    https://colab.research.google.com/drive/1A\n"""'
                                  "\n\n# Commented out IPython magic to ensure Python compatibility.\n# %matplotlib inline\n"
                                  f"import numpy as np\nimport attention_edu as ae\n\n{SOFTMAX}\ncheck_softmax(softmax)\n")
    rows = {Path(row.file).name: row for row in (grade_one("softmax", path, seed=2) for path in folder.iterdir())}
    assert rows["ada.py"].passed and rows["ada.py"].error is None, rows["ada.py"].message
    assert rows["fu.py"].passed and rows["gi.py"].passed, rows["fu.py"].message + rows["gi.py"].message
    assert rows["di.py"].passed and rows["ed.py"].passed, rows["di.py"].message + rows["ed.py"].message
    assert not rows["bo.py"].passed and rows["bo.py"].hint_id == "softmax.wrong-axis", rows["bo.py"].message
    assert not rows["cy.py"].passed and "(line 18 in softmax: " in rows["cy.py"].message, rows["cy.py"].message


def test_a_script_exported_without_cell_markers_runs_a_cell_per_run_of_statements(tmp_path):
    """Red team 19: ``jupyter nbconvert --to script --no-prompt`` leaves out the ``# In[3]:`` markers, and jupytext's
    light format (its default for .py) has none: both ran whole as a module, so the notebook's own
    ``import attention_edu as ae`` failed an honest export, 0 of 25. With nbconvert's or jupytext's header (or
    Colab's), such a script now runs as its notebook, a cell beginning at each top-level statement a blank line
    stands above: a statement that fails in the grader fails alone, and a def's blank lines stay inside it."""
    softmax = SOFTMAX.replace("\n    e = ", "\n\n\n    e = ")         # two blank lines inside the def
    demo = "ae.plotting.attention_heatmap(np.eye(2))\nprint('drawn')\n"   # the grader's ae offers no plotting
    noprompt = ("#!/usr/bin/env python\n# coding: utf-8\n\n# # Exercises 01\n# \n# Markdown as comments.\n\n"
                "import numpy as np\n\nimport attention_edu as ae\nfrom attention_edu.checkers import check_softmax\n\n\n"
                f"{demo}\n\n{softmax}\n\ncheck_softmax(softmax)\n")
    light = ("# ---\n# jupyter:\n#   jupytext:\n#     text_representation:\n#       format_name: light\n# ---\n\n"
             "# # Exercises 01\n\n# %matplotlib inline\nimport numpy as np\nimport attention_edu as ae\n\n"
             f"{demo}\n{softmax}\n\ncheck_softmax(softmax)\n")
    for name, text in (("noprompt.py", noprompt), ("light.py", light)):
        (tmp_path / name).write_text(text)
        row = grade_one("softmax", tmp_path / name, seed=2)
        assert row.passed and row.error is None, row.message
    (tmp_path / "joined.py").write_text(noprompt.replace(f"{demo}\n\n", demo))     # no blank line: one cell, and
    row = grade_one("softmax", tmp_path / "joined.py", seed=2)                    # the failing demo stops the def
    assert not row.passed and "no function 'softmax'" in row.error and "ae.plotting is not" in row.error, row.error
    (tmp_path / "plain.py").write_text(noprompt.split("\n", 2)[2])    # no header: a module, as before
    row = grade_one("softmax", tmp_path / "plain.py", seed=2)
    assert not row.passed and "import attention_edu` is not allowed" in row.message, row.message


@pytest.mark.parametrize("magic", ["%%writefile mymod.py", "%%time", "%%capture out"])
def test_jupytexts_light_format_keeps_a_cell_magic_with_its_cell(tmp_path, magic):
    """Audit of the docs (stop 39): jupytext's light format writes a cell magic as a comment right above the cell's
    code, after the blank line that parts the cells; the cell was cut at the statement below the comment, so the
    magic read back stood below the previous cell's first line and stopped it (0 or 2 of 25 for an honest export).
    A cell now begins at the blank line above the comments that stand over a statement."""
    header = "# ---\n# jupyter:\n#   jupytext:\n#     text_representation:\n#       format_name: light\n# ---\n\n"
    cell = "V = 1.0\n\nimport mymod\nK = mymod.V\n" if "writefile" in magic else "K = 1.0\n"
    scaled = SOFTMAX.replace("return e", "return K * e")
    (tmp_path / "light.py").write_text(f"{header}import numpy as np\nK = 2.0\n\n# {magic}\n{cell}\n\n{scaled}")
    row = grade_one("softmax", tmp_path / "light.py", seed=2)
    assert row.passed and row.error is None, row.message


@pytest.mark.parametrize("opening", ['# + tags=["solution"]', '# + jupyter={"source_hidden": true}', "#+"])
def test_jupytexts_light_cells_with_metadata_start_cells_of_their_own(tmp_path, opening):
    """Outside false-fail hunt (stop 40): jupytext opens a light cell that has metadata with "# +" and the metadata
    (``# + tags=["solution"]``: every solution cell of the shipped exercise notebooks has that tag), and leaves out the
    "# -" of a "# +" cell just above it. Only a bare "# +" opened a cell, so such a cell ran joined to the one above:
    a %%time on it stood below that cell's first line (a UsageError), a demo cell that raises stopped it, and a
    %%writefile cell above swallowed it. Each was 0 of 25 for an honest export; each now passes."""
    header = "# ---\n# jupyter:\n#   jupytext:\n#     text_representation:\n#       format_name: light\n# ---\n\n"
    above = {"time": "", "demo": "# +\nx = np.ones(6)\n\nx.reshape(4)\n",
             "writefile": "# +\n# %%writefile helpers.py\nimport numpy as np\n\nK = 1.0\n"}
    body = {"time": f"# %%time\n{SOFTMAX}", "demo": SOFTMAX,
            "writefile": SOFTMAX.replace("return e", "return helpers.K * e").replace("def", "import helpers\n\n\ndef", 1)}
    for kind in above:
        (tmp_path / f"{kind}.py").write_text(f"{header}import numpy as np\n\n\n{above[kind]}\n{opening}\n{body[kind]}")
        row = grade_one("softmax", tmp_path / f"{kind}.py", seed=2)
        assert row.passed and row.error is None, (kind, row.message)


def test_marker_less_exports_split_where_python_sees_a_new_statement(tmp_path):
    """Red team 20: the first split (at a top-level statement below a blank line, found by parsing the whole file) cut
    inside a string where a statement followed its closing quotes on the same line (a softmax hidden in the string
    passed a file whose own softmax is wrong); it gave up on a file with a syntax error anywhere, or a raw !pip line
    (one cell, so one failing statement stopped every def below it); and it cut jupytext's "# +" cells (a cell with
    blank lines, up to "# -") at their blank lines, so a %%writefile module lost its body. A cell now begins at a
    blank line, outside strings and brackets, above a line at column 0 that is no else, except or decorated def."""
    nbconvert, wrong = "#!/usr/bin/env python\n# coding: utf-8\n\nimport numpy as np\n\n", "def softmax(x):\n    return x\n"
    hidden = nbconvert + wrong + '\nnotes = """\n\n"""; more = 1\nextra = """\n' + SOFTMAX + '# """\n'
    (tmp_path / "hidden.py").write_text(hidden)
    row = grade_one("softmax", tmp_path / "hidden.py", seed=2)
    assert not row.passed and row.probes_passed < 5, row.message                  # Python's softmax, the wrong one
    scratch = nbconvert + 'print "scratch"\n\nget_ipython().system(\'ls\')\n!pip install numpy\n\nif True:\n    K = 1.0\n\n' \
        'else:\n    K = 2.0\n\n@staticmethod\n\ndef helper():\n    pass\n\n' + SOFTMAX.replace("return e", "return K * e")
    (tmp_path / "scratch.py").write_text(scratch)
    row = grade_one("softmax", tmp_path / "scratch.py", seed=2)
    assert row.passed and row.error is None, row.message
    header = "# ---\n# jupyter:\n#   jupytext:\n#     text_representation:\n#       format_name: light\n# ---\n\n"
    module = "import numpy as np\n\nV = 1.0\n\n\n"
    light = f"{header}import numpy as np\nV = 2.0\n\n# +\n# %%writefile mymod.py\n{module}# -\n\nfrom mymod import V\n\n"
    (tmp_path / "light.py").write_text(light + SOFTMAX.replace("return e", "return V * e"))
    row = grade_one("softmax", tmp_path / "light.py", seed=2)
    assert row.passed and row.error is None, row.message


def test_reading_a_hostile_script_takes_time_linear_in_its_size(tmp_path):
    """Red team 20: jupytext's commented magics were found with a pattern whose leading whitespace spanned lines, so
    128,000 blank lines under jupytext's header took a minute, in the grader's own process (holding the lock its other
    threads need: an honest classmate graded beside it under --jobs 2 ran out of time); a line of spaces before
    get_ipython() did the same under nbconvert's header. Each file of about 256 KiB below reads in seconds now."""
    import time
    from attention_edu.checkers.judge.source import read_cells
    jupytext = "# ---\n# jupyter:\n#   jupytext:\n#     text_representation:\n#       format_name: light\n# ---\n"
    nbconvert = "#!/usr/bin/env python\n# coding: utf-8\n"
    for name, text in (("blank.py", jupytext + "\n" * 250_000), ("spaces.py", nbconvert + " " * 250_000 + "get_ipython()("),
                       ("names.py", nbconvert + "a, " * 80_000 + "get_ipython().x("), ("tabs.py", jupytext + "\t" * 250_000),
                       ("active.py", jupytext + "# + " + "active" * 40_000)):      # a cell marker read for "active-py"
        (tmp_path / name).write_text(text)
        start = time.perf_counter()
        read_cells(tmp_path / name, False)
        assert time.perf_counter() - start < 10, name                  # minutes before


@pytest.mark.parametrize("trick", ["formfeed", "formfeed-decorator", "marker-blank-indent", "jupytext-in-a-string"])
def test_the_grader_never_runs_what_python_sees_as_dead_code_or_a_comment(tmp_path, trick):
    """Red team 21: a form feed before an indented def (a new statement to the split, dead code after a return to
    Python), a form feed before a decorator, a "# %%" marker with a blank line between it and an indented def, and
    "jupytext:" in a docstring (which read the comments below it back as magics) each ran a right softmax hidden
    where Python never runs it, and the file passed while Python's own softmax is wrong."""
    nbconvert, right = "#!/usr/bin/env python\n# coding: utf-8\n\nimport numpy as np\n\n\n", SOFTMAX.replace("\n", "\n    ")
    wrong = "def softmax(x):\n    return x / np.sum(x, axis=-1, keepdims=True)\n"
    text = {"formfeed": f"{nbconvert}{wrong}\n\x0c    {right}",
            "formfeed-decorator": f"{nbconvert}def halve(f):\n    return lambda x: f(x) / 2\n\n\n\x0c@halve\n\n{SOFTMAX}",
            "marker-blank-indent": f"import numpy as np\n\n\n{wrong}# %%\n\n    {right}",
            "jupytext-in-a-string": f'"""Mine (no jupytext: by hand)."""\nimport numpy as np\n\n\n{wrong}'
                                    "# %time softmax = lambda x: np.exp(x) / np.sum(np.exp(x), axis=-1, keepdims=True)\n"}
    (tmp_path / "trick.py").write_text(text[trick])
    row = grade_one("softmax", tmp_path / "trick.py", seed=2)
    assert not row.passed and row.probes_passed < 5, row.message


def test_an_export_without_markers_runs_its_lone_calls_and_may_carry_pictures(tmp_path):
    """Red team 21: split at blank lines, a lone setup call (strict_numpy(), which sets np.seterr) became a cell of
    bare expressions and was left out as a display (21 of 25); and a markdown cell holding a pasted picture pushed an
    nbconvert export over 256 KiB, so it ran as a plain module (0 of 25: `import attention_edu` is not allowed). With
    no marker, no statement is left out as a display; markdown, as comments, does not count towards the size."""
    fallback = ("def softmax(x):\n    try:\n        e = np.exp(x)\n        return e / np.sum(e, axis=-1, keepdims=True)\n"
                "    except FloatingPointError:\n        m = np.max(x, axis=-1, keepdims=True)\n"
                "        e = np.exp(x - np.where(np.isfinite(m), m, 0.0))\n"
                "        return e / np.maximum(np.sum(e, axis=-1, keepdims=True), 1e-300)\n")
    picture = "# ![figure](data:image/png;base64," + "A" * 300_000 + ")\n"
    export = ("#!/usr/bin/env python\n# coding: utf-8\n\n" + picture + "\nimport numpy as np\nimport attention_edu as ae\n\n"
              "\ndef strict_numpy():\n    np.seterr(over='raise', invalid='raise')\n\n\nstrict_numpy()\n\n\n" + fallback)
    (tmp_path / "export.py").write_text(export)
    row = grade_one("softmax", tmp_path / "export.py", seed=2)
    assert row.passed and row.error is None, row.message
    (tmp_path / "big.py").write_text(export + 'notes = """\n' + ("#" + "x" * 99 + "\n") * 45_000 + '"""\n')
    row = grade_one("softmax", tmp_path / "big.py", seed=2)     # red team 23: 4.5 MB of "#" lines in a string, not
    assert not row.passed and "`import attention_edu` is not allowed" in row.message, row.message     # markdown


def test_asking_whether_a_module_is_installed_is_no_import(tmp_path):
    """Red team 21: importlib.util.find_spec("torch"), which only asks, failed the submission as an import of torch."""
    asks = "import importlib.util\nimport numpy as np\nHAVE_TORCH = importlib.util.find_spec('torch') is not None\n"
    (tmp_path / "asks.py").write_text(asks + SOFTMAX)
    assert grade_one("softmax", tmp_path / "asks.py", seed=2).passed
    (tmp_path / "imports.py").write_text(asks + "if HAVE_TORCH or True:\n    import torch\n" + SOFTMAX)
    row = grade_one("softmax", tmp_path / "imports.py", seed=2)
    assert not row.passed and "`import torch` is not allowed" in row.message, row.message


def test_asking_about_a_submodule_imports_its_package_as_where_it_is_not_installed(tmp_path):
    """Red team 47: importlib.util.find_spec("torch.nn") imports "torch" first, and that import failed the submission
    as an import of torch, where the guide says asking imports nothing. The package now reads as not installed (the
    ModuleNotFoundError Python raises there), and a denied module's submodule does not bring the module in."""
    asks = ("import importlib.util, sys\nimport numpy as np\n"
            "try:\n    HAVE = importlib.util.find_spec({name!r}) is not None\nexcept ModuleNotFoundError:\n"
            "    HAVE = False\nassert not HAVE and 'ctypes' not in sys.modules, HAVE\n")
    for name in ("torch.nn", "google.colab", "attention_edu.checkers", "ctypes.util", "subprocess.x"):
        (tmp_path / "asks.py").write_text(asks.format(name=name) + SOFTMAX)
        row = grade_one("softmax", tmp_path / "asks.py", seed=2)
        assert row.passed and row.error is None, (name, row.message)
    (tmp_path / "unguarded.py").write_text("import importlib.util\nimportlib.util.find_spec('torch.nn')\n" + SOFTMAX)
    row = grade_one("softmax", tmp_path / "unguarded.py", seed=2)
    assert not row.passed and "No module named 'torch'" in row.message and "not allowed" not in row.message


@pytest.mark.parametrize("cell", ["%%capture" + " --no-d" * 28_000 + " -x\nx = 1\n",       # 5 s at 8,000 options
                                  "import IPython;" * 6_000 + "x = 1  # \U0001F600",           # 40 s
                                  ";".join(["f" + "()" * 300] * 400)])                       # 60 s
def test_reading_a_hostile_notebook_takes_time_linear_in_its_size(tmp_path, cell):
    """Red team 21: a %%capture line of many options IPython refuses (matched by a pattern with two ways to split
    them, holding the grader's lock), many imports on one line (the line re-encoded for each), and chains of calls
    (each unparsed to look for np.seterr) each took the grader a minute or more to read, outside every budget."""
    import time
    start = time.perf_counter()
    notebook_cells(_notebook(tmp_path / "hostile.ipynb", cell))
    assert time.perf_counter() - start < 10


@pytest.mark.parametrize("cells", [
    ("def setup():\n    global SCALE\n    SCALE = 1.0", "setup()"),
    ("settings = {'SCALE': 1.0}", "globals().update(settings)"),
    ("%%writefile helpers.py\nSCALE = 2.0  # a first try", "import helpers", "%%writefile helpers.py\nSCALE = 1.0",
     "import importlib\nimportlib.reload(helpers)", "SCALE = helpers.SCALE")])
def test_a_cell_of_calls_runs_as_in_class_not_as_a_display(tmp_path, cells):
    """False-fail hunt 6: a cell holding only a call (setup(), globals().update(...), importlib.reload(helpers)) was
    left out as a display, so a right softmax that needs what it sets failed 0 of 25 where the notebook passed in
    class; a call may do more than show."""
    row = _grade(tmp_path, "import numpy as np", *cells, "def softmax(x):\n    return SCALE * _softmax(x)",
                 SOFTMAX.replace("def softmax", "def _softmax"), "check_softmax(softmax)")
    assert row.passed, row.message


def test_colabs_restart_cell_is_left_out_as_before(tmp_path):
    """Red team 41: once a cell of calls ran, a lone ``os._exit(00)`` (Colab's "restart the runtime") ended the
    grader's interpreter and failed a notebook that had passed; it is left out, as a display is."""
    assert _code(tmp_path, "import os\nos._exit(00)")[0].startswith("import os")
    assert _code(tmp_path, "os._exit(00)") == []
    row = _grade(tmp_path, "import os\nimport numpy as np", SOFTMAX, "os._exit(00)", "check_softmax(softmax)")
    assert row.passed, row.message


def test_a_cell_that_sets_numpys_error_state_is_not_a_display(tmp_path):
    """Red team 19: a cell holding only ``np.seterr(invalid="raise")`` was left out as a display, so a softmax that
    relies on it (a FloatingPointError fallback for an all −inf row) failed 23 of 25 where the same code as a .py
    passed."""
    fallback = ("def softmax(x):\n    try:\n        z = x - np.max(x, axis=-1, keepdims=True)\n"
                "    except FloatingPointError:\n        m = np.max(x, axis=-1, keepdims=True)\n"
                "        z = x - np.where(np.isfinite(m), m, 0.0)\n    e = np.exp(z)\n"
                "    return e / np.maximum(np.sum(e, axis=-1, keepdims=True), 1e-300)\n")
    row = _grade(tmp_path, "import numpy as np", 'np.seterr(invalid="raise")', fallback, "check_softmax(softmax)")
    assert row.passed, row.message


def test_a_script_of_spyder_or_pycharm_cells_grades_as_its_cells(tmp_path):
    """Spyder and PyCharm (and VS Code, which reads both) mark a cell with #%%, no space: the script was graded as a
    plain .py, so its 'import attention_edu as ae' failed it ("not allowed here") where the same script with # %%
    passed (red team 11C). Its cells now run as those of a # %% script; a wrong one still fails."""
    for name, code in (("ada.py", SOFTMAX), ("bo.py", SOFTMAX.replace("axis=-1", "axis=0"))):
        (tmp_path / name).write_text("#%% imports\nimport numpy as np\nimport attention_edu as ae\nfrom "
                                     f"attention_edu.checkers import check_softmax\n\n#%%\n{code}\n#%%\n"
                                     "check_softmax(softmax)\n")
    right, wrong = (grade_one("softmax", tmp_path / name, seed=2) for name in ("ada.py", "bo.py"))
    assert right.passed and right.error is None, right.message
    assert not wrong.passed and wrong.hint_id == "softmax.wrong-axis", wrong.message


def test_a_script_of_cells_out_of_time_is_told_that_its_main_block_ran(tmp_path):
    """A # %% script runs as a notebook's cells, as __main__, so its if __name__ == "__main__": block (a demo or a
    training loop that a plain .py would skip) runs: out of time, the row said "importing the file did not finish"
    and the student could not tell why (red team 11C)."""
    (tmp_path / "demo.py").write_text(f"import numpy as np\n\n# %%\n{SOFTMAX}\n# %%\nif __name__ == '__main__':\n"
                                      "    import time\n    for step in range(100):\n        time.sleep(0.1)\n")
    row = grade_one("softmax", tmp_path / "demo.py", seed=2, budget=2)
    assert not row.passed and row.error.startswith('running its cells (its `if __name__ == "__main__":` block too) '
                                                   "did not finish within the 2 s"), row.error


def test_an_exported_line_magic_of_several_lines_cannot_move_the_lines_below(tmp_path):
    """A %time line whose statement held line ends (nbconvert writes each line magic on one line; this one is
    written by hand) became several lines of the cell, so every line below was off: the refused import on
    line 9 was told as line 11 (red team 11C). It is now left out, as the other magics the grader does not run."""
    magic = "get_ipython().run_line_magic('time', 'x = 1\\nx = 2\\nx = 3')"
    (tmp_path / "moved.py").write_text(f"# In[1]:\nimport numpy as np\n{magic}\n{SOFTMAX}import socket\n")
    row = grade_one("softmax", tmp_path / "moved.py", seed=2)
    assert not row.passed and _refused("socket", "moved.py, line 9") in row.message, row.message


def test_an_exported_ipython_call_the_grader_cannot_read_back_is_not_told_as_an_unreadable_file(tmp_path):
    """get_ipython().system({[]: 1}): ast.literal_eval raised TypeError (unhashable), which left the reader, and
    the file was told "could not be read as text (unhashable type: 'list')" (red team 11C); the line now stays
    as written, as one the grader cannot read back (its NameError is the cell's), and the notebook is graded."""
    (tmp_path / "odd.py").write_text(f"# In[1]:\nimport numpy as np\n\n# In[2]:\nget_ipython().system({{[]: 1}})\n"
                                     f"\n# In[3]:\n{SOFTMAX}")
    row = grade_one("softmax", tmp_path / "odd.py", seed=2)
    assert row.passed and row.error is None, row.message


def test_debugging_prints_past_the_output_limit_are_dropped_not_an_error(tmp_path):
    """print(x) left in with np.set_printoptions(threshold=sys.maxsize): after 16 MiB of output every print raised
    "OSError: [Errno 27] File too large" (red team 11A), and a right function failed for its prints (false-fail hunt
    4, where a progress line printed at import did the same). What goes past the limit is dropped now, as a notebook
    cuts long output: the function passes, and its report still warns of the prints."""
    debug = SOFTMAX.replace("    top = ", "    print('debug', '.' * (1 << 20))\n    top = ")
    (tmp_path / "chatty.py").write_text("import numpy as np\n" + debug)
    row = grade_one("softmax", tmp_path / "chatty.py", seed=2)
    assert row.passed and row.error is None, row.message
    assert "your function printed while it ran" in row.message and "remove debugging prints" in row.message


def test_a_module_a_notebook_writes_with_writefile_is_imported_as_in_class(tmp_path):
    """A cell ``%%writefile my_softmax.py`` and then ``from my_softmax import softmax`` works in class; the
    grader left the %%writefile cell out and then refused the import, telling the student to write their
    own NumPy code ("`import my_softmax` is not allowed here") of a function that was their own (red team
    12A). The module is now written in the worker's private directory and imported from there; what it
    imports meets the same rule as the notebook's own imports, and a wrong function still fails."""
    folder = tmp_path / "class"
    folder.mkdir()
    for name, body in (("ada", "import numpy as np\n\n" + SOFTMAX), ("bo", "import numpy as np\n\n" + SOFTMAX.replace(
            "axis=-1", "axis=0")), ("cy", "import ctypes\nimport numpy as np\n\n" + SOFTMAX)):
        _notebook(folder / f"{name}.ipynb", f"%%writefile my_softmax.py\n{body}", "from my_softmax import softmax",
                  "check_softmax(softmax)")
    _notebook(folder / "di.ipynb", f"%%writefile -a my_softmax.py\nimport numpy as np\n{SOFTMAX}",   # appends, as in
              "from my_softmax import softmax")                                               # class (red team 59)
    rows = {name: grade_one("softmax", folder / f"{name}.ipynb", seed=2) for name in ("ada", "bo", "cy", "di")}
    assert rows["ada"].passed and rows["ada"].error is None, rows["ada"].message
    assert not rows["bo"].passed and rows["bo"].hint_id == "softmax.wrong-axis", rows["bo"].message
    assert not rows["cy"].passed and _refused("ctypes", "code cell 2, line 1") in rows["cy"].error
    assert rows["di"].passed and rows["di"].error is None, rows["di"].message


def test_a_written_module_named_as_a_standard_one_is_imported_as_in_class(tmp_path):
    """Jupyter imports from the notebook's folder first, so ``%%writefile statistics.py`` then ``from statistics
    import softmax`` works in class (a kernel has not loaded statistics, trace or profile yet). The grader looked in
    the standard library first: "cannot import name 'softmax' from 'statistics'", and a right notebook graded as
    "defines no function 'softmax'". The module written is now found first; its own imports meet the rule. A module
    written as submission.py was the notebook itself ("cannot import name 'softmax' from '__main__'"), which the
    worker had registered under that name too: a notebook's module is now only __main__."""
    folder = tmp_path / "class"
    folder.mkdir()
    for name, body in (("ada", "import numpy as np\n\n" + SOFTMAX), ("bo", "import numpy as np\n\n" + SOFTMAX.replace(
            "axis=-1", "axis=0")), ("cy", "from ctypes import CDLL\nimport numpy as np\n\n" + SOFTMAX)):
        _notebook(folder / f"{name}.ipynb", f"%%writefile statistics.py\n{body}", "from statistics import softmax")
    _notebook(folder / "di.ipynb", f"%%writefile submission.py\nimport numpy as np\n\n{SOFTMAX}",
              "from submission import softmax")      # the name the grader gave a notebook's own module too
    rows = {name: grade_one("softmax", folder / f"{name}.ipynb", seed=2) for name in ("ada", "bo", "cy", "di")}
    assert rows["ada"].passed and rows["ada"].error is None, rows["ada"].message
    assert rows["di"].passed and rows["di"].error is None, rows["di"].message
    assert not rows["bo"].passed and rows["bo"].hint_id == "softmax.wrong-axis", rows["bo"].message
    assert not rows["cy"].passed and _refused("ctypes", "code cell 2, line 1") in rows["cy"].error


def test_a_writefile_cell_with_its_file_name_in_quotes_writes_the_module(tmp_path):
    """IPython reads ``%%writefile "my_softmax.py"`` (quoted, as a name with spaces must be) as the name unquoted.
    The grader's pattern took only a bare name: the cell was left out, the import below refused, and a right
    notebook scored 0 ("`import my_softmax` is not allowed here"). A name in matching quotes is now read too."""
    folder = tmp_path / "class"
    folder.mkdir()
    for name, head, body in (("ada", '"my_softmax.py"', SOFTMAX), ("bo", "'my_softmax.py'", SOFTMAX.replace(
            "axis=-1", "axis=0")), ("cy", "\"my_softmax.py'", SOFTMAX)):      # quotes that do not match: not a name
        _notebook(folder / f"{name}.ipynb", f"%%writefile {head}\nimport numpy as np\n\n{body}",
                  "from my_softmax import softmax")
    rows = {name: grade_one("softmax", folder / f"{name}.ipynb", seed=2) for name in ("ada", "bo", "cy")}
    assert rows["ada"].passed and rows["ada"].error is None, rows["ada"].message
    assert not rows["bo"].passed and rows["bo"].hint_id == "softmax.wrong-axis", rows["bo"].message
    assert not rows["cy"].passed and "`import my_softmax` is not allowed here" in rows["cy"].error, rows["cy"].error


ATTENTION_MODULE = """import numpy as np
from attention_edu import softmax

def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores)
    return weights @ V, weights
"""


def test_a_written_module_may_use_the_package_as_the_notebooks_cells_do(tmp_path):
    """In class, a module a %%writefile cell wrote may import the package (``from attention_edu import softmax``,
    an earlier exercise's function) as the notebook's cells may. The grader rewrites only the cells' imports: the
    module's met the import rule, and a right notebook scored 0 ("asks for your own NumPy code; `import
    attention_edu` is not allowed here"). In a notebook's worker, attention_edu is now the cells' ``ae``. A second
    false-fail hunt (stop 40): the dotted forms, ``from attention_edu.softmax import softmax`` and ``import
    attention_edu.masks as masks``, failed ("'attention_edu' is not a package"); each of its modules is ``ae`` too."""
    folder = tmp_path / "class"
    folder.mkdir()
    dotted = ATTENTION_MODULE.replace("from attention_edu import softmax", "from attention_edu.softmax import softmax\n"
                                      "import attention_edu.masks as masks")
    for name, body in (("ada", ATTENTION_MODULE), ("bo", ATTENTION_MODULE.replace(" / np.sqrt(Q.shape[-1])", "")),
                       ("ed", dotted)):
        _notebook(folder / f"{name}.ipynb", f"%%writefile attention.py\n{body}",
                  "from attention import scaled_dot_product_attention")
    (folder / "cy.py").write_text(ATTENTION_MODULE)         # a .py file: the package is still refused
    rows = {name: grade_one("scaled_dot_product_attention", folder / name, seed=2)
            for name in ("ada.ipynb", "bo.ipynb", "cy.py", "ed.ipynb")}
    assert rows["ada.ipynb"].passed and rows["ada.ipynb"].error is None, rows["ada.ipynb"].message
    assert rows["ed.ipynb"].passed and rows["ed.ipynb"].error is None, rows["ed.ipynb"].message
    assert not rows["bo.ipynb"].passed and rows["bo.ipynb"].error is None, rows["bo.ipynb"].message
    assert not rows["cy.py"].passed and "`import attention_edu` is not allowed here" in rows["cy.py"].error


def test_a_cell_marker_inside_a_string_or_a_block_is_text_not_a_new_cell(tmp_path):
    """A ``# %%`` line at column 0 inside a triple-quoted string, or between two indented lines of a function,
    split a script's cell there: each half failed to parse, so a script that runs with ``python`` graded as
    "defines no function 'softmax'" (red team 12A). Such a line is now a marker only where a statement may
    start and the line below it is not indented; a marker between two cells still splits them."""
    body = SOFTMAX.split("\n")
    in_block = "\n".join(body[:3] + ["# %% a note at column 0"] + body[3:])
    docstring = 'def softmax(x):\n    """Softmax over the last axis.\n\n# %%\n    """\n' + "\n".join(body[1:])
    for name, code in (("ada.py", in_block), ("bo.py", docstring), ("cy.py", in_block.replace("axis=-1", "axis=0"))):
        (tmp_path / name).write_text(f"# %%\nimport numpy as np\nNOTE = '''\n# %%\n'''\n\n# %%\n{code}\n# %%\nx = 1\n")
    rows = {name: grade_one("softmax", tmp_path / name, seed=2) for name in ("ada.py", "bo.py", "cy.py")}
    assert rows["ada.py"].passed and rows["bo.py"].passed, rows["ada.py"].message + rows["bo.py"].message
    assert not rows["cy.py"].passed and rows["cy.py"].hint_id == "softmax.wrong-axis", rows["cy.py"].message


def test_a_cell_left_with_a_bracket_never_closed_fails_alone_in_an_exported_script(tmp_path):
    """A notebook goes on after a cell that does not parse, so a leftover ``print((1, 2)`` cell costs nothing in
    class. In its exported script the marker rule of red team 12A counted no ``# %%`` after that cell (a bracket
    was open), every cell below joined it, and the script graded as "defines no function 'softmax'" with the
    SyntaxError. A marker in open brackets now counts again: the broken cell fails alone, as in class."""
    for name, code in (("ada.py", SOFTMAX), ("bo.py", SOFTMAX.replace("axis=-1", "axis=0"))):
        (tmp_path / name).write_text(f"# %%\nimport numpy as np\n\n# %%\nprint((1, 2)\n\n# %%\n{code}\n")
    rows = {name: grade_one("softmax", tmp_path / name, seed=2) for name in ("ada.py", "bo.py")}
    assert rows["ada.py"].passed and rows["ada.py"].error is None, rows["ada.py"].message
    assert not rows["bo.py"].passed and rows["bo.py"].hint_id == "softmax.wrong-axis", rows["bo.py"].message


def test_an_exported_writefile_cell_writes_the_module_the_script_imports(tmp_path):
    """nbconvert writes a %%writefile cell as get_ipython().run_cell_magic('writefile', ...): it was commented out,
    and the import below it refused (red team 12A). It now writes the module, as the notebook's cell does."""
    written = f"get_ipython().run_cell_magic('writefile', 'my_softmax.py', {'import numpy as np' + chr(10) + SOFTMAX!r})"
    (tmp_path / "ada.py").write_text(_exported(written, "from my_softmax import softmax", "check_softmax(softmax)"))
    row = grade_one("softmax", tmp_path / "ada.py", seed=2)
    assert row.passed and row.error is None, row.message


def test_a_get_ipython_line_inside_a_string_of_an_exported_script_stays_text(tmp_path):
    """Found by red team 13: a get_ipython() line was read back as a magic wherever it stood, inside a string too,
    and the magic's text could close the string: `softmax = _stable` ran in the grader while Python, and a teacher
    reading the file, saw a wrong softmax in a string's neighbour. Only a line where a statement starts is a call."""
    hidden = "get_ipython().run_line_magic('time', '\\x22\\x22\\x22; softmax = _stable; \\x22\\x22\\x22')"
    source = ("# %%\nimport numpy as np\n\n" + SOFTMAX.replace("def softmax", "def _stable")
              + "\ndef softmax(x):\n    return x / x.sum(-1, keepdims=True)\n\nNOTES = \"\"\"\n" + hidden + "\n\"\"\"\n")
    for name, cell in (("string.py", source), ("cell.py", source.replace("def softmax", "def _wrong"))):
        (tmp_path / name).write_text(cell)
        row = grade_one("softmax", tmp_path / name, seed=2)
        assert not row.passed, (name, row.message)


@pytest.mark.parametrize("line", ["files = get_ipython().getoutput('ls')",
                                  "r = get_ipython().run_line_magic('timeit', '-o 1+1')",
                                  "a, b = get_ipython().system('ls')"])
def test_nbconverts_export_of_an_assigned_magic_runs_as_the_notebook(tmp_path, line):
    """Found by red team 13: nbconvert writes `files = !ls` as `files = get_ipython().getoutput('ls')` and
    `r = %timeit -o 1+1` with its target in front; neither was read back, so the cell raised NameError
    (get_ipython) and an honest notebook's softmax, defined below it, was never defined: 0 of 25."""
    (tmp_path / "honest.py").write_text(f"#!/usr/bin/env python\n# coding: utf-8\n\n# In[1]:\n\n\nimport numpy as np\n"
                                        f"{line}\n" + SOFTMAX)
    row = grade_one("softmax", tmp_path / "honest.py", seed=2)
    assert row.passed and row.error is None, row.message


# --- red team 15: false fails of honest submissions ------------------------------------------------

@pytest.mark.parametrize("reads", [
    "import argparse\nparser = argparse.ArgumentParser()\nparser.add_argument('--n', type=int, default=4)\n"
    "args = parser.parse_args()\n",
    "import sys\nN = int(sys.argv[1]) if len(sys.argv) > 1 else 4\nassert sys.argv == ['mine.py'], sys.argv\n"])
def test_a_py_file_that_reads_its_command_line_sees_its_own_name_only(tmp_path, reads):
    """The worker's own arguments (the judge's site folders) were the submission's sys.argv: argparse exited with
    status 2 and int(sys.argv[1]) read a path, 0 of 25 for files that run as ``python mine.py``."""
    path = tmp_path / "mine.py"
    path.write_text("import numpy as np\n" + reads + SOFTMAX)
    row = grade_one("softmax", path, seed=2)
    assert row.passed and row.error is None, row.message
    assert "site-packages" not in row.message


def test_ipythons_builtins_get_ipython_and_display_with_its_options_run_as_in_class(tmp_path):
    """A kernel has get_ipython as a builtin (Colab's check: "google.colab" in str(get_ipython())), and display takes
    options (display_id=True): a NameError, then a TypeError, scored 0 of 25."""
    row = _grade(tmp_path, 'IN_COLAB = "google.colab" in str(get_ipython())\nimport numpy as np',
                 "handle = display('starting', display_id=True)\n" + SOFTMAX,
                 "from IPython.display import display\ndisplay('done', display_id=True, clear=True)\nassert not IN_COLAB")
    assert row.passed and row.error is None, row.message


def test_cell_magics_stacked_at_a_cells_top_run_the_cell_as_in_ipython(tmp_path):
    """%%time above %%capture runs the cell as IPython does; the grader raised 'a %%magic below the first line'."""
    row = _grade(tmp_path, "import numpy as np", "%%time\n%%capture captured\n" + SOFTMAX)
    assert row.passed and row.error is None, row.message
    assert "UsageError" in _code(tmp_path, "x = 1\n%%time\ny = 2")[0]     # below code, still IPython's error


def test_numpys_own_optional_imports_are_not_the_students(tmp_path):
    """np.show_config() imports yaml, np.show_runtime() threadpoolctl: the import rule refused them as if the student
    had, and raised ImportError where NumPy catches ModuleNotFoundError. They now fail as where not installed."""
    path = tmp_path / "mine.py"
    path.write_text("import numpy as np\nnp.show_config()\nnp.show_runtime()\n" + SOFTMAX)
    row = grade_one("softmax", path, seed=2)
    assert row.passed and row.error is None, row.message
    path.write_text("import numpy as np\ntry:\n    import yaml\nexcept ModuleNotFoundError:\n    pass\n" + SOFTMAX)
    row = grade_one("softmax", path, seed=2)      # the student's own import still meets the rule
    assert not row.passed and "`import yaml` is not allowed here" in row.error, row.message


def test_a_cell_magic_below_time_or_capture_is_the_cells_own_as_in_ipython(tmp_path):
    """Red team 16: once stacked magics ran, any %% line below %%capture was commented out, so a %%writefile's
    module ran as the notebook's own code (its import was then refused: 0 of 25) and an %%html cell's text was graded
    as Python (a right softmax there passed a notebook whose own softmax, the one Jupyter ran, is wrong)."""
    module = "%%capture\n%%writefile mysoftmax.py\nimport numpy as np\n\n" + SOFTMAX
    row = _grade(tmp_path, "import numpy as np", module, "from mysoftmax import softmax")
    assert row.passed and row.error is None, row.message
    wrong = "import numpy as np\ndef softmax(x):\n    e = np.exp(x)\n    return e / e.sum(axis=0, keepdims=True)\n"
    row = _grade(tmp_path, wrong, "%%capture\n%%html\n" + SOFTMAX)
    assert not row.passed and row.hint_id == "softmax.wrong-axis", row.message
    assert _code(tmp_path, "%%time\n\n%%bash\nls") == []


def test_ipythons_stand_in_holds_nothing_when_looked_into(tmp_path):
    """Red team 16: `"IPKernelApp" in get_ipython().config`, the usual "am I in Jupyter" test, raised TypeError, so
    the cell stopped before its def: 0 of 25. The stand-in now holds nothing: `in` is false, iterating gives nothing."""
    row = _grade(tmp_path, "import numpy as np", 'if "IPKernelApp" in get_ipython().config:\n'
                 '    get_ipython().run_line_magic("matplotlib", "inline")\nfor name in get_ipython().config:\n'
                 '    raise AssertionError(name)\nshell = get_ipython().config["InteractiveShell"]\n' + SOFTMAX)
    assert row.passed and row.error is None, row.message


@pytest.mark.parametrize("split", ["\r", "\v", "\f", "\x1c", "\x85", "\u2028"])
def test_a_cell_magic_below_time_is_found_where_ipython_splits_the_lines(tmp_path, split):
    """Red team 17: the magic below %%time was looked for at \\n only, while IPython splits a cell's lines as
    str.splitlines does: "%%time\\r%%html" ran the HTML cell's text as Python (a right softmax there passed a notebook
    whose own softmax is wrong)."""
    wrong = "import numpy as np\ndef softmax(x):\n    e = np.exp(x)\n    return e / e.sum(axis=0, keepdims=True)\n"
    row = _grade(tmp_path, wrong, f"%%time{split}%%html\n" + SOFTMAX)
    assert not row.passed and row.hint_id == "softmax.wrong-axis", row.message


@pytest.mark.parametrize("magic", ["%%time\t%%html", "%%time x = 1", "%%time.x", "%%capture --bogus"])
def test_a_cell_magic_line_ipython_refuses_leaves_the_cell_out(tmp_path, magic):
    """Red team 17: IPython ends a magic's name at a space only, %%time takes no statement and %%capture only its
    options; such a cell raises UsageError in class and never runs, but the grader ran it."""
    wrong = "import numpy as np\ndef softmax(x):\n    e = np.exp(x)\n    return e / e.sum(axis=0, keepdims=True)\n"
    row = _grade(tmp_path, wrong, magic + "\n" + SOFTMAX)
    assert not row.passed and row.hint_id == "softmax.wrong-axis", row.message
    assert _grade(tmp_path, wrong, "%%time?\n" + SOFTMAX).passed        # help on %%time: IPython runs the cell too


@pytest.mark.parametrize("cell", ["%%time?\n%%time\n", "%%time??\n%%capture\n", "%%time? \n", "%%time?\t\n",
                                  "x = 1\n%%time?\n%%html\n"])
def test_help_on_a_cell_magic_is_a_line_of_its_own(tmp_path, cell):
    """Red team 18 left this: "%%time?" is IPython's help on %%time (a line magic, pinfo), not %%time, so a cell magic
    line below it raises UsageError and the cell's code below it never runs in class; the grader ran it as stacked
    under %%time. With a space or tab after the "?" the line is no help but a magic IPython cannot find."""
    wrong = "import numpy as np\ndef softmax(x):\n    e = np.exp(x)\n    return e / e.sum(axis=0, keepdims=True)\n"
    row = _grade(tmp_path, wrong, cell + SOFTMAX)
    assert not row.passed and row.hint_id == "softmax.wrong-axis", row.message
    assert _grade(tmp_path, wrong, "x = 1\n%%time??\n" + SOFTMAX).passed     # help below the top: the cell runs on


def test_jupytexts_escaped_cell_magics_are_read_back(tmp_path):
    """Red team 17: jupytext writes a notebook's magics as comments (# %%writefile mymod.py, # %%time); the grader read
    them as cell breaks, so an honest %%writefile notebook exported by jupytext scored 0 of 25, and a # %%time over
    # %%html cell was graded as Python."""
    header = "# ---\n# jupyter:\n#   jupytext:\n#     text_representation:\n#       format_name: percent\n# ---\n\n"
    module = SOFTMAX.replace("def softmax", "import numpy as np\ndef softmax")
    honest = f"# %%\nimport numpy as np\n\n# %%\n# %%capture\n# %%writefile mymod.py\n{module}\n# %%\nfrom mymod import softmax\n"
    (tmp_path / "honest.py").write_text(header + honest)
    row = grade_one("softmax", tmp_path / "honest.py", seed=2)
    assert row.passed and row.error is None, row.message
    wrong = "def softmax(x):\n    e = np.exp(x)\n    return e / e.sum(axis=0, keepdims=True)\n"
    (tmp_path / "html.py").write_text(f"{header}# %%\nimport numpy as np\n{wrong}\n# %%\n# %%time\n# %%html\n{SOFTMAX}")
    row = grade_one("softmax", tmp_path / "html.py", seed=2)
    assert not row.passed and row.hint_id == "softmax.wrong-axis", row.message
    # red team 18: a line magic jupytext comments out runs too (# %time ZERO = 0.0 assigns), and only in jupytext's
    # files: in nbconvert's or VS Code's, "# %%timeit" at a cell's top is the student's own comment, switching it off
    (tmp_path / "line.py").write_text(f"{header}# %%\nimport numpy as np\n# %time ZERO = 0.0\n\n# %%\n"
                                      + SOFTMAX.replace("0.0)", "ZERO)"))
    assert grade_one("softmax", tmp_path / "line.py", seed=2).passed
    for marker in ("# In[2]:\n", "# %%\n"):
        (tmp_path / "off.py").write_text(f"{marker.replace('2', '1')}import numpy as np\n{wrong}\n{marker}# %%timeit\n{SOFTMAX}")
        row = grade_one("softmax", tmp_path / "off.py", seed=2)
        assert row.passed and row.error is None, (marker, row.message)


def test_the_students_own_floating_point_error_state_holds_during_a_call(tmp_path):
    """Red team 17: np.seterr(over="raise") at a file's top, with a FloatingPointError fallback, is right where run
    directly, but the worker's own error state replaced it during each call: 21 of 25."""
    path = tmp_path / "mine.py"
    path.write_text("import numpy as np\nnp.seterr(over='raise', invalid='raise')\n\ndef softmax(x):\n    try:\n"
                    "        e = np.exp(x)\n        return e / np.sum(e, axis=-1, keepdims=True)\n"
                    "    except FloatingPointError:\n        return _stable(x)\n\n" + SOFTMAX.replace("softmax", "_stable"))
    row = grade_one("softmax", path, seed=2)
    assert row.passed and row.error is None, row.message


@pytest.mark.parametrize("split", ["\v", "\f", "\x1c", "\x85", "\u2028"])
def test_the_code_below_time_on_a_line_ipython_splits_runs_as_in_ipython(tmp_path, split):
    """Red team 18: "%%time\\x0cdef softmax..." is two lines to IPython, which runs the def under %%time; the grader
    commented out the whole line, so an earlier right softmax was graded where the kernel's own is wrong."""
    wrong = "def softmax(x):\n    e = np.exp(x)\n    return e / e.sum(axis=0, keepdims=True)\n"
    row = _grade(tmp_path, "import numpy as np\n" + SOFTMAX, f"%%capture{split}" + wrong)
    assert not row.passed and row.hint_id == "softmax.wrong-axis", row.message


@pytest.mark.parametrize("magic, runs", [("%%capture a b", False), ("%%prun --bogus", False), ("%%prun -s", False),
                                         ("%%capture --no-disp", True), ("%%capture 1x", True), ("%%prun -s time", True),
                                         ("%%time\n   %%capture", False)])
def test_the_options_of_a_stacked_magic_are_read_as_ipython_reads_them(tmp_path, magic, runs):
    """Red team 18: %%capture takes one name and argparse's prefixes of its options, %%prun its getopt options
    (D:l:rs:T:q); IPython refuses anything else, and an indented magic, with a UsageError: the cell does not run."""
    wrong = "import numpy as np\ndef softmax(x):\n    e = np.exp(x)\n    return e / e.sum(axis=0, keepdims=True)\n"
    row = _grade(tmp_path, wrong, magic + "\n" + SOFTMAX)
    assert row.passed is runs, row.message


def _mark_in_string(text: str) -> bool | None:
    """Python's own answer: is the line MARK after ``text`` inside a string? None where Python cannot tell."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")                 # "\(" is an invalid escape: a warning, not the question
            compile(text + "\nMARK\n", "<scan>", "exec")
        return False
    except SyntaxError as error:
        last = text.count("\n") + 2
        if "unterminated triple-quoted" in error.msg or "unterminated string" in error.msg and error.lineno == last:
            return True
        return False if "was never closed" in error.msg else None


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.text(alphabet="\"'a#\\(", max_size=10), min_size=1, max_size=3))
def test_the_line_scanner_agrees_with_python_on_where_strings_run(lines):
    """Red team 25: the scanner closed a one-quote string at a triple quote as a whole, so a line ``note = "a`` and
    four more double quotes left no string open where Python opens a triple-quoted one; the marker-less split then ran the string's text (a right
    softmax) as a cell. After every line the scanner must say a string runs on exactly where Python's compiler does."""
    from attention_edu.checkers.judge import scan
    depth, quote = 0, ""
    for line in lines:
        depth, quote, _ = scan(line, depth, quote)
    truth = _mark_in_string("\n".join(lines))
    assert truth is None or bool(quote) == truth, (lines, quote)


@pytest.mark.parametrize("quote", ['"', "'"])
def test_text_that_python_reads_as_a_string_is_never_run(tmp_path, quote):
    """Red team 25, end to end: under nbconvert's header, a right softmax inside the triple-quoted string that a quote,
    a letter and four quotes open ran as a cell of its own and replaced Python's own softmax, which returns zeros (25 of 25 for a wrong file)."""
    wrong = "def softmax(x):\n    return np.asarray(x) * 0.0\n"
    text = (f"#!/usr/bin/env python\n# coding: utf-8\n\nimport numpy as np\n\n{wrong}\nnote = {quote}a{quote * 4}\n\n"
            f"{SOFTMAX}\n{quote * 3}\n")
    (tmp_path / "hidden.py").write_text(text)
    namespace: dict = {}
    exec(compile(text, "hidden.py", "exec"), namespace)          # Python's softmax is the wrong one
    assert not namespace["softmax"](np.ones(3)).any()
    row = grade_one("softmax", tmp_path / "hidden.py", seed=2)
    assert not row.passed and row.probes_passed < 5, row.message


#: The f-string prefixes of Python 3.12+, where a replacement field is code that may hold strings and lines (PEP 701)
NESTED = frozenset({"f", "rf", "fr"})


@pytest.mark.parametrize("lines, nested, plain", [
    (['note = f"{(total', '          != 0).sum()} rows"'], [True, False], [False, False]),
    (['notes = f"{"""', "# In[4]:", '"""}"'], [True, True, False], [False, False, True]),
    (['s = f"{x["a"]}"'], [False], [False]),
    (['s = f"{{x" + "}}"'], [False], [False]),
    (['s = rf"\\N{x}" + f"\\N{DIGIT ONE}"'], [False], [False]),
    (['s = f"{x:{"a"}}"', "t = f'{x:\"}'"], [False, False], [False, False]),
    (['s = f"""{x', '}"""'], [True, False], [True, False]),
    (['s = f"{x  # a comment', '}"'], [True, False], [False, False]),
    (['s = f"{x:', '>{width}}"'], [True, False], [False, False]),
    (['s = af"{"', 'x = 1'], [False, False], [False, False]),          # af: a name, then a plain string
    (['s = x1f"{"', 'x = 1'], [False, False], [False, False]),         # x1f: a name too
    (['p = rf"\\{{"', 'if True: notes = """'], [False, True], [False, True]),   # red team 38: \ escapes no brace
    (['p = rf"\\{x}" + f"\\{{"'], [False], [False]),
    (["s = f'{ {1: 2}[1] }'", "(f'{x!r:>{w}}'"], [False, False], [False, False]),
])
def test_the_line_scanner_reads_f_strings_as_python_3_12_does(lines, nested, plain):
    """Python 3.12 reads an f-string's replacement field as code (PEP 701): it may hold strings in the same quote
    and run over lines. The scanner read every f-string as a plain string, so on 3.12 (found by an outside test on
    3.12 and 3.13) a line inside a field was taken for a shell command and commented out (an honest notebook
    failed with a SyntaxError), and a cell marker inside a string opened in a field split the cell: a right softmax
    in that string ran and passed a wrong file 25/25. After each line, is a string open? Python 3.12's reading
    (``nested``) and 3.11's (``plain``), on every Python; the third line of the second case opens a new string on
    3.11, whose f"{" is a whole string."""
    from attention_edu.checkers.judge import scan
    for formatted, expected in ((NESTED, nested), (frozenset(), plain)):
        depth, quote, states = 0, "", []
        for line in lines:
            depth, quote, _ = scan(line, depth, quote, formatted)
            states.append(bool(quote))
        assert states == expected and depth == (1 if lines[-1].startswith("(") else 0), (formatted, lines, quote)


def _statement_level(lines: list[str], after: list[str]) -> tuple[bool, int] | None:
    """Python's tokenizer on a valid program: before the line MARK placed after ``lines`` (``after`` follows it), is
    a string or an f-string open, and how many brackets outside them? None where the tokenizer cannot say."""
    text, mark = "\n".join([*lines, "MARK", *after]) + "\n", len(lines) + 1
    fstrings, depth = 0, 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.NAME and token.string == "MARK" and token.start == (mark, 0):
                return fstrings > 0, depth
            if token.type in (tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", None)) and token.end[0] >= mark:
                return True, depth
            fstrings += {getattr(tokenize, "FSTRING_START", None): 1, getattr(tokenize, "FSTRING_END", None): -1}.get(
                token.type, 0)
            if token.type == tokenize.OP and not fstrings and token.string in "([{)]}":
                depth = max(depth + (1 if token.string in "([{" else -1), 0)
    except (tokenize.TokenError, SyntaxError):
        return None
    return None


def test_the_line_scanner_agrees_with_this_pythons_tokenizer_on_valid_programs():
    """Before every line of a valid program the scanner must say what this Python's tokenizer says: a string open
    (an f-string's field counts: a line there starts no statement) and how many brackets. On 3.12+ that is PEP 701's
    reading of f-strings (nested quotes, fields over lines), on 3.10 and 3.11 the older one. Random programs from
    pieces that meet at quotes, braces and colons, kept where they compile (a few thousand of 40,000)."""
    from attention_edu.checkers.judge import scan
    pieces = ['"', "'", "a", "f", "{", "}", ":", "#", "(", ")", " ", "r", '"""', "\'\'\'", 'f"""{', "f'{", 'f"{', "!r", "\\",
              'rf"', "\\{"]
    draw, checked = random.Random(42), 0
    for _ in range(40_000):
        lines, after = ([("".join(draw.choice(pieces) for _ in range(draw.randint(0, 8))))
                         for _ in range(draw.randint(low, 3))] for low in (1, 0))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                compile("\n".join([*lines, "MARK", *after]) + "\n", "<program>", "exec")
        except (SyntaxError, ValueError):
            continue
        truth, depth, quote, joined = _statement_level(lines, after), 0, "", False
        for line in lines:
            depth, quote, joined = scan(line, depth, quote)
        if truth is not None and not joined:
            checked += 1
            assert (bool(quote), depth) == truth, (lines, after, quote, depth)
    assert checked > 1000, checked


def test_a_cell_marker_in_a_string_opened_in_an_f_string_field_is_text(tmp_path, monkeypatch):
    """The outside test's attack, read as Python 3.12 reads it (the scanner's prefixes set to 3.12's here, so the
    split is checked on every Python): the export's own softmax is the wrong one above; the right one stands in a
    string opened inside an f-string's field, between "# In[4]:" and "# In[5]:", and must stay in that cell."""
    from attention_edu.checkers import judge
    from attention_edu.checkers.judge.source import read_cells
    monkeypatch.setattr(judge, "FORMATTED", NESTED)
    wrong = "def softmax(x):\n    e = np.exp(x)\n    return e / np.sum(e, axis=0, keepdims=True)\n"
    text = (f"#!/usr/bin/env python\n# coding: utf-8\n\n# In[1]:\n\n\nimport numpy as np\n\n\n# In[2]:\n\n\n{wrong}\n\n"
            f'# In[3]:\n\n\nnotes = f"{{"""\n# In[4]:\n\n\n{SOFTMAX}\n\n# In[5]:\n"""}}"\n')
    (tmp_path / "export.py").write_text(text)
    cells, notebook = read_cells(tmp_path / "export.py", False)
    assert notebook and len(cells) == 3 and SOFTMAX in cells[2][1] and cells[2][1].lstrip().startswith("notes"), cells
    monkeypatch.setattr(judge, "FORMATTED", frozenset())       # as 3.11 reads it: f"{" is a whole string
    assert len(read_cells(tmp_path / "export.py", False)[0]) == 5


def test_a_line_inside_an_f_string_field_is_never_read_as_a_magic(tmp_path, monkeypatch):
    """The outside test's false fail, read as Python 3.12 reads it: "!= 0).sum()" on a line of its own inside a
    replacement field was commented out as a shell command, and the honest cell failed with a SyntaxError."""
    from attention_edu.checkers import judge
    monkeypatch.setattr(judge, "FORMATTED", NESTED)
    cell = SOFTMAX.replace("    return", '    note = f"{(total\n               != 0).sum()} rows"\n    return')
    assert _code(tmp_path, "import numpy as np", cell)[1].strip() == cell.strip()


@pytest.mark.skipif(sys.version_info < (3, 12), reason="nested f-strings are Python 3.12+ syntax (the scanner's "
                    "reading of them is tested above on every Python)")
def test_on_python_3_12_the_f_string_attack_fails_and_the_honest_cell_passes(tmp_path):
    """End to end on a Python that runs nested f-strings: the wrong file fails, the honest notebook passes."""
    wrong = "def softmax(x):\n    e = np.exp(x)\n    return e / np.sum(e, axis=0, keepdims=True)\n"
    text = (f"#!/usr/bin/env python\n# coding: utf-8\n\n# In[1]:\n\n\nimport numpy as np\n\n\n# In[2]:\n\n\n{wrong}\n\n"
            f'# In[3]:\n\n\nnotes = f"{{"""\n# In[4]:\n\n\n{SOFTMAX}\n\n# In[5]:\n"""}}"\n')
    (tmp_path / "export.py").write_text(text)
    assert not grade_one("softmax", tmp_path / "export.py", seed=2).passed
    cell = SOFTMAX.replace("    return", '    note = f"{(total\n               != 0).sum()} rows"\n    return')
    assert _grade(tmp_path, "import numpy as np", cell).passed


PERCENT = "# ---\n# jupyter:\n#   jupytext:\n#     text_representation:\n#       format_name: percent\n# ---\n\n"
UNIFORM = "def softmax(x):\n    return np.ones_like(x) / x.shape[-1]\n"     # wrong: uniform weights
RIGHT_LAMBDA = ("softmax = lambda x: (lambda e: e / np.where((s := e.sum(-1, keepdims=True)) == 0, 1, s))(np.exp(x - "
                "np.where(np.isfinite(m := x.max(-1, keepdims=True)), m, 0)))")


@pytest.mark.parametrize("kind", ["nbconvert", "percent", "notebook", "markdown", "hidden-cell"])
def test_a_time_magic_runs_its_own_line_alone_and_markdown_never_runs(tmp_path, kind):
    """Red team 26: IPython's %time compiles its own line alone when it runs, so a %time line that opens a
    triple-quoted string raises a SyntaxError there and opens no string; the grader ran the statement as code, and the string it opened carried
    the lines below (comments, to Python and IPython) into the cell: a right softmax in a comment replaced the wrong
    one the notebook defines (25 of 25). Under jupytext's header, "# %time" lines in a markdown cell ran as magics
    too, and the line scanner read the magic's open quote so that a later "# %%" marker was ignored (a cell holding
    the wrong def went into the string). Each file's own softmax is the uniform one, in IPython as in Python."""
    opener = 'note = """'
    files = {
        "nbconvert": ("#!/usr/bin/env python\n# coding: utf-8\n\n# In[1]:\n\n\nimport numpy as np\n\n\n"
                      f"{UNIFORM}\n\n# In[2]:\n\n\nget_ipython().run_line_magic('time', {opener!r})\n"
                      f'# """; {RIGHT_LAMBDA}\n'),
        "percent": f'{PERCENT}# %%\nimport numpy as np\n{UNIFORM}\n# %%\n# %time {opener}\n# """; {RIGHT_LAMBDA}\n',
        "markdown": (f"{PERCENT}# %%\nimport numpy as np\n{UNIFORM}\n# %% [markdown]\n# Timed in class:\n#\n"
                     f"# %time {RIGHT_LAMBDA}\n"),
        "hidden-cell": (f"{PERCENT}# %%\nimport numpy as np\n\n{SOFTMAX}\n# %%\n# %time {opener}\n\n# %%\n{UNIFORM}\n"
                        '# %%\n# """\n'),
    }
    if kind == "notebook":
        path = tmp_path / "sub.ipynb"
        _notebook(path, f"import numpy as np\n{UNIFORM}", f'%time {opener}\n# """; {RIGHT_LAMBDA}')
    else:
        path = tmp_path / "sub.py"
        path.write_text(files[kind])
        magics = types.SimpleNamespace(run_line_magic=lambda name, line: exec(compile(line, "%time", "exec"), namespace))
        namespace: dict = {"get_ipython": lambda: magics}           # %time as IPython runs it: its line compiled alone
        with contextlib.suppress(SyntaxError):
            exec(compile(files[kind], "sub.py", "exec"), namespace)  # Python's (and IPython's) softmax: the uniform one
        assert np.allclose(namespace["softmax"](np.array([1.0, 2.0, 4.0])), 1 / 3)
    row = grade_one("softmax", path, seed=2)
    assert not row.passed and row.probes_passed < 5, row.message


@pytest.mark.parametrize("kind", ["percent", "notebook"])
def test_a_time_magic_on_a_whole_statement_still_runs_it(tmp_path, kind):
    """The other side of red team 26's fix: ``%time softmax = ...`` on one line, or joined by a backslash, assigns as
    in IPython, and a percent cell's commented "# %time" line still runs (in a code cell, not a markdown one)."""
    joined = RIGHT_LAMBDA.replace(" = lambda x: ", " = \\\n    lambda x: ")
    if kind == "notebook":
        path = tmp_path / "sub.ipynb"
        _notebook(path, f"import numpy as np\n{UNIFORM}", f"%time {joined}")
    else:
        path = tmp_path / "sub.py"
        path.write_text(f"{PERCENT}# %%\nimport numpy as np\n{UNIFORM}\n# %% [markdown]\n# Notes.\n\n# %%\n"
                        f"# %time {RIGHT_LAMBDA}\n")
    row = grade_one("softmax", path, seed=2)
    assert row.passed and row.error is None, row.message


LIGHT = "# ---\n# jupyter:\n#   jupytext:\n#     text_representation:\n#       format_name: light\n# ---\n\n"


@pytest.mark.parametrize("kind", ["time-tab", "time-tab-export", "md-percent", "active-py-percent", "md-light",
                                  "active-py-light"])
def test_what_jupyter_never_runs_is_never_graded(tmp_path, kind):
    """Red team 27: IPython ends a magic's name at a space, so ``%time<TAB>softmax = right`` is a magic it does not
    know (a UsageError) and the softmax stays the wrong one; the grader ran the statement. And jupytext reads a cell
    under ``# %% [markdown]``, ``# + [markdown]``, or marked active in the .py only (``tags=["active-py"]``,
    ``active="py"``), as markdown or raw, which Jupyter never runs, code or not; the grader ran it. Each file holds a
    right softmax, then the wrong one the notebook keeps (the grade is the wrong one's: under 5 of 25)."""
    right = SOFTMAX.replace("def softmax(", "def right(")
    prose = {"md-percent": "# %% [markdown]\nsoftmax = right\n", "md-light": "# + [markdown]\nsoftmax = right\n# -\n",
             "active-py-percent": '# %% tags=["active-py"]\nsoftmax = right\n',
             "active-py-light": '# + active="py"\nsoftmax = right\n# -\n'}
    if kind == "time-tab":
        path = tmp_path / "sub.ipynb"
        _notebook(path, f"import numpy as np\n{right}", f"import numpy as np\n{UNIFORM}", "%time\tsoftmax = right")
    else:
        path = tmp_path / "sub.py"
        path.write_text(f"#!/usr/bin/env python\n# coding: utf-8\n\n# In[1]:\n\n\nimport numpy as np\n{right}\n\n"
                        f"# In[2]:\n\n\n{UNIFORM}\n\n# In[3]:\n\n\nget_ipython().run_line_magic('time\\tsoftmax', '= right')\n"
                        if kind == "time-tab-export" else
                        f"{PERCENT if 'percent' in kind else LIGHT}import numpy as np\n\n\n{right}\n\n{UNIFORM}\n\n"
                        f"{prose[kind]}")
    row = grade_one("softmax", path, seed=2)
    assert not row.passed and row.probes_passed < 5, row.message


def test_a_jupytext_cell_active_in_the_notebook_still_runs(tmp_path):
    """The other side: a cell active in both (``active="ipynb,py"``) is code, a percent cell's free title that
    happens to hold "active" and "py" (``# %% Interactive check with numpy``) is code, and markdown cells above them
    change nothing of the code cells below."""
    light = (f"{LIGHT}import numpy as np\n\n\n{UNIFORM}\n\n# + [markdown]\n# Notes.\n# -\n\n"
             f'# + active="ipynb,py"\n{SOFTMAX}# -\n')
    percent = f"{PERCENT}# %%\nimport numpy as np\n{UNIFORM}\n# %% [markdown]\n# Notes.\n\n# %% Interactive numpy\n{SOFTMAX}"
    for name, text in (("light.py", light), ("percent.py", percent)):
        (tmp_path / name).write_text(text)
        row = grade_one("softmax", tmp_path / name, seed=2)
        assert row.passed and row.error is None, (name, row.message)


def test_a_checker_call_under_deep_nesting_is_dropped_in_one_walk(tmp_path):
    """Red team 76: 98 nested ifs around one checker call whose arguments are chains of unary minus (a 256 KiB cell)
    cost the grader a minute of its own CPU, before any sandbox or budget: the cell filter walked the whole subtree
    again at every level. It walks once now; the call still goes, and the ifs stay."""
    depth = 98
    call = "check_causal_mask(" + ",".join("-" * 60 + "f" for _ in range(4000)) + ")"
    cell = "\n".join([" " * level + "if x:" for level in range(depth)] + [" " * depth + call])
    notebook = _notebook(tmp_path / "deep.ipynb", "import numpy as np\nx = False", cell)
    start = time.process_time()
    cells = [code for _, code in notebook_cells(notebook)]
    assert time.process_time() - start < 15, "the cell filter took as long as before red team 76"
    assert "check_causal_mask" not in cells[-1] and cells[-1].count("if x:") == depth, cells[-1][:300]
