"""``attention-edu bench``: predict, then measure, the cost of attention on this machine.

    attention-edu bench            full run (a few minutes on 2 cores)
    attention-edu bench --quick    small sizes, under 30 s
    attention-edu bench --json     results as JSON instead of tables
    attention-edu bench --plot P   time curves to P, peak-memory curves next to it (P-memory.png)

Sections: loops against vectorized code; Bahdanau against scaled dot-product
attention (measured time ratio beside the FLOP ratios); naive against blockwise
attention as n grows (time, NumPy peak memory measured and predicted by
:mod:`attention_edu.memory_model`, torch and CuPy when present, the GEMM floor);
and the fast path against torch's fused kernel at B = 1, H = 8, n = 2048, d = 64
(n = 1024 with --quick), forward and backward (H = 2, n = 512 for the backward with
--quick); last, the backward at n = 65,536 (2,048 with --quick) in a fresh
process: resident peak and float64 check (:mod:`attention_edu.bench.backward`).
How times and memory are measured: :mod:`attention_edu.bench.timing`; the
tables and plots: :mod:`attention_edu.bench.report`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Any, Callable

from .. import costs
from ..additive import bahdanau_attention
from ..backend import cupy_if_available
from ..backend import host_numpy as np
from ..blockwise import blockwise_attention
from ..blockwise.fast import default_plan
from ..blockwise.memory_model import blockwise_cost, naive_cost
from ..dot_product import scaled_dot_product_attention
from ..loops import attention_loop, bahdanau_attention_loop
from .backward import backward_at_scale_in_a_fresh_process, backward_headline, torch_or_none
from ..arguments import output_path
from .report import format_tables, write_plots
from .timing import (load_warning, machine, matmul_rate, median_seconds, numpy_peak_bytes, one_blas_thread,
                     repeat_seconds)

__all__ = ["register", "run", "run_benchmarks", "SIZES"]

MiB = 2 ** 20
#: Sizes of each section, full and --quick.
SIZES = {
    False: dict(loop=64, bahdanau_loop=24, chapter=512, ns=(256, 1024, 4096, 8192, 16384, 32768, 65536),
                naive_max_bytes=2 * 2 ** 30, budget=1.0, headline=(1, 8, 2048, 64), backward=(1, 8, 2048, 64),
                large_n=65536),
    True: dict(loop=16, bahdanau_loop=8, chapter=128, ns=(256, 1024, 4096),
               naive_max_bytes=2 ** 28, budget=0.2, headline=(1, 8, 1024, 64), backward=(1, 2, 512, 64),
               large_n=2048),
}


def _normal(rng: Any, *shape: int) -> Any:
    return rng.standard_normal(shape, dtype=np.float32)


def _timed(call: Callable[[], Any], budget: float) -> tuple[float, list[float]]:
    """Median and [fastest, slowest] of repeated calls."""
    times = repeat_seconds(call, budget)
    return float(np.median(times)), [min(times), max(times)]


def _loops(size: int, loop_bahdanau: int, budget: float) -> list[dict]:
    rng = np.random.default_rng(0)
    Q, K, V = (rng.standard_normal((size, 16)) for _ in range(3))
    S, H = rng.standard_normal((loop_bahdanau, 512)), rng.standard_normal((loop_bahdanau, 512))
    W1, W2, v = rng.standard_normal((256, 512)), rng.standard_normal((256, 512)), rng.standard_normal(256)
    pairs = [("scaled dot-product", f"m=n={size}, d_k=d_v=16", lambda: attention_loop(Q, K, V),
              lambda: scaled_dot_product_attention(Q, K, V)),
             ("Bahdanau", f"m=n={loop_bahdanau}, d_a=256, d_s=d_h=512",
              lambda: bahdanau_attention_loop(S, H, W1, W2, v), lambda: bahdanau_attention(S, H, W1, W2, v))]
    rows = []
    for name, sizes, loop, vectorized in pairs:
        (slow, slow_spread), (fast, fast_spread) = _timed(loop, budget), _timed(vectorized, budget)
        rows.append({"section": "loops", "series": name, "sizes": sizes, "loop_s": slow, "loop_spread_s": slow_spread,
                     "vectorized_s": fast, "vectorized_spread_s": fast_spread, "speedup": slow / fast})
    return rows


def _bahdanau_vs_sdpa(size: int, budget: float) -> dict:
    rng = np.random.default_rng(1)
    m = n = size
    d_k, d_a, d_s = 64, 256, 512
    Q, K, V = _normal(rng, m, d_k), _normal(rng, n, d_k), _normal(rng, n, d_k)
    S, H = _normal(rng, m, d_s), _normal(rng, n, d_s)
    W1, W2, v = _normal(rng, d_a, d_s), _normal(rng, d_a, d_s), _normal(rng, d_a)
    sdpa, sdpa_spread = _timed(lambda: scaled_dot_product_attention(Q, K, V), budget)
    additive, additive_spread = _timed(lambda: bahdanau_attention(S, H, W1, W2, v), budget)
    chapter = costs.bahdanau_flops(m, n, d_a, d_s, d_s) / costs.scaled_dot_product_flops(m, n, d_k, d_k)
    # as the library computes it: W1 s_t and W2 h_i once each, then d_a adds, tanh (3 d_a as the
    # chapter counts it) and the v product (2 d_a) per pair, softmax, and the context
    computed = (costs.matmul_flops(m, d_s, d_a) + costs.matmul_flops(n, d_s, d_a) + m * n * 6 * d_a
                + 5 * m * n + costs.matmul_flops(m, n, d_s))
    ratio = computed / costs.scaled_dot_product_flops(m, n, d_k, d_k, softmax=True)
    return {"section": "bahdanau_vs_sdpa", "sizes": f"m=n={size}, d_k=d_v={d_k}; d_a={d_a}, d_s=d_h={d_s}",
            "bahdanau_s": additive, "bahdanau_spread_s": additive_spread, "sdpa_s": sdpa,
            "sdpa_spread_s": sdpa_spread, "time_ratio": additive / sdpa,
            "chapter_flop_ratio": chapter, "computed_flop_ratio": ratio}


def _scaling_plan(ns: tuple[int, ...], naive_max: int, budget: float, rate: float) -> list:
    """One (label, thunk) per measurement; each thunk returns a list of rows."""
    torch, cupy = torch_or_none(), cupy_if_available()
    plan: list[tuple[str, Callable[[], list[dict]]]] = []
    for n in ns:
        def measure(n: int = n) -> list[dict]:
            rng = np.random.default_rng(n)
            Q, K, V = _normal(rng, n, 64), _normal(rng, n, 64), _normal(rng, n, 64)
            flops = costs.scaled_dot_product_flops(n, n, 64, 64)
            rows = [{"series": "GEMM floor", "seconds": flops / rate}]
            if naive_cost(n, n, 64, 64).peak_bytes <= naive_max:
                seconds = median_seconds(lambda: scaled_dot_product_attention(Q, K, V), budget)
                rows.append({"series": "naive", "seconds": seconds,
                             "peak_mib": numpy_peak_bytes(lambda: scaled_dot_product_attention(Q, K, V)) / MiB,
                             "predicted_peak_mib": naive_cost(n, n, 64, 64).peak_bytes / MiB})
            seconds = median_seconds(lambda: blockwise_attention(Q, K, V), budget)
            workers, tile = default_plan(1, n, n)
            rows.append({"series": "blockwise", "seconds": seconds,
                         "peak_mib": numpy_peak_bytes(lambda: blockwise_attention(Q, K, V)) / MiB,
                         "predicted_peak_mib": blockwise_cost(n, n, 64, 64, block=tile, workers=workers).peak_bytes
                         / MiB})
            if torch is not None:
                tq, tk, tv = (torch.from_numpy(x)[None, None] for x in (Q, K, V))
                sdpa = torch.nn.functional.scaled_dot_product_attention
                rows.append({"series": "torch", "seconds": median_seconds(lambda: sdpa(tq, tk, tv), budget)})
            if cupy is not None:
                cq, ck, cv = (cupy.asarray(x) for x in (Q, K, V))
                sync = cupy.cuda.Device().synchronize
                rows.append({"series": "cupy blockwise", "seconds": median_seconds(
                    lambda: blockwise_attention(cq, ck, cv), budget, sync)})
            return [{"section": "scaling", "n": n, **row} for row in rows]
        plan.append((f"n={n}", measure))
    return plan


def _headline(B: int, H: int, n: int, d: int, budget: float) -> dict:
    """The fast path against torch's fused kernel, in blocks of calls, three rounds, one process."""
    rng = np.random.default_rng(2)
    Q, K, V = (rng.standard_normal((B, H, n, d), dtype=np.float32) for _ in range(3))
    row = {"section": "headline", "sizes": f"B={B}, H={H}, n={n}, d={d}, float32",
           "numpy_naive_s": median_seconds(lambda: scaled_dot_product_attention(Q, K, V), budget)}
    rounds = {"fast_s": [], "torch_s": []}
    torch = torch_or_none()
    if torch is not None:
        tq, tk, tv = (torch.from_numpy(x) for x in (Q, K, V))
        sdpa = torch.nn.functional.scaled_dot_product_attention
    for _ in range(3):
        rounds["fast_s"].append(median_seconds(lambda: blockwise_attention(Q, K, V), budget))
        if torch is not None:
            rounds["torch_s"].append(median_seconds(lambda: sdpa(tq, tk, tv), budget))
    row["fast_s"] = float(np.median(rounds["fast_s"]))
    row["torch_s"] = float(np.median(rounds["torch_s"])) if torch is not None else None
    row["fast_over_torch"] = row["fast_s"] / row["torch_s"] if torch is not None else None
    row["error_vs_naive"] = float(np.max(np.abs(blockwise_attention(Q, K, V)
                                                - scaled_dot_product_attention(Q, K, V)[0])))
    return row


