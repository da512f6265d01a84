"""Attention without the m × n matrix: the online softmax over blocks of keys.

- :mod:`.attention`: :func:`blockwise_attention`, the portable version on any
  backend, step by step;
- :mod:`.fast`: the threaded float32 host path NumPy inputs take;
- :mod:`.memory_model`: FLOPs, bytes moved and peak memory of naive and
  blockwise attention, predicted before running.
"""

from __future__ import annotations

from .attention import DEFAULT_BLOCK, blockwise_attention, blockwise_attention_steps

__all__ = ["DEFAULT_BLOCK", "blockwise_attention", "blockwise_attention_steps"]
