"""``python -m attention_edu``: the ``attention-edu`` command, where the console script is not on PATH.

    python -m attention_edu examples
    python -m attention_edu check softmax my_softmax.py
"""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
