"""The tasks, generated in code: ``sort`` digits and ``induction`` (repeat a random string).

Every example is written as one token sequence ``| source | target`` with the
separator ``|`` at the start and between the halves: the prompt is
``|source|`` and the model writes the target after it, one token at a time.

- ``sort``: digits 0–9, a source of 4–12 digits, the target the same digits
  in ascending order (``|5031|0135``).
- ``induction``: a source of 6–12 distinct letters drawn from ``a``–``t``,
  the target its repetition (``|qcmf|qcmf``). The whole sequence is then a
  string repeated twice, so every token of the second copy follows the
  previous occurrence of the token before it: only an induction mechanism (a
  head that attends to the token after the previous occurrence of the current
  one) can predict it.

Held-out data never overlaps training data: a source is held out exactly when
its CRC-32 is divisible by 8 (one in eight, whatever the seed), training draws
only the others, and the test sets only those.
"""

from __future__ import annotations

import zlib

from ..backend import host_numpy as np
from ..seq2seq.tasks import int_pair
from ..shapes import positive_int

__all__ = ["TASKS", "SEPARATOR", "LENGTHS", "ALPHABETS", "make_dataset", "is_held_out", "vocabulary"]

TASKS = ("sort", "induction")
SEPARATOR = "|"
LENGTHS = {"sort": (4, 12), "induction": (6, 12)}
ALPHABETS = {"sort": "0123456789", "induction": "abcdefghijklmnopqrst"}
HELD_OUT_EVERY = 8


def vocabulary(task: str) -> str:
    """The task's tokens, one character each: the separator first, then its alphabet."""
    return SEPARATOR + ALPHABETS[task]


def is_held_out(source: str) -> bool:
    """True when ``source`` belongs to the held-out split (CRC-32 divisible by 8)."""
    return zlib.crc32(source.encode()) % HELD_OUT_EVERY == 0


def _source(task: str, rng: np.random.Generator, length: int, alphabet: str) -> str:
    if task == "sort":
        return "".join(alphabet[i] for i in rng.integers(0, len(alphabet), size=length))
    return "".join(alphabet[i] for i in rng.permutation(len(alphabet))[:length])


def _target(task: str, source: str) -> str:
    return "".join(sorted(source)) if task == "sort" else source


def make_dataset(task: str, size: int, seed: int = 0, *, held_out: bool = False,
                 lengths: tuple[int, int] | None = None, alphabet: str | None = None) -> list[tuple[str, str]]:
    """``size`` (source, target) pairs of ``task`` drawn with ``seed``.

    Parameters
    ----------
    task : {"sort", "induction"}
    size : int
        Number of pairs (≥ 0).
    seed : int
        Seed of the draw.
    held_out : bool
        Draw from the held-out split (sources training never sees).
    lengths : (low, high), optional
        Source lengths, both included; default :data:`LENGTHS` of the task.
    alphabet : str, optional
        The tokens sources are drawn from; default the task's own (:data:`ALPHABETS`).
        Another task's alphabet writes this task's pattern in that task's tokens, e.g.
        induction sequences a sort model can read (:func:`.heads.head_scores`).

    Returns
    -------
    list of (str, str)

    Examples
    --------
    >>> pairs = make_dataset("sort", 3, seed=0)
    >>> all(t == "".join(sorted(s)) for s, t in pairs), len(pairs)
    (True, 3)
    >>> [s == t for s, t in make_dataset("induction", 2, seed=0)]
    [True, True]
    >>> [s.isdigit() and len(set(s)) == len(s) for s, _ in make_dataset("induction", 2, lengths=(6, 10), alphabet="0123456789")]
    [True, True]
    """
    if task not in TASKS:
        raise ValueError(f"make_dataset: unknown task {task!r}; choose one of {', '.join(TASKS)}")
    size = positive_int("make_dataset", "size", size, minimum=0)
    seed = positive_int("make_dataset", "seed", seed, minimum=0)
    if not isinstance(held_out, (bool, np.bool_)):      # "no" is truthy, and no source's split equals it
        raise ValueError(f"make_dataset: held_out must be True or False, got {held_out!r}")
    alphabet = ALPHABETS[task] if alphabet is None else alphabet
    if not (isinstance(alphabet, str) and alphabet and SEPARATOR not in alphabet and len(set(alphabet)) == len(alphabet)):
        raise ValueError(f"make_dataset: alphabet must be a non-empty str of distinct characters without "
                         f"{SEPARATOR!r}, got {alphabet!r}")
    low, high = LENGTHS[task] if lengths is None else int_pair("make_dataset", "lengths", lengths)
    longest = len(alphabet) if task == "induction" else 64
    if not (isinstance(low, int) and isinstance(high, int) and 1 <= low <= high <= longest):
        raise ValueError(f"make_dataset: lengths must be (low, high) with 1 <= low <= high <= {longest} "
                         f"for {task}{'' if alphabet == ALPHABETS[task] else ' in this alphabet'}, got {(low, high)!r}")
    rng = np.random.default_rng(seed)
    pairs: list[tuple[str, str]] = []
    tries = 0
    while len(pairs) < size:
        tries += 1
        if tries > 100 * size + 1000:
            raise ValueError(f"make_dataset: cannot draw {size} {'held-out' if held_out else 'training'} "
                             f"{task} sources of lengths {low}-{high}; too few exist")
        source = _source(task, rng, int(rng.integers(low, high + 1)), alphabet)
        if is_held_out(source) == held_out:
            pairs.append((source, _target(task, source)))
    return pairs
