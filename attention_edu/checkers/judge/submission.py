"""A student's submission on disk -- a ``.py`` file or an exercise notebook -- and its function.

The caller never runs a submission's code: :class:`SubmittedFunction` is a
small picklable stand-in that, inside the child process of each call (see
:mod:`.harness`), executes the submission and calls the function it
defines. Whatever the file does at import time (print, exit, crash, change
NumPy's global state) therefore happens in that child and nowhere else.

A notebook contributes, cell by cell, its imports, definitions and assignments
that call nothing; whatever computes, prints, plots or checks is left out (the
checker never shares the notebook's variables), and so are cells tagged
``demo`` and IPython magics such as ``%matplotlib inline``.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
import sys
import time
import types
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .harness import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT, call

__all__ = ["Submission", "SubmittedFunction", "notebook_cells", "Row", "grade_one", "FIELDS"]

#: The columns of ``--csv`` and the keys of every ``--json`` object, in order.
FIELDS = ("file", "passed", "attempted", "status", "hint_id", "probe", "probes_passed", "probes_total",
          "summary", "seconds", "error")
_IMPORT_TIMEOUT = 10.0
#: Modules a submission may import that the caller imports first (see Submission.preload).
_PRELOAD = ("numpy", "math", "matplotlib.pyplot", "attention_edu")


def _kept(node: ast.stmt) -> bool:
    """What a notebook contributes: imports, definitions, and assignments that call nothing.

    The checker calls the function with its own inputs and never shares the notebook's
    variables, so cells that compute, print or plot need not run (and would run once per call).
    """
    if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return True
    cheap = not any(isinstance(inner, ast.Call) for inner in ast.walk(node))
    return isinstance(node, (ast.Assign, ast.AnnAssign)) and cheap


def _cell_code(source: str) -> str:
    lines = [("# " + line) if line.lstrip().startswith(("%", "!")) else line
             for line in source.splitlines()]
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError:
        return "\n".join(lines)              # keep it: running it reports the error to the student
    for node in tree.body:
        if not _kept(node):
            for index in range(node.lineno - 1, node.end_lineno):
                lines[index] = ""
    return "\n".join(lines)


def notebook_cells(path: str | Path) -> list[str]:
    """The code a notebook contributes, cell by cell (see :func:`_kept`); demo cells and magics left out.

    Examples
    --------
    >>> import json, tempfile, os
    >>> cells = [{"cell_type": "code", "metadata": {}, "source": "def f(x):\\n    return x\\n"},
    ...          {"cell_type": "code", "metadata": {}, "source": "check_softmax(f)"}]
    >>> with tempfile.NamedTemporaryFile("w", suffix=".ipynb", delete=False) as handle:
    ...     json.dump({"cells": cells}, handle)
    >>> [len(code.strip().splitlines()) for code in notebook_cells(handle.name)]    # the check call is gone
    [2, 0]
    >>> os.unlink(handle.name)
    """
    notebook = json.loads(Path(path).read_text(encoding="utf-8"))
    cells = []
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") != "code" or "demo" in cell.get("metadata", {}).get("tags", []):
            continue
        source = cell.get("source", "")
        cells.append(_cell_code(source if isinstance(source, str) else "".join(source)))
    return cells


@dataclass(frozen=True)
class Submission:
    """A ``.py`` file or an ``.ipynb`` notebook holding a student's code."""

    path: str

    @property
    def is_notebook(self) -> bool:
        return self.path.endswith(".ipynb")

    def preload(self) -> None:
        """Import, in the caller, the well-known modules the submission imports, so that every
        child inherits them instead of importing them again per call (only these, never its own)."""
        code = "\n".join(notebook_cells(self.path)) if self.is_notebook else Path(self.path).read_text("utf-8")
        for name in _PRELOAD:
            if re.search(rf"^\s*(?:import|from)\s+{re.escape(name)}\b", code, re.M):
                importlib.import_module(name)

    def run(self) -> dict[str, Any]:
        """Execute the code in a fresh module; its namespace. Only ever called in a child process.

        A notebook runs cell by cell, and a cell that raises is passed over (the next cells may
        still define what is graded, as in Jupyter after an error); a file runs as a whole.
        """
        module = types.ModuleType("attention_edu_submission")
        module.__file__ = self.path
        sys.modules[module.__name__] = module     # dataclasses, pickle and friends look it up here
        if not self.is_notebook:
            exec(compile(Path(self.path).read_text(encoding="utf-8"), self.path, "exec"), module.__dict__)
        errors = module.__dict__.setdefault("__cell_errors__", [])
        for index, code in enumerate(notebook_cells(self.path) if self.is_notebook else ()):
            try:
                exec(compile(code, f"{self.path}, code cell {index + 1}", "exec"), module.__dict__)
            except Exception as err:  # e.g. a cell that calls a function still left as a stub
                errors.append(f"code cell {index + 1} raised {type(err).__name__}: {err}")
        return module.__dict__

    def functions(self) -> tuple[list[str], list[str]]:
        """The functions the submission defines and the errors of its cells (runs it: in a child)."""
        namespace = self.run()
        names = sorted(name for name, value in namespace.items() if callable(value) and not name.startswith("_")
                       and getattr(value, "__module__", None) == "attention_edu_submission")
        return names, namespace["__cell_errors__"]


