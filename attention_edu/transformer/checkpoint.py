"""Save a transformer to ``.npz`` and load it back, checking everything before building it.

Same layout as the seq2seq checkpoints: one array per parameter
(``blocks.0.W_Q``, ...) and ``config``, a JSON string of the
:class:`TransformerConfig` with a format tag. Loading (``allow_pickle=False``)
refuses a missing, truncated or foreign file, a missing or extra array, a
wrong shape or dtype, or non-finite values with a :class:`CheckpointError`.
"""

from __future__ import annotations

from typing import Any

from ..backend import Backend
from ..seq2seq.checkpoint import CheckpointError, load_model
from ..seq2seq.checkpoint import save as save_model
from .config import TransformerConfig, parameter_shapes
from .model import Transformer  # the model imports this module only inside save()

__all__ = ["save", "load", "CheckpointError", "FORMAT"]

FORMAT = "attention_edu.transformer/1"


def save(model: Any, path: Any) -> None:
    """Write ``model``'s parameters and configuration to ``path`` (an ``.npz`` file)."""
    save_model(model, path, FORMAT)


def load(path: Any, backend: Backend | None = None) -> Any:
    """The transformer saved at ``path``, on ``backend`` (default NumPy in the saved dtype).

    Raises
    ------
    CheckpointError
        Missing, truncated or foreign file (a seq2seq checkpoint among them); missing, extra,
        misshapen or non-finite arrays. Nothing is built unless every check passes.

    Examples
    --------
    >>> load("no-such-file.npz")
    Traceback (most recent call last):
    ...
    attention_edu.seq2seq.checkpoint.CheckpointError: load: no such file: no-such-file.npz
    """
    return load_model(path, backend, FORMAT, TransformerConfig, parameter_shapes, Transformer)
