"""Open every notebook in a real JupyterLab in headless Chromium, as a student would, and run it.

For each notebook: is it marked modified the moment it opens (a stored kernelspec that differs
from the installed kernel's does that)? Then clear its outputs, run all cells in the browser, and
count the cells that end in an error. One JSON line per notebook; a screenshot of each in SHOTS.

Needs, besides the package: ``pip install jupyterlab websocket-client`` and a Chromium on PATH.
Start JupyterLab from the repository root first, with the application exposed to the page::

    jupyter lab --no-browser --port 8899 --ServerApp.token='' --expose-app-in-browser &
    python scripts/jupyterlab_check.py                       # every notebook
    python scripts/jupyterlab_check.py notebooks/08_masks.ipynb

As root (a container, a CI runner) JupyterLab refuses to start ("Running as root is not
recommended. Use --allow-root to bypass."): add ``--allow-root`` to the ``jupyter lab`` line.
(Chromium as root needs ``--no-sandbox``, which this script already passes.)

Running a notebook changes its outputs in JupyterLab's copy; JupyterLab's autosave may write
them back, so run it on a scratch clone (or ``git checkout notebooks`` afterwards).
"""

from __future__ import annotations

import base64
import json
import pathlib
import subprocess
import sys
import time
import urllib.request

import websocket

LAB = "http://127.0.0.1:8899"
ROOT = pathlib.Path(__file__).resolve().parent.parent
SHOTS = pathlib.Path("/tmp/jupyterlab-shots")

# Helpers defined in the page: the notebook panel open on PATH, and its cells' state.
PAGE_HELPERS = """
window.panel = (path) => Array.from(jupyterapp.shell.widgets('main'))
    .find(w => w.context && w.context.path === path) || null;
window.cellState = (path) => {
  const p = panel(path); const cells = p.content.model.cells;
  let unrun = 0, errors = [];
  for (let i = 0; i < cells.length; i++) {
    const c = cells.get(i);
    if (c.type !== 'code') continue;
    if (c.executionCount === null) unrun++;
    for (let j = 0; j < c.outputs.length; j++) {
      const o = c.outputs.get(j).toJSON();
      if (o.output_type === 'error') errors.push(`cell ${i}: ${o.ename}`);
    }
  }
  return {kernel: p.sessionContext.session.kernel.status, unrun, errors};
};
"""


class Browser:
    """One headless Chromium page driven over the DevTools protocol."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-port=9222",
             "--window-size=1400,1000", "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                targets = json.load(urllib.request.urlopen("http://127.0.0.1:9222/json"))
                break
            except OSError:
                time.sleep(0.2)
        page = next(t for t in targets if t["type"] == "page")
        self.socket = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=120)
        self.last_id = 0
        self.send("Page.enable")
        self.send("Emulation.setFocusEmulationEnabled", enabled=True)  # headless pages have no focus

    def send(self, method: str, **params) -> dict:
        self.last_id += 1
        self.socket.send(json.dumps({"id": self.last_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == self.last_id:
                return message.get("result", {})

    def js(self, expression: str):
        result = self.send("Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True)
        return None if "exceptionDetails" in result else result["result"].get("value")

    def wait(self, expression: str, timeout: float) -> bool:
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.js(expression) is True:
                return True
            time.sleep(0.5)
        return False

    def close(self) -> None:
        self.socket.close()
        self.process.kill()


def check(path: str) -> dict:
    """Open, inspect, run and screenshot one notebook (``path`` relative to the lab's root)."""
    browser = Browser()
    try:
        browser.send("Page.navigate", url=f"{LAB}/lab/tree/{path}")
        browser.wait("!!window.jupyterapp", 60)
        browser.js(PAGE_HELPERS)
        where = json.dumps(path)
        ready = browser.wait(f"(() => {{ const p = panel({where}); return !!(p && p.context.isReady && "
                             f"p.sessionContext.session && p.sessionContext.session.kernel && "
                             f"p.sessionContext.session.kernel.status === 'idle'); }})()", 90)
        time.sleep(1.5)
        row = {"notebook": path, "opened": ready,
               "modified_on_open": browser.js(f"panel({where}).context.model.dirty"),
               "kernel": browser.js(f"panel({where}).sessionContext.kernelDisplayName")}
        browser.js(f"jupyterapp.shell.activateById(panel({where}).id)")
        browser.js("jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
        time.sleep(0.5)
        start = time.time()
        browser.js("jupyterapp.commands.execute('notebook:run-all-cells')")
        idle_in_a_row, state = 0, {}
        while time.time() - start < 600 and idle_in_a_row < 3:
            state = browser.js(f"cellState({where})") or {}
            finished = state.get("kernel") == "idle" and state.get("unrun") == 0
            idle_in_a_row = idle_in_a_row + 1 if finished else 0
            time.sleep(0.5)
        row.update(ran_all=idle_in_a_row >= 3, seconds=round(time.time() - start, 1),
                   errors=state.get("errors"))
        SHOTS.mkdir(parents=True, exist_ok=True)
        shot = browser.send("Page.captureScreenshot", format="png")
        (SHOTS / (path.replace("/", "_") + ".png")).write_bytes(base64.b64decode(shot["data"]))
        browser.js(f"panel({where}).sessionContext.shutdown()")
        return row
    finally:
        browser.close()


if __name__ == "__main__":
    paths = sys.argv[1:] or sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "notebooks").rglob("*.ipynb")
                                   if ".ipynb_checkpoints" not in p.parts)
    failures = 0
    for notebook in paths:
        row = check(notebook)
        failures += bool(row["modified_on_open"] or not row["ran_all"] or row["errors"])
        print(json.dumps(row), flush=True)
    sys.exit(1 if failures else 0)
