"""The Transformer's building blocks, from the slides' "Attention is All You Need" section.

Shape letters used in the comments: ``B`` batch, ``T`` query (target) length, ``S`` key/value
(source) length, ``H`` heads, ``dk`` key/query size per head, ``dv`` value size per head,
``d`` model size (``d_model``), ``V`` vocabulary.

- :func:`positional_encoding` — eq. 15 (sin on even dimensions, cos on odd ones, interleaved).
- :class:`PositionalEmbedding` — token embedding × √d_model + positional encoding.
- :func:`scaled_dot_product_attention` — eq. 16, softmax(QKᵀ/√dk)·V, with masks.
- :func:`padding_mask`, :func:`causal_mask` — the two masks of the slides ("Masked Multi-Head
  Attention": −∞ above the diagonal).
- :class:`MultiHeadAttention` — per-head linear projections of Q, K and V, eq. 16 on each head,
  concatenation, output projection (slides' fig. 18). :func:`copy_keras_mha_weights` loads a
  ``keras.layers.MultiHeadAttention``'s weights so the two can be compared number for number.
- :class:`TransformerEncoderLayer`, :class:`TransformerDecoderLayer` — residual connection +
  layer normalisation around every sub-layer (post-norm, as in the paper), position-wise
  feed-forward network Dense(dff, relu) → Dense(d_model).

Everything computes with ``keras.ops``.
"""

from __future__ import annotations

import math
import warnings

import keras
import numpy as np
from keras import ops

_PACKAGE = "seqlab"


# --------------------------------------------------------------------------------------------
# Positional encoding (eq. 15)
# --------------------------------------------------------------------------------------------


def positional_encoding(length, depth, dtype="float32"):
    """The sinusoidal positional encodings of eq. 15, a ``(length, depth)`` tensor.

    For position ``p`` and dimension ``i`` (both counted from 0), with ``d = depth``::

        PE[p, i] = sin(p / 10000^(i / d))          if i is even
        PE[p, i] = cos(p / 10000^((i - 1) / d))    if i is odd

    so dimensions ``2k`` and ``2k + 1`` share one frequency ``1 / 10000^(2k/d)`` and hold its
    sine and cosine side by side (interleaved, as on the slides — not the sin-block/cos-block
    concatenation some tutorials use). Because ``PE[p + k]`` is a fixed rotation of ``PE[p]``
    for each frequency pair, a linear map can turn "position p" into "position p + k": that is
    what lets attention find tokens by relative position.
    """
    positions = ops.expand_dims(ops.arange(length, dtype="float32"), 1)  # (length, 1)
    i = ops.expand_dims(ops.arange(depth, dtype="float32"), 0)  # (1, depth)
    odd = ops.mod(i, 2.0)  # 0 on even i, 1 on odd i
    exponent = (i - odd) / float(depth)  # i/d for even i, (i-1)/d for odd i
    angles = positions / ops.power(10000.0, exponent)  # (length, depth)
    encoding = ops.where(ops.equal(odd, 0.0), ops.sin(angles), ops.cos(angles))
    return ops.cast(encoding, dtype)


