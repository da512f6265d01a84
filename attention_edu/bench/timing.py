"""How ``attention-edu bench`` measures: the machine, median times, NumPy peak memory.

* **Time**: the median of repeated calls, after one untimed warm-up for
  calls that are fast; every number compared in a ratio comes from the same
  process, measured one after the other (in blocks, not interleaved: a library
  that spins its threads after returning would otherwise slow the next one).
* **Spread**: small cases also report the fastest and the slowest repeat
  (:func:`repeat_seconds`), and ``--quick`` times them with BLAS held to one
  thread (:func:`one_blas_thread`): on a loaded machine a multithreaded BLAS
  can wait for cores that others hold, and a small call reads far slower.
  :func:`load_warning` says when the load average is above the usable cores.
* **Memory**: :mod:`tracemalloc` sees every array NumPy allocates (NumPy
  reports its data buffers to it), so the peak of one call, minus what existed
  before, is exactly what :mod:`attention_edu.memory_model` predicts: memory the
  call itself adds, without the interpreter, the libraries or the inputs.
  ``ru_maxrss`` (whole process, never lowered) would need a fresh process per
  size; the test suite uses it once, for the n = 65,536 run.
"""

from __future__ import annotations

import math
import os
import platform
import statistics
import time
import tracemalloc
from importlib import metadata
from typing import Any, Callable

from ..backend import host_numpy as np
from ..blockwise.fast import cpu_count, default_workers
from ..layers.fitting import one_blas_thread  # BLAS held to one thread inside a with block

__all__ = ["machine", "machine_line", "median_seconds", "repeat_seconds", "one_blas_thread", "load_warning",
           "numpy_peak_bytes", "matmul_rate"]


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _blas() -> dict:
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return {"name": "unknown (install threadpoolctl to see it)"}
    for lib in threadpool_info():
        if lib.get("user_api") == "blas":
            return {"name": lib.get("internal_api"), "version": lib.get("version"),
                    "threads": lib.get("num_threads"), "architecture": lib.get("architecture"),
                    "threading_layer": lib.get("threading_layer")}
    return {"name": "not loaded"}


def machine() -> dict:
    """The processor, cores, library versions and BLAS threading, as a dict."""
    from ..backend import cupy_if_available

    cupy = cupy_if_available()
    return {
        "cpu": _cpu_model(), "cores": os.cpu_count(), "usable_cores": cpu_count(),
        "fast_path_workers": default_workers(), "platform": platform.platform(),
        "python": platform.python_version(), "numpy": np.__version__, "blas": _blas(),
        "threadpoolctl": _version("threadpoolctl"), "torch": _version("torch"),
        "cupy": None if cupy is None else cupy.__version__,
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
    }


def machine_line(info: dict) -> str:
    """One line naming the machine and the libraries, printed above every table."""
    blas = info["blas"]
    blas_text = " ".join(str(blas[k]) for k in ("name", "version", "architecture") if blas.get(k))
    if blas.get("threads"):
        blas_text += f", {blas['threads']} threads"
    return (f"machine: {info['cpu']}, {info['cores']} cores ({info['usable_cores']} usable), "
            f"{info['platform']}; Python {info['python']}, numpy {info['numpy']} (BLAS {blas_text}), "
            f"torch {info['torch'] or 'not installed'}, cupy {info['cupy'] or 'none (no GPU)'}, "
            f"threadpoolctl {info['threadpoolctl'] or 'not installed'}; "
            f"fast path threads {info['fast_path_workers']}; "
            f"OPENBLAS_CORETYPE={info['OPENBLAS_CORETYPE'] or 'unset'}")


def repeat_seconds(call: Callable[[], Any], budget: float = 1.0, sync: Callable[[], Any] | None = None,
                   min_repeats: int = 3, max_repeats: int = 15) -> list[float]:
    """Wall times of repeated ``call()``: about ``budget`` seconds of repeats, at least ``min_repeats``.

    ``sync`` is called after each call (e.g. to wait for a GPU to finish). A
    call under 0.2 s is run once untimed first (warm-up).

    Examples
    --------
    >>> times = repeat_seconds(lambda: sum(range(1000)), budget=0.01)
    >>> 3 <= len(times) <= 15 and min(times) > 0
    True
    """
    def once() -> float:
        start = time.perf_counter()
        call()
        if sync is not None:
            sync()
        return time.perf_counter() - start

    first = once()
    if first < 0.2:  # cheap: treat the first call as warm-up and time afresh
        first = once()
    repeats = max(min_repeats, min(max_repeats, int(budget / max(first, 1e-9))))
    return [first] + [once() for _ in range(repeats - 1)]


def median_seconds(call: Callable[[], Any], budget: float = 1.0, sync: Callable[[], Any] | None = None,
                   min_repeats: int = 3, max_repeats: int = 15) -> float:
    """Median of :func:`repeat_seconds`."""
    return statistics.median(repeat_seconds(call, budget, sync, min_repeats, max_repeats))


def load_warning(load: float | None = None, cores: int | None = None) -> str | None:
    """A warning when the 1-minute load average exceeds the usable cores, else None.

    Examples
    --------
    >>> load_warning(10.4, 2)  # doctest: +ELLIPSIS
    'warning: load average 10.4 on 2 usable cores: ... spread (min-max of repeats) ...'
    >>> load_warning(0.5, 2) is None
    True
    """
    if load is None:
        try:
            load = os.getloadavg()[0]
        except OSError:  # not available on this platform
            return None
    cores = cpu_count() if cores is None else cores
    if load <= cores:
        return None
    return (f"warning: load average {load:.1f} on {cores} usable cores: other programs hold the "
            f"processor, so times are slower and noisier than on an idle machine; read each time "
            f"with its spread (min-max of repeats) and rerun when the machine is quiet")


def numpy_peak_bytes(call: Callable[[], Any]) -> int:
    """Peak bytes NumPy allocates during ``call()`` beyond what existed before (see module doc)."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        result = call()
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    del result
    return peak


def matmul_rate(size: int = 1024, repeats: int = 20) -> float:
    """float32 FLOP/s of NumPy's matmul on (size, size) operands, all BLAS threads.

    The fastest of ``repeats`` calls, not the median: a floor should use the
    best rate the machine reaches, not one slowed by whatever else runs.
    """
    rng = np.random.default_rng(0)
    A = rng.standard_normal((size, size), dtype=np.float32)
    B = rng.standard_normal((size, size), dtype=np.float32)
    out = np.empty((size, size), dtype=np.float32)
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        np.matmul(A, B, out=out)
        best = min(best, time.perf_counter() - start)
    return 2 * size ** 3 / best
