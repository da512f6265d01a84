"""The blockwise backward pass as fast as NumPy allows: the host path behind ``blockwise_attention_backward``.

Same equations as :mod:`.backward` (scores rebuilt tile by tile from the
saved log-sum-exp, nothing m × n), arranged as FlashAttention-2 arranges them
and tuned like the forward's :mod:`.fast`:

1. **Keys outside.** A task is one (batch entry, key block); it runs down
   the query blocks, so dK and dV of its keys add up in the task's own
   buffers and are written once. dQ collects from every key block: each
   query block's dQ is added under its own lock (an add of b × d_k numbers
   against five b × c × d matrix products, so the locks are rarely contended).
2. **No temporaries.** Each worker owns two (block_k, block_q) tiles (Pᵀ and
   dPᵀ, stored keys-down as the forward's) and a few small buffers; every
   step writes into them (``out=``, in-place ufuncs). float32 stays float32.
3. **No max pass.** The forward's log-sum-exp is each row's exact shift:
   exp(s − lse) ≤ 1 cannot overflow. A fully masked row (lse = −inf) is given
   lse = +inf, so its weights come out exactly 0 with no special case.
4. **All cores.** Worker threads take tasks from a queue while BLAS is held
   to one thread per call (threadpoolctl); small inputs run on one thread,
   also with BLAS on one thread.

Measured figures and their limits: ``docs/benchmarks.md``.
"""

from __future__ import annotations

import math
import threading
from types import SimpleNamespace
from typing import Any

from ..backend import host_numpy as np
from .threads import PARALLEL_PAIRS, TILE_ELEMENTS, TiledJob, default_workers

__all__ = ["blockwise_attention_backward_fast", "default_backward_plan", "default_backward_tile"]


def default_backward_plan(groups: int, m: int, n: int) -> tuple[int, tuple[int, int]]:
    """(workers, (block_q, block_k)) for ``groups`` batch entries of m × n: every core above PARALLEL_PAIRS."""
    workers = default_workers() if groups * m * n >= PARALLEL_PAIRS else 1
    return workers, default_backward_tile(groups, m, n, workers)


