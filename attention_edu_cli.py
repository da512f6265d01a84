"""The ``attention-edu`` console script's first step: Ctrl-C says one line from the first instant.

Importing :mod:`attention_edu` (NumPy with it) takes a fifth of a second; a Ctrl-C then would end
in the interpreter's traceback, since :func:`attention_edu.cli.main` is not running yet to turn it
into its one line. Worse, a KeyboardInterrupt raised inside a C extension's import can come out as
an ImportError (NumPy's "PyCapsule_Import could not import module"), which no ``except`` for
KeyboardInterrupt catches. So while the package imports, a Ctrl-C is only noted; once the import
is whole, a noted Ctrl-C ends the command with its one line and exit 130.
"""

import sys

__all__ = ["main"]


def main() -> int:
    """Import the command line and run it; Ctrl-C during the import is one line and exit 130."""
    pressed: list[int] = []
    try:
        import signal  # inside the guard: its import (enum with it) is a moment a Ctrl-C can land in

        noting = signal.getsignal(signal.SIGINT) is signal.default_int_handler
        if noting:  # a Ctrl-C the shell ignores (SIG_IGN) stays ignored
            signal.signal(signal.SIGINT, lambda number, frame: pressed.append(number))
        try:
            from attention_edu.cli import main as run
        finally:
            if noting:
                signal.signal(signal.SIGINT, signal.default_int_handler)
        if pressed:
            raise KeyboardInterrupt
        return run()  # a Ctrl-C in the instant before run's own guard lands here too
    except KeyboardInterrupt:
        print("attention-edu: interrupted (Ctrl-C)", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
