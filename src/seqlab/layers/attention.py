"""Attention for encoder-decoder RNNs, the slides' eqs. (12)-(14): score ``e_ti`` (Luong *dot*
``h_t . y_i``, Luong *general* ``h_t^T W y_i``, Bahdanau *concat* ``v^T tanh(W [h_t; y_i])``),
weights ``alpha_ti = softmax_i(e_ti)`` and context ``h~_t = sum_i alpha_ti y_i``.
"""

from __future__ import annotations

import keras
from keras import ops

from seqlab.layers.masking import masked_softmax


class _SourceAttention(keras.layers.Layer):
    """What the two layers share: query rank, masks, eqs. (13)-(14). Subclasses implement eq.
    (12), ``score(query (batch, Tq, dq), keys (batch, Tv, dk)) -> (batch, Tq, Tv)``, and
    ``project_values``: the values -> the keys the score compares the query with."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        # Accepts the source mask; the outputs carry none (see compute_mask).
        self.supports_masking = True

    def call(self, query, values, padding_mask=None, return_attention_scores=False,
             values_mask=None, keys=None):
        # Keras fills ``values_mask`` in from the values' Keras mask; ``padding_mask`` wins.
        single_step = len(query.shape) == 2
        if single_step:
            query = ops.expand_dims(query, 1)  # (batch, 1, dq)
        mask = values_mask if padding_mask is None else padding_mask  # (batch, Tv) or None
        if keys is None:  # a decoder projects the values once and passes them in
            keys = self.project_values(values)  # (batch, Tv, dk)
        scores = self.score(query, keys)  # eq. (12): (batch, Tq, Tv)
        if mask is not None:
            mask = ops.expand_dims(mask, 1)  # (batch, 1, Tv)
        weights = masked_softmax(scores, mask)  # eq. (13): (batch, Tq, Tv)
        context = ops.matmul(weights, ops.cast(values, weights.dtype))  # eq. (14): (batch, Tq, dv)
        if single_step:
            context = ops.squeeze(context, axis=1)  # (batch, dv)
            weights = ops.squeeze(weights, axis=1)  # (batch, Tv)
        return (context, weights) if return_attention_scores else context

    def compute_mask(self, *args, **kwargs):
        return None  # the context carries no mask


@keras.saving.register_keras_serializable(package="seqlab")
class BahdanauAttention(_SourceAttention):
    """Bahdanau (concat / additive) attention, slide eq. (12): ``e_ti = v^T tanh(W [h_t; y_i])``,
    then eqs. (13)-(14).

    ``W [h; y]`` is computed as ``W_q h + W_v y``, projecting the values once per sequence.

    Args:
        units: rows of ``W`` (the size of the hidden layer of the "alignment model").

    Call arguments:
        query: decoder state(s) ``h``, ``(batch, query_dim)`` or ``(batch, Tq, query_dim)``.
        values: encoder outputs ``y``, ``(batch, Tv, value_dim)``.
        padding_mask: optional ``(batch, Tv)`` boolean, True at real source positions.
        return_attention_scores: also return the weights of eq. (13).
        values_mask: where Keras passes the values' Keras mask ``(batch, Tv)``; used when
            ``padding_mask`` is None.
        keys: optional, :meth:`project_values` of ``values`` computed beforehand.

    Returns:
        The context of eq. (14), ``(batch, value_dim)`` or ``(batch, Tq, value_dim)``; with
        ``return_attention_scores=True``, ``(context, weights)``, weights ``(batch, Tv)`` or
        ``(batch, Tq, Tv)``.

    Example:
        >>> import numpy as np
        >>> layer = BahdanauAttention(units=8)
        >>> h, y = np.ones((2, 4), "float32"), np.ones((2, 3, 4), "float32")
        >>> context, weights = layer(h, y, padding_mask=np.array([[1, 1, 0], [1, 0, 0]], bool),
        ...                          return_attention_scores=True)
        >>> tuple(context.shape), np.asarray(weights).round(2).tolist()
        ((2, 4), [[0.5, 0.5, 0.0], [1.0, 0.0, 0.0]])
    """

    def __init__(self, units: int, **kwargs):
        super().__init__(**kwargs)
        self.units = int(units)
        self.query_projection = keras.layers.Dense(self.units, use_bias=False, name="W_query")
        self.value_projection = keras.layers.Dense(self.units, use_bias=False, name="W_value")

    def build(self, query_shape, values_shape):
        for layer, shape in ((self.query_projection, query_shape),
                             (self.value_projection, values_shape)):
            if not layer.built:  # project_values may have been called first
                layer.build(shape)
        self.v = self.add_weight(shape=(self.units,), initializer="glorot_uniform", name="v")

    def project_values(self, values):
        """``W_v y``: ``(batch, Tv, value_dim)`` -> ``(batch, Tv, units)``."""
        return self.value_projection(values)

    def score(self, query, keys):
        query = ops.expand_dims(self.query_projection(query), 2)  # (batch, Tq, 1, units)
        keys = ops.expand_dims(keys, 1)  # (batch, 1, Tv, units)
        hidden = ops.tanh(query + keys)  # (batch, Tq, Tv, units)
        # A sum, not a Dense(1): TensorFlow 2.19's oneDNN CPU kernel segfaults on that product.
        return ops.sum(hidden * ops.cast(self.v, hidden.dtype), axis=-1)  # (batch, Tq, Tv)

    def get_config(self):
        return {**super().get_config(), "units": self.units}


@keras.saving.register_keras_serializable(package="seqlab")
class LuongAttention(_SourceAttention):
    """Luong (multiplicative) attention, slide eq. (12): ``"dot"`` ``e_ti = h_t . y_i`` or
    ``"general"`` ``e_ti = h_t^T W y_i``, then eqs. (13)-(14).

    Args:
        score: ``"dot"`` (needs ``query_dim == value_dim``) or ``"general"``.

    Call arguments and returns: as :class:`BahdanauAttention`.

    Example:
        >>> import numpy as np
        >>> h = np.array([[1.0, 0.0]], "float32")                # (batch, query_dim)
        >>> y = np.array([[[1.0, 0.0], [0.0, 1.0]]], "float32")  # (batch, Tv, value_dim)
        >>> context, weights = LuongAttention("dot")(h, y, return_attention_scores=True)
        >>> np.asarray(weights, "float64").round(3).tolist()  # softmax([1, 0])
        [[0.731, 0.269]]
    """

    SCORES = ("dot", "general")

    def __init__(self, score: str = "dot", **kwargs):
        super().__init__(**kwargs)
        if score not in self.SCORES:
            raise ValueError(f"score must be one of {self.SCORES}; got {score!r}")
        self.score_name = score
        self.value_projection = None

    def build(self, query_shape, values_shape):
        if self.score_name == "general":
            self.value_projection = keras.layers.Dense(query_shape[-1], use_bias=False, name="W")
            self.value_projection.build(values_shape)
        elif query_shape[-1] != values_shape[-1]:
            raise ValueError(
                f"Luong 'dot' attention needs queries and values of the same size; got "
                f"{query_shape[-1]} and {values_shape[-1]}. Use score='general' instead."
            )

    def project_values(self, values):
        """``"dot"``: the values; ``"general"``: ``W y``, ``(batch, Tv, query_dim)``."""
        return values if self.value_projection is None else self.value_projection(values)

    def score(self, query, keys):
        keys = ops.cast(keys, query.dtype)  # (batch, Tv, dq)
        return ops.matmul(query, ops.transpose(keys, (0, 2, 1)))  # (batch, Tq, Tv)

    def get_config(self):
        return {**super().get_config(), "score": self.score_name}
