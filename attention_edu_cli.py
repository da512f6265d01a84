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
    """Import the command line and run it; Ctrl-C (SIGTERM, SIGHUP) during the import is one line and exit 130."""
    pressed: list[int] = []
    try:
        import signal  # inside the guard: its import (enum with it) is a moment a Ctrl-C can land in

        def interrupted(number, frame):
            pressed.append(number)
            raise KeyboardInterrupt

        # a signal the shell ignores (SIG_IGN: a Ctrl-C in a background job, SIGHUP under nohup) stays ignored
        defaults = {getattr(signal, name): handler for name, handler in (
            ("SIGINT", signal.default_int_handler), ("SIGTERM", signal.SIG_DFL), ("SIGHUP", signal.SIG_DFL))
            if hasattr(signal, name) and signal.getsignal(getattr(signal, name)) is handler}
        for number in defaults:
            signal.signal(number, lambda number, frame: pressed.append(number))
        try:
            from attention_edu.cli import main as run
        finally:
            for number, handler in defaults.items():  # SIGTERM and SIGHUP end as Ctrl-C does until run's own guard
                signal.signal(number, handler if number == signal.SIGINT else interrupted)
        if pressed:
            raise KeyboardInterrupt
        try:
            return run()  # a Ctrl-C in the instant before run's own guard lands here too
        finally:          # the command is done: a SIGTERM or SIGHUP from now on ends the process, as by default
            for number in defaults:
                if number != signal.SIGINT:
                    signal.signal(number, signal.SIG_DFL)
    except KeyboardInterrupt:
        names = sys.modules.get("signal")       # None where the Ctrl-C came while it imported
        why = next((names.Signals(n).name for n in pressed if names and n != names.SIGINT), "Ctrl-C")
        print(f"attention-edu: interrupted ({why})", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
