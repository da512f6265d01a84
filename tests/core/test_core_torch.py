"""PyTorch as an oracle: scaled dot-product attention and multi-head attention.

Skipped when torch is not installed. Conventions differ and are translated here:

- ``F.scaled_dot_product_attention``: a boolean ``attn_mask`` marks with True the
  entries that *take part* — the same as ours.
- ``nn.MultiheadAttention``: boolean ``attn_mask`` and ``key_padding_mask`` mark
  with True the entries that may *not* be attended — the opposite of ours.
- ``nn.MultiheadAttention`` stores column-vector weights: q = x @ in_proj_weight[:E].T,
  output = concat @ out_proj.weight.T. So our W_Q = in_proj_weight[:E].T and
  W_O = out_proj.weight.T.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import attention_edu as ae

torch = pytest.importorskip("torch")
F = torch.nn.functional

pytestmark = pytest.mark.torch

TOL = 1e-10  # float64 on both sides; the brief asks for 1e-6, they agree far better


def t(x):
    return torch.from_numpy(np.ascontiguousarray(x))


@pytest.mark.parametrize("batch", [(), (3,), (2, 3)], ids=["unbatched", "3d", "4d"])
@pytest.mark.parametrize("mask_kind", ["none", "causal", "random", "padding"])
def test_sdpa_equals_torch(batch, mask_kind):
    rng = np.random.default_rng(len(batch) * 10 + len(mask_kind))
    m, n, d_k, d_v = 4, 6, 3, 5
    Q = rng.normal(size=batch + (m, d_k))
    K = rng.normal(size=batch + (n, d_k))
    V = rng.normal(size=batch + (n, d_v))
    if mask_kind == "none":
        mask = None
    elif mask_kind == "causal":
        mask = ae.causal_mask(m, n)  # last query aligned with last key: every row sees ≥ 1 key
    elif mask_kind == "random":
        mask = rng.random(batch + (m, n)) < 0.5
        mask[..., 0] = True  # torch gives NaN for a fully masked row; we give zeros (tested elsewhere)
    else:
        lengths = rng.integers(1, n + 1, size=int(np.prod(batch)))
        mask = ae.padding_mask(lengths, n).reshape(batch + (1, n))
    out, w = ae.scaled_dot_product_attention(Q, K, V, mask)
    torch_mask = None if mask is None else t(mask)  # True = takes part, as ours
    expected = F.scaled_dot_product_attention(t(Q), t(K), t(V), attn_mask=torch_mask).numpy()
    np.testing.assert_allclose(out, expected, rtol=0, atol=TOL)
    # torch's SDPA returns no weights; softmax of torch's own masked scores is the reference
    scores = t(Q) @ t(K).transpose(-2, -1) / math.sqrt(d_k)
    if torch_mask is not None:
        scores = scores.masked_fill(~torch_mask, -math.inf)
    np.testing.assert_allclose(w, torch.softmax(scores, dim=-1).numpy(), rtol=0, atol=TOL)


def test_sdpa_equals_torch_is_causal_flag():
    """torch's is_causal=True is the upper-left aligned mask; with m = n it is our causal_mask(n)."""
    rng = np.random.default_rng(7)
    Q, K, V = rng.normal(size=(2, 5, 3)), rng.normal(size=(2, 5, 3)), rng.normal(size=(2, 5, 4))
    out, _ = ae.scaled_dot_product_attention(Q, K, V, ae.causal_mask(5))
    expected = F.scaled_dot_product_attention(t(Q), t(K), t(V), is_causal=True).numpy()
    np.testing.assert_allclose(out, expected, rtol=0, atol=TOL)


def torch_mha(W_Q, W_K, W_V, W_O, num_heads):
    d_model = W_Q.shape[0]
    mha = torch.nn.MultiheadAttention(d_model, num_heads, bias=False, batch_first=True,
                                      dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_weight.copy_(t(np.concatenate([W_Q.T, W_K.T, W_V.T], axis=0)))  # (3E, E)
        mha.out_proj.weight.copy_(t(W_O.T))
    return mha.eval()


@pytest.mark.parametrize("num_heads", [1, 2, 4])
@pytest.mark.parametrize("masks", ["none", "attn", "key_padding", "both"])
def test_multi_head_attention_equals_torch(num_heads, masks):
    rng = np.random.default_rng(num_heads + len(masks))
    B, m, n, d_model = 2, 3, 5, 8  # X_q ≠ X_kv and m ≠ n
    X_q, X_kv = rng.normal(size=(B, m, d_model)), rng.normal(size=(B, n, d_model))
    W_Q, W_K, W_V, W_O = (rng.normal(size=(d_model, d_model)) for _ in range(4))
    lengths = np.array([n, 2])
    causal = ae.causal_mask(m, n)  # (m, n)
    padding = ae.padding_mask(lengths, n)  # (B, 1, n)
    ours_mask = {"none": None, "attn": causal, "key_padding": padding, "both": causal & padding}[masks]
    out, w = ae.multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, ours_mask)

    kwargs = {}
    if masks in ("attn", "both"):
        kwargs["attn_mask"] = t(~causal)  # torch: True = may NOT attend
    if masks in ("key_padding", "both"):
        kwargs["key_padding_mask"] = t(~padding[:, 0, :])  # (B, n), True = padding
    with torch.no_grad():
        expected_out, expected_w = torch_mha(W_Q, W_K, W_V, W_O, num_heads)(
            t(X_q), t(X_kv), t(X_kv), need_weights=True, average_attn_weights=False, **kwargs)
    assert w.shape == (B, num_heads, m, n)
    np.testing.assert_allclose(w, expected_w.numpy(), rtol=0, atol=TOL)
    np.testing.assert_allclose(out, expected_out.numpy(), rtol=0, atol=TOL)


def test_multi_head_self_attention_equals_torch_float32():
    """float32 in, float32 out, and still torch's numbers (to float32 precision)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(2, 6, 8)).astype(np.float32)
    W_Q, W_K, W_V, W_O = (rng.normal(size=(8, 8)).astype(np.float32) / 3 for _ in range(4))
    out, w = ae.multi_head_attention(X, X, W_Q, W_K, W_V, W_O, 2, ae.causal_mask(6))
    assert out.dtype == np.float32 and w.dtype == np.float32
    mha = torch_mha(W_Q.astype(np.float64), W_K.astype(np.float64), W_V.astype(np.float64),
                    W_O.astype(np.float64), 2)
    with torch.no_grad():
        expected, _ = mha(t(X.astype(np.float64)), t(X.astype(np.float64)), t(X.astype(np.float64)),
                          attn_mask=t(~ae.causal_mask(6)))
    np.testing.assert_allclose(out, expected.numpy(), rtol=1e-4, atol=1e-5)
