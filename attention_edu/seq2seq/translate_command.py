"""``attention-edu translate FILE.npz "text"``: a trained model's output and its alignment.

The alignment prints as a small text heatmap, a row per output character and
a column per source character, darker where the attention weight is larger.
Exit 0 on success, 2 when the text has characters outside the model's
alphabet, 1 when the checkpoint is missing or corrupt.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .checkpoint import CheckpointError, load

__all__ = ["register", "run", "text_heatmap"]

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


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``translate`` subcommand to the ``attention-edu`` parser."""
    p = subparsers.add_parser(
        "translate", help="run a trained seq2seq model on a text and show its alignment",
        description="Greedy output of a model saved by 'attention-edu train --out', with its "
                    "attention weights as a text heatmap.")
    p.add_argument("checkpoint", type=Path, metavar="FILE.npz", help="a model saved by train --out")
    p.add_argument("text", help="the source text (quote it when it has spaces)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Carry out ``attention-edu translate``; returns the exit code."""
    try:
        model = load(args.checkpoint)
    except CheckpointError as err:
        print(f"attention-edu translate: {err}", file=sys.stderr)
        return 1
    try:
        output, weights = model.translate(args.text)
    except ValueError as err:
        print(f"attention-edu translate: {err}", file=sys.stderr)
        return 2
    print(output)
    if weights is None:
        print(f"(no alignment: this model has no attention, attention={model.config.attention})")
    else:
        print(f"alignment ({model.config.attention}): a row per output character, "
              f"a column per source character")
        print(text_heatmap(weights, args.text, output))
    return 0