def default_backward_tile(groups: int, m: int, n: int, workers: int) -> tuple[int, int]:
    """(block_q, block_k): two tiles of about TILE_ELEMENTS / 2 scores, enough key blocks for every worker.

    Examples
    --------
    >>> default_backward_tile(8, 2048, 2048, 2), default_backward_tile(1, 65536, 65536, 2)
    ((512, 256), (512, 256))
    """
    block_k = min(n, 256)
    while block_k > 32 and groups * math.ceil(n / block_k) < 4 * workers:
        block_k //= 2
    return min(m, max(128, TILE_ELEMENTS // 2 // block_k)), block_k


class _Job(TiledJob):
    """One backward call: D, the gradients, key-block tasks and the dQ locks."""

    def __init__(self, Q: Any, K: Any, V: Any, output: Any, lse: Any, d_output: Any, mask: Any | None,
                 batch: tuple[int, ...], tile: tuple[int, int], causal: bool):
        super().__init__(Q, K, V, mask, batch, tile, causal)
        self.d_output = d_output  # (..., m, d_v), the batch shape already
        self.D = np.vecdot(d_output, output)  # (..., m): rowsum(dO ⊙ O)
        self.lse = np.where(np.isneginf(lse), np.inf, lse).astype(self.dtype, copy=False)  # (..., m)
        self.d_Q = np.zeros(batch + (self.m, self.d_k), dtype=self.dtype)  # (..., m, d_k), summed into
        self.d_K = np.zeros(batch + (self.n, self.d_k), dtype=self.dtype)  # (..., n, d_k)
        self.d_V = np.zeros(batch + (self.n, self.d_v), dtype=self.dtype)  # (..., n, d_v)
        groups, query_blocks = math.prod(batch), math.ceil(self.m / self.block_q)
        self.locks = [threading.Lock() for _ in range(groups * query_blocks)]
        # Causal: early key blocks are seen by more queries, so they come first and the small ones fill in.
        self.tasks = [(g, j0) for g in range(groups) for j0 in range(0, self.n, self.block_k)]

    def scratch(self) -> SimpleNamespace:
        """One worker's buffers: Pᵀ and dPᵀ tiles (and a bool tile with masks), q, partial products."""
        masked = self.mask is not None or self.causal
        c, b = self.block_k, self.block_q
        return SimpleNamespace(
            weights=np.empty((c, b), dtype=self.dtype),  # (c, b) Pᵀ
            d_scores=np.empty((c, b), dtype=self.dtype),  # (c, b) dPᵀ, then dSᵀ
            hidden=np.empty((c, b) if masked else (0, 0), dtype=bool),  # (c, b)
            q=np.empty((b, self.d_k), dtype=self.dtype),  # (b, d_k)
            d_q=np.empty((b, self.d_k), dtype=self.dtype),  # (b, d_k)
            d_k=np.empty((c, self.d_k), dtype=self.dtype),  # (c, d_k)
            d_v=np.empty((c, self.d_v), dtype=self.dtype))  # (c, d_v)

    def task(self, g: int, j0: int, scratch: SimpleNamespace) -> None:
        """Gradients of keys j0..j1−1 of batch entry g (into d_K, d_V) and their share of d_Q."""
        at = np.unravel_index(g, self.batch)
        Q, K, V, d_output = self.Q[at], self.K[at], self.V[at], self.d_output[at]
        lse, D, d_Q = self.lse[at], self.D[at], self.d_Q[at]  # (m,), (m,), (m, d_k)
        j1 = min(j0 + self.block_k, self.n)
        c = j1 - j0
        k, v = K[j0:j1], V[j0:j1]  # (c, d_k), (c, d_v)
        d_k, d_v = self.d_K[at][j0:j1], self.d_V[at][j0:j1]  # (c, d_k), (c, d_v): written by this task only
        first = max(0, j0 - (self.n - self.m)) if self.causal else 0  # earlier queries see none of these keys
        for i0 in range(first - first % self.block_q, self.m, self.block_q):
            i1 = min(i0 + self.block_q, self.m)
            b = i1 - i0
            hide = self.hidden_tile(at, i0, i1, j0, j1, scratch.hidden)
            if hide is not None and bool(np.all(hide)):
                continue  # nothing visible in this tile
            q = np.multiply(Q[i0:i1], self.scale, out=scratch.q[:b])  # (b, d_k)
            d_o = d_output[i0:i1]  # (b, d_v)
            weights = np.matmul(k, q.T, out=scratch.weights[:c, :b])  # (c, b): Sᵀ
            np.subtract(weights, lse[i0:i1], out=weights)  # (c, b): S − lse ≤ 0 where visible
            if hide is not None:
                np.copyto(weights, -math.inf, where=hide)  # hidden scores may exceed lse: never exp them
            np.exp(weights, out=weights)  # (c, b): Pᵀ
            np.add(d_v, np.matmul(weights, d_o, out=scratch.d_v[:c]), out=d_v)  # dV += Pᵀ dO
            d_scores = np.matmul(v, d_o.T, out=scratch.d_scores[:c, :b])  # (c, b): dPᵀ
            np.subtract(d_scores, D[i0:i1], out=d_scores)  # (c, b): dPᵀ − D
            np.multiply(d_scores, weights, out=d_scores)  # (c, b): dSᵀ
            np.add(d_k, np.matmul(d_scores, q, out=scratch.d_k[:c]), out=d_k)  # dK += dSᵀ Q/√d_k
            d_q = np.matmul(d_scores.T, k, out=scratch.d_q[:b])  # (b, d_k): dS K, scaled at the end
            with self.locks[g * math.ceil(self.m / self.block_q) + i0 // self.block_q]:
                np.add(d_Q[i0:i1], d_q, out=d_Q[i0:i1])


def blockwise_attention_backward_fast(Q: Any, K: Any, V: Any, output: Any, lse: Any, d_output: Any,
                                      mask: Any | None, batch: tuple[int, ...],
                                      tile: tuple[int, int] | None = None, causal: bool = False,
                                      workers: int | None = None) -> tuple[Any, Any, Any]:
    """(dQ, dK, dV) over the batch shape, for NumPy arguments checked by ``blockwise_attention_backward``.

    ``batch`` is the broadcast batch shape (``Dims.batch``); ``tile`` (block_q,
    block_k) and ``workers`` default to :func:`default_backward_plan`.
    """
    groups, m, n = math.prod(batch), Q.shape[-2], K.shape[-2]
    if workers is None:
        workers, auto_tile = default_backward_plan(groups, m, n)
    else:
        auto_tile = default_backward_tile(groups, m, n, workers)
    job = _Job(Q, K, V, output, lse, d_output, mask, tuple(batch), tile or auto_tile, causal)
    # One BLAS thread per worker even with a single worker: on tiles this small, BLAS threads
    # gain little on a quiet machine and, on a busy one, spin against each other (20x slower measured).
    job.run(workers, one_blas_thread_alone=True)
    np.multiply(job.d_Q, job.scale, out=job.d_Q)  # dQ = dS K / √d_k
    return job.d_Q, job.d_K, job.d_V
