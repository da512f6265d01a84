"""Attention without the m × n matrix: the online softmax over blocks of keys.

- :mod:`.attention`: :func:`blockwise_attention`, the portable version on any
  backend, step by step;
- :mod:`.fast`: the threaded float32 host path NumPy inputs take;
- :mod:`.backward`: :func:`blockwise_attention_backward`, the gradients,
  recomputing the scores tile by tile from the saved log-sum-exp;
- :mod:`.fast_backward`: its threaded float32 host path for NumPy inputs;
- :mod:`.memory_model`: FLOPs, bytes moved and peak memory of naive and
  blockwise attention, predicted before running.
"""

from __future__ import annotations

from .attention import ACCELERATOR_BLOCK, DEFAULT_BLOCK, blockwise_attention, blockwise_attention_steps
from .backward import blockwise_attention_backward

__all__ = ["ACCELERATOR_BLOCK", "DEFAULT_BLOCK", "blockwise_attention", "blockwise_attention_backward", "blockwise_attention_steps"]
