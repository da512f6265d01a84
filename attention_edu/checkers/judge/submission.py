"""A student's submission on disk, a ``.py`` file or an exercise notebook, graded into one row.

The judge never runs the file itself: :func:`grade_one` hands the code :mod:`.source` reads to a sandboxed
interpreter of its own (:class:`Remote`), runs the probes through it, and builds the row from what the judge alone
knows (the file it was given, the probes, the reference). Every string from the student's code is escaped.
"""

import contextlib
import errno
import importlib.util
import os
import pkgutil
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from . import ErrorInfo, Outcome, Refused, escape, read_submission, sandbox
from ... import worked_examples
from ...dot_product import scaled_dot_product_attention
from ...masks import causal_mask, padding_mask
from ...multi_head import merge_heads, multi_head_attention, split_heads
from ...softmax import softmax, softmax_jacobian
from ..records import hidden_cases, probe_counts, student_seed
from .gradebook import Row
from .harness import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT, Child, texts
from .source import BUILTINS, notebook_cells, read_cells

__all__ = ["notebook_cells", "Remote", "grade_one", "stop_all"]

#: Seconds a submission may use in all (starting, importing and every call).
DEFAULT_BUDGET = 60.0
#: What a student reads when an import is refused ({name} is the module).
NOT_ALLOWED = ("this exercise asks for your own NumPy code; `import {name}` is not allowed here (it may use the "
               "exercise's modules and the standard library less what starts processes or reaches the network): take "
               "it out of the file you hand in, or paste a helper module of your own into it")
_WORKER = str(Path(__file__).with_name("worker.py"))
#: The folders the judge imports the worker's own packages from: ``python -I`` leaves out PYTHONPATH and a user's own.
_SITES = sorted({str(Path(spec.origin).parents[1 if spec.submodule_search_locations else 0])     # a package's parent
                 for spec in map(importlib.util.find_spec, ("numpy", "array_api_compat", "landlockpy"))
                 if spec and spec.origin})
#: attention_edu and its modules, each the cells' ``ae`` in a %%writefile module (``from attention_edu.softmax import``)
_MODULES = ["attention_edu", *(f"attention_edu.{module.name}"
                               for module in pkgutil.iter_modules([str(Path(__file__).parents[2])]))]
#: The exercises' names that the package has too: what a notebook's ``ae.<name>`` is in class (its own arguments).
PACKAGE = {f.__name__: f for f in (softmax, causal_mask, padding_mask, scaled_dot_product_attention, split_heads,
                                   merge_heads, multi_head_attention, softmax_jacobian)}
_LIVE, _LOCK = set(), threading.Lock()       # every Remote with a live sandbox, for Ctrl-C (see stop_all); its lock


def stop_all(stop: threading.Event) -> None:
    """End now the live sandboxes of the grading that ``stop`` belongs to, and start none of its again (Ctrl-C during
    ``grade``); another grading in the same Python (a notebook's ``cli.main`` in a thread) goes on (red team 48)."""
    stop.set()
    with _LOCK:
        live = [remote for remote in _LIVE if remote.stop is stop]
    for remote in live:
        remote.close()


