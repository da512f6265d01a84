"""Re-execute notebooks in place so their stored outputs are current (nbval compares them in CI).

Usage: python scripts/execute_notebooks.py [NOTEBOOK ...]   (default: every notebook)
Each runs in a fresh kernel from its own folder, like nbval does. Run it after changing
anything a notebook prints (the catalogue, display tables, step tables). The stored kernelspec
is the installed kernel's own (display name "Python 3 (ipykernel)"), so JupyterLab does not
mark a freshly opened notebook as modified.
"""

import pathlib
import sys
import time

import nbclient
import nbformat
from jupyter_client.kernelspec import KernelSpecManager

ROOT = pathlib.Path(__file__).resolve().parent.parent
KERNEL = "python3"


def kernelspec() -> dict:
    """The metadata JupyterLab writes for the installed kernel, e.g. "Python 3 (ipykernel)"."""
    spec = KernelSpecManager().get_kernel_spec(KERNEL)
    return {"display_name": spec.display_name, "language": spec.language, "name": KERNEL}


def execute(path: pathlib.Path) -> float:
    notebook = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    client = nbclient.NotebookClient(notebook, kernel_name=KERNEL, timeout=900,
                                     record_timing=False,
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    notebook.metadata["kernelspec"] = kernelspec()
    nbformat.write(notebook, path)
    return time.perf_counter() - start


if __name__ == "__main__":
    paths = [pathlib.Path(p) for p in sys.argv[1:]] or sorted((ROOT / "notebooks").rglob("*.ipynb"))
    for path in paths:
        print(f"{execute(path):6.1f} s  {path.relative_to(ROOT) if path.is_absolute() else path}")
