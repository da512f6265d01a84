"""The order in which a report tells its mistakes: the first is the hint a student reads first.

Failures come in the order of the probes (the chapter's case, random, batched, large values, masks). Read together,
some are told later than they came, each rule from a hint study of real code (studies 21 to 27):

- hidden cases' failures after the public ones: the seed never changes the mistake named first;
- a rank, and NumPy's words, after the exercise's own mistake of plain input on a plain case (not a mask's, which a
  wrong rank can match by chance), or after a rank whose every public case fails where it runs (axis=1 on 3-D) or
  with the exercise's mistakes;
- a multi-head head size taken as d_model / H, the divisibility check of d_model, and a mask without a head axis after
  any other public mistake beyond a rank, but for a fully masked row's evidence alone.

Tried and withdrawn (hint studies 36 to 39): what a mask means before a crash on a rank where every case crashed, and
the arity after a mistake whose own hint says it. The readers of studies 36 and 37 put the mask first (7 files), those
of study 39 the rank and the arity (6 files), and study 32's the arity: untuned, the rules named fewer, not more.
"""

from collections import Counter

from .evidence import rank_of
from .mutants import mistakes_for

__all__ = ["order", "BY_RANK"]

#: diagnoses that a clean split of the input ranks replaces (they only repeat NumPy's error)
BY_RANK = {None, "error.other", "error.fixed-ndim", "error.matmul-shapes", "error.broadcast", "harness.shape",
           "shape.extra-axis", "shape.broadcast-axis", "shape.missing-axis", "shape.square-axis", "error.assertion"}
_PLAIN = ("runs", "returns", "small", "random", "batched")     # the probes of plain input: no mask, no extreme values


def order(exercise, results: list, runs_by_rank: dict[int, list[bool]]) -> list:
    """``results``, pairs (hidden, CheckResult) in the order of the probes, as the report tells them."""
    own = {"error.heads-divide": "", **{m.id: m.probe for m in mistakes_for(exercise.name)}}     # id -> its probe
    wrong = any(not h and own.get(r.hint_id) in _PLAIN and r.case.probe in _PLAIN for h, r in results) or any(n == sum(
        not h and rank_of(r.case) == k and (all(runs_by_rank.get(k, [False])) or r.hint_id in own) for h, r in results)
        for k, n in Counter(rank_of(c) for c in exercise.cases()).items() if k is not None)
    told = {r.hint_id for h, r in results if not h} - BY_RANK - {"value.mismatch"}      # public, beyond a rank
    late = {t for t in told if t.endswith(("heads-divide", "head-size-from-d_model", "mask-without-head-axis"))}
    row = {r.hint_id for h, r in results if not h and "fully masked" in r.case.title and "value." in r.hint_id} - {
        r.hint_id for h, r in results if not h and "fully masked" not in r.case.title}   # a masked row's evidence alone
    lead = {t for t in told - late - row if not t.endswith(("nan", ".finite-fill"))} if late else set()

    def key(pair: tuple) -> tuple:
        hidden, r = pair
        return (hidden, bool(wrong and told) and r.hint_id not in told, r.hint_id not in lead,
                r.hint_id == "error.heads-divide" and len(late) > 1)
    return [r for _, r in sorted(results, key=key)]
