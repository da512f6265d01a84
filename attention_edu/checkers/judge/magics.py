"""IPython's magics as the grader runs a notebook's cells: in the sandbox, without IPython.

A line magic, a shell command or help is commented out, as :func:`line` says, except what a notebook's own code
depends on in class: ``%time``'s statement runs, ``%run`` runs a script the notebook wrote, and :func:`writefile`
writes the module a ``%%writefile`` cell holds (docs/teachers.md, "Collect"). Nothing here runs a shell.
"""

import ast
import re
from pathlib import PurePosixPath

from . import commented

__all__ = ["STACKED", "HELP", "MAGIC", "line", "writefile"]

#: A cell magic line IPython runs its cell under as Python (a name ends at a space; %%time takes no statement).
_OPT = r"( +--no-(std(o(u(t)?)?|e(r(r)?)?)|d(i(s(p(l(a(y)?)?)?)?)?)?))*"     # %%capture's, as argparse takes them
STACKED = re.compile(rf"%%(time|capture{_OPT}( +[^\s-]\S*)?{_OPT}|prun( +(-[rq]+|-[DlsT] *\S+))*)[ \t]*")
HELP = re.compile(r"%%[\w*]+(\.[\w*]+)*\?\??")     # %%time?: IPython's help on a magic (pinfo), then the lines below
#: A line IPython runs as a magic, a shell command or help: %magic, !ls, t = %timeit -o f(), x = !ls, np.exp?
MAGIC = re.compile(r"\s*(([\w.]+(\s*,\s*[\w.]+)*\s*=\s*)?[%!?]|[\w.*]+\?\??\s*$)")
_NAME = r"(?:[\w-][\w.-]*/)*[\w-][\w.-]*"     # a file in the private directory or below it: my-sm.py, data/cfg.json
#: %%writefile name (or %%file), quoted or not, in a folder or not, a module or data, -a (append) before or after it
_WRITEFILE = re.compile(rf"%%(?:writefile|file) +(-a +|--append +)?([\"']?)(?:\./)?({_NAME})\2"
                        r"( +-a| +--append)?[ \t]*\r?\n(.*)", re.S)
#: %run of a script of the notebook's own: ./ before it, quotes around it, .py left out (IPython adds it), a comment
_RUN = re.compile(rf"%run +([\"']?)(?:\./)?({_NAME}?)(\.py)?\1[ \t]*(#.*)?")


def line(text: str) -> str:
    """A line as the grader runs it: magics, shell, help commented out (%time runs its line, %run its script); a %%
    line raises, as IPython's UsageError does below a cell's first line."""
    bare, indent = text.lstrip(), text[:len(text) - len(text.lstrip())]
    if bare.startswith("%%") and not HELP.fullmatch(bare):
        return indent + "raise RuntimeError('UsageError: a %%magic below the first line')"
    if run := _RUN.fullmatch(bare):      # as IPython's: a namespace of its own, whose names the notebook's then get,
        path = run[2] + ".py"            # even where it raises or exits, which ends nothing else (red teams 59, 60)
        code = (f"_ran = {{'__name__': '__main__', '__file__': {path!r}, '__builtins__': __builtins__}}\ntry:\n    "
                f"exec(compile(open({path!r}).read(), {path!r}, 'exec'), _ran)\nexcept BaseException:\n    pass\n"
                "globals().update({k: v for k, v in _ran.items() if k[:2] != '__'})\ndel _ran")
        return f"{indent}exec({code!r})"
    if bare[:6] == "%time ":          # IPython ends a magic's name at a space ("%time\tx" is no magic it knows)
        statement = bare[6:].lstrip()
        try:          # IPython's %time compiles its own line alone as it runs (a backslash at the end joins the next)
            ast.parse("" if statement.endswith("\\") else statement)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as error:   # "%time s = \"\"\"": no string opens
            return f"{indent}raise SyntaxError({'%time: ' + str(getattr(error, 'msg', error))!r})"
        return indent + statement
    return commented(text) if MAGIC.match(text) else text


def writefile(cell: str) -> str | None:
    """The code that writes what a ``%%writefile`` cell holds (its folder made first, as a notebook's ``!mkdir`` would
    have, which the grader does not run; the text ending in a line break, as IPython's), or None for another magic."""
    found = _WRITEFILE.match(cell)
    if found is None:
        return None
    path, mode, text = found[3], "a" if found[1] or found[4] else "w", found[5] + "\n" * (not found[5].endswith("\n"))
    return (f"__import__('os').makedirs({str(PurePosixPath(path).parent)!r}, exist_ok=True); "
            f"open({path!r}, {mode!r}, encoding='utf-8').write({text!r})")
