"""The layers every trained model shares, each backward beside its forward.

Embedding, a dense layer, layer norm, an MLP block, softmax cross-entropy,
Adam with a warm-up and cosine schedule, and gradient-norm clipping. The
seq2seq models and the transformer both build on these; nothing here knows
about either.

>>> import numpy as np
>>> from attention_edu.layers.linear import linear
>>> linear(np.ones((1, 2)), np.ones((3, 2)), np.zeros(3))
array([[2., 2., 2.]])
"""
