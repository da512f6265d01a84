"""The explorer in a real browser (headless Chromium driven by Playwright): a page of explorers
served from localhost, a notebook page of the built docs site, and a notebook in JupyterLab.
Every request to a host other than the local server is counted (none allowed); the numbers the
page prints are compared with the arrays; screenshots of each state go to the test's tmp_path.

Skipped, with the reason, when Chromium or Playwright is missing (CI installs Debian's chromium).
Playwright never downloads a browser here: it drives /usr/bin/chromium.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
import pytest

import attention_edu as ae

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
if os.environ.get("CI") and not Path(CHROMIUM).exists():
    # .ci/run installs Debian's chromium: on CI a missing browser is a failure, never a skip.
    raise RuntimeError(f"CI is set but {CHROMIUM} is missing: .ci/run should have installed chromium")
pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                reason="no Chromium installed (apt-get install chromium): the browser test needs one")
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (the test extra) is not installed")
ROOT = Path(__file__).resolve().parents[2]
# Without the background-networking flags Chromium itself connects to Google's services.
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]
LOCAL = {"127.0.0.1", "localhost"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def served(folder: Path):
    """A static file server for ``folder`` on a free localhost port; yields its base URL."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass
    handler = functools.partial(Quiet, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


def watched_page(context):
    """A page whose every request (and websocket) to a host outside LOCAL is recorded."""
    page = context.new_page()
    page.offsite = []
    page.errors = []

    def record(url: str) -> None:
        if urlparse(url).scheme in ("http", "https", "ws", "wss") and urlparse(url).hostname not in LOCAL:
            page.offsite.append(url)
    page.on("request", lambda request: record(request.url))
    page.on("websocket", lambda ws: record(ws.url))
    page.on("pageerror", lambda err: page.errors.append(str(err)))
    return page


def bars(root) -> list[str]:
    return root.locator(".ae-bar-value").all_inner_texts()


def assert_row_shown(root, i: int, expected, mask_row=None) -> None:
    """Point at row i and check every printed weight against ``expected`` (3 decimals)."""
    root.locator(f".ae-cell[data-i='{i}'][data-j='0']").hover()
    printed = bars(root)
    assert len(printed) == len(expected)
    for j, (text, value) in enumerate(zip(printed, expected)):
        if mask_row is not None and not mask_row[j]:
            assert text == "masked", (i, j, text)
        else:
            assert abs(float(text) - value) <= 0.0005 + 1e-9, (i, j, text, value)
    assert f"(row {i + 1} of" in root.locator(".ae-text").inner_text()


def masked_cells(root, cls: str) -> set[tuple[int, int]]:
    found = root.locator(f".ae-cell.{cls}").evaluate_all(
        "cells => cells.map(c => [+c.dataset.i, +c.dataset.j])")
    return {tuple(x) for x in found}


# ---- a page of explorers, served from localhost ----

TOKENS = ["cat", "sat", "mat"]
X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])  # the chapter's "cat sat mat" (Q = K = V = X)


@pytest.fixture(scope="module")
def page_of_explorers(tmp_path_factory):
    rng = np.random.default_rng(31)  # not tuned: any seed gives a masked multi-head example
    steps = ae.dot_product_attention_steps(X, X, X)
    Qh, Kh = rng.normal(size=(2, 5, 8)), rng.normal(size=(2, 5, 8))
    mask = ae.causal_mask(5)
    masked = ae.scaled_dot_product_attention_steps(Qh, Kh, Kh, mask=mask)
    words = ["the", "dog", "ran", "far", "away"]
    html = ("<!doctype html><html><head><meta charset='utf-8'></head><body>"
            + ae.explore(steps.weights, TOKENS, TOKENS, scores=steps.scores, d_k=2, title="cat sat mat").to_html()
            + ae.explore(masked.weights, words, words, scores=masked.scores, mask=mask, d_k=8,
                         title="two heads, causal").to_html()
            + ae.explore(np.zeros((2, 3)), ["<!--<script>", "</script>"], scores=np.ones((2, 3)),
                         mask=np.array([[True, False, True], [False] * 3]),   # labels that HTML would read as tags
                         title="row 2 has nothing to attend to").to_html() + "</body></html>")
    folder = tmp_path_factory.mktemp("page")
    (folder / "index.html").write_text(html, encoding="utf-8")
    with served(folder) as url:
        yield {"url": url + "/index.html", "catsat": steps, "heads": masked, "mask": mask, "Q": Qh, "K": Kh}


