"""What a trained model learned: how sharp its reversal alignment is, and the shipped checkpoints.

For reversal the right alignment is known: output character t copies source
character n − 1 − t, so a model that attends where it should puts its largest
weight on the mirrored position, and the heatmap shows an anti-diagonal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..backend import host_numpy as np
from .decoding import greedy_decode

__all__ = ["mirrored_alignment_share", "CHECKPOINTS", "shipped_checkpoint", "shipped_histories"]

#: Where the small checkpoints made by ``scripts/make_checkpoints.py`` live.
CHECKPOINTS = Path(__file__).resolve().parent / "checkpoints"


def mirrored_alignment_share(model: Any, sources: list[str]) -> float:
    """Share of output positions t whose largest weight is on source position n − 1 − t.

    Only the positions the output and the source both have are counted (an
    output longer than its source has no mirror for its extra characters,
    which count as misses).

    Examples
    --------
    >>> from attention_edu.seq2seq import ModelConfig, Seq2Seq
    >>> untrained = Seq2Seq.initialize(ModelConfig.for_task("reverse", "luong-dot"), seed=0)
    >>> 0.0 <= mirrored_alignment_share(untrained, ["abcd", "hij"]) <= 1.0
    True
    """
    outputs, weights = greedy_decode(model, sources, who="mirrored_alignment_share")
    if weights[0] is None:
        raise ValueError(f"mirrored_alignment_share: attention {model.config.attention!r} has no alignment")
    hits = total = 0
    for source, output, w in zip(sources, outputs, weights):
        n = len(source)
        total += max(len(output), 1)
        rows = np.arange(min(len(output), n))
        hits += int(np.sum(np.argmax(w[rows], axis=-1) == n - 1 - rows))
    return hits / total


def shipped_checkpoint(task: str, attention: str) -> Path:
    """Path of a checkpoint shipped with the package (``FileNotFoundError`` if absent)."""
    path = CHECKPOINTS / f"{task}-{attention}.npz"
    if not path.exists():
        raise FileNotFoundError(f"no shipped checkpoint for {task}/{attention}; "
                                f"run scripts/make_checkpoints.py")
    return path


def shipped_histories() -> dict[str, Any]:
    """Training curves and held-out results of the shipped checkpoints, by ``task-attention``."""
    return json.loads((CHECKPOINTS / "histories.json").read_text(encoding="utf-8"))
