"""The Transformer translator of the slides' "The Architecture of Transformer" (encoder–decoder).

``TransformerTranslator((source_ids, target_in)) -> logits``: the source goes through a
:class:`~seqlab.layers.PositionalEmbedding` and N encoder layers; the target prefix (teacher
forcing: the target shifted right, starting with ``[START]``) goes through its own positional
embedding and N decoder layers that attend to the encoder output; a final ``Dense(V)`` gives the
next-token logits at every target position.

Decoding protocol shared with :mod:`seqlab.decoding` (greedy, beam search, ``translate``):

- ``model.encode(source_ids) -> state``: a dict of batch-major tensors, ``{"memory": (B, S, d),
  "source_mask": (B, S) bool}``, so beam search can repeat or gather it along the batch axis;
- ``model.decode_step(target_prefix_ids (B, t) int32, state) -> (logits (B, V), state,
  attention (B, S))``: the decoder is recomputed over the whole prefix (no key/value cache — the
  simple, exact choice at these lengths); ``attention`` is the last decoder layer's
  cross-attention of the newest position, averaged over heads.

Sizes: the class defaults are the small configuration used in class (2 layers, d_model 128,
4 heads, dff 512); :attr:`TransformerTranslator.PRESETS` also holds the paper's base model
(N=6, d_model=512, h=8, dff=2048, dropout 0.1) — ``TransformerTranslator.from_preset("base",
source_vocab_size=..., target_vocab_size=...)``.
"""

from __future__ import annotations

import keras
from keras import ops

from seqlab.layers.transformer import (
    PositionalEmbedding,
    TransformerDecoderLayer,
    TransformerEncoderLayer,
    dense_2d,
    padding_mask,
)

TRANSFORMER_PRESETS = PRESETS = {
    # Notebook 05 FAST mode (synthetic dates task, seconds on a CPU).
    "tiny": {"num_layers": 2, "d_model": 64, "num_heads": 4, "dff": 128, "dropout": 0.0},
    # The class default and the benchmark's reference size.
    "small": {"num_layers": 2, "d_model": 128, "num_heads": 4, "dff": 512, "dropout": 0.1},
    # Vaswani et al. (2017), table 3, "base": 65 M parameters with a 37k shared vocabulary.
    "base": {"num_layers": 6, "d_model": 512, "num_heads": 8, "dff": 2048, "dropout": 0.1},
}


