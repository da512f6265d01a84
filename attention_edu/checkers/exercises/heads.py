"""Checkers for split_heads and merge_heads (exercise notebook 04, exercises 1 and 2), with their mistakes.

Head h owns the contiguous columns h*d:(h+1)*d of X: split_heads takes (..., L, H*d) to (..., H, L, d) and merge_heads
takes it back ("Neural attention mechanism vectorization", section 3). The misconceptions' cuts of X serve the
multi-head attention mistakes of :mod:`.multi_head` too.
"""

from functools import partial

from ...backend import host_numpy as np
from ...multi_head import merge_heads, split_heads
from . import normal_arrays, register_mistakes
from ..records import Case, Exercise, Property

__all__ = ["SPLIT_HEADS", "MERGE_HEADS"]


def _split_cases() -> list[Case]:
    names = ("X", "num_heads")
    small = Case("small", "X (4, 6), 3 heads", (np.arange(24.0).reshape(4, 6), 3), names, literal=True,
                 note="L = 4 tokens, H = 3 heads of d = 2 columns each.")
    random = [Case("random", f"seed {seed}, L={L} H={H} d={d}", normal_arrays(seed, (L, H * d)) + (H,), names)
              for seed, (L, H, d) in ((1, (3, 2, 4)), (2, (5, 4, 3)), (3, (2, 3, 5)))]
    float32 = normal_arrays(4, (3, 8))[0].astype(np.float32)
    return [small, *random, Case("random", "float32, L=3 H=4 d=2", (float32, 4), names),
            Case("batched", "3-D, B=2 L=3 H=4 d=5", normal_arrays(5, (2, 3, 20)) + (4,), names),   # heads folded
            Case("batched", "4-D, B=1 C=7 L=5 H=4 d=6", normal_arrays(6, (1, 7, 5, 24)) + (4,), names)]  # into the
    # batch, (B·H, L, d), are told by the 3-D case, a .squeeze() that drops B = 1 by the 4-D one


def _merge_cases() -> list[Case]:
    small = split_heads(np.arange(24.0).reshape(4, 6), 3)
    random = [Case("random", f"seed {seed}, H={H} L={L} d={d}", normal_arrays(seed, (H, L, d)), ("X",))
              for seed, (H, L, d) in ((1, (2, 3, 4)), (2, (4, 5, 3)), (3, (3, 2, 5)))]
    float32 = normal_arrays(4, (4, 3, 2))[0].astype(np.float32)
    return [Case("small", "X (3, 4, 2): 3 heads, 4 tokens, d = 2", (small,), ("X",), literal=True), *random,
            Case("random", "float32, H=4 L=3 d=2", (float32,), ("X",)),
            Case("batched", "4-D, B=1 H=4 L=3 d=5", normal_arrays(5, (1, 4, 3, 5)), ("X",)),
            Case("batched", "5-D, B=2 C=3 H=4 L=5 d=6", normal_arrays(6, (2, 3, 4, 5, 6)), ("X",))]


def _split_round_trip(student) -> str | None:
    (X,) = normal_arrays(41, (2, 5, 12))
    (heads,) = student(X, 3)
    return None if np.array_equal(merge_heads(heads), X) else "merge_heads(your split_heads(X, 3)) is not X"


def _merge_round_trip(student) -> str | None:
    (X,) = normal_arrays(42, (2, 3, 5, 4))
    (merged,) = student(X)
    round_trip = merged.shape == (2, 5, 12) and np.array_equal(split_heads(merged, 3), X)
    return None if round_trip else "split_heads(your merge_heads(X), 3) is not X"


SPLIT_HEADS = Exercise(
    name="split_heads", notebook="04_multi_head", number=1, outputs=("heads",), cases=_split_cases,
    summary='Check ``split_heads(X, num_heads)``: (..., L, H*d) → (..., H, L, d).',
    signature="split_heads(X, num_heads) -> heads (..., H, L, d)", reference=split_heads,
    properties=(Property("split_heads.property-round-trip", "merge_heads(split_heads(X)) == X",
                         "Splitting must lose nothing (no cast to another dtype either) and keep every value in "
                         "its place: merging the heads back has to give X exactly.", _split_round_trip),),
)

MERGE_HEADS = Exercise(
    name="merge_heads", notebook="04_multi_head", number=2, outputs=("merged",), cases=_merge_cases,
    summary='Check ``merge_heads(X)``: (..., H, L, d) → (..., L, H*d).',
    signature="merge_heads(X) -> merged (..., L, H*d)", reference=merge_heads,
    properties=(Property("merge_heads.property-round-trip", "split_heads(merge_heads(X)) == X",
                         "Merging must undo split_heads exactly (no cast to another dtype either): splitting "
                         "your result again has to give X back.", _merge_round_trip),),
)


