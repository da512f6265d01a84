"""FLOPs, bytes and parameter counts of attention, as the chapters count them.

Conventions (the chapters' own): a multiply and an add are two FLOPs, so a
product of an (m, k) and a (k, n) matrix costs 2·m·k·n; sizes are in bytes
for a given number of bytes per element (FP32 = 4, FP16 = 2). All functions
are pure arithmetic on Python ints; the worked-example catalogue calls them
rather than typing results in.
"""

from __future__ import annotations

from .shapes import positive_sizes

__all__ = [
    "matmul_flops", "scaled_dot_product_flops", "additive_score_flops", "bahdanau_flops",
    "bahdanau_memory", "bahdanau_params", "qkv_projection_flops", "qkv_params",
    "attention_matrix_bytes", "rnn_hidden_state_bytes", "qk_bytes_loaded",
    "qk_arithmetic_intensity",
]


def matmul_flops(m: int, k: int, n: int) -> int:
    """FLOPs of an (m, k) @ (k, n) product: 2·m·k·n (one multiply and one add per term).

    Examples
    --------
    "Attention Mechanisms: Fundamentals", Exercise 2: Q Kᵀ with Q (10, 64), K (20, 64):

    >>> matmul_flops(10, 64, 20)
    25600
    """
    positive_sizes("matmul_flops", m=m, k=k, n=n)
    return 2 * m * k * n


def scaled_dot_product_flops(m: int, n: int, d_k: int, d_v: int, softmax: bool = False) -> int:
    """FLOPs of softmax(Q Kᵀ/√d_k) V: 2·m·n·(d_k + d_v), plus 6·m·n with ``softmax=True``.

    The extra 6·m·n is the chapter's count for the scaling (m·n divisions)
    and the softmax (≈ 5·m·n: exponentials, sums, divisions).

    Parameters
    ----------
    m, n : int
        Numbers of queries and keys.
    d_k, d_v : int
        Key and value widths.
    softmax : bool
        Include the scaling and softmax terms.

    Notes
    -----
    "Attention Mechanisms: Fundamentals", section "Computational Efficiency".

    Examples
    --------
    >>> scaled_dot_product_flops(512, 512, 64, 64)
    67108864
    >>> scaled_dot_product_flops(512, 512, 64, 64, softmax=True)
    68681728
    """
    positive_sizes("scaled_dot_product_flops", m=m, n=n, d_k=d_k, d_v=d_v)
    return 2 * m * n * (d_k + d_v) + (6 * m * n if softmax else 0)


def additive_score_flops(d_a: int, d_s: int, d_h: int) -> int:
    """FLOPs of one additive score vᵀ tanh(W1 s + W2 h), counted as the chapter does.

    2·d_a·d_s (W1 s) + 2·d_a·d_h (W2 h) + d_a (add) + 3·d_a (tanh) + 2·d_a (vᵀ·)
    = 2·d_a·(d_s + d_h + 3). W1 s is counted for every pair, as if not reused.

    Examples
    --------
    >>> additive_score_flops(256, 512, 512)
    525824
    """
    positive_sizes("additive_score_flops", d_a=d_a, d_s=d_s, d_h=d_h)
    return 2 * d_a * d_s + 2 * d_a * d_h + d_a + 3 * d_a + 2 * d_a


def bahdanau_flops(m: int, n: int, d_a: int, d_s: int, d_h: int) -> int:
    """FLOPs of all m·n additive scores: 2·n·m·d_a·(d_s + d_h + 3).

    Notes
    -----
    "Attention Mechanisms: Fundamentals", section "Additive Attention
    (Bahdanau)", Computational Cost Analysis.

    Examples
    --------
    The chapter's n = m = 50, d_a = 256, d_s = d_h = 512: "≈ 1.3 billion FLOPs".

    >>> round(bahdanau_flops(50, 50, 256, 512, 512) / 1e9, 1)
    1.3
    """
    positive_sizes("bahdanau_flops", m=m, n=n)
    return m * n * additive_score_flops(d_a, d_s, d_h)


def bahdanau_memory(m: int, n: int, d_h: int, d_a: int, bytes_per_element: int = 4,
                    batch: int = 1) -> dict[str, int]:
    """Bytes stored by additive attention: encoder states, scores, weights, tanh features.

    Returns
    -------
    dict
        ``encoder_states`` (n·d_h), ``scores`` and ``weights`` (m·n each) and
        ``intermediate`` (m·n·d_a, the tanh features), each times
        ``bytes_per_element · batch``.

    Examples
    --------
    >>> bahdanau_memory(50, 50, 512, 256)["intermediate"]
    2560000
    """
    positive_sizes("bahdanau_memory", m=m, n=n, d_h=d_h, d_a=d_a, bytes_per_element=bytes_per_element,
              batch=batch)
    per = bytes_per_element * batch
    return {"encoder_states": n * d_h * per, "scores": m * n * per, "weights": m * n * per,
            "intermediate": m * n * d_a * per}


