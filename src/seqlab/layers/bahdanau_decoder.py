"""Bahdanau et al.'s attention decoder (2015, section 3.1 and appendix A.2.2; the slides' eqs.
(12)-(14)): the previous state queries and the context enters the RNN, so the target is a loop
over time, in training too.
"""

from __future__ import annotations

import keras
from keras import ops

from seqlab.layers.attention import BahdanauAttention


@keras.saving.register_keras_serializable(package="seqlab")
class BahdanauDecoder(keras.layers.Layer):
    """Bahdanau et al. (2015)'s decoder: query ``h_(t-1)``, eqs. (12)-(14), then the recurrent
    cell reads ``[embedding(w_(t-1)); c_t]`` (their appendix A: ``s_i = f(s_{i-1}, y_{i-1}, c_i)``).

    The score is :class:`seqlab.layers.BahdanauAttention`'s ``v^T tanh(W [h; y])`` (eq. (12));
    the step's output ``[h_t; c_t]`` is what the output layer reads.

    Args:
        units: size of the recurrent state ``h`` (GRU: ``[h]``; LSTM: ``[h, c]``, ``h`` queries).
        attention_units: rows of the score's ``W`` (default ``units``).
        rnn: ``"gru"`` or ``"lstm"``: Keras's ``GRUCell`` / ``LSTMCell`` with its defaults.
        dropout: dropout on the cell's input ``[embedding; context]`` (a fresh mask per step).

    Call arguments:
        target_embeddings: ``(batch, T, embedding_dim)``, the embedded shifted target.
        encoder_outputs: ``(batch, Tv, value_dim)``.
        initial_state: list of ``(batch, units)`` tensors (one for a GRU, two for an LSTM),
            e.g. the encoder's final states.
        encoder_padding_mask: optional ``(batch, Tv)``, True at real source positions.
        return_attention_scores: also return the weights of eq. (13).
        return_state: also return the final state (list).
        padding_mask: optional ``(batch, T)``, True at real target tokens (Keras does not fill
            it in). At a padded step the state is carried over unchanged.
        training: enables dropout.

    Returns:
        ``outputs`` ``(batch, T, units + value_dim)``, each step's ``[h_t; c_t]``; with
        ``return_attention_scores=True`` also ``weights`` ``(batch, T, Tv)``; with
        ``return_state=True`` also the final state, last.

    Example:
        >>> import numpy as np
        >>> decoder = BahdanauDecoder(units=8)
        >>> targets, sources = np.ones((2, 3, 4), "float32"), np.ones((2, 5, 6), "float32")
        >>> state = [np.zeros((2, 8), "float32")]
        >>> mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)
        >>> outputs, weights = decoder(targets, sources, state, encoder_padding_mask=mask,
        ...                            return_attention_scores=True)
        >>> tuple(outputs.shape), tuple(weights.shape), float(np.asarray(weights)[0, :, 3:].max())
        ((2, 3, 14), (2, 3, 5), 0.0)
    """

    def __init__(self, units: int, attention_units: int | None = None, rnn: str = "gru",
                 dropout: float = 0.0, **kwargs):
        super().__init__(**kwargs)
        if rnn not in ("gru", "lstm"):
            raise ValueError(f"rnn must be 'gru' or 'lstm'; got {rnn!r}")
        self.units, self.attention_units = int(units), attention_units
        self.rnn_kind, self.dropout = rnn, float(dropout)
        self.attention = BahdanauAttention(attention_units or self.units, name="attention")
        cell = keras.layers.GRUCell if rnn == "gru" else keras.layers.LSTMCell
        self.cell = cell(self.units, name=f"{rnn}_cell")
        self.input_dropout = keras.layers.Dropout(self.dropout)
        self.supports_masking = True

    def build(self, target_embeddings_shape, encoder_outputs_shape=None, *args, **kwargs):
        if encoder_outputs_shape is None:
            raise ValueError("BahdanauDecoder needs the encoder outputs' shape to build")
        embedding_dim, value_dim = target_embeddings_shape[-1], encoder_outputs_shape[-1]
        if not self.attention.built:
            self.attention.build((None, self.units), (None, None, value_dim))
        if not self.cell.built:
            self.cell.build((None, embedding_dim + value_dim))  # reads [embedding; context]
        self.built = True

    def step(self, embedded_word, state, encoder_outputs, encoder_padding_mask=None,
             training=None, keys=None):
        """One decoder step: arguments as :meth:`call`, but one word ``(batch, embedding_dim)``
        and the previous state list (``h_(t-1)`` first); ``keys``, the attention's
        ``project_values(encoder_outputs)``, may be computed once beforehand.

        Returns:
            ``(output, new_state, weights)``: ``[h_t; c_t]`` ``(batch, units + value_dim)``, the
            new state list, and the weights ``(batch, Tv)`` of eq. (13).
        """
        if not self.built:  # step before any call, e.g. a decoding loop on a fresh layer
            self.build((None, None, embedded_word.shape[-1]), encoder_outputs.shape)
        if keys is None:
            keys = self.attention.project_values(encoder_outputs)  # (batch, Tv, attention_units)
        state = [ops.cast(s, self.compute_dtype) for s in state]  # each (batch, units)
        # Eqs. (12)-(14) with the previous state h_(t-1) as the query.
        context, weights = self.attention(state[0], encoder_outputs,
                                          padding_mask=encoder_padding_mask, keys=keys,
                                          return_attention_scores=True)
        # context (batch, value_dim), weights (batch, Tv)
        cell_input = ops.concatenate(
            [ops.cast(embedded_word, self.compute_dtype), ops.cast(context, self.compute_dtype)],
            axis=-1)  # (batch, embedding_dim + value_dim)
        cell_input = self.input_dropout(cell_input, training=training)
        hidden, new_state = self.cell(cell_input, state, training=training)  # (batch, units)
        new_state = list(new_state) if isinstance(new_state, (list, tuple)) else [new_state]
        output = ops.concatenate([hidden, ops.cast(context, hidden.dtype)], axis=-1)
        return output, new_state, weights  # (batch, units + value_dim), [...], (batch, Tv)

    def call(self, target_embeddings, encoder_outputs, initial_state, encoder_padding_mask=None,
             return_attention_scores=False, return_state=False, padding_mask=None,
             training=None):
        dtype = self.compute_dtype
        keys = self.attention.project_values(encoder_outputs)  # once: (batch, Tv, attention_units)
        if padding_mask is None:
            padding_mask = ops.ones(ops.shape(target_embeddings)[:2], dtype="bool")  # (batch, T)
        # ops.scan over one sequence: the padding mask rides along as a last 0/1 feature (the
        # TensorFlow ops.scan of Keras 3.13 fails on several inputs of unknown length).
        steps = ops.concatenate([ops.cast(target_embeddings, dtype),
                                 ops.cast(padding_mask, dtype)[:, :, None]], axis=-1)
        steps = ops.transpose(steps, (1, 0, 2))  # (T, batch, embedding_dim + 1)
        batch = ops.shape(target_embeddings)[0]
        init = (tuple(ops.cast(s, dtype) for s in initial_state),
                ops.zeros((batch, self.units + encoder_outputs.shape[-1]), dtype),
                ops.zeros((batch, ops.shape(encoder_outputs)[1]), dtype))

        def body(carry, inputs):  # emits its carry (state, output, weights), as TF's scan needs
            word, keep = inputs[:, :-1], inputs[:, -1:] > 0  # (batch, embedding_dim), (batch, 1)
            output, new_state, w = self.step(word, list(carry[0]), encoder_outputs,
                                             encoder_padding_mask, training, keys)
            # At a padded target step the state stays as it was.
            new_state = [ops.where(keep, new, old)
                         for new, old in zip(new_state, carry[0], strict=True)]
            new_carry = (tuple(new_state), output, ops.cast(w, dtype))
            return new_carry, new_carry

        (state, _, _), (_, outputs, weights) = ops.scan(body, init, steps)
        results = [ops.transpose(outputs, (1, 0, 2))]  # (T, batch, ...) -> (batch, T, units + dv)
        if return_attention_scores:
            results.append(ops.transpose(weights, (1, 0, 2)))  # (batch, T, Tv)
        if return_state:
            results.append(list(state))
        return results[0] if len(results) == 1 else tuple(results)

    def compute_mask(self, *args, **kwargs):
        return None

    def get_config(self):
        return {**super().get_config(), "units": self.units,
                "attention_units": self.attention_units, "rnn": self.rnn_kind,
                "dropout": self.dropout}
