"""The Transformer's decoder layer and feed-forward network (slides' "Transformer: Other
Components"), post-norm as in the paper; notebook 05 writes the encoder layer.

Shape letters in the comments: ``B`` batch, ``T`` target length, ``S`` source length, ``H``
heads, ``d`` model size, ``dff`` feed-forward size.
"""

from __future__ import annotations

import keras

from seqlab.layers.multi_head_attention import MultiHeadAttention


@keras.saving.register_keras_serializable(package="seqlab")
class PositionwiseFeedForward(keras.layers.Layer):
    """The position-wise feed-forward network: ``FFN(x) = max(0, x W1 + b1) W2 + b2``.

    Args:
        d_model: ``d``, the input and output size.
        dff: ``dff``, the inner (hidden) size.

    Call arguments:
        x: ``(B, T, d)``.

    Returns:
        ``(B, T, d)``.

    Example:
        >>> import numpy as np
        >>> layer = PositionwiseFeedForward(d_model=8, dff=32)
        >>> tuple(layer(np.zeros((2, 5, 8), "float32")).shape)
        (2, 5, 8)
    """

    def __init__(self, d_model, dff, **kwargs):
        super().__init__(**kwargs)
        self.d_model = int(d_model)
        self.dff = int(dff)
        self.inner_dense = keras.layers.Dense(self.dff, activation="relu", name="inner",
                                              dtype=self.dtype_policy)
        self.outer_dense = keras.layers.Dense(self.d_model, name="outer",
                                              dtype=self.dtype_policy)

    def build(self, input_shape):
        self.inner_dense.build(input_shape)
        self.outer_dense.build((*input_shape[:-1], self.dff))
        self.built = True

    def call(self, x):
        hidden = self.inner_dense(x)  # (B, T, dff)
        return self.outer_dense(hidden)  # (B, T, d)

    def get_config(self):
        return {**super().get_config(), "d_model": self.d_model, "dff": self.dff}


def head_size(d_model, num_heads):
    """``dk = d_model / num_heads``, or one clear error when the heads do not divide ``d_model``.

    Example:
        >>> head_size(128, 4)
        32
    """
    if d_model % num_heads:
        raise ValueError(f"d_model={d_model} must be divisible by num_heads={num_heads}.")
    return d_model // num_heads


def attention_sublayer(layer, name):
    """A :class:`MultiHeadAttention` with ``layer``'s heads and dtype."""
    return MultiHeadAttention(layer.num_heads, head_size(layer.d_model, layer.num_heads),
                              name=name, dtype=layer.dtype_policy)


