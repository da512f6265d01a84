"""Blockwise attention, forward and backward, never holds the n × n matrix: measured in a fresh process.

Each measurement runs in a child process: inputs made, the call warmed up at a small size (BLAS
buffers, worker threads), then the resident set before the call (VmRSS) and its high-water mark
after it (VmHWM) from /proc/self/status. Their difference bounds what the call added. At
n = 8,192 one n × n float32 matrix is 256 MiB; the bound is a quarter of it, while the blockwise
calls need a few MiB (tiles and, for the backward, the three gradients). A control runs the naive
mechanism at n = 4,096 and must break its own quarter-matrix bound, so the measurement can fail.
The n = 65,536 figures (forward and backward) are the benchmark's: ``attention-edu bench`` and
``python -m attention_edu.bench.backward``, recorded in docs/benchmarks.md.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np
    import attention_edu as ae

    def status(field):  # MiB
        with open("/proc/self/status") as lines:
            return next(int(line.split()[1]) for line in lines if line.startswith(field)) / 1024

    what, n, d = sys.argv[1], int(sys.argv[2]), 64
    def inputs(size):
        rng = np.random.default_rng(size)
        return [rng.standard_normal((size, d), dtype=np.float32) for _ in range(4)]

    def call(size):
        Q, K, V, G = inputs(size)
        if what == "naive":
            return lambda: ae.scaled_dot_product_attention(Q, K, V)
        if what == "forward":
            return lambda: ae.blockwise_attention(Q, K, V, return_lse=True)
        out, lse = ae.blockwise_attention(Q, K, V, return_lse=True)
        return lambda: ae.blockwise_attention_backward(Q, K, V, out, lse, G)

    call(256)()                      # warm-up: BLAS buffers, thread pools
    run = call(n)                    # inputs (and, for the backward, the forward's output and lse)
    before = status("VmRSS")
    result = run()
    added = status("VmHWM") - before
    print(json.dumps({"added_mib": added, "matrix_mib": 4 * n * n / 2**20}))
""")


def _added(what: str, n: int) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, what, str(n)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
@pytest.mark.parametrize("what", ["forward", "backward"])
def test_blockwise_adds_far_less_than_one_n_by_n_matrix(what):
    report = _added(what, 8192)
    print(report)  # shown with pytest -s
    assert report["added_mib"] < report["matrix_mib"] / 4, report  # 64 MiB; it needs a few


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_the_measurement_catches_a_call_that_builds_the_matrix():
    report = _added("naive", 4096)
    assert report["added_mib"] > report["matrix_mib"] / 4, report  # scores and weights: 2 matrices


def test_small_run_reports_what_the_large_one_asserts():
    """``bench``'s n = 65,536 measurement, in-process at n = 512: tight errors, sensible fields."""
    from attention_edu.bench.backward import backward_at_scale

    report = backward_at_scale(n=512, samples=8)
    assert report["shapes"] == {name: [512, 64] for name in "QKV"} and report["backward_s"] > 0
    assert max(report["max_row_error"].values()) < 1e-5 and report["max_lse_error"] < 1e-5
    assert report["peak_mib"] is None or report["final_peak_mib"] >= report["peak_mib"] > 0
