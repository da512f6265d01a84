"""Save a model to ``.npz`` and load it back, checking everything before building anything.

A checkpoint is a plain NumPy archive a learner can open with ``numpy.load``:
one array per parameter (``encoder.forward.W_ih``, ``attention.v``, ...) and
``config``, a string holding the JSON of the :class:`ModelConfig` plus a
format tag. Loading uses ``allow_pickle=False`` and refuses a missing,
truncated or foreign file, a missing or extra array, a wrong shape or dtype,
or non-finite values, with a :class:`CheckpointError` that says which; a model
is built only from a file that passed every check.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

from ..backend import Backend, checked_backend
from ..backend import host_numpy as np
from .config import FORMAT, ModelConfig, parameter_shapes
from .model import Seq2Seq

__all__ = ["save", "load", "CheckpointError", "FORMAT", "read_header", "check_arrays", "load_model"]


class CheckpointError(ValueError):
    """A file that is not a usable seq2seq checkpoint (the message says why).

    Examples
    --------
    >>> issubclass(CheckpointError, ValueError)
    True
    """


def save(model: Any, path: Any, fmt: str = FORMAT) -> None:
    """Write ``model``'s parameters and configuration (tagged ``fmt``) to ``path`` (an ``.npz`` file)."""
    header = dict(model.config.to_dict(), format=fmt)
    arrays = model.host_parameters()
    with open(path, "wb") as f:  # an open file keeps numpy from appending a second ".npz"
        np.savez(f, config=np.asarray(json.dumps(header, sort_keys=True)), **arrays)


def _read(path: Path) -> dict[str, Any]:
    try:
        with np.load(path, allow_pickle=False) as archive:
            return {name: archive[name] for name in archive.files}
    except FileNotFoundError:
        raise CheckpointError(f"load: no such file: {path}") from None
    except IsADirectoryError:
        raise CheckpointError(f"load: {path} is a directory, not a checkpoint") from None
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, KeyError) as err:
        raise CheckpointError(f"load: {path} is not a readable .npz checkpoint (truncated, corrupt "
                              f"or another kind of file; a checkpoint is what 'attention-edu train "
                              f"--out' writes)") from None


def read_header(path: Path, arrays: dict[str, Any], fmt: str, writer: str) -> dict[str, Any]:
    """The JSON ``config`` of a checkpoint, checked to carry the format tag ``fmt`` (then dropped)."""
    raw = arrays.get("config")
    if raw is None or raw.shape != () or raw.dtype.kind != "U":
        raise CheckpointError(f"load: {path} has no 'config' string; it was not written by "
                              f"attention_edu's {writer}")
    try:
        header = json.loads(str(raw))
    except json.JSONDecodeError as err:
        raise CheckpointError(f"load: {path}: its config is not valid JSON ({err})") from None
    found = header.pop("format", None) if isinstance(header, dict) else None
    if found != fmt:            # the other model's checkpoint: say which, and its command (audit 73)
        kind = str(found).split("/")[0]
        other = f"tagged {found!r}" if found else "untagged"
        if kind != fmt.split("/")[0]:
            other = {"attention_edu.seq2seq": "a seq2seq model's (its command: attention-edu translate)",
                     "attention_edu.transformer": "a transformer's (its command: attention-edu heads)"}.get(kind, other)
        raise CheckpointError(f"load: {path}: its config does not carry the format tag {fmt!r}; this checkpoint is "
                              f"{other}")
    return header


def check_arrays(path: Path, arrays: dict[str, Any], expected: dict[str, tuple[int, ...]], described: str) -> None:
    """Refuse missing or extra arrays, and any of the wrong dtype, shape, or not finite."""
    found = set(arrays) - {"config"}
    missing, extra = sorted(set(expected) - found), sorted(found - set(expected))
    if missing or extra:
        raise CheckpointError(f"load: {path} does not match its config ({described}): missing "
                              f"{missing or 'nothing'}, unexpected {extra or 'nothing'}")
    for name, shape in expected.items():
        array = arrays[name]
        if array.dtype.name not in ("float32", "float64"):
            raise CheckpointError(f"load: {path}: {name} has dtype {array.dtype}, not floating point")
        if tuple(array.shape) != shape:
            raise CheckpointError(f"load: {path}: {name} has shape {tuple(array.shape)} but its "
                                  f"config needs {shape}")
        if not np.all(np.isfinite(array)):
            raise CheckpointError(f"load: {path}: {name} contains NaN or infinite values")


def load_model(path: Any, backend: Backend | None, fmt: str, make_config: Any, shapes: Any, build: Any) -> Any:
    """Read, check and build: ``build(config, params, backend)`` from a file tagged ``fmt`` whose
    header passes ``make_config(**header)`` and whose arrays match ``shapes(config)``."""
    path = Path(path)
    arrays = _read(path)
    header = read_header(path, arrays, fmt, f"{build.__name__}.save")
    try:
        config = make_config(**header)
    except (TypeError, ValueError) as err:
        raise CheckpointError(f"load: {path}: its config does not describe a model ({build.__name__}): {err}") from None
    expected = shapes(config)
    check_arrays(path, arrays, expected, f"{build.__name__} for {config.task}")
    backend = checked_backend("load", backend, str(arrays[next(iter(expected))].dtype))
    return build(config, {k: backend.asarray(arrays[k]) for k in expected}, backend)


def load(path: Any, backend: Backend | None = None) -> Seq2Seq:
    """The model saved at ``path`` (see :func:`save`), on ``backend`` (default NumPy, saved dtype).

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
    return load_model(path, backend, FORMAT, ModelConfig, parameter_shapes, Seq2Seq)
