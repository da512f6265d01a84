"""``attention-edu bench``: the quick run end to end, and its results' structure on tiny sizes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from attention_edu import bench
from attention_edu.backend import cupy_if_available
from attention_edu.bench.report import format_tables, write_plots


def test_quick_bench_runs_end_to_end(tmp_path):
    """The quick run completes and prints every table (its speed is the benchmark's business, not a
    unit test's: a timed assertion here only measures how busy the machine is)."""
    plot = tmp_path / "bench.png"
    done = subprocess.run([sys.executable, "-m", "attention_edu.cli", "bench", "--quick", "--plot", str(plot)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("machine: ") and " cores (" in lines[0] and "numpy " in lines[0]
    for title in ("Loops against vectorized code", "Bahdanau against scaled dot-product attention",
                  "Naive against blockwise attention", "Fast path against torch",
                  "Backward: fast path against torch", "Backward at n = 2,048"):
        assert any(line.startswith(title) for line in lines), title
    table = lines[lines.index(next(l for l in lines if l.startswith("Naive against"))) + 1:]
    assert table[0].split()[:3] == ["n", "naive", "naive"] and set(table[1]) <= {"-", " "}
    assert [row.split()[0] for row in table[2:5]] == ["256", "1,024", "4,096"]
    assert "bench: 100%" in done.stderr  # the progress bar finished
    pytest.importorskip("matplotlib")
    assert plot.stat().st_size > 0 and (tmp_path / "bench-memory.png").stat().st_size > 0


@pytest.fixture
def tiny(monkeypatch):
    monkeypatch.setitem(bench.SIZES, True, dict(loop=4, bahdanau_loop=3, chapter=16, ns=(256, 512),
                                                naive_max_bytes=2 ** 24, budget=0.01, headline=(1, 2, 96, 8),
                                                backward=(1, 2, 80, 8), large_n=256))
    return bench.run_benchmarks(quick=True, progress=False)


def test_results_are_json_and_predictions_match_measurements(tiny):
    results = json.loads(json.dumps(tiny))
    sections = {row["section"] for row in results["rows"]}
    assert sections == {"loops", "bahdanau_vs_sdpa", "scaling", "headline", "backward_headline", "backward_large"}
    for row in results["rows"]:
        if row["section"] == "scaling" and row["series"] in ("naive", "blockwise"):
            assert row["seconds"] > 0
            assert row["peak_mib"] == pytest.approx(row["predicted_peak_mib"], rel=0.25), row
    ratio = next(r for r in results["rows"] if r["section"] == "bahdanau_vs_sdpa")
    assert ratio["chapter_flop_ratio"] == pytest.approx(256 * 1027 / 128)  # independent of m, n
    assert 1 < ratio["computed_flop_ratio"] < ratio["chapter_flop_ratio"]
    headline = next(r for r in results["rows"] if r["section"] == "headline")
    assert headline["error_vs_naive"] < 1e-5
    backward = next(r for r in results["rows"] if r["section"] == "backward_headline")
    assert backward["fast_s"] > 0 and len(backward["fast_rounds_s"]) == 3
    if backward["torch_s"] is not None:  # the same gradients as torch's
        assert backward["max_relative_difference_from_torch"] < 1e-4
        assert backward["fast_over_torch"] == pytest.approx(backward["fast_s"] / backward["torch_s"])
    large = next(r for r in results["rows"] if r["section"] == "backward_large")
    assert large["n"] == 256 and max(large["max_row_error"].values()) < 1e-5
    assert large["peak_mib"] is None or large["peak_mib"] > large["inputs_mib"]
    text = format_tables(results)
    assert text.splitlines()[0].startswith("machine: ") and "fast / torch" in text
    for row in (r for r in results["rows"] if r["section"] in ("loops", "bahdanau_vs_sdpa")):
        assert row["blas_threads"] == 1  # --quick pins BLAS for its small cases
        for key in [k for k in row if k.endswith("_spread_s")]:
            low, high = row[key]
            assert 0 < low <= row[key.replace("_spread_s", "_s")] <= high, row
    assert "BLAS on one thread" in text and "(fastest-slowest)" in text
    assert all(w.startswith("warning: load average") for w in results["warnings"])


def test_one_blas_thread_holds_blas_to_one_thread_inside_the_block():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from attention_edu.bench.timing import one_blas_thread
    with one_blas_thread():
        inside = [lib["num_threads"] for lib in threadpoolctl.threadpool_info() if lib["user_api"] == "blas"]
    assert inside and set(inside) == {1}


def test_a_high_load_is_named_in_the_tables(tiny):
    from attention_edu.bench.timing import load_warning
    assert load_warning(10.4, 2).startswith("warning: load average 10.4 on 2 usable cores")
    assert load_warning(1.9, 2) is None
    text = format_tables(dict(tiny, warnings=[load_warning(10.4, 2)]))
    assert any(line.startswith("  warning: load average 10.4 on 2 usable cores") for line in text.splitlines())


def test_plot_without_matplotlib_says_so(tiny, monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "attention_edu.plotting", None)  # import now fails
    assert write_plots(tiny, str(tmp_path / "x.png")) == 1
    assert "--plot needs matplotlib" in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize("name, told", [("p", "cannot write files without a suffix"),
                                         ("p.xyz", "cannot write '.xyz' files")])
def test_a_plot_name_matplotlib_cannot_write_is_a_usage_error_before_any_work(tmp_path, capsys, name, told):
    from attention_edu.cli import main

    pytest.importorskip("matplotlib")
    with pytest.raises(SystemExit) as exit_info:      # argparse's exit 2, before the benchmarks (their seconds)
        main(["bench", "--quick", "--plot", str(tmp_path / name)])
    assert exit_info.value.code == 2 and told in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def _overlapping_tick_labels(fig):
    """Pairs of drawn tick labels (inside the axes' span) whose boxes overlap."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()
    ax = fig.axes[0]
    frame = ax.get_window_extent(renderer)
    clashes, counts = [], {}
    for axis, low, high in ((ax.xaxis, "x0", "x1"), (ax.yaxis, "y0", "y1")):
        boxes = []
        for label in axis.get_ticklabels(which="both"):
            box = label.get_window_extent(renderer)
            middle = (getattr(box, low) + getattr(box, high)) / 2
            if label.get_visible() and label.get_text() and getattr(frame, low) - 1 <= middle <= getattr(frame, high) + 1:
                boxes.append((box, label.get_text()))
        boxes.sort(key=lambda pair: getattr(pair[0], low))
        counts[axis.axis_name] = len(boxes)
        clashes += [(axis.axis_name, a, b) for (left, a), (right, b) in zip(boxes, boxes[1:])
                    if getattr(left, high) > getattr(right, low) + 0.5]
    return clashes, counts


@pytest.mark.parametrize("sizes, values", [
    ([256 * 2**k for k in range(9)], [1e-4 * 4**k for k in range(9)]),      # 256 .. 65,536, six decades
    ([256, 512, 1024, 2048, 4096], [1e-3, 4e-3, 0.016, 0.064, 0.256]),       # matplotlib's 3x10^2 ran into 4x10^2
    ([2048 * 2**k for k in range(6)], [1.0 + 0.3 * k for k in range(6)]),    # less than a decade of y
    ([1000, 1500, 2000, 3000, 4000, 6000, 8000], [5.0, 6, 7, 8, 9, 10, 11]),  # less than a decade of x
])
def test_benchmark_plot_tick_labels_do_not_overlap(sizes, values):
    pytest.importorskip("matplotlib")
    from attention_edu.plotting import plot_benchmark

    rows = [{"series": s, "n": n, "seconds": v * f} for s, f in (("a", 1), ("b", 3))
            for n, v in zip(sizes, values)]
    clashes, counts = _overlapping_tick_labels(plot_benchmark(rows))
    assert not clashes, f"tick labels overlap: {clashes}"
    assert counts["x"] >= 2 and counts["y"] >= 2, f"too few labelled ticks: {counts}"


GPU_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_gpu.py"


def test_the_gpu_benchmark_says_in_one_line_that_it_needs_a_gpu():
    if cupy_if_available() is not None:
        pytest.skip("a GPU is here: test_the_gpu_benchmark_runs_on_a_gpu runs it")
    done = subprocess.run([sys.executable, str(GPU_SCRIPT)], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "bench_gpu: needs CuPy and a CUDA device; none here\n"


@pytest.mark.gpu
@pytest.mark.skipif(cupy_if_available() is None, reason="needs CuPy and a CUDA device")
def test_the_gpu_benchmark_runs_on_a_gpu():
    """Its tables print, and its accuracy line stays within float32 rounding (the times are its business)."""
    done = subprocess.run([sys.executable, str(GPU_SCRIPT), "--quick"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("machine: ") and lines[1].startswith("GPU: ")
    for title in ("Forward, one head", "Accuracy at n = 4,096", "Backward, one head"):
        assert any(line.startswith(title) for line in lines), title
    accuracy = lines[lines.index(next(l for l in lines if l.startswith("Accuracy"))) + 1]
    errors = [float(word.rstrip(";")) for word in accuracy.split() if "e-" in word]
    assert errors and max(errors) < 1e-5, accuracy
