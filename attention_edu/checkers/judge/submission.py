"""A student's submission on disk -- a ``.py`` file or an exercise notebook -- graded into one row.

The judge reads the file as text and never runs it: :func:`grade_one` hands its code to a
sandboxed interpreter of its own (:class:`.remote.Remote`), runs the exercise's probes through
it, and builds the row from what the judge alone knows (the file it was given, the probes, the
reference). Every string that came from the student's code is escaped (:func:`escape`).

A notebook runs as it ran in class: every code cell in order, except the cells that call a
checker or only display (bare expressions), with IPython magics commented out and the
checker's own imports (``import attention_edu``) left out; plots go to matplotlib's Agg backend.
Its ``ae`` then offers only the earlier exercises' functions (``ae.softmax`` in the attention
exercise), computed by the judge on plain data; the exercise's own answer is not among them.
"""

from __future__ import annotations

import ast
import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .harness import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT
from .remote import DEFAULT_BUDGET, Remote

__all__ = ["notebook_cells", "Row", "grade_one", "FIELDS", "escape"]

#: The columns of ``--csv`` and the keys of every ``--json`` object, in order.
FIELDS = ("file", "passed", "attempted", "status", "hint_id", "probe", "probes_passed", "probes_total",
          "mistakes", "seed", "sandbox", "seconds", "error")


def escape(text: Any) -> Any:
    r"""``text`` with every control character but the newline written as an escape (``\x1b``, ``\r``).

    >>> escape("ok\x1b[2K\rpassed\n")
    'ok\\x1b[2K\\rpassed\n'
    """
    if not isinstance(text, str):
        return text
    return "".join(c if c == "\n" or c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in text)


def _checker_plumbing(node: ast.stmt) -> bool:
    """An ``import attention_edu`` (the notebook's checkers), never part of a submission."""
    if isinstance(node, ast.Import):
        return all(alias.name.partition(".")[0] == "attention_edu" for alias in node.names)
    return isinstance(node, ast.ImportFrom) and (node.module or "").partition(".")[0] == "attention_edu"


def _cell_code(source: str) -> str | None:
    """The code a cell contributes, or None for a cell that calls a checker or only displays."""
    lines = [("# " + line) if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines()]
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError:
        return "\n".join(lines)              # kept: running it reports the error to the student
    calls = [n.func for n in ast.walk(tree) if isinstance(n, ast.Call)]
    names = {getattr(f, "id", None) or getattr(f, "attr", None) for f in calls}
    if any(str(name).startswith("check_") for name in names) or all(isinstance(n, ast.Expr) for n in tree.body):
        return None
    for node in tree.body:
        if _checker_plumbing(node):
            lines[node.lineno - 1:node.end_lineno] = ["pass"] + [""] * (node.end_lineno - node.lineno)
    return "\n".join(lines)


def notebook_cells(path: str | Path) -> list[tuple[str, str]]:
    """(label, code) of every code cell a notebook submission runs (see the module doc).

    Examples
    --------
    >>> import tempfile, os
    >>> cells = [{"cell_type": "code", "metadata": {}, "source": "import attention_edu as ae\\nTINY = 1e-300"},
    ...          {"cell_type": "code", "metadata": {}, "source": "check_softmax(f)"},
    ...          {"cell_type": "code", "metadata": {}, "source": "def f(x):\\n    return x\\n"}]
    >>> with tempfile.NamedTemporaryFile("w", suffix=".ipynb", delete=False) as handle:
    ...     json.dump({"cells": cells}, handle)
    >>> notebook_cells(handle.name)
    [('code cell 1', 'pass\\nTINY = 1e-300'), ('code cell 3', 'def f(x):\\n    return x')]
    >>> os.unlink(handle.name)
    """
    notebook = json.loads(Path(path).read_text(encoding="utf-8"))
    cells = []
    for index, cell in enumerate(c for c in notebook.get("cells", []) if c.get("cell_type") == "code"):
        source = cell.get("source", "")
        code = _cell_code(source if isinstance(source, str) else "".join(source))
        if code is not None:
            cells.append((f"code cell {index + 1}", code))
    return cells


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
    mistakes: list = field(default_factory=list)
    seed: int | None = None
    sandbox: list = field(default_factory=list)
    seconds: float = 0.0
    error: str | None = None
    usage: bool = False          # the error is the caller's (no such file/function), not the student's
    message: str = ""            # the full check message

    def record(self) -> dict[str, Any]:
        row = asdict(self)
        return {key: row[key] for key in FIELDS}