def test_rows_slider_heads_mask_on_a_local_page(browser, page_of_explorers, tmp_path):
    data = page_of_explorers
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    page = watched_page(context)
    page.goto(data["url"])
    roots = page.locator(".ae-explorer[data-ae-ready]")
    assert roots.count() == 3
    catsat, heads, empty = roots.nth(0), roots.nth(1), roots.nth(2)
    # (1) pointing at row i shows row i's weights; the other explorer is untouched
    other_before = heads.locator(".ae-text").inner_text()
    for i in range(3):
        assert_row_shown(catsat, i, data["catsat"].weights[i])
    assert heads.locator(".ae-text").inner_text() == other_before
    page.screenshot(path=tmp_path / "1-catsat-row3.png", full_page=True)
    # (2) the keyboard selects rows too
    catsat.locator(".ae-grid").focus()
    page.keyboard.press("ArrowUp")
    assert "(row 2 of 3" in catsat.locator(".ae-text").inner_text()
    # (3) the 1/sqrt(d_k) preset shows the library's scaled weights; the slider a temperature
    catsat.locator(".ae-preset-1").click()
    _, scaled = ae.scaled_dot_product_attention(X, X, X)
    for i in range(3):
        assert_row_shown(catsat, i, scaled[i])
    page.screenshot(path=tmp_path / "2-catsat-scaled.png", full_page=True)
    catsat.locator(".ae-scale").fill("1")  # log2(scale) = 1: scale 2, temperature 0.5
    assert "temperature 0.500" in catsat.inner_text()
    for i in range(3):
        assert_row_shown(catsat, i, ae.softmax(2 * data["catsat"].scores[i]))
    page.screenshot(path=tmp_path / "3-catsat-sharpened.png", full_page=True)
    # (4) the mask: exactly the masked cells are hidden; untick to see the weights before masking
    hidden = {(i, j) for i in range(5) for j in range(5) if not data["mask"][i, j]}
    assert masked_cells(heads, "ae-masked") == hidden
    assert_row_shown(heads, 2, data["heads"].weights[0, 2], data["mask"][2])
    page.screenshot(path=tmp_path / "4-mask-applied.png", full_page=True)
    heads.locator(".ae-mask-toggle").uncheck()
    assert masked_cells(heads, "ae-masked") == set() and masked_cells(heads, "ae-was-masked") == hidden
    assert "softmax(0.354 \u00d7 scores)" in heads.locator(".ae-scale-value").inner_text()
    _, before = ae.scaled_dot_product_attention(data["Q"][0], data["K"][0], data["K"][0])
    assert_row_shown(heads, 2, before[2])
    page.screenshot(path=tmp_path / "5-mask-off-before-masking.png", full_page=True)
    heads.locator(".ae-mask-toggle").check()
    assert masked_cells(heads, "ae-masked") == hidden
    # (5) the heads and their average
    heads.locator("select.ae-head").select_option("1")
    assert_row_shown(heads, 4, data["heads"].weights[1, 4])
    heads.locator("select.ae-head").select_option("-1")
    assert_row_shown(heads, 4, data["heads"].weights[:, 4].mean(axis=0))
    assert "hides" in heads.locator(".ae-note").inner_text()
    page.screenshot(path=tmp_path / "6-average-of-heads.png", full_page=True)
    # (6) the page's softmax: masked pairs excluded, a fully masked row all zero (no NaN)
    empty.locator(".ae-preset-0").click()
    assert_row_shown(empty, 0, [0.5, 0, 0.5], [True, False, True])
    assert_row_shown(empty, 1, [0, 0, 0], [False] * 3)
    assert empty.locator(".ae-entropy").all_inner_texts() == ["0.69", "0.00"]
    assert "Query \u201c\u2068</script>\u2069\u201d" in empty.locator(".ae-text").inner_text()    # the last row shown
    assert page.offsite == [] and page.errors == []
    context.close()


