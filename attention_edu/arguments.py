"""Argument types shared by the subcommands of ``attention-edu``.

Each is an ``argparse`` type: a bad value is refused while the command line is
parsed, with a one-line message that names the argument and exit status 2,
before any work is done. :func:`written_atomically` is how a command writes a
file: an interrupted or failed write leaves no half-written file behind;
:func:`signals_noted` lets a command finish what a Ctrl-C must not cut short;
:func:`working_folder_off_path` keeps the folder a command runs in off the import path.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

__all__ = ["output_path", "positive_int", "non_negative_int", "positive_seconds", "positive_megabytes",
           "written_atomically", "signals_noted", "working_folder_off_path", "working_folder_was_on_path"]


def output_path(text: str) -> Path:
    """A file to write: its folder must already exist.

    Examples
    --------
    >>> output_path("/no/such/folder/x.md")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: the folder /no/such/folder does not exist (create it first)
    """
    path = Path(text)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise argparse.ArgumentTypeError(f"the folder {folder} does not exist (create it first)")
    if not os.access(folder, os.W_OK | os.X_OK):      # read-only: say so before the work, not after it
        raise argparse.ArgumentTypeError(f"the folder {folder} is not writable")
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{path} is a folder; give a file name")
    if path.exists() and not path.is_file():     # written beside it, then renamed over it: see written_atomically
        raise argparse.ArgumentTypeError(f"{path} is not a regular file (a device such as /dev/null, or a FIFO); "
                                         f"give a file name")
    return path


def positive_int(text: str) -> int:
    """A count: a whole number of at least 1.

    Examples
    --------
    >>> positive_int("64")
    64
    >>> positive_int("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a positive integer, got 0
    """
    return _whole_number(text, 1, "must be a positive integer")


def non_negative_int(text: str) -> int:
    """A seed or an index: a whole number of at least 0.

    Examples
    --------
    >>> non_negative_int("0")
    0
    >>> non_negative_int("-1")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a whole number of at least 0, got -1
    """
    return _whole_number(text, 0, "must be a whole number of at least 0")


def _whole_number(text: str, minimum: int, rule: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{rule}, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"{rule}, got {value}")
    return value


@contextlib.contextmanager
def written_atomically(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a new temporary file beside ``path``, under a name nobody can guess; on success rename it to ``path``.

    The temporary file keeps ``path``'s suffix (matplotlib reads the format
    from it). If the body raises, Ctrl-C included, the temporary file is
    removed and ``path`` is left as it was: never half-written.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> with written_atomically(folder / "a.txt") as tmp:
    ...     _ = tmp.write_text("done")
    >>> sorted(p.name for p in folder.iterdir())
    ['a.txt']
    >>> try:
    ...     with written_atomically(folder / "b.txt") as tmp:
    ...         _ = tmp.write_text("half")
    ...         raise KeyboardInterrupt
    ... except KeyboardInterrupt:
    ...     pass
    >>> sorted(p.name for p in folder.iterdir())
    ['a.txt']
    """
    target = Path(path)
    if target.exists() and not target.is_file():     # as root, a rename over /dev/null replaces the device
        raise OSError(f"{target} is not a regular file (a folder, a device or a FIFO): it is not replaced")
    tmp = target.with_name(f".{target.stem}.partial-{os.getpid()}-{os.urandom(6).hex()}{target.suffix}")
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))   # made here: never a link planted there
    try:
        yield tmp
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def positive_seconds(text: str) -> float:
    """A time limit in seconds: a finite number above 0.

    Examples
    --------
    >>> positive_seconds("2.5")
    2.5
    >>> positive_seconds("-1")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a number of seconds above 0, got -1
    """
    return _positive(text, "seconds")


def positive_megabytes(text: str) -> float:
    """A memory limit in megabytes: a finite number above 0.

    Examples
    --------
    >>> positive_megabytes("-5")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a number of megabytes above 0, got -5
    """
    return _positive(text, "megabytes")


def _positive(text: str, unit: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a number of {unit} above 0, got {text}")
    return value


@contextlib.contextmanager
def signals_noted() -> Iterator[threading.Event]:
    """Yield an event that Ctrl-C, SIGTERM and SIGHUP set, in place of the KeyboardInterrupt they raise (in the main
    thread; elsewhere it is never set). A command polls it where it can stop cleanly: raised while it stopped its
    workers or wrote its file, a second signal lost what was done (``grade``: red team 44). A signal the shell
    ignores (``nohup``) stays ignored.

    Examples
    --------
    >>> import os, signal
    >>> with signals_noted() as stop:
    ...     os.kill(os.getpid(), signal.SIGTERM)
    ...     stop.wait(5)
    True
    """
    stop = threading.Event()
    main = threading.current_thread() is threading.main_thread()
    names = ("SIGINT", "SIGTERM", "SIGHUP") if main else ()
    before = {number: signal.getsignal(number) for number in (getattr(signal, n) for n in names if hasattr(signal, n))}
    for number, handler in before.items():
        if handler is not signal.SIG_IGN:
            signal.signal(number, lambda *_: stop.set())
    try:
        yield stop
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)


_off_path = {"commands": 0, "removed": []}     # commands running; (index, entry) of the working folder taken off
_off_path_lock = threading.Lock()


@contextlib.contextmanager
def working_folder_off_path() -> Iterator[None]:
    """The folder a command runs in off ``sys.path`` while any command runs (:func:`attention_edu.cli.main`), back where
    it was after the last: a Python or a Jupyter kernel started in a folder of submissions would otherwise import a
    student's csv.py or tqdm.py into the grader (red team 48), and commands in threads of one Python overlap (49)."""
    with _off_path_lock:
        if _off_path["commands"] == 0:
            try:
                here = os.path.realpath(os.curdir)
            except OSError:             # the working folder is gone: no entry names it
                here = None
            _off_path["removed"] = [(index, entry) for index, entry in enumerate(sys.path) if here is not None
                                    and isinstance(entry, str) and os.path.realpath(entry or os.curdir) == here]
            for index, _ in reversed(_off_path["removed"]):
                del sys.path[index]
        _off_path["commands"] += 1
    try:
        yield
    finally:
        with _off_path_lock:
            _off_path["commands"] -= 1
            if _off_path["commands"] == 0:
                for index, entry in _off_path["removed"]:
                    sys.path.insert(index, entry)


def working_folder_was_on_path() -> bool:
    """Whether the folder the running commands started in was on ``sys.path`` (''), which they took off: Python may
    have imported modules from it before any command began (``check`` and ``grade`` refuse where it holds them)."""
    with _off_path_lock:
        return bool(_off_path["commands"] and _off_path["removed"])
