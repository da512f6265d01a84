"""An attention explorer that works offline: one self-contained piece of HTML.

``explore(weights, ...)`` returns an :class:`Explorer` whose rich display in a
notebook (``_repr_html_``) and ``to_html()`` carry the data and the script
inline: no request to any host, no widget manager, no kernel. The script
(``explorer.js``, shipped beside this module) draws the heatmap, the selected
query's weights as bars with their numbers, a head/layer selector with the
average of the heads, a scale slider that recomputes the softmax in the page,
and a mask toggle. Underneath sits a static form (a table coloured inline with
the numbers) that shows wherever scripts do not run; the script replaces it.

Chapter: "Attention Mechanisms: Fundamentals", the scaled dot product (why
1/√d_k) and masking; "Multi-Head Attention" for the heads.
"""

from __future__ import annotations

import base64
import hashlib
import html
import itertools
import json
from pathlib import Path
from typing import Any, Sequence

from .backend import host_numpy as np
from .backend import to_numpy
from .explorer_static import TABLE_CELLS, VIRIDIS, static_form
from .shapes import Dims, ShapeError, positive_int

__all__ = ["Explorer", "explore"]

_HERE = Path(__file__).resolve().parent
_COUNTER = itertools.count(1)


def _labels(given: Sequence[str] | None, count: int, name: str, axis: str, shape: tuple) -> list[str]:
    if given is None:
        return [f"{name[0]}{i}" for i in range(count)]
    labels = [str(label) for label in given]
    if len(labels) != count:
        raise ShapeError(f"explore: {name} has {len(labels)} labels but weights {shape} has "
                         f"{axis} = {count}; give one label per {'row' if axis == 'm' else 'column'}")
    return labels


def _b64(array: Any, dtype: str) -> str:
    return base64.b64encode(np.ascontiguousarray(array, dtype=dtype).tobytes()).decode("ascii")


class Explorer:
    """The explorer's data and its HTML; display it in a notebook or write ``to_html()`` to a file.

    Attributes ``weights``, ``scores`` (or None) and ``mask`` (or None) are host
    arrays of shape ``(L, H, m, n)``; ``queries`` and ``keys`` are the labels.
    """

    def __init__(self, weights, queries, keys, scores, mask, title, d_k):
        self.weights, self.queries, self.keys = weights, queries, keys
        self.scores, self.mask, self.title, self.d_k = scores, mask, title, d_k
        digest = hashlib.sha1(weights.tobytes() + repr((queries, keys, title)).encode()).hexdigest()[:8]
        self.uid = f"ae-explorer-{next(_COUNTER)}-{digest}"  # deterministic in a fresh kernel

    def _data(self) -> dict:
        L, H, m, n = self.weights.shape
        data = {"uid": self.uid, "L": L, "H": H, "m": m, "n": n, "queries": self.queries, "keys": self.keys,
                "title": self.title, "d_k": self.d_k, "palette": VIRIDIS,
                "weights": _b64(self.weights, "<f4")}
        if self.scores is not None:
            data["scores"] = _b64(self.scores, "<f4")
        if self.mask is not None:
            data["mask"] = "".join("1" if v else "0" for v in self.mask.ravel())
        return data

    def _static(self) -> str:
        """Every head, as a table or an image with the numbers: shown where no script runs. Past TABLE_CELLS
        weights in all, the first head alone, so that the page stays light."""
        L, H, m, n = self.weights.shape
        every = L * H * m * n <= TABLE_CELLS
        forms = []
        for layer, head in itertools.product(range(L), range(H)) if every else [(0, 0)]:
            where = "" if L * H == 1 else f" (layer {layer + 1} of {L}, head {head + 1} of {H}" + (
                ")" if every else "; run the notebook trusted for the others)")
            mask = None if self.mask is None else self.mask[layer, head]
            forms.append(static_form(self.weights[layer, head], self.queries, self.keys, mask, where))
        return "".join(forms)

    def to_html(self) -> str:
        """One self-contained piece of HTML: static table, data, style and script, all inline."""
        title = f'<div style="font-weight:bold;margin:4px 0">{html.escape(self.title)}</div>' if self.title else ""
        # "<" as its JSON escape: no "</script>" or "<!--<script>" in a label can end or swallow the script blocks
        data = json.dumps(self._data(), separators=(",", ":")).replace("<", "\\u003c")
        css = (_HERE / "explorer.css").read_text(encoding="utf-8")
        script = (_HERE / "explorer.js").read_text(encoding="utf-8")
        return (f'<div class="ae-explorer" id="{self.uid}" data-ae-explorer="{self.uid}">{title}'
                f'<div class="ae-static">{self._static()}</div>'
                f'<script type="application/json" class="ae-data">{data}</script>'
                f"<style>{css}</style><script>{script}</script></div>")

    def _repr_html_(self) -> str:
        return self.to_html()

    def __repr__(self) -> str:
        L, H, m, n = self.weights.shape
        parts = [f"explorer of attention weights: {L} layer(s) x {H} head(s), {m} queries x {n} keys"]
        parts += ["scores given: scale slider"] if self.scores is not None else []
        parts += ["mask given: mask toggle"] if self.mask is not None else []
        text = "; ".join(parts)
        if m * n <= 144:
            with np.printoptions(precision=3, suppress=True):
                text += "\nfirst head:\n" + str(self.weights[0, 0].round(3))
        return text


