"""Benchmarks: ``attention-edu bench`` and the timing and reporting it is built from.

- :mod:`.command`: what is measured (loops against matrices, Bahdanau against
  scaled dot-product, naive against blockwise attention, the fast path against
  PyTorch) and the subcommand;
- :mod:`.backward`: the blockwise backward against torch, and at n = 65,536
  in a fresh process (peak resident memory, float64 check);
- :mod:`.timing`: medians of repeats, peak memory, the machine and versions;
- :mod:`.report`: tables and plots of the results.
"""

from __future__ import annotations

from .command import SIZES, register, run, run_benchmarks

__all__ = ["SIZES", "register", "run", "run_benchmarks"]