def run_benchmarks(quick: bool = False, progress: bool = True) -> dict:
    """Every measurement; returns {"machine": ..., "rows": [...]} (the JSON of ``--json``)."""
    from tqdm.auto import tqdm

    sizes = SIZES[quick]
    rate = matmul_rate()
    # --quick's cases are small: one BLAS thread each, so that a loaded machine's idle-waiting
    # threads do not swamp them (the full run keeps every thread, as docs/benchmarks.md records)
    pinned = one_blas_thread if quick else contextlib.nullcontext

    def small(measure: Callable[[], list[dict]]) -> Callable[[], list[dict]]:
        def run() -> list[dict]:
            with pinned():
                return [dict(row, blas_threads=1 if quick else "all") for row in measure()]
        return run

    plan = [("loops", small(lambda: _loops(sizes["loop"], sizes["bahdanau_loop"], sizes["budget"]))),
            ("Bahdanau vs scaled dot-product",
             small(lambda: [_bahdanau_vs_sdpa(sizes["chapter"], sizes["budget"])]))]
    plan += _scaling_plan(sizes["ns"], sizes["naive_max_bytes"], sizes["budget"], rate)
    plan.append(("fast path vs torch", lambda: [_headline(*sizes["headline"], sizes["budget"])]))
    plan.append(("backward vs torch", lambda: [backward_headline(*sizes["backward"], sizes["budget"])]))
    plan.append((f"backward at n={sizes['large_n']}", lambda: [backward_at_scale_in_a_fresh_process(sizes["large_n"])]))
    rows: list[dict] = []
    load_before = load_warning()
    with tqdm(plan, desc="bench", unit="step", file=sys.stderr, disable=not progress) as bar:
        for label, measure in bar:
            bar.set_postfix_str(label)
            rows += measure()
    warnings = [w for w in (load_warning() or load_before,) if w]  # as the run ended, else as it began
    return {"machine": machine(), "matmul_gflops": rate / 1e9, "quick": quick, "warnings": warnings, "rows": rows}