# -- misconceptions -------------------------------------------------------------------------------
def cut_heads(X, num_heads, order):
    """X (..., L, H*d) reshaped to the axes named by ``order``: "LHd" gives (..., L, H, d)."""
    size = {"L": X.shape[-2], "H": num_heads, "d": X.shape[-1] // num_heads}
    return np.reshape(X, X.shape[:-2] + tuple(size[axis] for axis in order))


def split_strided(X, num_heads):
    return np.moveaxis(cut_heads(X, num_heads, "LdH"), -1, -3)


def merge_unswapped(X, strided=False):      # strided: each head's columns spread H apart, undoing split_strided
    return np.reshape(np.moveaxis(X, -3, -1) if strided else X, X.shape[:-3] + (X.shape[-2], -1))


def _split_fixed_rank(X, num_heads):
    B, L, D = X.shape
    return np.swapaxes(np.reshape(X, (B, L, num_heads, D // num_heads)), 1, 2)


def _split_into_batch(X, num_heads):            # d2l's transpose_qkv, diffusers' reshape_heads_to_batch_dim
    heads = split_heads(X, num_heads)           # (..., B, H, L, d) -> (..., B·H, L, d); 2-D input has no batch
    return np.reshape(heads, heads.shape[:-4] + (-1,) + heads.shape[-2:]) if heads.ndim > 3 else heads


def _merge_fixed_rank(X):
    B, H, L, d = X.shape
    return np.reshape(np.swapaxes(X, 1, 2), (B, L, H * d))


register_mistakes("split_heads", (
    ("no-swap", "returns", lambda X, num_heads: cut_heads(X, num_heads, "LHd"),
     "After reshaping to (..., L, H, d), swap the L and H axes to get (..., H, L, d)."),
    ("reshape-only", "small", lambda X, num_heads: cut_heads(X, num_heads, "HLd"),
     "Reshaping straight to (..., H, L, d) cuts the data in the wrong order: reshape to (..., L, H, d) "
     "first, then swap axes -3 and -2."),
    ("reshape-heads-first", "returns", lambda X, num_heads: np.swapaxes(cut_heads(X, num_heads, "HLd"), -3, -2),
     "Reshaping straight to (..., H, L, d) cuts the data in the wrong order, and a swap after it gives (..., L, H, d): "
     "reshape to (..., L, H, d) first, then swap axes -3 and -2."),
    ("strided-heads", "small", split_strided,
     "Head h owns the contiguous columns h*d:(h+1)*d; yours takes every H-th column, so reshape to "
     "(..., L, H, d), not (..., L, d, H)."),
    ("reverse-all-axes", "returns", lambda X, num_heads: np.transpose(cut_heads(X, num_heads, "LHd")),
     "A transpose without axes reverses all of them: name the two axes to exchange, np.swapaxes(x, -3, -2)."),
    ("heads-as-size", "returns", lambda X, num_heads: np.swapaxes(cut_heads(X, num_heads, "LdH"), -3, -2),
     "num_heads is the number of heads H; each head gets d = X.shape[-1] // num_heads columns."),
    ("fixed-rank", "runs", _split_fixed_rank,
     "Allow any number of leading batch axes: take lead = X.shape[:-2] and reshape to lead + (L, num_heads, d)."),
    ("heads-into-batch", "returns", _split_into_batch, "Keep the heads as an axis of their own, (..., H, L, d): "
     "folding them into the batch axis, (B·H, L, d), is a layout some libraries use inside, not this exercise's."),
))

register_mistakes("merge_heads", (
    ("no-swap", "small", merge_unswapped,
     "Swap the H and L axes back first, (..., L, H, d), then reshape; reshaping (..., H, L, d) directly "
     "mixes up the tokens."),
    ("strided", "small", partial(merge_unswapped, strided=True),
     "Each head's d columns must stay together: move the axes to (..., L, H, d), not (..., L, d, H), then reshape."),
    ("reverse-all-axes", "small", lambda X: np.reshape(np.transpose(X), X.shape[:-3] + (X.shape[-2], -1)),
     "A transpose without axes reverses all of them: swap only H and L, np.swapaxes(X, -3, -2), then reshape."),
    ("sums-heads", "returns", lambda X: np.sum(X, axis=-3),
     "Merging concatenates the heads side by side, (..., L, H*d); it does not add them."),
    ("fixed-rank", "runs", _merge_fixed_rank,
     "Allow any number of leading batch axes: take lead = X.shape[:-3] instead of unpacking a fixed number of sizes."),
))

