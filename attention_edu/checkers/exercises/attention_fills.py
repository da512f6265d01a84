"""Masking mistakes of scaled dot-product attention that come in several spellings.

The PyTorch habit "True = ignore" with a finite fill, ``np.where(mask, -1e9, s)`` or
``s + mask * -1e9``, makes two mistakes at once (an inverted mask and a finite fill); the
right polarity with a finite fill is one. Each is a mutant here with its other spelling
registered as a variant, so the combination is named as both mistakes. (-1e9 and -1e10
give the same weights: exp(fill − max) is 0 in float64 for either.)

>>> from attention_edu.checkers import check_scaled_dot_product_attention
>>> check_scaled_dot_product_attention(_inverted_finite).hint_id
'attention.inverted-mask-finite-fill'
"""

from __future__ import annotations

from ..diagnosis.mutants import mistake, variant
from . import attention as _attention  # noqa: F401  (registers the mistakes these are variants of)
from .host_attention import attend

__all__: list[str] = []


@variant("attention.finite-fill")
def _finite_added(Q, K, V, mask=None):
    return attend(Q, K, V, mask, fill=-1e9, additive=True)


@mistake("scaled_dot_product_attention", "attention.inverted-mask-finite-fill", "masks",
         "Your mask is inverted (True should mean may attend), and masked scores get a large negative "
         "number rather than -inf: use np.where(mask, scores, -np.inf) and give a fully masked row zeros.")
def _inverted_finite(Q, K, V, mask=None):
    return attend(Q, K, V, None if mask is None else ~mask, fill=-1e9)


@variant("attention.inverted-mask-finite-fill")
def _inverted_added(Q, K, V, mask=None):
    return attend(Q, K, V, None if mask is None else ~mask, fill=-1e9, additive=True)
