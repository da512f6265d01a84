"""Checker for the entropy of attention weights (exercise notebook 05), with its misconceptions.

attention_entropy(weights) returns the entropy of each query row, H = −Σ_j p_j log p_j with the natural
log and 0 · log 0 = 0, shape (..., m) ("Section 5.2: Dot-Product Attention", Exercise 5). An epsilon inside
the log is recognised from its evidence (:func:`_log_epsilon`).

>>> from attention_edu.checkers import check_attention_entropy
>>> check_attention_entropy(lambda p: -np.sum(p * np.log(p + 1e-6), axis=-1)).hint_id
'attention_entropy.log-epsilon'
"""

import math

from ...backend import host_numpy as np
from ...masks import causal_mask
from ...softmax import softmax
from . import normal_arrays, register_mistakes, variant
from ..diagnosis.evidence import constant_relation, reads
from ..records import Case, Exercise, Property

__all__ = ["ATTENTION_ENTROPY", "attention_entropy"]


def _plogp(w, log=np.log):
    """p log p for each weight, 0 where p = 0 (its log is taken of 1 instead)."""
    return w * log(np.where(w > 0, w, 1.0))


def attention_entropy(weights):
    """Entropy of each row of attention weights, in nats: −Σ_j p_j log p_j, with 0 log 0 = 0.

    Parameters
    ----------
    weights : ndarray (..., m, n)
        Rows that are probability distributions (or all zeros for a fully masked query).

    Returns
    -------
    ndarray (..., m)

    Examples
    --------
    >>> import numpy as np
    >>> np.round(attention_entropy(np.array([[0.25, 0.25, 0.25, 0.25], [1.0, 0.0, 0.0, 0.0]])), 4)
    array([1.3863, 0.    ])
    """
    return 0.0 - np.sum(_plogp(weights), axis=-1)              # 0.0 - x avoids printing -0.


