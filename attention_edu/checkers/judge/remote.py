"""The judge's end of a student's interpreter: start it in the sandbox, call it, end it.

:class:`Remote` starts :mod:`.worker` with ``python -I`` in a private empty directory through
:func:`.sandbox.spawn`, sends it the submission's code and the exercise's allowed imports, and
turns each call of the student's function into one request frame and one reply frame (see
:mod:`.protocol`). A call that does not answer within ``timeout`` seconds, or a worker that dies,
is that call's outcome; the next call starts a fresh worker while the submission's ``budget``
(import and all calls together) lasts. :meth:`Remote.close` kills the whole sandbox, so nothing
the submission started outlives it.
"""

from __future__ import annotations

import functools
import importlib.machinery
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from . import protocol, sandbox
from .harness import ErrorInfo, Outcome, ending

__all__ = ["Remote", "DEFAULT_BUDGET", "NOT_ALLOWED", "stop_all"]

#: Seconds a submission may use in all (starting, importing and every call).
DEFAULT_BUDGET = 60.0
#: What a student reads when an import is refused ({name} is the module).
NOT_ALLOWED = "this exercise asks for your own NumPy code; `import {name}` is not allowed here"
_WORKER = str(Path(__file__).with_name("worker.py"))
_REPLY_CAP = 16 << 20
#: Every Remote with a live sandbox, so that Ctrl-C can end them all (see :func:`stop_all`).
_LIVE: set = set()
_LOCK = threading.Lock()
_STOPPED = threading.Event()


def stop_all() -> None:
    """End every live sandbox now and refuse to start new ones (Ctrl-C during ``grade``)."""
    _STOPPED.set()
    with _LOCK:
        live = list(_LIVE)
    for remote in live:
        remote.close()


def _error(info: dict | None) -> ErrorInfo | None:
    if info is None:
        return None
    return ErrorInfo(str(info.get("type", "Exception"))[:100], str(info.get("message", ""))[:4000],
                     tuple(str(b)[:100] for b in info.get("bases", ["Exception"])), str(info.get("line", ""))[:400])


