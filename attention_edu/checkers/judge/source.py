"""A submission's code as the judge reads it: a ``.py`` file's text, a notebook's cells.

A notebook runs as it ran in class (docs/teachers.md, "Collect"), less its checker calls and display-only cells. Its
imports of ``attention_edu``, however nested, bind the worker's ``ae`` (the sandbox cannot import the package; ``ae``
offers the helpers the judge computes), and of IPython stand-ins. Edits keep line numbers."""

import ast
import itertools
import json
import re
import sys
import textwrap
from pathlib import Path
from typing import Iterator

from . import commented as _commented, python_text, read_submission, scan

__all__ = ["notebook_cells", "read_cells", "BUILTINS"]

_LINE_END = re.compile(r"\r\n|\r|\n")     # Python's parser's line ends (str.splitlines' also: U+2028, \x0c ...)
MAX_CODE = 256 << 10     #: The most characters a notebook's code cells may hold in all (the course's: about 10,000).
MAX_CELLS = 2000     #: The most code cells with code the grader runs (the course's notebooks have about 30).
#: A cell magic line IPython runs its cell under as Python (a name ends at a space; %%time takes no statement).
_OPT = r"( +--no-(std(o(u(t)?)?|e(r(r)?)?)|d(i(s(p(l(a(y)?)?)?)?)?)?))*"     # %%capture's, as argparse takes them
_STACKED = re.compile(rf"%%(time|capture{_OPT}( +[^\s-]\S*)?{_OPT}|prun( +(-[rq]+|-[DlsT] *\S+))*)[ \t]*")
_HELP = re.compile(r"%%[\w*]+(\.[\w*]+)*\?\??")     # %%time?: IPython's help on a magic (pinfo), then the lines below
_WRITEFILE = re.compile(r"%%(?:writefile|file) +(-a +)?([\"']?)(?:\./)?((?:\w+/)*\w+\.py)\2[ \t]*\r?\n(.*)", re.S)
#: A line IPython runs as a magic, a shell command or help: %magic, !ls, t = %timeit -o f(), x = !ls, np.exp?
_MAGIC = re.compile(r"\s*(([\w.]+(\s*,\s*[\w.]+)*\s*=\s*)?[%!?]|[\w.*]+\?\??\s*$)")
#: A cell's first line in an exported notebook (# In[3]:, # %%, #%%; not jupytext's # %%time), its IPython calls.
_IN = re.compile(r"^#[ \t]*(In\[[ \d]*\]:|%%([ \t].*)?)[ \t]*$", re.M)
_ESCAPED = re.compile(r"^([ \t]*)# (%(?!%([ \t]|$))|!)", re.M)      # the magics jupytext comments out: # %%time, # !ls
_GET_IPYTHON = re.compile(       # (each part of a pattern a student's line meets matches one way only: time linear)
    r"([ \t]*(?:[\w.]+(?: *, *[\w.]+)* *= *)?)get_ipython\(\)\.(run_\w+_magic|system|getoutput)\((.*)\)\s*")
_JUPYTEXT = re.compile(r"# ---\n(#.*\n){0,40}?#[ \t]+jupytext:")     # jupytext's header, at the file's top
#: A jupytext cell Jupyter never runs: markdown, raw, or active in the .py only (tags=["active-py"], active="py")
_PROSE = re.compile(r"#.*(\[(markdown|md|raw)\]|[\"']active-py[\"']|active=[\"']py[\"'])")
_GOES_ON = re.compile(r"(else|elif|except|finally)\b")     # a line at column 0 that goes on the statement above
#: What the grader binds where a notebook imports IPython, which it does not run: display prints; Markdown, HTML, Latex
#: and Math are str; any other name does nothing, called, read, set or indexed, and holds nothing ("x" in it is False).
_INERT = ('type("StandIn", (__import__("types").SimpleNamespace,), {**dict.fromkeys(("__call__", "__getattr__", '
          '"__getitem__"), lambda s, *a, **k: s), "__contains__": lambda *a: False, "__iter__": lambda s: iter(())})')
