"""Hidden probes drawn from a seed: the same verdict, and the same mistake named first, on every seed.

A grading run adds to the public cases hidden ones drawn from its seed (``records.hidden_cases``). Each function
here runs in this process over many seeds, as ``grade`` would over many runs: a right one must pass on all of
them, a wrong one fail on all of them and be told the same thing on each. The last test takes a class through
``attention-edu grade`` to see the same end to end.
"""

from __future__ import annotations

import json
import subprocess
import textwrap

import numpy as np
import pytest

from attention_edu.checkers import EXERCISES
from attention_edu.checkers.judge import harness
from attention_edu.checkers.runner import run_checker

SEEDS = range(50)


@pytest.fixture(autouse=True)
def _inline(monkeypatch):
    monkeypatch.setenv(harness.START_METHOD_ENV, "inline")      # fifty seeds of about 25 probes: no child per call


def _verdicts(exercise: str, fn, seeds=SEEDS) -> set[tuple[bool, str | None]]:
    """Every (passed, hint id) that ``fn`` gets over ``seeds``: one pair when the seed does not matter."""
    return {(r.passed, r.hint_id) for r in (run_checker(EXERCISES[exercise], fn, seed=s) for s in seeds)}


def _entropy_above(cutoff: float):
    """An entropy that counts only the weights above ``cutoff`` (0 · log 0 = 0 at cutoff 0)."""
    def attention_entropy(weights):
        kept = weights > cutoff
        return -np.sum(np.where(kept, weights * np.log(np.where(kept, weights, 1.0)), 0.0), axis=-1)
    return attention_entropy


def _entropy_nansum(weights):
    with np.errstate(divide="ignore", invalid="ignore"):
        return -np.nansum(weights * np.log(weights), axis=-1)


HONEST_ENTROPIES = {
    "exact": _entropy_above(0.0),
    "above 1e-10": _entropy_above(1e-10),
    "epsilon 1e-12": lambda weights: -np.sum(weights * np.log(weights + 1e-12), axis=-1),
    "epsilon 1e-9": lambda weights: -np.sum(weights * np.log(weights + 1e-9), axis=-1),
    "epsilon tiny": lambda weights: -np.sum(weights * np.log(weights + np.finfo(weights.dtype).tiny), axis=-1),
    "clip 1e-12": lambda weights: -np.sum(weights * np.log(np.clip(weights, 1e-12, 1.0)), axis=-1),
    "nansum": _entropy_nansum,
}


@pytest.mark.parametrize("name", HONEST_ENTROPIES)
def test_an_honest_entropy_passes_on_every_seed(name):
    assert _verdicts("attention_entropy", HONEST_ENTROPIES[name]) == {(True, None)}


@pytest.mark.parametrize("cutoff", [1e-6, 1e-5])
def test_an_entropy_that_drops_small_weights_fails_on_every_seed(cutoff):
    """No public weight lay between 1e-7 and 6e-4, so dropping p < 1e-5 passed every public probe; the hidden copy
    moved the weight 4e-8 of the causal case e-fold and failed it on 1 seed in 3 (113 of 300), told value.mismatch
    on some and log-epsilon on others. Row 3 of the masked case holds 3e-5, 3e-6 and 3e-7 now, and a hidden copy
    keeps a weight below 1e-3 as it is. It is not told that it adds an epsilon inside the log (it adds none):
    an epsilon falls short on every row, the cutoff on the rows with small weights only."""
    assert _verdicts("attention_entropy", _entropy_above(cutoff)) == {(False, "value.mismatch")}


@pytest.mark.parametrize("epsilon", [1e-6, 1e-3])
def test_an_entropy_with_too_large_an_epsilon_is_told_so_on_every_seed(epsilon):
    verdicts = _verdicts("attention_entropy", lambda weights: -np.sum(weights * np.log(weights + epsilon), axis=-1))
    assert verdicts == {(False, "attention_entropy.log-epsilon")}


