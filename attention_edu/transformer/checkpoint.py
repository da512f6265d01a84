"""Save a transformer to ``.npz`` and load it back, checking everything before building it.

Same layout as the seq2seq checkpoints: one array per parameter
(``blocks.0.W_Q``, ...) and ``config``, a JSON string of the
:class:`TransformerConfig` with a format tag. Loading (``allow_pickle=False``)
refuses a missing, truncated or foreign file, a missing or extra array, a
wrong shape or dtype, or non-finite values with a :class:`CheckpointError`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..backend import Backend, numpy_backend
from ..backend import host_numpy as np
from ..seq2seq.checkpoint import CheckpointError, _read, check_arrays, read_header
from .config import TransformerConfig, parameter_shapes

__all__ = ["save", "load", "CheckpointError", "FORMAT"]

FORMAT = "attention_edu.transformer/1"


def save(model: Any, path: Any) -> None:
    """Write ``model``'s parameters and configuration to ``path`` (an ``.npz`` file)."""
    header = dict(model.config.to_dict(), format=FORMAT)
    with open(path, "wb") as f:  # an open file keeps numpy from appending a second ".npz"
        np.savez(f, config=np.asarray(json.dumps(header, sort_keys=True)), **model.host_parameters())


def _config(path: Path, arrays: dict[str, Any]) -> TransformerConfig:
    header = read_header(path, arrays, FORMAT, "Transformer.save")
    try:
        return TransformerConfig(**header)
    except (TypeError, ValueError) as err:
        raise CheckpointError(f"load: {path}: its config does not describe a transformer: {err}") from None


def load(path: Any, backend: Backend | None = None) -> Any:
    """The transformer saved at ``path``, on ``backend`` (default NumPy in the saved dtype).

    Raises
    ------
    CheckpointError
        Missing, truncated or foreign file; missing, extra, misshapen or
        non-finite arrays. Nothing is built unless every check passes.

    Examples
    --------
    >>> load("no-such-file.npz")
    Traceback (most recent call last):
    ...
    attention_edu.seq2seq.checkpoint.CheckpointError: load: no such file: no-such-file.npz
    """
    from .model import Transformer
    path = Path(path)
    arrays = _read(path)
    config = _config(path, arrays)
    expected = parameter_shapes(config)
    check_arrays(path, arrays, expected, f"transformer for {config.task}")
    if backend is None:
        backend = numpy_backend(str(arrays[next(iter(expected))].dtype))
    return Transformer(config, {k: backend.asarray(arrays[k]) for k in expected}, backend)
