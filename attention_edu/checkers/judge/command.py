"""``attention-edu check EXERCISE FILE``: run one checker on a function defined in a file.

FILE is a ``.py`` file or an exercise notebook. The file is never imported into this process:
it runs once in a sandboxed interpreter of its own (see :mod:`.remote`), which answers the
probes' calls, so an exit, a crash or a hang is a failed check with its reason. Each run adds
hidden cases from a fresh seed (``--seed S`` repeats one). ``--verbose`` says which sandbox
layers were active. Exit codes: 0 only when every probe ran and passed; 1 when the check
failed, was not attempted (a stub), or the file could not be run; 2 for usage errors (unknown
exercise, missing file, no such function). ``attention-edu check --list`` lists the exercises.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ...arguments import positive_seconds
from ..records import fresh_seed
from .harness import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT
from .submission import grade_one

__all__ = ["register", "run", "filesystem_layer"]


def register(subparsers: Any) -> None:
    """Add the ``check`` subcommand to the ``attention-edu`` parser."""
    parser = subparsers.add_parser(
        "check", help="check an exercise solution defined in a Python file or notebook",
        description="Run the exercise's checker on a function defined in FILE (.py or .ipynb), "
                    "in a sandboxed interpreter of its own. Exit status: 0 pass, 1 fail or not "
                    "attempted, 2 usage error.")
    parser.add_argument("exercise", nargs="?", help="exercise name, e.g. softmax (see --list)")
    parser.add_argument("file", nargs="?", help="Python file or notebook that defines the function")
    add_submission_options(parser, "name of the function in FILE (default: the exercise's own name)")
    parser.add_argument("--verbose", action="store_true", help="also say which sandbox layers were active")
    parser.add_argument("--list", action="store_true", help="list the exercises and exit")
    parser.set_defaults(run=run)


def add_submission_options(parser: argparse.ArgumentParser, function_help: str) -> None:
    """``--function``, ``--timeout``, ``--memory`` and ``--seed``: how ``check`` and ``grade`` run a submission."""
    parser.add_argument("--function", metavar="NAME", help=function_help)
    parser.add_argument("--timeout", type=positive_seconds, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                        help=f"time limit per call of the function (default {DEFAULT_TIMEOUT:g})")
    parser.add_argument("--memory", type=float, default=DEFAULT_MEMORY_MB, metavar="MB",
                        help=f"extra memory a call may use (default {DEFAULT_MEMORY_MB})")
    parser.add_argument("--seed", type=int, metavar="S", help="seed of the hidden probes (default: fresh)")


def filesystem_layer() -> str | None:
    """None when Landlock can restrict the student's interpreter here, else why not."""
    from .landlock import abi_version

    return None if abi_version() else "the kernel offers no Landlock"


def _usage(message: str) -> int:
    print(f"attention-edu check: {message}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    """Run the ``check`` subcommand; returns the exit code."""
    from .. import EXERCISES, exercise_name

    if args.list:
        for exercise in EXERCISES.values():
            print(f"{exercise.name:<30} {exercise.signature}")
        return 0
    valid = ", ".join(EXERCISES)
    if not args.exercise or not args.file:
        return _usage(f"give an exercise and a file, e.g. attention-edu check softmax my_softmax.py; "
                      f"exercises: {valid}")
    name = exercise_name(args.exercise)
    if name not in EXERCISES:
        return _usage(f"unknown exercise {args.exercise!r}; valid exercises: {valid}")
    seed = fresh_seed() if args.seed is None else args.seed
    row = grade_one(name, args.file, args.function, args.timeout, args.memory, seed=seed)
    if row.usage:
        hint = "" if row.error.startswith("no such file") else (
            f"; name it {EXERCISES[name].function} or pass --function NAME")
        return _usage(row.error + hint)
    print(row.message)
    if args.verbose:
        print(f"(hidden cases drawn with seed {seed}; sandbox layers: {', '.join(row.sandbox) or 'none'})")
    return 0 if row.passed and row.error is None else 1