def plot_path(text: str) -> Path:
    """A file to write a figure to: an :func:`output_path` with a suffix that names a format matplotlib writes.

    Checked before the benchmarks run (minutes), not by matplotlib after them.

    >>> plot_path("bench.txt")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: bench.txt: matplotlib cannot write '.txt' files; give a name ending in .png, .pdf, .svg, ...
    """
    path = output_path(text)
    try:
        from ..plotting import figure_formats
    except ImportError as err:       # matplotlib missing
        raise argparse.ArgumentTypeError(f"needs matplotlib ({err}); pip install matplotlib") from None
    if path.suffix[1:].lower() not in figure_formats():
        what = f"{path.suffix!r} files" if path.suffix else "files without a suffix"
        raise argparse.ArgumentTypeError(f"{path}: matplotlib cannot write {what}; give a name ending in .png, .pdf, "
                                         f".svg, ...")
    return path


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``bench`` subcommand to the ``attention-edu`` parser."""
    p = subparsers.add_parser("bench", help="time and memory of attention on this machine, predicted and measured",
                              description="Predict, then measure, the time and memory of attention on this "
                                          "machine: loops against matrices, Bahdanau against scaled dot-product, "
                                          "naive against blockwise attention, and the NumPy fast path against "
                                          "PyTorch's fused kernel, forward and backward.")
    p.add_argument("--quick", action="store_true", help="small sizes only (under 30 s)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--plot", metavar="PATH", type=plot_path,
                   help="write time curves to PATH (and memory curves beside it)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the benchmarks and print them; the exit code."""
    warning = load_warning()
    if warning:
        print(f"bench: {warning}", file=sys.stderr)
    results = run_benchmarks(quick=args.quick, progress=not args.no_progress)
    print(json.dumps(results, indent=1) if args.json else format_tables(results))
    return write_plots(results, args.plot) if args.plot else 0
