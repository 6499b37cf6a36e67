"""The RNN encoder-decoder translator of the slides (figs. 12-15), with or without attention.

:class:`Seq2SeqTranslator` is the ``keras.Model``: ``call((source_ids, target_in))`` runs the
encoder on the source and the decoder on the target shifted right (teacher forcing) and returns
logits ``(batch, T, target_vocab)``. Its encoder and decoder, and the attention variants the
decoder offers (Bahdanau's and Luong's orders), are :mod:`seqlab.models.seq2seq_layers`.

For decoding it is a :class:`seqlab.decoding.Translator` (:meth:`Seq2SeqTranslator.encode`,
:meth:`Seq2SeqTranslator.decode_step`): ``decode_step`` uses only the last token of the prefix,
its history being in the decoder's recurrent state.
"""

from __future__ import annotations

import keras
from keras import ops

from seqlab.models.seq2seq_layers import (
    ATTENTION_CHOICES,
    CONFIG_VERSION,
    RNN_CHOICES,
    Seq2SeqDecoder,
    Seq2SeqEncoder,
    reverse_index,
    reverse_source,
    upgrade_config,
)

__all__ = [
    "Seq2SeqTranslator", "build_for_training", "build_rnn_translator",
    # the parts, re-exported for code that imports them from here
    "ATTENTION_CHOICES", "CONFIG_VERSION", "RNN_CHOICES", "Seq2SeqDecoder", "Seq2SeqEncoder",
    "reverse_index", "reverse_source", "upgrade_config",
]


def build_for_training(model, x, y) -> None:
    """Create the model's, loss's, metrics' and optimizer's variables from one example batch.

    On first use Keras's TensorFlow trainer traces the whole model symbolically to create this
    state (``backend.compute_output_spec``) and then traces the train step; for recurrent
    models with masks the symbolic pass costs several seconds per model on a 2-core CPU, more
    than a FAST-mode epoch. One small eager call builds the same state, and ``fit`` skips its
    symbolic pass. Call after ``compile`` (``Seq2SeqTranslator.compile`` does); ``x`` and ``y``
    may be one short example. What is already built is left alone.
    """
    y_pred = model(x, training=False)
    if getattr(model, "compiled", False):
        # Public API only: computing the compiled loss and metrics once builds them; the one
        # metric update is then forgotten.
        if getattr(model, "loss", None) is not None:
            model.compute_loss(x, y, y_pred)
        model.compute_metrics(x, y, y_pred)
        model.reset_metrics()
    optimizer = getattr(model, "optimizer", None)
    if optimizer is not None and not optimizer.built:
        optimizer.build(model.trainable_variables)


