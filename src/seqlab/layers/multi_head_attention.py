"""Scaled dot-product and multi-head attention (slides' "Attention is All You Need", eq. 16 and
fig. 18), and :class:`CachedMultiHeadAttention`, the same with a key/value cache.

Shape letters in the comments: ``B`` batch, ``T`` query length, ``S`` key/value length, ``H``
heads, ``dk``/``dv`` key/value size per head, ``d`` model size, ``L`` decoding cache length.
"""

from __future__ import annotations

import warnings
from functools import partial, reduce

import keras
import numpy as np
from keras import ops

from seqlab.layers.masking import causal_mask, masked_softmax


def scaled_dot_product_attention(q, k, v, attention_mask=None, dropout=None):
    """Eq. 16: ``Attention(Q, K, V) = softmax(Q Kᵀ / √dk) V``; returns ``(output, weights)``.

    Args:
        q: ``(..., T, dk)`` queries.
        k: ``(..., S, dk)`` keys.
        v: ``(..., S, dv)`` values.
        attention_mask: optional, broadcastable to ``(..., T, S)``; True (or 1) where a query
            may attend to a key. Masked keys get zero weight; a query with no visible key gets
            zero weights and a zero output.
        dropout: optional callable applied to the weights before they mix the values (the
            weights returned are those before dropout).

    Returns:
        ``output`` ``(..., T, dv)`` and ``weights`` ``(..., T, S)``.

    Example:
        >>> import numpy as np
        >>> q, k, v = np.ones((1, 2, 4), "float32"), np.ones((1, 3, 4), "float32"), np.eye(3, dtype="float32")[None]
        >>> output, weights = scaled_dot_product_attention(
        ...     q, k, v, attention_mask=np.array([True, True, False]))
        >>> np.asarray(weights[0, 0]).tolist()
        [0.5, 0.5, 0.0]
    """
    depth = ops.shape(q)[-1]
    scale = ops.cast(1.0 / ops.sqrt(ops.cast(depth, "float32")), q.dtype)
    scores = ops.matmul(q * scale, ops.swapaxes(k, -1, -2))  # (..., T, S)
    with warnings.catch_warnings():  # one key (a 1-token prefix) is legitimate, not a mistake
        warnings.filterwarnings("ignore", message=".*softmax over axis -1.*size 1")
        weights = masked_softmax(scores, attention_mask, axis=-1)  # (..., T, S), rows sum to 1
    output = ops.matmul(weights if dropout is None else dropout(weights), v)  # (..., T, dv)
    return output, weights