def bahdanau_params(d_a: int, d_s: int, d_h: int) -> int:
    """Parameters of W1 (d_a, d_s), W2 (d_a, d_h) and v (d_a,): d_a·(d_s + d_h + 1).

    Examples
    --------
    >>> bahdanau_params(256, 512, 512)
    262400
    """
    positive_sizes("bahdanau_params", d_a=d_a, d_s=d_s, d_h=d_h)
    return d_a * d_s + d_a * d_h + d_a


def qkv_projection_flops(n: int, d_model: int, d_k: int, d_v: int | None = None) -> int:
    """FLOPs of Q = X W_Q, K = X W_K, V = X W_V for X (n, d_model): 2·n·d_model·(2·d_k + d_v).

    With all heads together (d_k = d_v = d_model) this is 6·n·d_model².

    Examples
    --------
    BERT-base, n = 512, d_model = 768 ("≈ 1.8 GFLOPs"); one head of the
    chapter's 5-token example:

    >>> qkv_projection_flops(512, 768, 768)
    1811939328
    >>> qkv_projection_flops(5, 512, 64)
    983040
    """
    d_v = d_k if d_v is None else d_v
    positive_sizes("qkv_projection_flops", n=n, d_model=d_model, d_k=d_k, d_v=d_v)
    return 2 * n * d_model * (2 * d_k + d_v)


def qkv_params(d_model: int, d_k: int, d_v: int | None = None, heads: int = 1) -> int:
    """Parameters of W_Q, W_K (d_model, d_k) and W_V (d_model, d_v), per head times heads.

    Examples
    --------
    >>> qkv_params(768, 64, heads=12)
    1769472
    """
    d_v = d_k if d_v is None else d_v
    positive_sizes("qkv_params", d_model=d_model, d_k=d_k, d_v=d_v, heads=heads)
    return heads * d_model * (2 * d_k + d_v)


def attention_matrix_bytes(batch: int, heads: int, m: int, n: int, bytes_per_element: int = 4) -> int:
    """Bytes of the attention weights (batch, heads, m, n).

    Examples
    --------
    n = m = 50 in FP32 is 10,000 bytes ("10 KB"):

    >>> attention_matrix_bytes(1, 1, 50, 50)
    10000
    """
    positive_sizes("attention_matrix_bytes", batch=batch, heads=heads, m=m, n=n,
              bytes_per_element=bytes_per_element)
    return batch * heads * m * n * bytes_per_element


def rnn_hidden_state_bytes(n: int, m: int, d_h: int, bytes_per_element: int = 4, batch: int = 1) -> int:
    """Bytes of the encoder and decoder hidden states of an RNN seq2seq: (n + m)·d_h.

    Examples
    --------
    n = m = 50, d_h = 1024, FP32: 409,600 bytes, the chapter's "400 KB" (KB = 1024 B):

    >>> rnn_hidden_state_bytes(50, 50, 1024) / 1024
    400.0
    """
    positive_sizes("rnn_hidden_state_bytes", n=n, m=m, d_h=d_h, bytes_per_element=bytes_per_element,
              batch=batch)
    return (n + m) * d_h * bytes_per_element * batch


def qk_bytes_loaded(m: int, n: int, d_k: int, bytes_per_element: int = 2) -> int:
    """Bytes read to compute Q Kᵀ once: Q (m, d_k) and K (n, d_k).

    Examples
    --------
    >>> qk_bytes_loaded(512, 512, 64)
    131072
    """
    positive_sizes("qk_bytes_loaded", m=m, n=n, d_k=d_k, bytes_per_element=bytes_per_element)
    return (m + n) * d_k * bytes_per_element


def qk_arithmetic_intensity(m: int, n: int, d_k: int, bytes_per_element: int = 2) -> float:
    """FLOPs per byte of Q Kᵀ: 2·m·n·d_k / ((m + n)·d_k·bytes_per_element).

    Notes
    -----
    "Attention Mechanisms: Fundamentals", section "Computational Efficiency",
    Memory Bandwidth Considerations (512 × 64 operands in FP16).

    Examples
    --------
    The chapter's 512 × 64 FP16 operands: 33,554,432 FLOPs over 131,072 bytes
    (the figure its "Hardware Implications" section prints as ~256):

    >>> qk_arithmetic_intensity(512, 512, 64)
    256.0
    """
    positive_sizes("qk_arithmetic_intensity", m=m, n=n, d_k=d_k, bytes_per_element=bytes_per_element)
    return matmul_flops(m, d_k, n) / qk_bytes_loaded(m, n, d_k, bytes_per_element)