_SHOW = "lambda *objects, **options: print(*objects)"     # display(x, display_id=True) prints x
_DISPLAY = f"{_INERT}(display={_SHOW}, Markdown=str, HTML=str, Latex=str, Math=str)"
BUILTINS = {"display": _SHOW, "get_ipython": f"{_INERT}()"}      # IPython's, as the worker binds them in a notebook
_IPYTHON = {"IPython": f"{_INERT}(display={_DISPLAY})", "IPython.display": _DISPLAY, "IPython.core.display": _DISPLAY}


def _ipython_call(line: str, checkers: set[str]) -> str:
    """A line of an exported notebook with IPython's calls as the notebook had them: %magic, !shell, %%time."""
    found = _GET_IPYTHON.fullmatch(line)         # files = get_ipython().getoutput('ls') was files = !ls
    try:
        args = ast.literal_eval(f"({found[3]},)")
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):     # TypeError: no match, {[]: 1}
        return line
    if found[2] == "run_cell_magic" and len(args) == 3 and all(type(a) is str for a in args):
        cell = f"%%{args[0]} {args[1]}\n{args[2]}"     # %%time runs its body, %%writefile writes it, %%bash is left out
        return f"{found[1]}if True: exec({_cell_code(cell, checkers) or 'pass'!r})"
    if found[2] == "run_line_magic" and len(args) == 2 and all(
            type(a) is str and not _LINE_END.search(a) for a in args):    # one line: the lines below keep their numbers
        return f"{found[1]}%{args[0]} {args[1]}"     # as the notebook had it: %time's statement runs
    return _commented(line)


def read_cells(path: str | Path, notebook: bool, data: bytes | None = None) -> tuple[list[tuple[str, str]], bool]:
    """(label, code) of the cells a submission runs (``data``: its bytes, where read), and whether as a notebook's: a
    notebook's, an export's (by markers, or by its header a cell per run of statements), on its lines; else the .py."""
    if notebook:
        return notebook_cells(path, data), True
    raw = python_text(read_submission(path) if data is None else data)
    jupytext = bool(_JUPYTEXT.match(raw))    # the headers of jupytext's, nbconvert's (--no-prompt too) and Colab's
    export = jupytext or raw.startswith("#!/usr/bin/env python\n# coding: utf-8") or "generated by Colab" in raw[:1000]
    code = sum(len(line) + 1 for line in raw.split("\n") if not line.lstrip().startswith("#"))    # markdown aside
    if code > MAX_CODE or len(raw) > 16 * MAX_CODE or not (export or _IN.search(raw)):     # (a string's "#" lines too)
        return [(Path(path).name, raw)], False     # parsing costs 500 bytes a byte
    text = "".join(re.sub(r"\n.*", "\n", c) if _PROSE.match(c, 0, 200) else _ESCAPED.sub(r"\1\2", c)  # prose blank,
                   for c in re.split(r"(?m)^(?=#[ \t]*(?:%%|\+|-[ \t]*$))", raw)) if jupytext else raw   # magics back
    lines, checkers, starts, breaks, block, marker = text.split("\n"), _checker_names(), [-1], [], False, None
    depth, quote, joined, gap, last = 0, "", False, None, ""       # last: the last statement's first line
    for index, line in enumerate(lines):     # a marker in a string or above an indented line (blank lines between)
        if marker is not None and line.strip():        # is text; in open brackets it counts (that cell fails alone)
            starts, marker = starts + ([] if line[0].isspace() else [marker]), None
        if _IN.fullmatch(line) and not (quote or joined):
            marker = index
        if not (depth or quote or joined):   # IPython's calls only where a statement starts, never in a string
            lines[index] = _ipython_call(line, checkers)
            if not line.strip() or line.lstrip()[0] in "#%!":   # with no marker, a cell begins at the blank line
                opened = jupytext and bool(re.match(r"#\s*\+", line))  # above a statement at column 0 (comments,
                block = opened or block and line.rstrip() != "# -"     # magics between; not an else, nor a decorated
                gap = index if opened or not (line.strip() or block) else gap    # def), or below jupytext's "# +"
            else:                                             # (metadata may follow: "# + tags=[...]") up to its "# -"
                if gap is not None and not line[0].isspace() and not _GOES_ON.match(line) and last[:1] != "@":
                    breaks.append(gap)                   # (a form feed, as a space, starts no statement for Python)
                gap, last = None, line.lstrip()
        depth, quote, joined = scan(line, depth, quote) if depth or quote or joined or not _MAGIC.match(line) else (
            depth, quote, line.endswith("\\"))               # IPython reads a magic's line alone (or joined by \)
    split = len(starts) == 1 and marker is None          # no marker: displays run (a lone setup() call is one)
    starts += breaks if split else [] if marker is None else [marker]
    if len(starts) > MAX_CELLS or sum(starts) > 16 * MAX_CODE:     # each cell is padded to its line: 2,000 cells
        raise ValueError(f"it has {len(starts) - 1:,} cells in {len(lines):,} lines, more than the grader runs")
    ends = starts[1:] + [len(lines)]        # each cell on the script's own lines: errors name them as in a .py
    codes = [(first, _cell_code("\n".join(lines[first + 1:end]), checkers, split)) for first, end in zip(starts, ends)]
    return [(Path(path).name, "\n" * (first + 1) + code) for first, code in codes if code is not None], True


