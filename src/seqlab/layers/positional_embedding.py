"""Positional information for the Transformer (slides' "Positional Encodings", eq. 15).

Shape letters in the comments: ``B`` batch, ``T`` sequence length, ``d`` model size.
"""

from __future__ import annotations

import math

import keras
from keras import ops


def positional_encoding(length, depth):
    """The sinusoidal positional encodings of eq. 15, a float32 ``(length, depth)`` tensor.

    For position ``p`` and dimension ``i`` (both counted from 0), with ``d = depth``::

        PE[p, i] = sin(p / 10000^(i / d))          if i is even
        PE[p, i] = cos(p / 10000^((i - 1) / d))    if i is odd

    Sine and cosine of each frequency are interleaved, as on the slides.

    Args:
        length: number of positions (an int, or a scalar tensor inside a traced function).
        depth: size ``d`` of each encoding.

    Example:
        >>> encoding = positional_encoding(50, 16)
        >>> tuple(encoding.shape)
        (50, 16)
        >>> [round(float(v), 4) for v in encoding[1, :2]]  # sin 1, cos 1
        [0.8415, 0.5403]
    """
    positions = ops.expand_dims(ops.arange(length, dtype="float32"), 1)  # (length, 1)
    i = ops.expand_dims(ops.arange(depth, dtype="float32"), 0)  # (1, depth)
    odd = ops.mod(i, 2.0)  # 0 on even i, 1 on odd i
    exponent = (i - odd) / float(depth)  # i/d for even i, (i-1)/d for odd i
    angles = positions / ops.power(10000.0, exponent)  # (length, depth)
    return ops.where(ops.equal(odd, 0.0), ops.sin(angles), ops.cos(angles))


@keras.saving.register_keras_serializable(package="seqlab")
class PositionalEmbedding(keras.layers.Layer):
    """Token embedding scaled by √d_model plus the positional encoding of eq. 15.

    The scaling is the paper's (section 3.4). With ``mask_zero=True`` token id 0 is padding and
    ``compute_mask`` gives the ``(B, T)`` mask Keras passes on.

    Args:
        vocab_size: number of token ids.
        d_model: embedding size ``d``.
        mask_zero: whether id 0 is padding (masked).

    Call arguments:
        token_ids: ``(B, T)`` int ids.
        start_position: position of the first token (0; step-by-step decoding passes the
            index of the new token, so it gets the encoding of its place in the sentence).

    Returns:
        ``(B, T, d)`` embeddings.

    Example:
        >>> import numpy as np
        >>> layer = PositionalEmbedding(vocab_size=30, d_model=8)
        >>> tuple(layer(np.array([[4, 5, 6, 0]])).shape)
        (1, 4, 8)
        >>> np.asarray(layer.compute_mask(np.array([[4, 5, 6, 0]]))).tolist()
        [[True, True, True, False]]
    """

    def __init__(self, vocab_size, d_model, mask_zero=True, **kwargs):
        super().__init__(**kwargs)
        self.vocab_size = int(vocab_size)
        self.d_model = int(d_model)
        self.mask_zero = bool(mask_zero)
        self.embedding = keras.layers.Embedding(self.vocab_size, self.d_model,
                                                name="token_embedding", dtype=self.dtype_policy)
        self.supports_masking = True

    def build(self, input_shape):
        self.embedding.build(input_shape)
        self.built = True

    def call(self, token_ids, start_position=0):
        length = ops.shape(token_ids)[1]
        x = self.embedding(token_ids)  # (B, T, d)
        x = x * ops.cast(math.sqrt(self.d_model), x.dtype)
        encoding = positional_encoding(start_position + length, self.d_model)  # (start + T, d)
        return x + ops.cast(encoding[start_position:], x.dtype)[None]  # (B, T, d)

    def compute_mask(self, token_ids, mask=None):
        if not self.mask_zero:
            return None
        return ops.not_equal(token_ids, 0)  # (B, T) True on real tokens

    def get_config(self):
        return {**super().get_config(), "vocab_size": self.vocab_size, "d_model": self.d_model,
                "mask_zero": self.mask_zero}
