"""Several heatmaps in one figure stay readable when a page shrinks the figure to its width."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("matplotlib")
import attention_edu.plotting as plotting  # noqa: E402  (after the importorskip)

PAGE_INCHES = 7.0  # roughly what a notebook page or the docs column shows at 100 %


def _smallest_tick_points_on_a_page(fig) -> float:
    scale = min(1.0, PAGE_INCHES / fig.get_size_inches()[0])
    sizes = [label.get_fontsize() for ax in fig.axes for label in ax.get_xticklabels() + ax.get_yticklabels()
             if label.get_text()]
    return min(sizes) * scale


def test_four_panels_two_to_a_row_keep_tick_labels_readable():
    panels = [(name, np.full((3, 6), 1 / 6)) for name in ("dot", "general", "concat", "Bahdanau")]
    labels = (["s_1", "s_2", "s_3"], [f"h_{j}" for j in range(1, 7)])
    grid = plotting.heatmap_grid(panels, *labels)
    assert len(grid.axes) == 8 and _smallest_tick_points_on_a_page(grid) >= 6.5
    # the layout it replaced, four in a row 19 inches wide, shrank them to under 4 points (~5 px)
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 4, figsize=(19, 3.2))
    for ax, (name, weights) in zip(axes, panels):
        plotting.attention_heatmap(weights, *labels, ax=ax, title=name)
    assert _smallest_tick_points_on_a_page(fig) < 4
    plt.close("all")


def test_grid_hides_the_unused_cell_and_refuses_no_panels():
    fig = plotting.heatmap_grid([(name, np.eye(2)) for name in "abc"], columns=2)
    assert sum(ax.get_visible() for ax in fig.axes) == 6  # three heatmaps and their colour bars
    with pytest.raises(ValueError, match="heatmap_grid"):
        plotting.heatmap_grid([])