@keras.saving.register_keras_serializable(package="seqlab")
class MultiHeadAttention(keras.layers.Layer):
    """Multi-head attention built from :func:`scaled_dot_product_attention` (fig. 18, eq. 16).

    ``head_h = Attention(Q W_h^Q, K W_h^K, V W_h^V)``; ``MultiHead(Q, K, V) = Concat(head_1, …,
    head_H) W^O``. The per-head ``W_h^Q`` are side by side in one ``Dense(H·dk)`` kernel
    (columns ``h·dk … (h+1)·dk − 1`` are head ``h``); likewise for K and V. The call signature
    follows ``keras.layers.MultiHeadAttention``.

    Args:
        num_heads: ``H``.
        key_dim: ``dk``, size of each head's queries and keys.
        value_dim: ``dv``, size of each head's values (defaults to ``key_dim``).
        dropout: dropout rate on the attention weights.

    Call arguments:
        query: ``(B, T, d_q)``.
        value: ``(B, S, d_v)``.
        key: ``(B, S, d_k)``; defaults to ``value``.
        query_mask, value_mask, key_mask: optional ``(B, T)`` / ``(B, S)`` padding masks, True
            on real positions; Keras fills each in from the matching input's Keras mask.
        attention_mask: optional ``(B, T, S)`` or ``(B, H, T, S)`` boolean.
        use_causal_mask: hide keys after each query (:func:`seqlab.layers.causal_mask`).
        return_attention_scores: also return the weights ``(B, H, T, S)``.
        training: enables the attention dropout.

    Returns:
        ``output`` ``(B, T, d_q)``, or ``(output, weights)`` with ``return_attention_scores``.

    Example:
        >>> import numpy as np
        >>> layer = MultiHeadAttention(num_heads=2, key_dim=4)
        >>> x = np.zeros((1, 3, 8), "float32")
        >>> output, scores = layer(x, x, use_causal_mask=True, return_attention_scores=True)
        >>> tuple(output.shape), tuple(scores.shape), np.asarray(scores[0, 0, 0]).tolist()
        ((1, 3, 8), (1, 2, 3, 3), [1.0, 0.0, 0.0])
    """

    def __init__(self, num_heads, key_dim, value_dim=None, dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        self.num_heads = int(num_heads)
        self.key_dim = int(key_dim)
        self.value_dim = int(value_dim) if value_dim else self.key_dim
        self.dropout = float(dropout)
        self.query_dense = self._projection(self.num_heads * self.key_dim, "query")
        self.key_dense = self._projection(self.num_heads * self.key_dim, "key")
        self.value_dense = self._projection(self.num_heads * self.value_dim, "value")
        self.output_dense = None  # as wide as the query: see build
        self.attention_dropout = keras.layers.Dropout(self.dropout, dtype=self.dtype_policy)
        self.supports_masking = True  # the output keeps the query's Keras mask, as in Keras

    def _projection(self, units, name):
        return keras.layers.Dense(units, name=name, dtype=self.dtype_policy)

    def build(self, query_shape, value_shape, key_shape=None):
        key_shape = value_shape if key_shape is None else key_shape
        self.output_dense = self._projection(query_shape[-1], "attention_output")
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
        """Every head's keys and values, ``(B, S, d) -> ((B, H, S, dk), (B, H, S, dv))``: what
        a :class:`CachedMultiHeadAttention` cache holds."""
        key = value if key is None else key
        keys = self._split_heads(self.key_dense(key), self.key_dim)  # (B, H, S, dk)
        values = self._split_heads(self.value_dense(value), self.value_dim)  # (B, H, S, dv)
        return keys, values

    def call(self, query, value, key=None, query_mask=None, value_mask=None, key_mask=None,
             attention_mask=None, use_causal_mask=False, return_attention_scores=False,
             training=None):
        q = self._split_heads(self.query_dense(query), self.key_dim)  # (B, H, T, dk)
        k, v = self.project_key_value(value, key)  # (B, H, S, dk), (B, H, S, dv)
        mask = combine_attention_masks(
            query_mask, value_mask, key_mask, attention_mask, use_causal_mask,
            query_length=ops.shape(q)[2], key_length=ops.shape(k)[2],
        )  # broadcastable to (B, H, T, S), or None
        dropout = partial(self.attention_dropout, training=training) if self.dropout else None
        heads, weights = scaled_dot_product_attention(q, k, v, mask, dropout=dropout)  # eq. 16
        output = self.output_dense(self._merge_heads(heads))  # (B, H, T, dv) -> (B, T, d_q)
        return (output, weights) if return_attention_scores else output

    def get_config(self):
        return {**super().get_config(), "num_heads": self.num_heads, "key_dim": self.key_dim,
                "value_dim": self.value_dim, "dropout": self.dropout}


@keras.saving.register_keras_serializable(package="seqlab")
class CachedMultiHeadAttention(MultiHeadAttention):
    """:class:`MultiHeadAttention` with a key/value cache for decoding one position at a time
    (keras-hub's pattern): the same weights, the same outputs. The cache has a fixed length
    ``L`` and is returned updated, never kept in the layer.

    Args: as :class:`MultiHeadAttention`; :meth:`sharing` makes one that computes with a built
    :class:`MultiHeadAttention`'s variables.

    Call arguments: those of :class:`MultiHeadAttention`, and
        cache: optional ``(keys (B, H, L, dk), values (B, H, L, dv))``, already projected
            (:meth:`project_key_value`). Without ``cache_update_index`` they replace
            ``key``/``value`` (cross-attention to a memory projected once); with it, ``key``/
            ``value`` are projected, written into the cache at that index, and the query
            attends to the whole cache (self-attention, step by step).
        cache_update_index: int or scalar tensor, position of the first new key in the cache;
            with ``use_causal_mask`` the query at it sees the cache positions ``<=`` it.

    Returns:
        ``output`` ``(B, T, d_q)``; then the weights if ``return_attention_scores``; then the
        (updated) cache if ``cache`` was given — a tuple when there is more than one.

    Example:
        >>> import numpy as np
        >>> layer = CachedMultiHeadAttention(num_heads=2, key_dim=4)
        >>> x = np.random.default_rng(0).normal(size=(1, 3, 8)).astype("float32")
        >>> full = layer(x, x, use_causal_mask=True)
        >>> empty = np.zeros((1, 2, 3, 4), "float32")
        >>> step, cache = layer(x[:, :1], x[:, :1], use_causal_mask=True, cache=(empty, empty),
        ...                     cache_update_index=0)
        >>> bool(np.allclose(step[:, 0], full[:, 0], atol=1e-6)), tuple(cache[0].shape)
        (True, (1, 2, 3, 4))
    """

    @classmethod
    def sharing(cls, layer):
        """A :class:`CachedMultiHeadAttention` computing with the built ``layer``'s projections
        (the same variables, not copies)."""
        if not layer.built:
            raise ValueError(f"Build {layer.name!r} first: its projections do not exist yet.")
        twin = cls.from_config(layer.get_config())
        for name in ("query_dense", "key_dense", "value_dense", "output_dense"):
            setattr(twin, name, getattr(layer, name))
        twin.built = True
        return twin

    def call(self, query, value, key=None, query_mask=None, value_mask=None, key_mask=None,
             attention_mask=None, use_causal_mask=False, return_attention_scores=False,
             training=None, cache=None, cache_update_index=None):
        q = self._split_heads(self.query_dense(query), self.key_dim)  # (B, H, T, dk)
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
        )  # broadcastable to (B, H, T, L), or None
        dropout = partial(self.attention_dropout, training=training) if self.dropout else None
        heads, weights = scaled_dot_product_attention(q, k, v, mask, dropout=dropout)
        output = self.output_dense(self._merge_heads(heads))  # (B, H, T, dv) -> (B, T, d_q)
        results = (output, weights) if return_attention_scores else (output,)
        if cache is not None:
            results += ((k, v),)
        return results if len(results) > 1 else output