@keras.saving.register_keras_serializable(package=_PACKAGE)
class PositionalEmbedding(keras.layers.Layer):
    """Token embedding scaled by √d_model plus the positional encoding of eq. 15.

    ``(B, T) int -> (B, T, d)``. The scaling keeps the embedding and the encoding (values in
    [−1, 1]) on comparable scales, as in the paper (section 3.4). With ``mask_zero=True`` (the
    default) token id 0 is padding and the layer returns a ``(B, T)`` boolean mask through
    ``compute_mask``, so Keras passes it on to mask-aware layers that follow.
    """

    def __init__(self, vocab_size, d_model, mask_zero=True, embeddings_initializer="uniform",
                 **kwargs):
        super().__init__(**kwargs)
        self.vocab_size = int(vocab_size)
        self.d_model = int(d_model)
        self.mask_zero = bool(mask_zero)
        self.embeddings_initializer = keras.initializers.get(embeddings_initializer)
        self.embedding = keras.layers.Embedding(
            self.vocab_size, self.d_model, embeddings_initializer=self.embeddings_initializer,
            name="token_embedding",
        )
        self.supports_masking = True

    def build(self, input_shape):
        self.embedding.build(input_shape)
        self.built = True

    def call(self, token_ids):
        length = ops.shape(token_ids)[1]
        x = self.embedding(token_ids)  # (B, T, d)
        x = x * ops.cast(math.sqrt(self.d_model), x.dtype)
        return x + ops.cast(positional_encoding(length, self.d_model), x.dtype)[None]

    def compute_mask(self, token_ids, mask=None):
        if not self.mask_zero:
            return None
        return ops.not_equal(token_ids, 0)  # (B, T) True on real tokens

    def compute_output_shape(self, input_shape):
        return (*input_shape, self.d_model)

    def get_config(self):
        return {
            **super().get_config(),
            "vocab_size": self.vocab_size,
            "d_model": self.d_model,
            "mask_zero": self.mask_zero,
            "embeddings_initializer": keras.initializers.serialize(self.embeddings_initializer),
        }


# --------------------------------------------------------------------------------------------
# Masks
# --------------------------------------------------------------------------------------------


def padding_mask(token_ids, padding_id=0):
    """``(B, S) -> (B, S)`` boolean, True on real tokens and False on padding.

    To use it as an attention mask over keys, give it to :class:`MultiHeadAttention` as
    ``value_mask`` or broadcast it yourself: ``mask[:, None, None, :]`` is ``(B, 1, 1, S)``.
    """
    return ops.not_equal(token_ids, padding_id)


def causal_mask(length, key_length=None):
    """The look-ahead mask, ``(T, S)`` boolean: position ``t`` may attend to keys ``<= t``.

    True on and below the diagonal. The slides draw its effect on the scores: −∞ (here a
    large negative number) above the diagonal, so after the softmax a token never sees the
    tokens after it. ``key_length`` defaults to ``length`` (square mask).
    """
    key_length = length if key_length is None else key_length
    rows = ops.expand_dims(ops.arange(length), 1)  # (T, 1)
    columns = ops.expand_dims(ops.arange(key_length), 0)  # (1, S)
    return ops.greater_equal(rows, columns)


def large_negative(dtype):
    """The "−∞" written into masked scores, finite and safe for ``dtype``.

    −1e9 in float32/bfloat16/float64; −3e4 in float16, whose largest magnitude is 65504 (the
    value ``keras.layers.Softmax`` uses too). exp(−1e9 − max) is exactly 0 in float32.
    """
    if keras.backend.standardize_dtype(dtype) == "float16":
        return -3e4
    return -1e9


# --------------------------------------------------------------------------------------------
# Scaled dot-product attention (eq. 16)
# --------------------------------------------------------------------------------------------


def scaled_dot_product_attention(q, k, v, mask=None, dropout=None):
    """Eq. 16: ``Attention(Q, K, V) = softmax(Q Kᵀ / √dk) V``; returns ``(output, weights)``.

    A differentiable dictionary lookup: each query is compared with every key, the softmax
    turns the similarities into weights that sum to 1, and the output is the weighted mix of
    the values.

    Args:
        q: ``(..., T, dk)`` queries.
        k: ``(..., S, dk)`` keys.
        v: ``(..., S, dv)`` values.
        mask: optional, broadcastable to ``(..., T, S)``; True (or 1) where a query may attend
            to a key. Masked positions get :func:`large_negative` as their score before the
            softmax, so their weight is 0.
        dropout: optional callable applied to the weights before they mix the values (the
            returned weights are the ones before dropout).

    Returns:
        ``output`` ``(..., T, dv)`` and ``weights`` ``(..., T, S)``.
    """
    depth = ops.shape(q)[-1]
    scale = ops.cast(1.0 / ops.sqrt(ops.cast(depth, "float32")), q.dtype)
    scores = ops.matmul(q * scale, ops.swapaxes(k, -1, -2))  # (..., T, S)
    if mask is not None:
        scores = ops.where(ops.cast(mask, "bool"), scores,
                           ops.cast(large_negative(scores.dtype), scores.dtype))
    with warnings.catch_warnings():  # one key (a 1-token prefix) is legitimate, not a mistake
        warnings.filterwarnings("ignore", message=".*softmax over axis -1.*size 1")
        weights = ops.softmax(scores, axis=-1)  # (..., T, S), rows sum to 1
    mixing = dropout(weights) if dropout is not None else weights
    output = ops.matmul(mixing, v)  # (..., T, dv)
    return output, weights


