"""attention_edu.costs against the chapters' figures and independent counts."""

import itertools

import numpy as np
import pytest

from attention_edu import costs


def _loop_matmul_flops(m, k, n):
    """Run a multiply-accumulate matmul and count every multiply and every add."""
    a, b = np.ones((m, k)), np.ones((k, n))
    count = 0
    for i, j in itertools.product(range(m), range(n)):
        acc = 0.0
        for p in range(k):
            acc = acc + a[i, p] * b[p, j]
            count += 2
    return count


@pytest.mark.parametrize("m, k, n", [(1, 1, 1), (2, 3, 4), (5, 1, 3)])
def test_matmul_flops_equal_an_explicit_count(m, k, n):
    assert costs.matmul_flops(m, k, n) == _loop_matmul_flops(m, k, n)


def test_scaled_dot_product_flops_are_two_products_plus_optional_softmax():
    m, n, d_k, d_v = 7, 11, 3, 5
    both = costs.matmul_flops(m, d_k, n) + costs.matmul_flops(m, n, d_v)
    assert costs.scaled_dot_product_flops(m, n, d_k, d_v) == both
    assert costs.scaled_dot_product_flops(m, n, d_k, d_v, softmax=True) == both + 6 * m * n


def test_chapter_figures_where_the_chapter_is_right():
    assert costs.scaled_dot_product_flops(512, 512, 64, 64) == 67_108_864
    assert round(costs.bahdanau_flops(50, 50, 256, 512, 512) / 1e9, 1) == 1.3
    assert costs.bahdanau_params(256, 512, 512) == 262_400
    assert costs.qkv_projection_flops(512, 768, 768) == 1_811_939_328
    assert costs.qkv_params(768, 64, heads=12) == 1_769_472
    assert costs.qkv_projection_flops(5, 512, 64) == 983_040
    assert costs.matmul_flops(10, 64, 20) == 25_600
    assert costs.rnn_hidden_state_bytes(50, 50, 1024) == 400 * 1024


def test_figures_the_chapter_gets_wrong_are_not_bent():
    # "≈ 69 billion": the formula the chapter writes gives twice that.
    assert costs.bahdanau_flops(512, 512, 256, 512, 512) == 2 * 512 * 512 * 256 * 1027
    assert costs.bahdanau_flops(512, 512, 256, 512, 512) > 137e9
    # Q Kᵀ alone is 33.5 MFLOPs and 256 FLOPs/byte in FP16, not 67 MFLOPs and 511.
    assert costs.matmul_flops(512, 64, 512) == 33_554_432
    assert costs.qk_arithmetic_intensity(512, 512, 64, 2) == 256.0


def test_additive_score_flops_add_up_the_five_steps():
    d_a, d_s, d_h = 4, 3, 5
    steps = 2 * d_a * d_s + 2 * d_a * d_h + d_a + 3 * d_a + 2 * d_a
    assert costs.additive_score_flops(d_a, d_s, d_h) == steps == 2 * d_a * (d_s + d_h + 3)
    assert costs.bahdanau_flops(6, 7, d_a, d_s, d_h) == 42 * steps


def test_byte_counts_equal_numpy_nbytes():
    assert costs.attention_matrix_bytes(2, 3, 4, 5, 4) == np.zeros((2, 3, 4, 5), np.float32).nbytes
    assert costs.qk_bytes_loaded(6, 9, 8, 2) == (np.zeros((6, 8), np.float16).nbytes
                                                 + np.zeros((9, 8), np.float16).nbytes)
    assert costs.rnn_hidden_state_bytes(3, 4, 5, 8, batch=2) == np.zeros((2, 7, 5)).nbytes
    memory = costs.bahdanau_memory(m=3, n=4, d_h=5, d_a=6, bytes_per_element=4, batch=2)
    assert memory == {"encoder_states": np.zeros((2, 4, 5), np.float32).nbytes,
                      "scores": np.zeros((2, 3, 4), np.float32).nbytes,
                      "weights": np.zeros((2, 3, 4), np.float32).nbytes,
                      "intermediate": np.zeros((2, 3, 4, 6), np.float32).nbytes}


def test_parameter_counts_equal_the_sizes_of_the_matrices():
    d_a, d_s, d_h = 3, 4, 5
    assert costs.bahdanau_params(d_a, d_s, d_h) == sum(np.zeros(s).size for s in
                                                       [(d_a, d_s), (d_a, d_h), (d_a,)])
    assert costs.qkv_params(10, 2, 3, heads=4) == 4 * (10 * 2 + 10 * 2 + 10 * 3)


def test_intensity_is_flops_over_bytes():
    m, n, d_k = 8, 16, 4
    assert costs.qk_arithmetic_intensity(m, n, d_k, 4) == pytest.approx(
        2 * m * n * d_k / ((m + n) * d_k * 4))


@pytest.mark.parametrize("call, message", [
    (lambda: costs.matmul_flops(0, 2, 3), "matmul_flops: m must be a positive int, got 0"),
    (lambda: costs.matmul_flops(2, 2.5, 3), "matmul_flops: k must be a positive int, got 2.5"),
    (lambda: costs.attention_matrix_bytes(1, 1, 4, 4, True), "bytes_per_element"),
    (lambda: costs.qkv_params(768, -64), "qkv_params: d_k must be"),
    (lambda: costs.bahdanau_memory(1, 1, 1, 1, batch=0), "bahdanau_memory: batch"),
])
def test_bad_sizes_name_the_function_and_argument(call, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        call()
