"""Checkers for split_heads and merge_heads, with their misconceptions.

split_heads(X, num_heads): (..., L, H*d) → (..., H, L, d), head h taking the
contiguous columns h*d:(h+1)*d; merge_heads is its inverse ("Neural
attention mechanism vectorization", section 3: per-head shapes (B, H, L, d_k)).

Examples
--------
>>> from attention_edu.checkers import check_split_heads, check_merge_heads
>>> import attention_edu as ae
>>> check_split_heads(ae.split_heads).passed
True
>>> import attention_edu as ae
>>> check_merge_heads(ae.merge_heads).passed
True
"""

from __future__ import annotations

from ...backend import host_numpy as np
from ...multi_head import merge_heads as reference_merge
from ...multi_head import split_heads as reference_split
from ..diagnosis.mutants import mistake
from ..records import Case, Exercise, Property

__all__ = ["SPLIT_HEADS", "MERGE_HEADS"]


def _normal(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


def _split_cases() -> list[Case]:
    names = ("X", "num_heads")
    small = np.arange(24.0).reshape(4, 6)
    cases = [Case("small", "X (4, 6), 3 heads", (small, 3), names, literal=True,
                  note="L = 4 tokens, H = 3 heads of d = 2 columns each.")]
    for seed, (L, H, d) in ((1, (3, 2, 4)), (2, (5, 4, 3)), (3, (2, 3, 5))):
        cases.append(Case("random", f"seed {seed}, L={L} H={H} d={d}", (_normal(seed, (L, H * d)), H), names))
    cases.append(Case("random", "float32, L=3 H=4 d=2", (_normal(4, (3, 8)).astype(np.float32), 4), names))
    cases.append(Case("batched", "3-D, B=2 L=3 H=4 d=5", (_normal(5, (2, 3, 20)), 4), names))
    cases.append(Case("batched", "4-D, B=2 C=3 L=5 H=4 d=6", (_normal(6, (2, 3, 5, 24)), 4), names))
    return cases


def _split_round_trip(student) -> str | None:
    X = _normal(41, (2, 5, 12))
    (heads,) = student(X, 3)
    if np.array_equal(reference_merge(heads), X):
        return None
    return "merge_heads(your split_heads(X, 3)) is not X"


def _merge_cases() -> list[Case]:
    small = reference_split(np.arange(24.0).reshape(4, 6), 3)
    cases = [Case("small", "X (3, 4, 2): 3 heads, 4 tokens, d = 2", (small,), ("X",), literal=True)]
    for seed, (H, L, d) in ((1, (2, 3, 4)), (2, (4, 5, 3)), (3, (3, 2, 5))):
        cases.append(Case("random", f"seed {seed}, H={H} L={L} d={d}", (_normal(seed, (H, L, d)),), ("X",)))
    cases.append(Case("random", "float32, H=4 L=3 d=2", (_normal(4, (4, 3, 2)).astype(np.float32),), ("X",)))
    cases.append(Case("batched", "4-D, B=2 H=4 L=3 d=5", (_normal(5, (2, 4, 3, 5)),), ("X",)))
    cases.append(Case("batched", "5-D, B=2 C=3 H=4 L=5 d=6", (_normal(6, (2, 3, 4, 5, 6)),), ("X",)))
    return cases


def _merge_round_trip(student) -> str | None:
    X = _normal(42, (2, 3, 5, 4))
    (merged,) = student(X)
    if merged.shape == (2, 5, 12) and np.array_equal(reference_split(merged, 3), X):
        return None
    return "split_heads(your merge_heads(X), 3) is not X"


SPLIT_HEADS = Exercise(
    name="split_heads", notebook="04_multi_head", number=1,
    summary='Check ``split_heads(X, num_heads)``: (..., L, H*d) → (..., H, L, d).',
    signature="split_heads(X, num_heads) -> heads (..., H, L, d)",
    reference=lambda X, num_heads: reference_split(X, num_heads),
    outputs=("heads",),
    cases=_split_cases,
    properties=(Property("split_heads.property-round-trip", "merge_heads(split_heads(X)) == X",
                         "Splitting must lose nothing and keep every value in its place: merging the "
                         "heads back has to give X exactly.", _split_round_trip),),
)

MERGE_HEADS = Exercise(
    name="merge_heads", notebook="04_multi_head", number=2,
    summary='Check ``merge_heads(X)``: (..., H, L, d) → (..., L, H*d).',
    signature="merge_heads(X) -> merged (..., L, H*d)",
    reference=lambda X: reference_merge(X),
    outputs=("merged",),
    cases=_merge_cases,
    properties=(Property("merge_heads.property-round-trip", "split_heads(merge_heads(X)) == X",
                         "Merging must undo split_heads exactly: splitting your result again has to "
                         "give X back.", _merge_round_trip),),
)


# -- misconceptions: split ---------------------------------------------------------------------

def _s(id: str, probe: str, hint: str):
    return mistake("split_heads", "split_heads." + id, probe, hint)


def _lead(X, num_heads):
    return X.shape[:-2], X.shape[-2], X.shape[-1] // num_heads


@_s("no-swap", "returns", "After reshaping to (..., L, H, d), swap the L and H axes to get "
    "(..., H, L, d).")
def _no_swap(X, num_heads):
    lead, L, d = _lead(X, num_heads)
    return np.reshape(X, lead + (L, num_heads, d))


@_s("reshape-only", "small", "Reshaping straight to (..., H, L, d) cuts the data in the wrong order: "
    "reshape to (..., L, H, d) first, then swap axes -3 and -2.")
def _reshape_only(X, num_heads):
    lead, L, d = _lead(X, num_heads)
    return np.reshape(X, lead + (num_heads, L, d))


@_s("strided-heads", "small", "Head h owns the contiguous columns h*d:(h+1)*d; yours takes every H-th "
    "column, so reshape to (..., L, H, d), not (..., L, d, H).")
def _strided(X, num_heads):
    lead, L, d = _lead(X, num_heads)
    return np.moveaxis(np.reshape(X, lead + (L, d, num_heads)), -1, -3)


@_s("reverse-all-axes", "returns", "A transpose without axes reverses all of them: name the two axes to "
    "exchange, np.swapaxes(x, -3, -2).")
def _reverse(X, num_heads):
    lead, L, d = _lead(X, num_heads)
    return np.transpose(np.reshape(X, lead + (L, num_heads, d)))


@_s("heads-as-size", "returns", "num_heads is the number of heads H; each head gets "
    "d = X.shape[-1] // num_heads columns.")
def _size_as_count(X, num_heads):
    lead, L, d = _lead(X, num_heads)
    return np.swapaxes(np.reshape(X, lead + (L, d, num_heads)), -3, -2)


@_s("fixed-rank", "runs", "Allow any number of leading batch axes: take lead = X.shape[:-2] and "
    "reshape to lead + (L, num_heads, d).")
def _fixed_rank(X, num_heads):
    B, L, D = X.shape
    return np.swapaxes(np.reshape(X, (B, L, num_heads, D // num_heads)), 1, 2)


# -- misconceptions: merge ---------------------------------------------------------------------

def _g(id: str, probe: str, hint: str):
    return mistake("merge_heads", "merge_heads." + id, probe, hint)


def _sizes(X):
    return X.shape[:-3], X.shape[-3], X.shape[-2], X.shape[-1]


@_g("no-swap", "small", "Swap the H and L axes back first, (..., L, H, d), then reshape; "
    "reshaping (..., H, L, d) directly mixes up the tokens.")
def _m_no_swap(X):
    lead, H, L, d = _sizes(X)
    return np.reshape(X, lead + (L, H * d))


@_g("strided", "small", "Each head's d columns must stay together: move the axes to (..., L, H, d), "
    "not (..., L, d, H), before reshaping.")
def _m_strided(X):
    lead, H, L, d = _sizes(X)
    return np.reshape(np.moveaxis(X, -3, -1), lead + (L, H * d))


@_g("reverse-all-axes", "small", "A transpose without axes reverses all of them: exchange only the H "
    "and L axes, np.swapaxes(X, -3, -2), then reshape.")
def _m_reverse(X):
    lead, H, L, d = _sizes(X)
    return np.reshape(np.transpose(X), lead + (L, H * d))


@_g("sums-heads", "returns", "Merging concatenates the heads side by side, (..., L, H*d); "
    "it does not add them.")
def _m_sum(X):
    return np.sum(X, axis=-3)


@_g("fixed-rank", "runs", "Allow any number of leading batch axes: take lead = X.shape[:-3] instead "
    "of unpacking a fixed number of sizes.")
def _m_fixed(X):
    B, H, L, d = X.shape
    return np.reshape(np.swapaxes(X, 1, 2), (B, L, H * d))
