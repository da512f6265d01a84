"""Checkers for the exercises: they say what is wrong and why, not just "mismatch".

Each ``check_<exercise>(fn)`` takes the student's function explicitly, runs
it in a child process (a hard time and memory limit; see :mod:`.judge.harness`) on
copies of its inputs through every probe of a fixed sequence (most specific
first) and returns a :class:`CheckResult`: a pass, or the first failure with every
distinct mistake found (``result.mistakes``). A failing output is compared with a
registry of known misconceptions, each a deliberately wrong implementation (a
*mutant*); the one it matches names the mistake and gives a two-sentence hint.
Failing that, its evidence may name it (:mod:`.diagnosis.evidence`). :func:`check_answer` checks the
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

from .answers import ANSWERS, check_answer
from .diagnosis.hints import HINTS
from .diagnosis.mutants import PROBES, Mistake, all_mistakes, mistakes_for
from .exercises.entropy import attention_entropy
from .records import Exercise
from .registry import CHECKERS, EXERCISES, exercise_name, hint_ids
from .result import STRICT_ENV, CheckFailed, CheckResult

__all__ = [
    "CheckResult", "CheckFailed", "STRICT_ENV", "Exercise", "Mistake", "EXERCISES", "CHECKERS",
    "ANSWERS", "HINTS", "PROBES", "all_mistakes", "mistakes_for", "hint_ids", "attention_entropy",
    "check_softmax", "check_causal_mask", "check_padding_mask", "check_scaled_dot_product_attention",
    "check_bahdanau_scores", "check_luong_general_scores", "check_split_heads", "check_merge_heads",
    "check_multi_head_attention", "check_attention_entropy", "check_softmax_jacobian", "check_backward_dv",
    "check_backward_dw", "check_backward_ds", "check_backward_dq", "check_backward_dk", "check_attention_backward",
    "check_answer",
]

# The public checkers, one per exercise of the registry.
check_softmax = CHECKERS["softmax"]
check_causal_mask = CHECKERS["causal_mask"]
check_padding_mask = CHECKERS["padding_mask"]
check_scaled_dot_product_attention = CHECKERS["scaled_dot_product_attention"]
check_bahdanau_scores = CHECKERS["bahdanau_scores"]
check_luong_general_scores = CHECKERS["luong_general_scores"]
check_split_heads = CHECKERS["split_heads"]
check_merge_heads = CHECKERS["merge_heads"]
check_multi_head_attention = CHECKERS["multi_head_attention"]
check_attention_entropy = CHECKERS["attention_entropy"]
check_softmax_jacobian = CHECKERS["softmax_jacobian"]
check_backward_dv = CHECKERS["backward_dv"]
check_backward_dw = CHECKERS["backward_dw"]
check_backward_ds = CHECKERS["backward_ds"]
check_backward_dq = CHECKERS["backward_dq"]
check_backward_dk = CHECKERS["backward_dk"]
check_attention_backward = CHECKERS["attention_backward"]
