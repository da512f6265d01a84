"""Attacks of the fifth red-team round, each run end to end through ``grade`` or ``check``: what a
student's archive can plant beside the gradebook, and notebook cells the grader must run as class did.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import subprocess
import textwrap
from pathlib import Path

RIGHT = """
import numpy as np

def softmax(x):
    top = np.max(x, axis=-1, keepdims=True)
    e = np.exp(x - np.where(np.isfinite(top), top, 0.0))
    total = np.sum(e, axis=-1, keepdims=True)
    return e / np.where(total == 0, 1.0, total)
"""
WRONG = "import numpy as np\n\ndef softmax(x):\n    return np.exp(x) / np.sum(np.exp(x))\n"


def _sha1(path: Path) -> str:
    return hashlib.sha1(path.read_bytes()).hexdigest()


def test_a_link_planted_at_the_gradebooks_temporary_name_is_not_written_through(tmp_path, console_script):
    # The gradebook was written to ".grades.partial-<pid>.csv" beside it, opened for writing through
    # whatever stood there: a student's archive that planted a symbolic link under that name (a PID is
    # easy to guess in a grading container) had the grader, as root, overwrite the file the link named
    # -- a classmate's submission here, any file of the machine in general -- and grades.csv became a link.
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "right.py").write_text(RIGHT)
    (folder / "wrong.py").write_text(WRONG)
    victim = folder / "victim.py"
    victim.write_text(RIGHT)
    before = _sha1(victim)
    script = f'ln -s victim.py "{folder}/.grades.partial-$$.csv"; exec "$0" "$@"'   # exec keeps the PID
    done = subprocess.run(["sh", "-c", script, console_script, "grade", str(folder), "--exercise", "softmax",
                           "--per-student", "--jobs", "2", "--csv", str(folder / "grades.csv"), "--no-progress"],
                          capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr.decode()
    assert _sha1(victim) == before
    gradebook = folder / "grades.csv"
    assert not gradebook.is_symlink()
    rows = {Path(r["file"]).name: r for r in csv.DictReader(io.StringIO(gradebook.read_text()))}
    assert rows["right.py"]["passed"] == rows["victim.py"]["passed"] == "True", rows
    assert rows["wrong.py"]["passed"] == "False", rows
