"""The RNN translator's two halves (slides' figs. 12-15): encoder and decoder layers.

:class:`seqlab.models.Seq2SeqTranslator` (:mod:`seqlab.models.seq2seq`) joins them.

* :class:`Seq2SeqEncoder`: ``Embedding(mask_zero=True)`` + bidirectional GRU or LSTM
  ("The Idea of Bidirectional RNNs"), optionally reading the source backwards as in fig. 12.
  Each direction has ``units // 2`` units, so the concatenated outputs have ``units`` features
  (the size of the decoder state, which Luong's dot score needs) and the two final states,
  concatenated, are the decoder's initial state.
* :class:`Seq2SeqDecoder`: embedding + GRU/LSTM + attention over the encoder outputs + output
  layer, in one of two orders (the slides' "Other Attention Mechanisms" contrast them):

  - ``"bahdanau"``: Bahdanau et al. (2015)'s decoder, :class:`seqlab.layers.BahdanauDecoder`.
    The previous state ``h_(t-1)`` queries the encoder outputs with the concat score (eqs.
    12-14), the context ``c_t`` joins the embedding as the recurrent cell's input, and
    ``tanh(W_c [h_t; c_t])`` feeds the output layer (one ``tanh`` layer where the paper has a
    maxout layer). The target is a loop of steps in training too.
  - ``"luong-dot"``, ``"luong-general"``, ``"luong-concat"``: Luong et al. (2015)'s order. The
    GRU/LSTM runs over the whole target first (Keras's fused kernel), the *current* state
    ``h_t`` queries with the dot, general or concat score of eq. (12) (Luong et al. §3.1 name
    all three), and ``tanh(W_c [h_t; c_t])`` (Luong's "attentional hidden state") feeds the
    output layer. These three differ only in the score. ``"luong-concat"`` is what this package
    called ``"bahdanau"`` before it had Bahdanau's decoder: a saved model whose configuration
    has no ``"config_version"`` and says ``"bahdanau"`` loads as ``"luong-concat"``.
  - ``"none"``: no attention; ``h_t`` feeds the output layer.
"""

from __future__ import annotations

import keras
from keras import ops

from seqlab.layers.attention import BahdanauAttention, LuongAttention
from seqlab.layers.bahdanau_decoder import BahdanauDecoder

__all__ = [
    "ATTENTION_CHOICES", "CONFIG_VERSION", "RNN_CHOICES", "Seq2SeqDecoder", "Seq2SeqEncoder",
    "reverse_index", "reverse_source", "upgrade_config",
]

ATTENTION_CHOICES = ("none", "bahdanau", "luong-dot", "luong-general", "luong-concat")
RNN_CHOICES = ("gru", "lstm")
#: Saved configurations carry this number; those without it are from before ``"bahdanau"``
#: meant Bahdanau et al.'s decoder (see :func:`upgrade_config`).
CONFIG_VERSION = 2


def upgrade_config(config: dict) -> dict:
    """A saved translator's or decoder's configuration in today's terms.

    Before version 2, ``attention="bahdanau"`` named Luong's decoder with the concat score
    (the current state ``h_t`` as the query, the context not fed into the recurrent cell),
    which is now ``"luong-concat"``; the weights it saved have that layout, so it loads as that.
    """
    config = dict(config)
    if config.pop("config_version", 1) < 2 and config.get("attention") == "bahdanau":
        config["attention"] = "luong-concat"
    return config


def _recurrent_layer(kind: str, units: int, **kwargs):
    if kind not in RNN_CHOICES:
        raise ValueError(f"rnn must be one of {RNN_CHOICES}; got {kind!r}")
    layer = keras.layers.GRU if kind == "gru" else keras.layers.LSTM
    # Default activations and reset_after=True keep Keras's fused (cuDNN on GPU) kernels usable.
    return layer(units, return_sequences=True, return_state=True, **kwargs)


def reverse_index(padding_mask):
    """Indices that read each row's real tokens backwards and keep padding at the end.

    ``padding_mask`` ``(batch, S)`` (right-padded, True at real tokens) -> ``(index, valid)``, both ``(batch, S)``:
    position ``i`` takes token ``length - 1 - i`` when ``valid``. Reversing is its own inverse,
    so the same index maps attention weights back to the original order.
    """
    lengths = ops.sum(ops.cast(padding_mask, "int32"), axis=1, keepdims=True)  # (batch, 1)
    positions = ops.expand_dims(ops.arange(ops.shape(padding_mask)[1], dtype="int32"), 0)
    index = lengths - 1 - positions  # (batch, S)
    return ops.maximum(index, 0), index >= 0


