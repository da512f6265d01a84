"""The two toy translation tasks, generated in code: ``reverse`` and ``dates``.

"Attention Mechanisms: Fundamentals" opens with the seq2seq bottleneck: one
fixed-size vector must carry the whole source. Reversal makes the bottleneck
visible (the first output character depends on the last source character, and
the longer the source the more the vector must hold); dates show attention
lining up pieces of text that move around between formats (the month name
with the month digits).

Held-out data never overlaps training data: every source (for ``dates``,
every calendar date, whatever its format) belongs to one split only, decided
by a stable hash of its text, so no seed can leak a test example into
training.
"""

from __future__ import annotations

import datetime
import operator
import zlib
from typing import Any

from ..backend import host_numpy as np
from ..shapes import positive_int

__all__ = ["TASKS", "ALPHABETS", "REVERSE_ALPHABET", "REVERSE_LENGTHS", "DATE_FORMATS", "make_dataset",
           "format_date", "is_held_out"]

#: The source alphabet of ``reverse``: ten letters.
REVERSE_ALPHABET = "abcdefghij"
#: Source lengths of ``reverse`` (inclusive): long enough for the bottleneck to show.
REVERSE_LENGTHS = (4, 24)
FIRST_DATE, LAST_DATE = datetime.date(1950, 1, 1), datetime.date(2049, 12, 31)
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")

#: How ``dates`` writes a date: the six formats of the design page, then two more.
DATE_FORMATS = (
    "{day} {month} {year}",              # 3 May 1979
    "{month} {day}, {year}",             # May 3, 1979
    "{weekday}, {month} {day}, {year}",  # Thursday, May 3, 1979
    "{day} {mon} {year}",                # 14 Feb 1990
    "{dd}.{mm}.{year}",                  # 03.05.1979
    "{year}/{mm}/{dd}",                  # 1979/05/03
    "{mon} {day}, {year}",               # Feb 14, 1990
    "{wkd} {day} {mon} {year}",          # Thu 3 May 1979
)
TASKS = ("reverse", "dates")
#: Characters each task reads (source) and writes (target).
ALPHABETS = {
    "reverse": (REVERSE_ALPHABET, REVERSE_ALPHABET),
    "dates": ("".join(sorted(set("".join(MONTHS + WEEKDAYS) + "0123456789 ,./"))), "0123456789-"),
}
HELD_OUT_SHARE = 10  # one key in ten is held out


def format_date(date: datetime.date, fmt: str) -> str:
    """``date`` written in one of :data:`DATE_FORMATS`.

    Examples
    --------
    >>> import datetime
    >>> format_date(datetime.date(1979, 5, 3), DATE_FORMATS[2])
    'Thursday, May 3, 1979'
    >>> format_date(datetime.date(1979, 5, 3), DATE_FORMATS[4])
    '03.05.1979'
    """
    month = MONTHS[date.month - 1]
    return fmt.format(day=date.day, dd=f"{date.day:02d}", mm=f"{date.month:02d}", year=date.year,
                      month=month, mon=month[:3], weekday=WEEKDAYS[date.weekday()],
                      wkd=WEEKDAYS[date.weekday()][:3])


def is_held_out(key: str) -> bool:
    """True when ``key`` (a reversal source, or an ISO date) belongs to the held-out split.

    Examples
    --------
    >>> sum(is_held_out(str(i)) for i in range(10_000))   # about one in ten
    996
    """
    return zlib.crc32(key.encode("utf-8")) % HELD_OUT_SHARE == 0


def _reverse_pairs(size: int, rng: np.random.Generator, held_out: bool,
                   lengths: tuple[int, int]) -> list[tuple[str, str]]:
    low, high = lengths
    pairs: list[tuple[str, str]] = []
    tries = 0
    while len(pairs) < size:
        tries += 1
        if tries > 100 * size + 1000:       # (1, 1) holds 10 sources, none of them held out
            raise ValueError(f"make_dataset: cannot draw {size} {'held-out' if held_out else 'training'} reverse "
                             f"sources of lengths {low}-{high}; too few exist")
        n = int(rng.integers(low, high + 1))
        # a Python list, not a NumPy array of letters: str.join over one lost a Ctrl-C now and then
        source = "".join([REVERSE_ALPHABET[i] for i in rng.integers(0, len(REVERSE_ALPHABET), n).tolist()])
        if is_held_out(source) == held_out:
            pairs.append((source, source[::-1]))
    return pairs


