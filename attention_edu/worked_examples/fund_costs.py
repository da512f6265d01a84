"""Memory, FLOP and parameter figures of "Attention Mechanisms: Fundamentals".

Every figure is computed by :mod:`attention_edu.costs`. Byte units: the
chapter mixes conventions, so each check records which one its arithmetic
uses (its "400 KB" is 409,600 B / 1024; its "102 KB" is 102,400 B / 1000).
"""

from __future__ import annotations

from .. import costs
from .catalogue import Builder, register
from .printed import matches

FUND = "Attention Mechanisms: Fundamentals"


def units(printed: str, nbytes: int, base: int) -> str:
    """Say which kilobyte the printed figure uses, and whether the other one would also fit."""
    other = 1024 if base == 1000 else 1000
    also = "also rounds" if matches(printed, nbytes, other) else "does not round"
    return f"read with 1 KB = {base} B ({nbytes:,} B); with {other} B it {also} to {printed}"


def _bytes(ex: Builder, name: str, printed: str, nbytes: int, base: int, cause: str = "") -> None:
    ex.value(name, printed, nbytes, cause=cause, byte_base=base, convention=units(printed, nbytes, base))


@register("fund.seq2seq-memory", "Hidden-state memory of an RNN encoder-decoder",
          f'{FUND}, section "Motivation: The Seq2Seq Bottleneck", Memory and Computational Characteristics')
def _seq2seq_memory(ex: Builder) -> None:
    ex.inputs.update(n=50, m=50, d_h=1024, bytes_per_element=4, batch=32)
    total = costs.rnn_hidden_state_bytes(50, 50, 1024, 4)
    ex.say("(n + m) hidden states of d_h numbers, 4 bytes each (FP32):",
           f"(50 + 50) × 1024 × 4 = {total:,} bytes = {total / 1024:g} KiB = {total / 1000:g} kB",
           "A batch of 32 sequences of 50 steps is 32 × 50 sequential encoder steps.")
    _bytes(ex, "hidden_state_bytes", "400 KB", total, 1024)
    ex.note("KB = 1024 B: the text's own product (50 + 50) × 1024 × 4 = 409,600 B is 400 × 1024.")
    ex.value("sequential_steps_batch_32", "1600", 32 * 50)


@register("fund.attention-matrix-memory", "The attention matrix's memory: 50², 1000², batch 32",
          f'{FUND}, section "Attention Solution", Memory Trade-off')
def _attention_matrix_memory(ex: Builder) -> None:
    ex.inputs.update(n_short=50, n_long=1000, batch=32, bytes_per_element=4)
    short = costs.attention_matrix_bytes(1, 1, 50, 50)
    long = costs.attention_matrix_bytes(1, 1, 1000, 1000)
    batch = costs.attention_matrix_bytes(32, 1, 1000, 1000)
    ex.say("One weight per (output, input) pair, 4 bytes each:",
           f"50 × 50 = {50 * 50:,} weights → {short:,} bytes",
           f"1000 × 1000 × 4 = {long:,} bytes; × 32 sequences = {batch:,} bytes")
    ex.value("entries_50", "2500", 50 * 50)
    _bytes(ex, "bytes_50", "10 KB", short, 1000)
    _bytes(ex, "bytes_1000", "4 MB", long, 1000)
    _bytes(ex, "bytes_1000_batch_32", "128 MB", batch, 1000)


@register("fund.bahdanau-flops", "FLOPs of additive (Bahdanau) scoring",
          f'{FUND}, section "Additive Attention (Bahdanau)", Computational Cost Analysis')