def reverse_source(source_ids):
    """``[[5, 6, 7, 0]] -> [[7, 6, 5, 0]]``: the slides' fig. 12 trick of reading backwards."""
    index, valid = reverse_index(ops.not_equal(source_ids, 0))
    return ops.where(valid, ops.take_along_axis(source_ids, index, axis=1), 0)


def _state_shapes(batch, units, rnn_kind):
    """The shapes of a GRU's ``[h]`` or an LSTM's ``[h, c]``, each ``(batch, units)``."""
    return [(batch, units)] * (2 if rnn_kind == "lstm" else 1)


@keras.saving.register_keras_serializable(package="seqlab")
class Seq2SeqEncoder(keras.layers.Layer):
    """The encoder of fig. 12 with the bidirectional RNN of fig. 14.

    Args:
        vocab_size: source vocabulary size (id 0 = padding).
        embedding_dim: size of the source embedding.
        units: size of the concatenated outputs; each direction has ``units // 2`` (even).
        rnn: ``"gru"`` or ``"lstm"``.
        reverse: read the real source tokens backwards (fig. 12), padding kept at the end.
        **kwargs: standard layer arguments (``name``, ``dtype``, ...).

    Call arguments:
        source_ids: ``(batch, S)`` int ids, 0 = padding.
        training: passed to the recurrent layer.

    Returns:
        ``(outputs, states, mask)``: ``outputs`` ``(batch, S, units)``; ``states`` ``[h]``
        (GRU) or ``[h, c]`` (LSTM), each ``(batch, units)``, the forward and backward final
        states concatenated; ``mask`` ``(batch, S)``, True at real tokens.

    Example:
        >>> import numpy as np
        >>> encoder = Seq2SeqEncoder(vocab_size=12, embedding_dim=8, units=16)
        >>> outputs, states, mask = encoder(np.array([[5, 6, 7, 0]]))
        >>> tuple(outputs.shape), [tuple(s.shape) for s in states], np.asarray(mask).tolist()
        ((1, 4, 16), [(1, 16)], [[True, True, True, False]])
    """

    def __init__(self, vocab_size: int, embedding_dim: int = 128, units: int = 256,
                 rnn: str = "gru", reverse: bool = False, **kwargs):
        super().__init__(**kwargs)
        if units % 2:
            raise ValueError(f"units must be even (half per direction); got {units}")
        self.vocab_size, self.embedding_dim, self.units = vocab_size, embedding_dim, units
        self.rnn_kind, self.reverse = rnn, reverse
        self.embedding = keras.layers.Embedding(vocab_size, embedding_dim, mask_zero=True,
                                                name="source_embedding")
        self.rnn = keras.layers.Bidirectional(_recurrent_layer(rnn, units // 2),
                                              merge_mode="concat", name="bidirectional")

    def build(self, input_shape=None):
        # Sizes come from the configuration, so no forward pass is needed to create weights.
        self.embedding.build((None, None))
        self.rnn.build((None, None, self.embedding_dim))
        self.built = True

    def compute_output_shape(self, input_shape):
        """``(batch, S)`` -> the shapes of ``(outputs, states, mask)``; ``summary()`` shows them."""
        batch, length = tuple(input_shape)[:2]
        states = _state_shapes(batch, self.units, self.rnn_kind)
        return (batch, length, self.units), states, (batch, length)

    def compute_output_spec(self, *args, **kwargs):
        # Symbolic calls trace `call` itself, which knows the dtypes (the mask is bool);
        # compute_output_shape above only describes the layer (summary()).
        return keras.Operation.compute_output_spec(self, *args, **kwargs)

    def call(self, source_ids, training=None):
        mask = ops.not_equal(source_ids, 0)  # (batch, S)
        if self.reverse:
            source_ids = reverse_source(source_ids)
        embedded = self.embedding(source_ids)  # (batch, S, embedding_dim)
        outputs = self.rnn(embedded, mask=mask, training=training)
        sequence, states = outputs[0], list(outputs[1:])  # (batch, S, units); 2 or 4 states
        half = len(states) // 2
        states = [ops.concatenate([forward, backward], axis=-1)  # (batch, units)
                  for forward, backward in zip(states[:half], states[half:], strict=True)]
        return sequence, states, mask

    def get_config(self):
        return {**super().get_config(), "vocab_size": self.vocab_size,
                "embedding_dim": self.embedding_dim, "units": self.units,
                "rnn": self.rnn_kind, "reverse": self.reverse}


@keras.saving.register_keras_serializable(package="seqlab")
class Seq2SeqDecoder(keras.layers.Layer):
    """The decoder of figs. 12-13, attending over the encoder outputs with eqs. (12)-(14).

    Args:
        vocab_size: target vocabulary size (id 0 = padding).
        embedding_dim: size of the target embedding.
        units: decoder state size (the encoder's ``units``).
        rnn: ``"gru"`` or ``"lstm"``.
        attention: ``"none"``, ``"bahdanau"`` (Bahdanau's decoder), ``"luong-dot"``,
            ``"luong-general"`` or ``"luong-concat"`` (Luong's decoder; see the module docstring).
        attention_units: the concat score's hidden size (default ``units``).
        dropout: dropout before the output layer.
        output_norm: a ``LayerNormalization`` of the attentional state (of ``h_t`` without
            attention) before the output layer. Not in the slides; on the real corpus it lets
            every variant leave the frequent-token stage far sooner (``benchmarks.quality``:
            README, "Quality on the real corpus"), because the GRU's and ``tanh``'s small
            outputs otherwise make the large output layer learn slowly.
        **kwargs: standard layer arguments (``name``, ``dtype``, ...).

    Call arguments:
        target_ids: ``(batch, T)`` decoder inputs (the target shifted right), 0 = padding.
        encoder_outputs: ``(batch, S, units)``.
        encoder_padding_mask: ``(batch, S)``, True at real source tokens (the encoder's third
            output).
        initial_state: the encoder's ``states``.
        training: enables dropout.

    Returns:
        ``(logits, states, weights)``: ``logits`` ``(batch, T, vocab_size)``; ``states`` the
        final decoder states; ``weights`` ``(batch, T, S)`` (eq. 13), ``None`` without
        attention.

    Example:
        >>> import numpy as np
        >>> encoder = Seq2SeqEncoder(vocab_size=12, embedding_dim=8, units=16)
        >>> decoder = Seq2SeqDecoder(vocab_size=10, embedding_dim=8, units=16)
        >>> outputs, states, mask = encoder(np.array([[5, 6, 7, 0]]))
        >>> logits, _, weights = decoder(np.array([[1, 4]]), outputs, mask, states)
        >>> tuple(logits.shape), tuple(weights.shape), float(np.asarray(weights)[0, :, 3].max())
        ((1, 2, 10), (1, 2, 4), 0.0)
    """

    def __init__(self, vocab_size: int, embedding_dim: int = 128, units: int = 256,
                 rnn: str = "gru", attention: str = "bahdanau",
                 attention_units: int | None = None, dropout: float = 0.0,
                 output_norm: bool = False, **kwargs):
        super().__init__(**kwargs)
        if attention not in ATTENTION_CHOICES:
            raise ValueError(f"attention must be one of {ATTENTION_CHOICES}; got {attention!r}")
        self.vocab_size, self.embedding_dim, self.units = vocab_size, embedding_dim, units
        self.rnn_kind, self.attention_kind = rnn, attention
        self.attention_units, self.dropout = attention_units, dropout
        self.embedding = keras.layers.Embedding(vocab_size, embedding_dim, mask_zero=True,
                                                name="target_embedding")
        # Bahdanau's order: one layer holds the cell and the attention, which it calls per step.
        self.bahdanau = (BahdanauDecoder(units, attention_units, rnn, name="bahdanau_decoder")
                         if attention == "bahdanau" else None)
        # Luong's order (and no attention): a Keras GRU/LSTM, then the attention.
        self.rnn = _recurrent_layer(rnn, units, name=rnn) if self.bahdanau is None else None
        if attention == "luong-concat":
            self.attention = BahdanauAttention(attention_units or units, name="attention")
        elif attention.startswith("luong"):
            self.attention = LuongAttention(attention.split("-")[1], name="attention")
        else:
            self.attention = None
        self.combine = (keras.layers.Dense(units, activation="tanh", name="attentional_state")
                        if attention != "none" else None)
        self.output_dropout = keras.layers.Dropout(dropout)
        self.output_norm = bool(output_norm)
        self.norm = keras.layers.LayerNormalization(name="output_norm") if output_norm else None
        self.output_layer = keras.layers.Dense(vocab_size, name="logits")

    def build(self, input_shape=None):
        sequence = (None, None, self.units)  # decoder states and encoder outputs
        self.embedding.build((None, None))
        if self.bahdanau is not None:
            if not self.bahdanau.built:  # a decoding step may have built it first
                self.bahdanau.build((None, None, self.embedding_dim), sequence)
        else:
            self.rnn.build((None, None, self.embedding_dim))
        if self.attention is not None:
            self.attention.build(sequence, sequence)
        if self.combine is not None:
            self.combine.build((None, None, 2 * self.units))  # [h_t; c_t]
        if self.norm is not None:
            self.norm.build(sequence)
        self.output_layer.build(sequence)
        self.built = True

    def compute_output_shape(self, input_shape):
        """``(batch, T)`` target ids -> the shapes of ``(logits, states, weights)``.

        The source length of ``weights`` ``(batch, T, S)`` is not known from the target alone
        (``None``); without attention only ``(logits, states)`` are listed, since ``weights``
        is ``None``. ``summary()`` shows these.
        """
        batch, length = tuple(input_shape)[:2]
        states = _state_shapes(batch, self.units, self.rnn_kind)
        logits = (batch, length, self.vocab_size)
        if self.combine is None:  # the weights are None, which has no shape to show
            return logits, states
        return logits, states, (batch, length, None)  # weights (batch, T, S)

    def compute_output_spec(self, *args, **kwargs):
        # Symbolic calls trace `call` itself, which knows the exact structure and dtypes;
        # compute_output_shape above only describes the layer (summary()).
        return keras.Operation.compute_output_spec(self, *args, **kwargs)

    def call(self, target_ids, encoder_outputs, encoder_padding_mask, initial_state,
             training=None):
        embedded = self.embedding(target_ids)  # (batch, T, embedding_dim)
        padding_mask = ops.not_equal(target_ids, 0)  # (batch, T)
        if self.bahdanau is not None:
            # [h_t; c_t] (batch, T, 2 * units), weights (batch, T, S), the final states
            both, weights, states = self.bahdanau(
                embedded, encoder_outputs, list(initial_state),
                encoder_padding_mask=encoder_padding_mask, return_attention_scores=True,
                return_state=True, padding_mask=padding_mask, training=training)
            hidden = self.combine(both)  # tanh(W_c [h_t; c_t]): (batch, T, units)
        else:
            outputs = self.rnn(embedded, initial_state=initial_state, mask=padding_mask,
                               training=training)
            hidden, states = outputs[0], list(outputs[1:])  # (batch, T, units)
            hidden, weights = self.attend(hidden, encoder_outputs, encoder_padding_mask)
        logits = self.output_layer(self.output_dropout(self.normalise(hidden), training=training))
        return logits, states, weights

    def attend(self, hidden, encoder_outputs, encoder_padding_mask):
        """Luong's order: decoder states -> ``tanh(W_c [h; context])`` and the weights
        (unchanged, ``None``, without attention). Works for ``(batch, units)`` and
        ``(batch, T, units)`` states."""
        if self.attention is None:
            return hidden, None
        context, weights = self.attention(hidden, encoder_outputs,
                                          padding_mask=encoder_padding_mask,
                                          return_attention_scores=True)
        return self.combine(ops.concatenate([hidden, context], axis=-1)), weights

    def step(self, token_ids, encoder_outputs, encoder_padding_mask, states):
        """One decoding step: token ids ``(batch,)`` -> ``(logits (batch, vocab), states,
        weights (batch, S) or None)``.

        Runs the recurrent cell directly: the same weights and equations as ``call`` on a
        length-1 sequence, without a loop around it (cheaper to trace and to run). With
        Bahdanau's decoder this is :meth:`seqlab.layers.BahdanauDecoder.step`, which ``call``
        loops over.
        """
        # Taking step 0 of a length-1 sequence also drops the padding mask, which means
        # nothing for a single step (and which the cell would warn about).
        embedded = self.embedding(token_ids[:, None])[:, 0]  # (batch, embedding_dim)
        if self.bahdanau is not None:
            both, states, weights = self.bahdanau.step(
                embedded, list(states), encoder_outputs,
                encoder_padding_mask)  # [h_t; c_t]: (batch, 2 units)
            hidden = self.combine(both)  # (batch, units)
        else:
            hidden, states = self.rnn.cell(embedded, list(states))  # (batch, units)
            hidden, weights = self.attend(hidden, encoder_outputs, encoder_padding_mask)
        return self.output_layer(self.normalise(hidden)), list(states), weights

    def normalise(self, hidden):
        """``LayerNormalization`` of what feeds the output layer when ``output_norm``."""
        return hidden if self.norm is None else self.norm(hidden)

    def get_config(self):
        return {**super().get_config(), "vocab_size": self.vocab_size,
                "embedding_dim": self.embedding_dim, "units": self.units, "rnn": self.rnn_kind,
                "attention": self.attention_kind, "attention_units": self.attention_units,
                "dropout": self.dropout, "output_norm": self.output_norm,
                "config_version": CONFIG_VERSION}

    @classmethod
    def from_config(cls, config):
        return super().from_config(upgrade_config(config))
