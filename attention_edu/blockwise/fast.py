"""Blockwise attention as fast as NumPy allows: the host path behind ``blockwise_attention``.

Same algorithm as :mod:`attention_edu.blockwise` (tiles, online softmax,
nothing m × n), tuned for NumPy on a multi-core CPU:

1. **No temporaries.** Each worker owns a (block_k, block_q) score tile sized
   for its core's cache and a few small buffers; every step writes into them
   (``out=``, in-place ufuncs). float32 stays float32.
2. **Keys down, queries across.** The tile is Sᵀ = K_blk q_blkᵀ, so per-query
   sums and maxima reduce over axis 0, where NumPy adds whole rows at once.
3. **All cores.** Threads take (batch, query block) tasks from a queue; NumPy
   releases the GIL in matmul and ufuncs. Meanwhile BLAS is held to one thread
   per call (threadpoolctl), or two levels of threads would fight; without
   threadpoolctl, or for small inputs, one thread does everything.
4. **No max pass when none is needed.** The running max only guards exp
   against overflow. By Cauchy–Schwarz |s_ij| ≤ U_i = ‖q_i‖·max_j ‖k_j‖/√d_k,
   known before any score exists. When exp(±U) cannot leave the floating
   range (see :func:`exp_limit`), tiles go straight to exp: softmax ignores a
   shift, so only rounding differs. Otherwise that query block runs the online
   softmax with its running max and rescaling, as the portable code does.

Measured figures and the limits: ``docs/benchmarks.md``.
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

from ..backend import host_numpy as np
from .threads import PARALLEL_PAIRS, TILE_ELEMENTS, TiledJob, cpu_count, default_workers

__all__ = ["blockwise_attention_fast", "exp_limit", "default_plan", "default_tile", "default_workers",
           "cpu_count", "TILE_ELEMENTS", "PARALLEL_PAIRS"]

def exp_limit(dtype: Any, n: int, v_max: float) -> float:
    """Largest score bound U for which exp(s), |s| ≤ U, is safe without a shift.

    Overflow: n·exp(U)·(1 + max|v|) must stay below the dtype's largest value.
    Precision: exp(−U), the smallest possible row maximum, must keep all its
    significant bits above the smallest normal number.

    Examples
    --------
    >>> round(exp_limit("float32", 2048, 4.0), 1)
    69.7
    """
    info = np.finfo(dtype)
    overflow = math.log(float(info.max)) - math.log(n) - math.log1p(v_max)
    underflow = -math.log(float(info.tiny)) - (info.nmant + 1) * math.log(2)
    return min(overflow, underflow) - 1.0  # one unit of margin for rounding in U itself


def default_plan(groups: int, m: int, n: int) -> tuple[int, tuple[int, int]]:
    """(workers, (block_q, block_k)) for ``groups`` batch entries of m × n; ``default_plan(1, 256, 256)[0] == 1``."""
    workers = default_workers() if groups * m * n >= PARALLEL_PAIRS else 1
    return workers, default_tile(groups, m, n, workers)


def default_tile(tasks_per_query_block: int, m: int, n: int, workers: int) -> tuple[int, int]:
    """(block_q, block_k): about TILE_ELEMENTS scores, with enough tasks to keep every worker busy.

    Examples
    --------
    >>> default_tile(8, 2048, 2048, 2), default_tile(1, 512, 65536, 2)
    ((512, 512), (64, 4096))
    """
    block_q = min(m, 512)
    while block_q > 64 and tasks_per_query_block * math.ceil(m / block_q) < 4 * workers:
        block_q //= 2
    return block_q, min(n, max(512, TILE_ELEMENTS // block_q))


class _Job(TiledJob):
    """One forward call: per-batch bounds, the output and log-sum-exp, query-block tasks."""

    def __init__(self, Q: Any, K: Any, V: Any, mask: Any | None, batch: tuple[int, ...],
                 tile: tuple[int, int], causal: bool):
        super().__init__(Q, K, V, mask, batch, tile, causal)
        groups = math.prod(batch)
        key_norm = np.sqrt(np.max(np.vecdot(K, K), axis=-1))  # (...): max_j ‖k_j‖
        v_max = np.maximum(np.max(V, axis=(-2, -1)), -np.min(V, axis=(-2, -1)))  # (...)
        self.key_norm = np.broadcast_to(key_norm, batch)  # (*batch,)
        self.v_max = np.broadcast_to(v_max, batch)  # (*batch,)
        self.out = np.empty(batch + (self.m, self.d_v), dtype=self.dtype)  # (..., m, d_v)
        self.lse = np.empty(batch + (self.m,), dtype=self.dtype)  # (..., m)
        starts = range(0, self.m, self.block_q)
        # One batch entry after another, so consecutive tasks share K and V in the caches;
        # causal: later query blocks see more keys, so they go first and the small ones fill in.
        self.tasks = [(g, i0) for g in range(groups) for i0 in (reversed(starts) if causal else starts)]

    def scratch(self) -> SimpleNamespace:
        """One worker's buffers: a score tile (and a bool tile with masks), q, a partial sum."""
        masked = self.mask is not None or self.causal
        return SimpleNamespace(
            tile=np.empty((self.block_k, self.block_q), dtype=self.dtype),  # (c, b) scores
            hidden=np.empty((self.block_k, self.block_q) if masked else (0, 0), dtype=bool),  # (c, b)
            q=np.empty((self.block_q, self.d_k), dtype=self.dtype),  # (b, d_k)
            part=np.empty((self.block_q, self.d_v), dtype=self.dtype),  # (b, d_v)
            sums=np.empty(self.block_q, dtype=self.dtype))  # (b,)

    def task(self, g: int, i0: int, scratch: SimpleNamespace) -> None:
        """Attention of queries i0..i1−1 of batch entry g, written into self.out and self.lse."""
        at = np.unravel_index(g, self.batch)
        Q, K, V = self.Q[at], self.K[at], self.V[at]  # (m, d_k), (n, d_k), (n, d_v)
        i1 = min(i0 + self.block_q, self.m)
        b = i1 - i0
        q = np.multiply(Q[i0:i1], self.scale, out=scratch.q[:b])  # (b, d_k), scaled once
        part, sums = scratch.part[:b], scratch.sums[:b]  # (b, d_v), (b,)
        bound = math.sqrt(float(np.max(np.vecdot(q, q)))) * float(self.key_norm[at])
        # Beyond the limit exp could overflow or lose precision: keep a running max.
        shifted = bound > exp_limit(self.dtype, self.n, float(self.v_max[at]))
        row_max = np.full(b, -math.inf, dtype=self.dtype)  # (b,)
        denom = np.empty(b, dtype=self.dtype)  # (b,)
        acc = self.out[at][i0:i1]  # (b, d_v), accumulated in place
        first = True  # the first visible tile writes ℓ and A instead of adding to them
        stop = min(self.n, i1 + self.n - self.m) if self.causal else self.n
        for j0 in range(0, stop, self.block_k):
            j1 = min(j0 + self.block_k, self.n)
            hide = self.hidden_tile(at, i0, i1, j0, j1, scratch.hidden)
            if hide is not None and bool(np.all(hide)):
                continue  # nothing visible in this tile
            s = np.matmul(K[j0:j1], q.T, out=scratch.tile[: j1 - j0, :b])  # (c, b): keys down
            if shifted:
                if hide is not None:
                    np.copyto(s, -math.inf, where=hide)
                new_max = np.maximum(row_max, np.max(s, axis=0))  # (b,)
                shift = np.where(np.isfinite(new_max), new_max, 0)  # (b,); 0 while nothing seen
                np.subtract(s, shift, out=s)
                if not first:
                    rescale = np.exp(row_max - shift)  # (b,)
                    np.multiply(denom, rescale, out=denom)
                    np.multiply(acc, rescale[:, None], out=acc)
                row_max = new_max
            np.exp(s, out=s)
            if hide is not None and not shifted:
                np.copyto(s, 0, where=hide)
            if first:
                np.sum(s, axis=0, out=denom)  # (b,)
                np.matmul(s.T, V[j0:j1], out=acc)  # (b, d_v)
                first = False
            else:
                np.add(denom, np.sum(s, axis=0, out=sums), out=denom)  # (b,)
                np.add(acc, np.matmul(s.T, V[j0:j1], out=part), out=acc)  # (b, d_v)
        if first:  # no key visible to any query of the block
            denom[...] = 0
            acc[...] = 0
        seen = denom > 0  # (b,)
        safe = np.where(seen, denom, 1)  # (b,)
        np.divide(acc, safe[:, None], out=acc)  # (b, d_v)
        base = np.where(np.isfinite(row_max), row_max, 0) if shifted else 0
        self.lse[at][i0:i1] = np.where(seen, base + np.log(safe), -math.inf)  # (b,)


def blockwise_attention_fast(Q: Any, K: Any, V: Any, mask: Any | None, batch: tuple[int, ...],
                             tile: tuple[int, int] | None = None, causal: bool = False,
                             workers: int | None = None) -> tuple[Any, Any]:
    """(output (..., m, d_v), lse (..., m)) for NumPy arguments already checked by ``blockwise_attention``.

    ``batch`` is the broadcast batch shape (``Dims.batch``); ``tile`` (block_q,
    block_k) and ``workers`` default to :func:`default_plan`.
    """
    groups, m, n = math.prod(batch), Q.shape[-2], K.shape[-2]
    if workers is None:
        workers, auto_tile = default_plan(groups, m, n)
    else:
        auto_tile = default_tile(groups, m, n, workers)
    job = _Job(Q, K, V, mask, tuple(batch), tile or auto_tile, causal)
    job.run(workers, one_blas_thread_alone=False)
    return job.out, job.lse
