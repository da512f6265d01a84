"""Self-attention learns: a small decoder-only transformer trained from scratch in NumPy.

Multi-head causal self-attention is the library's own
:func:`attention_edu.multi_head_attention` with its hand-written backward;
around it sit learned token and position embeddings, pre-layer-norm blocks
(with or without an MLP), residual connections and an output head. It learns
to ``sort`` digits and to complete a repeated string (``induction``), and
:func:`head_scores` finds what each head does: a previous-token head, an
induction head, a head that reads the digit being written.

>>> from attention_edu import transformer
>>> transformer.TASKS
('sort', 'induction')

Typical use (the defaults are the command line's)::

    model, history = transformer.train(task="sort", seed=0)
    model.predict("5031")                       # "0135"
    tokens, weights = model.attend("5031")      # weights (layers, heads, T, T)
    transformer.head_scores(model, "sort", seed=1)
    model.save("m.npz"); model = transformer.load("m.npz")
"""

from .checkpoint import CheckpointError, load
from .config import DEFAULT_CONFIGS, TransformerConfig
from .heads import ablate, head_scores
from .model import Transformer
from .tasks import TASKS, make_dataset
from .training import evaluate, train

# CheckpointError is importable here but documented once, with seq2seq (the same class).
__all__ = ["TASKS", "DEFAULT_CONFIGS", "Transformer", "TransformerConfig", "ablate",
           "evaluate", "head_scores", "load", "make_dataset", "train"]
