"""Plain data between the judge and a child: JSON and NumPy's ``.npy`` format, one frame a message.

A frame is an 8-byte length, then a JSON document and the arrays it refers to, each as dtype + shape + raw bytes
(``allow_pickle=False``, no object arrays). Only ``None``, ``bool``, ``int``, ``float``, ``str``, ``...``, lists,
tuples, dicts with string keys, arrays and NumPy scalars cross; anything else a student returns is sent as
:class:`Unsupported` (what came back, described). Frames are length-capped, a message holds at most :data:`MAX_VALUES`
values (a call's reply :data:`REPLY_VALUES`), each array is read once and has a short header and no records (red team
56: a 10 KB header built a 100 KB dtype), anything malformed is a :class:`ProtocolError`, and nothing here can import or
unpickle. Standard library and NumPy (through the package's backend module) only: the worker loads both by path."""

import importlib.util
import io
import json
import math
import os
import select
import sys
import time
from typing import Any, Callable

if __package__:
    from ...backend import host_numpy as np
else:       # loaded by path in the sandboxed worker, without the package (whose __init__ loads the answers)
    _spec = importlib.util.spec_from_file_location("_attention_edu_backend", os.path.join(
        os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "backend.py"))
    _backend = sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)    # its dataclass looks it up
    _spec.loader.exec_module(_backend)
    np = _backend.host_numpy

__all__ = ["MAX_FRAME", "MAX_VALUES", "ProtocolError", "Unsupported", "plain", "encode", "decode", "send", "receive"]

MAX_FRAME = 64 << 20  #: The largest frame either side accepts, in bytes.
MAX_VALUES = 1 << 16  #: The most values (numbers, strings, lists, arrays ...) a message may hold: decoding is bounded.
REPLY_VALUES = 1 << 10  #: The most values in a call's reply, which the judge keeps until the verdict.
_MAX_DEPTH, _MAX_HEADER = 32, 2048      # an array's .npy header: 64 axes of 20 digits fit


class ProtocolError(ValueError):
    """A frame that is not a well-formed plain-data message (or too large, or cut short)."""


class Unsupported:
    """Stands for a returned value that is not plain data; ``what`` says what came back, on one line (a class name
    may hold a line break, red team 47)."""

    def __init__(self, what: str):
        self.what = "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in str(what)[:200])

    def __repr__(self) -> str:
        return f"Unsupported({self.what!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Unsupported) and other.what == self.what


_KINDS: dict[str, type] = {}     # what came back -> the Unsupported subclass named after it


def _unsupported(what: str, new: bool = True) -> Unsupported:
    """An :class:`Unsupported` whose class is named after what came back (reports print the name)."""
    name = "".join(c if c.isprintable() else "?" for c in what.removeprefix("an ").removeprefix("a ")[:80]) or "value"
    if new and name not in _KINDS:      # new: among a message's first 256 values (a class costs a kilobyte)
        if len(_KINDS) >= 256:          # full: emptied, so that one submission's kinds never unname another's
            _KINDS.clear()
        _KINDS[name] = type(name, (Unsupported,), {})
    return _KINDS.get(name, Unsupported)(what)


def _describe(value: Any) -> str:
    """What came back, in words: "an array of dtype object", "a matrix (an ndarray subclass)", "an Item object"."""
    kind = type(value).__name__
    a = "an" if kind[:1].lower() in "aeiou" else "a"
    if type(value) is np.ndarray:      # a record's dtype may take 10 KB to print
        return f"an array of dtype {value.dtype}" if value.dtype.names is None else "an array of records (fields)"
    if isinstance(value, np.ndarray):
        return f"{a} {kind} (an ndarray subclass)"
    try:
        has_array = hasattr(value, "__array__")
    except Exception:  # a student's __getattr__ may raise anything
        has_array = False
    return f"{a} {kind} object" + (" (it has __array__, but is not an ndarray)" if has_array else "")


