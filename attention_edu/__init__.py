"""attention_edu: attention mechanisms from scratch, shape-checked, on any array backend.

A companion to a textbook chapter on attention ("Attention Mechanisms:
Fundamentals" and the shorter texts listed in the README). Every mechanism
returns ``(output, weights)``; its ``..._steps`` twin returns every
intermediate, printable as a step table.

>>> import attention_edu as ae
>>> import numpy as np
>>> out, w = ae.scaled_dot_product_attention(np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 5)))
>>> out.shape, w.shape
((2, 5), (2, 4))
"""

import os as _os
import sys as _sys

# ``python -m attention_edu`` puts the working folder first on the import path: a teacher grading from inside the
# submissions folder would have a student's numpy.py or tqdm.py imported into the grader itself (red team 47), so the
# command takes that folder off before importing anything (nothing but os and sys, loaded at start-up: a student's
# attention_edu.py there is imported in place of the package, which docs/teachers.md warns of). ``sys.argv`` is
# ["-m", ...] while -m's module is imported, and ``sys.orig_argv`` ends with the module's name and those arguments.
_argv = getattr(_sys, "argv", None) or [""]         # an embedding application may leave sys.argv out
_run_as = [a.removeprefix("-m").partition(".")[0] for a in _sys.orig_argv[-len(_argv):][:1]] if _argv[0] == "-m" else []
if _run_as == ["attention_edu"] and _sys.path and isinstance(_sys.path[0], str):
    try:
        if _os.path.samefile(_sys.path[0], _os.curdir):
            del _sys.path[0]
    except OSError:             # the folder is gone, or never was
        pass
del _os, _sys, _argv, _run_as

from .additive import bahdanau_attention, bahdanau_attention_backward, bahdanau_attention_steps
from .backend import Backend, get_xp, numpy_backend, to_numpy
from .dot_product import (
    dot_product_attention,
    dot_product_attention_backward,
    dot_product_attention_steps,
    scaled_dot_product_attention,
    scaled_dot_product_attention_backward,
    scaled_dot_product_attention_steps,
)
from .gradcheck import gradcheck
from .loops import attention_loop, bahdanau_attention_loop
from .luong import luong_attention, luong_attention_backward, luong_attention_steps
from .masks import apply_mask, causal_mask, padding_mask
from .multi_head import (
    merge_heads,
    multi_head_attention,
    multi_head_attention_backward,
    multi_head_attention_steps,
    split_heads,
)
from .projections import (
    cross_attention,
    cross_attention_backward,
    cross_attention_steps,
    self_attention,
    self_attention_backward,
    self_attention_steps,
)
from .shapes import ShapeError
from .softmax import softmax, softmax_jacobian, softmax_naive, softmax_vjp
from .steps import Steps

__version__ = "0.1.0"

__all__ = [
    "Backend", "ShapeError", "Steps",
    "apply_mask", "attention_loop", "bahdanau_attention", "bahdanau_attention_backward",
    "bahdanau_attention_loop", "bahdanau_attention_steps", "causal_mask", "cross_attention",
    "cross_attention_backward", "cross_attention_steps", "dot_product_attention",
    "dot_product_attention_backward", "dot_product_attention_steps", "get_xp", "gradcheck",
    "luong_attention", "luong_attention_backward", "luong_attention_steps", "merge_heads",
    "multi_head_attention", "multi_head_attention_backward", "multi_head_attention_steps",
    "numpy_backend", "padding_mask", "scaled_dot_product_attention",
    "scaled_dot_product_attention_backward", "scaled_dot_product_attention_steps", "self_attention",
    "self_attention_backward", "self_attention_steps", "softmax", "softmax_jacobian", "softmax_naive",
    "softmax_vjp", "split_heads", "to_numpy",
]

# Built on the mechanisms above. `plotting` is not imported here, so that importing the
# library never imports matplotlib: use `import attention_edu.plotting`.
from . import checkers, costs, worked_examples  # noqa: E402
from .blockwise import blockwise_attention, blockwise_attention_backward, memory_model  # noqa: E402
from .worked_examples import display  # noqa: E402
from . import layers, seq2seq  # noqa: E402  (the trainer, built on the mechanisms' backward passes)
from . import transformer  # noqa: E402  (a decoder-only transformer on multi_head_attention's backward)
from .explorer import explore  # noqa: E402  (HTML and inline JavaScript; no matplotlib)

__all__ += ["blockwise_attention", "blockwise_attention_backward", "checkers", "costs", "display", "explore",
            "layers", "memory_model", "seq2seq", "transformer", "worked_examples"]