@keras.saving.register_keras_serializable(package="seqlab")
class TransformerTranslator(keras.Model):
    """Encoder–decoder Transformer: ``(source_ids (B, S), target_in (B, T)) -> logits (B, T, V)``.

    Token id ``padding_id`` (0, as ``TextVectorization`` writes it) is padding in both
    languages. The logits carry no Keras mask: padded target positions are excluded by the
    masked loss and accuracy of :mod:`seqlab.training`.

    Args:
        num_layers: N, encoder layers and decoder layers (each).
        d_model: model (embedding) size d; must be a multiple of ``num_heads``.
        num_heads: h, attention heads per attention sub-layer (key size d / h).
        dff: inner size of the position-wise feed-forward networks.
        source_vocab_size, target_vocab_size: vocabulary sizes (required).
        dropout: residual dropout rate (after each sub-layer and on the embeddings).
        attention_dropout: dropout on the attention weights (0 in the paper).
        padding_id: the padding token id.
    """

    PRESETS = PRESETS

    def __init__(self, num_layers=2, d_model=128, num_heads=4, dff=512, source_vocab_size=None,
                 target_vocab_size=None, dropout=0.1, attention_dropout=0.0, padding_id=0,
                 **kwargs):
        super().__init__(**kwargs)
        if not source_vocab_size or not target_vocab_size:
            raise ValueError("TransformerTranslator needs source_vocab_size and target_vocab_size.")
        self.num_layers = int(num_layers)
        self.d_model = int(d_model)
        self.num_heads = int(num_heads)
        self.dff = int(dff)
        self.source_vocab_size = int(source_vocab_size)
        self.target_vocab_size = int(target_vocab_size)
        self.dropout_rate = float(dropout)
        self.attention_dropout = float(attention_dropout)
        self.padding_id = int(padding_id)

        self.source_embedding = PositionalEmbedding(self.source_vocab_size, self.d_model,
                                                    name="source_embedding")
        self.target_embedding = PositionalEmbedding(self.target_vocab_size, self.d_model,
                                                    name="target_embedding")
        self.source_dropout = keras.layers.Dropout(self.dropout_rate, name="source_dropout")
        self.target_dropout = keras.layers.Dropout(self.dropout_rate, name="target_dropout")
        layer_args = {"d_model": self.d_model, "num_heads": self.num_heads, "dff": self.dff,
                      "dropout": self.dropout_rate, "attention_dropout": self.attention_dropout}
        self.encoder_layers = [TransformerEncoderLayer(**layer_args, name=f"encoder_{i}")
                               for i in range(self.num_layers)]
        self.decoder_layers = [TransformerDecoderLayer(**layer_args, name=f"decoder_{i}")
                               for i in range(self.num_layers)]
        self.output_layer = keras.layers.Dense(self.target_vocab_size, name="logits")

    @classmethod
    def from_preset(cls, name, source_vocab_size, target_vocab_size, **overrides):
        """A translator of one of :data:`PRESETS` (``"tiny"``, ``"small"``, ``"base"``)."""
        if name not in PRESETS:
            raise ValueError(f"Unknown preset {name!r}; choose one of {sorted(PRESETS)}.")
        return cls(**{**PRESETS[name], **overrides}, source_vocab_size=source_vocab_size,
                   target_vocab_size=target_vocab_size)

    # ---------------------------------------------------------------------------- building

    def build(self, input_shape=None):
        """Create every weight (also called by ``keras.models.load_model``)."""
        if self.built:
            return
        # Symbolic inputs: sub-layers build with (None, None) shapes, which summary() shows.
        source = keras.KerasTensor((None, None), dtype="int32")
        target = keras.KerasTensor((None, None), dtype="int32")
        self.call((source, target), training=False)
        self.built = True

    # ---------------------------------------------------------------------------- the model

    def encode(self, source_ids, training=False):
        """``(B, S)`` ids -> state ``{"memory": (B, S, d), "source_mask": (B, S) bool}``."""
        source_ids = ops.convert_to_tensor(source_ids)
        source_mask = padding_mask(source_ids, self.padding_id)  # (B, S)
        x = self.source_embedding(source_ids)  # (B, S, d)
        x = self.source_dropout(x, training=training)
        for layer in self.encoder_layers:
            x = layer(x, mask=source_mask, training=training)  # (B, S, d)
        return {"memory": x, "source_mask": source_mask}

    def decode(self, target_ids, state, training=False):
        """Teacher-forced decoder: ``(B, T)`` ids and the encoder state -> logits ``(B, T, V)``."""
        target_ids = ops.convert_to_tensor(target_ids)
        x = self.target_embedding(target_ids)  # (B, T, d)
        x = self.target_dropout(x, training=training)
        for layer in self.decoder_layers:
            x = layer(x, state["memory"], context_mask=state["source_mask"], training=training)
        logits = dense_2d(self.output_layer, x)  # (B, T, V)
        return logits

    def call(self, inputs, training=None):
        source_ids, target_in = inputs
        state = self.encode(source_ids, training=training)
        return self.decode(target_in, state, training=training)  # (B, T, V)

    def decode_step(self, target_prefix_ids, state):
        """One step of autoregressive decoding (the protocol of :mod:`seqlab.decoding`).

        Args:
            target_prefix_ids: ``(B, t)`` int32, ``[START]`` followed by the tokens so far.
            state: from :meth:`encode` (batch-major; beam search may have reordered it).

        Returns:
            ``(logits (B, V), state, attention (B, S))`` — the next-token logits, the unchanged
            state (the whole prefix is recomputed each step), and the last decoder layer's
            cross-attention for the newest position, averaged over heads.
        """
        logits = self.decode(target_prefix_ids, state, training=False)  # (B, t, V)
        weights = self.decoder_layers[-1].last_attention_weights  # (B, H, t, S)
        attention = ops.mean(weights[:, :, -1, :], axis=1)  # (B, S)
        return logits[:, -1, :], state, attention

    def cross_attention_weights(self):
        """Cross-attention weights of every decoder layer from the latest eager call.

        Returns a list (one per layer) of ``(B, H, T, S)`` arrays, for per-head heatmaps.
        """
        return [layer.last_attention_weights for layer in self.decoder_layers]

    def get_config(self):
        return {
            **super().get_config(),
            "num_layers": self.num_layers,
            "d_model": self.d_model,
            "num_heads": self.num_heads,
            "dff": self.dff,
            "source_vocab_size": self.source_vocab_size,
            "target_vocab_size": self.target_vocab_size,
            "dropout": self.dropout_rate,
            "attention_dropout": self.attention_dropout,
            "padding_id": self.padding_id,
        }
