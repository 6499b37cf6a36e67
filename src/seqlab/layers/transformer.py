"""The Transformer's building blocks, from the slides' "Attention is All You Need" section.

Shape letters used in the comments: ``B`` batch, ``T`` query (target) length, ``S`` key/value
(source) length, ``H`` heads, ``dk`` key/query size per head, ``dv`` value size per head,
``d`` model size (``d_model``), ``dff`` feed-forward size, ``L`` length of a decoding cache.

- :func:`positional_encoding` — eq. 15 (sin on even dimensions, cos on odd ones, interleaved).
- :class:`PositionalEmbedding` — token embedding × √d_model + positional encoding.
- :func:`scaled_dot_product_attention` — eq. 16, softmax(QKᵀ/√dk)·V, masked with
  :func:`seqlab.layers.masking.masked_softmax` (the package's one masking rule).
- :func:`padding_mask`, :func:`causal_mask` — the two masks of the slides ("Masked Multi-Head
  Attention": −∞ above the diagonal).
- :class:`MultiHeadAttention` — per-head linear projections of Q, K and V, eq. 16 on each head,
  concatenation, output projection (slides' fig. 18), with an optional key/value cache for
  step-by-step decoding. :func:`copy_keras_mha_weights` loads a ``keras.layers.MultiHeadAttention``'s
  weights so the two can be compared number for number.
- :class:`PositionwiseFeedForward` — Dense(dff, relu) → Dense(d_model) at every position.
- :class:`TransformerEncoderLayer`, :class:`TransformerDecoderLayer` — residual connection +
  layer normalisation around every sub-layer (post-norm, as in the paper).

Attention weights are *returned* (``return_attention_scores=True``), never kept as layer state.
Everything computes with ``keras.ops``.
"""

from __future__ import annotations

import math
import warnings

import keras
import numpy as np
from keras import ops

from seqlab.layers.masking import masked_softmax

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

    Args:
        length: number of positions (an int, or a scalar tensor inside a traced function).
        depth: size ``d`` of each encoding.
        dtype: dtype of the result.

    Returns:
        ``(length, depth)`` tensor.

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
    encoding = ops.where(ops.equal(odd, 0.0), ops.sin(angles), ops.cos(angles))
    return ops.cast(encoding, dtype)


@keras.saving.register_keras_serializable(package=_PACKAGE)
class PositionalEmbedding(keras.layers.Layer):
    """Token embedding scaled by √d_model plus the positional encoding of eq. 15.

    The scaling keeps the embedding and the encoding (values in [−1, 1]) on comparable scales,
    as in the paper (section 3.4). With ``mask_zero=True`` token id 0 is padding and the layer
    returns a ``(B, T)`` boolean mask through ``compute_mask``, so Keras passes it on to the
    mask-aware layers that follow.

    Args:
        vocab_size: number of token ids.
        d_model: embedding size ``d``.
        mask_zero: whether id 0 is padding (masked).
        embeddings_initializer: initializer of the ``(vocab_size, d)`` table.

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

    def __init__(self, vocab_size, d_model, mask_zero=True, embeddings_initializer="uniform",
                 **kwargs):
        super().__init__(**kwargs)
        self.vocab_size = int(vocab_size)
        self.d_model = int(d_model)
        self.mask_zero = bool(mask_zero)
        self.embeddings_initializer = keras.initializers.get(embeddings_initializer)
        self.embedding = keras.layers.Embedding(
            self.vocab_size, self.d_model, embeddings_initializer=self.embeddings_initializer,
            name="token_embedding", dtype=self.dtype_policy,
        )
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

    Example:
        >>> import numpy as np
        >>> np.asarray(padding_mask(np.array([[3, 1, 0, 0]]))).tolist()
        [[True, True, False, False]]
    """
    return ops.not_equal(token_ids, padding_id)


