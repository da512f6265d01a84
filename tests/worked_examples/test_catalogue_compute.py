"""Every catalogue entry carries the computation behind its values: run afresh, it gives them again."""

from __future__ import annotations

import numpy as np
import pytest

from attention_edu import worked_examples


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if hasattr(a, "keys") and hasattr(b, "keys"):
        return set(a) == set(b) and all(_same(a[k], b[k]) for k in a)
    return a == b or (a != a and b != b)


@pytest.mark.parametrize("example_id", worked_examples.ids())
def test_compute_reruns_the_entrys_computation_and_gives_its_values(example_id):
    example = worked_examples.get(example_id)
    again = example.compute()
    assert set(again) == set(example.computed)
    assert all(_same(again[key], example.computed[key]) for key in again), example_id


def test_an_example_built_without_its_computation_says_so():
    example = worked_examples.get("fund.bahdanau-params")
    bare = worked_examples.Example(example.id, example.title, example.source, example.inputs, example.printed,
                                   example.computed, example.checks, None, (), ())
    with pytest.raises(ValueError, match="fund.bahdanau-params' was built without its computation"):
        bare.compute()
