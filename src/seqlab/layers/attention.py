"""Attention for encoder-decoder RNNs: the slides' eqs. (12)-(14).

For a decoder state (the *query*) ``h_t`` and the encoder outputs (the *values*) ``y_i``:

* score, eq. (12): ``e_ti = h_t . y_i`` (Luong *dot*), ``h_t^T W y_i`` (Luong *general*),
  ``v^T tanh(W [h_t; y_i])`` (Bahdanau, *concat* / additive);
* weights, eq. (13): ``alpha_ti = softmax_i(e_ti)`` over the source positions ``i``;
* context, eq. (14): ``h~_t = sum_i alpha_ti y_i``.

Both layers take ``call(query, values, mask=None)`` and return ``(context, weights)``:

* ``query``: ``(batch, query_dim)`` for one decoder step, or ``(batch, Tq, query_dim)`` for all
  steps at once (training with teacher forcing);
* ``values``: ``(batch, Tv, value_dim)``;
* ``mask``: ``(batch, Tv)``, true/1 at real source positions. Padded positions get exactly zero
  weight, and the weights of each query sum to 1 over the real positions. When ``mask`` is
  ``None`` the values' Keras mask (from ``Embedding(mask_zero=True)``) is used if they have one.
* ``context``: ``(batch, value_dim)`` or ``(batch, Tq, value_dim)``;
  ``weights``: ``(batch, Tv)`` or ``(batch, Tq, Tv)``, also kept in ``last_attention_weights``.

Where Keras has the same maths (tested in ``tests/test_attention.py``):

* ``LuongAttention("dot")(q, v, mask)`` == ``keras.layers.Attention()([q, v], mask=[None, mask])``;
* ``LuongAttention("general")(q, v, mask)`` ==
  ``keras.layers.Attention()([q, v, W(v)], mask=...)`` (keys = values projected by ``W``);
* ``BahdanauAttention(u)(q, v, mask)`` ==
  ``keras.layers.AdditiveAttention()([W_q(q), v, W_v(v)], mask=...)`` with its ``scale`` set to
  our ``v`` vector: Keras's layer adds query and key *as given*, so it only equals Bahdanau's
  ``v^T tanh(W [h; y])`` after the query and keys have been projected with the two halves of our
  ``W`` (``W [h; y] = W_q h + W_v y``).

Computed with ``keras.ops`` only, so the layers also run on the JAX and PyTorch backends.
"""

from __future__ import annotations

import keras
from keras import ops

#: Added to the scores of padded positions before the softmax. Its exponential underflows to
#: exactly 0 in float32 and bfloat16; the weights are also multiplied by the mask afterwards, so
#: padded positions are exactly zero even when a whole row is padding.
MASK_PENALTY = -1e9


def masked_softmax(scores, mask=None):
    """Eq. (13) over the last axis, with ``mask`` (broadcastable to ``scores``) zeroing padding.

    A row with no real position at all (an empty source) gets all-zero weights, not NaN.
    """
    if mask is None:
        return ops.softmax(scores, axis=-1)
    mask = ops.cast(mask, scores.dtype)
    weights = ops.softmax(scores + (1.0 - mask) * MASK_PENALTY, axis=-1)
    return weights * mask


class _SourceAttention(keras.layers.Layer):
    """Shared plumbing: query rank handling, masks, eqs. (13)-(14), weights kept for plots."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        # Accepts the source mask; the outputs carry none (see compute_mask).
        self.supports_masking = True
        self.last_attention_weights = None

    def score(self, query, values):
        """Eq. (12): ``(batch, Tq, dq)``, ``(batch, Tv, dv)`` -> ``(batch, Tq, Tv)``."""
        raise NotImplementedError

    def call(self, query, values, mask=None):
        single_step = len(query.shape) == 2
        if single_step:
            query = ops.expand_dims(query, 1)  # (batch, 1, dq)
        if mask is None:
            mask = getattr(values, "_keras_mask", None)
        scores = self.score(query, values)  # (batch, Tq, Tv)
        if mask is not None:
            mask = ops.expand_dims(mask, 1)  # (batch, 1, Tv)
        weights = masked_softmax(scores, mask)  # (batch, Tq, Tv)
        context = ops.matmul(weights, values)  # eq. (14): (batch, Tq, dv)
        if single_step:
            context = ops.squeeze(context, 1)  # (batch, dv)
            weights = ops.squeeze(weights, 1)  # (batch, Tv)
        self.last_attention_weights = weights
        return context, weights

    def compute_mask(self, query, values, mask=None):
        return None

    def compute_output_shape(self, query_shape, values_shape, mask_shape=None):
        return (tuple(query_shape[:-1]) + (values_shape[-1],),
                tuple(query_shape[:-1]) + (values_shape[1],))


@keras.saving.register_keras_serializable(package="seqlab")
class BahdanauAttention(_SourceAttention):
    """Bahdanau (concat / additive) attention: ``e_ti = v^T tanh(W [h_t; y_i])``, eq. (12).

    ``W [h; y]`` is computed as ``W_q h + W_v y`` (the two column blocks of ``W``), so the
    values are projected once per sequence instead of once per (query, value) pair: the same
    numbers, ``Tq`` times less work.

    Args:
        units: rows of ``W`` (the size of the hidden layer of the "alignment model").
    """

    def __init__(self, units: int, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.query_projection = keras.layers.Dense(units, use_bias=False, name="W_query")
        self.value_projection = keras.layers.Dense(units, use_bias=False, name="W_value")
        self.v = keras.layers.Dense(1, use_bias=False, name="v")

    def build(self, query_shape, values_shape, mask_shape=None):
        self.query_projection.build(query_shape)
        self.value_projection.build(values_shape)
        self.v.build(tuple(values_shape[:-1]) + (self.units,))

    def score(self, query, values):
        query = ops.expand_dims(self.query_projection(query), 2)  # (batch, Tq, 1, units)
        keys = ops.expand_dims(self.value_projection(values), 1)  # (batch, 1, Tv, units)
        return ops.squeeze(self.v(ops.tanh(query + keys)), -1)  # (batch, Tq, Tv)

    def get_config(self):
        return {**super().get_config(), "units": self.units}


@keras.saving.register_keras_serializable(package="seqlab")
class LuongAttention(_SourceAttention):
    """Luong (multiplicative) attention, eq. (12): ``"dot"`` ``h_t . y_i`` or ``"general"``
    ``h_t^T W y_i``.

    ``"dot"`` needs ``query_dim == value_dim`` and has no weights; ``"general"``'s ``W`` maps
    values to the query's size, so the two may differ.
    """

    SCORES = ("dot", "general")

    def __init__(self, score: str = "dot", **kwargs):
        super().__init__(**kwargs)
        if score not in self.SCORES:
            raise ValueError(f"score must be one of {self.SCORES}; got {score!r}")
        self.score_name = score
        self.value_projection = None

    def build(self, query_shape, values_shape, mask_shape=None):
        if self.score_name == "general":
            self.value_projection = keras.layers.Dense(query_shape[-1], use_bias=False, name="W")
            self.value_projection.build(values_shape)
        elif query_shape[-1] != values_shape[-1]:
            raise ValueError(
                f"Luong 'dot' attention needs queries and values of the same size; got "
                f"{query_shape[-1]} and {values_shape[-1]}. Use score='general' instead."
            )

    def score(self, query, values):
        keys = values if self.value_projection is None else self.value_projection(values)
        return ops.matmul(query, ops.transpose(keys, (0, 2, 1)))  # (batch, Tq, Tv)

    def get_config(self):
        return {**super().get_config(), "score": self.score_name}