def causal_mask(length, key_length=None, query_start=0):
    """The look-ahead mask, ``(T, S)`` boolean: query ``t`` may attend to keys ``<= t``.

    True on and below the diagonal. The slides draw its effect on the scores: −∞ above the
    diagonal, so after the softmax a token never sees the tokens after it.

    Args:
        length: ``T``, the number of queries.
        key_length: ``S``, the number of keys (defaults to ``length``: a square mask).
        query_start: position of the first query among the keys (0; a decoder that feeds one
            new token at a time against a cache of ``S`` keys passes the token's index).

    Example:
        >>> np.asarray(causal_mask(3)).astype(int).tolist()
        [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
        >>> np.asarray(causal_mask(1, 4, query_start=2)).astype(int).tolist()
        [[1, 1, 1, 0]]
    """
    key_length = length if key_length is None else key_length
    rows = ops.expand_dims(ops.arange(length) + query_start, 1)  # (T, 1) query positions
    columns = ops.expand_dims(ops.arange(key_length), 0)  # (1, S) key positions
    return ops.greater_equal(rows, columns)  # (T, S)


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
            to a key. Masked keys get exactly zero weight
            (:func:`seqlab.layers.masking.masked_softmax`); a query with no visible key gets
            all-zero weights and a zero output.
        dropout: optional callable applied to the weights before they mix the values (the
            returned weights are the ones before dropout).

    Returns:
        ``output`` ``(..., T, dv)`` and ``weights`` ``(..., T, S)``.

    Example:
        >>> import numpy as np
        >>> q, k, v = np.ones((1, 2, 4), "float32"), np.ones((1, 3, 4), "float32"), np.eye(3, dtype="float32")[None]
        >>> output, weights = scaled_dot_product_attention(q, k, v, mask=np.array([True, True, False]))
        >>> np.asarray(weights[0, 0]).tolist()
        [0.5, 0.5, 0.0]
    """
    depth = ops.shape(q)[-1]
    scale = ops.cast(1.0 / ops.sqrt(ops.cast(depth, "float32")), q.dtype)
    scores = ops.matmul(q * scale, ops.swapaxes(k, -1, -2))  # (..., T, S)
    with warnings.catch_warnings():  # one key (a 1-token prefix) is legitimate, not a mistake
        warnings.filterwarnings("ignore", message=".*softmax over axis -1.*size 1")
        weights = masked_softmax(scores, mask, axis=-1)  # (..., T, S), rows sum to 1
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

    Example:
        >>> import numpy as np
        >>> layer = keras.layers.Dense(5)
        >>> tuple(dense_2d(layer, np.zeros((2, 3, 4), "float32")).shape)
        (2, 3, 5)
    """
    leading = ops.shape(x)[:-1]
    flat = layer(ops.reshape(x, (-1, ops.shape(x)[-1])))  # (N, d_out)
    return ops.reshape(flat, (*leading, ops.shape(flat)[-1]))  # (..., d_out)