def test_the_static_form_shows_where_scripts_do_not_run(browser, page_of_explorers, tmp_path):
    context = browser.new_context(java_script_enabled=False)
    page = watched_page(context)
    page.goto(page_of_explorers["url"])
    tables = page.locator(".ae-static-table")
    assert tables.count() == 4 and tables.nth(0).is_visible()  # one, two heads, one
    assert page.locator(".ae-ui").count() == 0
    cells = tables.nth(0).locator("td").all_inner_texts()
    assert [float(c) for c in cells] == pytest.approx(page_of_explorers["catsat"].weights.ravel(), abs=0.005)
    for head in (0, 1):
        cells = tables.nth(1 + head).locator("td").all_inner_texts()
        shown = np.array([np.nan if c == "–" else float(c) for c in cells]).reshape(5, 5)
        assert np.isnan(shown).tolist() == (~page_of_explorers["mask"]).tolist()
        np.testing.assert_allclose(np.nan_to_num(shown), page_of_explorers["heads"].weights[head], atol=0.005)
    page.screenshot(path=tmp_path / "7-no-script-static.png", full_page=True)
    assert page.offsite == []
    context.close()


def test_a_big_map_is_a_canvas_of_the_weights_colours(browser, tmp_path):
    """Past 40 keys the map is a canvas: each square has the palette's colour of its weight (as the cells of a
    small map), a masked square is hatched grey, an unmasked one outlined once the mask is unticked, and pointing
    at a square shows its row."""
    rng = np.random.default_rng(48)
    Q, K = rng.normal(size=(48, 8)), rng.normal(size=(48, 8))
    mask = ae.causal_mask(48)
    steps = ae.scaled_dot_product_attention_steps(Q, K, K, mask=mask)
    (tmp_path / "big.html").write_text("<!doctype html><html><body>" + ae.explore(
        steps.weights, scores=steps.scores, mask=mask, d_k=8).to_html() + "</body></html>", encoding="utf-8")
    page = watched_page(browser.new_context(device_scale_factor=1))
    with served(tmp_path) as url:
        page.goto(url + "/big.html")
        root = page.locator(".ae-explorer[data-ae-ready]")
        canvas = root.locator("canvas.ae-canvas")
        assert root.locator(".ae-cell").count() == 0 and canvas.count() == 1
        px = canvas.bounding_box()["width"] / 48

        def pixel(i: int, j: int) -> list[int]:                              # the centre of square (i, j)
            return canvas.evaluate("(c, [x, y]) => Array.from(c.getContext('2d').getImageData(x, y, 1, 1).data)",
                                   [int((j + 0.5) * px), int((i + 0.5) * px)])[:3]

        top = steps.weights.max()
        for i, j in [(0, 0), (5, 2), (30, 30), (47, 0), (47, 46)]:
            expected = ae.explorer_static.colours(np.rint(255 * steps.weights[i, j] / top) / 255)
            assert np.abs(np.array(pixel(i, j)) - expected).max() <= 1, (i, j, pixel(i, j), expected)
        for i, j in [(0, 1), (2, 40), (46, 47)]:
            r, g, b = pixel(i, j)
            assert r == g == b and r >= 200, (i, j, (r, g, b))               # hatched: grey or white
        canvas.hover(position={"x": 3.5 * px, "y": 20.5 * px})
        assert "(row 21 of 48" in root.locator(".ae-text").inner_text()
        for j, text in enumerate(bars(root)):
            assert text == "masked" if j > 20 else abs(float(text) - steps.weights[20, j]) <= 0.0005, (j, text)
        root.locator(".ae-mask-toggle").uncheck()
        edge = canvas.evaluate("(c, [x, y, h]) => Array.from(c.getContext('2d').getImageData(x, y, 1, h).data)",
                               [int(40 * px), int(2 * px), int(px)])
        assert [214, 39, 40] in [edge[k:k + 3] for k in range(0, len(edge), 4)]   # outlined in red (#d62728)
        r, g, b = pixel(2, 40)
        assert not r == g == b                                                # and coloured: a weight before masking
        page.screenshot(path=tmp_path / "8-big-canvas-mask-off.png", full_page=True)
    assert page.offsite == [] and page.errors == []


