"""``attention-edu translate FILE.npz "text"``: a trained model's output and its alignment.

The alignment prints as a small text heatmap, a row per output character and
a column per source character, darker where the attention weight is larger.
What a model can read is listed in ``--help``: ``reverse`` reads the ten
letters a–j, 4 to 24 of them; ``dates`` reads a date between 1950 and 2049 in
one of eight formats. Text outside what the model was trained on (another
length, an impossible date such as 31 February, another format) is still
translated, with a warning on stderr: the output is then a guess.

Exit 0 on success (warnings included), 2 on a usage error: a checkpoint that is
missing or is not a model saved by ``train --out``, or text with characters
outside the model's alphabet.
"""

from __future__ import annotations

import argparse
import datetime
import re
import sys
from pathlib import Path
from typing import Any

from .checkpoint import CheckpointError, load
from .tasks import DATE_FORMATS, FIRST_DATE, LAST_DATE, REVERSE_ALPHABET, REVERSE_LENGTHS, format_date

__all__ = ["register", "run", "text_heatmap", "warnings_for"]

SHADES = " ░▒▓█"


def text_heatmap(weights: Any, source: str, output: str) -> str:
    """Weights (len(output), len(source)) as rows of shade characters, one per weight.

    Examples
    --------
    >>> print(text_heatmap([[0.0, 1.0], [0.7, 0.3]], "ab", "ba"))
        a b
      b   █
      a ▓ ░
    """
    lines = ["    " + " ".join(source)]
    for char, row in zip(output, weights):
        cells = [SHADES[min(len(SHADES) - 1, int(float(w) * len(SHADES)))] for w in row]
        lines.append(f"  {char} " + " ".join(cells))
    return "\n".join(lines)


def _inputs_help() -> str:
    """What each task's model reads, for ``--help``."""
    example = datetime.date(1990, 2, 14)  # a long month and a two-digit day show every format apart
    low, high = REVERSE_LENGTHS
    formats = "\n".join(f"  {format_date(example, fmt)}" for fmt in DATE_FORMATS)
    return (f"what a model reads:\n"
            f"reverse: {low} to {high} of the letters {REVERSE_ALPHABET[0]}–{REVERSE_ALPHABET[-1]} "
            f"({REVERSE_ALPHABET}), e.g. \"abcdefghij\" -> \"jihgfedcba\"\n"
            f"dates: a date from {FIRST_DATE.year} to {LAST_DATE.year} in one of these eight formats "
            f"(here 14 February 1990) -> 1990-02-14:\n{formats}\n"
            f"Other text is translated with a warning: the model was not trained on it.")


def _date_lengths() -> tuple[int, int]:
    """Shortest and longest source of ``dates``: one- and two-digit days on every weekday, every month."""
    lengths = [len(format_date(datetime.date(2000, month, day), fmt)) for fmt in DATE_FORMATS
               for month in range(1, 13) for day in (*range(1, 8), *range(22, 29))]
    return min(lengths), max(lengths)


def read_date(text: str) -> datetime.date | None:
    """The date ``text`` writes in one of :data:`DATE_FORMATS`, from 1950 to 2049, or None.

    Examples
    --------
    >>> read_date("14 Feb 1990"), read_date("31 February 2001"), read_date("1990-02-14")
    (datetime.date(1990, 2, 14), None, None)
    """
    for year in {int(y) for y in re.findall(r"\d{4}", text)} & set(range(FIRST_DATE.year, LAST_DATE.year + 1)):
        day = datetime.date(year, 1, 1)
        while day.year == year:         # every day of that year in every format: a few thousand strings
            if any(format_date(day, fmt) == text for fmt in DATE_FORMATS):
                return day
            day += datetime.timedelta(days=1)
    return None


def warnings_for(task: str, text: str, output: str) -> list[str]:
    """Why ``output`` may be a guess: ``text`` lies outside what ``task``'s model was trained on. A date the model
    reads but translates wrongly gets no warning (audit 73): the model is wrong, not the input.

    Examples
    --------
    >>> warnings_for("reverse", "abc", "cba")
    ['the reverse model was trained on 4 to 24 letters; "abc" has 3, so the output is a guess']
    >>> warnings_for("dates", "31 February 2001", "2001-02-31")  # doctest: +ELLIPSIS
    ['the output 2001-02-31 is not a calendar date: "31 February 2001" is not ... the output is a guess']
    >>> warnings_for("dates", "3 May 1979", "1979-05-03"), warnings_for("dates", "14 Feb 1990", "1990-04-24")
    ([], [])
    """
    if task == "reverse":
        low, high = REVERSE_LENGTHS
        if not low <= len(text) <= high:
            return [f"the reverse model was trained on {low} to {high} letters; {text!r} has "
                    f"{len(text)}, so the output is a guess".replace("'", '"')]
        return []
    if read_date(text) is not None:
        return []
    try:
        date = datetime.date.fromisoformat(output)
    except ValueError:
        date = None
    low, high = _date_lengths()
    why = (f"\"{text}\" is not a date from {FIRST_DATE.year} to {LAST_DATE.year} written in one of the "
           f"eight formats of --help (sources of {low} to {high} characters)")
    if date is None:
        return [f"the output {output} is not a calendar date: {why}, so the output is a guess"]
    return [f"{why}, so the output is a guess"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``translate`` subcommand to the ``attention-edu`` parser."""
    p = subparsers.add_parser(
        "translate", help="run a trained seq2seq model on a text and show its alignment",
        description="Greedy output of a model saved by 'attention-edu train --out', with its "
                    "attention weights as a text heatmap.",
        epilog=_inputs_help(), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoint", type=Path, metavar="FILE.npz", help="a model saved by train --out")
    p.add_argument("text", help="the source text (quote it when it has spaces)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Carry out ``attention-edu translate``; returns the exit code."""
    try:
        model = load(args.checkpoint)
    except CheckpointError as err:
        print(f"attention-edu translate: {err}", file=sys.stderr)
        return 2
    try:
        output, weights = model.translate(args.text)
    except ValueError as err:
        print(f"attention-edu translate: {err}", file=sys.stderr)
        return 2
    print(output)
    for warning in warnings_for(model.config.task, args.text, output):
        print(f"attention-edu translate: warning: {warning}", file=sys.stderr)
    if weights is None:
        print(f"(no alignment: this model has no attention, attention={model.config.attention})")
    else:
        print(f"alignment ({model.config.attention}): a row per output character, "
              f"a column per source character")
        print(text_heatmap(weights, args.text, output))
    return 0