def _load_error(load: dict, what: str, timeout: float) -> str | None:
    kind = load.get("error")
    if kind in ("timeout", "budget"):
        return f"{what} did not finish within {max(10.0, timeout):g} s"
    if kind in ("ended", "garbled"):
        return f"{what} {load['ended'][0]}"
    if isinstance(kind, dict):
        line = f" ({kind.get('line')})" if kind.get("line") else ""
        return f"{what} raised {kind.get('type')}: {kind.get('message')}{line}"
    return None


def grade_one(exercise: str, path: str | Path, function: str | None = None,
              timeout: float = DEFAULT_TIMEOUT, memory_mb: float = DEFAULT_MEMORY_MB,
              seed: int | None = None, budget: float = DEFAULT_BUDGET) -> Row:
    """Grade one submission in its own sandboxed interpreter; never raises for anything it does.

    Examples
    --------
    >>> grade_one("softmax", "/nonexistent.py").error
    'no such file: /nonexistent.py'
    """
    from .. import EXERCISES
    from ..runner import run_checker

    start = time.perf_counter()
    row, spec = Row(str(path), seed=seed), EXERCISES[exercise]
    name = function or spec.function
    notebook = str(path).endswith(".ipynb")
    what = "running the notebook" if notebook else "importing the file"
    if not Path(path).is_file():
        row.error, row.usage = f"no such file: {path}", True
    elif Path(path).suffix not in (".py", ".ipynb"):
        row.error = f"not a Python file or notebook: {path}"
    else:
        try:
            cells = notebook_cells(path) if notebook else [(Path(path).name, Path(path).read_text("utf-8"))]
        except (UnicodeDecodeError, ValueError, AttributeError) as err:
            cells, row.error = [], f"the file could not be read as {'a notebook' if notebook else 'text'} ({err})"
        allowed = spec.allowed_imports + (("matplotlib",) if notebook else ())
        earlier = list(EXERCISES)[:list(EXERCISES).index(exercise)]     # a notebook's ae.softmax and so on
        helpers = {n: EXERCISES[n].reference for n in earlier} if notebook else {}
        with Remote(cells, str(path), name, allowed, notebook, timeout, memory_mb, budget,
                    helpers=helpers) as remote:
            load = remote.start() if row.error is None else {}
            row.sandbox = list(remote.layers)
            row.error = row.error or _load_error(load, what, timeout) or next(iter(remote.violations), None)
            functions, cell_errors = load.get("functions", []), load.get("cell_errors", [])
            if row.error is None and name not in functions:
                row.usage = not cell_errors
                row.error = (f"{path} defines no function {name!r} (functions found: "
                             f"{', '.join(functions) or 'none'})" + "".join(f"; {e}" for e in cell_errors[:1]))
            if row.error is None:
                result = run_checker(spec, None, strict=False, timeout=timeout, memory_mb=memory_mb,
                                     invoke=remote, seed=seed)
                row.passed, row.attempted, row.status = result.passed, result.attempted, result.status
                row.hint_id, row.probe = result.hint_id, result.probe
                row.probes_passed, row.probes_total = result.probes_passed, result.probes_total
                row.mistakes = [{k: m.get(k) for k in ("hint_id", "probe", "hint")} for m in result.mistakes]
                row.message = str(result)
                row.error = next(iter(remote.violations), None)
    if row.error is not None:
        row.passed, row.attempted = False, not row.usage
        row.status = "failed" if row.attempted else "not graded"
        row.message = f"check {exercise}: {row.status}. {row.error}"
    row.seconds = round(time.perf_counter() - start, 3)
    return _escaped(row)


def _escaped(row: Row) -> Row:
    """The row with every string escaped (the file name too: it may be a student's choice)."""
    for key, value in vars(row).items():
        setattr(row, key, escape(value))
    row.mistakes = [{k: escape(v) for k, v in m.items()} for m in row.mistakes]
    row.sandbox = [escape(str(layer)) for layer in row.sandbox]     # reported by the worker: the student's reach
    return row