@keras.saving.register_keras_serializable(package=_PACKAGE)
class MultiHeadAttention(keras.layers.Layer):
    """Multi-head attention built from :func:`scaled_dot_product_attention` (fig. 18, eq. 16).

    ``head_h = Attention(Q W_h^Q, K W_h^K, V W_h^V)``; ``MultiHead(Q, K, V) = Concat(head_1, …,
    head_H) W^O``. The H per-head projections ``W_h^Q`` (``d × dk``) are stored side by side as
    one ``Dense(H·dk)`` kernel ``(d, H·dk)`` — columns ``h·dk … (h+1)·dk − 1`` are head ``h`` —
    which computes all heads in one matrix product; likewise for K and V. ``W^O`` is a
    ``Dense(d_out)`` kernel ``(H·dv, d_out)`` applied to the concatenated heads.

    The call signature follows ``keras.layers.MultiHeadAttention``, so the two are
    interchangeable; :func:`copy_keras_mha_weights` maps Keras's weights onto this layer.

    Args:
        num_heads: ``H``.
        key_dim: ``dk``, size of each head's queries and keys.
        value_dim: ``dv``, size of each head's values (defaults to ``key_dim``).
        dropout: dropout rate on the attention weights.
        use_bias: whether the four projections have biases.
        output_shape: ``d_out`` (defaults to the query's last dimension).
        kernel_initializer, bias_initializer: of the four projections.

    Call arguments:
        query: ``(B, T, d_q)``.
        value: ``(B, S, d_v)``.
        key: ``(B, S, d_k)``; defaults to ``value``.
        query_mask, value_mask, key_mask: optional ``(B, T)`` / ``(B, S)`` booleans, True on
            real positions. As for ``keras.layers.MultiHeadAttention``, Keras fills one in
            from the matching input's Keras mask (e.g. from :class:`PositionalEmbedding`)
            when it is not given.
        attention_mask: optional ``(B, T, S)`` or ``(B, H, T, S)`` boolean.
        use_causal_mask: hide keys after each query (:func:`causal_mask`).
        return_attention_scores: also return the weights ``(B, H, T, S)``.
        training: enables the attention dropout.
        cache: optional ``(keys (B, H, L, dk), values (B, H, L, dv))``, already projected.
            Without ``cache_update_index`` they are used as they are instead of projecting
            ``key``/``value`` (cross-attention over an encoder output computed once); with it,
            ``key``/``value`` (the new positions) are projected and written into the cache at
            that index, and the query attends to the whole cache (step-by-step self-attention;
            with ``use_causal_mask`` the not yet written positions are hidden).
        cache_update_index: int or scalar tensor, position of the first new key in the cache.

    Returns:
        ``output`` ``(B, T, d_out)``; then the weights if ``return_attention_scores``; then the
        (updated) cache if ``cache`` was given — a tuple when there is more than one.

    Example:
        >>> import numpy as np
        >>> layer = MultiHeadAttention(num_heads=2, key_dim=4)
        >>> x = np.zeros((1, 3, 8), "float32")
        >>> output, scores = layer(x, x, use_causal_mask=True, return_attention_scores=True)
        >>> tuple(output.shape), tuple(scores.shape), np.asarray(scores[0, 0, 0]).tolist()
        ((1, 3, 8), (1, 2, 3, 3), [1.0, 0.0, 0.0])
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
        self.output_dim = int(output_shape) if output_shape else None
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.query_dense = self._projection(self.num_heads * self.key_dim, "query")
        self.key_dense = self._projection(self.num_heads * self.key_dim, "key")
        self.value_dense = self._projection(self.num_heads * self.value_dim, "value")
        self.output_dense = None  # its size is the query's unless output_shape says: see build
        self.attention_dropout = keras.layers.Dropout(self.dropout, dtype=self.dtype_policy)
        self.supports_masking = True  # the output keeps the query's Keras mask, as in Keras

    def _projection(self, units, name):
        return keras.layers.Dense(
            units, use_bias=self.use_bias, kernel_initializer=self.kernel_initializer,
            bias_initializer=self.bias_initializer, name=name, dtype=self.dtype_policy,
        )

    def build(self, query_shape, value_shape, key_shape=None):
        key_shape = value_shape if key_shape is None else key_shape
        self.output_dense = self._projection(self.output_dim or query_shape[-1],
                                             "attention_output")
        self.query_dense.build(query_shape)
        self.key_dense.build(key_shape)
        self.value_dense.build(value_shape)
        self.output_dense.build((*query_shape[:-1], self.num_heads * self.value_dim))
        self.built = True

    def _split_heads(self, x, depth):
        batch, length = ops.shape(x)[0], ops.shape(x)[1]
        x = ops.reshape(x, (batch, length, self.num_heads, depth))  # (B, L, H, depth)
        return ops.transpose(x, (0, 2, 1, 3))  # (B, H, L, depth)

    def _merge_heads(self, x):
        x = ops.transpose(x, (0, 2, 1, 3))  # (B, H, T, dv) -> (B, T, H, dv)
        batch, length = ops.shape(x)[0], ops.shape(x)[1]
        return ops.reshape(x, (batch, length, self.num_heads * self.value_dim))  # (B, T, H·dv)

    def project_key_value(self, value, key=None):
        """The keys and values of every head: ``(B, S, d) -> ((B, H, S, dk), (B, H, S, dv))``.

        What a ``cache`` holds; a decoder computes it once for the encoder output.
        """
        key = value if key is None else key
        keys = self._split_heads(dense_2d(self.key_dense, key), self.key_dim)  # (B, H, S, dk)
        values = self._split_heads(dense_2d(self.value_dense, value), self.value_dim)
        return keys, values  # values: (B, H, S, dv)

    def call(self, query, value, key=None, query_mask=None, value_mask=None, key_mask=None,
             attention_mask=None, use_causal_mask=False, return_attention_scores=False,
             training=None, cache=None, cache_update_index=None):
        q = self._split_heads(dense_2d(self.query_dense, query), self.key_dim)  # (B, H, T, dk)
        if cache is None:
            k, v = self.project_key_value(value, key)  # (B, H, S, dk), (B, H, S, dv)
        elif cache_update_index is None:
            k, v = cache  # projected once, e.g. the encoder output: (B, H, L, dk), (B, H, L, dv)
        else:
            new_k, new_v = self.project_key_value(value, key)  # (B, H, T, dk), (B, H, T, dv)
            k = write_into_cache(cache[0], new_k, cache_update_index)  # (B, H, L, dk)
            v = write_into_cache(cache[1], new_v, cache_update_index)  # (B, H, L, dv)
        mask = combine_attention_masks(
            query_mask, value_mask, key_mask, attention_mask, use_causal_mask,
            query_length=ops.shape(q)[2], key_length=ops.shape(k)[2],
            query_start=0 if cache_update_index is None else cache_update_index,
        )  # broadcastable to (B, H, T, S), or None

        def dropout(weights):
            return self.attention_dropout(weights, training=training)

        heads, weights = scaled_dot_product_attention(
            q, k, v, mask, dropout=dropout if self.dropout > 0 else None
        )  # (B, H, T, dv), (B, H, T, S)
        output = dense_2d(self.output_dense, self._merge_heads(heads))  # (B, T, d_out)
        results = (output,)
        if return_attention_scores:
            results += (weights,)
        if cache is not None:
            results += ((k, v),)
        return results if len(results) > 1 else output

    def get_config(self):
        return {
            **super().get_config(),
            "num_heads": self.num_heads,
            "key_dim": self.key_dim,
            "value_dim": self.value_dim,
            "dropout": self.dropout,
            "use_bias": self.use_bias,
            "output_shape": self.output_dim,
            "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
            "bias_initializer": keras.initializers.serialize(self.bias_initializer),
        }


def write_into_cache(cache, update, index):
    """``cache`` ``(B, H, L, depth)`` with positions ``index … index + T − 1`` replaced by
    ``update`` ``(B, H, T, depth)``.

    Written with a gather and a ``where`` (plain TensorFlow kernels) rather than
    ``ops.slice_update``, which TensorFlow runs as an XLA-compiled op at every step.

    Example:
        >>> cache = np.zeros((1, 1, 4, 2), "float32")
        >>> np.asarray(write_into_cache(cache, np.ones((1, 1, 1, 2), "float32"), 2))[0, 0].tolist()
        [[0.0, 0.0], [0.0, 0.0], [1.0, 1.0], [0.0, 0.0]]
    """
    cache = ops.convert_to_tensor(cache)
    new_length = ops.shape(update)[2]
    offsets = ops.arange(ops.shape(cache)[2]) - index  # (L,) slot position relative to index
    inside = ops.logical_and(offsets >= 0, offsets < new_length)  # (L,) slots being written
    spread = ops.take(update, ops.clip(offsets, 0, new_length - 1), axis=2)  # (B, H, L, depth)
    return ops.where(inside[None, None, :, None], ops.cast(spread, cache.dtype), cache)


def combine_attention_masks(query_mask=None, value_mask=None, key_mask=None,
                            attention_mask=None, use_causal_mask=False, query_length=None,
                            key_length=None, query_start=0):
    """The masks :class:`MultiHeadAttention` accepts, as one boolean broadcastable to
    ``(B, H, T, S)`` (True where a query may attend to a key), or ``None``.

    The rules of ``keras.layers.MultiHeadAttention``: a padded query attends nowhere, a padded
    key or value is seen by no query, ``attention_mask`` ``(B, T, S)`` applies to every head,
    and the causal mask (``query_length`` × ``key_length``, queries starting at
    ``query_start``) hides later keys.

    Example:
        >>> mask = combine_attention_masks(value_mask=np.array([[True, False]]),
        ...                                use_causal_mask=True, query_length=2, key_length=2)
        >>> np.asarray(mask).astype(int).tolist()
        [[[[1, 0], [1, 0]]]]
    """
    parts = []
    if query_mask is not None:
        parts.append(ops.cast(query_mask, "bool")[:, None, :, None])  # (B, 1, T, 1)
    for mask in (value_mask, key_mask):
        if mask is not None:
            parts.append(ops.cast(mask, "bool")[:, None, None, :])  # (B, 1, 1, S)
    if use_causal_mask:
        causal = causal_mask(query_length, key_length, query_start=query_start)  # (T, S)
        parts.append(causal[None, None])  # (1, 1, T, S)
    if attention_mask is not None:
        attention_mask = ops.cast(attention_mask, "bool")
        if len(attention_mask.shape) == 3:
            attention_mask = attention_mask[:, None]  # (B, T, S) -> (B, 1, T, S)
        parts.append(attention_mask)
    if not parts:
        return None
    mask = parts[0]
    for part in parts[1:]:
        mask = ops.logical_and(mask, part)
    return mask


def copy_keras_mha_weights(source, target):
    """Copy a built ``keras.layers.MultiHeadAttention``'s weights into our built layer.

    Uses Keras's public ``query_dense``, ``key_dense``, ``value_dense`` and ``output_dense``
    properties. Layout mapping: Keras keeps each projection as an ``EinsumDense`` whose kernel
    has one axis per head:

    =================  ============================  ===========================
    projection         Keras kernel / bias           ours (``Dense``) kernel / bias
    =================  ============================  ===========================
    query, key         ``(d, H, dk)`` / ``(H, dk)``  ``(d, H·dk)`` / ``(H·dk,)``
    value              ``(d, H, dv)`` / ``(H, dv)``  ``(d, H·dv)`` / ``(H·dv,)``
    output             ``(H, dv, d)`` / ``(d,)``     ``(H·dv, d)`` / ``(d,)``
    =================  ============================  ===========================

    A C-order reshape is all it takes: index ``(h, j)`` of the head axes becomes column (or
    row) ``h·dk + j``, which is where :class:`MultiHeadAttention` reads head ``h``.

    Args:
        source: a built ``keras.layers.MultiHeadAttention``.
        target: a built :class:`MultiHeadAttention` with the same heads and sizes.

    Returns:
        ``target``, for chaining.

    Example:
        >>> x = np.random.default_rng(0).normal(size=(1, 3, 8)).astype("float32")
        >>> theirs, ours = keras.layers.MultiHeadAttention(2, 4), MultiHeadAttention(2, 4)
        >>> _ = theirs(x, x), ours(x, x)  # build both
        >>> _ = copy_keras_mha_weights(theirs, ours)
        >>> bool(np.allclose(ours(x, x), theirs(x, x), atol=1e-5))
        True
    """
    if source.num_heads != target.num_heads or source.key_dim != target.key_dim:
        raise ValueError(
            f"Heads/key_dim differ: Keras has {source.num_heads}×{source.key_dim}, ours "
            f"{target.num_heads}×{target.key_dim}."
        )
    pairs = (
        (source.query_dense, target.query_dense),
        (source.key_dense, target.key_dense),
        (source.value_dense, target.value_dense),
        (source.output_dense, target.output_dense),
    )
    for keras_layer, our_layer in pairs:
        values = [np.asarray(w) for w in keras_layer.get_weights()]
        shapes = [tuple(w.shape) for w in our_layer.weights]
        our_layer.set_weights([w.reshape(shape) for w, shape in zip(values, shapes, strict=True)])
    return target


# --------------------------------------------------------------------------------------------
# Encoder and decoder layers ("Transformer: Other Components")
# --------------------------------------------------------------------------------------------


@keras.saving.register_keras_serializable(package=_PACKAGE)
class PositionwiseFeedForward(keras.layers.Layer):
    """The position-wise feed-forward network: ``FFN(x) = max(0, x W1 + b1) W2 + b2``.

    The same two ``Dense`` layers applied to every position on its own.

    Args:
        d_model: ``d``, the input and output size.
        dff: ``dff``, the inner (hidden) size.

    Call arguments:
        x: ``(B, T, d)``.

    Returns:
        ``(B, T, d)``.

    Example:
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
        self.outer_dense = keras.layers.Dense(self.d_model, name="outer", dtype=self.dtype_policy)

    def build(self, input_shape):
        self.inner_dense.build(input_shape)
        self.outer_dense.build((*input_shape[:-1], self.dff))
        self.built = True

    def call(self, x):
        hidden = dense_2d(self.inner_dense, x)  # (B, T, dff), through 2-D views (dense_2d)
        return dense_2d(self.outer_dense, hidden)  # (B, T, d)

    def compute_output_shape(self, input_shape):
        return (*input_shape[:-1], self.d_model)

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


