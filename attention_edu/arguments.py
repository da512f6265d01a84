"""Argument types shared by the subcommands of ``attention-edu``.

Each is an ``argparse`` type: a bad value is refused while the command line is
parsed, with a one-line message and exit status 2, before any work is done.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

__all__ = ["output_path", "positive_int", "positive_seconds"]


def output_path(text: str) -> Path:
    """A file to write: its folder must already exist.

    Examples
    --------
    >>> output_path("/no/such/folder/x.md")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: the folder /no/such/folder does not exist (create it first)
    """
    path = Path(text)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise argparse.ArgumentTypeError(f"the folder {folder} does not exist (create it first)")
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{path} is a folder; give a file name")
    return path


def positive_int(text: str) -> int:
    """A count: a whole number of at least 1.

    Examples
    --------
    >>> positive_int("64")
    64
    >>> positive_int("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a positive integer, got 0
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return value


def positive_seconds(text: str) -> float:
    """A time limit in seconds: a finite number above 0.

    Examples
    --------
    >>> positive_seconds("2.5")
    2.5
    >>> positive_seconds("-1")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a number of seconds above 0, got -1
    """
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0, got {text}")
    return value
