"""Adam with a warm-up and cosine-decay learning rate, and gradient-norm clipping.

Adam keeps running means of each gradient (m) and of its square (v),
corrects their start-up bias, and steps θ ← θ − lr · m̂ / (√v̂ + ε); with
decoupled weight decay λ (AdamW, Loshchilov & Hutter) the step also takes
lr · λ · θ off every matrix and embedding table. The
learning rate rises linearly over the first steps (Adam's early estimates
are noisy) and then decays along half a cosine to a floor. Clipping rescales
all gradients together when their joint norm exceeds a limit, so one
exploding recurrence cannot throw the model far.
"""

from __future__ import annotations

import math
from typing import Any

from ..backend import get_xp

__all__ = ["Adam", "learning_rate", "clip_by_global_norm"]


def learning_rate(step: int, total: int, peak: float, warmup: int = 100, floor: float = 0.05) -> float:
    """The rate at ``step`` (0-based) of ``total``: linear warm-up, then cosine down to ``floor`` · peak.

    Examples
    --------
    >>> [round(learning_rate(s, 1000, 0.01), 5) for s in (0, 99, 550, 999)]
    [0.0001, 0.01, 0.00524, 0.0005]
    """
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = (step - warmup) / max(1, total - 1 - warmup)
    return peak * (floor + (1.0 - floor) * 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress))))


def clip_by_global_norm(grads: dict[str, Any], max_norm: float) -> tuple[dict[str, Any], float]:
    """Gradients scaled by min(1, max_norm / ‖g‖) with ‖g‖ over all of them; returns (grads, ‖g‖).

    Examples
    --------
    >>> import numpy as np
    >>> clipped, norm = clip_by_global_norm({"a": np.array([3.0]), "b": np.array([4.0])}, 1.0)
    >>> norm, clipped["a"], clipped["b"]
    (5.0, array([0.6]), array([0.8]))
    """
    xp = get_xp(*grads.values())
    norm = math.sqrt(sum(float(xp.sum(g * g)) for g in grads.values()))
    if not math.isfinite(norm):
        raise FloatingPointError("clip_by_global_norm: the gradient norm is not finite "
                                 "(training diverged); lower the learning rate")
    scale = min(1.0, max_norm / norm) if norm > 0 else 1.0
    return {k: g * scale for k, g in grads.items()}, norm


class Adam:
    """Adam (Kingma & Ba) over a dict of named parameters, with optional decoupled weight decay.

    ``weight_decay`` λ ≥ 0 shrinks every parameter of two or more dimensions (weight
    matrices, embedding tables) by lr · λ · θ at each step, apart from the gradient's
    step; vectors (biases, layer-norm gains and shifts) are never decayed.
    ``decay_scales`` multiplies λ for the parameters it names (0: not decayed; a name it
    leaves out: 1). λ = 0 is plain Adam.

    Examples
    --------
    Minimising θ² from θ = 1 moves θ towards 0:

    >>> import numpy as np
    >>> opt, params = Adam(), {"theta": np.array([1.0])}
    >>> for _ in range(100):
    ...     params = opt.step(params, {"theta": 2 * params["theta"]}, lr=0.05)
    >>> bool(abs(params["theta"][0]) < 0.1)
    True
    """

    def __init__(self, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8,
                 weight_decay: float = 0.0, decay_scales: dict[str, float] | None = None):
        if isinstance(weight_decay, bool) or not isinstance(weight_decay, (int, float)) \
                or not weight_decay >= 0 or not math.isfinite(weight_decay):
            raise ValueError(f"Adam: weight_decay must be a finite number >= 0, got {weight_decay!r}")
        self.beta1, self.beta2, self.eps = beta1, beta2, eps
        self.weight_decay = float(weight_decay)
        self.decay_scales = dict(decay_scales or {})
        bad = {k: v for k, v in self.decay_scales.items() if isinstance(v, bool) or not isinstance(v, (int, float))
               or not v >= 0 or not math.isfinite(v)}
        if bad:
            raise ValueError(f"Adam: decay_scales must be finite numbers >= 0, got {bad!r}")
        self.count = 0
        self.m: dict[str, Any] = {}
        self.v: dict[str, Any] = {}

    def step(self, params: dict[str, Any], grads: dict[str, Any], lr: float) -> dict[str, Any]:
        """New parameters after one step (the old arrays are not modified)."""
        self.count += 1
        b1, b2 = self.beta1, self.beta2
        correction1, correction2 = 1.0 - b1 ** self.count, 1.0 - b2 ** self.count
        new = {}
        for name, theta in params.items():
            xp = get_xp(theta)
            g = grads[name]
            m = b1 * self.m[name] + (1.0 - b1) * g if name in self.m else (1.0 - b1) * g
            v = b2 * self.v[name] + (1.0 - b2) * g * g if name in self.v else (1.0 - b2) * g * g
            self.m[name], self.v[name] = m, v
            update = lr * (m / correction1) / (xp.sqrt(v / correction2) + self.eps)
            decay = self.weight_decay * self.decay_scales.get(name, 1.0)
            if decay and theta.ndim >= 2:
                update = update + lr * decay * theta  # decoupled: not part of m or v
            new[name] = theta - update
        return new