class Remote:
    """One submission in its own sandboxed :mod:`.worker`; ``remote(args, names) -> Outcome``.

    A call that fails ends the worker; the next call starts a fresh one while the ``budget``
    (seconds for starting, importing and every call) lasts. :meth:`close` kills the whole sandbox.
    """

    def __init__(self, cells: list[tuple[str, str]], file: str, function: str, allowed: tuple[str, ...],
                 notebook: bool = False, timeout: float = DEFAULT_TIMEOUT, memory_mb: float | None = DEFAULT_MEMORY_MB,
                 budget: float = DEFAULT_BUDGET, helpers: dict | None = None, stop: threading.Event | None = None):
        packages, modules = sandbox.package_dirs(tuple(allowed))
        read, library = sandbox.readable(tuple(packages)), [*packages, *sandbox.standard_library()]
        self.config = {"cells": [list(c) for c in cells], "file": Path(file).name, "function": function, "read": read,
                       "allowed": modules, "message": NOT_ALLOWED, "notebook": notebook, "library": library,
                       "helpers": sorted(helpers or {}), "builtins": BUILTINS, "modules": _MODULES}
        self.timeout, self.memory_mb, self.budget, self.helpers = timeout, memory_mb, budget, helpers or {}
        self.deadline, self.stop, self.spent = time.monotonic() + budget, stop or threading.Event(), [0.0]  # stop_all
        self.child = self.box = self.private = self.printed_fd = None        # child: a Child while it runs
        # the highest folder above the file that holds nothing the worker reads (the class's), empty in its sandbox
        needs = [*read, *library, *_SITES, _WORKER, sys.executable, sys.prefix, sys.exec_prefix, tempfile.gettempdir()]
        needs = [path(p) + os.sep for p in needs for path in (os.path.realpath, os.path.abspath)]   # a venv's links
        folder, self.hide = os.path.dirname(os.path.realpath(file)), ""
        while folder != os.path.dirname(folder) and not any(p.startswith(folder + os.sep) for p in needs):
            self.hide, folder = folder, os.path.dirname(folder)
        self.layers, self.violations, self.started = [], [], False   # the sandbox's layers; import-rule messages

    def start(self) -> dict | Outcome:
        """Start the interpreter and run the submission: its load report, or how that failed."""
        self.close()
        with _LOCK:
            if self.stop.is_set():
                return Outcome(ended="was not run: grading was interrupted", ended_id="harness.crash")
            _LIVE.add(self)
            self.private = tempfile.mkdtemp(prefix="attention-edu-student-")
            self.printed_fd, printed_end = os.pipe()    # a pipe, not a file on the judge's disk (harness.Child)
        self.config["printed"] = printed_end      # the worker writes to it, the judge reads it
        env = {"PATH": "/usr/bin:/bin", "HOME": self.private, "LANG": "C.UTF-8", "MPLBACKEND": "Agg",
               "MPLCONFIGDIR": self.private, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
               "MKL_NUM_THREADS": "1", "TMPDIR": self.private}
        memory = 4096 if self.memory_mb is None else int(self.memory_mb) + 512   # NumPy itself, then calls
        limits = sandbox.Limits(memory_mb=memory, cpu_seconds=int(self.budget) + 5)
        try:
            self.box = sandbox.spawn([sys.executable, "-I", _WORKER, *_SITES], cwd=self.private, env=env,
                                     limits=limits, pass_fds=(printed_end,), hide=self.hide)
        finally:
            os.close(printed_end)                     # the sandbox's alone: the pipe ends when its processes do
        pipes = self.box.process
        child = self.child = Child(pipes.stdin.fileno(), pipes.stdout.fileno(), self.printed_fd, self._end,
                                   self.deadline, self.helpers, self.spent)     # (close() may drop self.child now)
        ready = child.ask(self.config, max(10.0, self.timeout))     # answered before student code runs
        if isinstance(ready, Outcome) or type(ready.get("layers")) is not list:
            child.end()
            return ready if isinstance(ready, Outcome) else Outcome(ended="did not start", ended_id="harness.crash")
        layers = self.box.layers + [str(layer)[:40] for layer in ready["layers"][:8]]
        self.layers = [layer for layer in self.layers if layer in layers] if self.started else layers   # the weakest
        self.started = True
        load = child.ask(None, self.budget)      # the submission's budget bounds it (Child's deadline)
        child.printed()                                 # what the submission printed while loading
        self.violations += [v for v in child.violations if v not in self.violations]
        return load

    def _end(self) -> int | None:
        self.box.__exit__(None, None, None)           # kills every process of it, closes the pipes
        return self.box.process.returncode

    def __call__(self, args: tuple, names: tuple[str, ...]) -> Outcome:
        over = Outcome(ended=f"used up the {self.budget:g} s the whole submission may take", ended_id="harness.timeout")
        if time.monotonic() >= self.deadline:
            return over
        if (self.child is None or not self.child.alive) and isinstance(self.start(), Outcome):
            return Outcome(ended="could not be started again after the previous call failed", ended_id="harness.crash")
        child = self.child                   # close() (Ctrl-C, another thread) may drop it meanwhile
        if child is None:
            return Outcome(ended="was not run: grading was interrupted", ended_id="harness.crash")
        reply = child.ask({"args": list(args), "names": list(names)}, self.timeout)
        if isinstance(reply, Outcome) and reply.timed_out and time.monotonic() >= self.deadline:
            return over
        self.violations += [v for v in child.violations if v not in self.violations]
        return child.outcome(reply, names, self.memory_mb)

    def close(self) -> None:
        """Kill the sandbox (every process it started) and remove the private directory."""
        with _LOCK:
            child, private, printed_fd = self.child, self.private, self.printed_fd
            self.child = self.private = self.printed_fd = None
            _LIVE.discard(self)
        if child is not None:
            child.end()
        if printed_fd is not None:
            os.close(printed_fd)
        if private is not None:
            with contextlib.suppress(OSError, RecursionError):      # folders nested deeper than Python recurses
                shutil.rmtree(private)
            # Left: a folder the worker made unreadable (os.mkdir(d, 0o300)), even below a path longer than PATH_MAX:
            # chmod -R and rm -rf reach any depth and follow no link below it; it is no link (a worker could make one).
            if os.path.isdir(private) and not os.path.islink(private) and shutil.which("chmod"):
                subprocess.run(["chmod", "-R", "u+rwx", "--", private], stdin=subprocess.DEVNULL, capture_output=True)
            if os.path.lexists(private) and shutil.which("rm"):
                subprocess.run(["rm", "-rf", "--", private], stdin=subprocess.DEVNULL, capture_output=True)


