"""The ``attention-edu`` command line.

Each subcommand lives with the code it drives; its module has a
``register(subparsers)`` function that adds its parser and sets
``run=function(args) -> exit code``. This module only dispatches.
"""

from __future__ import annotations

import argparse
import importlib
import sys

__all__ = ["main", "build_parser"]

# subcommand -> module providing register(subparsers)
COMMANDS = {
    "examples": "attention_edu.worked_examples.command",
    "check": "attention_edu.checkers.command",
    "bench": "attention_edu.bench.command",
    "train": "attention_edu.seq2seq.train_command",
    "translate": "attention_edu.seq2seq.translate_command",
}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="attention-edu",
        description="Attention mechanisms from scratch: the chapters' worked examples, "
                    "exercise checkers and benchmarks.",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module_name in COMMANDS.values():
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code.

    Examples
    --------
    >>> main(["--help"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    SystemExit: 0
    """
    args = build_parser().parse_args(argv)
    return int(args.run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
