"""The student's side of the judge: run a submission and answer calls with plain data (see docs/teachers.md).

:func:`answer` makes each call, in the sandboxed ``python -I worker.py`` (:func:`main`) or in a notebook check's fork.
It imports the standard library, ``landlockpy`` and, by path, ``protocol.py`` and ``backend.py`` (NumPy comes through
it); never the ``attention_edu`` package, which holds the answers."""

import builtins
import contextlib
import copy
import importlib.machinery
import importlib.util
import io
import linecache
import os
import sys
import sysconfig
import time
import traceback
import types
import warnings

try:
    import resource
except ImportError:  # Windows: no limits (and no forked children)
    resource = None

#: Standard-library modules a submission may not import (processes, raw memory, sockets).
DENIED = {"ctypes", "_ctypes", "subprocess", "_posixsubprocess", "multiprocessing", "_multiprocessing", "_posixshmem",
          "mmap", "pty", "socket", "_socket", "ssl", "asyncio", "urllib", "http", "ftplib", "smtplib"}
#: What this worker loads for itself, outside the exercise's list: gone from ``sys.modules`` before the submission runs.
OWN = {"landlockpy", "array_api_compat", "_attention_edu_backend"}
_SOURCE = (importlib.machinery.SourceFileLoader, [".py"])    # what a student wrote is imported as source, never a .so
#: Where the standard library's frames come from: an error's line is the student's that called it (``exit()``).
STDLIB = (os.path.dirname(os.__file__) + os.sep, "<frozen ")

if __package__:          # imported by the judge: a notebook check's forked child
    from . import protocol
else:                    # run by path in the sandbox, without the package
    sys.path += [site for site in sys.argv[1:] if site not in sys.path]     # the judge's, after the interpreter's own
    _spec = importlib.util.spec_from_file_location("protocol", os.path.join(os.path.dirname(__file__), "protocol.py"))
    protocol = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(protocol)
np = protocol.np        # NumPy, through the package's backend module


class Refuse:
    """The import rule, a meta-path finder: the student's own modules and folders in ``private`` first (utils/sm.py);
    its code (not NumPy's) imports only the exercise's list and the stdlib outside DENIED, each refusal sent at once."""

    def __init__(self, allowed, template, library_dirs, labels, private, out):
        self.allowed, self.template, self.labels, self.private = set(allowed), template, set(labels), private
        self.library, self.out = tuple(d.rstrip(os.sep) + os.sep for d in library_dirs), out

    def find_spec(self, name, path=None, target=None):
        top, where = name.partition(".")[0], next(iter(path), "") if path else self.private   # its own: in private
        if (where + os.sep).startswith(self.private + os.sep) and top.isidentifier() and top not in self.allowed and (
                path or {top, top + ".py"} & set(os.listdir(self.private))):
            spec = importlib.machinery.FileFinder(where, _SOURCE).find_spec(name)
            if spec and (spec.loader or top not in sys.stdlib_module_names):   # a bare folder html/: the stdlib's html
                return spec      # a file named "ctypes" is no module either: the rule below holds (red teams 60, 61)
            if path:             # a module of its own folder that is not source there (a .pyc): none, for every finder
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        frames = [sys._getframe(1)]      # who imports: this finder's caller, then up past the import machinery
        while frames[-1] is not None and (frames[-1].f_code.co_filename.startswith("<frozen")
                                          or os.sep + "importlib" + os.sep in frames[-1].f_code.co_filename):
            frames.append(frames[-1].f_back)
        library, standard = frames[-1] is not None and frames[-1].f_code.co_filename.startswith(self.library), \
            top in sys.stdlib_module_names
        if top in self.allowed or top == "__main__" or (standard and (top not in DENIED or library)):
            return None
        asks = [frame is not None and frame.f_code.co_name == "find_spec" and frame.f_code.co_filename.replace(
            os.sep, ".").endswith(("importlib.util>", "importlib.util.py")) for frame in frames]
        if asks[1:2] == [True]:     # importlib.util.find_spec("torch") asks, and imports nothing: the other finders
            return None             # answer (Landlock hides what is not on the list)
        if library or any(asks):    # NumPy's optional imports (yaml in np.show_config), and the "torch" that
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)   # find_spec("torch.nn") imports first
        message, frame = self.template.format(name=top), sys._getframe(1)
        while frame is not None and frame.f_code.co_filename not in self.labels:
            frame = frame.f_back            # the student's line that imports it, however indirectly
        where = "" if frame is None else f" ({frame.f_code.co_filename}, line {frame.f_lineno})"
        protocol.send(self.out, {"violation": message + where})
        raise ModuleNotFoundError(message, name=name)


