"""What a model is: its task, attention, sizes and alphabets, and the shapes of its parameters.

A :class:`ModelConfig` plus one seed fixes every parameter: they are drawn in
the order of :func:`parameter_shapes` from one ``numpy.random.Generator`` on
the host and moved to the backend once, so a seed gives the same model on
NumPy, CuPy and ``array_api_strict``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ..backend import Backend
from ..backend import host_numpy as np
from .kinds import ATTENTIONS, KINDS, AttentionKind, kind_of
from .tasks import ALPHABETS, REVERSE_LENGTHS, TASKS
from .vocabulary import Vocabulary

__all__ = ["ATTENTIONS", "FORMAT", "ModelConfig", "parameter_shapes", "initial_parameters"]

#: The format tag a checkpoint's config carries (2: Bahdanau reads [h_i ; emb(x_i)]).
FORMAT = "attention_edu.seq2seq/2"


@dataclass(frozen=True)
class ModelConfig:
    """Sizes and alphabets of a seq2seq model (JSON-able: it is saved with the weights).

    Examples
    --------
    >>> config = ModelConfig.for_task("reverse", "bahdanau")
    >>> config.hidden, config.source_symbols, config.max_output
    (32, 'abcdefghij', 48)
    """

    task: str
    attention: str
    source_symbols: str
    target_symbols: str
    embedding: int = 16
    hidden: int = 32
    attention_size: int = 16
    max_output: int = 48

    def __post_init__(self) -> None:
        kind_of(self.attention, who="ModelConfig")
        for name in ("embedding", "hidden", "attention_size", "max_output"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"ModelConfig: {name} must be a positive int, got {value!r}")
        if self.hidden % 2:
            raise ValueError(f"ModelConfig: hidden must be even (each encoder direction has "
                             f"hidden/2 units), got {self.hidden}")

    @classmethod
    def for_task(cls, task: str, attention: str, **sizes: Any) -> ModelConfig:
        """The configuration for one of :data:`~attention_edu.seq2seq.tasks.TASKS`."""
        if task not in TASKS:
            raise ValueError(f"ModelConfig: unknown task {task!r}; choose one of {', '.join(TASKS)}")
        source, target = ALPHABETS[task]
        max_output = 2 * REVERSE_LENGTHS[1] if task == "reverse" else 10
        return cls(task, attention, source, target, max_output=max_output, **sizes)

    @property
    def kind(self) -> AttentionKind:
        """This model's entry of :data:`~attention_edu.seq2seq.kinds.KINDS`."""
        return KINDS[self.attention]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def source_vocabulary(self) -> Vocabulary:
        return Vocabulary(self.source_symbols)

    @property
    def target_vocabulary(self) -> Vocabulary:
        return Vocabulary(self.target_symbols)


def parameter_shapes(config: ModelConfig) -> dict[str, tuple[int, ...]]:
    """Every parameter's name and shape, in the order they are drawn.

    Examples
    --------
    >>> shapes = parameter_shapes(ModelConfig.for_task("reverse", "luong-general"))
    >>> shapes["encoder.forward.W_ih"], shapes["attention.W"], shapes["output.W"]
    ((48, 16), (32, 32), (13, 64))
    >>> parameter_shapes(ModelConfig.for_task("reverse", "bahdanau"))["output.W"]   # [s_t ; h ; emb(x)]
    (13, 80)
    """
    d_e, d, d_a = config.embedding, config.hidden, config.attention_size
    kind = config.kind
    half = d // 2
    shapes: dict[str, tuple[int, ...]] = {
        "src_embedding": (config.source_vocabulary.size, d_e),
        "tgt_embedding": (config.target_vocabulary.size, d_e),
    }
    for direction in ("forward", "backward"):
        shapes.update({f"encoder.{direction}.W_ih": (3 * half, d_e),
                       f"encoder.{direction}.W_hh": (3 * half, half),
                       f"encoder.{direction}.b_ih": (3 * half,),
                       f"encoder.{direction}.b_hh": (3 * half,)})
    shapes.update({"decoder.W_ih": (3 * d, kind.decoder_input(d, d_e)), "decoder.W_hh": (3 * d, d),
                   "decoder.b_ih": (3 * d,), "decoder.b_hh": (3 * d,)})
    shapes.update(kind.parameters(d, d_e, d_a))
    shapes.update({"output.W": (config.target_vocabulary.size, d + kind.memory_width(d, d_e)),
                   "output.b": (config.target_vocabulary.size,)})
    return shapes


def initial_parameters(config: ModelConfig, seed: int, backend: Backend) -> dict[str, Any]:
    """Parameters drawn on the host from one generator seeded with ``seed``, then moved once.

    Embeddings ~ N(0, 1); matrices Glorot-normal; ``v`` ~ N(0, 1/d_a); biases 0.
    """
    rng = np.random.default_rng(seed)
    params = {}
    for name, shape in parameter_shapes(config).items():
        if name.endswith("embedding"):
            host = rng.standard_normal(shape)
        elif len(shape) == 2:
            host = rng.standard_normal(shape) * np.sqrt(2.0 / (shape[0] + shape[1]))
        elif name.endswith(".v"):
            host = rng.standard_normal(shape) / np.sqrt(shape[0])
        else:
            host = np.zeros(shape)
        params[name] = backend.asarray(host)
    return params
