"""The judge's plain-data protocol: a fuzz of malformed, oversized and hostile frames never crashes
the decoder with anything but ProtocolError, and never reaches pickle."""

from __future__ import annotations

import collections
import io
import json
import os
import pickle
import signal

import numpy as np
import pytest

from attention_edu.checkers.judge import protocol


def _hostile_frames(rng: np.random.Generator) -> list[bytes]:
    good = protocol.encode({"value": (np.arange(6.0).reshape(2, 3), 1.5, "s", None, [True]), "x": ...})
    pickled = io.BytesIO()
    np.save(pickled, np.array([{"a": 1}], dtype=object), allow_pickle=True)      # an object array
    head = json.dumps({"$a": 0}).encode()
    frames = [b"", b"\x00" * 7, good[:5], good[:-3], good + b"\x01", pickle.dumps({"value": 1}),
              (10**12).to_bytes(8, "little") + b"{}",
              len(head).to_bytes(8, "little") + head + len(pickled.getvalue()).to_bytes(8, "little") + pickled.getvalue(),
              len(head).to_bytes(8, "little") + head + (5).to_bytes(8, "little") + b"\x93NUMP",
              ]
    for doc in ['{"$a": 3}', '{"$q": 1}', '{"$t": 5}', '{"$d": [[1, 2]]}', '{"$s": 0}', '[' * 5000 + ']' * 5000,
                '{"$f": "pi"}', '{"a": 1, "b": 2}', '"\\ud800"', 'NaN', '{"$x": 7}', '{"$d": [["k"]]}']:
        body = doc.encode()
        frames.append(len(body).to_bytes(8, "little") + body)
    for _ in range(300):                          # random corruption of a good frame
        frame = bytearray(good)
        for index in rng.integers(0, len(frame), size=rng.integers(1, 8)):
            frame[index] = int(rng.integers(0, 256))
        frames.append(bytes(frame[: int(rng.integers(0, len(frame) + 1))]))
    frames += [bytes(rng.integers(0, 256, size=int(n), dtype=np.uint8)) for n in rng.integers(0, 400, size=100)]
    return frames


def test_fuzzed_frames_raise_protocol_error_only_and_never_unpickle(monkeypatch):
    def forbidden(*args, **kwargs):
        raise AssertionError("the decoder reached pickle")

    for name in ("loads", "load", "Unpickler"):
        monkeypatch.setattr(pickle, name, forbidden)
    decoded = 0
    for frame in _hostile_frames(np.random.default_rng(0)):
        try:
            value = protocol.decode(frame)
        except protocol.ProtocolError:
            continue
        decoded += 1
        assert not _has_objects(value), value
    assert decoded < 320          # most corrupted frames are refused; any that decode hold plain data


def _has_objects(value) -> bool:
    if isinstance(value, np.ndarray):
        return value.dtype.hasobject or type(value) is not np.ndarray
    if isinstance(value, (list, tuple)):
        return any(_has_objects(v) for v in value)
    if isinstance(value, dict):
        return any(_has_objects(v) for v in value.values())
    return not (value is None or value is Ellipsis or isinstance(value, (bool, int, float, str, np.generic,
                                                                       protocol.Unsupported)))


def test_round_trip_and_what_is_refused():
    message = {"a": np.float32(2.5), "b": (np.ones((2, 0)), -np.inf, float("nan")), "c": [1, "two"]}
    back = protocol.decode(protocol.encode(message))
    assert back["a"] == np.float32(2.5) and type(back["a"]) is np.float32
    assert back["b"][0].shape == (2, 0) and back["b"][1] == -np.inf and np.isnan(back["b"][2])
    assert protocol.plain(np.array([1, None], dtype=object)) == protocol.Unsupported("an array of dtype object")

    class Liar(np.ndarray):
        def __eq__(self, other):
            return True

    described = protocol.decode(protocol.encode(protocol.plain(np.zeros(3).view(Liar))))
    assert isinstance(described, protocol.Unsupported) and "Liar (an ndarray subclass)" in described.what
    assert type(described).__name__ == "Liar (an ndarray subclass)"
    with pytest.raises(protocol.ProtocolError):
        protocol.encode(object())


def test_a_tuple_subclass_crosses_as_the_items_it_holds():
    """False-fail hunt 3: a NamedTuple of the two arrays (output, weights) was "an Attention object", 0 of 30. It
    crosses as a plain tuple of what it holds, even where its own __iter__ says otherwise."""
    Pair = collections.namedtuple("Pair", "output weights")

    class Lying(tuple):
        def __iter__(self):
            return iter((np.zeros(1),))

    for sent in (Pair(np.ones(2), np.eye(2)), Lying((np.ones(2), np.eye(2)))):
        back = protocol.decode(protocol.encode(protocol.plain(sent)))
        assert type(back) is tuple and len(back) == 2 and type(back[0]) is np.ndarray
        assert np.array_equal(back[0], np.ones(2)) and np.array_equal(back[1], np.eye(2))
    assert type(protocol.plain(type("Row", (list,), {})([1, np.ones(1)]))) is list