def restrict(read, write):
    """Landlock through ``landlockpy``: read beneath ``read``, write beneath ``write``, no TCP (ABI 4+), no signals or
    abstract unix sockets out of the domain (ABI 6+), ``no_new_privs``. It binds this thread and those started later
    (the judge's environment keeps BLAS to this one). Returns the ABI applied; ImportError or OSError without it."""
    from landlockpy import AccessFS, Ruleset, Scope
    reading = AccessFS.EXECUTE | AccessFS.READ_FILE | AccessFS.READ_DIR
    writing = ~(AccessFS.MAKE_CHAR | AccessFS.MAKE_BLOCK | AccessFS.IOCTL_DEV)    # devices stay out
    file_only = AccessFS.EXECUTE | AccessFS.WRITE_FILE | AccessFS.READ_FILE | AccessFS.TRUNCATE
    with Ruleset(scoped=Scope.SIGNAL | Scope.ABSTRACT_UNIX_SOCKET) as ruleset:   # no port rule: TCP denied
        for paths, rights in ((read, reading), (write, writing)):
            for path in filter(os.path.exists, paths):
                ruleset.allow_path(path, rights if os.path.isdir(path) else rights & file_only)
        ruleset.restrict()
        return ruleset.abi_version


class Helper:
    """``ae`` in a notebook submission: the earlier exercises' functions and ``ae.worked_examples.get(id)``, computed by
    the judge (see docs/teachers.md). Calling any other name (``ae.plotting.attention_heatmap``) says why not."""
    __module__ = "attention_edu"        # not the notebook's own function, though both are __main__

    def __init__(self, fds, names, name=None):
        offered = ", ".join("ae." + n for n in names) or "no function of attention_edu"
        self._fds, self._names, self._name = fds, tuple(names), name
        self._refusal = None if name in names else (
            f"ae.{name} is not available here: this exercise asks for your own NumPy code (you may use {offered})")

    def __getattr__(self, attr):
        if attr[:1] != "_" and (self._name is None or any(n.startswith(f"{self._name}.") for n in self._names)):
            return Helper(self._fds, self._names, ".".join(filter(None, (self._name, attr))))    # worked_examples.get
        raise AttributeError(attr if attr[:1] == "_" else self._refusal or attr)

    def __call__(self, *args, **kwargs):
        if self._refusal:       # ae itself is a module in class: not callable
            raise TypeError("'module' object is not callable") if self._name is None else AttributeError(self._refusal)
        (inp, out), name = self._fds, self._name
        protocol.send(out, {"helper": name, "args": [protocol.plain(a, limit=protocol.REPLY_VALUES // 4) for a in args],
                            "kwargs": protocol.plain(kwargs, limit=protocol.REPLY_VALUES // 4)})   # read as a reply
        reply = protocol.receive(inp, time.monotonic() + 60)
        if reply.get("error"):
            raise ValueError(reply["error"])
        return types.SimpleNamespace(**reply["value"]) if name == "worked_examples.get" else reply["value"]


def describe(error):
    """An exception as plain data: its type, bases, message and the student's line."""
    message = f"<{type(error).__name__}>"     # where the student's exception's __str__ fails
    with contextlib.suppress(Exception):
        message = str(error)
    frames = [f for f in traceback.extract_tb(error.__traceback__) if not f.filename.startswith(STDLIB)
              and not {"numpy", "attention_edu"} & set(f.filename.replace("\\", "/").split("/"))]
    line = "".join(f"line {at.lineno} in {at.name}" + (f": {at.line.strip()}" if at.line else "") for at in frames[-1:])
    return {"type": type(error).__name__[:200], "bases": [k.__name__[:200] for k in type(error).__mro__][:40],
            "message": message[:4000], "line": line[:400]}


def _same(a, b):
    """Exact equality of an input before and after the call (NaN equals NaN)."""
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.shape == b.shape and a.dtype == b.dtype and bool(
            np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    with contextlib.suppress(Exception):  # objects without a truthful ==: True
        return bool(a == b)
    return True


def answer(function, args, names):
    """Call ``function`` on deep copies of ``args``: the reply, in plain data."""
    copies, reply = copy.deepcopy(args), {"value": None}
    for a in (c for c in copies if isinstance(c, np.ndarray) and c.dtype.kind == "f" and c.nbytes < 1 << 20):
        spares = [np.full(a.shape, np.nan, a.dtype) for _ in range(4)]    # NaN in the memory the call's arrays take:
        del spares          # an output left unset (where= without out=) shows as wrong, not as the zeros it often held
    with np.errstate(**{k: "warn" for k, v in np.geterr().items() if v == "ignore" and k != "under"}), \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        try:
            reply["value"] = protocol.plain(function(*copies), limit=protocol.REPLY_VALUES)
        except BaseException as err:  # even SystemExit: it is the student's call that ended
            if isinstance(err, MemoryError) and resource is not None:   # reporting it needs memory
                resource.setrlimit(resource.RLIMIT_AS, (resource.getrlimit(resource.RLIMIT_AS)[1],) * 2)
            reply["error"] = describe(err)
        reply["seconds"] = time.perf_counter() - start
    reply["warnings"] = list(dict.fromkeys(f"{w.category.__name__}: {w.message}"[:300] for w in caught))[:20]
    reply["mutated"] = [name for name, a, c in zip(names, args, copies) if not _same(a, c)]
    with contextlib.suppress(Exception):  # what was printed, which the judge reads once the reply is in (the
        sys.stdout.flush()                # student may have replaced or closed sys.stdout)
    return reply


def send_reply(out, reply):
    try:
        protocol.send(out, reply)
    except Exception as err:  # the value would not encode: say what came back instead
        reply["value"] = protocol.Unsupported(f"a value that could not be sent ({type(err).__name__})")
        protocol.send(out, reply)


class _Printed(io.FileIO):     # fd 1 under print(): output the judge no longer reads (EPIPE) is dropped, not raised
    def write(self, data):
        with contextlib.suppress(OSError):
            return super().write(data)
        return len(data)


def quiet(printed_fd):
    """No input (``input()`` fails at once); fds 1 and 2 go to the pipe the judge reads."""
    def _no_input(prompt=""):
        raise EOFError("input() is not available while your function is checked: take values as arguments")
    os.dup2(null := os.open(os.devnull, os.O_RDONLY), 0), os.close(null)
    os.dup2(printed_fd, 1), os.dup2(printed_fd, 2)
    builtins.input = _no_input
    sys.stdout = sys.stderr = io.TextIOWrapper(io.BufferedWriter(_Printed(1, "w", closefd=False)), "utf-8", "replace")


def main():
    """The sandboxed interpreter: set up as the judge's first frame says, run the submission, serve."""
    inp, out, private, layers = os.dup(0), os.dup(1), os.getcwd(), []
    config = protocol.receive(inp, time.monotonic() + 30)
    with contextlib.suppress(ImportError, OSError):  # no landlockpy, an old kernel, another OS
        restrict([*config["read"], private], [private])
        layers = ["landlock"]
    sysconfig.get_config_vars()     # loads _sysconfigdata_*: stdlib, but not in sys.stdlib_module_names
    sys.meta_path.insert(0, Refuse(config["allowed"], config["message"], list(filter(os.path.isdir, config["library"])),
                                   [label for label, _ in config["cells"]], private, out))
    for name in [m for m in sys.modules if m.partition(".")[0] in DENIED | OWN]:
        del sys.modules[name]       # NumPy or this worker loaded them: ``import ctypes`` meets the rule too
    protocol.send(out, {"layers": layers})       # before any student code runs
    quiet(config["printed"])       # the judge's pipe
    module = type(sys)("__main__" if config["notebook"] else "submission")     # a notebook's is, in class
    module.__file__, sys.modules[module.__name__] = config["file"], module     # a notebook's %%writefile submission.py
    sys.argv = [config["file"]]     # as ``python mine.py`` has it (not the judge's site folders)
    if config["notebook"]:          # IPython's builtins display() and get_ipython(): the judge's stand-ins
        module.ae = Helper((inp, out), config["helpers"])
        vars(builtins).update({name: eval(code, {}) for name, code in config["builtins"].items()})
        sys.modules.update(dict.fromkeys(config["modules"], module.ae))   # a %%writefile module's attention_edu(.x)
    report, futures = {"cell_errors": [], "error": None}, 0
    for label, code in config["cells"]:
        linecache.cache[label] = (len(code), None, code.splitlines(True), label)     # an error shows its line
        try:        # IPython keeps a cell's "from __future__ import annotations" for the cells below it
            code = compile(code, label, "exec", futures)
            futures |= code.co_flags & 0x1000000        # __future__.annotations.compiler_flag
            exec(code, module.__dict__)
        except BaseException as err:  # a notebook goes on after a failing cell, as Jupyter does
            if not config["notebook"]:   # sys.exit(0) or exit() after the function ends the run as the file's end does
                ended = isinstance(err, SystemExit) and (err.code is None or type(err.code) is int and err.code == 0)
                report["error"] = None if ended and config["function"] in module.__dict__ else describe(err)
                break
            report["cell_errors"].append(f"{label} raised {type(err).__name__}: {err}"[:500])
    with contextlib.suppress(Exception):  # as after a call
        sys.stdout.flush()
    report["functions"] = sorted((k for k, v in module.__dict__.items() if callable(v) and not k.startswith("_") and (
        getattr(v, "__module__", None) == module.__name__ or k == config["function"])),     # functools.partial too
        key=lambda k: (k != config["function"], k))[:100]          # the one asked for first, if it is there
    protocol.send(out, {**report, "cell_errors": report["cell_errors"][:100]})      # the judge reads 100 of each
    function = module.__dict__.get(config["function"])
    while True:
        try:
            request = protocol.receive(inp, time.monotonic() + 3600)
        except (EOFError, TimeoutError):
            return 0
        send_reply(out, answer(function, tuple(request["args"]), request["names"]))


if __name__ == "__main__":
    sys.exit(main())
