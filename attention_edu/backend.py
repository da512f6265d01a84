"""Array backends: where arrays come from and how they get back to the host.

This is the only module of the package that imports ``numpy``, ``cupy`` or
``array_api_compat``. Everything else receives its array namespace from
:func:`get_xp` and then uses only ``xp.*`` functions, operators and ``math.*``
on Python scalars, so the same code runs on NumPy, on CuPy (GPU) and on
``array_api_strict`` (the reference implementation of the Python array API
standard, which we use on CPU to prove the CuPy paths portable).

There is no global switch: NumPy arrays in give NumPy arrays out, CuPy arrays
in give CuPy arrays out.
"""

from __future__ import annotations

import math
import types
from dataclasses import dataclass
from typing import Any

import array_api_compat
import numpy as np

__all__ = [
    "Backend", "get_xp", "to_numpy", "numpy_backend", "checked_backend", "is_numpy_namespace", "format_array",
    "host_numpy", "cupy_if_available", "device_of", "quiet_overflow", "read_only",
]

#: NumPy itself, for host-side code (worked-example catalogue, checkers, plots,
#: benchmarks) that only ever handles host arrays, typically after to_numpy.
#: Mechanisms never use it: they take ``xp`` from their inputs with get_xp.
host_numpy = np


def get_xp(*arrays: Any) -> Any:
    """Return the array namespace ``xp`` shared by ``arrays`` (``None`` entries are skipped; mixing libraries, or
    anything not an array, raises ``TypeError``).

    NumPy inputs give the plain ``numpy`` module, so a reader stepping through
    the code sees ordinary NumPy; other libraries give their array-API
    namespace (through ``array_api_compat.array_namespace``).

    Examples
    --------
    >>> import numpy as np
    >>> get_xp(np.zeros(3), None) is np
    True
    """
    present = [a for a in arrays if a is not None]
    if not present:
        raise TypeError("get_xp: needs at least one array, got none")
    for a in present:
        if isinstance(a, (bool, int, float, complex, np.ma.MaskedArray)) or not array_api_compat.is_array_api_obj(a):
            raise TypeError(
                f"expected an array (NumPy, CuPy or another array-API library), "
                f"got {type(a).__name__}; wrap Python lists with numpy.asarray first"
            )
    try:
        xp = array_api_compat.array_namespace(*present)
    except TypeError as err:
        kinds = sorted({type(a).__module__.split(".")[0] for a in present})
        raise TypeError(
            f"arrays come from different libraries ({', '.join(kinds)}); "
            f"move them to one library first"
        ) from err
    return np if array_api_compat.is_numpy_namespace(xp) else xp


def device_of(x: Any) -> Any:
    """The device an array lives on (``"cpu"`` for NumPy).

    Examples
    --------
    >>> import numpy as np
    >>> device_of(np.zeros(2))
    'cpu'
    """
    return array_api_compat.device(x)


def _array_api_namespace(xp: Any) -> Any:
    """``xp`` itself, or its array-API wrapper where the raw module lacks ``device=`` keywords."""
    if xp is np or array_api_compat.is_numpy_namespace(xp):
        return np
    if array_api_compat.is_cupy_namespace(xp):
        # cupy.asarray/arange take no device= keyword; array_api_compat.cupy does.
        import array_api_compat.cupy as cupy_namespace
        return cupy_namespace
    if array_api_compat.is_torch_namespace(xp):  # the same wrapper get_xp gives for torch tensors
        import array_api_compat.torch as torch_namespace
        return torch_namespace
    return xp


def is_numpy_namespace(xp: Any) -> bool:
    """True when ``xp`` is NumPy (plain or wrapped by array-api-compat)."""
    return xp is np or array_api_compat.is_numpy_namespace(xp)


def to_numpy(x: Any) -> np.ndarray:
    """Copy an array of any supported backend to a NumPy array on the host.

    This is the one exit to the host: plots, printing and checkers call it.
    Python scalars and nested lists are accepted too.

    Examples
    --------
    >>> to_numpy([1.0, 2.0])
    array([1., 2.])
    """
    if isinstance(x, np.ndarray):
        return x
    if array_api_compat.is_cupy_array(x):
        return x.get()
    if array_api_compat.is_array_api_obj(x) and not isinstance(x, np.generic):
        # array_api_strict refuses implicit conversion on its simulated
        # accelerator, so move the array to its CPU device explicitly first.
        if array_api_compat.is_array_api_strict_namespace(array_api_compat.array_namespace(x)):
            xp = array_api_compat.array_namespace(x)
            x = array_api_compat.to_device(x, xp.Device("CPU_DEVICE"))
            return np.asarray(x)
        if array_api_compat.is_torch_array(x):
            return x.detach().cpu().numpy()
        return np.asarray(array_api_compat.to_device(x, "cpu"))
    return np.asarray(x)