def test_a_list_that_holds_itself_is_one_unsupported_value_at_once():
    """Red team 31: a returned list of 4 items that are the list itself was walked to depth 32 (4 ** 32 steps), so a
    function that returned at once read "did not finish" (harness.timeout). Too deep or too many values is now one
    Unsupported, found within the message's cap of values."""
    loop = [0, 0, 0, 0]
    for i in range(4):
        loop[i] = loop
    deep = []
    for _ in range(40):
        deep = [deep]
    def too_slow(*_):
        raise TimeoutError("plain() walked for more than 10 s")
    previous = signal.signal(signal.SIGALRM, too_slow)
    signal.alarm(10)
    try:
        for value in (loop, (loop,), deep, list(range(protocol.MAX_VALUES + 1))):
            sent = protocol.plain(value)
            assert isinstance(sent, protocol.Unsupported) and "more than" in sent.what, sent
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    fine = [np.ones(2)] * 1000 + [[1.0, "x"]] * 100
    assert protocol.decode(protocol.encode(protocol.plain(fine)))[-1] == [1.0, "x"]


def test_a_frame_over_the_cap_is_refused_before_it_is_read():
    read, write = os.pipe()
    os.write(write, (protocol.MAX_FRAME + 1).to_bytes(8, "little"))
    with pytest.raises(protocol.ProtocolError, match="limit"):
        protocol.receive(read, deadline=__import__("time").monotonic() + 5)
    os.close(read), os.close(write)


@pytest.mark.parametrize("reply, memory", [
    ({"warnings": 5, "mutated": "x", "seconds": "slow", "error": "boom"}, False),
    ({"warnings": [{"a": 1}] * 50, "mutated": ["x", "not an argument", 7], "seconds": None}, False),
    ({"error": {"type": ["list"], "bases": 3, "message": None, "line": {"k": 1}}, "value": (1, 2)}, False),
    ({"error": {"type": "MemoryError", "bases": ["MemoryError", "Exception"]}}, True),
])
def test_a_reply_of_any_shape_becomes_a_sane_outcome(reply, memory):
    """A decoded frame is plain data but may be forged by the student's code: wrong types must
    become text or nothing, never an exception in the judge."""
    from attention_edu.checkers.judge.harness import read_reply

    outcome = read_reply(reply, ("x",), 256)
    assert isinstance(outcome.seconds, (int, float)) and all(type(w) is str for w in outcome.warnings)
    assert len(outcome.warnings) <= 20 and set(outcome.mutated) <= {"x"}
    assert outcome.error is None or (type(outcome.error.type_name) is str and type(outcome.error.line) is str
                                     and all(type(b) is str for b in outcome.error.bases))
    assert (outcome.ended_id == "harness.memory") == memory, outcome


def _frame(head: object, *arrays: np.ndarray) -> bytes:
    """A frame body written by hand, as a hostile child would: its JSON head, then the arrays."""
    parts = [json.dumps(head).encode()]
    for array in arrays:
        buffer = io.BytesIO()
        np.lib.format.write_array(buffer, array, allow_pickle=False)
        parts.append(buffer.getvalue())
    return b"".join(len(part).to_bytes(8, "little") + part for part in parts)


def test_an_array_referred_to_twice_is_refused():
    """400 references to one 1 MiB array made the judge build 400 MiB from a 1 MiB frame."""
    assert protocol.decode(_frame({"$a": 0}, np.zeros(3))).tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(protocol.ProtocolError, match="an unknown tag"):
        protocol.decode(_frame([{"$a": 0}, {"$a": 0}], np.zeros(3)))
    with pytest.raises(protocol.ProtocolError):
        protocol.decode(_frame({"$d": [["functions", [{"$s": 0}] * 400]]}, np.zeros(())))


def test_a_message_of_more_values_than_the_cap_is_refused_quickly():
    import time

    fits = [0] * (protocol.MAX_VALUES - 1)                     # the list itself is a value too
    assert len(protocol.decode(_frame(fits))) == protocol.MAX_VALUES - 1
    start = time.perf_counter()
    with pytest.raises(protocol.ProtocolError, match="more values than its limit"):
        protocol.decode(_frame([[0] * 1000] * 4000))          # 4 million values in 8 MB of JSON
    assert time.perf_counter() - start < 5


