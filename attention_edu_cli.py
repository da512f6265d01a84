"""The ``attention-edu`` console script's first step: Ctrl-C says one line from the first instant.

Importing :mod:`attention_edu` (NumPy with it) takes a fifth of a second; a Ctrl-C then would end
in the interpreter's traceback, since :func:`attention_edu.cli.main` is not running yet to turn it
into its one line. This module, outside the package, imports nothing heavy until it can catch it.
"""

import sys

__all__ = ["main"]


def main() -> int:
    """Import the command line and run it; Ctrl-C during the import is one line and exit 130."""
    try:
        from attention_edu.cli import main as run
    except KeyboardInterrupt:
        print("attention-edu: interrupted (Ctrl-C)", file=sys.stderr)
        return 130
    return run()


if __name__ == "__main__":
    sys.exit(main())
