"""Benchmarks of the blockwise backward: against torch, and at n = 65,536 in a fresh process.

:func:`backward_headline` times the NumPy fast path against PyTorch's fused
``scaled_dot_product_attention`` backward in one process. :func:`backward_at_scale`
is the large run, started in a fresh process by
:func:`backward_at_scale_in_a_fresh_process` (or by hand):

    python -m attention_edu.bench.backward [n]     one JSON line on stdout

One head, n queries and keys, d = 64, float32: the forward with its
log-sum-exp, then :func:`blockwise_attention_backward`, then a float64 check
on sampled rows. The naive m × n float32 weights alone would need 16 GiB.

* **Peak memory** is VmHWM from /proc/self/status, read right after the
  backward and again at the end. Linux keeps ``ru_maxrss`` across ``exec``, so
  a child of a large process would report its parent's peak instead.
* **dQ rows** are exact per row: a query's whole softmax over all n keys in
  float64, dS = P ⊙ (dP − rowsum(dP ⊙ P)), dQ = dS K / √d_k.
* **dK and dV rows** need a column of P, so every query's log-sum-exp: the
  reference takes the forward's (in float64, and checked on the sampled
  query rows against its own float64 value) and computes the sampled
  columns' P, dP and dS over all n queries in float64. It checks the
  backward's recomputation and its float32 sums over 65,536 queries.

Errors are per sampled row, ‖grad − reference‖ / ‖reference‖, the largest.
``attention-edu bench`` reports it (the peak after the forward, too);
``tests/blockwise/test_blockwise_memory_bound.py`` asserts the same memory bound at
n = 8,192, where a test runs in seconds.
"""

from __future__ import annotations

import json
import math
import signal
import subprocess
import sys
import threading
import time
from typing import Any

from ..backend import host_numpy as np
from ..blockwise import blockwise_attention, blockwise_attention_backward
from ..blockwise.fast_backward import default_backward_plan
from ..blockwise.memory_model import blockwise_backward_cost
from .timing import median_seconds

__all__ = ["peak_mib", "backward_at_scale", "backward_at_scale_in_a_fresh_process", "backward_headline"]

MiB = 2 ** 20


def torch_or_none() -> Any:
    """PyTorch, or None where it is not installed. A Ctrl-C (or SIGTERM) during its import is held until the import
    ends: raised inside torch's C++ start-up (pybind11), it would abort the process instead of ending the command."""
    held: list[int] = []
    main = threading.current_thread() is threading.main_thread()
    wanted = [s for s in (signal.SIGINT, signal.SIGTERM) if main and signal.getsignal(s) is not signal.SIG_IGN]
    previous = {s: signal.signal(s, lambda signum, frame: held.append(signum)) for s in wanted}
    try:
        import torch
    except ImportError:
        torch = None
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    if held:
        raise KeyboardInterrupt
    return torch


def peak_mib() -> float | None:
    """High-water mark of this process's resident memory (VmHWM), MiB; None off Linux."""
    try:
        with open("/proc/self/status", encoding="utf-8") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmHWM")) / 1024
    except (OSError, StopIteration):
        return None


def _row_errors(grad: Any, reference: Any) -> float:
    return float(np.max(np.linalg.norm(grad - reference, axis=1) / np.linalg.norm(reference, axis=1)))


def _query_rows(Q: Any, K: Any, V: Any, d_output: Any, rows: Any) -> tuple[Any, Any]:
    """(dQ rows, lse rows) in float64 from each sampled query's whole softmax."""
    scale = 1 / math.sqrt(Q.shape[-1])
    K64, V64 = K.astype(np.float64), V.astype(np.float64)  # (n, d_k), (n, d_v)
    scores = Q[rows].astype(np.float64) @ K64.T * scale  # (r, n)
    top = np.max(scores, axis=1, keepdims=True)  # (r, 1)
    exps = np.exp(scores - top)  # (r, n)
    total = np.sum(exps, axis=1, keepdims=True)  # (r, 1)
    weights = exps / total  # (r, n)
    d_weights = d_output[rows].astype(np.float64) @ V64.T  # (r, n)
    d_scores = weights * (d_weights - np.sum(d_weights * weights, axis=1, keepdims=True))  # (r, n)
    return d_scores @ K64 * scale, (top + np.log(total))[:, 0]  # (r, d_k), (r,)


def _key_rows(Q: Any, K: Any, V: Any, output: Any, lse: Any, d_output: Any, keys: Any) -> tuple[Any, Any]:
    """(dK rows, dV rows) in float64 for the sampled keys, over all queries, given the forward's lse."""
    scale = 1 / math.sqrt(Q.shape[-1])
    Q64, d_o = Q.astype(np.float64), d_output.astype(np.float64)  # (m, d_k), (m, d_v)
    D = np.vecdot(d_o, output.astype(np.float64))  # (m,)
    weights = np.exp(Q64 @ K[keys].astype(np.float64).T * scale - lse.astype(np.float64)[:, None])  # (m, r)
    d_weights = d_o @ V[keys].astype(np.float64).T  # (m, r)
    d_scores = weights * (d_weights - D[:, None])  # (m, r)
    return d_scores.T @ Q64 * scale, weights.T @ d_o  # (r, d_k), (r, d_v)


