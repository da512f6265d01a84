"""The explorer's static form: what a page shows where no script runs.

An untrusted notebook in JupyterLab, GitHub's notebook preview and nbconvert
drop or never run the explorer's script; this form, built in Python, still
shows each head's heatmap and numbers (the first head's alone past
TABLE_CELLS weights in all). Small matrices become a table
coloured inline (the numbers in the cells); larger ones a heatmap image
(a PNG written here with zlib, no imaging library) with the numbers as text.

Chapter: "Attention Mechanisms: Fundamentals" (reading a matrix of weights).
"""

from __future__ import annotations

import base64
import html
import struct
import zlib

from .backend import host_numpy as np

__all__ = ["VIRIDIS", "static_form"]

# matplotlib's viridis at nine evenly spaced points (colour-blind safe, readable in grey);
# the page's script and this form interpolate between them.
VIRIDIS = ["#440154", "#472c7a", "#3b518b", "#2c718e", "#21908d", "#27ad81", "#5cc863", "#aadc32", "#fde725"]
TABLE_CELLS = 1024  # up to this many weights per head, a table (every head's, up to this many in all); beyond,
#                    an image and the numbers as text


def colours(t):
    """Viridis RGB (uint8, shape t.shape + (3,)) of values ``t`` in [0, 1]."""
    stops = np.array([[int(c[k:k + 2], 16) for k in (1, 3, 5)] for c in VIRIDIS], dtype=float)
    x = np.clip(np.asarray(t, dtype=float), 0.0, 1.0) * (len(VIRIDIS) - 1)
    i = np.minimum(x.astype(int), len(VIRIDIS) - 2)
    rgb = stops[i] + (stops[i + 1] - stops[i]) * (x - i)[..., None]
    return np.rint(rgb).astype(np.uint8)


def _png(w, top: float) -> str:
    """A base64 PNG of ``w`` (m, n), one pixel per weight, palette-indexed viridis."""
    m, n = w.shape
    index = np.rint(np.clip(w / top, 0.0, 1.0) * 255).astype(np.uint8)
    palette = colours(np.arange(256) / 255).tobytes()

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    raw = b"".join(b"\x00" + index[i].tobytes() for i in range(m))
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", n, m, 8, 3, 0, 0, 0))
           + chunk(b"PLTE", palette) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))
    return base64.b64encode(png).decode("ascii")


def static_form(weights, queries, keys, mask, where: str) -> str:
    """HTML of one head's weights (m, n) rounded to 2 decimals; masked pairs (``mask`` False) print "–"."""
    m, n = weights.shape
    top = float(weights.max()) or 1.0
    masked = np.zeros((m, n), bool) if mask is None else ~mask
    caption = (f"Attention weights{html.escape(where)}, rounded to 2 decimals; rows are queries, columns keys"
               + ("; – marks a masked pair" if mask is not None else "") + ".")
    text = [[("–" if masked[i, j] else f"{weights[i, j]:.2f}") for j in range(n)] for i in range(m)]
    if m * n > TABLE_CELLS:
        width = max(len(q) for q in queries)
        lines = [f"{html.escape(queries[i]):>{width}} " + " ".join(f"{t:>4}" for t in text[i]) for i in range(m)]
        return (f'<p>{caption}</p><img alt="heatmap of the weights" width="{4 * n}" height="{4 * m}" '
                f'style="image-rendering:pixelated" src="data:image/png;base64,{_png(weights, top)}">'
                f"<details><summary>the numbers</summary><pre style='font-size:9px'>"
                + "\n".join(lines) + "</pre></details>")
    rgb = colours(weights / top)
    rows = ["<tr><th></th>" + "".join(f"<th>{html.escape(k)}</th>" for k in keys) + "</tr>"]
    for i in range(m):
        cells = []
        for j in range(n):
            if masked[i, j]:
                cells.append('<td style="background:#e6e6e6;color:#555">–</td>')
                continue
            ink = "#000" if weights[i, j] / top > 0.6 else "#fff"
            colour = "#" + bytes(rgb[i, j]).hex()
            cells.append(f'<td style="background:{colour};color:{ink}">{text[i][j]}</td>')
        rows.append(f"<tr><th>{html.escape(queries[i])}</th>{''.join(cells)}</tr>")
    return (f'<p style="font-size:11px;margin:2px 0">{caption}</p><table class="ae-static-table" '
            f'style="border-collapse:collapse;font:11px monospace;text-align:center">' + "".join(rows) + "</table>")