def residual_parts(layer, name):
    """The Dropout and the LayerNormalization around sub-layer ``name`` (``LN(x + Dropout(
    Sublayer(x)))``), with ``layer``'s rate, epsilon and dtype policy."""
    dropout = keras.layers.Dropout(layer.dropout, dtype=layer.dtype_policy)
    norm = keras.layers.LayerNormalization(epsilon=layer.layer_norm_epsilon, name=f"{name}_norm",
                                           dtype=layer.dtype_policy)
    return dropout, norm


def attention_sublayer(layer, name):
    """A :class:`MultiHeadAttention` with ``layer``'s heads, head size, attention dropout, dtype."""
    return MultiHeadAttention(layer.num_heads, layer.d_model // layer.num_heads,
                              dropout=layer.attention_dropout, name=name,
                              dtype=layer.dtype_policy)


def store_hyperparameters(layer, d_model, num_heads, dff, dropout, attention_dropout,
                          layer_norm_epsilon):
    """Keep the constructor arguments the encoder and decoder layers share on ``layer``.

    Raises:
        ValueError: when ``num_heads`` does not divide ``d_model``.
    """
    layer.d_model = int(d_model)
    layer.num_heads = int(num_heads)
    layer.dff = int(dff)
    layer.dropout = float(dropout)
    layer.attention_dropout = float(attention_dropout)
    layer.layer_norm_epsilon = float(layer_norm_epsilon)
    head_size(layer.d_model, layer.num_heads)


