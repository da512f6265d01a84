"""The transformer's configuration and the shapes of its parameters.

A :class:`TransformerConfig` names the task (which fixes the vocabulary and
the longest sequence), the depth L, the heads H, the width d of the residual
stream, whether blocks carry an MLP, and whether attention is causal. The
command line's default configuration of each task is :data:`DEFAULT_CONFIGS`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from .tasks import LENGTHS, TASKS, vocabulary

__all__ = ["TransformerConfig", "DEFAULT_CONFIGS", "parameter_shapes"]


@dataclass(frozen=True)
class TransformerConfig:
    """Task, depth, heads, width, MLP and mask of a decoder-only transformer.

    Examples
    --------
    >>> config = TransformerConfig("sort", layers=2, heads=2, d_model=16)
    >>> config.vocab_size, config.max_tokens
    (11, 26)
    """

    task: str
    layers: int = 2
    heads: int = 4
    d_model: int = 64
    mlp: bool = True
    causal: bool = True
    shift: int = 0


    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise ValueError(f"TransformerConfig: unknown task {self.task!r}; choose one of {', '.join(TASKS)}")
        for name in ("layers", "heads", "d_model"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"TransformerConfig: {name} must be a positive int, got {value!r}")
        if isinstance(self.shift, bool) or not isinstance(self.shift, int) or self.shift < 0:
            raise ValueError(f"TransformerConfig: shift must be an int >= 0, got {self.shift!r}")
        if self.d_model % self.heads:
            raise ValueError(f"TransformerConfig: d_model = {self.d_model} does not split into "
                             f"heads = {self.heads} equal heads")

    @property
    def vocabulary(self) -> str:
        return vocabulary(self.task)

    @property
    def vocab_size(self) -> int:
        return len(self.vocabulary)

    @property
    def max_source(self) -> int:
        return LENGTHS[self.task][1]

    @property
    def max_tokens(self) -> int:
        """Tokens of the longest whole sequence ``|source|target``: 2·n + 2."""
        return 2 * self.max_source + 2

    @property
    def positions(self) -> int:
        """Rows of the position table: the longest sequence plus the training shift."""
        return self.max_tokens + self.shift

    def to_dict(self) -> dict:
        return asdict(self)


#: The command line's model of each task.
DEFAULT_CONFIGS = {
    "sort": TransformerConfig("sort", layers=2, heads=4, d_model=32, mlp=True),
    "induction": TransformerConfig("induction", layers=2, heads=4, d_model=32, mlp=False),
}


def parameter_shapes(config: TransformerConfig) -> dict[str, tuple[int, ...]]:
    """Every parameter's name and shape, in a fixed order.

    Examples
    --------
    >>> shapes = parameter_shapes(TransformerConfig("induction", layers=1, heads=2, d_model=8, mlp=False))
    >>> shapes["token_embedding"], shapes["blocks.0.W_Q"], "blocks.0.mlp.W1" in shapes
    ((21, 8), (8, 8), False)
    """
    V, d, T = config.vocab_size, config.d_model, config.max_tokens
    shapes: dict[str, tuple[int, ...]] = {"token_embedding": (V, d), "position_embedding": (config.positions, d)}
    for layer in range(config.layers):
        block = {"ln1.gamma": (d,), "ln1.beta": (d,), "W_Q": (d, d), "W_K": (d, d), "W_V": (d, d),
                 "W_O": (d, d)}
        if config.mlp:
            block.update({"ln2.gamma": (d,), "ln2.beta": (d,), "mlp.W1": (4 * d, d), "mlp.b1": (4 * d,),
                          "mlp.W2": (d, 4 * d), "mlp.b2": (d,)})
        shapes.update({f"blocks.{layer}.{name}": shape for name, shape in block.items()})
    shapes.update({"ln_f.gamma": (d,), "ln_f.beta": (d,), "head.W": (V, d), "head.b": (V,)})
    return shapes