def _dates_pairs(size: int, rng: np.random.Generator, held_out: bool) -> list[tuple[str, str]]:
    span = (LAST_DATE - FIRST_DATE).days + 1
    pairs: list[tuple[str, str]] = []
    while len(pairs) < size:
        date = FIRST_DATE + datetime.timedelta(days=int(rng.integers(0, span)))
        iso = date.isoformat()
        if is_held_out(iso) == held_out:
            fmt = DATE_FORMATS[int(rng.integers(0, len(DATE_FORMATS)))]
            pairs.append((format_date(date, fmt), iso))
    return pairs


def int_pair(func: str, name: str, value: Any) -> tuple[int, int]:
    """``value`` as a pair of ints (a range of lengths), else a ValueError naming both."""
    try:            # operator.index refuses floats, and arrays of more than one integer
        if isinstance(value, (tuple, list)) and len(value) == 2 and not any(isinstance(v, bool) for v in value):
            return operator.index(value[0]), operator.index(value[1])
    except TypeError:
        pass
    raise ValueError(f"{func}: {name} must be (low, high), two ints, got {value!r}")


def make_dataset(task: str, size: int, seed: int = 0, *, held_out: bool = False,
                 lengths: tuple[int, int] | None = None) -> list[tuple[str, str]]:
    """``size`` random (source, target) pairs of ``task``, drawn with ``seed``.

    Parameters
    ----------
    task : {"reverse", "dates"}
        ``reverse``: a string over :data:`REVERSE_ALPHABET` → the same string
        backwards. ``dates``: a date of 1950–2049 written in one of
        :data:`DATE_FORMATS` → ISO ``YYYY-MM-DD``.
    size : int
        Number of pairs (repeats are possible, as in any sample).
    seed : int
        Seed of the generator; the same seed gives the same pairs.
    held_out : bool
        Draw from the held-out split instead of the training split. The two
        splits share no source (``reverse``) and no calendar date (``dates``).
    lengths : (int, int), optional
        ``reverse`` only: inclusive range of source lengths (default
        :data:`REVERSE_LENGTHS`).

    Returns
    -------
    list of (str, str)

    Examples
    --------
    >>> make_dataset("reverse", 2, seed=0, lengths=(4, 6))
    [('gfcdaa', 'aadcfg'), ('bigj', 'jgib')]
    >>> make_dataset("dates", 2, seed=0)
    [('2035/01/24', '2035-01-24'), ('Sunday, February 11, 2001', '2001-02-11')]
    """
    if task not in TASKS:
        raise ValueError(f"make_dataset: unknown task {task!r}; choose one of {', '.join(TASKS)}")
    size = positive_int("make_dataset", "size", size, minimum=0)
    seed = positive_int("make_dataset", "seed", seed, minimum=0)
    if not isinstance(held_out, (bool, np.bool_)):      # "no" is truthy, and no source's split equals it
        raise ValueError(f"make_dataset: held_out must be True or False, got {held_out!r}")
    rng = np.random.default_rng(seed)
    if task == "reverse":
        low, high = REVERSE_LENGTHS if lengths is None else int_pair("make_dataset", "lengths", lengths)
        if not 1 <= low <= high:
            raise ValueError(f"make_dataset: lengths must satisfy 1 <= low <= high, got {lengths!r}")
        return _reverse_pairs(size, rng, held_out, (low, high))
    if lengths is not None:
        raise ValueError("make_dataset: lengths applies to the 'reverse' task only")
    return _dates_pairs(size, rng, held_out)
