"""Benchmark of the library on a GPU: CuPy arrays through the portable blockwise path, against torch's
fused CUDA kernel, with the block size swept and every result checked against an independent value.

Needs CuPy with a CUDA device; torch with CUDA is optional (its columns are left out without it).
Prints the machine line, the GPU, then three tables: forward time against n and block size, forward
and backward accuracy (float32 against float64 on the same device, and against torch), backward
time. Every time is the median of repeats, synchronised after each call, all in this one process.
Usage: ``python scripts/bench_gpu.py [--quick]``.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import attention_edu as ae
from attention_edu.backend import cupy_if_available
from attention_edu.blockwise import ACCELERATOR_BLOCK, DEFAULT_BLOCK
from attention_edu.bench.timing import machine, machine_line, median_seconds


def _torch_cuda():
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def _fmt(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return f"{seconds * 1e3:,.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def _inputs(cupy, n: int, d: int = 64):
    rng = np.random.default_rng(n)
    return tuple(cupy.asarray(rng.standard_normal((n, d), dtype=np.float32)) for _ in range(3))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Blockwise attention on CuPy against torch's CUDA kernel.")
    parser.add_argument("--quick", action="store_true", help="n up to 16,384 only")
    args = parser.parse_args(argv)
    cupy = cupy_if_available()
    if cupy is None:
        print("bench_gpu: needs CuPy and a CUDA device; none here", file=sys.stderr)
        return 2
    torch = _torch_cuda()
    sync = cupy.cuda.Device().synchronize
    props = cupy.cuda.runtime.getDeviceProperties(0)
    print(machine_line(machine()))
    print(f"GPU: {props['name'].decode()}, {props['totalGlobalMem'] / 2**30:.0f} GiB; CUDA runtime "
          f"{cupy.cuda.runtime.runtimeGetVersion()}, driver {cupy.cuda.runtime.driverGetVersion()}; "
          f"torch CUDA {'yes' if torch is not None else 'not available'}")
    ns = (4096, 16384) if args.quick else (4096, 16384, 65536)
    blocks = (DEFAULT_BLOCK, 1024, ACCELERATOR_BLOCK, 16384)
    names = {DEFAULT_BLOCK: "host default", ACCELERATOR_BLOCK: "GPU default"}

    print("\nForward, one head, d = 64, float32 (median of repeats, synchronised)")
    print(f"{'n':>7}  " + "  ".join(f"{str(b) + (' ' + names[b] if b in names else ''):>25}" for b in blocks)
          + f"  {'torch CUDA SDPA':>16}")
    for n in ns:
        Q, K, V = _inputs(cupy, n)
        cells = []
        for block in blocks:
            seconds = median_seconds(lambda: ae.blockwise_attention(Q, K, V, block_size=block), 2.0, sync)
            cells.append(f"{_fmt(seconds):>25}")
        torch_s = None
        if torch is not None:
            tq, tk, tv = (torch.as_tensor(x, device="cuda")[None, None] for x in (Q, K, V))
            sdpa = torch.nn.functional.scaled_dot_product_attention
            torch_s = median_seconds(lambda: sdpa(tq, tk, tv), 2.0, torch.cuda.synchronize)
        print(f"{n:>7,}  " + "  ".join(cells) + f"  {_fmt(torch_s):>16}")

    n = 4096
    print(f"\nAccuracy at n = {n:,}, float32 (max |difference|)")
    Q, K, V = _inputs(cupy, n)
    exact = ae.scaled_dot_product_attention(*(x.astype(cupy.float64) for x in (Q, K, V)))[0]
    out, lse = ae.blockwise_attention(Q, K, V, block_size=1024, return_lse=True)
    line = f"blockwise forward vs float64 naive on the GPU: {float(cupy.abs(out - exact).max()):.1e}"
    d_out = cupy.asarray(np.random.default_rng(1).standard_normal((n, 64), dtype=np.float32))
    grads = ae.blockwise_attention_backward(Q, K, V, out, lse, d_out, block_size=1024)
    if torch is not None:
        tq, tk, tv = (torch.as_tensor(x, device="cuda").double().requires_grad_() for x in (Q, K, V))
        reference = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv)
        reference.backward(torch.as_tensor(d_out, device="cuda").double())
        worst = max(float(cupy.abs(grads[name] - cupy.asarray(t.grad)).max() / cupy.abs(cupy.asarray(t.grad)).max())
                    for name, t in zip("QKV", (tq, tk, tv)))
        line += f"; backward vs torch CUDA autograd in float64: max relative difference {worst:.1e}"
        on_torch = ae.blockwise_attention(*(torch.as_tensor(x, device="cuda") for x in (Q, K, V)))
        line += (f"; blockwise on torch CUDA tensors ({on_torch.device}) vs float64 naive: "
                 f"{float((on_torch.double() - torch.as_tensor(exact, device='cuda')).abs().max()):.1e}")
    print(line)

    print("\nBackward, one head, d = 64, float32 (median of repeats, synchronised)")
    print(f"{'n':>7}  {'block 1024':>12}  {'block 4096':>12}  {'torch CUDA backward':>20}")
    for n in ns[:2]:
        Q, K, V = _inputs(cupy, n)
        out, lse = ae.blockwise_attention(Q, K, V, block_size=4096, return_lse=True)
        d_out = cupy.ones_like(out)
        cells = []
        for block in (1024, 4096):
            seconds = median_seconds(
                lambda: ae.blockwise_attention_backward(Q, K, V, out, lse, d_out, block_size=block), 2.0, sync)
            cells.append(f"{_fmt(seconds):>12}")
        torch_s = None
        if torch is not None:
            tq, tk, tv = (torch.as_tensor(x, device="cuda")[None, None].requires_grad_() for x in (Q, K, V))
            reference = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv)
            grad = torch.ones_like(reference)
            torch_s = median_seconds(lambda: torch.autograd.grad(reference, (tq, tk, tv), grad, retain_graph=True),
                                     2.0, torch.cuda.synchronize)
        print(f"{n:>7,}  " + "  ".join(cells) + f"  {_fmt(torch_s):>20}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
