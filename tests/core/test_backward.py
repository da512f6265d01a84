"""Backward passes: central differences, PyTorch autograd, properties, backends and bad calls.

Every backward is compared with ``ae.gradcheck`` (float64 central differences) on
sizes where m, n, d_k and d_v all differ, unbatched and batched (with an input
broadcast over the batch), with no mask, a causal mask, a padding mask and a
mask that hides a whole query row and a whole key column; and with PyTorch
autograd through an independent forward written here with torch operations.
"""

from __future__ import annotations

import math

import array_api_compat
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import attention_edu as ae
from attention_edu.backend import numpy_backend
from attention_edu.weighting import weigh_backward

m, n, d_k, d_v = 3, 5, 4, 2
d_s, d_h, d_a, d_model, heads = 4, 6, 7, 4, 2


def masks(kind, m, n, batched):
    """A boolean mask of each kind for m queries and n keys (None for "none")."""
    if kind == "none":
        return None
    if kind == "causal":
        return ae.causal_mask(m, n)
    if kind == "padding":
        return ae.padding_mask(np.array([n, 2]) if batched else np.array([2]), n)  # (B or 1, 1, n)
    mask = np.ones((m, n), dtype=bool)  # "hidden": query 1 sees nothing, no query sees key 3
    mask[1, :] = False
    mask[:, 3] = False
    return mask


def mechanism_inputs(name, rng, batched, kind):
    """name -> (steps function, backward, inputs): float64, every size different."""
    a = lambda *shape: rng.normal(size=shape)
    lead = (2,) if batched else ()
    one = (1,) if batched else ()  # an input broadcast over the batch: its gradient is summed (the keys' of every
    # mechanism: Luong concat's dH once counted its score part per batch entry, audit 73)
    qn = n if name in ("self", "multi_head_self") else m
    mask = masks(kind, qn, n, batched)
    if name in ("dot", "scaled"):
        inputs = dict(Q=a(*lead, m, d_k), K=a(*one, n, d_k), V=a(*lead, n, d_v), mask=mask)
    elif name == "bahdanau":
        inputs = dict(S=a(*lead, m, d_s), H=a(*one, n, d_h), W1=a(d_a, d_s), W2=a(d_a, d_h), v=a(d_a), mask=mask)
    elif name == "luong_dot":
        inputs = dict(S=a(*lead, m, d_h), H=a(*one, n, d_h), score="dot", mask=mask)
    elif name == "luong_general":
        inputs = dict(S=a(*lead, m, d_s), H=a(*one, n, d_h), score="general", W=a(d_s, d_h), mask=mask)
    elif name == "luong_concat":
        inputs = dict(S=a(*lead, m, d_s), H=a(*one, n, d_h), score="concat", W=a(d_a, d_s + d_h), v=a(d_a),
                      mask=mask)
    elif name == "self":
        inputs = dict(X=a(*lead, n, d_model), W_Q=a(d_model, d_k), W_K=a(d_model, d_k), W_V=a(d_model, d_v),
                      mask=mask)
    elif name == "cross":
        inputs = dict(X_q=a(*lead, m, d_model), X_kv=a(*one, n, d_model), W_Q=a(d_model, d_k),
                      W_K=a(d_model, d_k), W_V=a(d_model, d_v), mask=mask)
    elif name in ("multi_head", "multi_head_self"):
        X_q = a(*lead, qn, d_model)
        inputs = dict(X_q=X_q, X_kv=X_q if name == "multi_head_self" else a(*lead, n, d_model),
                      W_Q=a(d_model, heads * d_k), W_K=a(d_model, heads * d_k), W_V=a(d_model, heads * d_v),
                      W_O=a(heads * d_v, d_model), num_heads=heads, mask=mask)
    base = {"dot": "dot_product_attention", "scaled": "scaled_dot_product_attention", "bahdanau": "bahdanau_attention",
            "self": "self_attention", "cross": "cross_attention"}.get(name, "luong_attention" if "luong" in name
                                                                       else "multi_head_attention")
    return getattr(ae, base + "_steps"), getattr(ae, base + "_backward"), inputs


NAMES = ["dot", "scaled", "bahdanau", "luong_dot", "luong_general", "luong_concat", "self", "cross", "multi_head",
         "multi_head_self"]
