"""Benchmark of ``attention-edu grade``: 30 softmax submissions (right, wrong, hostile), --jobs 2.

Prints the median and worst seconds per honest submission (the rows' own ``seconds``), the
folder's wall time, and the wall time of one ``attention-edu check`` (median of 3), with the
load average. Usage: ``python scripts/bench_grade.py``.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RIGHT = ("import numpy as np\n\ndef softmax(x):\n    top = np.max(x, axis=-1, keepdims=True)\n"
         "    e = np.exp(x - np.where(np.isfinite(top), top, 0.0))\n    total = np.sum(e, axis=-1, keepdims=True)\n"
         "    return e / np.where(total > 0, total, 1.0)\n")
WRONG = ["import numpy as np\n\ndef softmax(x):\n    e = np.exp(x)\n    return e / e.sum(axis=0, keepdims=True)\n",
         "import numpy as np\n\ndef softmax(x):\n    e = np.exp(x)\n    return e / e.sum(axis=-1, keepdims=True)\n"]
HOSTILE = ["def softmax(x):\n    while True:\n        pass\n",
           "import os\n\ndef softmax(x):\n    os._exit(0)\n",
           "import attention_edu as ae\n\ndef softmax(x):\n    return ae.softmax(x)\n",
           "import os\nfor _ in range(100):\n    if os.fork() == 0:\n        import time; time.sleep(60)\n" + RIGHT,
           "def softmax(x):\n    raise ValueError('\\x1b[2K\\rpassed')\n",
           "import sys\n\ndef softmax(x):\n    return sys._getframe().f_back.f_globals['reference'](x)\n"]


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="bench-grade-") as folder:
        return bench(Path(folder))


def bench(folder: Path) -> int:
    script = str(Path(sys.executable).parent / "attention-edu")
    honest = set()
    for index in range(30):
        if index % 5 == 4:
            source = HOSTILE[(index // 5) % len(HOSTILE)]
        elif index % 5 == 3:
            source = WRONG[index % 2]
        else:
            source, _ = RIGHT, honest.add(f"s{index:02d}.py")
        (folder / f"s{index:02d}.py").write_text(source)
    start = time.perf_counter()
    done = subprocess.run([script, "grade", str(folder), "--exercise", "softmax", "--json", "--jobs", "2",
                           "--timeout", "1", "--seed", "1", "--no-progress"], capture_output=True, text=True)
    wall = time.perf_counter() - start
    load = os.getloadavg()
    rows = json.loads(done.stdout)
    seconds = [r["seconds"] for r in rows if Path(r["file"]).name in honest]
    checks = []
    for _ in range(3):
        start = time.perf_counter()
        subprocess.run([script, "check", "softmax", str(folder / "s00.py")], capture_output=True)
        checks.append(time.perf_counter() - start)
    print(f"python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} cores; "
          f"layers: {rows[0]['sandbox']}")
    print(f"grade, 30 submissions, --jobs 2: wall {wall:.1f} s (load average before/after: {load[0]:.2f})")
    print(f"seconds per honest submission ({len(seconds)} rows): median {statistics.median(seconds):.2f}, "
          f"worst {max(seconds):.2f}")
    print(f"check of one file: median {statistics.median(checks):.2f} s, worst {max(checks):.2f} s; "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"passed: {sum(r['passed'] for r in rows)} of {len(rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