def _checker_names() -> set[str]:
    """The names of the package's checkers: ``check_<exercise>`` for every exercise, ``check_answer``."""
    from .. import EXERCISES                     # not at import time: the checkers package imports the judge
    return {f"check_{name}" for name in EXERCISES} | {"check_answer"}


def _checker_calls(node: ast.AST, checkers: set[str]) -> set[int]:
    """The calls of a checker, bare or as ``ae.checkers.check_softmax``, in ``node`` (by ``id``)."""
    return {id(call) for call in ast.walk(node) if isinstance(call, ast.Call)
            and getattr(call.func, "attr", getattr(call.func, "id", None)) in checkers}     # a name, or an attribute


def _dropped(statement: ast.stmt, checkers: set[str]) -> list[tuple[ast.stmt, str]]:
    """(statement, what replaces it) for its checker calls: ``pass``, or for ``res = check_softmax(f)`` a stand-in
    that reads as passed, so ``assert res.passed`` runs on as in class (the grader's own probes give the mark); of a
    ``with``, ``if``, ``for`` or ``try`` whose blocks hold every such call only those inside (its defs stay)."""
    calls = _checker_calls(statement, checkers)
    if not calls or isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return []                                # defining it runs nothing of its body
    inner = [s for field in ("body", "orelse", "finalbody") for s in getattr(statement, field, [])]
    inner += [s for handler in getattr(statement, "handlers", []) for s in handler.body]
    if inner and set().union(*(_checker_calls(s, checkers) for s in inner)) == calls:
        return [d for s in inner for d in _dropped(s, checkers)]
    targets = getattr(statement, "targets", None) or [getattr(statement, "target", None)]     # x: T = ..., x += ...
    assigns = targets[0] and getattr(statement, "value", None)      # not a for's target; if check_softmax(f).passed:
    return [(statement, f"{' = '.join(map(ast.unparse, targets))} = {_INERT}(passed=True)" if assigns else "pass")]


def _ours(module: str | None, package: str = "attention_edu") -> bool:
    """Whether a module name is in ``package``: attention_edu (which the sandbox cannot import), or IPython."""
    return (module or "").partition(".")[0] == package