def _weights(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    return softmax(normal_arrays(seed, shape, scale=1.5)[0])


def _cases() -> list[Case]:
    names = ("weights",)
    small = np.array([[0.25, 0.25, 0.25, 0.25], [0.7, 0.1, 0.1, 0.1]])
    cases = [Case("small", "weights (2, 4)", (small,), names, literal=True,
                  note="Row 0 is uniform over 4 keys, so its entropy is log 4 = 1.3863.")]
    for seed, shape in ((1, (3, 5)), (2, (4, 7)), (3, (6, 2))):
        cases.append(Case("random", f"seed {seed}, weights {shape}", (_weights(seed, shape),), names))
    cases.append(Case("random", "float32, weights (5, 3)", (_weights(4, (5, 3)).astype(np.float32),), names))
    for seed, shape in ((6, (1, 3, 4)), (7, (2, 3, 4, 5))):   # (1, 3, 4): an axis .squeeze() drops; no 1-D: (..., m, n)
        cases.append(Case("batched", f"{len(shape)}-D weights {shape}", (_weights(seed, shape),), names))
    scores = np.where(causal_mask(4), 8 * normal_arrays(8, (4, 4))[0], -np.inf)     # weights down to 1e-7
    cases.append(Case("masks", "causal weights (4, 4) with exact zeros", (softmax(scores),), names))
    full = np.array([[0.0, 0.0, 0.0, 0.0], [0.5, 0.0, 0.5, 0.0], [0.2, 0.3, 0.5, 0.0], [1 - 3.33e-5, 3e-5, 3e-6, 3e-7]])
    cases.append(Case("masks", "row 0 fully masked (all zeros), row 3 down to 3e-7", (full,), names, literal=True,
                      note="0 · log 0 counts as 0, so an all-zero row has entropy 0; a weight of 3e-7 still counts."))
    return cases


def _extremes(student) -> str | None:
    n = 6
    uniform, one_hot = np.full((1, n), 1.0 / n), np.eye(n)[:1]
    (h,) = student(np.concatenate([uniform, one_hot]))
    if np.allclose(h, [math.log(n), 0.0], atol=1e-6):
        return None
    return f"uniform and one-hot rows over 6 keys gave {np.array2string(h, precision=4)}; expected [log 6, 0]"


def _key_order(student) -> str | None:
    w = _weights(61, (3, 7))
    (a,), (b,) = student(w), student(w[:, ::-1])
    return None if np.allclose(a, b, rtol=1e-5, atol=1e-8) else "reversing the keys changed the entropy"


ATTENTION_ENTROPY = Exercise(
    name="attention_entropy", notebook="05_entropy_and_pen_and_paper", number=1,
    summary='Check ``attention_entropy(weights) -> entropy (..., m)`` (natural log, 0 · log 0 = 0).',
    signature="attention_entropy(weights) -> entropy (..., m)",
    reference=attention_entropy, outputs=("entropy",), cases=_cases,
    properties=(
        Property("attention_entropy.property-extremes", "uniform rows give log n, one-hot rows 0",
                 "A row spread evenly over n keys has the largest entropy, log n, and a row on a "
                 "single key has entropy 0.", _extremes),
        Property("attention_entropy.property-key-order", "reordering the keys changes nothing",
                 "Entropy depends on the weights, not on which key holds them: reversing a row must "
                 "not change it.", _key_order),
    ),
)


# -- misconceptions -------------------------------------------------------------------------------

register_mistakes("attention_entropy", (
    ("log2", "small", lambda weights: -np.sum(_plogp(weights, np.log2), axis=-1),
     "Use the natural logarithm, np.log (entropy in nats); np.log2 gives bits."),
    ("missing-minus", "small", lambda weights: np.sum(_plogp(weights), axis=-1),
     "Entropy is minus the sum of p log p; without the minus sign every value comes out negative."),
    ("normalised", "small", lambda weights: -np.sum(_plogp(weights), axis=-1) / math.log(weights.shape[-1]),
     "Return the entropy itself, not divided by the largest a row can have (log n, or log i where a row sees i "
     "keys)."),
    ("zero-gives-nan", "masks", lambda weights: -np.sum(weights * np.log(weights), axis=-1),
     "0 · log 0 must count as 0, but np.log(0) is -inf and 0 · -inf is NaN: take the log only where "
     "p > 0, for example np.log(np.where(p > 0, p, 1))."),
    ("wrong-axis", "returns", lambda weights: -np.sum(_plogp(weights), axis=-2),
     "Sum over the last axis (the keys): one entropy per query row, shape (..., m)."),
    ("single-number", "returns", lambda weights: -np.sum(_plogp(weights)),
     "Return one entropy per query row, shape (..., m), not one number for the whole array (nor their mean)."),
    ("keepdims", "returns", lambda weights: -np.sum(_plogp(weights), axis=-1, keepdims=True),
     "Drop the summed axis: the result has shape (..., m), not (..., m, 1)."),
    ("softmax-again", "small", lambda weights: attention_entropy(softmax(weights)),
     "weights already holds the softmax's output: take the entropy of its rows as they are, without another softmax."),
))
variant("attention_entropy.single-number")(lambda weights: np.mean(attention_entropy(weights)))    # the rows' mean
variant("attention_entropy.single-number")(         # the whole array renormalised, p / p.sum(), then one sum
    lambda weights: -np.sum(_plogp(weights / np.sum(weights))))


# divided by log(i + 1), the largest entropy row i of a causal mask can have (log 1 = 0 left as 1)
variant("attention_entropy.normalised")(lambda weights: -np.sum(_plogp(weights), axis=-1) / np.where(
    np.arange(weights.shape[-2]) > 0, np.log(np.arange(1, weights.shape[-2] + 1)), 1.0))
for start in (1, 2):        # by log(i + 1), row 0's log 1 = 0 kept (inf or NaN there), or counted from 1 (42's 30)
    variant("attention_entropy.normalised")(lambda weights, start=start: -np.sum(_plogp(weights), axis=-1) / np.log(
        np.arange(start, weights.shape[-2] + start)))


@reads("attention_entropy", "attention_entropy.empty-row")
def _empty_row(case, mine, expected):
    """A fully masked (all-zero) row given an entropy above 0, every other row right: an ε added to the weights and
    the row renormalised makes it uniform, log n."""
    p, (h,), (e,) = case.args[0], mine, expected
    empty = ~np.any(p, axis=-1)
    if h.shape != e.shape or not empty.any() or not np.all(np.isfinite(h)) or np.allclose(h[empty], 0.0) or not (
            np.allclose(h[~empty], e[~empty], rtol=1e-4, atol=1e-6)):
        return None
    uniform = f" = log {p.shape[-1]}, a uniform row's" if np.allclose(h[empty], math.log(p.shape[-1])) else ""
    return ("attention_entropy.empty-row",
            f"A fully masked row (all zeros) has entropy 0, as 0 · log 0 = 0; yours gives {h[empty].flat[0]:.4g}"
            f"{uniform}. Leave such a row as it is (no ε added, no renormalising) and take the log only where p > 0, "
            f"np.log(np.where(p > 0, p, 1)).")


@reads("attention_entropy", "attention_entropy.log-epsilon")
def _log_epsilon(case, mine, expected):
    """An epsilon inside the log, −Σ p log(p + ε): find ε from the worst row, then test every row's shortfall (one
    that drops the weights below a cutoff fits the worst row and not the others, so it is not told of an ε)."""
    p, (h,) = case.args[0].astype(np.float64), mine
    if h.size < 2 or h.shape != expected[0].shape or not np.all(np.isfinite(h)):
        return None                                            # one row fits any ε
    if (constant_relation(h, expected[0]) or ("",))[0] == "factor":
        return None                                            # a constant factor tells more (a log's base, a mean)

    def H(eps):                                                                # the entropy with ε inside the log
        return -np.sum(p * np.log(p + eps), axis=-1)
    worst = np.unravel_index(np.argmax(np.abs(h - expected[0])), h.shape)
    low, high = -14.0, 1.0                                     # bisection on log10 ε; H falls as ε grows
    for _ in range(60):
        middle = (low + high) / 2
        low, high = (low, middle) if H(10.0 ** middle)[worst] < h[worst] else (middle, high)
    eps = 10.0 ** low
    if eps < 1e-9 or not np.allclose(H(eps) - expected[0], h - expected[0], rtol=0.1, atol=1e-6):
        return None
    return ("attention_entropy.log-epsilon",
            f"You add about {eps:.2g} inside the log: every entropy comes out a little low, and a one-hot "
            f"row gets −log(1 + ε) < 0. Leave the log exact and count 0 · log 0 as 0, "
            f"np.log(np.where(p > 0, p, 1)).")
