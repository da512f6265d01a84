"""Re-execute notebooks in place so their stored outputs are current (nbval compares them in CI).

Usage: python scripts/execute_notebooks.py [NOTEBOOK ...]   (default: every notebook)
Each runs in a fresh kernel from its own folder, like nbval does. Run it after changing
anything a notebook prints (the catalogue, display tables, step tables).
"""

import pathlib
import sys
import time

import nbclient
import nbformat

ROOT = pathlib.Path(__file__).resolve().parent.parent


def execute(path: pathlib.Path) -> float:
    notebook = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    client = nbclient.NotebookClient(notebook, kernel_name="python3", timeout=120,
                                     record_timing=False,
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    nbformat.write(notebook, path)
    return time.perf_counter() - start


if __name__ == "__main__":
    paths = [pathlib.Path(p) for p in sys.argv[1:]] or sorted((ROOT / "notebooks").rglob("*.ipynb"))
    for path in paths:
        print(f"{execute(path):6.1f} s  {path.relative_to(ROOT) if path.is_absolute() else path}")