def _check_weights(w4: np.ndarray, m4: np.ndarray | None, shape: tuple, tol: float) -> None:
    """A ValueError unless ``w4`` holds attention weights: each in [0, 1], each row summing to 1 (or 0: a query whose
    keys are all masked), 0 where the mask hides a key. Other numbers would be drawn wrongly (a negative bar, a bar
    past its track, a negative entropy) without a word."""
    def first(bad: np.ndarray, of: tuple) -> tuple:     # the index of the first offender, in the caller's axes
        return tuple(int(i) for i in np.argwhere(bad.reshape(of))[0])

    if np.any(out := (w4 < -tol) | (w4 > 1 + tol)):
        raise ValueError(f"explore: weights {shape} holds {w4[out].flat[0]:.4g} at {first(out, shape)}; attention "
                         f"weights are the softmax's, each between 0 and 1")
    sums = np.sum(w4, axis=-1)                                                      # (L, H, m)
    if np.any(off := (np.abs(sums - 1) > tol * shape[-1]) & (np.abs(sums) > tol * shape[-1])):
        raise ValueError(f"explore: row {first(off, shape[:-1])} of weights {shape} sums to {sums[off].flat[0]:.4g}; "
                         f"each row of attention weights sums to 1 (0 for a query whose keys are all masked)")
    if m4 is not None and np.any(hidden := ~m4 & (np.abs(w4) > tol)):
        raise ValueError(f"explore: weights {shape} gives {w4[hidden].flat[0]:.4g} to {first(hidden, shape)}, a key "
                         f"the mask hides; a masked key gets weight 0")


def explore(weights: Any, queries: Sequence[str] | None = None, keys: Sequence[str] | None = None, *,
            scores: Any = None, mask: Any = None, title: str | None = None, d_k: int | None = None) -> Explorer:
    """An interactive, offline view of attention weights, for a notebook or a web page.

    Parameters
    ----------
    weights : array, shape (m, n), (H, m, n) or (L, H, m, n)
        Attention weights, one row per query; any backend (brought to the host).
    queries, keys : sequence of str, optional
        One label per query (m) and per key (n); default ``q0 ...`` and ``k0 ...``.
    scores : array, optional
        The unscaled scores (shape of ``weights``): the page gets a scale slider and
        recomputes ``softmax(scale * scores)`` with the mask, masked pairs excluded.
    mask : bool array, optional
        True = may attend, broadcastable to ``weights``: the page gets a toggle that shows
        the masked cells and, given the scores, the weights before masking.
    title : str, optional
        A heading above the explorer.
    d_k : int, optional
        The key width: the slider gets a preset at ``1/sqrt(d_k)``.

    Returns
    -------
    Explorer
        Its ``_repr_html_()`` / ``to_html()`` is one self-contained piece of HTML.

    Notes
    -----
    "Section 5.2: Dot-Product Attention", its worked example "cat sat mat" (the weights to
    point at); "Attention Mechanisms: Fundamentals", sections "Scaled Dot-Product Attention"
    (the scale slider's 1/√d_k) and "Attention Variants" → "Masked Attention" (the toggle).

    Examples
    --------
    The chapter's "cat sat mat" (Q = K = V = X): the page shows these rows, the first being
    the section's 0.422, 0.155, 0.422.

    >>> import numpy as np
    >>> import attention_edu as ae
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> steps = ae.dot_product_attention_steps(X, X, X)
    >>> view = ae.explore(steps.weights, ["cat", "sat", "mat"], ["cat", "sat", "mat"], scores=steps.scores, d_k=2)
    >>> print(view)
    explorer of attention weights: 1 layer(s) x 1 head(s), 3 queries x 3 keys; scores given: scale slider
    first head:
    [[0.422 0.155 0.422]
     [0.155 0.422 0.422]
     [0.212 0.212 0.576]]
    >>> "<script" in view.to_html() and "http" not in view.to_html()
    True
    """
    dims = Dims("explore")
    w = to_numpy(weights) if weights is not None else None
    dims.array("weights", w, "... m n")
    if w.ndim > 4:
        raise ShapeError(f"explore: weights has shape {tuple(w.shape)} but must be (m, n), (H, m, n) "
                         f"or (L, H, m, n)")
    shape = tuple(w.shape)
    w4 = np.asarray(w, dtype=float).reshape((1,) * (4 - w.ndim) + shape)  # (L, H, m, n)
    s4 = None
    if scores is not None:
        s = to_numpy(scores)
        Dims("explore").array("scores", s, "... m n")
        if tuple(s.shape) != shape:
            raise ShapeError(f"explore: scores has shape {tuple(s.shape)} but weights has shape {shape}; "
                             f"give the scores the weights came from")
        s4 = np.asarray(s, dtype=float).reshape(w4.shape)  # (L, H, m, n)
    m4 = None
    if mask is not None:
        mk = to_numpy(mask)
        dims.mask("mask", mk)
        if mk.ndim > w.ndim or any(a not in (1, b) for a, b in zip(mk.shape[::-1], shape[::-1])):
            raise ShapeError(f"explore: mask has shape {tuple(mk.shape)} but must broadcast to weights {shape}")
        m4 = np.broadcast_to(mk, shape).reshape(w4.shape).copy()  # (L, H, m, n)
    _check_weights(w4, m4, shape, 1e-2 if w.dtype.itemsize <= 2 else 1e-5)
    L, H, m, n = w4.shape
    return Explorer(w4, _labels(queries, m, "queries", "m", shape), _labels(keys, n, "keys", "n", shape),
                    s4, m4, None if title is None else str(title),
                    None if d_k is None else positive_int("explore", "d_k", d_k))