def test_records_long_headers_and_long_replies_never_reach_the_judge_whole():
    """Red team 56: each .npy header of an empty record array is parsed into a dtype of its own, 10 KB of header
    making 100 KB of dtype. The worker describes records; the judge refuses them, and any header over 2 KB, before
    building anything; a reply holds at most REPLY_VALUES values."""
    record = np.dtype([(f"f{i}", "<f8") for i in range(560)])
    for value in (np.zeros(3, record), np.zeros(1, record)[0]):
        sent = protocol.plain(value)
        assert isinstance(sent, protocol.Unsupported) and ("records" in sent.what or "void" in sent.what), sent
    for plain_dtype in ("M8[s]", "V8"):          # crosses, to be told "has dtype ..." (test_checkers.py)
        assert type(protocol.plain(np.zeros(2, plain_dtype))) is np.ndarray
    with pytest.raises(protocol.ProtocolError, match="records"):
        protocol.decode(_frame({"$a": 0}, np.zeros(0, [("a", "<f8")])))
    wide = io.BytesIO()
    np.lib.format.write_array(wide, np.zeros(0, record), allow_pickle=False)
    long = wide.getvalue()
    assert len(long) > 9000
    body = b"".join(len(p).to_bytes(8, "little") + p for p in [json.dumps([{"$a": i} for i in range(400)]).encode()]
                    + [long] * 400)
    start = __import__("time").perf_counter()
    with pytest.raises(protocol.ProtocolError, match="Header info length"):
        protocol.decode(body)
    assert __import__("time").perf_counter() - start < 0.5       # refused at the first array, not 400 parsed
    deep = np.empty((0,) + (1,) * 63)                            # an honest header of NumPy's most axes fits
    assert protocol.decode(_frame({"$a": 0}, deep)).shape == deep.shape
    many = [np.float64(1.0)] * (protocol.REPLY_VALUES + 1)
    told = protocol.plain(many, limit=protocol.REPLY_VALUES)
    assert isinstance(told, protocol.Unsupported) and f"{protocol.REPLY_VALUES:,} values" in told.what
    assert len(protocol.plain(many[:-2], limit=protocol.REPLY_VALUES)) == protocol.REPLY_VALUES - 1
    with pytest.raises(protocol.ProtocolError, match="more values"):
        protocol.decode(protocol.encode(many), protocol.REPLY_VALUES)


def test_a_reply_already_waiting_is_read_past_the_deadline_and_a_flood_of_frames_is_not():
    """Red team 20: a classmate's file held the grader's interpreter lock for a minute (a quadratic pattern), and the
    threads grading others found their replies, long arrived, past their deadlines: an honest notebook scored 0 of 25.
    Bytes already waiting are now read past the deadline; a stream of other frames (import refusals, helper calls)
    past it still ends in TimeoutError, so a child cannot keep the judge reading."""
    import time
    from attention_edu.checkers.judge.harness import Child
    read_end, write_end = os.pipe()
    try:
        protocol.send(write_end, {"value": 1.0})
        assert protocol.receive(read_end, time.monotonic() - 5.0) == {"value": 1.0}     # late, but there
        with pytest.raises(TimeoutError):
            protocol.receive(read_end, time.monotonic() - 5.0)                         # nothing there: no wait
        for _ in range(50):
            protocol.send(write_end, {"violation": "import torch"})
        protocol.send(write_end, {"value": 2.0})
        child = Child(None, read_end, write_end, lambda: 0, deadline=time.monotonic() - 1.0)
        outcome = child.ask(None, 1.0)
        assert getattr(outcome, "timed_out", False), outcome
    finally:
        os.close(read_end), os.close(write_end)


def test_printing_that_never_pauses_cannot_hold_a_read_past_its_deadline():
    """A child's threads that print without pause keep its printed pipe ready: the judge read what they printed,
    then looked again, for as long as the pipe was never found empty, past the call's time limit. Reading a reply now
    ends at its deadline whatever the other pipe does (here a drain that never empties it stands for them)."""
    import threading
    import time
    reply_r, reply_w = os.pipe()
    printed_r, printed_w = os.pipe()
    os.write(printed_w, b"x")
    drained, raised = [], []

    def read() -> None:
        with pytest.raises(TimeoutError):
            protocol.receive(reply_r, time.monotonic() + 0.3, drain=(printed_r, lambda: drained.append(1) or True))
        raised.append(True)

    reader = threading.Thread(target=read, daemon=True)
    start = time.monotonic()
    reader.start()
    reader.join(10)
    try:
        assert not reader.is_alive() and raised == [True] and time.monotonic() - start < 5 and drained
    finally:
        for fd in (reply_r, reply_w, printed_r, printed_w):
            os.close(fd)