def backward_at_scale(n: int = 65536, d: int = 64, samples: int = 16, seed: int = 0) -> dict:
    """Forward and backward of one head of n × n in float32; peaks, times and sampled-row errors."""
    rng = np.random.default_rng(seed)
    Q, K, V, d_output = (rng.standard_normal((n, d), dtype=np.float32) for _ in range(4))
    start = time.perf_counter()
    output, lse = blockwise_attention(Q, K, V, return_lse=True)
    forward_s = time.perf_counter() - start
    forward_peak = peak_mib()
    start = time.perf_counter()
    grads = blockwise_attention_backward(Q, K, V, output, lse, d_output)
    backward_s = time.perf_counter() - start
    peak = peak_mib()
    rows = np.sort(rng.choice(n, min(samples, n), replace=False))
    d_q, lse_rows = _query_rows(Q, K, V, d_output, rows)
    d_k, d_v = _key_rows(Q, K, V, output, lse, d_output, rows)
    return {"n": n, "d": d, "dtype": str(grads["Q"].dtype),
            "shapes": {name: list(g.shape) for name, g in grads.items()},
            "forward_s": forward_s, "backward_s": backward_s, "forward_peak_mib": forward_peak, "peak_mib": peak,
            "max_row_error": {"Q": _row_errors(grads["Q"][rows], d_q), "K": _row_errors(grads["K"][rows], d_k),
                              "V": _row_errors(grads["V"][rows], d_v)},
            "max_lse_error": float(np.max(np.abs(lse[rows] - lse_rows))),
            "final_peak_mib": peak_mib()}


def backward_headline(B: int, H: int, n: int, d: int, budget: float) -> dict:
    """The backward fast path against torch's fused SDPA backward: blocks of calls, three rounds, one process.

    Both get the same forward results: ours its output and log-sum-exp, torch
    its autograd graph (kept with ``retain_graph``), so only the backward is timed.
    """
    rng = np.random.default_rng(3)
    Q, K, V, d_output = (rng.standard_normal((B, H, n, d), dtype=np.float32) for _ in range(4))
    output, lse = blockwise_attention(Q, K, V, return_lse=True)
    row = {"section": "backward_headline", "sizes": f"B={B}, H={H}, n={n}, d={d}, float32"}
    rounds = {"fast_s": [], "torch_s": []}
    torch = torch_or_none()
    if torch is not None:
        tq, tk, tv = (torch.from_numpy(x).requires_grad_() for x in (Q, K, V))
        t_out, t_grad = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv), torch.from_numpy(d_output)

        def torch_backward() -> None:
            tq.grad = tk.grad = tv.grad = None
            t_out.backward(t_grad, retain_graph=True)

    def fast_backward() -> dict:
        return blockwise_attention_backward(Q, K, V, output, lse, d_output)

    for _ in range(3):
        rounds["fast_s"].append(median_seconds(fast_backward, budget))
        if torch is not None:
            rounds["torch_s"].append(median_seconds(torch_backward, budget))
    row["fast_s"] = float(np.median(rounds["fast_s"]))
    row["fast_rounds_s"] = rounds["fast_s"]
    row["torch_s"] = float(np.median(rounds["torch_s"])) if torch is not None else None
    row["torch_rounds_s"] = rounds["torch_s"]
    row["fast_over_torch"] = row["fast_s"] / row["torch_s"] if torch is not None else None
    row["max_relative_difference_from_torch"] = None
    if torch is not None:
        ours = fast_backward()
        row["max_relative_difference_from_torch"] = max(
            float(np.max(np.abs(ours[name] - x.grad.numpy())) / np.max(np.abs(x.grad.numpy())))
            for name, x in zip("QKV", (tq, tk, tv)))
    return row


def backward_at_scale_in_a_fresh_process(n: int) -> dict:
    """``python -m attention_edu.bench.backward n`` in a fresh process (its own VmHWM), and the model's prediction."""
    done = subprocess.run([sys.executable, "-m", "attention_edu.bench.backward", str(n)], capture_output=True,
                          text=True, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"bench: the n = {n} backward run failed:\n{done.stderr}")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    workers, tile = default_backward_plan(1, n, n)
    predicted = blockwise_backward_cost(n, n, 64, 64, block=tile, workers=workers).peak_bytes / MiB
    return {"section": "backward_large", **report, "predicted_call_mib": predicted,
            "inputs_mib": 5 * n * 64 * 4 / MiB}


if __name__ == "__main__":  # pragma: no cover - run in a subprocess by the tests and the bench
    print(json.dumps(backward_at_scale(*(int(arg) for arg in sys.argv[1:2]))))