@keras.saving.register_keras_serializable(package="seqlab")
class TransformerDecoderLayer(keras.layers.Layer):
    """One decoder layer: masked self-attention, cross-attention to the encoder, feed-forward.

    Three sub-layers, each inside a residual connection followed by layer normalisation::

        x = LayerNorm(x + Dropout(MaskedSelfAttention(x, x, x)))          # causal, eq. 16
        x = LayerNorm(x + Dropout(CrossAttention(x, context, context)))   # queries from x
        x = LayerNorm(x + Dropout(FeedForward(x)))

    The causal mask also hides the trailing target padding: no target padding mask is needed.

    Args:
        d_model: ``d``, the size of every position's vector.
        num_heads: ``H``; ``d_model`` must be a multiple of it.
        dff: inner size of the feed-forward network.
        dropout: rate of the residual dropout after each sub-layer.

    Call arguments:
        x: ``(B, T, d)``, the target prefix.
        context: ``(B, S, d)``, the encoder output.
        encoder_padding_mask: optional ``(B, S)`` padding mask of ``context``, True on real
            source tokens (keras-hub's ``TransformerDecoder`` name).
        use_causal_mask: hide the target positions after each position (True; False only
            for notebook 05's exercise).
        return_attention_scores: also return the weights, a dict with ``"self_attention"``
            ``(B, H, T, T)`` and ``"cross_attention"`` ``(B, H, T, S)``.
        training: enables dropout.
        context_mask: where Keras passes ``context``'s Keras mask ``(B, S)``; used when
            ``encoder_padding_mask`` is None.

    Returns:
        ``(B, T, d)``, or ``(output, scores)`` with ``return_attention_scores=True``.

    Example:
        >>> import numpy as np
        >>> layer = TransformerDecoderLayer(d_model=16, num_heads=2, dff=32)
        >>> x, context = np.zeros((2, 4, 16), "float32"), np.ones((2, 6, 16), "float32")
        >>> output, scores = layer(x, context, return_attention_scores=True)
        >>> tuple(output.shape), tuple(scores["cross_attention"].shape)
        ((2, 4, 16), (2, 2, 4, 6))
    """

    def __init__(self, d_model, num_heads, dff, dropout=0.1, **kwargs):
        super().__init__(**kwargs)
        self.d_model = int(d_model)
        self.num_heads = int(num_heads)
        self.dff = int(dff)
        self.dropout = float(dropout)
        self.self_attention = attention_sublayer(self, "masked_self_attention")
        self.self_attention_dropout, self.self_attention_norm = self._residual("self_attention")
        self.cross_attention = attention_sublayer(self, "cross_attention")
        self.cross_attention_dropout, self.cross_attention_norm = self._residual("cross_attention")
        self.feed_forward = PositionwiseFeedForward(self.d_model, self.dff, name="feed_forward",
                                                    dtype=self.dtype_policy)
        self.feed_forward_dropout, self.feed_forward_norm = self._residual("feed_forward")

    def _residual(self, name):
        """The Dropout and LayerNormalization of ``LN(x + Dropout(Sublayer(x)))``."""
        return (keras.layers.Dropout(self.dropout, dtype=self.dtype_policy),
                keras.layers.LayerNormalization(epsilon=1e-6, name=f"{name}_norm",
                                                dtype=self.dtype_policy))

    def build(self, x_shape, context_shape=None):
        context_shape = x_shape if context_shape is None else context_shape
        self.self_attention.build(x_shape, x_shape)
        self.self_attention_norm.build(x_shape)
        self.cross_attention.build(x_shape, context_shape)
        self.cross_attention_norm.build(x_shape)
        self.feed_forward.build(x_shape)
        self.feed_forward_norm.build(x_shape)
        self.built = True

    def compute_mask(self, x, context=None, mask=None):
        # The causal mask already hides trailing target padding; the loss masks it too.
        return None

    def call(self, x, context, encoder_padding_mask=None, use_causal_mask=True,
             return_attention_scores=False, training=None, context_mask=None):
        if encoder_padding_mask is None:
            encoder_padding_mask = context_mask  # (B, S) or None
        # Sub-layer 1: masked self-attention, position t sees the target positions <= t.
        attended, self_scores = self.self_attention(
            x, x, use_causal_mask=use_causal_mask, return_attention_scores=True,
            training=training,
        )  # (B, T, d), (B, H, T, T)
        x = self.self_attention_norm(x + self.self_attention_dropout(attended, training=training))
        # Sub-layer 2: cross-attention, queries from the target, keys and values from the source.
        attended, cross_scores = self.cross_attention(
            x, context, value_mask=encoder_padding_mask, return_attention_scores=True,
            training=training,
        )  # (B, T, d), (B, H, T, S)
        x = self.cross_attention_norm(x + self.cross_attention_dropout(attended, training=training))
        # Sub-layer 3: the same two-layer network at every position.
        transformed = self.feed_forward(x)  # (B, T, d)
        x = self.feed_forward_norm(x + self.feed_forward_dropout(transformed, training=training))
        scores = {"self_attention": self_scores, "cross_attention": cross_scores}
        return (x, scores) if return_attention_scores else x  # (B, T, d)

    def get_config(self):
        return {**super().get_config(), "d_model": self.d_model, "num_heads": self.num_heads,
                "dff": self.dff, "dropout": self.dropout}