KINDS = ["none", "causal", "padding", "hidden"]
EXPECTED_KEYS = {
    "dot": {"Q", "K", "V"}, "scaled": {"Q", "K", "V"}, "bahdanau": {"S", "H", "W1", "W2", "v"},
    "luong_dot": {"S", "H"}, "luong_general": {"S", "H", "W"}, "luong_concat": {"S", "H", "W", "v"},
    "self": {"X", "W_Q", "W_K", "W_V"}, "cross": {"X_q", "X_kv", "W_Q", "W_K", "W_V"},
    "multi_head": {"X_q", "X_kv", "W_Q", "W_K", "W_V", "W_O"}, "multi_head_self": {"X_q", "X_kv", "W_Q", "W_K",
                                                                                   "W_V", "W_O"},
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("batched", [False, True], ids=["unbatched", "batched"])
@pytest.mark.parametrize("name", NAMES)
def test_every_backward_equals_central_differences(name, batched, kind):
    steps_fn, backward, inputs = mechanism_inputs(name, np.random.default_rng(7), batched, kind)
    errors = ae.gradcheck(steps_fn, backward, inputs)
    assert set(errors) == EXPECTED_KEYS[name]
    assert max(errors.values()) <= 1e-6, errors


@pytest.mark.parametrize("name", NAMES)
def test_gradients_have_their_inputs_shapes_and_hidden_keys_get_exactly_zero(name):
    steps_fn, backward, inputs = mechanism_inputs(name, np.random.default_rng(8), True, "hidden")
    steps = steps_fn(**inputs)
    result = steps["context" if "context" in steps else "output"]
    rng = np.random.default_rng(9)
    grads = backward(steps, rng.normal(size=result.shape), rng.normal(size=steps.weights.shape))
    for key, grad in grads.items():
        source = inputs["X" if key == "X" else key]
        assert grad.shape == source.shape and grad.dtype == source.dtype, key
        assert np.all(np.isfinite(grad)), key
    hidden_key = {"dot": ("K", "V"), "scaled": ("K", "V"), "bahdanau": ("H",), "luong_dot": ("H",),
                  "luong_general": ("H",), "luong_concat": ("H",)}.get(name, ())
    for key in hidden_key:  # key 3 is masked for every query: nothing may reach it
        assert np.all(grads[key][..., 3, :] == 0), key


def test_a_fully_masked_query_row_gives_zero_gradient_and_no_warning():
    rng = np.random.default_rng(1)
    Q, K, V = rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
    mask = np.ones((3, 5), dtype=bool)
    mask[1] = False
    steps = ae.scaled_dot_product_attention_steps(Q, K, V, mask)  # warnings are errors in this suite
    grads = ae.scaled_dot_product_attention_backward(steps, np.ones((3, 2)), np.ones((3, 5)))
    assert np.all(grads["Q"][1] == 0)
    other = ae.scaled_dot_product_attention_backward(ae.scaled_dot_product_attention_steps(
        Q[[0, 2]], K, V, mask[[0, 2]]), np.ones((2, 2)), np.ones((2, 5)))
    np.testing.assert_allclose(grads["K"], other["K"], atol=1e-15)  # the hidden row adds nothing
    np.testing.assert_allclose(grads["V"], other["V"], atol=1e-15)


# ---- PyTorch autograd through an independent forward -------------------------------------------

def torch_weights(torch, scores, mask):
    """Masked softmax with this library's convention: a fully masked row gives zeros."""
    if mask is not None:
        mask = torch.as_tensor(mask)
        visible_max = torch.where(mask, scores, torch.full_like(scores, -math.inf)).amax(-1, keepdim=True)
    else:
        visible_max = scores.amax(-1, keepdim=True)
    shift = torch.where(torch.isfinite(visible_max), visible_max, torch.zeros_like(visible_max)).detach()
    exps = torch.exp(scores - shift)
    if mask is not None:
        exps = torch.where(mask, exps, torch.zeros_like(exps))
    total = exps.sum(-1, keepdim=True)
    return exps / torch.where(total > 0, total, torch.ones_like(total))


def torch_forward(torch, name, t, mask):
    """(result, weights) of mechanism ``name`` on tensors ``t``, written with torch operations."""
    def sdpa(Q, K, V, m=mask, scale=True):
        scores = Q @ K.transpose(-1, -2) / (math.sqrt(Q.shape[-1]) if scale else 1.0)
        w = torch_weights(torch, scores, m)
        return w @ V, w
    if name in ("dot", "scaled"):
        return sdpa(t["Q"], t["K"], t["V"], scale=name == "scaled")
    if name in ("bahdanau", "luong_concat"):
        if name == "bahdanau":
            W1, W2 = t["W1"], t["W2"]
        else:
            W1, W2 = t["W"][:, :t["S"].shape[-1]], t["W"][:, t["S"].shape[-1]:]
        feats = torch.tanh((t["S"] @ W1.T).unsqueeze(-2) + (t["H"] @ W2.T).unsqueeze(-3))
        w = torch_weights(torch, feats @ t["v"], mask)
        return w @ t["H"], w
    if name == "luong_dot":
        w = torch_weights(torch, t["S"] @ t["H"].transpose(-1, -2), mask)
        return w @ t["H"], w
    if name == "luong_general":
        w = torch_weights(torch, t["S"] @ t["W"] @ t["H"].transpose(-1, -2), mask)
        return w @ t["H"], w
    if name in ("self", "cross"):
        X_q, X_kv = (t["X"], t["X"]) if name == "self" else (t["X_q"], t["X_kv"])
        return sdpa(X_q @ t["W_Q"], X_kv @ t["W_K"], X_kv @ t["W_V"])
    H_ = heads
    split = lambda x: x.unflatten(-1, (H_, x.shape[-1] // H_)).transpose(-2, -3)  # (..., H, L, d)
    head_mask = None if mask is None else torch.as_tensor(mask).unsqueeze(-3)
    out, w = sdpa(split(t["X_q"] @ t["W_Q"]), split(t["X_kv"] @ t["W_K"]), split(t["X_kv"] @ t["W_V"]), head_mask)
    return out.transpose(-2, -3).flatten(-2) @ t["W_O"], w


@pytest.mark.torch
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", NAMES)
def test_every_backward_equals_pytorch_autograd(name, kind):
    torch = pytest.importorskip("torch")
    steps_fn, backward, inputs = mechanism_inputs(name, np.random.default_rng(11), True, kind)
    steps = steps_fn(**inputs)
    result = steps["context" if "context" in steps else "output"]
    rng = np.random.default_rng(12)
    g_out, g_w = rng.normal(size=result.shape), rng.normal(size=steps.weights.shape)
    grads = backward(steps, g_out, g_w)
    tensors = {k: torch.tensor(v, requires_grad=True) for k, v in inputs.items()
               if isinstance(v, np.ndarray) and v.dtype == np.float64}
    if name == "multi_head_self":  # one array, two roles: torch sees two leaves, as the contract returns two
        tensors["X_kv"] = torch.tensor(inputs["X_kv"], requires_grad=True)
    out, w = torch_forward(torch, name, tensors, inputs["mask"])
    loss = (out * torch.as_tensor(g_out)).sum() + (w * torch.as_tensor(g_w)).sum()
    loss.backward()
    np.testing.assert_allclose(out.detach().numpy(), result, rtol=1e-12, atol=1e-12)
    for key, grad in grads.items():
        np.testing.assert_allclose(grad, tensors[key].grad.numpy(), rtol=1e-10, atol=1e-10, err_msg=key)


# ---- properties ----------------------------------------------------------------------------------

sizes = st.tuples(st.integers(1, 4), st.integers(1, 6), st.integers(1, 5), st.integers(1, 4), st.integers(0, 10**6))


@given(sizes)
def test_rows_of_d_scores_sum_to_zero(size):
    """Softmax ignores a constant added to a row, so its gradient is orthogonal to (1, ..., 1)."""
    m_, n_, _, d_v_, seed = size
    rng = np.random.default_rng(seed)
    weights = ae.softmax(rng.normal(size=(m_, n_)) * 3)
    d_scores, _ = weigh_backward(np, weights, rng.normal(size=(n_, d_v_)), None, rng.normal(size=(m_, d_v_)),
                                 rng.normal(size=(m_, n_)))
    np.testing.assert_allclose(np.sum(d_scores, axis=-1), 0, atol=1e-12)


@given(sizes)
def test_key_gradients_sum_to_zero_over_the_keys(size):
    """The same fact seen from outside: Σ_j dK_j = Σ_i (Σ_j dS_ij) q_i = 0."""
    m_, n_, d_k_, d_v_, seed = size
    rng = np.random.default_rng(seed)
    steps = ae.scaled_dot_product_attention_steps(rng.normal(size=(m_, d_k_)), rng.normal(size=(n_, d_k_)),
                                                  rng.normal(size=(n_, d_v_)))
    grads = ae.scaled_dot_product_attention_backward(steps, rng.normal(size=(m_, d_v_)))
    np.testing.assert_allclose(np.sum(grads["K"], axis=0), 0, atol=1e-12)


@given(sizes, st.data())
def test_permuting_keys_with_values_permutes_their_gradients(size, data):
    m_, n_, d_k_, d_v_, seed = size
    rng = np.random.default_rng(seed)
    Q, K, V, G = (rng.normal(size=s) for s in ((m_, d_k_), (n_, d_k_), (n_, d_v_), (m_, d_v_)))
    perm = np.array(data.draw(st.permutations(range(n_))))
    grads = ae.scaled_dot_product_attention_backward(ae.scaled_dot_product_attention_steps(Q, K, V), G)
    moved = ae.scaled_dot_product_attention_backward(ae.scaled_dot_product_attention_steps(Q, K[perm], V[perm]), G)
    np.testing.assert_allclose(moved["K"], grads["K"][perm], atol=1e-12)
    np.testing.assert_allclose(moved["V"], grads["V"][perm], atol=1e-12)
    np.testing.assert_allclose(moved["Q"], grads["Q"], atol=1e-12)


@given(sizes, st.data())
def test_masked_keys_values_get_exactly_zero_gradient(size, data):
    m_, n_, d_k_, d_v_, seed = size
    rng = np.random.default_rng(seed)
    visible = np.array(data.draw(st.lists(st.booleans(), min_size=n_, max_size=n_)))
    mask = np.broadcast_to(visible, (m_, n_))
    steps = ae.scaled_dot_product_attention_steps(rng.normal(size=(m_, d_k_)), rng.normal(size=(n_, d_k_)),
                                                  rng.normal(size=(n_, d_v_)), mask)
    grads = ae.scaled_dot_product_attention_backward(steps, rng.normal(size=(m_, d_v_)),
                                                     rng.normal(size=(m_, n_)))
    assert np.all(grads["V"][~visible] == 0) and np.all(grads["K"][~visible] == 0)
    if not visible.any():
        assert np.all(grads["Q"] == 0)


@given(st.sampled_from(NAMES), st.integers(0, 1000))
def test_float32_in_float32_gradients_out(name, seed):
    steps_fn, backward, inputs = mechanism_inputs(name, np.random.default_rng(seed), True, "causal")
    inputs = {k: v.astype(np.float32) if isinstance(v, np.ndarray) and v.dtype == np.float64 else v
              for k, v in inputs.items()}
    steps = steps_fn(**inputs)
    result = steps["context" if "context" in steps else "output"]
    grads = backward(steps, np.ones(result.shape, dtype=np.float32))
    assert {g.dtype for g in grads.values()} == {np.dtype(np.float32)}


# ---- backends --------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["scaled", "bahdanau", "luong_general", "luong_concat", "cross", "multi_head"])
def test_every_backward_stays_on_its_backend_and_matches_numpy(backend, name):
    _, _, host = mechanism_inputs(name, np.random.default_rng(5), True, "causal")
    steps_fn, backward, _ = mechanism_inputs(name, np.random.default_rng(5), True, "causal")
    moved = {k: (backend.asarray(v) if v.dtype != bool else backend.xp.asarray(v, device=backend.device))
             if isinstance(v, np.ndarray) else v for k, v in host.items()}
    steps, reference = steps_fn(**moved), steps_fn(**host)
    key = "context" if "context" in steps else "output"
    g = np.random.default_rng(6).normal(size=reference[key].shape)
    grads, expected = backward(steps, backend.asarray(g)), backward(reference, g)
    tol = 5e-5 if backend.dtype == "float32" else 1e-12
    for k, grad in grads.items():
        assert ae.get_xp(grad) is ae.get_xp(moved[k]) and grad.dtype == moved[k].dtype, k
        assert array_api_compat.device(grad) == array_api_compat.device(moved[k]), k
        np.testing.assert_allclose(ae.to_numpy(grad), expected[k], rtol=tol, atol=tol, err_msg=k)


# ---- bad calls ---------------------------------------------------------------------------------------

def sdpa_steps():
    rng = np.random.default_rng(2)
    return ae.scaled_dot_product_attention_steps(rng.normal(size=(3, 4)), rng.normal(size=(5, 4)),
                                                 rng.normal(size=(5, 2)))


@pytest.mark.parametrize("call, error, words", [
    (lambda: ae.scaled_dot_product_attention_backward((1, 2), np.ones((3, 2))), TypeError,
     ["scaled_dot_product_attention_backward", "scaled_dot_product_attention_steps", "tuple"]),
    (lambda: ae.bahdanau_attention_backward(sdpa_steps(), np.ones((3, 2))), TypeError,
     ["bahdanau_attention_backward", "bahdanau_attention_steps", "scaled_dot_product_attention"]),
    (lambda: ae.scaled_dot_product_attention_backward(sdpa_steps(), np.ones((2, 3))), ae.ShapeError,
     ["d_output has shape (2, 3)", "forward's output, (3, 2)"]),
    (lambda: ae.scaled_dot_product_attention_backward(sdpa_steps(), np.ones((3, 2)), np.ones((3, 4))), ae.ShapeError,
     ["d_weights has shape (3, 4)", "forward's weights, (3, 5)"]),
    (lambda: ae.scaled_dot_product_attention_backward(sdpa_steps(), np.ones((3, 2), dtype=np.float32)), TypeError,
     ["d_output has dtype float32", "float64"]),
    (lambda: ae.scaled_dot_product_attention_backward(sdpa_steps(), [[1.0, 2.0]] * 3), TypeError,
     ["d_output is a list, not an array"]),
    (lambda: ae.scaled_dot_product_attention_backward(sdpa_steps(), np.full((3, 2), np.nan)), ValueError,
     ["d_output (3, 2) contains NaN"]),
    (lambda: ae.scaled_dot_product_attention_backward(sdpa_steps(), None), TypeError, ["d_output is None"]),
    (lambda: ae.gradcheck(ae.scaled_dot_product_attention_steps, ae.scaled_dot_product_attention_backward,
                          dict(Q=np.ones((2, 3), np.float32), K=np.ones((4, 3), np.float32),
                               V=np.ones((4, 2), np.float32))), TypeError,
     ["gradcheck", "float32", "float64", "rounding"]),
    (lambda: ae.gradcheck(lambda **kw: dict(kw), lambda cache, g: {}, dict(x=np.ones(2))), TypeError,
     ["gradcheck", "outputs="]),
])
def test_bad_backward_calls_get_clear_errors(call, error, words):
    with pytest.raises(error) as info:
        call()
    for word in words:
        assert word in str(info.value), f"{word!r} not in {info.value}"


def test_gradcheck_catches_a_wrong_backward():
    """The tool itself can fail: a backward that forgets the 1/√d_k in dQ is caught."""
    def forgetful(steps, d_output, d_weights=None):
        grads = ae.scaled_dot_product_attention_backward(steps, d_output, d_weights)
        return dict(grads, Q=grads["Q"] * math.sqrt(steps.inputs["Q"].shape[-1]))
    _, _, inputs = mechanism_inputs("scaled", np.random.default_rng(3), False, "none")
    errors = ae.gradcheck(ae.scaled_dot_product_attention_steps, forgetful, inputs)
    assert errors["Q"] > 0.1 and errors["K"] < 1e-6 and errors["V"] < 1e-6


def test_gradcheck_accepts_a_mapping_cache_with_named_outputs():
    """Any layer can be checked: a forward returning a dict, with the loss's outputs named."""
    def forward(x, W):
        return {"y": np.tanh(x @ W)}

    def backward(cache, g):
        d_pre = g * (1 - cache["y"] ** 2)
        return {"x": d_pre @ W_.T, "W": x_.T @ d_pre}
    rng = np.random.default_rng(4)
    x_, W_ = rng.normal(size=(3, 2)), rng.normal(size=(2, 4))
    errors = ae.gradcheck(forward, backward, dict(x=x_, W=W_), outputs=("y",))
    assert max(errors.values()) < 1e-8


def test_backward_reads_the_steps_inputs_not_globals():
    """The steps object is the whole forward cache: two caches give their own gradients."""
    rng = np.random.default_rng(5)
    first, second = sdpa_steps(), ae.scaled_dot_product_attention_steps(
        rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2)))
    g = np.ones((3, 2))
    a, b = ae.scaled_dot_product_attention_backward(first, g), ae.scaled_dot_product_attention_backward(second, g)
    again = ae.scaled_dot_product_attention_backward(first, g)
    assert not np.allclose(a["Q"], b["Q"])
    np.testing.assert_array_equal(a["Q"], again["Q"])
    assert numpy_backend().xp is np


@pytest.mark.parametrize("name", NAMES)
def test_one_public_call_checks_each_argument_once(name, monkeypatch):
    """Check once at the door: kernels call kernels, so no argument is re-checked inside (each
    check of an array is a host synchronisation on a GPU)."""
    from attention_edu.shapes import Dims
    steps_fn, backward, inputs = mechanism_inputs(name, np.random.default_rng(13), True, "causal")
    seen = []
    original = Dims.array
    monkeypatch.setattr(Dims, "array", lambda self, arg, *a, **k: (seen.append((self.func, arg)),
                                                                    original(self, arg, *a, **k))[1])
    steps = steps_fn(**inputs)
    arrays = [k for k, v in inputs.items() if isinstance(v, np.ndarray) and v.dtype != bool]
    if name == "self":
        arrays = ["X", "W_Q", "W_K", "W_V"]
    assert sorted(arg for _, arg in seen) == sorted(arrays)
    assert {func for func, _ in seen} == {steps.mechanism.split(" ")[0]}
