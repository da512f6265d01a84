"""A seq2seq model with attention, trained from scratch in NumPy, every gradient by hand.

"Attention Mechanisms: Fundamentals", section "The Bottleneck Problem", says in
words that one fixed-size vector cannot carry a long source and that
attention removes the limit; this package measures it. A GRU encoder-decoder
learns to reverse strings or to rewrite dates, with no attention or with one
of the library's mechanisms (Bahdanau, Luong dot / general / concat) and
their backward passes.

>>> from attention_edu import seq2seq
>>> seq2seq.TASKS, seq2seq.ATTENTIONS[:2]
(('reverse', 'dates'), ('none', 'bahdanau'))

Typical use (the defaults are the command line's)::

    model, history = seq2seq.train(task="reverse", attention="bahdanau", seed=0)
    output, weights = model.translate("abcdefgh")
    model.save("model.npz"); model = seq2seq.load("model.npz")
"""

from .checkpoint import CheckpointError, load
from .config import ATTENTIONS, ModelConfig
from .model import Seq2Seq
from .tasks import TASKS, make_dataset
from .training import evaluate, train

__all__ = ["ATTENTIONS", "TASKS", "CheckpointError", "load", "ModelConfig", "Seq2Seq", "evaluate", "make_dataset", "train"]