def layer_hyperparameters(layer):
    """The constructor arguments the encoder and decoder layers share, for ``get_config``."""
    return {
        "d_model": layer.d_model,
        "num_heads": layer.num_heads,
        "dff": layer.dff,
        "dropout": layer.dropout,
        "attention_dropout": layer.attention_dropout,
        "layer_norm_epsilon": layer.layer_norm_epsilon,
    }


@keras.saving.register_keras_serializable(package=_PACKAGE)
class TransformerEncoderLayer(keras.layers.Layer):
    """One encoder layer (slides' "The Architecture of Transformer", post-norm as in the paper).

    Two sub-layers, each inside a residual connection followed by layer normalisation::

        x = LayerNorm(x + Dropout(SelfAttention(x, x, x)))      # multi-head, eq. 16
        x = LayerNorm(x + Dropout(FeedForward(x)))

    Args:
        d_model: ``d``, the size of every position's vector.
        num_heads: ``H``; ``d_model`` must be a multiple of it (each head has ``d / H``).
        dff: inner size of the feed-forward network.
        dropout: rate of the residual dropout after each sub-layer.
        attention_dropout: dropout rate on the attention weights (0 in the paper).
        layer_norm_epsilon: the normalisations' epsilon.

    Call arguments:
        x: ``(B, S, d)``.
        mask: optional ``(B, S)`` boolean, True on real tokens (Keras fills it in from
            :class:`PositionalEmbedding`); padded keys get zero attention weight.
        use_causal_mask: hide the positions after each position (:func:`causal_mask`): the
            layer is then a decoder-only (GPT) block, masked self-attention + feed-forward.
        return_attention_scores: also return the self-attention weights ``(B, H, S, S)``.
        training: enables dropout.

    Returns:
        ``(B, S, d)``, or ``(output, weights)`` with ``return_attention_scores=True``.

    Example:
        >>> layer = TransformerEncoderLayer(d_model=16, num_heads=2, dff=32)
        >>> x, mask = np.zeros((2, 5, 16), "float32"), np.array([[1, 1, 1, 0, 0], [1] * 5])
        >>> output, scores = layer(x, mask=mask, return_attention_scores=True)
        >>> tuple(output.shape), tuple(scores.shape), float(scores[0, 0, 0, 3])
        ((2, 5, 16), (2, 2, 5, 5), 0.0)
    """

    def __init__(self, d_model, num_heads, dff, dropout=0.1, attention_dropout=0.0,
                 layer_norm_epsilon=1e-6, **kwargs):
        super().__init__(**kwargs)
        store_hyperparameters(self, d_model, num_heads, dff, dropout, attention_dropout,
                              layer_norm_epsilon)
        self.self_attention = attention_sublayer(self, "self_attention")
        self.self_attention_dropout, self.self_attention_norm = residual_parts(
            self, "self_attention")
        self.feed_forward = PositionwiseFeedForward(self.d_model, self.dff, name="feed_forward",
                                                    dtype=self.dtype_policy)
        self.feed_forward_dropout, self.feed_forward_norm = residual_parts(self, "feed_forward")
        self.supports_masking = True

    def build(self, input_shape):
        self.self_attention.build(input_shape, input_shape)
        self.self_attention_norm.build(input_shape)
        self.feed_forward.build(input_shape)
        self.feed_forward_norm.build(input_shape)
        self.built = True

    def call(self, x, mask=None, use_causal_mask=False, return_attention_scores=False,
             training=None):
        # Sub-layer 1: every position attends to every real position (eq. 16, H heads).
        attended, scores = self.self_attention(
            x, x, value_mask=mask, use_causal_mask=use_causal_mask,
            return_attention_scores=True, training=training,
        )  # (B, S, d), (B, H, S, S)
        x = self.self_attention_norm(x + self.self_attention_dropout(attended, training=training))
        # Sub-layer 2: the same two-layer network at every position.
        transformed = self.feed_forward(x)  # (B, S, d)
        x = self.feed_forward_norm(x + self.feed_forward_dropout(transformed, training=training))
        return (x, scores) if return_attention_scores else x  # (B, S, d)

    def get_config(self):
        return {**super().get_config(), **layer_hyperparameters(self)}