# --------------------------------------------------------------------------------------------
# Multi-head attention (slides' fig. 18)
# --------------------------------------------------------------------------------------------


def dense_2d(layer, x):
    """Apply a ``Dense`` layer to ``(..., d_in)`` through a 2-D ``(N, d_in)`` view.

    Mathematically the same as ``layer(x)``; it exists for speed: on TensorFlow's CPU kernels a
    2-D ``MatMul`` (which the graph optimiser fuses with the bias add) is about twice as fast as
    the broadcasting batched product a rank-3 input gets.
    """
    leading = ops.shape(x)[:-1]
    flat = layer(ops.reshape(x, (-1, ops.shape(x)[-1])))  # (N, d_out)
    return ops.reshape(flat, (*leading, ops.shape(flat)[-1]))



@keras.saving.register_keras_serializable(package=_PACKAGE)
class MultiHeadAttention(keras.layers.Layer):
    """Multi-head attention built from :func:`scaled_dot_product_attention`.

    ``head_h = Attention(Q W_h^Q, K W_h^K, V W_h^V)``; ``MultiHead(Q, K, V) = Concat(head_1, …,
    head_H) W^O``. The H per-head projections ``W_h^Q`` (``d × dk``) are stored side by side as
    one ``Dense(H·dk)`` kernel ``(d, H·dk)`` — columns ``h·dk … (h+1)·dk − 1`` are head ``h`` —
    which computes all heads in one matrix product; likewise for K and V. ``W^O`` is a
    ``Dense(d_out)`` kernel ``(H·dv, d_out)`` applied to the concatenated heads.

    The call signature follows ``keras.layers.MultiHeadAttention`` (``query``, ``value``,
    ``key``, masks, ``use_causal_mask``, ``return_attention_scores``), so the two are
    interchangeable; :func:`copy_keras_mha_weights` maps Keras's weights onto this layer.

    The latest attention weights ``(B, H, T, S)`` stay in ``last_attention_weights`` for
    plotting (meaningful after an eager call).
    """

    def __init__(self, num_heads, key_dim, value_dim=None, dropout=0.0, use_bias=True,
                 output_shape=None, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", **kwargs):
        super().__init__(**kwargs)
        self.num_heads = int(num_heads)
        self.key_dim = int(key_dim)
        self.value_dim = int(value_dim) if value_dim else self.key_dim
        self.dropout = float(dropout)
        self.use_bias = bool(use_bias)
        self._output_dim = int(output_shape) if output_shape else None
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.dropout_layer = keras.layers.Dropout(self.dropout)
        self.last_attention_weights = None
        self.supports_masking = True  # the output keeps the query's Keras mask, as in Keras

    def _dense(self, units, name):
        return keras.layers.Dense(
            units, use_bias=self.use_bias, kernel_initializer=self.kernel_initializer,
            bias_initializer=self.bias_initializer, name=name,
        )

    def build(self, query_shape, value_shape, key_shape=None):
        key_shape = value_shape if key_shape is None else key_shape
        output_dim = self._output_dim or query_shape[-1]
        self.query_dense = self._dense(self.num_heads * self.key_dim, "query")
        self.key_dense = self._dense(self.num_heads * self.key_dim, "key")
        self.value_dense = self._dense(self.num_heads * self.value_dim, "value")
        self.output_dense = self._dense(output_dim, "attention_output")
        self.query_dense.build(query_shape)
        self.key_dense.build(key_shape)
        self.value_dense.build(value_shape)
        self.output_dense.build((*query_shape[:-1], self.num_heads * self.value_dim))
        self.built = True

    def _split_heads(self, x, depth):
        # (B, L, H·depth) -> (B, L, H, depth) -> (B, H, L, depth)
        batch, length = ops.shape(x)[0], ops.shape(x)[1]
        x = ops.reshape(x, (batch, length, self.num_heads, depth))
        return ops.transpose(x, (0, 2, 1, 3))

    def _merge_heads(self, x):
        # (B, H, T, dv) -> (B, T, H, dv) -> (B, T, H·dv): the concatenation of the heads
        x = ops.transpose(x, (0, 2, 1, 3))
        batch, length = ops.shape(x)[0], ops.shape(x)[1]
        return ops.reshape(x, (batch, length, self.num_heads * self.value_dim))

    @staticmethod
    def _combine_masks(query, value, query_mask, value_mask, key_mask, attention_mask,
                       use_causal_mask):
        """One boolean mask broadcastable to ``(B, H, T, S)``, or None (same rules as Keras)."""
        mask = None

        def both(a, b):
            return b if a is None else ops.logical_and(a, b)

        if query_mask is not None:
            mask = ops.cast(query_mask, "bool")[:, None, :, None]  # (B, 1, T, 1)
        if value_mask is not None:
            mask = both(mask, ops.cast(value_mask, "bool")[:, None, None, :])  # (B, 1, 1, S)
        if key_mask is not None:
            mask = both(mask, ops.cast(key_mask, "bool")[:, None, None, :])
        if use_causal_mask:
            causal = causal_mask(ops.shape(query)[1], ops.shape(value)[1])
            mask = both(mask, causal[None, None])  # (1, 1, T, S)
        if attention_mask is not None:
            attention_mask = ops.cast(attention_mask, "bool")
            if len(attention_mask.shape) == 3:  # (B, T, S) as in Keras -> (B, 1, T, S)
                attention_mask = attention_mask[:, None]
            mask = both(mask, attention_mask)
        return mask

    def call(self, query, value, key=None, query_mask=None, value_mask=None, key_mask=None,
             attention_mask=None, return_attention_scores=False, training=None,
             use_causal_mask=False):
        key = value if key is None else key
        q = self._split_heads(dense_2d(self.query_dense, query), self.key_dim)  # (B, H, T, dk)
        k = self._split_heads(dense_2d(self.key_dense, key), self.key_dim)  # (B, H, S, dk)
        v = self._split_heads(dense_2d(self.value_dense, value), self.value_dim)  # (B, H, S, dv)
        mask = self._combine_masks(query, value, query_mask, value_mask, key_mask,
                                   attention_mask, use_causal_mask)

        def dropout(weights):
            return self.dropout_layer(weights, training=training)

        heads, weights = scaled_dot_product_attention(
            q, k, v, mask, dropout=dropout if self.dropout > 0 else None
        )  # (B, H, T, dv), (B, H, T, S)
        output = dense_2d(self.output_dense, self._merge_heads(heads))  # (B, T, d_out)
        self.last_attention_weights = weights
        if return_attention_scores:
            return output, weights
        return output

    def compute_output_shape(self, query_shape, value_shape, key_shape=None):
        return (*query_shape[:-1], self._output_dim or query_shape[-1])

    def get_config(self):
        return {
            **super().get_config(),
            "num_heads": self.num_heads,
            "key_dim": self.key_dim,
            "value_dim": self.value_dim,
            "dropout": self.dropout,
            "use_bias": self.use_bias,
            "output_shape": self._output_dim,
            "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
            "bias_initializer": keras.initializers.serialize(self.bias_initializer),
        }


def copy_keras_mha_weights(source, target):
    """Copy a built ``keras.layers.MultiHeadAttention``'s weights into our built layer.

    Layout mapping. Keras keeps each projection as an ``EinsumDense`` whose kernel has one axis
    per head:

    =================  ============================  ===========================
    projection         Keras kernel / bias           ours (``Dense``) kernel / bias
    =================  ============================  ===========================
    query, key         ``(d, H, dk)`` / ``(H, dk)``  ``(d, H·dk)`` / ``(H·dk,)``
    value              ``(d, H, dv)`` / ``(H, dv)``  ``(d, H·dv)`` / ``(H·dv,)``
    output             ``(H, dv, d)`` / ``(d,)``     ``(H·dv, d)`` / ``(d,)``
    =================  ============================  ===========================

    A C-order reshape is all it takes: index ``(h, j)`` of the head axes becomes column (or
    row) ``h·dk + j``, which is where :meth:`MultiHeadAttention._split_heads` reads head ``h``.

    Returns:
        ``target``, for chaining.
    """
    pairs = (
        (source._query_dense, target.query_dense),
        (source._key_dense, target.key_dense),
        (source._value_dense, target.value_dense),
        (source._output_dense, target.output_dense),
    )
    if source.num_heads != target.num_heads or source.key_dim != target.key_dim:
        raise ValueError(
            f"Heads/key_dim differ: Keras has {source.num_heads}×{source.key_dim}, ours "
            f"{target.num_heads}×{target.key_dim}."
        )
    for keras_layer, our_layer in pairs:
        values = [np.asarray(w) for w in keras_layer.get_weights()]
        shapes = [tuple(w.shape) for w in our_layer.weights]
        our_layer.set_weights([w.reshape(shape) for w, shape in zip(values, shapes, strict=True)])
    return target


# --------------------------------------------------------------------------------------------
# Encoder and decoder layers ("Transformer: Other Components")
# --------------------------------------------------------------------------------------------


class _FeedForward(keras.layers.Layer):
    """Position-wise feed-forward network: Dense(dff, relu) → Dense(d_model)."""

    def __init__(self, d_model, dff, **kwargs):
        super().__init__(**kwargs)
        self.inner = keras.layers.Dense(dff, activation="relu", name="inner")
        self.outer = keras.layers.Dense(d_model, name="outer")

    def build(self, input_shape):
        self.inner.build(input_shape)
        self.outer.build((*input_shape[:-1], self.inner.units))
        self.built = True

    def call(self, x):
        # (B, T, d) -> (B, T, dff) -> (B, T, d), through 2-D views (see dense_2d)
        return dense_2d(self.outer, dense_2d(self.inner, x))


def _check_heads(d_model, num_heads):
    if d_model % num_heads:
        raise ValueError(f"d_model={d_model} must be divisible by num_heads={num_heads}.")
    return d_model // num_heads


class _TransformerLayer(keras.layers.Layer):
    """What the encoder and decoder layers share: hyperparameters, config, feed-forward block,
    and one LayerNormalization + Dropout per residual sub-layer (``norm1``/``dropout1`` …).

    Subclasses set ``residual_blocks`` and create their attention with :meth:`_attention`.
    """

    residual_blocks = 2

    def __init__(self, d_model, num_heads, dff, dropout=0.1, attention_dropout=0.0,
                 layer_norm_epsilon=1e-6, **kwargs):
        super().__init__(**kwargs)
        self.d_model = int(d_model)
        self.num_heads = int(num_heads)
        self.dff = int(dff)
        self.dropout = float(dropout)
        self.attention_dropout = float(attention_dropout)
        self.layer_norm_epsilon = float(layer_norm_epsilon)
        self.key_dim = _check_heads(self.d_model, self.num_heads)
        self.feed_forward = _FeedForward(self.d_model, self.dff, name="feed_forward")
        for block in range(1, self.residual_blocks + 1):
            setattr(self, f"norm{block}", keras.layers.LayerNormalization(
                epsilon=self.layer_norm_epsilon, name=f"norm{block}"))
            setattr(self, f"dropout{block}", keras.layers.Dropout(self.dropout))
        self.supports_masking = True

    def _attention(self, name):
        return MultiHeadAttention(self.num_heads, self.key_dim, dropout=self.attention_dropout,
                                  name=name)

    def get_config(self):
        return {
            **super().get_config(),
            "d_model": self.d_model,
            "num_heads": self.num_heads,
            "dff": self.dff,
            "dropout": self.dropout,
            "attention_dropout": self.attention_dropout,
            "layer_norm_epsilon": self.layer_norm_epsilon,
        }


@keras.saving.register_keras_serializable(package=_PACKAGE)
class TransformerEncoderLayer(_TransformerLayer):
    """One encoder layer: ``x = LN(x + Dropout(SelfAttention(x)))``, ``x = LN(x + Dropout(FFN(x)))``.

    ``(B, S, d) -> (B, S, d)``. ``mask`` is the ``(B, S)`` source padding mask (Keras fills it
    in from :class:`PositionalEmbedding`); padded keys get zero attention weight. Self-attention
    weights ``(B, H, S, S)`` are kept in ``last_attention_weights``.
    """

    residual_blocks = 2

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.self_attention = self._attention("self_attention")

    def build(self, input_shape):
        self.self_attention.build(input_shape, input_shape)
        self.feed_forward.build(input_shape)
        self.norm1.build(input_shape)
        self.norm2.build(input_shape)
        self.built = True

    @property
    def last_attention_weights(self):
        return self.self_attention.last_attention_weights

    def call(self, x, mask=None, training=None):
        attended = self.self_attention(x, x, value_mask=mask, training=training)  # (B, S, d)
        x = self.norm1(x + self.dropout1(attended, training=training))
        x = self.norm2(x + self.dropout2(self.feed_forward(x), training=training))
        return x  # (B, S, d)

    def compute_output_shape(self, input_shape):
        return input_shape



@keras.saving.register_keras_serializable(package=_PACKAGE)
class TransformerDecoderLayer(_TransformerLayer):
    """One decoder layer: masked self-attention, cross-attention over the encoder output, FFN.

    ``x = LN(x + Dropout(CausalSelfAttention(x)))``;
    ``x = LN(x + Dropout(CrossAttention(query=x, value=context)))``;
    ``x = LN(x + Dropout(FFN(x)))``. ``(B, T, d), (B, S, d) -> (B, T, d)``.

    The causal mask keeps position ``t`` from seeing targets after ``t``; that also hides the
    trailing target padding from every real position, so no target padding mask is needed
    (padded positions are excluded from the loss). ``context_mask`` ``(B, S)`` hides source
    padding from the cross-attention.

    ``last_attention_weights``: cross-attention weights ``(B, H, T, S)`` of the latest call
    (the per-head heatmaps); ``last_self_attention_weights``: ``(B, H, T, T)``.
    """

    residual_blocks = 3

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.self_attention = self._attention("masked_self_attention")
        self.cross_attention = self._attention("cross_attention")

    def compute_mask(self, x, context=None, mask=None):
        # The causal mask already hides trailing target padding; the loss masks it too.
        return None

    def build(self, x_shape, context_shape=None):
        context_shape = x_shape if context_shape is None else context_shape
        self.self_attention.build(x_shape, x_shape)
        self.cross_attention.build(x_shape, context_shape)
        self.feed_forward.build(x_shape)
        for norm in (self.norm1, self.norm2, self.norm3):
            norm.build(x_shape)
        self.built = True

    @property
    def last_attention_weights(self):
        return self.cross_attention.last_attention_weights

    @property
    def last_self_attention_weights(self):
        return self.self_attention.last_attention_weights

    def call(self, x, context, context_mask=None, training=None):
        attended = self.self_attention(x, x, use_causal_mask=True, training=training)
        x = self.norm1(x + self.dropout1(attended, training=training))  # (B, T, d)
        attended = self.cross_attention(x, context, value_mask=context_mask, training=training)
        x = self.norm2(x + self.dropout2(attended, training=training))  # (B, T, d)
        x = self.norm3(x + self.dropout3(self.feed_forward(x), training=training))
        return x  # (B, T, d)

    def compute_output_shape(self, x_shape, context_shape=None):
        return x_shape

