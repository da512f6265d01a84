"""The ``attention-edu`` command line.

Each subcommand lives with the code it drives; its module has a
``register(subparsers)`` function that adds its parser (or parsers) and sets
``run=function(args) -> exit code``. This module only dispatches, and turns
Ctrl-C into one line on stderr and exit status 130 (128 + SIGINT), the shell's
convention; commands write their files through
:func:`attention_edu.arguments.written_atomically`, so nothing is left half-written.
"""

from __future__ import annotations

import argparse
import errno
import gc
import importlib
import os
import signal
import sys
import threading

from .arguments import working_folder_off_path

__all__ = ["main", "build_parser"]

# subcommand -> module providing register(subparsers)
COMMANDS = {
    "examples": "attention_edu.worked_examples.command",
    "check": "attention_edu.checkers.judge.command",     # registers check and grade
    "grade": "attention_edu.checkers.judge.command",
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
    for module_name in dict.fromkeys(COMMANDS.values()):
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
    command = "attention-edu"
    _signals.clear()
    main_thread, before = threading.current_thread() is threading.main_thread(), {}
    for name in ("SIGTERM", "SIGHUP") if main_thread else ():     # kill, timeout, a closed terminal (not on Windows)
        number = getattr(signal, name, None)
        if number is not None and (handler := signal.getsignal(number)) is not signal.SIG_IGN:     # nohup: ignored
            before[number] = handler
            signal.signal(number, _interrupted)
    # a Ctrl-C the shell ignores (nohup, a script's background job) stays ignored
    watching = main_thread and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    if watching:
        signal.signal(signal.SIGINT, _interrupted)
    try:
        with working_folder_off_path():
            args = build_parser().parse_args(argv)     # registering imports every command's module
            command = f"attention-edu {args.command}"
            return _run(args)
    except KeyboardInterrupt:
        pass
    except Exception:
        # a C extension's import turns the KeyboardInterrupt it meets into an ImportError (NumPy's and
        # torch's do), so whatever ends a command after a Ctrl-C is the Ctrl-C's doing
        if not _signals:
            raise
    finally:
        for number, handler in before.items():    # as they were: a notebook's kernel keeps its own
            signal.signal(number, handler)
        if watching:
            signal.signal(signal.SIGINT, signal.default_int_handler)
    # Out of the except block the interrupted frames are freed, so an open progress bar
    # closes (and ends its line) before the one line that says what happened.
    gc.collect()
    why = next((signal.Signals(number).name for number in _signals if number != signal.SIGINT), "Ctrl-C")   # kill, a
    print(f"{command}: interrupted ({why})", file=sys.stderr)       # closed terminal: said as such (audit 73)
    return 130


_signals: list[int] = []  # the signals main has seen in this call
def _interrupted(signum: int, frame: object) -> None:
    _signals.append(signum)
    raise KeyboardInterrupt       # SIGTERM (kill, timeout) or SIGHUP ends a command as Ctrl-C does


def _run(args: argparse.Namespace) -> int:
    try:
        return int(args.run(args) or 0)
    except BrokenPipeError:  # output piped into a reader that stopped early (| head): end quietly
        _quiet_stdout()
        return 0
    except OSError as err:   # stdout on a full disk (> /dev/full): one line, not a traceback (audit 73)
        if err.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EIO):
            raise
        _quiet_stdout()
        print(f"attention-edu {args.command}: could not write the output: {err.strerror}", file=sys.stderr)
        return 1


def _quiet_stdout() -> None:
    """Point stdout at the null device, so that the interpreter's final flush cannot fail."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


if __name__ == "__main__":
    sys.exit(main())
