"""How serious a mismatch is: a rounding slip or an erratum, and why.

A printed value that does not match its computation (:mod:`.printed`) is a
**rounding slip** when every element that misses is off only by rounding:

* "rounded intermediates": the same quantity computed from the chapter's own
  already-rounded intermediate numbers gives the printed value
  (2.23 + 8.17 + 1.65 = 12.05 where the exact sum is 12.04);
* "truncation": the computed value cut at the printed precision gives it
  (2.56 MB printed as 2.5 MB);
* "last digit": it is within one unit of the last printed digit
  (exp(0.665) = 1.94449 printed as 1.945).

Otherwise it is an **erratum**: wrong beyond rounding.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..backend import host_numpy as np
from .printed import Printed, mismatches, parse_printed, rounds_to, truncates_to

__all__ = ["ROUNDING_CAUSES", "Grade", "classify"]

#: Why a printed value that does not match is still only a rounding slip, most telling first.
ROUNDING_CAUSES = ("rounded intermediates", "truncation", "last digit")


@dataclass(frozen=True)
class Grade:
    """How a printed value compares: severity "match", "rounding" or "erratum".

    ``causes`` names, for a rounding slip, each way (of :data:`ROUNDING_CAUSES`)
    that explains its missing elements (for a match, "truncation" when an
    approximate value matched only by truncation); ``misses`` says where it misses.
    """

    severity: str
    causes: tuple[str, ...] = ()
    misses: tuple[str, ...] = ()


def classify(printed: Printed, computed: Any, from_rounded: Any = None) -> Grade:
    """Grade ``computed`` against a printed value: match, rounding slip, or erratum.

    Each element that does not match is explained, if it can be, by
    "rounded intermediates" (``from_rounded``, the same quantity computed from
    the chapter's already-rounded intermediate numbers, matches the printed
    value), by "truncation" (the computed value cut at the printed precision
    gives it) or by the "last digit" (within one unit of the last printed
    digit). Any element that none explains makes the value an erratum.

    Examples
    --------
    >>> classify(parse_printed("1.945"), 1.94449)
    Grade(severity='rounding', causes=('last digit',), misses=('printed 1.945, computed 1.94449',))
    >>> classify(parse_printed("12.05"), 12.0404, from_rounded=2.23 + 8.17 + 1.65).causes
    ('rounded intermediates',)
    >>> classify(parse_printed("2.5 MB", byte_base=1000), 2_560_000).causes
    ('truncation',)
    >>> classify(parse_printed("≈ 69 billion"), 137_841_606_656).severity
    'erratum'
    """
    misses = tuple(mismatches(printed, computed))
    got = np.asarray(computed, dtype=float)
    want = np.asarray(printed.value, dtype=float)
    if got.shape != want.shape:
        return Grade("erratum", (), misses)
    tol = np.asarray(printed.tol, dtype=float)
    if not misses:  # an approximate value may match by truncation: say so
        return Grade("match", () if np.all(rounds_to(got, want, tol)) else ("truncation",))
    matched = ~np.zeros(got.shape, dtype=bool)
    matched &= rounds_to(got, want, tol) | (np.asarray(printed.approx) & truncates_to(got, want, tol))
    explained = {
        "rounded intermediates": (np.zeros(got.shape, dtype=bool) if from_rounded is None else
                                  rounds_to(np.asarray(from_rounded, dtype=float), want, tol)),
        "truncation": truncates_to(got, want, tol),
        "last digit": rounds_to(got, want, 2 * tol),
    }
    causes, left = [], ~matched
    for cause in ROUNDING_CAUSES:
        if np.any(left & explained[cause]):
            causes.append(cause)
        left = left & ~explained[cause]
    if np.any(left):
        return Grade("erratum", (), misses)
    return Grade("rounding", tuple(causes), misses)
