"""The student's interpreter: runs one submission and answers the judge's calls, one frame each.

Started by the judge as ``python -I worker.py`` in a private empty directory (never as a fork
of the judge, never with ``attention_edu`` importable). It imports only the standard library
and NumPy, loads ``protocol.py`` and ``landlock.py`` beside it by file path, and then, before
any line of the student's code runs: restricts itself with Landlock (read the Python
installation and the allowed packages, write only its own directory), installs an import hook
that refuses modules the exercise does not allow, and sends its printed output to a file. Then
it runs the submission once and, for each call frame, calls the function on copies of the
arguments and sends back plain data (see ``protocol.py``).
"""

import copy
import importlib.util
import os
import sys
import sysconfig
import time
import traceback
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
#: Standard-library modules a submission may not import (processes, raw memory, sockets).
DENIED = {"ctypes", "subprocess", "multiprocessing", "socket", "_posixsubprocess", "pty", "_ctypes",
          "concurrent", "asyncio", "ssl", "urllib", "http", "ftplib", "smtplib", "telnetlib"}


def _load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Refuse:
    """A meta-path finder that refuses every module outside the exercise's list.

    The standard library's process and socket modules (:data:`DENIED`) are refused to the
    student's code but not to the standard library's or the allowed packages' own code (matplotlib
    imports them): a courtesy that says why; the sandbox, not this list, is what enforces.
    """

    def __init__(self, allowed, template, library_dirs):
        self.allowed, self.template, self.violations = set(allowed), template, []
        self.library = tuple(d.rstrip(os.sep) + os.sep for d in library_dirs)

    def _from_library(self):
        frame = sys._getframe(2)
        while frame is not None and (frame.f_code.co_filename.startswith("<frozen")
                                     or os.sep + "importlib" + os.sep in frame.f_code.co_filename):
            frame = frame.f_back
        return frame is not None and frame.f_code.co_filename.startswith(self.library)

    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top in self.allowed or (top in sys.stdlib_module_names and top not in DENIED) or top == "__main__":
            return None
        if top in sys.stdlib_module_names and self._from_library():
            return None
        message = self.template.format(name=top)
        if message not in self.violations:
            self.violations.append(message)
        raise ImportError(message)


def _sandbox_filesystem(config, private, packages):
    """Landlock: read the Python installation and the allowed packages, write the private dir."""
    paths = sysconfig.get_paths()
    arch = sysconfig.get_config_var("MULTIARCH") or ""
    read = {paths["stdlib"], paths["platstdlib"], os.path.dirname(os.__file__), private, "/dev/null",
            "/dev/urandom", "/proc/self", "/etc/ld.so.cache", "/lib64"}     # + the C libraries' own folders
    read |= {f"{root}/{arch}" for root in ("/lib", "/usr/lib") if arch}
    read |= {os.path.dirname(m.__file__) for m in list(sys.modules.values())
             if getattr(m, "__file__", None) and m.__name__.split(".")[0] in ("numpy",)}
    read |= set(packages)
    read |= {os.path.dirname(os.path.realpath(sys.executable))}
    try:
        landlock = _load("landlock")
    except (OSError, ImportError) as err:  # the module is missing: no filesystem layer
        return [], f"Landlock unavailable ({err})"
    try:
        landlock.restrict(sorted(p for p in read if p and os.path.exists(p)), [private])
    except landlock.LandlockUnavailable as err:
        return [], f"Landlock unavailable ({err})"
    return ["landlock"], ""


class Helpers:
    """``ae`` in a notebook submission: the earlier exercises' functions, computed by the judge."""

    def __init__(self, protocol, inp, out, names):
        self._call, self._names = (protocol, inp, out), tuple(names)

    def __getattr__(self, name):
        if name.startswith("_") or name not in self._names:
            raise AttributeError(f"ae.{name} is not available here: this exercise asks for your own NumPy "
                                 f"code (you may use {', '.join('ae.' + n for n in self._names)})")
        protocol, inp, out = self._call

        def helper(*args):
            protocol.send(out, {"helper": name, "args": protocol.plain(list(args))})
            reply = protocol.receive(inp, time.monotonic() + 60)
            if reply.get("error"):
                raise ValueError(reply["error"])
            return reply["value"]
        return helper


