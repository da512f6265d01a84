"""Check a hand-written backward pass against central differences.

A backward pass is easy to get subtly wrong (a missing transpose, a forgotten
scale, a gradient leaking into masked keys) and still return arrays of the
right shapes. Finite differences need no derivation at all: nudge one input
entry by ±ε, rerun the forward, and the change of a scalar loss divided by 2ε
is that entry's gradient, up to O(ε²). Comparing the two catches every such
slip. The loss is a random projection of the outputs, L = Σ_k Σ g_k ⊙ y_k, so
that its gradient with respect to y_k is exactly the cotangent g_k handed to
the backward pass.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from numbers import Real
from typing import Any

from .backend import Backend, to_numpy
from .backend import host_numpy as np
from .steps import Steps

__all__ = ["gradcheck"]


def _loss(forward: Callable, inputs: Mapping[str, Any], outputs: tuple[str, ...],
          cotangents: list[np.ndarray]) -> float:
    cache = forward(**inputs)
    return float(sum(np.sum(to_numpy(cache[name]) * g) for name, g in zip(outputs, cotangents)))


def _default_outputs(cache: Any) -> tuple[str, ...]:
    if not isinstance(cache, Steps):
        raise TypeError("gradcheck: forward returned a "
                        f"{type(cache).__name__}, not a Steps; name the arrays the loss reads with outputs=(...)")
    final = "context" if "context" in cache else "output"
    return (final, "weights")


def gradcheck(forward: Callable, backward: Callable, inputs: Mapping[str, Any], *,
              outputs: tuple[str, ...] | None = None, eps: float = 1e-6, seed: int = 0) -> dict[str, float]:
    """Largest relative error of ``backward`` against central differences, per input.

    Parameters
    ----------
    forward : callable
        ``forward(**inputs)`` returns a cache: a :class:`Steps` or a mapping of
        arrays by name (e.g. ``scaled_dot_product_attention_steps``).
    backward : callable
        ``backward(cache, *cotangents)`` returns ``{input name: gradient}``
        (e.g. ``scaled_dot_product_attention_backward``). Every input it names
        is checked.
    inputs : mapping
        The forward's keyword arguments. Arrays to check must be float64;
        anything else (masks, ``num_heads``, ``score``) passes through unchanged.
    outputs : tuple of str, optional
        Names of the cache's arrays that the test loss reads, in the order
        ``backward`` takes their cotangents. Default for a Steps: its result
        (``output`` or ``context``) and ``weights``.
    eps : float
        Step of the central difference. With float64, 1e-6 balances the
        truncation error O(ε²) against rounding O(1e-16/ε).
    seed : int
        Seed of the random cotangents g_k (standard normal).

    Returns
    -------
    dict
        ``{name: max |analytic − numeric| / max(max |numeric|, max |analytic|)}``,
        0 where both gradients vanish. Around 1e-9 means the backward is right.

    Raises
    ------
    TypeError
        If an input to check is not float64: in float32 each difference
        loses about seven digits to rounding, far too many to compare.

    Notes
    -----
    Each entry costs two forward calls: keep the inputs small (tens of
    entries each). The same array passed under two names is perturbed under
    each name separately, so the two gradients are checked one by one.

    Examples
    --------
    >>> import numpy as np
    >>> import attention_edu as ae
    >>> rng = np.random.default_rng(0)
    >>> inputs = dict(Q=rng.normal(size=(2, 3)), K=rng.normal(size=(4, 3)), V=rng.normal(size=(4, 5)))
    >>> errors = gradcheck(ae.scaled_dot_product_attention_steps,
    ...                    ae.scaled_dot_product_attention_backward, inputs)
    >>> sorted(errors), max(errors.values()) < 1e-7
    (['K', 'Q', 'V'], True)
    """
    if isinstance(eps, bool) or not isinstance(eps, Real) or not 0 < eps < math.inf:
        raise ValueError(f"gradcheck: eps must be a finite number > 0 (the finite-difference step), got {eps!r}")
    cache = forward(**inputs)
    outputs = tuple(outputs) if outputs is not None else _default_outputs(cache)
    rng = np.random.default_rng(seed)
    cotangents = [rng.standard_normal(np.shape(to_numpy(cache[name]))) for name in outputs]
    like = Backend.like(cache[outputs[0]])  # the cotangents go to the outputs' library and device
    analytic = backward(cache, *(like.asarray(g) for g in cotangents))
    errors = {}
    for name, grad in analytic.items():
        value = inputs[name]
        if str(value.dtype).split(".")[-1] != "float64":
            raise TypeError(f"gradcheck: {name} has dtype {value.dtype}; central differences need float64 "
                            f"(in float32 each difference loses about 7 of its 8 digits to rounding)")
        host, backend = to_numpy(value).copy(), Backend.like(value)
        numeric = np.zeros_like(host)
        for index in np.ndindex(host.shape):
            original = host[index]
            losses = []
            for step in (eps, -eps):
                host[index] = original + step
                losses.append(_loss(forward, {**inputs, name: backend.asarray(host)}, outputs, cotangents))
            host[index] = original
            numeric[index] = (losses[0] - losses[1]) / (2 * eps)
        grad = to_numpy(grad)
        if grad.shape != numeric.shape:
            raise ValueError(f"gradcheck: the backward's {name} has shape {grad.shape} but {name} has "
                             f"shape {numeric.shape}")
        scale = max(float(np.max(np.abs(numeric), initial=0.0)), float(np.max(np.abs(grad), initial=0.0)))
        difference = float(np.max(np.abs(grad - numeric), initial=0.0))
        errors[name] = difference / scale if scale > 0 else 0.0
    return errors
