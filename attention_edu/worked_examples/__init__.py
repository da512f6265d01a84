"""The chapters' worked examples, recomputed with the library and checked.

One entry per example or exercise of the chapter texts (the ids of their
inventory). Each entry holds its inputs, every value the chapter prints (as
text), the values computed with :mod:`attention_edu`, and one check per
printed value, compared at the printed precision. The status of an entry is
derived from its checks: "reproduced", "rounding" (every value that misses is off
only by rounding, each with its cause), "erratum" (wrong beyond rounding) or
"illustrative".

>>> import attention_edu as ae
>>> ex = ae.worked_examples.get("fund.bahdanau-params")
>>> ex.status, ex.checks[0].printed
('reproduced', '262,400')
>>> len(ae.worked_examples.ids()) >= 39
True
>>> slip = ae.worked_examples.get("fund.sdpa-example")
>>> slip.status, [(c.name, c.cause) for c in slip.rounding]
('rounding', [('exp_scaled_scores', 'last digit'), ('output', 'rounded intermediates')])
"""

from __future__ import annotations

from . import fund_costs  # noqa: F401  (registration by import, in chapter order)
from . import fund_mechanisms  # noqa: F401
from . import fund_scaling  # noqa: F401
from . import fund_exercises  # noqa: F401
from . import dot, dot_exercises  # noqa: F401
from . import matrix_vector, sheet  # noqa: F401
from .catalogue import INVENTORY, Builder, Check, Example, entries, get, ids, register

__all__ = ["Check", "Example", "Builder", "INVENTORY", "entries", "get", "ids", "register"]