@pytest.mark.quiet  # a wall-clock target: measured while no other test runs (conftest.py)
def test_64_by_64_with_8_heads_renders_in_under_200_ms(browser, tmp_path):
    rng = np.random.default_rng(64)
    weights = ae.softmax(3 * rng.normal(size=(8, 64, 64)))
    html = ae.explore(weights, title="64 x 64, 8 heads").to_html()
    # t0 before the explorer's HTML is parsed; done after its script ran and two frames were drawn
    page_html = ("<!doctype html><html><body><script>window.t0 = performance.now()</script>" + html +
                 "<script>requestAnimationFrame(() => requestAnimationFrame(() => "
                 "{ window.done = performance.now() - window.t0 }))</script></body></html>")
    (tmp_path / "big.html").write_text(page_html, encoding="utf-8")
    page = watched_page(browser.new_context())
    times = []
    with served(tmp_path) as url:
        for _ in range(9):
            page.goto(url + "/big.html")
            page.wait_for_function("window.done !== undefined")
            times.append(page.evaluate("window.done"))
    page.screenshot(path=tmp_path / "8-64x64x8.png", full_page=True)
    print(f"\n64x64x8 explorer: {len(html.encode()) / 1000:.1f} kB; render ms median "
          f"{statistics.median(times):.1f}, worst {max(times):.1f} (9 loads); load average {os.getloadavg()}")
    assert len(html.encode()) < 300_000 and statistics.median(times) < 200
    assert page.offsite == [] and page.errors == []


def test_large_views_long_labels_and_right_to_left_labels_stay_readable(browser, tmp_path):
    """At 64 x 64 the map has no room for row labels, but the chosen row is still marked beside it (the marker was an
    empty span of no height); a 300-character key label is cut to a short header (it was 1,900 px tall, pushing the
    map off the screen); a right-to-left override in a label stays inside it in the sentence."""
    rng = np.random.default_rng(7)
    big = ae.explore(ae.softmax(rng.normal(size=(64, 64))), title="64 x 64")
    long_key = ae.explore(ae.softmax(rng.normal(size=(3, 4))), keys=["k" * 300, "b", "c", "d"], title="long")
    rtl = ae.explore(ae.softmax(rng.normal(size=(2, 2))), queries=["abc\u202edef", "x"], title="rtl")
    html = "<!doctype html><html><head><meta charset='utf-8'></head><body>" + "".join(
        v.to_html() for v in (big, long_key, rtl)) + "</body></html>"
    (tmp_path / "views.html").write_text(html, encoding="utf-8")
    page = watched_page(browser.new_context())
    with served(tmp_path) as url:
        page.goto(url + "/views.html")
        roots = page.locator(".ae-explorer[data-ae-ready]")
        roots.nth(0).locator(".ae-grid").focus()
        page.keyboard.press("ArrowDown")
        marker = roots.nth(0).locator(".ae-query.ae-selected").bounding_box()
        assert marker["height"] >= 5 and marker["width"] >= 5, marker
        header = roots.nth(1).locator(".ae-key").first.bounding_box()
        assert header["height"] < 200, header
        roots.nth(2).locator(".ae-cell[data-i='0'][data-j='0']").hover()
        assert "Query \u201c\u2068abc\u202edef\u2069\u201d (row 1 of 2" in roots.nth(2).locator(".ae-text").inner_text()
    assert page.offsite == [] and page.errors == []


# ---- a notebook page of the built docs site ----

def check_notebook_04(page, screenshot: Path, all_rendered: bool) -> None:
    """Notebook 04's first explorer ("cat sat mat"): every row, then the 1/sqrt(d_k) preset.
    (JupyterLab renders cells lazily, so there the notebook's second explorer may not exist yet.)"""
    page.wait_for_selector(".ae-explorer[data-ae-ready]", timeout=30_000)
    roots = page.locator(".ae-explorer[data-ae-ready]")
    assert roots.count() == 2 or not all_rendered
    catsat = roots.nth(0)
    catsat.scroll_into_view_if_needed()
    for i, row in enumerate(ae.dot_product_attention_steps(X, X, X).weights):
        assert_row_shown(catsat, i, row)
    catsat.locator(".ae-preset-1").click()
    _, scaled = ae.scaled_dot_product_attention(X, X, X)
    for i, row in enumerate(scaled):
        assert_row_shown(catsat, i, row)
    catsat.screenshot(path=screenshot)