def _chapter_inputs(id: str) -> dict:
    """``ae.worked_examples.get(id)`` in a notebook: the entry as the chapter prints it, never the library's answers."""
    example = worked_examples.get(str(id)[:100])        # a long id would cost difflib's time here
    return {key: getattr(example, key) for key in ("id", "title", "source", "inputs", "printed")}


def grade_one(exercise: str, path: str | Path, function: str | None = None,
              timeout: float = DEFAULT_TIMEOUT, memory_mb: float = DEFAULT_MEMORY_MB,
              seed: int | None = None, budget: float = DEFAULT_BUDGET, per_student: bool = False,
              listed: tuple[int, int] | None = None, stop: threading.Event | None = None) -> Row:
    """Grade one submission in its own sandboxed interpreter; never raises for anything it does. ``per_student``
    mixes the file's name and bytes into ``seed``; another file than ``listed`` (device, inode) is refused; ``stop``
    is its grading's, for :func:`stop_all`."""
    from .. import EXERCISES
    from ..runner import run_checker

    start = time.perf_counter()
    row, spec, path, data = Row(str(path), seed=seed), EXERCISES[exercise], Path(path), b""
    name, ipynb = function or spec.function, path.suffix.lower() == ".ipynb"
    if path.suffix.lower() not in (".py", ".ipynb"):
        row.error = f"not a Python file or notebook: {path}"
    else:
        try:        # a link (a classmate's file?), a FIFO, a device, over 16 MiB (json.loads: GBs): Refused, unread
            data = read_submission(path, listed)
            cells, notebook = read_cells(path, ipynb, data)      # a script nbconvert exported runs as its notebook
        except OSError as err:      # gone or replaced meanwhile, not to be read, a path too long: the teacher's to mend
            row.usage, row.error = True, f"no such file: {path}" if err.errno == errno.ENOENT else (
                f"the grader could not read {path} ({err.strerror or err}): see to it, then grade it again")
        except Exception as err:      # the student's file, whatever it holds (a codec not for text: LookupError)
            not_json = "it is not JSON: " if type(err).__name__ == "JSONDecodeError" else ""    # a renamed .py, say
            row.error = str(err) if isinstance(err, Refused) else (
                f"the file could not be read as {'a notebook' if ipynb else 'text'} ({not_json}{err})")
    seed = row.seed = student_seed(seed, str(path), data) if per_student else seed
    if row.error is None:
        what = "running the notebook" if ipynb else "importing the file"
        if notebook and not ipynb:      # a script's cells run as __main__
            what = 'running its cells (its `if __name__ == "__main__":` block too)'
        try:
            names = list(EXERCISES)
            earlier = {n: PACKAGE[n] for n in names[:names.index(exercise)] if n in PACKAGE}     # ae.softmax ...
            helpers = {**earlier, "worked_examples.get": _chapter_inputs} if notebook else {}
            allowed = spec.allowed_imports + ("matplotlib",)       # a demo plot, as in class (to Agg)
            with contextlib.closing(Remote(cells, str(path), name, allowed, notebook, timeout, memory_mb, budget,
                                           helpers, stop)) as remote:
                load = remote.start()
                row.sandbox = list(remote.layers)
                if isinstance(load, Outcome):
                    late = f"did not finish within the {budget:g} s the submission may take"
                    if notebook:
                        late += " (every code cell runs: a long experiment, a benchmark or a training loop too)"
                    row.error = f"{what} {load.ended or late}"
                elif (error := ErrorInfo.read(load.get("error"))) is not None:
                    where = f" ({error.line})" if error.line else ""
                    row.error = f"{what} raised {error.type_name}: {error.message}{where}"
                row.error = row.error or next(iter(remote.violations), None)
                functions, cell_errors = (texts(load, key, 100, 500) for key in ("functions", "cell_errors"))
                if row.error is None and name not in functions:
                    row.usage = not cell_errors
                    row.error = (f"{path} defines no function {name!r} (functions found: "
                                 f"{', '.join(functions) or 'none'})" + "".join(f"; {e}" for e in cell_errors[:1]))
                if row.error is None:
                    result = run_checker(spec, None, strict=False, timeout=timeout, memory_mb=memory_mb,
                                         invoke=remote, seed=seed)
                    row.sandbox = list(remote.layers)        # a worker started again after a crash counts too
                    for key in ("passed", "attempted", "status", "hint_id", "probe", "probes_passed", "probes_total",
                                "probes_failed"):
                        setattr(row, key, getattr(result, key))
                    row.mistakes = [{k: m.get(k) for k in ("hint_id", "probe", "hint")} for m in result.mistakes]
                    notes = "".join(f"\nNote: while the notebook ran, {e}" for e in cell_errors[:3])
                    row.message = str(result) + ("" if result.passed else notes)   # a failed import cell, say
                    row.error = next(iter(remote.violations), None)
        except Exception as err:  # a bug of ours, which a hostile submission might provoke: this row, not the batch
            row.usage = False
            row.error = f"the grader failed on this submission ({type(err).__name__}: {err}); please report it"
    if row.error is not None and not row.usage:      # a refused import fails the whole submission: no credit
        total = row.probes_total or sum(probe_counts(spec, spec.cases() + hidden_cases(spec, seed)).values())
        row.passed, row.attempted, row.probes_passed, row.probes_total = False, True, 0, total
    if row.error is not None:
        row.status = "failed" if row.attempted else "not graded"
        row.message = f"check {exercise}: {row.status}. {escape(row.error, newlines=False)}"
    row.seconds = round(time.perf_counter() - start, 3)
    for key, value in vars(row).items():     # every string escaped: the file name may be the student's too, its "\\"
        setattr(row, key, escape(value.replace("\\", "\\\\") if key == "file" else value, key == "message"))   # doubled
    row.mistakes = [{k: escape(v) for k, v in m.items()} for m in row.mistakes]
    row.sandbox = [escape(str(layer)) for layer in row.sandbox]
    return row
