"""The judge: running a student's code in a child process, grading it, reporting the rows.

Its modules are laid out in docs/architecture.md; here are the records they pass around: what one call of
the student's function gave (:class:`ErrorInfo`, :class:`Outcome`) and one graded submission (:class:`Row`), and
the helpers for the text a submission holds or prints.
"""

from __future__ import annotations

import codecs
import contextlib
import difflib
import errno
import io
import os
import re
import stat
import sys
import tokenize
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

_MISSPELT = re.compile(r"name '(\w+)' is not defined|'numpy\.ndarray' object has no attribute '(\w+)'"
                       r"|module 'numpy' has no attribute '(\w+)'")

__all__ = ["ErrorInfo", "Outcome", "escape", "python_text", "scan", "commented",
           "read_submission", "list_submissions", "Refused"]


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
    def read(cls, info: Any, names: tuple[str, ...] = ()) -> ErrorInfo | None:
        """From a child's reply, which may hold anything: wrong types become text, shown texts one line each
        (a student's class name or message could hold a line break and a forged verdict after it). A misspelt
        argument (one of ``names``), ndarray method or NumPy function gets the "Did you mean" that Python prints
        from 3.12 on (3.11 only in a traceback): ``d_ouput``, ``K.tranpose``."""
        if type(info) is not dict:
            return None
        bases = info.get("bases") if type(info.get("bases")) is list else ["Exception"]
        text = {key: escape(str(info.get(key, default))[:cap], False)
                for key, default, cap in (("type", "Exception", 100), ("message", "", 4000), ("line", "", 400))}
        found = _MISSPELT.fullmatch(text["message"])
        if found is not None:
            from ...backend import host_numpy as np
            pool = (names, dir(np.ndarray), dir(np))[found.lastindex - 1]
            meant = difflib.get_close_matches(found[found.lastindex], [n for n in pool if n[:1] != "_"], 1, 0.85)
            text["message"] += f". Did you mean: '{meant[0]}'?" if meant else ""
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
    found: dict[str, tuple[str, tuple[int, int] | None]] = {}    # by absolute path: subs/ and /home/t/subs/, once
    for text in paths:
        if not os.path.isdir(text):
            found.setdefault(os.path.abspath(text), (os.path.normpath(text), _identity(text)))
            continue
        files, folders = {}, [(text, None)]      # not os.walk, whose recursion ended 1,000 folders down (a zip's)
        while folders:
            folder, listed = folders.pop()
            try:
                entries = list(_entries(folder, listed))
            except OSError as err:      # a path too long, no permission: named on stderr
                say(f"attention-edu grade: could not list a folder: {escape(str(err), False)}", stderr=True)
                continue
            for name, status in entries:        # hidden folders, a Mac zip's folder and its ._ files: not submissions
                path, is_dir = os.path.join(folder, name), stat.S_ISDIR(status.st_mode)
                if is_dir and not name.startswith(".") and name != "__MACOSX":   # .git, .venv, .virtual_documents
                    folders.append((path, (status.st_dev, status.st_ino)))
                elif not is_dir and not name.startswith("._") and Path(name).suffix.lower() in (".py", ".ipynb"):
                    files[os.path.normpath(path)] = status.st_dev, status.st_ino
                elif stat.S_ISLNK(status.st_mode):        # a link to a folder, say: not followed, and not in silence
                    say(f"attention-edu grade: not followed: {escape(path, False)} is a link", stderr=True)
        found.update({os.path.abspath(n): (n, files[n]) for n in sorted(files) if os.path.abspath(n) not in found})
    return dict(found.values())


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


#: A named escape (``\N{...}``) or any other, a quote with the letters before it, a comment, a bracket, a colon
_SIGNIFICANT = re.compile(r"\\N\{[\w -]*\}|\\.?|([rRbBuUfFtT]{0,2})('''|\"\"\"|['\"])|[#()\[\]{}:]")
#: Prefixes of strings whose replacement fields are code that may hold strings and lines (Python 3.12+, PEP 701)
FORMATTED = frozenset(prefix for letter in "ft"[:(sys.version_info >= (3, 12)) + (sys.version_info >= (3, 14))]
                      for prefix in (letter, "r" + letter, letter + "r"))


def scan(line: str, depth: int, quote: str, formatted: frozenset | None = None) -> tuple[int, str, bool]:
    """(brackets open, the strings left open, whether a backslash joins the next line) after ``line``. ``quote`` (from
    the line before) is "" or the strings open, innermost last, "|" between: a quote; an f-string's, after "f" ("rf":
    raw); a replacement field in it ("{" and the brackets open there); the field's format spec (":"). ``formatted``:
    the f-string prefixes read as Python 3.12+ reads them (default :data:`FORMATTED`, this Python's)."""
    formatted = FORMATTED if formatted is None else formatted
    stack, position, token = quote.split("|") if quote else [], 0, ""
    while match := _SIGNIFICANT.search(line, position):
        token, position, top = match.group(), match.end(), stack[-1] if stack else "{0"
        code, string = top[0] == "{", stack[-2] if top == ":" else top     # a spec's text is its f-string's
        closing = string.lstrip("rf")                    # the quote that ends that string
        if not code and match[2] and (match[2] == closing or len(closing) == 1 and match[2][0] == closing):
            stack, position = stack[:-2 if top == ":" else -1], match.start(2) + len(closing)   # "a"""": a, then ""
        elif not code and string[0] in "rf":             # an f-string's text, or its field's format spec
            if token.startswith("\\N") and string[0] == "r":
                position = match.start() + 2             # raw: \N is two characters, and a field may follow
            elif token[:1] == "\\" and token[1:] in ("{", "}"):
                position = match.start() + 1             # a backslash escapes no brace: \{{ is \ and {{, \{x} a field
            elif token in "{}" and top != ":" and line[position:position + 1] == token:
                position += 1                            # {{ and }}: a brace in the text
            elif token == "{":
                stack.append("{0")                       # a replacement field: code
            elif token == "}" and top == ":":
                stack.pop()                              # the spec ends, and its field
        elif code and token == "#":
            break
        elif code and match[2]:                          # a string opens: an f-string if its letters say so
            before = line[match.start() - 1:match.start()]     # the end of a name (x1f"a"): the letters are its
            letters = "" if before and ("_" + before).isidentifier() else match[1].lower()
            stack.append(("r" * ("r" in letters) + "f" if letters in formatted else "") + match[2])
        elif code and stack and token in "}:" and top == "{0":
            stack[-1:] = [":"] if token == ":" else []   # the field's format spec begins, or the field ends
        elif code and token in "([{)]}" and stack:      # a bracket in a field
            stack[-1] = "{" + str(max(int(top[1:]) + (1 if token in "([{" else -1), 0))
        elif code and token in "([{)]}":                 # a bracket in the line's code
            depth = max(depth + (1 if token in "([{" else -1), 0)
    joined = token == "\\"                               # a lone backslash can only be the line's last character
    if stack and not joined and stack[-1][0] not in "{:" and len(stack[-1].lstrip("rf")) == 1:
        stack.pop()                                      # a one-quote string ends with its line (an error there)
    return depth, "|".join(stack), joined