def test_a_recorded_jacobian_for_the_zero_weight_row_fails_on_every_seed():
    """The hidden copy of (0.5, 0, 0.5) moved by the ratio of two normal draws: where they nearly agreed the
    Jacobian moved less than its tolerance and this replayed answer passed (seeds 101, 151, 161, 250, 273, 298 of
    300). Two weights of a row now move apart by a factor e^0.3 at least."""
    recorded = np.array([[0.25, 0.0, -0.25], [0.0, 0.0, 0.0], [-0.25, 0.0, 0.25]], dtype=np.float32)

    def softmax_jacobian(w):
        if w.shape == (3,) and w[1] == 0:
            return recorded
        return w[..., :, None] * (np.eye(w.shape[-1]) - w[..., None, :]) + (0 * np.log(np.abs(w)))[..., :, None]

    verdicts = _verdicts("softmax_jacobian", softmax_jacobian, [*range(20), 101, 151, 161, 250, 273, 298])
    assert len(verdicts) == 1 and not verdicts.pop()[0], verdicts


def _softmax_dropping(x):
    """Softmax with the weights below 1e-5 set to 0 (and the rows no longer summing to 1)."""
    top = np.max(x, axis=-1, keepdims=True)
    e = np.exp(x - np.where(np.isfinite(top), top, 0.0))
    total = np.sum(e, axis=-1, keepdims=True)
    w = e / np.where(total > 0, total, 1.0)
    return np.where(w < 1e-5, 0.0, w)


def test_a_softmax_that_zeroes_weights_below_1e_5_fails_on_every_seed():
    """The smallest public weight was about 3e-4: it passed every public probe and failed on 118 seeds of 300,
    where a hidden draw made a weight below 1e-5. Row 2 of the large-logits case now holds a weight of 3e-6."""
    assert _verdicts("softmax", _softmax_dropping) == {(False, "value.mismatch")}


def _luong_rounded(S, H, W):
    return np.round(S @ W @ H.T, 5)


def _attention_dropping(Q, K, V, mask=None):
    """Attention with the weights below 1e-3 set to 0 after the softmax."""
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    top = np.max(scores, axis=-1, keepdims=True)
    e = np.exp(scores - np.where(np.isfinite(top), top, 0.0))
    total = np.sum(e, axis=-1, keepdims=True)
    weights = np.where(e / np.where(total > 0, total, 1.0) < 1e-3, 0.0, e / np.where(total > 0, total, 1.0))
    return weights @ V, weights


@pytest.mark.parametrize("exercise, fn, hint_id", [
    ("luong_general_scores", _luong_rounded, "luong_general_scores.property-identity"),
    ("scaled_dot_product_attention", _attention_dropping, "attention.property-rows"),
])
def test_the_mistake_named_first_does_not_change_with_the_seed(exercise, fn, hint_id):
    """Only a property fails on the public inputs; a hidden case failed too on some seeds (37 and 36 of 300), and
    its failure, drawn before the properties run, then named the mistake: value.mismatch there, the property
    elsewhere. Hidden cases' failures are listed after the public probes'."""
    assert _verdicts(exercise, fn) == {(False, hint_id)}


def test_grade_gives_a_class_the_same_verdicts_on_every_seed(tmp_path, console_script):
    """End to end: a right entropy with an epsilon and one that drops p < 1e-6, graded per student on three seeds
    (the second passed on seed 2 before; on the seeds where it failed it could be told of an epsilon)."""
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "epsilon.py").write_text("import numpy as np\n\ndef attention_entropy(weights):\n"
                                       "    return -np.sum(weights * np.log(weights + 1e-12), axis=-1)\n")
    (folder / "cutoff.py").write_text(textwrap.dedent("""
        import numpy as np

        def attention_entropy(weights):
            logs = np.log(np.where(weights > 1e-6, weights, 1.0))
            return -np.sum(np.where(weights > 1e-6, weights * logs, 0.0), axis=-1)
        """))
    for seed in ("2", "3", "4"):
        done = subprocess.run([console_script, "grade", str(folder), "--exercise", "attention_entropy", "--json",
                               "--seed", seed, "--per-student", "--no-progress"], capture_output=True, text=True,
                              timeout=300)
        rows = {row["file"].rsplit("/", 1)[-1]: row for row in json.loads(done.stdout)}
        right = rows["epsilon.py"]
        assert right["passed"] and right["probes_passed"] == right["probes_total"], rows
        assert not rows["cutoff.py"]["passed"] and rows["cutoff.py"]["hint_id"] == "value.mismatch", rows
