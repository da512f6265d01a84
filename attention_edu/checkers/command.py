"""``attention-edu check EXERCISE FILE.py``: run one checker on a function defined in a file.

Exit codes: 0 when the check passes, 1 when it fails (or the file cannot be
run), 2 for usage errors (unknown exercise, missing file, no such function).
``attention-edu check --list`` lists the exercises and their signatures.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from typing import Any

from .harness import DEFAULT_TIMEOUT, call

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    """Add the ``check`` subcommand to the ``attention-edu`` parser."""
    parser = subparsers.add_parser(
        "check", help="check an exercise solution defined in a Python file",
        description="Import a function from FILE and run the exercise's checker on it. "
                    "Exit status: 0 pass, 1 fail, 2 usage error.")
    parser.add_argument("exercise", nargs="?", help="exercise name, e.g. softmax (see --list)")
    parser.add_argument("file", nargs="?", help="Python file that defines the function")
    parser.add_argument("--function", metavar="NAME",
                        help="name of the function in FILE (default: the exercise's own name)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                        help=f"time limit per call of the function (default {DEFAULT_TIMEOUT:g})")
    parser.add_argument("--list", action="store_true", help="list the exercises and exit")
    parser.set_defaults(run=run)


def _usage(message: str) -> int:
    print(f"attention-edu check: {message}", file=sys.stderr)
    return 2


def _exercise_name(text: str) -> str:
    name = text.strip().replace("-", "_")
    return name[len("check_"):] if name.startswith("check_") else name


def _load(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(f"attention_edu_solution_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(args: argparse.Namespace) -> int:
    """Run the ``check`` subcommand; returns the exit code."""
    from . import CHECKERS, EXERCISES  # the package imports this module's siblings first

    if args.list:
        for exercise in EXERCISES.values():
            print(f"{exercise.name:<30} {exercise.signature}")
        return 0
    valid = ", ".join(EXERCISES)
    if not args.exercise or not args.file:
        return _usage(f"give an exercise and a file, e.g. attention-edu check softmax my_softmax.py; "
                      f"exercises: {valid}")
    name = _exercise_name(args.exercise)
    if name not in EXERCISES:
        return _usage(f"unknown exercise {args.exercise!r}; valid exercises: {valid}")
    path = Path(args.file)
    if not path.is_file():
        return _usage(f"no such file: {path}")
    loaded = call(_load, (path,), ("file",), timeout=max(args.timeout, 10.0))
    if loaded.printed:
        print(loaded.printed, end="")
    if loaded.timed_out:
        print(f"check {name}: failed. importing {path} did not finish within "
              f"{max(args.timeout, 10.0):g} s")
        return 1
    if loaded.error is not None:
        print(f"check {name}: failed. importing {path} raised "
              f"{type(loaded.error).__name__}: {loaded.error}")
        return 1
    function_name = args.function or EXERCISES[name].function
    fn = getattr(loaded.value, function_name, None)
    if not callable(fn):
        found = sorted(k for k, v in vars(loaded.value).items()
                       if callable(v) and getattr(v, "__module__", None) == loaded.value.__name__)
        return _usage(f"{path} defines no function {function_name!r} (functions found: "
                      f"{', '.join(found) or 'none'}); name it {EXERCISES[name].function} or pass --function NAME")
    result = CHECKERS[name](fn, strict=False, timeout=args.timeout)
    print(result)
    return 0 if result.passed else 1
