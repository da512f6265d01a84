"""Pictures of attention: labelled heatmaps, one distribution as bars, benchmark curves.

The only module that imports matplotlib (the core never does). Every function takes arrays of any
backend (to the host with :func:`attention_edu.backend.to_numpy`) and returns what it drew on.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter, NullLocator

from .backend import host_numpy as np
from .backend import to_numpy

__all__ = ["attention_heatmap", "distribution_bars", "heads_heatmaps", "heatmap_grid", "plot_benchmark",
           "figure_formats", "subscripted"]

_SUBSCRIPTS = dict(zip("0123456789aehijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ"))


def subscripted(label: str) -> str:
    """A tick label as a reader writes it: ``"s_1"`` → ``"s₁"``, ``"h_{12}"`` → ``"h₁₂"``.

    Only a trailing subscript made of digits and the letters Unicode can subscript is
    converted; anything else is returned unchanged.

    Examples
    --------
    >>> subscripted("s_1"), subscripted("h_{12}"), subscripted("s_t"), subscripted("key_name")
    ('s₁', 'h₁₂', 'sₜ', 'key_name')
    """
    found = re.fullmatch(r"(.*[^_])_\{?([0-9a-z]+)\}?", str(label))
    word = found and not found[2].isdigit() and len(found[2]) > 1     # "key_name": a word, not a subscript
    if not found or word or not all(ch in _SUBSCRIPTS for ch in found[2]):
        return str(label)
    return found[1] + "".join(_SUBSCRIPTS[ch] for ch in found[2])


def _labels(given: Sequence[str] | None, count: int, what: str) -> list[str]:
    if given is None:
        return [str(i + 1) for i in range(count)]
    if len(given) != count:
        raise ValueError(f"{what} has {len(given)} labels but the weights have {count} along that axis")
    return [subscripted(label) for label in given]


def attention_heatmap(weights: Any, query_labels: Sequence[str] | None = None,
                      key_labels: Sequence[str] | None = None, ax: Any = None,
                      title: str | None = None, annotate: bool | None = None,
                      cmap: str = "viridis") -> Any:
    """Draw an attention matrix (m, n): queries down the rows, keys across the columns.

    Parameters
    ----------
    weights : array (m, n)
        One attention matrix (index a batch or head first).
    query_labels, key_labels : sequence of str, optional
        Tokens for the rows (queries) and columns (keys); 1..m and 1..n by default.
    ax : matplotlib Axes, optional
        Where to draw; a new figure by default.
    title : str, optional
    annotate : bool, optional
        Write each weight in its cell; by default only when m, n ≤ 12.
    cmap : str
        Colour map; weights are drawn on the fixed scale [0, 1].

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> import numpy as np
    >>> ax = attention_heatmap(np.full((2, 3), 1 / 3), ["le", "chat"], ["the", "cat", "sat"])
    >>> [t.get_text() for t in ax.get_xticklabels()]
    ['the', 'cat', 'sat']
    >>> ax = attention_heatmap(np.full((1, 2), 0.5), ["s_1"], ["h_1", "h_2"])
    >>> [t.get_text() for t in ax.get_yticklabels()], [t.get_text() for t in ax.get_xticklabels()]
    (['s₁'], ['h₁', 'h₂'])
    """
    w = to_numpy(weights)
    if w.ndim != 2:
        raise ValueError(f"attention_heatmap: weights has shape {w.shape}; pass one (m, n) matrix")
    m, n = w.shape
    rows, cols = _labels(query_labels, m, "query_labels"), _labels(key_labels, n, "key_labels")
    if ax is None:
        _, ax = plt.subplots(figsize=(1.0 + 0.6 * n, 0.8 + 0.5 * m))
    image = ax.imshow(w, cmap=cmap, vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(range(n), cols, rotation=45 if max(len(c) for c in cols) > 3 else 0)
    ax.set_yticks(range(m), rows)
    ax.set_xlabel("keys (attended to)")
    ax.set_ylabel("queries")
    if annotate if annotate is not None else max(m, n) <= 12:
        for i in range(m):
            for j in range(n):
                ax.text(j, i, f"{w[i, j]:.2f}", ha="center", va="center", fontsize=8,
                        color="black" if w[i, j] > 0.6 else "white")
    ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    if title:
        ax.set_title(title)
    return ax


def distribution_bars(weights: Any, labels: Sequence[str] | None = None, ax: Any = None,
                      title: str | None = None, highlight_max: bool = True) -> Any:
    """Bar chart of one attention distribution (n,), e.g. the weights of one query.

    Examples
    --------
    >>> import numpy as np
    >>> ax = distribution_bars(np.array([0.05, 0.82, 0.13]), ["the", "cat", "sat"])
    >>> len(ax.patches)
    3
    """
    w = to_numpy(weights)
    if w.ndim != 1:
        raise ValueError(f"distribution_bars: weights has shape {w.shape}; pass one row (n,)")
    names = _labels(labels, w.shape[0], "labels")
    if ax is None:
        _, ax = plt.subplots(figsize=(1.0 + 0.6 * len(names), 2.6))
    colours = ["tab:orange" if highlight_max and i == int(np.argmax(w)) else "tab:blue"
               for i in range(len(names))]
    ax.bar(range(len(names)), w, color=colours)
    ax.set_xticks(range(len(names)), names)
    ax.set_ylim(0, max(1.0, float(w.max()) * 1.05))
    ax.set_ylabel("weight")
    for i, value in enumerate(w):
        ax.text(i, value + 0.02, f"{value:.2f}", ha="center", fontsize=8)
    if title:
        ax.set_title(title)
    return ax


def heatmap_grid(panels: Sequence[tuple[str, Any]], query_labels: Sequence[str] | None = None,
                 key_labels: Sequence[str] | None = None, columns: int = 2,
                 title: str | None = None, annotate: bool | None = None) -> Figure:
    """Named attention matrices (m, n), ``columns`` to a row, each at one heatmap's size (readable labels).

    Examples
    --------
    >>> import numpy as np
    >>> fig = heatmap_grid([(name, np.full((2, 3), 1 / 3)) for name in "abcd"])
    >>> len(fig.axes), fig.get_size_inches().tolist()  # four panels, four colour bars; 2 x 2
    (8, [5.4, 4.0])
    """
    if not panels or columns < 1:
        raise ValueError(f"heatmap_grid: need panels and columns >= 1, got {len(panels)}, {columns}")
    (m, n), columns = to_numpy(panels[0][1]).shape, min(columns, len(panels))
    rows = -(-len(panels) // columns)  # a page shrinks a wide figure: 4 panels in a row had 5 px labels
    fig, axes = plt.subplots(rows, columns, figsize=(columns * (1.2 + 0.5 * n), rows * (1.0 + 0.5 * m)), squeeze=False)
    for ax, (name, weights) in zip(axes.flat, panels):
        attention_heatmap(weights, query_labels, key_labels, ax=ax, title=name, annotate=annotate)
    for ax in axes.flat[len(panels):]:  # an incomplete last row
        ax.set_visible(False)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def heads_heatmaps(weights: Any, query_labels: Sequence[str] | None = None,
                   key_labels: Sequence[str] | None = None, title: str | None = None) -> Figure:
    """One heatmap per head for weights (H, m, n), side by side (:func:`heatmap_grid`).

    Examples
    --------
    >>> import numpy as np
    >>> fig = heads_heatmaps(np.full((2, 3, 3), 1 / 3))
    >>> len(fig.axes)  # two heads and their colour bars
    4
    """
    w = to_numpy(weights)
    if w.ndim != 3:
        raise ValueError(f"heads_heatmaps: weights has shape {w.shape}; pass (H, m, n)")
    return heatmap_grid([(f"head {h}", w[h]) for h in range(w.shape[0])], query_labels, key_labels,
                        columns=w.shape[0], title=title, annotate=max(w.shape[1:]) <= 6)


def plot_benchmark(rows: Sequence[dict], path: str | None = None, x: str = "n",
                   y: str = "seconds", series: str = "series", title: str | None = None) -> Figure:
    """Log-log curves of a measured quantity against size, one line per series.

    Parameters
    ----------
    rows : sequence of dict
        Each has keys ``x``, ``y`` and ``series`` (e.g. {"series": "blockwise",
        "n": 4096, "seconds": 0.12}); rows whose ``y`` is None are skipped.
    path : str, optional
        Write the figure there (PNG/SVG/PDF by suffix) as well as returning it.

    Returns
    -------
    matplotlib Figure

    Examples
    --------
    >>> fig = plot_benchmark([{"series": "a", "n": 1, "seconds": 1.0},
    ...                       {"series": "a", "n": 2, "seconds": 4.0}])
    >>> fig.axes[0].get_xscale()
    'log'
    """
    fig = Figure(figsize=(6, 4))
    ax = fig.add_subplot()
    names = list(dict.fromkeys(row[series] for row in rows))
    for name in names:
        points = sorted((row[x], row[y]) for row in rows if row[series] == name and row.get(y) is not None)
        if points:
            xs, ys = zip(*points)
            ax.plot(xs, ys, marker="o", label=str(name))
    ax.set(xscale="log", yscale="log", xlabel=x, ylabel=y, title=title or "")
    _readable_log_ticks(ax, sorted({row[x] for row in rows if row.get(y) is not None}))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    if path is not None:
        fig.savefig(path, dpi=120, bbox_inches="tight")
    return fig


def figure_formats() -> set[str]:
    """The suffixes matplotlib writes figures to here (``png``, ``pdf``, ...): a name is checked before the work."""
    return set(Figure().canvas.get_supported_filetypes())


def _short_number(value: float, _position: Any = None) -> str:
    """1024 → "1,024", 65536 → "65,536", 0.001 → "0.001", 2e-05 → "2e-05"."""
    if value >= 1 and float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:g}"


def _readable_log_ticks(ax: Any, xs: list) -> None:
    """Label the measured sizes on x (at most eight) and only the decades on y, so no labels collide.

    Matplotlib's default labels minor ticks within a decade ("2×10³ 3×10³ ..."), which run into each
    other; on y: 1, 2 and 5 per decade when the range spans less than two, unlabelled minor ticks.
    """
    step = max(1, -(-len(xs) // 8))
    ax.xaxis.set_major_locator(FixedLocator(xs[::step]))
    ax.xaxis.set_major_formatter(FuncFormatter(_short_number))
    ax.xaxis.set_minor_locator(NullLocator())
    low, high = ax.get_ylim()
    decades = np.log10(high / low) if low > 0 else 0.0
    subs = (1.0,) if decades >= 2 else (1.0, 2.0, 5.0)  # a narrow range still gets labels
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=subs, numticks=8))
    ax.yaxis.set_major_formatter(FuncFormatter(_short_number))
    ax.yaxis.set_minor_formatter(NullFormatter())
