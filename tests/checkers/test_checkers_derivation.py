"""Exercise 06 as a derivation: one checked stub per intermediate, hints collapsed, no formulas up front."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from attention_edu.checkers import (check_backward_dk, check_backward_dq, check_backward_ds, check_backward_dv,
                                    check_softmax_jacobian)

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "exercises" / "06_attention_backward.ipynb"
STUBS = ["softmax_jacobian", "backward_dv", "backward_dw", "backward_ds", "backward_dq", "backward_dk",
         "attention_backward"]
FORMULAS = ["diag(w) − w wᵀ", "Wᵀ d_output", "d_output Vᵀ", "rowsum(dW ⊙ W)", "dS K", "dSᵀ Q"]


def _cells():
    return json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]


def _src(cell):
    return cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])


def _hidden(cell):
    return cell.get("metadata", {}).get("jupyter", {}).get("source_hidden", False)


def test_each_stub_has_three_collapsed_hints_then_its_check():
    cells = _cells()
    for name in STUBS:
        index = next(i for i, c in enumerate(cells) if _src(c).startswith(f"def {name}("))
        hints = cells[index + 1:index + 4]
        assert all(c["cell_type"] == "markdown" and _hidden(c) for c in hints), name
        assert [re.match(r"\*\*Hint (\d)", _src(c)).group(1) for c in hints] == ["1", "2", "3"]
        assert "shape" in _src(hints[1]).lower() or "(..., " in _src(hints[1])
        assert _src(cells[index + 4]).startswith(f"check_{name}({name})")


def test_formulas_appear_only_in_the_last_hints():
    """A visible cell never gives a step's formula; each formula is in some third hint."""
    cells = _cells()
    visible = "\n".join(_src(c) for c in cells if c["cell_type"] == "markdown" and not _hidden(c))
    third = "\n".join(_src(c) for c in cells if _hidden(c) and _src(c).startswith("**Hint 3"))
    for formula in FORMULAS:
        assert formula not in visible, formula
        assert formula in third, formula


def test_the_dq_shape_hint_makes_the_shape_argument():
    hint = next(_src(c) for c in _cells() if _hidden(c) and "dQ must be (..., m, d_k)" in _src(c))
    assert "dS times something (..., n, d_k)" in hint


def test_a_sign_flipped_jacobian_fails_and_is_named():
    result = check_softmax_jacobian(lambda w: w[..., :, None] * w[..., None, :] - w[..., :, None] *
                                    np.eye(w.shape[-1]))
    assert not result.passed and result.hint_id == "softmax_jacobian.sign"


@pytest.mark.parametrize("check,fn,hint_id", [
    (check_backward_dv, lambda W, d: np.swapaxes(d, -1, -2) @ W, "backward_dv.transposed"),
    (check_backward_ds, lambda W, dW: W * (1 - W) * dW, "backward_ds.p-one-minus-p"),
    (check_backward_ds, lambda W, dW: W * (dW - dW.sum(-1, keepdims=True)), "backward_ds.rowsum-unweighted"),
    (check_backward_dq, lambda dS, K: dS @ K, "backward_dq.unscaled"),
    (check_backward_dk, lambda dS, Q: np.swapaxes(Q, -1, -2) @ dS / np.sqrt(Q.shape[-1]), "backward_dk.transposed"),
])
def test_a_wrong_intermediate_is_named_by_its_step(check, fn, hint_id):
    result = check(fn)
    assert result.hint_id == hint_id, str(result)
    assert hint_id.split(".")[0] in result.headline
