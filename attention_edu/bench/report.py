"""Tables and plots of ``attention-edu bench`` results.

The results are the dict :func:`attention_edu.bench.run_benchmarks` returns:
``machine``, ``matmul_gflops`` and a list of ``rows``, each tagged with its
``section``. Plots go through :func:`attention_edu.plotting.plot_benchmark`
(the one module that imports matplotlib).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ..arguments import written_atomically
from .timing import machine_line

__all__ = ["format_tables", "write_plots"]


def _fmt(value: Any, unit: str = "") -> str:
    if value is None:
        return "-"
    if unit == "s":
        return f"{value * 1e3:.1f} ms" if value < 1 else f"{value:.2f} s"
    return f"{value:,.1f}" if isinstance(value, float) else str(value)


def _spread(row: dict, key: str) -> str:
    """A median time and, when measured, its fastest and slowest repeat: "1.9 ms (1.8 ms-2.3 ms)"."""
    spread = row.get(key.replace("_s", "_spread_s"))
    if not spread:
        return _fmt(row[key], "s")
    return f"{_fmt(row[key], 's')} ({_fmt(spread[0], 's')}-{_fmt(spread[1], 's')})"


def _times(ratio: float) -> str:
    return f"{ratio:,.0f}x" if ratio >= 10 else f"{ratio:.2f}x"


def _grid(header: list[str], lines: list[list[str]]) -> str:
    """Right-aligned columns under a header and a rule."""
    widths = [max(len(row[i]) for row in [header] + lines) for i in range(len(header))]

    def line(row: list[str]) -> str:
        return "  ".join(cell.rjust(width) for cell, width in zip(row, widths))

    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(row) for row in lines])


def _scaling_table(scaling: list[dict]) -> str:
    def get(n: int, series: str, key: str) -> Any:
        return next((r.get(key) for r in scaling if r["n"] == n and r["series"] == series), None)

    def mib(n: int, series: str) -> str:
        return f"{_fmt(get(n, series, 'peak_mib'))} ({_fmt(get(n, series, 'predicted_peak_mib'))})"

    lines = [[f"{n:,}", _fmt(get(n, "naive", "seconds"), "s"), mib(n, "naive"),
              _fmt(get(n, "blockwise", "seconds"), "s"), mib(n, "blockwise"),
              _fmt(get(n, "torch", "seconds"), "s"), _fmt(get(n, "cupy blockwise", "seconds"), "s"),
              _fmt(get(n, "GEMM floor", "seconds"), "s")]
             for n in dict.fromkeys(r["n"] for r in scaling)]
    return _grid(["n", "naive", "naive MiB", "blockwise", "blockwise MiB", "torch", "cupy", "GEMM floor"],
                 lines)


def format_tables(results: dict) -> str:
    """The results as text: the machine line, then one table per section."""
    rows = results["rows"]
    out = [machine_line(results["machine"]),
           f"NumPy float32 matmul (best of 20, 1024^3): {results['matmul_gflops']:.0f} GFLOP/s", ""]
    out += [f"  {warning}" for warning in results.get("warnings", [])]
    loop_rows = [r for r in rows if r["section"] == "loops"]
    loops = [[r["series"], r["sizes"], _spread(r, "loop_s"), _spread(r, "vectorized_s"),
              _times(r["speedup"])] for r in loop_rows]
    threads = " BLAS on one thread;" if any(r.get("blas_threads") == 1 for r in loop_rows) else ""
    out += [f"Loops against vectorized code (float64;{threads} median time, (fastest-slowest) of the repeats)",
            _grid(["mechanism", "sizes", "loop", "vectorized", "speedup"], loops), ""]
    for r in (r for r in rows if r["section"] == "bahdanau_vs_sdpa"):
        values = [_spread(r, "bahdanau_s"), _spread(r, "sdpa_s"), _times(r["time_ratio"]),
                  _times(r["chapter_flop_ratio"]), _times(r["computed_flop_ratio"])]
        threads = "; BLAS on one thread" if r.get("blas_threads") == 1 else ""
        out += [f"Bahdanau against scaled dot-product attention ({r['sizes']}, float32{threads}; "
                f"median time, (fastest-slowest) of the repeats)",
                _grid(["Bahdanau", "scaled dot-product", "time ratio", "FLOP ratio, chapter's formula",
                       "as computed"], [values]),
                "(the chapter prints ~1000x after dropping a factor 2: attention-edu examples "
                "fund.sdpa-flops; 'as computed' reuses W1 s_t and W2 h_i across pairs, as the library does)",
                ""]
    out += ["Naive against blockwise attention, one head, d = 64, float32 "
            "(peak MiB: measured (predicted))",
            _scaling_table([r for r in rows if r["section"] == "scaling"]), ""]
    for r in (r for r in rows if r["section"] == "headline"):
        ratio = "-" if r["fast_over_torch"] is None else _times(r["fast_over_torch"])
        values = [_fmt(r["numpy_naive_s"], "s"), _fmt(r["fast_s"], "s"), _fmt(r["torch_s"], "s"), ratio]
        out += [f"Fast path against torch ({r['sizes']}; max |difference| from naive "
                f"{r['error_vs_naive']:.1e})",
                _grid(["NumPy naive", "blockwise fast path", "torch fused SDPA", "fast / torch"], [values])]
    for r in (r for r in rows if r["section"] == "backward_headline"):
        ratio = "-" if r["fast_over_torch"] is None else _times(r["fast_over_torch"])
        difference = r["max_relative_difference_from_torch"]
        note = "" if difference is None else f"; max relative difference from torch {difference:.1e}"
        out += ["", f"Backward: fast path against torch ({r['sizes']}; medians of 3 rounds{note})",
                _grid(["blockwise backward", "torch fused SDPA backward", "fast / torch"],
                      [[_fmt(r["fast_s"], "s"), _fmt(r["torch_s"], "s"), ratio]])]
    for r in (r for r in rows if r["section"] == "backward_large"):
        errors = ", ".join(f"d{name} {error:.1e}" for name, error in r["max_row_error"].items())
        out += ["", f"Backward at n = {r['n']:,}, one head, d = {r['d']}, {r['dtype']}, in a fresh process",
                _grid(["forward", "backward", "peak RSS MiB after forward", "after backward (VmHWM)",
                       "inputs MiB", "call MiB predicted", "max row error vs float64"],
                      [[_fmt(r["forward_s"], "s"), _fmt(r["backward_s"], "s"), _fmt(r.get("forward_peak_mib")),
                        _fmt(r["peak_mib"]),
                        _fmt(r["inputs_mib"]), _fmt(r["predicted_call_mib"]), errors]])]
    return "\n".join(out)


def write_plots(results: dict, path: str) -> int:
    """Time curves to ``path``, peak-memory curves beside it (``<stem>-memory<suffix>``); exit code."""
    try:
        from ..plotting import plot_benchmark
    except ImportError as err:  # matplotlib missing
        print(f"bench: --plot needs matplotlib ({err}); pip install matplotlib", file=sys.stderr)
        return 1
    scaling = [r for r in results["rows"] if r["section"] == "scaling"]
    memory = [{"series": f"{r['series']} {kind}", "n": r["n"], "MiB": r[key]}
              for r in scaling for kind, key in (("measured", "peak_mib"), ("predicted", "predicted_peak_mib"))
              if r.get(key) is not None]
    target = Path(path)
    memory_path = target.with_name(f"{target.stem}-memory{target.suffix}")
    with written_atomically(target) as partial, written_atomically(memory_path) as memory_partial:
        plot_benchmark(scaling, str(partial), x="n", y="seconds", title="attention time, one head, d = 64")
        plot_benchmark(memory, str(memory_partial), x="n", y="MiB", title="peak NumPy memory of one call")
    print(f"bench: wrote {target} and {memory_path}", file=sys.stderr)
    return 0