def plain(value: Any, depth: int = 0, left: list[int] | None = None, limit: int = MAX_VALUES) -> Any:
    """``value`` with everything that is not plain data replaced by :class:`Unsupported`. Exact types only: an ndarray
    subclass, an object with ``__array__`` or an array of objects or records is described, not converted; a tuple's
    or list's subclass (a NamedTuple) crosses as its items. ``left`` counts down from ``limit``."""
    if left is None:      # the top: one Unsupported for a value too deep or too large (a list that holds itself)
        try:
            return plain(value, 0, [limit])
        except ProtocolError:
            return Unsupported(f"a value nested more than {_MAX_DEPTH} deep, or of more than {limit:,} values")
    left[0], kind = left[0] - 1, type(value)
    if depth > _MAX_DEPTH or left[0] < 0:
        raise ProtocolError("too large")
    if value is None or value is Ellipsis or kind in (bool, int, float, str):
        return value
    if kind is np.ndarray and not value.dtype.hasobject and value.dtype.names is None:
        return value
    if isinstance(value, np.generic) and kind.__module__ == "numpy" and not isinstance(value, (np.object_, np.void)):
        return value
    if issubclass(kind, (list, tuple)):      # the items it holds, whatever its own __iter__ says
        base = tuple if issubclass(kind, tuple) else list
        return base(plain(v, depth + 1, left) for v in base.__iter__(value))
    if kind is dict and all(type(k) is str for k in value):
        return {k: plain(v, depth + 1, left) for k, v in value.items()}
    return _unsupported(_describe(value))     # named already here: a call run inline has no frame in between


def _tree(value: Any, blobs: list[bytes]) -> Any:
    """``value`` as JSON, its arrays appended to ``blobs``. A one-key dict tags what JSON lacks: $a an array and
    $s a NumPy scalar (each an index into ``blobs``), $t a tuple, $d a dict, $f inf or nan, $e ..., $x Unsupported."""
    kind = type(value)
    if value is None or kind in (bool, int, str):
        return value
    if kind is float:
        return value if np.isfinite(value) else {"$f": repr(value)}
    if value is Ellipsis or isinstance(value, Unsupported):
        return {"$e": 0} if value is Ellipsis else {"$x": value.what}
    if kind is np.ndarray or isinstance(value, np.generic):
        buffer = io.BytesIO()
        np.lib.format.write_array(buffer, np.asarray(value), allow_pickle=False)
        blobs.append(buffer.getvalue())
        return {"$a" if kind is np.ndarray else "$s": len(blobs) - 1}
    if kind is list:
        return [_tree(v, blobs) for v in value]
    if kind is tuple:
        return {"$t": [_tree(v, blobs) for v in value]}
    if kind is dict:
        return {"$d": [[k, _tree(v, blobs)] for k, v in value.items()]}
    raise ProtocolError(f"cannot send a {kind.__name__}")


def encode(message: Any) -> bytes:
    """The frame body for ``message`` (plain data only; see :func:`plain`)."""
    blobs: list[bytes] = []
    head = json.dumps(_tree(message, blobs), allow_nan=False).encode("utf-8")
    return b"".join(len(part).to_bytes(8, "little") + part for part in [head, *blobs])


def _array(blob: bytes) -> np.ndarray:
    """One ``.npy`` blob as a plain ndarray, never a pickle or an array of objects."""
    try:
        array = np.lib.format.read_array(io.BytesIO(blob), allow_pickle=False, max_header_size=_MAX_HEADER)
    except Exception as err:  # a malformed or long header, a pickled array, a short buffer
        raise ProtocolError(f"a malformed array ({type(err).__name__}: {str(err)[:100]})") from None
    if type(array) is not np.ndarray or array.dtype.hasobject or array.dtype.names is not None:
        raise ProtocolError("an array of Python objects or of records")
    return array