def write_into_cache(cache, update, index):
    """``cache`` ``(B, H, L, depth)`` with positions ``index … index + T − 1`` replaced by
    ``update`` ``(B, H, T, depth)`` (a gather and a ``where``: TensorFlow would XLA-compile
    ``ops.slice_update`` at every step).

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

    As ``keras.layers.MultiHeadAttention``: a padded query attends nowhere, a padded key is
    seen by no query, a ``(B, T, S)`` ``attention_mask`` applies to every head.

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
    return reduce(ops.logical_and, parts) if parts else None


def copy_keras_attention_weights(source, target):
    """Copy a built ``keras.layers.MultiHeadAttention``'s weights into our built layer, with the
    same heads and sizes; returns ``target``.

    Keras's ``EinsumDense`` kernels have one axis per head (``(d, H, dk)``, output
    ``(H, dv, d)``); a C-order reshape gives ours (``(d, H·dk)``, ``(H·dv, d)``).

    Example:
        >>> x = np.random.default_rng(0).normal(size=(1, 3, 8)).astype("float32")
        >>> theirs, ours = keras.layers.MultiHeadAttention(2, 4), MultiHeadAttention(2, 4)
        >>> _ = theirs(x, x), ours(x, x)  # build both
        >>> _ = copy_keras_attention_weights(theirs, ours)
        >>> bool(np.allclose(ours(x, x), theirs(x, x), atol=1e-5))
        True
    """
    if source.num_heads != target.num_heads or source.key_dim != target.key_dim:
        raise ValueError(f"Heads/key_dim differ: Keras has {source.num_heads}×{source.key_dim}, "
                         f"ours {target.num_heads}×{target.key_dim}.")
    for name in ("query_dense", "key_dense", "value_dense", "output_dense"):
        ours, values = getattr(target, name), getattr(source, name).get_weights()
        ours.set_weights([np.asarray(value).reshape(tuple(weight.shape))
                          for value, weight in zip(values, ours.weights, strict=True)])
    return target