@dataclass(frozen=True)
class SubmittedFunction:
    """The function ``name`` of a submission; calling it runs the submission first (in the child)."""

    submission: Submission
    name: str

    def __call__(self, *args: Any) -> Any:
        function = self.submission.run().get(self.name)
        if not callable(function):
            raise NameError(f"the submission defines no function {self.name!r}")
        return function(*args)

    def __repr__(self) -> str:
        return f"{self.name} from {self.submission.path}"



@dataclass
class Row:
    """One graded submission."""

    file: str
    passed: bool = False
    attempted: bool = False
    status: str = "not graded"
    hint_id: str | None = None
    probe: str | None = None
    probes_passed: int | None = None
    probes_total: int | None = None
    summary: str = ""
    seconds: float = 0.0
    error: str | None = None
    usage: bool = False          # the error is the caller's (no such file/function), not the student's
    message: str = ""            # the full check message

    def record(self) -> dict[str, Any]:
        row = asdict(self)
        return {key: row[key] for key in FIELDS}


def _functions(submission: Submission) -> list[str]:
    return submission.functions()


def grade_one(exercise: str, path: str | Path, function: str | None = None,
              timeout: float = DEFAULT_TIMEOUT, memory_mb: float = DEFAULT_MEMORY_MB) -> Row:
    """Grade one submission; never raises for anything the submission does.

    Examples
    --------
    >>> grade_one("softmax", "/nonexistent.py").error
    'no such file: /nonexistent.py'
    """
    from ..registry import CHECKERS, EXERCISES

    start = time.perf_counter()
    row = Row(str(path))
    spec = EXERCISES[exercise]
    name = function or spec.function
    if not Path(path).is_file():
        row.error, row.usage = f"no such file: {path}", True
    elif Path(path).suffix not in (".py", ".ipynb"):
        row.error = f"not a Python file or notebook: {path}"
    else:
        submission = Submission(str(path))
        loaded = call(_functions, (submission,), ("submission",), max(timeout, _IMPORT_TIMEOUT), memory_mb)
        what = "running the notebook" if submission.is_notebook else "importing the file"
        if loaded.timed_out:
            row.error = f"{what} did not finish within {max(timeout, _IMPORT_TIMEOUT):g} s"
        elif loaded.ended:
            row.error = f"{what} {loaded.ended}"
        elif loaded.error is not None:
            where = f" ({loaded.error.line})" if loaded.error.line else ""
            row.error = f"{what} raised {loaded.error.type_name}: {loaded.error.message}{where}"
        elif name not in loaded.value[0]:
            row.usage = not loaded.value[1]
            row.error = (f"{path} defines no function {name!r} (functions found: "
                         f"{', '.join(loaded.value[0]) or 'none'})" + "".join(f"; {e}" for e in loaded.value[1][:1]))
        else:
            submission.preload()
            result = CHECKERS[exercise](SubmittedFunction(submission, name), strict=False, timeout=timeout,
                                      memory_mb=memory_mb)
            row.passed, row.attempted, row.status = result.passed, result.attempted, result.status
            row.hint_id, row.probe, row.summary = result.hint_id, result.probe, result.summary
            row.probes_passed, row.probes_total = result.probes_passed, result.probes_total
            row.message = str(result)
    if row.error is not None:
        row.attempted = not row.usage
        row.status = "failed" if row.attempted else "not graded"
        row.summary = row.error
        row.message = f"check {exercise}: {row.status}. {row.error}"
    row.seconds = round(time.perf_counter() - start, 3)
    return row
