"""Characters to integer ids and back, with padding, start and end symbols.

Id 0 pads a batch to its longest sequence, id 1 starts the decoder's input
(``<s>``), id 2 ends a sequence (``</s>``); the characters follow in order.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..backend import host_numpy as np

__all__ = ["Vocabulary", "PAD", "BOS", "EOS"]

PAD, BOS, EOS = 0, 1, 2
SPECIALS = 3


@dataclass(frozen=True)
class Vocabulary:
    """The characters a model reads or writes.

    Parameters
    ----------
    symbols : str
        The characters, each once.

    Examples
    --------
    >>> vocab = Vocabulary("abc")
    >>> vocab.size
    6
    >>> ids, lengths = vocab.encode(["ab", "c"])
    >>> ids
    array([[3, 4],
           [5, 0]])
    >>> vocab.decode([4, 3, 2, 5])
    'ba'
    """

    symbols: str

    def __post_init__(self) -> None:
        if len(set(self.symbols)) != len(self.symbols) or not self.symbols:
            raise ValueError(f"Vocabulary: symbols must be distinct characters, got {self.symbols!r}")

    @property
    def size(self) -> int:
        """Number of ids: the characters plus padding, start and end."""
        return len(self.symbols) + SPECIALS

    def check(self, text: str, who: str = "Vocabulary") -> None:
        """Raise ``ValueError`` naming any character of ``text`` outside the alphabet."""
        unknown = sorted(set(text) - set(self.symbols))
        if unknown:
            raise ValueError(f"{who}: {''.join(unknown)!r} not in the model's alphabet "
                             f"{self.symbols!r}")
        if not text:
            raise ValueError(f"{who}: the text is empty")

    def encode(self, texts: list[str], end: bool = False, start: bool = False,
               who: str = "Vocabulary.encode") -> tuple[np.ndarray, np.ndarray]:
        """Ids of ``texts`` padded with 0 to the longest: ``(ids (B, T), lengths (B,))``.

        ``start`` puts ``<s>`` first, ``end`` puts ``</s>`` last (both count in the length).
        """
        index = {c: i + SPECIALS for i, c in enumerate(self.symbols)}
        for text in texts:
            self.check(text, who)
        rows = [[BOS] * start + [index[c] for c in text] + [EOS] * end for text in texts]
        lengths = np.asarray([len(r) for r in rows], dtype=np.int64)
        ids = np.zeros((len(rows), int(lengths.max(initial=0))), dtype=np.int64)
        for b, row in enumerate(rows):
            ids[b, :len(row)] = row
        return ids, lengths

    def decode(self, ids: list[int]) -> str:
        """The characters of ``ids`` up to the first ``</s>`` (specials skipped)."""
        out = []
        for i in ids:
            if int(i) == EOS:
                break
            if int(i) >= SPECIALS:
                out.append(self.symbols[int(i) - SPECIALS])
        return "".join(out)