@functools.lru_cache(maxsize=None)
def package_dirs(names: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """(directories, top-level names) of the installed packages ``names`` and of what they require.

    Worked out here, once per process, from the installed distributions' metadata (nothing is
    imported); the worker gets the result.
    """
    from importlib import metadata
    owners, seen, dirs, todo, found = metadata.packages_distributions(), set(), set(), list(names), set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            spec = importlib.machinery.PathFinder.find_spec(name)
        except Exception:
            spec = None
        if spec is None:
            continue
        found.add(name)
        places = list(spec.submodule_search_locations or [])
        dirs.update([] if places or not spec.origin else [spec.origin])   # a one-file module
        for place in places:
            if place and place not in sys.path:
                dirs.add(place)
                dirs.update(p for p in (place + ".libs",) if os.path.isdir(p))
        for dist in owners.get(name, []):
            todo += [top for top, dists in owners.items() if dist in dists]    # e.g. mpl_toolkits
            libs = os.path.join(os.path.dirname(spec.origin or ""), os.pardir, dist + ".libs")
            dirs.update([os.path.normpath(libs)] if os.path.isdir(libs) else [])
            for requirement in metadata.requires(dist) or []:
                if "extra ==" in requirement:
                    continue
                wanted = requirement.split(";")[0].split("[")[0]
                for cut in "<>=!~ (":
                    wanted = wanted.split(cut)[0]
                wanted = wanted.strip().lower().replace("-", "_")
                todo += [top for top, dists in owners.items() if any(
                    d.lower().replace("-", "_") == wanted for d in dists)]
    return sorted(dirs), sorted(found | set(names))


class Remote:
    """One submission in its own sandboxed interpreter; ``remote(args, names) -> Outcome``."""

    def __init__(self, cells: list[tuple[str, str]], file: str, function: str, allowed: tuple[str, ...],
                 notebook: bool = False, timeout: float = 3.0, memory_mb: float | None = 1024,
                 budget: float = DEFAULT_BUDGET, landlock: bool = True, helpers: dict | None = None):
        packages, names = package_dirs(tuple(allowed))
        self.config = {"cells": [list(c) for c in cells], "file": Path(file).name, "function": function,
                       "allowed": names, "packages": packages, "message": NOT_ALLOWED, "notebook": notebook,
                       "helpers": sorted(helpers or {}),
                       "landlock": landlock}
        self.timeout, self.memory_mb, self.helpers = timeout, memory_mb, dict(helpers or {})
        self.deadline = time.monotonic() + budget
        self.budget, self.box, self.private = budget, None, None
        self.layers: list[str] = []
        self.violations: list[str] = []
        self.loaded: dict[str, Any] | None = None

    def start(self) -> dict[str, Any]:
        """Start the interpreter and run the submission; the load report (an "error" on failure)."""
        self.close()
        if _STOPPED.is_set():
            return {"error": "ended", "ended": ("was not run: grading was interrupted", "harness.crash")}
        self.private = tempfile.mkdtemp(prefix="attention-edu-student-")
        env = {"PATH": "/usr/bin:/bin", "HOME": self.private, "LANG": "C.UTF-8", "MPLBACKEND": "Agg",
               "MPLCONFIGDIR": self.private, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
               "MKL_NUM_THREADS": "1", "TMPDIR": self.private}
        memory = 4096 if self.memory_mb is None else int(self.memory_mb) + 512   # numpy itself, then calls
        limits = sandbox.Limits(memory_mb=memory, cpu_seconds=int(self.budget) + 5)
        self.box = sandbox.spawn([sys.executable, "-I", _WORKER], cwd=self.private, env=env, limits=limits)
        with _LOCK:
            _LIVE.add(self)
        ready = self._ask(self.config, max(10.0, self.timeout))     # sent before the student's code runs
        if "layers" not in ready or type(ready["layers"]) is not list:
            return ready if "ended" in ready else {"error": "garbled", "ended": ("did not start", "harness.crash")}
        self.layers = list(self.box.layers) + [str(layer)[:40] for layer in ready["layers"]]
        load = self._ask(None, max(10.0, self.timeout))
        if "ended" in load:
            return load
        self.violations = [str(v)[:300] for v in load.get("violations", [])]
        return {**load, "layers": self.layers}

    def _ask(self, message: dict | None, seconds: float) -> dict:
        """Send one frame, read one reply; failures become {"error": ..., "ended": ...}."""
        box = self.box
        if box is None:
            return {"error": "ended", "ended": ("was ended: grading was interrupted", "harness.crash")}
        deadline = min(time.monotonic() + seconds, self.deadline)
        try:
            if message is not None:
                protocol.send(box.process.stdin.fileno(), message)
            reply = protocol.receive(box.process.stdout.fileno(), deadline, _REPLY_CAP)
            while type(reply) is dict and "helper" in reply:      # ae.softmax(...) from an earlier exercise
                protocol.send(box.process.stdin.fileno(), self._helper(reply))
                reply = protocol.receive(box.process.stdout.fileno(), deadline, _REPLY_CAP)
            if type(reply) is not dict:
                raise protocol.ProtocolError("a reply that is not a message")
            return reply
        except TimeoutError:
            self.close()
            over = time.monotonic() >= self.deadline
            return {"error": "budget" if over else "timeout", "ended": ""}
        except (EOFError, OSError, ValueError):       # it ended (or Ctrl-C ended it)
            code = box.process.poll()
            self.close()
            if code is None:
                code = box.process.returncode
            return {"error": "ended", "ended": ending(code)}
        except protocol.ProtocolError as err:
            self.close()
            return {"error": "garbled", "ended": (f"sent back something that is not a plain answer ({err})",
                                                  "harness.crash")}

    def _helper(self, request: dict) -> dict:
        """Compute a library function the exercise lets the submission call, on plain data, here."""
        function = self.helpers.get(request.get("helper"))
        args = request.get("args")
        if function is None or type(args) is not list:
            return {"error": f"ae.{str(request.get('helper'))[:40]} is not available in this exercise"}
        try:
            return {"value": protocol.plain(function(*args))}
        except Exception as err:  # a wrong argument of the student's: the student's error
            return {"error": f"{type(err).__name__}: {str(err)[:300]}"}

    def __call__(self, args: tuple, names: tuple[str, ...]) -> Outcome:
        if time.monotonic() >= self.deadline:
            return Outcome(ended=f"used up the {self.budget:g} s the whole submission may take",
                           ended_id="harness.timeout")
        if self.box is None and "layers" not in self.start():
            return Outcome(ended="could not be started again after the previous call failed",
                           ended_id="harness.crash")
        reply = self._ask({"args": list(args), "names": list(names)}, self.timeout)
        if reply.get("error") == "timeout":
            return Outcome(timed_out=True)
        if reply.get("error") == "budget":
            return Outcome(ended=f"used up the {self.budget:g} s the whole submission may take",
                           ended_id="harness.timeout")
        if "ended" in reply:
            words, hint_id = reply["ended"]
            return Outcome(ended=words, ended_id=hint_id)
        self.violations += [str(v)[:300] for v in reply.get("violations", []) if v not in self.violations]
        error = _error(reply.get("error") if isinstance(reply.get("error"), dict) else None)
        printed = reply.get("printed", "")
        value = reply.get("value")
        if error is not None and error.is_a("MemoryError"):
            return Outcome(error=error, ended=f"ran out of memory (MemoryError): it asked for more than "
                                              f"the {self.memory_mb:g} MB a call may use",
                           ended_id="harness.memory", printed=printed if isinstance(printed, str) else "")
        return Outcome(value=value, error=error, printed=printed if isinstance(printed, str) else "",
                       printed_bytes=int(reply.get("printed_bytes", 0) or 0),
                       warnings=[str(w) for w in reply.get("warnings", [])][:20],
                       mutated=[str(n) for n in reply.get("mutated", []) if n in names],
                       seconds=float(reply.get("seconds", 0.0) or 0.0))

    def close(self) -> None:
        """Kill the sandbox (every process it started) and remove the private directory."""
        with _LOCK:
            box, private, self.box, self.private = self.box, self.private, None, None
            _LIVE.discard(self)
        if box is not None:
            box.__exit__(None, None, None)           # kills every process of it, closes the pipes
        if private is not None:
            shutil.rmtree(private, ignore_errors=True)

    def __enter__(self) -> Remote:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