def _error(err, worker_file):
    try:
        message = str(err)
    except Exception:
        message = f"<{type(err).__name__}>"
    frames = [f for f in traceback.extract_tb(err.__traceback__)
              if f.filename != worker_file and "numpy" not in f.filename.split(os.sep)]
    line = ""
    if frames:
        frame = frames[-1]
        line = f"line {frame.lineno} in {frame.name}" + (f": {frame.line.strip()}" if frame.line else "")
    return {"type": type(err).__name__, "bases": [k.__name__ for k in type(err).__mro__],
            "message": message[:4000], "line": line[:400]}


class Printed:
    """What the student's code printed since the last look (fds 1 and 2 go to a file)."""

    def __init__(self, private):
        self.path, self.seen = os.path.join(private, "printed.txt"), 0
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)

    def take(self, limit=4000):
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        try:
            size = os.path.getsize(self.path)
            with open(self.path, "rb") as handle:
                handle.seek(self.seen)
                text = handle.read(limit).decode("utf-8", "replace")
        except OSError:
            return "", 0
        grown, self.seen = size - self.seen, size
        return text, max(grown, 0)


def _same(np, a, b):
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.shape == b.shape and a.dtype == b.dtype and bool(
            np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    try:
        return bool(a == b)
    except Exception:
        return True


def main():
    protocol = _load("protocol")
    inp, out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    private = os.getcwd()
    config = protocol.receive(inp, time.monotonic() + 30)
    import numpy as np
    packages, allowed = config["packages"], config["allowed"]
    layers, reason = _sandbox_filesystem(config, private, packages) if config["landlock"] else ([], "not asked")
    stdlib = [sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]]
    refuse = Refuse(allowed, config["message"], [p for p in packages + stdlib if os.path.isdir(p)])
    sys.meta_path.insert(0, refuse)
    protocol.send(out, {"layers": layers, "landlock": reason})       # before any student code runs
    printed = Printed(private)
    module = type(sys)("submission")
    module.__file__ = config["file"]
    if config["helpers"]:
        module.ae = Helpers(protocol, inp, out, config["helpers"])
    sys.modules["submission"] = module
    reply = {"cell_errors": [], "error": None}
    for label, code in config["cells"]:
        try:
            exec(compile(code, label, "exec"), module.__dict__)
        except BaseException as err:  # a notebook goes on after a failing cell, as Jupyter does
            if not config["notebook"]:
                reply["error"] = _error(err, __file__)
                break
            reply["cell_errors"].append(f"{label} raised {type(err).__name__}: {err}"[:500])
    reply["functions"] = sorted(k for k, v in module.__dict__.items() if callable(v) and not k.startswith("_")
                                and getattr(v, "__module__", None) == "submission")
    reply["violations"], (reply["printed"], _) = list(refuse.violations), printed.take()
    protocol.send(out, reply)
    function = module.__dict__.get(config["function"])
    while True:
        try:
            request = protocol.receive(inp, time.monotonic() + 3600)
        except (EOFError, TimeoutError):
            return 0
        args, names = tuple(request["args"]), request["names"]
        copies = copy.deepcopy(args)
        report = {}
        with np.errstate(divide="warn", over="warn", invalid="warn", under="ignore"), \
                warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            start = time.perf_counter()
            try:
                value = protocol.plain(function(*copies))
            except BaseException as err:  # even SystemExit: it is the student's call that ended
                value, report["error"] = None, _error(err, __file__)
            report["seconds"] = time.perf_counter() - start
        report["warnings"] = list(dict.fromkeys(f"{w.category.__name__}: {w.message}"[:300] for w in caught))[:20]
        report["mutated"] = [n for n, a, c in zip(names, args, copies) if not _same(np, a, c)]
        report["printed"], report["printed_bytes"] = printed.take()
        report["violations"] = list(refuse.violations)
        report["value"] = value
        try:
            protocol.send(out, report)
        except Exception as err:  # the value would not encode: say what came back instead
            report["value"] = protocol.Unsupported(f"a value that could not be sent ({type(err).__name__})")
            protocol.send(out, report)


if __name__ == "__main__":
    sys.exit(main())
