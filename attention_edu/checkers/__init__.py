"""Checkers for the exercises: they say what is wrong and why, not just "mismatch".

Each ``check_<exercise>(fn)`` takes the student's function explicitly, runs
it on copies of its inputs through a fixed sequence of probes (most specific
first) and returns a :class:`CheckResult` for the first failure, or a pass.
A failing output is compared with a registry of known misconceptions, each a
deliberately wrong implementation (a *mutant*); the one it matches names
the mistake and gives a two-sentence hint. :func:`check_answer` checks the
chapters' pen-and-paper exercises against the worked-example catalogue.

Strict mode (``strict=True`` or ``ATTENTION_EDU_STRICT=1``) raises
:class:`CheckFailed` on anything but a pass, for grading in CI.

>>> import attention_edu as ae
>>> ae.checkers.check_softmax(ae.softmax).passed
True
>>> def softmax(x):
...     raise NotImplementedError
>>> ae.checkers.check_softmax(softmax).status
'not attempted'
"""

from __future__ import annotations

from typing import Callable

from .answers import ANSWERS, GENERIC_HINT_IDS, check_answer
from .bahdanau_checks import BAHDANAU_SCORES, check_bahdanau_scores
from .attention_checks import SCALED_DOT_PRODUCT_ATTENTION, check_scaled_dot_product_attention
from .entropy_checks import ATTENTION_ENTROPY, attention_entropy, check_attention_entropy
from .head_checks import MERGE_HEADS, SPLIT_HEADS, check_merge_heads, check_split_heads
from .hints import HINTS
from .luong_checks import LUONG_GENERAL_SCORES, check_luong_general_scores
from .mask_checks import CAUSAL_MASK, PADDING_MASK, check_causal_mask, check_padding_mask
from .multi_head_checks import MULTI_HEAD_ATTENTION, check_multi_head_attention
from .mutants import PROBES, Mistake, all_mistakes, mistakes_for
from .probes import Exercise
from .result import STRICT_ENV, CheckFailed, CheckResult
from .softmax_checks import SOFTMAX, check_softmax

__all__ = [
    "CheckResult", "CheckFailed", "STRICT_ENV", "Exercise", "Mistake", "EXERCISES", "CHECKERS",
    "ANSWERS", "HINTS", "PROBES", "all_mistakes", "mistakes_for", "hint_ids", "attention_entropy",
    "check_softmax", "check_causal_mask", "check_padding_mask", "check_scaled_dot_product_attention",
    "check_bahdanau_scores", "check_luong_general_scores", "check_split_heads", "check_merge_heads",
    "check_multi_head_attention", "check_attention_entropy", "check_answer",
]

#: Every coding exercise by name, in the order the exercise notebooks use them.
EXERCISES: dict[str, Exercise] = {ex.name: ex for ex in (
    SOFTMAX, CAUSAL_MASK, PADDING_MASK, SCALED_DOT_PRODUCT_ATTENTION, BAHDANAU_SCORES,
    LUONG_GENERAL_SCORES, SPLIT_HEADS, MERGE_HEADS, MULTI_HEAD_ATTENTION, ATTENTION_ENTROPY)}

#: The public checker of each exercise.
CHECKERS: dict[str, Callable[..., CheckResult]] = {
    "softmax": check_softmax,
    "causal_mask": check_causal_mask,
    "padding_mask": check_padding_mask,
    "scaled_dot_product_attention": check_scaled_dot_product_attention,
    "bahdanau_scores": check_bahdanau_scores,
    "luong_general_scores": check_luong_general_scores,
    "split_heads": check_split_heads,
    "merge_heads": check_merge_heads,
    "multi_head_attention": check_multi_head_attention,
    "attention_entropy": check_attention_entropy,
}


def hint_ids() -> list[str]:
    """Every hint id a checker can report: mistakes, properties, errors and harness findings.

    Examples
    --------
    >>> "softmax.wrong-axis" in hint_ids() and "harness.timeout" in hint_ids()
    True
    """
    ids = [m.id for m in all_mistakes()]
    ids += [p.id for ex in EXERCISES.values() for p in ex.properties]
    ids += list(HINTS) + ["harness.not-callable"]
    ids += [hint_id for spec in ANSWERS.values() for hint_id in spec.hint_ids()] + list(GENERIC_HINT_IDS)
    return sorted(set(ids))