@dataclass(frozen=True)
class Backend:
    """A place to create arrays: a namespace, a device and a floating dtype.

    Random parameters are always drawn on the host from one seeded
    ``numpy.random.Generator`` and moved once, so a seed gives the same
    weights on CPU, GPU and ``array_api_strict`` devices.

    Parameters
    ----------
    xp : module
        Array namespace (``numpy``, ``cupy``, ``array_api_strict``, ...).
    device : object, optional
        Device of that namespace; ``None`` means its default.
    dtype : str
        ``"float64"`` or ``"float32"``.

    Examples
    --------
    >>> be = numpy_backend("float32")
    >>> be.asarray([[1, 2], [3, 4]]).dtype
    dtype('float32')
    >>> w = be.normal((2, 3), seed=0)
    >>> w.shape, w.dtype
    ((2, 3), dtype('float32'))
    """

    xp: Any
    device: Any = None
    dtype: str = "float64"

    def __post_init__(self) -> None:
        if not isinstance(self.xp, types.ModuleType):      # None, a name, an array: audit 73
            raise TypeError(f"Backend: xp must be an array library's module (numpy, cupy, torch), got {self.xp!r:.40}")
        if self.dtype not in ("float32", "float64"):       # int32 gave all-zero "random" weights (audit 73)
            raise ValueError(f"Backend: dtype must be 'float32' or 'float64', got {self.dtype!r}")
        # Backend(cupy) must work like the namespace get_xp gives for CuPy arrays.
        object.__setattr__(self, "xp", _array_api_namespace(self.xp))

    @classmethod
    def like(cls, x: Any) -> Backend:
        """The backend (namespace, device, dtype) of an existing array."""
        xp = get_xp(x)
        return cls(xp, array_api_compat.device(x), str(x.dtype).split(".")[-1])

    @property
    def float_dtype(self) -> Any:
        return getattr(self.xp, self.dtype)

    def asarray(self, data: Any, dtype: Any = None) -> Any:
        """Host data (lists, NumPy arrays) as an array of this backend."""
        host = np.asarray(data, dtype=np.dtype(self.dtype) if dtype is None else dtype)
        if self.xp is np:
            return host.copy()
        target = self.float_dtype if dtype is None else getattr(self.xp, np.dtype(dtype).name)
        return self.xp.asarray(host, dtype=target, device=self.device)

    def normal(self, shape: tuple[int, ...], seed: int | np.random.Generator = 0,
               scale: float = 1.0) -> Any:
        """Standard-normal samples times ``scale``, drawn on the host and moved once.

        ``seed`` may be an int or a shared ``numpy.random.Generator`` (to draw
        several parameter matrices from one stream).
        """
        if not all(isinstance(size, (int, np.integer)) and size >= 0 for size in shape):
            raise ValueError(f"Backend.normal: shape must be sizes of 0 or more, got {shape!r}")
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        return self.asarray(scale * rng.standard_normal(shape))

    def glorot(self, shape: tuple[int, int], seed: int | np.random.Generator = 0) -> Any:
        """A weight matrix with variance 2 / (fan_in + fan_out) (Glorot/Xavier)."""
        return self.normal(shape, seed, scale=math.sqrt(2.0 / (shape[0] + shape[1])))


def numpy_backend(dtype: str = "float64") -> Backend:
    """The NumPy backend on the host, in ``dtype``."""
    return Backend(np, None, dtype)


def checked_backend(function: str, backend: Any, dtype: str = "float64") -> Backend:
    """``backend`` itself, NumPy's in ``dtype`` for None, a TypeError naming ``function`` for anything else."""
    if backend is not None and not isinstance(backend, Backend):
        raise TypeError(f"{function}: backend must be a Backend, like numpy_backend(), got {backend!r:.40}")
    return numpy_backend(dtype) if backend is None else backend


def format_array(x: Any, precision: int = 3, max_elements: int = 400) -> str:
    """A NumPy-style text picture of any backend's array, for step tables."""
    host = to_numpy(x)
    if host.size > max_elements:
        return f"<{host.size} values; too many to print>"
    return np.array2string(host, precision=precision, suppress_small=True, floatmode="fixed")


def cupy_if_available() -> Any:
    """The ``cupy`` module when it imports and sees a CUDA device, else ``None``."""
    try:
        import cupy
        return cupy if cupy.cuda.is_available() else None
    except Exception:  # not installed (ImportError), or a broken CUDA install, which reports itself in many ways
        return None


def quiet_overflow() -> Any:
    """A context in which NumPy does not warn about overflow or inf − inf.

    Mechanisms compute inside it and then check their scores themselves, so
    inputs too large for their dtype get one clear error naming the function
    instead of a RuntimeWarning followed by NaN. Other libraries do not warn.
    """
    return np.errstate(over="ignore", invalid="ignore")


def read_only(x: Any) -> Any:
    """A read-only view of a NumPy array (other libraries' arrays are returned as they are)."""
    if isinstance(x, np.ndarray):
        view = x.view()
        view.flags.writeable = False
        return view
    return x
