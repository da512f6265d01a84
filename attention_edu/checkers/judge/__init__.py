"""The judge: running a student's code in a child process, grading it, reporting the rows.

Its modules are laid out in docs/architecture.md; here are the records they pass around: what one call of
the student's function gave (:class:`ErrorInfo`, :class:`Outcome`) and one graded submission (:class:`Row`), and
the helpers for the text a submission holds or prints.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import io
import json
import os
import re
import stat
import sys
import tokenize
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

__all__ = ["ErrorInfo", "Outcome", "Row", "FIELDS", "escape", "csv_cell", "python_text", "scan", "commented",
           "read_submission", "list_submissions", "Refused"]

#: The columns of ``--csv`` and the keys of every ``--json`` object, in order.
FIELDS = ("file", "passed", "attempted", "status", "hint_id", "probe", "probes_passed", "probes_total",
          "mistakes", "seed", "sandbox", "seconds", "error")


@dataclass(frozen=True)
class ErrorInfo:
    """An exception raised in the child, described in plain data (it crossed a process boundary).

    Examples
    --------
    >>> info = ErrorInfo.read({"type": "ValueError", "message": "bad", "bases": ["ValueError", "Exception"]})
    >>> info.type_name, info.message, info.is_a("Exception"), info.is_a("TypeError")
    ('ValueError', 'bad', True, False)
    """

    type_name: str
    message: str
    bases: tuple[str, ...] = ()
    line: str = ""

    @classmethod
    def read(cls, info: Any) -> ErrorInfo | None:
        """From a child's reply, which may hold anything: wrong types become text, shown texts one line each
        (a student's class name or message could hold a line break and a forged verdict after it)."""
        if type(info) is not dict:
            return None
        bases = info.get("bases") if type(info.get("bases")) is list else ["Exception"]
        text = {key: escape(str(info.get(key, default))[:cap], False)
                for key, default, cap in (("type", "Exception", 100), ("message", "", 4000), ("line", "", 400))}
        return cls(text["type"], text["message"], tuple(str(b)[:100] for b in bases[:64]), text["line"])

    def is_a(self, name: str) -> bool:
        """True when the exception's class, or one of its bases, is called ``name``."""
        return name in self.bases


@dataclass
class Outcome:
    """What happened when the function was called once."""

    value: Any = None
    error: ErrorInfo | None = None
    timed_out: bool = False
    ended: str = ""                  # how the child ended abnormally, in a student's words
    ended_id: str | None = None      # the hint id for that ending
    printed: str = ""
    printed_bytes: int = 0           # bytes of what it printed that were kept
    warnings: list[str] = field(default_factory=list)
    mutated: list[str] = field(default_factory=list)   # names of arguments changed in place
    seconds: float = 0.0
    isolated: bool = True

    @property
    def ok(self) -> bool:
        return self.error is None and not self.timed_out and not self.ended


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
    probes_failed: dict = field(default_factory=dict)     # by group: see CheckResult.probes_failed
    usage: bool = False          # the error is the caller's (no such file/function), not the student's
    message: str = ""            # the full check message

    def record(self) -> dict[str, Any]:
        """The row as ``--json`` prints it: the :data:`FIELDS`, in order."""
        return {key: getattr(self, key) for key in FIELDS}


def escape(text: Any, newlines: bool = True) -> Any:
    r"""``text`` with every control character written as an escape (``\x1b``, ``\r``); the newline
    too unless ``newlines`` (a one-line field, where a student's newline could draw a line of its own).

    >>> escape("ok\x1b[2K\rpassed\n"), escape("boom\npassed", newlines=False)
    ('ok\\x1b[2K\\rpassed\n', 'boom\\npassed')
    """
    if not isinstance(text, str):
        return text
    return "".join(c if (c == "\n" and newlines) or c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in text)


def csv_cell(value: Any) -> Any:
    r"""A CSV cell: a list as JSON; text a spreadsheet would run as a formula (=, +, -, @) after a '.

    >>> csv_cell('=HYPERLINK("x")'), csv_cell(["a"]), csv_cell(3)
    ('\'=HYPERLINK("x")', '["a"]', 3)
    """
    value = json.dumps(value) if isinstance(value, list) else value
    return "'" + value if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


class Refused(ValueError):
    """A file that :func:`read_submission` does not read as a submission (a link, a FIFO, over 16 MiB)."""


def _identity(file: str | int) -> tuple[int, int] | None:
    """(device, inode) of a path (a link itself, not what it names) or of an open descriptor; None if it is gone."""
    try:
        status = os.fstat(file) if isinstance(file, int) else os.stat(file, follow_symlinks=False)
    except OSError:
        return None
    return status.st_dev, status.st_ino


def _entries(folder: str, listed: tuple[int, int] | None) -> Iterator[tuple[str, os.stat_result]]:
    """(name, lstat) of each entry of ``folder``, opened only if it is the folder ``listed`` (device, inode; None:
    whatever the path names); an entry gone meanwhile (its owner took it back) is left out, not the folder."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | (os.O_NOFOLLOW if listed else 0))
    try:
        if listed not in (None, _identity(fd)):
            raise OSError(f"{folder} changed after its parent was listed (a folder swapped for a link?)")
        for entry in os.scandir(fd):
            with contextlib.suppress(FileNotFoundError):
                yield entry.name, entry.stat(follow_symlinks=False)
    finally:
        os.close(fd)


def list_submissions(paths: list[str]) -> dict[str, tuple[int, int] | None]:
    """The files given and the .py and .ipynb files below the folders given, each once (links and FIFOs too: their
    rows say so), with their (device, inode) when listed. A folder is opened only as the one its parent listed, never
    through a link, so one swapped for a link while grading runs leads nowhere (nor a file: :func:`read_submission`)."""
    from ..result import say       # here: result.py imports this module
    found: dict[str, tuple[int, int] | None] = {}
    for text in paths:
        if not os.path.isdir(text):
            found.setdefault(os.path.normpath(text), _identity(text))
            continue
        files, folders = {}, [(text, None)]      # not os.walk, whose recursion ended 1,000 folders down (a zip's)
        while folders:
            folder, listed = folders.pop()
            try:
                entries = list(_entries(folder, listed))
            except OSError as err:      # a path too long, no permission: named on stderr
                say(f"attention-edu grade: could not list a folder: {escape(str(err), False)}", sys.stderr)
                continue
            for name, status in entries:        # hidden folders, a Mac zip's folder and its ._ files: not submissions
                path, is_dir = os.path.join(folder, name), stat.S_ISDIR(status.st_mode)
                if is_dir and not name.startswith(".") and name != "__MACOSX":   # .git, .venv, .virtual_documents
                    folders.append((path, (status.st_dev, status.st_ino)))
                elif not is_dir and not name.startswith("._") and Path(name).suffix.lower() in (".py", ".ipynb"):
                    files[os.path.normpath(path)] = status.st_dev, status.st_ino
                elif stat.S_ISLNK(status.st_mode):        # a link to a folder, say: not followed, and not in silence
                    say(f"attention-edu grade: not followed: {escape(path, False)} is a link", sys.stderr)
        found.update({name: files[name] for name in sorted(files) if name not in found})
    return found


def read_submission(path: str | Path, listed: tuple[int, int] | None = None) -> bytes:
    """A submission's bytes, read through one descriptor that refuses a link, a FIFO, a device, a file over 16 MiB and
    any but the file ``listed`` (device, inode): a name swapped after the listing changes nothing read or blocks."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:       # a link (ELOOP), a socket (ENXIO); gone, or not to be read (the teacher's): as it is
        if err.errno == errno.ELOOP:
            raise Refused(f"a symbolic link, not a submission: {path}") from None
        if err.errno == errno.ENXIO:
            raise Refused(f"not a regular file: {path}") from None
        raise
    with open(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):        # a FIFO or a device would hold or flood the grader
            raise Refused(f"not a regular file: {path}")
        if listed is not None and _identity(fd) != listed:      # an editor's save, say: the teacher grades it again
            raise FileNotFoundError(f"not the file that was listed: {path} was replaced while grading ran")
        data = handle.read((16 << 20) + 1)
    if len(data) > 16 << 20:
        raise Refused(f"larger than 16 MiB, not a submission: {path}" + (" (clear its outputs: Edit > Clear Outputs "
                      "of All Cells, then save it)" if str(path).lower().endswith(".ipynb") else ""))
    return data


def python_text(data: bytes) -> str:
    """A ``.py`` file's text as Python decodes it (BOM, coding cookie); ValueError where it cannot."""
    try:
        lines = io.BytesIO(data.replace(b"\r\n", b"\n").replace(b"\r", b"\n"))   # Python's lines: a lone \r ends one
        encoding = tokenize.detect_encoding(lines.readline)[0]      # (read by \n alone, a \r file were one line)
        if codecs.lookup(encoding).name in ("punycode", "idna"):    # idna uses punycode, quadratic in the length
            raise ValueError("its coding line names punycode or idna, which the grader does not decode")
        return io.TextIOWrapper(io.BytesIO(data), encoding).read()    # universal newlines, as tokenize.open reads
    except (SyntaxError, UnicodeDecodeError) as err:      # an unknown encoding, a cookie against the BOM, bad bytes
        raise ValueError(f"{err}; save it as UTF-8") from None


def commented(line: str) -> str:
    """A line IPython runs and Python cannot, as a comment after ``pass``: a block of nothing else still compiles."""
    return f"{line[:len(line) - len(line.lstrip())]}pass  # {line.lstrip()}"


_SIGNIFICANT = re.compile(r"\\.|'''|\"\"\"|['\"#\\()\[\]{}]")     # escapes, quotes, comments, brackets


def scan(line: str, depth: int, quote: str) -> tuple[int, str, bool]:
    """(brackets open, the quote of a string left open, whether a backslash joins the next line) after ``line``."""
    position, token = 0, ""
    while match := _SIGNIFICANT.search(line, position):
        token, position = match.group(), match.end()
        if quote:                                # a single quote ends at the first of three, and the two left are
            if token == quote or len(quote) == 1 and token[0] == quote:     # read again: "a"""" opens a """ string
                quote, position = "", match.start() + len(quote)
        elif token == "#":
            return depth, quote, False
        elif token in ("'", '"', "'''", '"""'):
            quote = token
        elif token in "([{)]}":
            depth = max(depth + (1 if token in "([{" else -1), 0)
    joined = token == "\\"                       # a lone backslash can only be the line's last character
    return depth, "" if len(quote) == 1 and not joined else quote, joined
