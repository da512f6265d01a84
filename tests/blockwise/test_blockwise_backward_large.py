"""The issue's done-when check for the backward: n = 65,536 in a fresh process, under 512 MB.

``python -m attention_edu.bench.backward`` runs the forward (with its
log-sum-exp) and ``blockwise_attention_backward`` on one head, n = m = 65,536,
d = 64, float32, and reports the resident peak (VmHWM, right after the
backward and at the end) and the largest relative row error of dQ, dK and dV
on 16 sampled rows against float64 (see that module for how the reference is
computed). The m × n float32 weights alone would take 16 GiB.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_backward_at_65536_in_a_fresh_process_under_512_mb():
    done = subprocess.run([sys.executable, "-m", "attention_edu.bench.backward"], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    print(report)  # shown with pytest -s: the runtime and the peak for the report
    assert report["dtype"] == "float32" and report["shapes"] == {name: [65536, 64] for name in "QKV"}
    assert report["peak_mib"] < 512, report
    assert report["final_peak_mib"] < 512, report
    assert report["max_lse_error"] < 1e-4, report  # the forward's lse, used by the dK, dV reference
    assert all(error < 1e-4 for error in report["max_row_error"].values()), report


def test_small_run_reports_what_the_large_one_asserts():
    """The same measurement in-process at n = 512: tight errors, sensible fields (fast to run)."""
    from attention_edu.bench.backward import backward_at_scale

    report = backward_at_scale(n=512, samples=8)
    assert report["shapes"] == {name: [512, 64] for name in "QKV"} and report["backward_s"] > 0
    assert max(report["max_row_error"].values()) < 1e-5 and report["max_lse_error"] < 1e-5
    assert report["peak_mib"] is None or report["final_peak_mib"] >= report["peak_mib"] > 0
