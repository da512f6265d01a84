"""Predicted cost of naive and blockwise attention: FLOPs, bytes moved, peak bytes.

"Attention Mechanisms: Fundamentals", section "Computational Efficiency",
counts 2·m·n·(d_k + d_v) FLOPs for the two products plus about 6·m·n for the
scaling and the softmax, and b·h·n²·4 bytes for the attention matrix. This
module keeps those conventions (:mod:`attention_edu.costs`; a multiply and an
add are 2 FLOPs; an exp, a compare or a divide is 1) and adds what the
chapter leaves out, so that a benchmark can predict before it measures:

* the softmax step by step (max, subtract, exp, sum, divide) and the mask;
* the online softmax's extra work: rescaling M, ℓ and the d_v-wide weighted
  sum once per (row, key block); it also scales q (m·d_k) instead of the
  scores (m·n) and divides the output (m·d_v) instead of the weights (m·n);
* bytes moved through main memory: every naive step streams m × n arrays,
  while a blockwise tile stays in cache and only Q, K, V and the output move
  (K and V once per query block);
* peak bytes: the naive code of this library keeps scores, scaled scores and
  weights (its step table) and needs one more m × n temporary inside softmax,
  so four m × n arrays are alive at its peak (five with a mask); blockwise
  keeps one tile per worker;
* the blockwise backward (:func:`blockwise_backward_cost`): five products
  per tile instead of two, and the three gradients instead of the output.

Inputs are not counted in the peak (they exist before the call).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..costs import matmul_flops
from ..shapes import positive_sizes

__all__ = ["DEFAULT_BLOCK", "ACCELERATOR_BLOCK", "Cost", "naive_cost", "blockwise_cost", "blockwise_backward_cost", "NAIVE_LIVE_SCORE_MATRICES"]

#: Default (block_q, block_k) of the portable path: a 256 × 512 tile of scores.
DEFAULT_BLOCK = (256, 512)
#: Its default for arrays on a GPU, which runs each step of the loop as kernel launches and so wants few,
#: large tiles: at n = 65,536 (d = 64, float32) on an H100, 0.11-0.14 s against DEFAULT_BLOCK's 10.7-17.5 s,
#: with a 64 MiB tile of float32 scores (docs/benchmarks.md, "On a GPU").
ACCELERATOR_BLOCK = (4096, 4096)

#: m × n arrays alive at the peak of ``scaled_dot_product_attention`` (mask=None):
#: scores, scaled scores, the shifted scores inside softmax and their exp.
NAIVE_LIVE_SCORE_MATRICES = 4


@dataclass(frozen=True)
class Cost:
    """Predicted cost of one attention call (all batch entries together).

    Attributes
    ----------
    mechanism : str
    flops : dict of str to int
        FLOPs of each step, in order.
    bytes_moved : int
        Bytes read and written in main memory.
    peak_bytes : int
        Largest memory the call itself holds at once (inputs excluded).
    """

    mechanism: str
    flops: dict[str, int] = field(repr=False)
    bytes_moved: int
    peak_bytes: int

    @property
    def total_flops(self) -> int:
        return sum(self.flops.values())

    @property
    def intensity(self) -> float:
        """FLOPs per byte moved (arithmetic intensity)."""
        return self.total_flops / self.bytes_moved


def naive_cost(m: int, n: int, d_k: int, d_v: int, *, batch: int = 1, itemsize: int = 4,
               mask: bool = False) -> Cost:
    """Cost of softmax(Q Kᵀ/√d_k) V computed step by step with the m × n matrices.

    FLOPs: 2mnd_k (scores) + mn (scale) + 5mn (max, subtract, exp, sum,
    divide) + 2mnd_v (weighted sum): the chapter's 2mn(d_k + d_v) + 6mn. A
    mask costs no FLOPs (m·n selects) but one more m × n pass and array.

    Examples
    --------
    The chapter's m = n = 512, d_k = d_v = 64 ("≈ 67 MFLOPs" for the products):

    >>> cost = naive_cost(512, 512, 64, 64)
    >>> cost.flops["scores"] + cost.flops["weighted_sum"], cost.total_flops
    (67108864, 68681728)
    >>> cost.peak_bytes // 2**20  # MiB: four 1 MiB matrices at once
    4
    """
    positive_sizes("naive_cost", m=m, n=n, d_k=d_k, d_v=d_v, batch=batch, itemsize=itemsize)
    mn = batch * m * n
    flops = {"scores": batch * matmul_flops(m, d_k, n), "scale": mn,
             "max": mn, "subtract": mn, "exp": mn, "sum": mn, "divide": mn,
             "weighted_sum": batch * matmul_flops(m, n, d_v)}
    # Passes over m × n arrays: write scores; read+write to scale; (read + write, and
    # read the bool mask, to mask); read for the max; read+write to subtract; read+write
    # for exp; read for the sum; read+write to divide; read the weights for the product.
    passes = 1 + 2 + 1 + 2 + 2 + 1 + 2 + 1 + (2 if mask else 0)
    small = batch * (m * d_k + n * d_k + n * d_v + m * d_v)  # Q, K, V in; output out
    moved = itemsize * (passes * mn + small) + (mn if mask else 0)
    live = NAIVE_LIVE_SCORE_MATRICES + (1 if mask else 0)
    # Inside softmax `live` matrices exist; after it one is freed and the output appears.
    peak = itemsize * max(live * mn, (live - 1) * mn + batch * m * d_v)
    return Cost("naive", flops, moved, peak)


def _visited(m: int, n: int, block: tuple[int, int], causal: bool) -> tuple[int, int]:
    """(query-key pairs computed, (row, key block) visits) when tiles wholly in the future are skipped."""
    block_q, block_k = min(block[0], m), min(block[1], n)
    pairs = visits = 0
    for i0 in range(0, m, block_q):
        rows = min(block_q, m - i0)
        visible = max(0, min(n, i0 + rows + n - m)) if causal else n  # keys any row here sees
        tiles = math.ceil(visible / block_k)
        pairs += rows * min(n, tiles * block_k)  # whole tiles are computed
        visits += rows * tiles
    return pairs, visits


def blockwise_cost(m: int, n: int, d_k: int, d_v: int, *, batch: int = 1, itemsize: int = 4,
                   block: tuple[int, int] = (512, 512), causal: bool = False, mask: bool = False,
                   workers: int = 1) -> Cost:
    """Cost of blockwise attention with the online softmax (tiles of block = (block_q, block_k)).

    Per computed pair: 2d_k (score) + 4 (block max, subtract, exp, sum) +
    2d_v (weighted sum). Per (row, key block): 5 for the running max, the
    rescale factor exp(M_old − M) and ℓ·factor + sum, plus 2d_v to rescale
    and add the weighted sum. Per row: d_k to scale q, d_v to divide.
    With ``causal``, tiles wholly in the future are skipped (not computed).

    Examples
    --------
    Same products as the naive count; the softmax is cheaper by 2mn, the
    rescaling adds m·⌈n/block_k⌉·(5 + 2d_v) + m(d_k + d_v):

    >>> blockwise_cost(512, 512, 64, 64, block=(512, 512)).total_flops
    68291072
    >>> blockwise_cost(65536, 65536, 64, 64).peak_bytes // 2**20  # MiB
    17
    """
    positive_sizes("blockwise_cost", m=m, n=n, d_k=d_k, d_v=d_v, batch=batch, itemsize=itemsize,
              workers=workers)
    if (not isinstance(block, (tuple, list)) or len(block) != 2
            or any(isinstance(b, bool) or not isinstance(b, int) or b < 1 for b in block)):
        raise ValueError(f"blockwise_cost: block must be a pair of positive ints, got {block!r}")
    pairs, visits = _visited(m, n, block, causal)
    pairs, visits = batch * pairs, batch * visits
    rows = batch * m
    flops = {"scores": 2 * d_k * pairs, "scale_q": rows * d_k,
             "block_max": pairs, "subtract": pairs, "exp": pairs, "sum": pairs,
             "rescale": visits * (5 + 2 * d_v),
             "weighted_sum": 2 * d_v * pairs, "divide": rows * d_v}
    block_q, block_k = min(block[0], m), min(block[1], n)
    query_blocks = math.ceil(m / block_q)
    # Q read once; K and V once per query block; output and log-sum-exp written once.
    moved = itemsize * batch * (m * d_k + query_blocks * n * (d_k + d_v) + m * d_v + m)
    if mask:
        moved += batch * m * n  # every bool of the mask is read once
    # a score tile; with a mask a bool tile of hidden pairs; with causal a second one (the future)
    tile = block_q * block_k * (itemsize + (1 if mask or causal else 0) + (1 if causal else 0))
    scratch = workers * (tile + block_q * (d_k + d_v) * itemsize)
    peak = itemsize * batch * (m * d_v + m + n) + scratch  # output, lse, key norms
    return Cost("blockwise", flops, moved, peak)


def _tiles(m: int, n: int, block: tuple[int, int], causal: bool) -> tuple[int, int, int]:
    """(pairs, Σ rows, Σ keys) over the tiles computed: with ``causal``, tiles wholly in the future are skipped."""
    block_q, block_k = min(block[0], m), min(block[1], n)
    pairs = rows = keys = 0
    for j0 in range(0, n, block_k):
        c = min(block_k, n - j0)
        for i0 in range(0, m, block_q):
            b = min(block_q, m - i0)
            if not causal or j0 <= i0 + b - 1 + n - m:
                pairs, rows, keys = pairs + b * c, rows + b, keys + c
    return pairs, rows, keys


def blockwise_backward_cost(m: int, n: int, d_k: int, d_v: int, *, batch: int = 1, itemsize: int = 4,
                            block: tuple[int, int] = (512, 256), causal: bool = False, mask: bool = False,
                            workers: int = 1) -> Cost:
    """Cost of the blockwise backward pass (FlashAttention-2 order, the NumPy fast path's buffers).

    Per computed pair: 2d_k (rebuild the score) + 2 (subtract lse, exp)
    + 2d_v (dV += Pᵀ dO) + 2d_v (dP = dO Vᵀ) + 2 (subtract D, times P)
    + 2d_k (dK += dSᵀ Q) + 2d_k (dQ += dS K): 6d_k + 4d_v + 4, against the
    forward's 2d_k + 2d_v + 4. Per row: 2d_v for D = rowsum(dO ⊙ O) and d_k
    to scale dQ; per tile each query row is scaled (d_k) and its dQ part
    added (d_k), each key row's dK and dV parts added (d_k + d_v).

    Peak bytes: the three gradients, D and a copy of lse, and per worker
    two score tiles (Pᵀ, dPᵀ), a bool tile with a mask or causal (and a
    second for the causal comparison), q, its dQ part, and dK, dV parts.

    Examples
    --------
    Five matrix products to the forward's two: 2.5 times its product FLOPs.

    >>> back, forward = blockwise_backward_cost(512, 512, 64, 64), blockwise_cost(512, 512, 64, 64)
    >>> products = ("scores", "d_values", "d_weights", "d_keys", "d_queries")
    >>> sum(back.flops[k] for k in products) / (forward.flops["scores"] + forward.flops["weighted_sum"])
    2.5
    >>> blockwise_backward_cost(65536, 65536, 64, 64).peak_bytes // 2**20  # MiB: 48 of them gradients
    49
    """
    positive_sizes("blockwise_backward_cost", m=m, n=n, d_k=d_k, d_v=d_v, batch=batch, itemsize=itemsize,
                   workers=workers)
    if (not isinstance(block, (tuple, list)) or len(block) != 2
            or any(isinstance(b, bool) or not isinstance(b, int) or b < 1 for b in block)):
        raise ValueError(f"blockwise_backward_cost: block must be a pair of positive ints, got {block!r}")
    pairs, rows, keys = (batch * count for count in _tiles(m, n, block, causal))
    flops = {"scores": 2 * d_k * pairs, "subtract_lse": pairs, "exp": pairs,
             "d_values": 2 * d_v * pairs, "d_weights": 2 * d_v * pairs, "subtract_D": pairs,
             "times_weights": pairs, "d_keys": 2 * d_k * pairs, "d_queries": 2 * d_k * pairs,
             "D": batch * m * 2 * d_v, "scale_q": rows * d_k,
             "accumulate": rows * d_k + keys * (d_k + d_v), "scale_d_queries": batch * m * d_k}
    # O and dO once for D; per tile a query block's q, dO, lse, D read and its dQ part read and
    # written; K and V read and dK, dV written once; dQ scaled in place at the end.
    moved = itemsize * (batch * (2 * m * d_v + m + 2 * n * (d_k + d_v) + 2 * m * d_k)
                        + rows * (3 * d_k + d_v + 2))
    if mask:
        moved += pairs  # one bool per computed pair
    block_q, block_k = min(block[0], m), min(block[1], n)
    tile = block_q * block_k * (2 * itemsize + (1 if mask or causal else 0) + (1 if causal else 0))
    scratch = workers * (tile + itemsize * (2 * block_q * d_k + block_k * (d_k + d_v)))
    peak = itemsize * batch * (m * d_k + n * (d_k + d_v) + 2 * m) + scratch  # gradients, D, lse
    return Cost("blockwise backward", flops, moved, peak)