@keras.saving.register_keras_serializable(package=_PACKAGE)
class TransformerDecoderLayer(keras.layers.Layer):
    """One decoder layer: masked self-attention, cross-attention to the encoder, feed-forward.

    Three sub-layers, each inside a residual connection followed by layer normalisation::

        x = LayerNorm(x + Dropout(MaskedSelfAttention(x, x, x)))          # causal, eq. 16
        x = LayerNorm(x + Dropout(CrossAttention(x, context, context)))   # queries from x
        x = LayerNorm(x + Dropout(FeedForward(x)))

    The causal mask keeps position ``t`` from seeing targets after ``t``; that also hides the
    trailing target padding from every real position, so no target padding mask is needed
    (padded positions are excluded from the loss).

    Args:
        d_model: ``d``, the size of every position's vector.
        num_heads: ``H``; ``d_model`` must be a multiple of it.
        dff: inner size of the feed-forward network.
        dropout: rate of the residual dropout after each sub-layer.
        attention_dropout: dropout rate on the attention weights (0 in the paper).
        layer_norm_epsilon: the normalisations' epsilon.

    Call arguments:
        x: ``(B, T, d)``, the target prefix.
        context: ``(B, S, d)``, the encoder output.
        context_mask: optional ``(B, S)`` boolean, True on real source tokens.
        return_attention_scores: also return the weights, a dict with ``"self_attention"``
            ``(B, H, T, L)`` and ``"cross_attention"`` ``(B, H, T, S)``.
        training: enables dropout.
        self_attention_cache: optional ``(keys, values)``, each ``(B, H, L, d / H)``: the
            self-attention keys and values of the positions decoded so far (step-by-step
            decoding; see :meth:`MultiHeadAttention.call`). ``x`` then holds only the new
            positions, starting at ``self_attention_cache_update_index``.
        self_attention_cache_update_index: int or scalar tensor, where ``x`` starts.
        cross_attention_cache: optional ``(keys, values)`` of ``context``, each
            ``(B, H, S, d / H)`` (:meth:`MultiHeadAttention.project_key_value`), so they are
            not projected again at every step.

    Returns:
        ``(B, T, d)``; then the scores dict if ``return_attention_scores``; then the updated
        ``self_attention_cache`` if one was given — a tuple when there is more than one.

    Example:
        >>> layer = TransformerDecoderLayer(d_model=16, num_heads=2, dff=32)
        >>> x, context = np.zeros((2, 4, 16), "float32"), np.ones((2, 6, 16), "float32")
        >>> output, scores = layer(x, context, return_attention_scores=True)
        >>> tuple(output.shape), tuple(scores["cross_attention"].shape)
        ((2, 4, 16), (2, 2, 4, 6))
    """

    def __init__(self, d_model, num_heads, dff, dropout=0.1, attention_dropout=0.0,
                 layer_norm_epsilon=1e-6, **kwargs):
        super().__init__(**kwargs)
        store_hyperparameters(self, d_model, num_heads, dff, dropout, attention_dropout,
                              layer_norm_epsilon)
        self.self_attention = attention_sublayer(self, "masked_self_attention")
        self.self_attention_dropout, self.self_attention_norm = residual_parts(
            self, "self_attention")
        self.cross_attention = attention_sublayer(self, "cross_attention")
        self.cross_attention_dropout, self.cross_attention_norm = residual_parts(
            self, "cross_attention")
        self.feed_forward = PositionwiseFeedForward(self.d_model, self.dff, name="feed_forward",
                                                    dtype=self.dtype_policy)
        self.feed_forward_dropout, self.feed_forward_norm = residual_parts(self, "feed_forward")

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

    def call(self, x, context, context_mask=None, return_attention_scores=False, training=None,
             self_attention_cache=None, self_attention_cache_update_index=None,
             cross_attention_cache=None):
        # Sub-layer 1: masked self-attention, position t sees the target positions <= t.
        attended, self_scores, *new_cache = self.self_attention(
            x, x, use_causal_mask=True, return_attention_scores=True, training=training,
            cache=self_attention_cache, cache_update_index=self_attention_cache_update_index,
        )  # (B, T, d), (B, H, T, L), [updated cache]
        x = self.self_attention_norm(x + self.self_attention_dropout(attended, training=training))
        # Sub-layer 2: cross-attention, queries from the target, keys and values from the source.
        attended, cross_scores, *_ = self.cross_attention(
            x, context, value_mask=context_mask, return_attention_scores=True, training=training,
            cache=cross_attention_cache,
        )  # (B, T, d), (B, H, T, S)
        x = self.cross_attention_norm(x + self.cross_attention_dropout(attended, training=training))
        # Sub-layer 3: the same two-layer network at every position.
        transformed = self.feed_forward(x)  # (B, T, d)
        x = self.feed_forward_norm(x + self.feed_forward_dropout(transformed, training=training))
        results = (x,)  # (B, T, d)
        if return_attention_scores:
            results += ({"self_attention": self_scores, "cross_attention": cross_scores},)
        results += tuple(new_cache)
        return results if len(results) > 1 else x

    def get_config(self):
        return {**super().get_config(), **layer_hyperparameters(self)}