@keras.saving.register_keras_serializable(package="seqlab")
class Seq2SeqTranslator(keras.Model):
    """RNN encoder-decoder translator (figs. 12-15, eqs. 12-14); a
    :class:`seqlab.decoding.Translator` (:meth:`encode`, :meth:`decode_step`).

    Args:
        source_vocab_size: source vocabulary size (0 = padding).
        target_vocab_size: target vocabulary size (0 = padding).
        embedding_dim: size of both embeddings.
        units: decoder state size; each encoder direction has ``units // 2``.
        rnn: ``"gru"`` or ``"lstm"``.
        attention: ``"none"``, ``"bahdanau"`` (Bahdanau's decoder), ``"luong-dot"``,
            ``"luong-general"`` or ``"luong-concat"`` (Luong's decoder with the three scores of
            eq. 12); see :mod:`seqlab.models.seq2seq_layers`.
        attention_units: the concat score's hidden size (default ``units``).
        reverse_source: read the source backwards (fig. 12).
        dropout: dropout before the output layer.
        output_norm: ``LayerNormalization`` before the output layer (see :class:`Seq2SeqDecoder`).
        **kwargs: standard model arguments (``name``, ...).

    Call arguments:
        inputs: ``(source_ids, target_in)``, ``(batch, S)`` and ``(batch, T)`` int ids, the
            target shifted right (teacher forcing), 0 = padding.
        training: enables dropout.
        return_attention_scores: also return the attention weights.

    Returns:
        ``logits`` ``(batch, T, target_vocab_size)``; with ``return_attention_scores=True``,
        ``(logits, weights)``, weights ``(batch, T, S)`` over the source in its original order
        (``None`` for ``attention="none"``).

    Example:
        >>> import numpy as np
        >>> model = Seq2SeqTranslator(12, 10, embedding_dim=8, units=16, attention="luong-dot")
        >>> source, target_in = np.array([[5, 6, 7, 0]]), np.array([[1, 4, 3]])
        >>> logits, weights = model((source, target_in), return_attention_scores=True)
        >>> tuple(logits.shape), tuple(weights.shape)
        ((1, 3, 10), (1, 3, 4))
    """

    def __init__(self, source_vocab_size: int, target_vocab_size: int, *,
                 embedding_dim: int = 128, units: int = 256, rnn: str = "gru",
                 attention: str = "bahdanau", attention_units: int | None = None,
                 reverse_source: bool = False, dropout: float = 0.0, output_norm: bool = False,
                 **kwargs):
        super().__init__(**kwargs)
        self.source_vocab_size, self.target_vocab_size = source_vocab_size, target_vocab_size
        self.embedding_dim, self.units, self.rnn_kind = embedding_dim, units, rnn
        self.attention_kind, self.attention_units = attention, attention_units
        self.reverse_source, self.dropout = reverse_source, dropout
        self.output_norm = bool(output_norm)
        self.encoder = Seq2SeqEncoder(source_vocab_size, embedding_dim, units, rnn,
                                      reverse=reverse_source, name="encoder")
        self.decoder = Seq2SeqDecoder(target_vocab_size, embedding_dim, units, rnn, attention,
                                      attention_units, dropout, output_norm=output_norm,
                                      name="decoder")

    def build(self, input_shape=None):
        # Every variable exists after this, so load_model can restore weights. The id shapes
        # (batch, S) and (batch, T) let summary() show each part's output shapes.
        self.encoder.build((None, None))
        self.decoder.build((None, None))
        self.built = True

    def compile(self, *args, **kwargs):
        """``keras.Model.compile``, then build loss, metrics and optimizer state eagerly on a
        two-token batch (see :func:`build_for_training`): the first
        ``fit`` epoch then skips Keras's symbolic build, seconds per model on a CPU."""
        super().compile(*args, **kwargs)
        dummy = ops.ones((1, 2), dtype="int32")
        build_for_training(self, (dummy, dummy), dummy)

    # Keras's own compile_from_config skips models that override compile(); restore the
    # settings (optimizer, loss, metrics) that load_model finds in the .keras file ourselves.
    def compile_from_config(self, config):
        self.compile(**keras.saving.deserialize_keras_object(config))

    def call(self, inputs, training=None, return_attention_scores=False):
        source_ids, target_in = inputs
        encoder_outputs, states, padding_mask = self.encoder(source_ids, training=training)
        logits, _, weights = self.decoder(target_in, encoder_outputs, padding_mask, states,
                                          training=training)  # (batch, T, target_vocab)
        if not return_attention_scores:
            return logits
        return logits, self._in_source_order(weights, padding_mask)  # (batch, T, S)

    def _in_source_order(self, weights, padding_mask):
        """Attention over the (possibly reversed) encoder input -> over the original source."""
        if weights is None or not self.reverse_source:
            return weights
        index, valid = reverse_index(padding_mask)  # (batch, S)
        if len(weights.shape) == 3:  # (batch, T, S): the same index for every target step
            index, valid = index[:, None, :], valid[:, None, :]
            index = ops.broadcast_to(index, ops.shape(weights))
        return ops.where(valid, ops.take_along_axis(weights, index, axis=-1), 0.0)

    # ---- seqlab.decoding.Translator ---------------------------------------------------------

    def encode(self, source_ids):
        """``(batch, S)`` ids -> state dict (encoder outputs, the source's padding mask, decoder
        states)."""
        source_ids = ops.cast(source_ids, "int32")
        encoder_outputs, states, padding_mask = self.encoder(source_ids)
        return {"encoder_outputs": encoder_outputs, "padding_mask": padding_mask,
                "decoder_states": states}

    def decode_step(self, target_prefix_ids, state):
        """One decoder step on the prefix's last token -> ``(logits, new_state, attention)``."""
        last_token = ops.cast(target_prefix_ids, "int32")[:, -1]  # (batch,)
        logits, states, attention = self.decoder.step(
            last_token, state["encoder_outputs"], state["padding_mask"], state["decoder_states"])
        attention = self._in_source_order(attention, state["padding_mask"])  # (batch, S)
        return logits, {**state, "decoder_states": states}, attention

    def get_config(self):
        return {**super().get_config(), "source_vocab_size": self.source_vocab_size,
                "target_vocab_size": self.target_vocab_size,
                "embedding_dim": self.embedding_dim, "units": self.units, "rnn": self.rnn_kind,
                "attention": self.attention_kind, "attention_units": self.attention_units,
                "reverse_source": self.reverse_source, "dropout": self.dropout,
                "output_norm": self.output_norm, "config_version": CONFIG_VERSION}

    @classmethod
    def from_config(cls, config):
        return super().from_config(upgrade_config(config))


def build_rnn_translator(source_vocab_size: int, target_vocab_size: int, *, strategy=None,
                         **options) -> Seq2SeqTranslator:
    """A built :class:`Seq2SeqTranslator` whose variables are created in ``strategy``'s scope.

    Args:
        source_vocab_size / target_vocab_size: vocabulary sizes (0 = padding).
        strategy: a ``tf.distribute`` strategy (see :func:`seqlab.distribute.choose_strategy`);
            each replica then holds a copy of every weight. None: the current strategy.
        **options: the translator's other arguments (``embedding_dim``, ``units``, ``rnn``,
            ``attention``, ...).

    Returns:
        The translator, built (every weight exists) and not compiled: compile it with
        :func:`seqlab.training.compile_translator`, which works in the model's strategy scope.
    """
    from seqlab.distribute import strategy_scope

    with strategy_scope(strategy):
        model = Seq2SeqTranslator(source_vocab_size, target_vocab_size, **options)
        model.build()
    return model
