"""Threads for the blockwise fast paths: how many, BLAS held to one per call, and the shared job.

NumPy releases the GIL inside matrix products and ufuncs, so worker threads
that each own their buffers run in parallel; BLAS's own threads must then be
held to one per call (threadpoolctl), or the two levels of threading
serialize. :class:`TiledJob` holds what the forward (:mod:`.fast`) and the
backward (:mod:`.fast_backward`) jobs share.
"""

from __future__ import annotations

import math
import os
import queue
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from functools import lru_cache
from types import SimpleNamespace
from typing import Any

from ..backend import host_numpy as np

try:  # optional: without it the fast paths run on one thread
    from threadpoolctl import ThreadpoolController
except ImportError:  # pragma: no cover - depends on the environment
    ThreadpoolController = None

__all__ = ["TiledJob", "cpu_count", "default_workers", "TILE_ELEMENTS", "PARALLEL_PAIRS"]

#: Scores per tile: 2^18 float32 values = 1 MiB, well inside a core's L2 cache.
TILE_ELEMENTS = 2 ** 18


def cpu_count() -> int:
    """Cores this process may run on."""
    affinity = getattr(os, "sched_getaffinity", None)  # Linux only
    return len(affinity(0)) if affinity else (os.cpu_count() or 1)


@lru_cache(maxsize=1)
def _blas_controller() -> Any:
    return None if ThreadpoolController is None else ThreadpoolController()


def default_workers() -> int:
    """Threads the fast path uses by default: every core, or one without threadpoolctl."""
    return cpu_count() if _blas_controller() is not None else 1


#: Fewer query-key pairs than this run on one thread: with small tiles, threads spend
#: more time queueing for the GIL between NumPy calls than computing in parallel.
PARALLEL_PAIRS = 2 ** 21


class TiledJob:
    """What the forward and backward jobs share: broadcast views, a tile's hidden pairs, the worker loop.

    A subclass sets ``self.tasks`` (pairs (batch entry g, start)) and defines
    ``task(g, start, scratch)`` and ``scratch()``.
    """

    def __init__(self, Q: Any, K: Any, V: Any, mask: Any | None, batch: tuple[int, ...],
                 tile: tuple[int, int], causal: bool):
        (self.m, self.d_k), (self.n, self.d_v) = Q.shape[-2:], V.shape[-2:]
        self.batch, self.causal, self.dtype = batch, causal, Q.dtype
        self.Q = np.broadcast_to(Q, batch + (self.m, self.d_k))  # views: nothing is copied
        self.K = np.broadcast_to(K, batch + (self.n, self.d_k))
        self.V = np.broadcast_to(V, batch + (self.n, self.d_v))
        self.mask = None if mask is None else np.broadcast_to(mask, batch + (self.m, self.n))
        self.block_q, self.block_k = tile
        self.scale = 1.0 / math.sqrt(self.d_k)

    def drain(self, tasks: queue.SimpleQueue, scratch: SimpleNamespace) -> None:
        """Worker loop: tasks from the queue until it is empty."""
        while True:
            try:
                g, start = tasks.get_nowait()
            except queue.Empty:
                return
            self.task(g, start, scratch)

    def hidden_tile(self, at: tuple, i0: int, i1: int, j0: int, j1: int, buffer: Any) -> Any | None:
        """Hidden pairs of the (j1 − j0, i1 − i0) tile (keys down), or None if all are visible."""
        needs_causal = self.causal and j1 - 1 > i0 + self.n - self.m
        if self.mask is None and not needs_causal:
            return None
        out = buffer[: j1 - j0, : i1 - i0]  # (c, b)
        if self.mask is not None:
            np.logical_not(self.mask[at][i0:i1, j0:j1].T, out=out)  # (c, b)
        else:
            out[...] = False
        if needs_causal:  # key j is in the future of query i iff j > i + n − m
            future = np.greater.outer(np.arange(j0, j1), np.arange(i0, i1) + (self.n - self.m))
            np.logical_or(out, future, out=out)  # (c, b)
        return out

    def run(self, workers: int, one_blas_thread_alone: bool) -> None:
        """Every task, on ``workers`` threads with BLAS held to one thread per call.

        With a single worker BLAS keeps its own threads unless ``one_blas_thread_alone``.
        """
        tasks: queue.SimpleQueue = queue.SimpleQueue()
        for task in self.tasks:
            tasks.put(task)
        # Buffers made here, before any thread starts, so the peak memory is the same every run.
        scratches = [self.scratch() for _ in range(min(workers, len(self.tasks)))]
        controller = _blas_controller()
        limit = controller is not None and (len(scratches) > 1 or one_blas_thread_alone)
        with controller.limit(limits=1, user_api="blas") if limit else nullcontext():
            if len(scratches) == 1:
                self.drain(tasks, scratches[0])
                return
            with ThreadPoolExecutor(len(scratches)) as pool:
                for done in [pool.submit(self.drain, tasks, scratch) for scratch in scratches]:
                    done.result()