def _package_imports(statement: ast.stmt) -> Iterator[tuple[ast.stmt, str]]:
    """(import, what replaces it) for every import in a statement, however nested, of attention_edu (the worker's
    ``ae`` and its names, a submodule's too) and of IPython (its stand-ins: display prints, the rest is inert)."""
    local = {id(node) for scope in ast.walk(statement) if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef))
             for node in ast.walk(scope)}        # in a function, "ae = ae" would read a local ae before assigning it
    for node in ast.walk(statement):
        ae = 'globals()["ae"]' if id(node) in local else "ae"
        if isinstance(node, ast.ImportFrom) and _ours(node.module, "IPython"):
            yield node, "; ".join(f"{a.asname or a.name} = {_IPYTHON.get(node.module, _INERT + '()')}.{a.name}"
                                  for a in node.names if a.name != "*") or "pass"
        elif isinstance(node, ast.ImportFrom) and _ours(node.module):    # attention_edu.softmax.softmax is ae.softmax
            names = [(a.asname or a.name, a.name) for a in node.names if a.name != "*"] or [
                (name, name) for name in getattr(sys.modules.get(node.module), "__all__", ())]    # import *
            yield node, "; ".join(f"{bound} = {ae}.{name}" for bound, name in names) or "pass"
        elif isinstance(node, ast.Import) and any(_ours(a.name) or _ours(a.name, "IPython") for a in node.names):
            kept = [a for a in node.names if not _ours(a.name) and not _ours(a.name, "IPython")]   # import numpy as np
            parts = [ast.unparse(ast.Import(names=kept))] if kept else []
            parts += [f"{a.asname or 'attention_edu'} = {ae}" for a in node.names if _ours(a.name)]  # a.b binds a
            parts += [f"{a.asname or 'IPython'} = {_IPYTHON.get(a.name if a.asname else 'IPython', _INERT + '()')}"
                      for a in node.names if _ours(a.name, "IPython")]     # import IPython.display as ipd
            yield node, "; ".join(parts)


def _replace(lines: list[str], edits: list[tuple[ast.stmt, str]]) -> None:
    """Put each edit's text where its node stood (columns count UTF-8 bytes), the other lines a node spanned left
    empty: a line at a time, the last first (an edit moves nothing above it), each line encoded once however many
    edits it holds (one at a time, 6,000 imports on one line took 40 s)."""
    by_line: dict[int, list] = {}
    for node, text in edits:
        by_line.setdefault(node.lineno - 1, []).append((node.col_offset, node, text))
    for first in sorted(by_line, reverse=True):
        data, pieces, at = lines[first].encode(), [], 0
        for column, node, text in sorted(by_line[first], key=lambda edit: edit[0]):
            pieces += [data[at:column].decode(), text]
            at = node.end_col_offset
            if node.end_lineno - 1 > first:        # it goes on below: the tail of its last line comes up
                data = lines[node.end_lineno - 1].encode()
                lines[first + 1:node.end_lineno] = [""] * (node.end_lineno - 1 - first)
        lines[first] = "".join(pieces) + data[at:].decode()


def _ipython_line(line: str) -> str:
    """A line as the grader runs it: magics, shell, help commented out (%time runs its line); a %% line raises."""
    text = line.lstrip()
    if text.startswith("%%") and not _HELP.fullmatch(text):
        return line[:len(line) - len(text)] + "raise RuntimeError('UsageError: a %%magic below the first line')"
    if run := re.fullmatch(r"%run +((?:\w+/)*\w+\.py)\s*", text):    # a script a %%writefile cell wrote (red team 59)
        return f"{line[:len(line) - len(text)]}exec(compile(open({run[1]!r}).read(), {run[1]!r}, 'exec'))"
    if text[:6] == "%time ":          # IPython ends a magic's name at a space ("%time\tx" is no magic it knows)
        statement, indent = text[6:].lstrip(), line[:len(line) - len(text)]
        try:          # IPython's %time compiles its own line alone as it runs (a backslash at the end joins the next)
            ast.parse("" if statement.endswith("\\") else statement)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as error:   # "%time s = \"\"\"": no string opens
            return f"{indent}raise SyntaxError({'%time: ' + str(getattr(error, 'msg', error))!r})"
        return indent + statement
    return _commented(line) if _MAGIC.match(line) else line