def test_a_notebook_page_of_the_site_runs_the_explorer_offline(browser, site, tmp_path):
    page = watched_page(browser.new_context(viewport={"width": 1300, "height": 1000}))
    with served(site) as url:
        page.goto(url + "/notebooks/04_dot_product_attention.html", wait_until="networkidle")
        check_notebook_04(page, tmp_path / "9-docs-site-notebook-04.png", all_rendered=True)
    assert page.offsite == [], page.offsite
    assert page.errors == []
    assert page.errors == []


# ---- a notebook in JupyterLab ----

@pytest.fixture
def jupyterlab(tmp_path):
    """JupyterLab on a free localhost port, with no news, no update check and no extension
    manager (each of which would reach the internet), serving a trusted and an untrusted copy
    of notebook 04."""
    work = tmp_path / "lab"
    work.mkdir()
    source = ROOT / "notebooks" / "04_dot_product_attention.ipynb"
    shutil.copy(source, work / "trusted.ipynb")
    notebook = json.loads(source.read_text(encoding="utf-8"))
    notebook["metadata"]["untrusted copy"] = True  # trust goes by content: this copy is not signed
    (work / "untrusted.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp_path / "config"), JUPYTER_DATA_DIR=str(tmp_path / "data"),
               JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"))
    subprocess.run([sys.executable, "-m", "jupyter", "trust", str(work / "trusted.ipynb")], env=env, check=True,
                   capture_output=True)
    config = tmp_path / "jupyter_lab_config.py"
    config.write_text("c.LabApp.news_url = None\n"
                      "c.LabApp.check_for_updates_class = 'jupyterlab.handlers.announcements.NeverCheckForUpdate'\n"
                      "c.LabApp.extension_manager = 'readonly'\n"
                      "c.ServerApp.token = ''\nc.ServerApp.password = ''\nc.ServerApp.disable_check_xsrf = True\n")
    port = free_port()
    log = (tmp_path / "lab.log").open("w")
    lab = subprocess.Popen([sys.executable, "-m", "jupyter", "lab", "--no-browser", "--allow-root",
                            f"--port={port}", "--ServerApp.ip=127.0.0.1", f"--config={config}",
                            f"--ServerApp.root_dir={work}"], env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            with contextlib.suppress(OSError):
                urllib.request.urlopen(url + "/api/status", timeout=1)
                break
            time.sleep(0.5)
        else:
            pytest.fail("JupyterLab did not start: " + (tmp_path / "lab.log").read_text()[-2000:])
        yield url
    finally:
        lab.terminate()
        try:
            lab.wait(timeout=20)
        except subprocess.TimeoutExpired:   # a kernel still starting when SIGTERM came can hang the server's graceful
            lab.kill()                      # shutdown (seen once in CI); its kernels end with it (ipykernel polls its
            lab.wait(timeout=20)            # parent)
        log.close()


def test_a_notebook_in_jupyterlab_runs_the_explorer_offline(browser, jupyterlab, tmp_path):
    steps = ae.dot_product_attention_steps(X, X, X)
    page = watched_page(browser.new_context(viewport={"width": 1400, "height": 1000}))
    page.goto(jupyterlab + "/lab/tree/trusted.ipynb")
    check_notebook_04(page, tmp_path / "10-jupyterlab-trusted.png", all_rendered=False)
    assert page.offsite == [], page.offsite
    # an untrusted notebook runs no output script: the static form is what the reader sees
    page = watched_page(browser.new_context(viewport={"width": 1400, "height": 1000}))
    page.goto(jupyterlab + "/lab/tree/untrusted.ipynb?reset")  # a fresh workspace: only this notebook
    page.wait_for_selector(".ae-static-table", timeout=30_000)
    static = page.locator(".ae-static-table").first
    static.scroll_into_view_if_needed()
    assert page.locator(".ae-explorer[data-ae-ready]").count() == 0
    # text content, not inner text: JupyterLab may not have laid out an off-screen cell yet
    cells = static.locator("td").all_text_contents()
    assert [float(c) for c in cells] == pytest.approx(steps.weights.ravel(), abs=0.005)
    static.screenshot(path=tmp_path / "11-jupyterlab-untrusted-static.png")
    assert page.offsite == [], page.offsite
    print("\nscreenshots in", tmp_path, json.dumps(sorted(p.name for p in tmp_path.glob("*.png"))))
