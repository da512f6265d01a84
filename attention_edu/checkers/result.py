"""What a checker hands back: a :class:`CheckResult` that reads well in a terminal (``str``) and in Jupyter (a
coloured box); in strict mode one that did not pass is raised as :class:`CheckFailed` instead, so that a course's CI
can grade notebooks by running them. :func:`say` prints the commands' lines, which may hold a student's text.
"""

import contextlib
import html
import os
import sys
from dataclasses import dataclass, field
from typing import Any

from .judge import escape
from .records import PROBES

__all__ = ["CheckResult", "CheckFailed", "finish", "print_notes", "describe", "say", "screen_lines", "STRICT_ENV"]

#: Environment variable that turns strict mode on for every checker (e.g. in CI).
STRICT_ENV = "ATTENTION_EDU_STRICT"


def describe(value: Any) -> str:
    """What a student's function gave, for a sentence (a value that crossed from a child is named as it came).

    >>> import numpy as np
    >>> describe(None), describe([1.0]), describe(np.ones(2)), describe(np.ones(2, dtype=object)), describe(3)
    ('None', 'a list of 1 value', 'an array of dtype float64', 'an array of dtype object', 'an int')
    """
    from .judge.protocol import Unsupported, _describe
    if value is None:
        return "None"
    if isinstance(value, Unsupported):
        return value.what
    if type(value).__module__ != "builtins":
        return _describe(value)         # an array, an ndarray subclass, an object
    kind = type(value).__name__
    count = f" of {len(value)} value{'s' if len(value) != 1 else ''}" if type(value) in (list, tuple) else ""
    return ("an " if kind[:1] in "aeiou" else "a ") + kind + count


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one checker run.

    Attributes
    ----------
    exercise : str
        Exercise name (``"softmax"``) or answer id (``"fund.exercise-2"``).
    passed, attempted : bool
        Every probe passed; False for ``attempted`` when the function is still a stub (raises NotImplementedError,
        returns None or Ellipsis) or an answer was left as ``...``.
    summary : str
        One line: what happened.
    hint, hint_id : str, str or None
        The diagnosis (at most two sentences; "" when there is none) and its id, e.g. ``"softmax.wrong-axis"``.
    probe : str or None
        The first probe that failed (that of the first mistake).
    case : object or None
        The input case on which it failed (a ``Case`` for coding exercises).
    details : str
        Inputs, your output and the expected output, or other evidence.
    notes : tuple of str
        Remarks that do not fail the check (e.g. the function printed).
    probes_passed, probes_total : int or None
        Probes (input cases, properties, determinism) passed, out of all of them; every probe runs, even after a
        failure (None for pen-and-paper answers).
    mistakes : tuple of dict
        Every distinct mistake found, each ``{"hint_id", "probe", "hint"}`` with the first probe that shows it.
    probes_failed : dict
        The probes not passed, counted by group (a case's probe id, ``"properties"``, ``"determinism"``), those
        skipped after a time limit or a crash included.
    probes_not_run : int
        How many of those never ran: after two calls in a row ran out of time or crashed, the rest are not called
        (each would cost as much).

    Examples
    --------
    >>> print(CheckResult("softmax", passed=True, attempted=True, summary="all probes passed"))
    check softmax: passed. all probes passed
    """

    exercise: str
    passed: bool
    attempted: bool
    summary: str
    hint: str = ""
    hint_id: str | None = None
    probe: str | None = None
    case: Any = None
    details: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)
    probes_passed: int | None = None
    probes_total: int | None = None
    mistakes: tuple[dict, ...] = field(default_factory=tuple)
    probes_failed: dict[str, int] = field(default_factory=dict)
    probes_not_run: int = 0

    @property
    def status(self) -> str:
        """``"passed"``, ``"not attempted"`` or ``"failed"``."""
        if self.passed:
            return "passed"
        return "failed" if self.attempted else "not attempted"

    def __bool__(self) -> bool:
        """A result is truthy only when it passed (so ``assert check_x(f)`` cannot pass silently)."""
        return self.passed

    @property
    def message(self) -> str:
        """The full plain-text message (the same as ``str(result)``)."""
        return str(self)

    @property
    def headline(self) -> str:
        """The first line: status, how far the function got, what happened."""
        return f"check {self.exercise}: {self.status}. {self._story()}"

    def _story(self) -> str:
        """The headline after its status: how far a failed function got, then what happened."""
        if self.status != "failed" or not self.probes_total:
            return self.summary
        count = f"{len(self.mistakes)} mistakes found; " if len(self.mistakes) > 1 else ""
        lost = f" ({self.probes_not_run} did not run: two calls in a row were lost)" if self.probes_not_run else ""
        progress = f"{self.probes_passed} of {self.probes_total} probes passed{lost}"
        return f"{progress}; {count}the first failure: {self.summary}"

    def _hints(self) -> list[tuple[str, str | None, str | None, str]]:
        """(label, hint id, title of the first probe that shows it, hint) of each mistake found."""
        hints = [("Hint", self.hint_id, None, self.hint)] if self.hint else []
        others = [m for m in self.mistakes if (m["hint_id"], m["probe"]) != (self.hint_id, self.probe)]   # the first
        for number, other in enumerate(others, start=2):
            title = PROBES.get(other["probe"] or "", str(other["probe"]))
            hints.append((f"Mistake {number}", str(other["hint_id"]), title, other["hint"]))
        return hints

    def __str__(self) -> str:
        lines = [self.headline]
        for label, hint_id, probe, hint in self._hints():
            tag = f" [{hint_id}]" if hint_id else ""
            seen = f', first seen on the probe "{probe}"' if probe else ""
            lines.append(f"{label}{tag}{seen}: {hint}")
        if self.details:
            lines.append(self.details)
        lines.extend(f"Note: {note}" for note in self.notes)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        colour, mark = {"passed": ("#2e7d32", "&#10004;"), "not attempted": ("#9e9e9e", "&#9675;"),
                        "failed": ("#c62828", "&#10008;")}[self.status]
        parts = [f'<div style="border-left: 6px solid {colour}; padding: 4px 10px; margin: 4px 0;">',
                 f"<b>{mark} check {html.escape(self.exercise)}: {self.status}.</b> {html.escape(self._story())}"]
        for label, hint_id, probe, hint in self._hints():
            tag = f" <code>{html.escape(hint_id)}</code>" if hint_id else ""
            seen = f", first seen on the probe &ldquo;{html.escape(probe)}&rdquo;" if probe else ""
            parts.append(f"<p><b>{label}</b>{tag}{seen}: {html.escape(hint)}</p>")
        if self.details:
            parts.append(f'<pre style="font-size: 90%;">{html.escape(self.details)}</pre>')
        parts.extend(f"<p><i>Note:</i> {html.escape(note)}</p>" for note in self.notes)
        parts.append("</div>")
        return "\n".join(parts)


class CheckFailed(AssertionError):
    """Raised in strict mode when a check does not pass; ``.result`` holds the details. An ``AssertionError``, so
    that test runners count a failed check, not a crash; always raised explicitly, so that ``python -O`` keeps it."""

    def __init__(self, result: CheckResult):
        super().__init__(str(result))
        self.result = result


def finish(result: CheckResult, strict: bool | None) -> CheckResult:
    """Return ``result``, or raise :class:`CheckFailed` if strict and it did not pass.

    ``strict=None`` defers to the environment variable ``ATTENTION_EDU_STRICT`` (on when it is 1, true, yes or on, in
    any case).

    >>> finish(CheckResult("softmax", passed=False, attempted=True, summary="wrong"), strict=True)
    Traceback (most recent call last):
    ...
    attention_edu.checkers.result.CheckFailed: check softmax: failed. wrong
    """
    if strict is None:
        strict = os.environ.get(STRICT_ENV, "").strip().lower() in {"1", "true", "yes", "on"}
    if strict and not result.passed:
        raise CheckFailed(result)
    return result


def print_notes(log: list) -> tuple[str, ...]:
    """Notes for a run's result from its calls' outcomes (:class:`.judge.Outcome`): the function ran in this process,
    without its limits; it printed."""
    notes = ()
    if any(not o.isolated for o in log):
        notes = ("your function ran in this process, without the time and memory limits (Windows and macOS "
                 "do not fork one, or ATTENTION_EDU_START_METHOD=inline chose it).",)
    printed = "".join(o.printed for o in log)
    if not printed:
        return notes
    text = printed.strip()
    first = escape(text.splitlines()[0][:80], newlines=False) if text else "(blank lines)"   # no terminal codes
    count = len(printed.splitlines())
    return notes + (f'your function printed while it ran ({count} line{"s" if count != 1 else ""}, '
                     f'first: "{first}"); remove debugging prints once it works.',)


def screen_lines(text: str, width: int) -> str:
    """``text`` in screen lines under ``width`` columns (0: no limit; beyond ASCII a character counts 2), each after
    the first of a line indented: a message padded to wrap on the terminal drew a screen line that read as a row.

    >>> print(screen_lines("failed  0/25  m.py  " + "x" * 12 + "passed  25/25  m.py", 30))
    failed  0/25  m.py
        xxxxxxxxxxxxpassed
        25/25  m.py
    """
    pieces, piece, columns, limit = [], "", 0, max(width - 1, 8)
    for character in text:
        if character == "\n":
            pieces.append(piece)
            piece, columns = "", 0
            continue
        cost = 1 if character < "\x7f" else 2
        if width and columns + cost > limit:
            head, space, tail = piece.rpartition(" ")        # at a space where there is one, mid-word if not
            tail_columns = sum(1 if c < "\x7f" else 2 for c in tail)
            if not (space and head.strip() and 4 + tail_columns + cost <= limit):
                head, tail, tail_columns = piece, "", 0
            pieces.append(head.rstrip())
            piece, columns = "    " + tail, 4 + tail_columns
        piece, columns = piece + character, columns + cost
    return "\n".join(pieces + [piece])


def say(text: str, stderr: bool = False) -> None:
    """Print ``text`` on stdout (or stderr), on a terminal in :func:`screen_lines` of its width (COLUMNS, else the
    window's), so that no student's text (a message, a file name) is left to the terminal to wrap; not at all where
    the stream is closed (``2>&-``: None), so that nothing meant for stderr lands in ``--json``'s stdout."""
    stream, width = sys.stderr if stderr else sys.stdout, 0
    if stream is None:
        return
    if stream.isatty():
        with contextlib.suppress(OSError, ValueError):
            width = max(int(os.environ.get("COLUMNS") or os.get_terminal_size(stream.fileno()).columns), 0)
    print(screen_lines(text, width), file=stream)