def _untree(node: Any, blobs: list[bytes | None], left: list[int], depth: int = 0) -> Any:
    """The value of a JSON ``node``; ``left``: values left, the count under which none names a kind, text left."""
    left[0] -= 1
    if left[0] < 0:
        raise ProtocolError("a message of more values than its limit")
    if depth > _MAX_DEPTH + 2:
        raise ProtocolError("a message nested too deeply")
    if type(node) is str:      # text: one emoji makes each character take 4 bytes (red team 57: 16 MB from 4 MiB)
        left[2] -= len(node)
        if left[2] < 0:
            raise ProtocolError("a message of more text than its limit")
    if node is None or type(node) in (bool, int, float, str):
        return node
    if type(node) is list:
        return [_untree(v, blobs, left, depth + 1) for v in node]
    if type(node) is not dict or len(node) != 1:
        raise ProtocolError("an unknown kind of value")
    (tag, body), = node.items()
    if tag == "$t" and type(body) is list:
        return tuple(_untree(v, blobs, left, depth + 1) for v in body)
    if tag == "$d" and type(body) is list and all(type(p) is list and len(p) == 2 and type(p[0]) is str
                                                   for p in body):
        return {_untree(k, blobs, left, depth + 1): _untree(v, blobs, left, depth + 1) for k, v in body}   # keys count
    if tag in ("$a", "$s") and type(body) is int and 0 <= body < len(blobs) and blobs[body] is not None:
        array, blobs[body] = _array(blobs[body]), None     # each array once: a frame decodes to no more than it holds
        if tag == "$s" and array.ndim:
            raise ProtocolError("a scalar with a shape")
        return array if tag == "$a" else array[()]
    if tag == "$f" and body in ("nan", "inf", "-inf") or tag == "$e":
        return Ellipsis if tag == "$e" else float(body)
    if tag == "$x" and type(body) is str:
        return _unsupported(body, new=left[0] > left[1])
    raise ProtocolError(f"an unknown tag {str(tag)[:20]!r}")


def decode(body: bytes, values: int = MAX_VALUES) -> Any:
    """The message in a frame body, of at most ``values`` values; :class:`ProtocolError` for anything malformed."""
    view, blobs = memoryview(body), []
    size = int.from_bytes(view[:8], "little")
    if len(view) < 8 or size > len(view) - 8:
        raise ProtocolError("a frame cut short")
    try:
        head = json.loads(bytes(view[8:8 + size]).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ProtocolError("a frame whose header is not JSON") from None
    at = 8 + size
    while at < len(view):
        length = int.from_bytes(view[at:at + 8], "little")
        if len(view) - at < 8 or length > len(view) - at - 8:
            raise ProtocolError("an array cut short")
        blobs.append(bytes(view[at + 8:at + 8 + length]))
        at += 8 + length
    return _untree(head, blobs, [values, values - 256, values << 8])   # first 256 values name kinds; 256 chars each


def send(fd: int, message: Any, deadline: float = math.inf) -> None:
    """Write ``message`` as one frame to the file descriptor ``fd``. A non-blocking ``fd`` whose
    reader stops reading raises TimeoutError at ``deadline`` (on :func:`time.monotonic`)."""
    body = encode(message)
    if len(body) > MAX_FRAME:
        body = encode({"error": {"type": "ValueError", "message": "the answer is too large to send"}})
    view = memoryview(len(body).to_bytes(8, "little") + body)
    while view:
        try:
            view = view[os.write(fd, view):]
        except BlockingIOError:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([], [fd], [], left)[1]:
                raise TimeoutError from None


def _read(fd: int, count: int, deadline: float, drain: tuple[int, Callable[[], bool]] | tuple = ()) -> bytes:
    """Exactly ``count`` bytes from ``fd``: TimeoutError at ``deadline``, EOFError if the writer ends first. Past the
    deadline, bytes already waiting are still read (a thread held up by another's parsing finds its reply late).
    ``drain`` = (fd2, read_it): while fd2 is ready and fd is not, read_it() (a child's printing never waits on us)."""
    data = bytearray()
    while len(data) < count:
        ready = select.select([fd, *drain[:1]], [], [], max(deadline - time.monotonic(), 0.0))[0]
        if fd not in ready and (not ready or time.monotonic() > deadline):    # printing on is no reply either
            raise TimeoutError
        if fd not in ready:
            drain = drain if drain[1]() else ()     # read_it() is False once fd2's writers are all gone
            continue
        chunk = os.read(fd, min(count - len(data), 1 << 20))
        if not chunk:
            raise EOFError
        data += chunk
    return bytes(data)


def receive(fd: int, deadline: float, cap: tuple[int, int] = (MAX_FRAME, MAX_VALUES),
            drain: tuple[int, Callable[[], bool]] | tuple = ()) -> Any:
    """The next message on ``fd``, of at most ``cap`` bytes and values (``deadline`` on :func:`time.monotonic`;
    ``drain`` as :func:`_read` has it). Raises TimeoutError, EOFError (the writer ended) or :class:`ProtocolError`."""
    size = int.from_bytes(_read(fd, 8, deadline, drain), "little")
    if size > cap[0]:
        raise ProtocolError(f"a message of {size:,} bytes, over the limit of {cap[0]:,}")
    return decode(_read(fd, size, deadline, drain), cap[1])