def _cell_code(source: str, checkers: set[str], displays: bool = False) -> str | None:
    """The code a cell contributes, or None for a cell of checker calls and (unless ``displays``) displays only."""
    heads = list(itertools.takewhile(lambda line: not line.strip() or len(line) < 200 and _STACKED.fullmatch(
        line.rstrip()), source.splitlines(True)))     # %%time, %%capture: as IPython splits lines (a long one: refused)
    source = "\n" * len(heads) + (inner := source[sum(map(len, heads)):])     # the magics' lines kept, empty
    if inner.lstrip().startswith("%%") and not _HELP.fullmatch(inner.lstrip().splitlines()[0]):   # a cell magic
        written = _WRITEFILE.match(inner.lstrip())     # (under %%time too) is not run, but %%writefile's module is
        return written and f"open({written[3]!r}, '{'aw'[not written[1]]}', encoding='utf-8').write({written[4]!r})"
    lines = textwrap.dedent("\n".join(_LINE_END.split(source))).removesuffix("\n").split("\n")   # as in IPython
    depth, quote, joined, magic = 0, "", False, False
    for index, line in enumerate(lines):     # IPython reads a magic only where a statement starts, as Python does:
        if magic or not (depth or quote or joined):     # not inside brackets, a string, after a backslash: (a\n != b)
            lines[index] = "# " + line if magic else _ipython_line(line)
        magic = lines[index] in ("# " + line, _commented(line)) and line.endswith("\\")    # "!pip install \" goes on
        depth, quote, joined = scan(lines[index], depth, quote)
    try:
        tree = ast.parse("\n".join(lines))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return "\n".join(lines)                  # kept: running it reports the error to the student
    edits = [edit for statement in tree.body for edit in _dropped(statement, checkers)]
    checks = [statement for statement, _ in edits]
    rest = [statement for statement in tree.body if statement not in checks]
    if all(isinstance(statement, ast.Expr) for statement in rest) and {text for _, text in edits} <= {"pass"} and not (
            displays or any(isinstance(n, ast.NamedExpr) or isinstance(n, ast.Call) and getattr(n.func, "attr", getattr(
                n.func, "id", "")) not in ("print", "display", "_exit") for s in rest for n in ast.walk(s))):
        return None     # values shown, Colab's os._exit(00) restart; (f := g) assigns f; a call may do more (setup());
        # a call's name is read, not unparsed: f().g().h()... would cost the chain's depth squared (red team 59)
    gone = {id(node) for statement in checks for node in ast.walk(statement)}
    edits += [edit for statement in rest for edit in _package_imports(statement) if id(edit[0]) not in gone]
    _replace(lines, edits)
    return "\n".join(lines)


def notebook_cells(path: str | Path, data: bytes | None = None) -> list[tuple[str, str]]:
    """(label, code) of every code cell a notebook submission runs (see the module doc)."""
    notebook = json.loads((read_submission(path) if data is None else data).decode("utf-8-sig"))   # Notepad's BOM
    if type(notebook) is dict and "worksheets" in notebook:
        raise ValueError("it is in nbformat 3, from Jupyter before 2015: open it in Jupyter and save it again")
    listed = notebook.get("cells", []) if type(notebook) is dict else None
    if type(listed) is not list or not all(type(c) is dict for c in listed):
        raise ValueError("its cells are not a list of cells")
    sources = [cell.get("source", "") for cell in listed if cell.get("cell_type") == "code"]
    for index, source in enumerate(sources):
        if not (type(source) is str or type(source) is list and all(type(s) is str for s in source)):
            raise ValueError(f"code cell {index + 1} has a source that is not text")
        sources[index] = "".join(source)
    if sum(map(len, sources)) > MAX_CODE:        # parsing costs the judge about 500 bytes a character
        raise ValueError(f"its code cells hold more than {MAX_CODE:,} characters")
    checkers = _checker_names()
    cells = [(f"code cell {index + 1}", code) for index, source in enumerate(sources)
             if (code := _cell_code(source, checkers)) is not None]
    if len(cells) > MAX_CELLS:                   # each crosses to the worker as values of one message
        raise ValueError(f"it has {len(cells):,} code cells to run, more than the {MAX_CELLS:,} the grader runs")
    return cells