def _bahdanau_flops(ex: Builder) -> None:
    ex.inputs.update(n=50, m=50, d_a=256, d_s=512, d_h=512)
    per_score = costs.additive_score_flops(256, 512, 512)
    steps = {"W1 s_t": 2 * 256 * 512, "W2 h_i": 2 * 256 * 512, "add": 256, "tanh": 3 * 256,
             "v·": 2 * 256}
    ex.computed.update(per_score_flops=per_score, per_score_steps=steps)
    ex.say("One score e_{t,i} = vᵀ tanh(W1 s_t + W2 h_i), counted term by term:",
           *(f"  {k:7s} {v:>9,} FLOPs" for k, v in steps.items()),
           f"  total   {per_score:>9,} = 2·d_a·(d_s + d_h + 3) = 2·256·1027",
           f"n·m = 2500 scores → {costs.bahdanau_flops(50, 50, 256, 512, 512):,} FLOPs")
    ex.answer("per_score_formula", "the five step counts add up to 2·d_a·(d_s + d_h + 3)",
              sum(steps.values()), sum(steps.values()) == 2 * 256 * (512 + 512 + 3))
    ex.value("total_flops", "≈ 1.3 billion", costs.bahdanau_flops(50, 50, 256, 512, 512))
    ex.note("The count recomputes W1 s_t for every pair; an implementation computes it once per "
            "decoder step, which removes most of the 2·d_a·d_s term.")


@register("fund.bahdanau-memory", "What additive attention stores, per sequence and for batch 32",
          f'{FUND}, section "Additive Attention (Bahdanau)", Memory Requirements')
def _bahdanau_memory(ex: Builder) -> None:
    ex.inputs.update(n=50, m=50, d_h=512, d_a=256, bytes_per_element=4, batch=32)
    one = costs.bahdanau_memory(50, 50, 512, 256)
    ex.computed.update(bytes_per_sequence=one)
    ex.say("Encoder states (n, d_h), scores and weights (m, n), tanh features (m, n, d_a), FP32:",
           *(f"  {k:15s} {v:>10,} bytes" for k, v in one.items()))
    _bytes(ex, "encoder_states", "102 KB", one["encoder_states"], 1000)
    _bytes(ex, "scores", "10 KB", one["scores"], 1000)
    _bytes(ex, "weights", "10 KB", one["weights"], 1000)
    _bytes(ex, "intermediate", "2.5 MB", one["intermediate"], 1000,
           cause="50·50·256·4 = 2,560,000 B is 2.56 MB (2.44 MiB): 2.5 truncates 2.56; "
                 "neither unit rounds to it")
    _bytes(ex, "intermediate_batch_32", "80 MB", 32 * one["intermediate"], 1000)
    ex.note("The batch figure 80 MB is 32 × the truncated 2.5 MB; 81.92 MB still rounds to the "
            "round figure 80 at its one significant digit.")


@register("fund.bahdanau-params", "Parameters of additive attention",
          f'{FUND}, section "Additive Attention (Bahdanau)", Parameter Count')
def _bahdanau_params(ex: Builder) -> None:
    ex.inputs.update(d_a=256, d_s=512, d_h=512)
    ex.say("W1 (d_a, d_s) + W2 (d_a, d_h) + v (d_a,) = 256·512 + 256·512 + 256")
    ex.value("parameters", "262,400", costs.bahdanau_params(256, 512, 512))


@register("fund.bert-attention-memory", "Attention-matrix memory of BERT-base",
          f'{FUND}, section "Hardware Implications of Attention"')
def _bert_attention_memory(ex: Builder) -> None:
    ex.inputs.update(batch=32, heads=12, n=512, bytes_per_element=4)
    total = costs.attention_matrix_bytes(32, 12, 512, 512, 4)
    ex.say("b × h × n² × 4 bytes = 32 × 12 × 512² × 4",
           f"= {total:,} bytes = {total / 1e6:.2f} MB = {total / 2**20:g} MiB")
    _bytes(ex, "bytes_per_layer", "~402 MB", total, 1000)
    ex.note("402,653,184 B is 402.65 MB (384 MiB): the approximate ~402 MB truncates it, which is "
            "right at the precision printed.")
    ex.note('The "57% of per-layer activation memory" refers to a breakdown in another chapter '
            "and cannot be checked here.")
