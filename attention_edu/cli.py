"""The ``attention-edu`` command line.

Each subcommand lives with the code it drives; its module has a
``register(subparsers)`` function that adds its parser and sets
``run=function(args) -> exit code``. This module only dispatches.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

__all__ = ["main", "build_parser"]

# subcommand -> module providing register(subparsers)
COMMANDS = {
    "examples": "attention_edu.worked_examples.command",
    "check": "attention_edu.checkers.command",
    "grade": "attention_edu.checkers.grade",
    "bench": "attention_edu.bench.command",
    "train": "attention_edu.seq2seq.train_command",
    "translate": "attention_edu.seq2seq.translate_command",
    "heads": "attention_edu.transformer.command",
}


def _version() -> str:
    from importlib.metadata import version
    return version("attention_edu")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="attention-edu",
        description="Attention mechanisms from scratch: the chapters' worked examples, "
                    "exercise checkers and benchmarks.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
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
    try:
        return int(args.run(args) or 0)
    except BrokenPipeError:  # output piped into a reader that stopped early (| head): end quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so that the interpreter's final flush cannot fail
        return 0


if __name__ == "__main__":
    sys.exit(main())
