"""The Transformer translator of the slides' "The Architecture of Transformer" (encoder–decoder).

``TransformerTranslator((source_ids, target_in)) -> logits``: the source goes through a
:class:`~seqlab.layers.PositionalEmbedding` and N encoder layers; the target prefix (teacher
forcing: the target shifted right, starting with ``[START]``) goes through its own positional
embedding and N decoder layers that attend to the encoder output; a final ``Dense(V)`` gives the
next-token logits at every target position. Token id 0 is padding in both languages (as
``TextVectorization`` writes it).

For decoding (greedy, beam search, ``translate``) it is a
:class:`seqlab.decoding.CachingTranslator`: :meth:`~TransformerTranslator.encode` gives the state
``{"memory": (B, S, d), "padding_mask": (B, S) bool}``; :meth:`~TransformerTranslator.init_cache`
adds a key/value cache (per decoder layer, the source's cross-attention keys and values, computed
once, and room for ``max_length`` self-attention keys and values). With the cache,
:meth:`~TransformerTranslator.decode_step` runs only the newest token through the decoder: its
keys and values are written into the cache and its query attends to the cached ones, so a step
costs O(t) instead of recomputing the whole prefix (O(t²)); the tokens are the same. Without a
cache the whole prefix is recomputed. The attention it returns is the last decoder layer's
cross-attention of the newest position, averaged over heads.

Notebook 05 assembles the same model from the same layers, under the same layer names, as a
Keras functional model in view; it copies its weights into this class to decode, and
``tests/test_models_transformer.py`` checks that the two give the same logits. This class stays
for what the notebook's functional model lacks (``encode``, ``decode_step`` and the cache) and
for the benchmarks and tests that build it.

Sizes: the class defaults are the small configuration used in class (2 layers, d_model 128,
4 heads, dff 512); :data:`TRANSFORMER_PRESETS` also holds the paper's base model
(N=6, d_model=512, h=8, dff=2048, dropout 0.1) — ``TransformerTranslator.from_preset("base",
source_vocab_size=..., target_vocab_size=...)``.
"""

from __future__ import annotations

import keras
from keras import ops

from seqlab.layers import (
    PositionalEmbedding,
    RealTokenDense,
    TransformerDecoderLayer,
    TransformerEncoderLayer,
    padding_mask,
)
from seqlab.layers.transformer_blocks import head_size

TRANSFORMER_PRESETS = {
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

    Token id 0 is padding in both languages. The logits carry no Keras mask: padded target
    positions are excluded by the masked loss and accuracy of :mod:`seqlab.training`.

    Args:
        num_layers: N, encoder layers and decoder layers (each).
        d_model: model (embedding) size d; must be a multiple of ``num_heads``.
        num_heads: h, attention heads per attention sub-layer (key size d / h).
        dff: inner size of the position-wise feed-forward networks.
        source_vocab_size, target_vocab_size: vocabulary sizes (required).
        dropout: residual dropout rate (after each sub-layer and on the embeddings).
        attention_dropout: dropout on the attention weights (0 in the paper).
        skip_padding: compute the output layer's logits at the real target positions only
            (:class:`seqlab.layers.RealTokenDense`; zeros at padding, which the masked loss
            ignores: same loss and gradients, less work on batches with padding). Not with XLA
            or on TPUs, which need fixed shapes. Default False: every position.

    Call arguments:
        inputs: ``(source_ids (B, S), target_in (B, T))`` int ids.
        training: enables dropout.

    Returns:
        logits ``(B, T, V)``.

    Example:
        >>> import numpy as np
        >>> model = TransformerTranslator.from_preset("tiny", source_vocab_size=20, target_vocab_size=15)
        >>> tuple(model((np.ones((2, 6), "int32"), np.ones((2, 4), "int32"))).shape)
        (2, 4, 15)
    """

    def __init__(self, num_layers=2, d_model=128, num_heads=4, dff=512, source_vocab_size=None,
                 target_vocab_size=None, dropout=0.1, attention_dropout=0.0,
                 skip_padding=False, **kwargs):
        super().__init__(**kwargs)
        if not source_vocab_size or not target_vocab_size:
            raise ValueError("TransformerTranslator needs source_vocab_size and target_vocab_size.")
        self.num_layers = int(num_layers)
        self.d_model = int(d_model)
        self.num_heads = int(num_heads)
        self.dff = int(dff)
        self.source_vocab_size = int(source_vocab_size)
        self.target_vocab_size = int(target_vocab_size)
        self.dropout = float(dropout)
        self.attention_dropout = float(attention_dropout)
        self.skip_padding = bool(skip_padding)

        # Every sub-layer gets the model's dtype policy (keras-hub's convention), so
        # TransformerTranslator(..., dtype="mixed_float16") is mixed precision throughout.
        policy = self.dtype_policy
        self.source_embedding = PositionalEmbedding(self.source_vocab_size, self.d_model,
                                                    name="source_embedding", dtype=policy)
        # No Keras mask on the target: the causal mask already hides trailing padding from every
        # real position (the loss skips padded positions), and a Keras mask would reach the
        # first self-attention as an implicit query/value mask (Keras fills `*_mask` arguments
        # from `_keras_mask`), which the one-token-at-a-time cached decoder could not reproduce.
        self.target_embedding = PositionalEmbedding(self.target_vocab_size, self.d_model,
                                                    mask_zero=False, name="target_embedding",
                                                    dtype=policy)
        self.source_dropout = keras.layers.Dropout(self.dropout, name="source_dropout",
                                                   dtype=policy)
        self.target_dropout = keras.layers.Dropout(self.dropout, name="target_dropout",
                                                   dtype=policy)
        layer_args = {"d_model": self.d_model, "num_heads": self.num_heads, "dff": self.dff,
                      "dropout": self.dropout, "attention_dropout": self.attention_dropout,
                      "dtype": policy}
        self.encoder_layers = [TransformerEncoderLayer(**layer_args, name=f"encoder_{i}")
                               for i in range(self.num_layers)]
        self.decoder_layers = [TransformerDecoderLayer(**layer_args, name=f"decoder_{i}")
                               for i in range(self.num_layers)]
        self.output_layer = RealTokenDense(self.target_vocab_size, name="logits",
                                           skip_padding=self.skip_padding, dtype=policy)

    @classmethod
    def from_preset(cls, name, source_vocab_size, target_vocab_size, **overrides):
        """A translator of one of :data:`TRANSFORMER_PRESETS` (``"tiny"``, ``"small"``, ``"base"``)."""
        if name not in TRANSFORMER_PRESETS:
            raise ValueError(
                f"Unknown preset {name!r}; choose one of {sorted(TRANSFORMER_PRESETS)}.")
        return cls(**{**TRANSFORMER_PRESETS[name], **overrides},
                   source_vocab_size=source_vocab_size, target_vocab_size=target_vocab_size)

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
        """``(B, S)`` ids -> state ``{"memory": (B, S, d), "padding_mask": (B, S) bool}``."""
        source_ids = ops.convert_to_tensor(source_ids)
        source_mask = padding_mask(source_ids)  # (B, S)
        x = self.source_embedding(source_ids)  # (B, S, d)
        x = self.source_dropout(x, training=training)
        for layer in self.encoder_layers:
            x = layer(x, mask=source_mask, training=training)  # (B, S, d)
        return {"memory": x, "padding_mask": source_mask}

    def decode(self, target_ids, state, training=False, return_attention_scores=False):
        """Teacher-forced decoder: ``(B, T)`` ids and the encoder state -> logits ``(B, T, V)``.

        With ``return_attention_scores=True`` returns ``(logits, scores)``: one dict per decoder
        layer, ``{"self_attention": (B, H, T, T), "cross_attention": (B, H, T, S)}`` (for the
        per-head heatmaps).
        """
        target_ids = ops.convert_to_tensor(target_ids)
        x = self.target_embedding(target_ids)  # (B, T, d)
        x = self.target_dropout(x, training=training)
        scores = []
        for layer in self.decoder_layers:
            x, layer_scores = layer(x, state["memory"],
                                    encoder_padding_mask=state["padding_mask"],
                                    return_attention_scores=True, training=training)
            scores.append(layer_scores)
        logits = self._logits(x, target_ids)  # (B, T, V)
        return (logits, scores) if return_attention_scores else logits

    def _logits(self, x, target_ids):
        """The output layer on the decoder's ``(B, T, d)``: ``(B, T, V)`` logits."""
        # the real positions' logits only (zeros at padding) where skip_padding, else all
        return self.output_layer(x, padding_mask=padding_mask(target_ids))

    def call(self, inputs, training=None):
        source_ids, target_in = inputs
        state = self.encode(source_ids, training=training)
        return self.decode(target_in, state, training=training)  # (B, T, V)

    # ---------------------------------------------------------------------------- decoding

    def init_cache(self, state, max_length):
        """``state`` plus a key/value cache for decoding up to ``max_length`` tokens.

        ``state["cache"]`` holds one dict per decoder layer: ``"cross_attention"``, the source's
        keys and values ``(B, H, S, dk)`` (projected once here instead of at every step), and
        ``"self_attention"``, zeros ``(B, H, max_length, dk)`` that :meth:`decode_step` fills
        one position per step. Every tensor is batch-major, so beam search can gather it.
        The cache has room for ``max_length`` positions: decode at most that many tokens with
        it (``seqlab.decoding`` passes its own ``max_length``).
        """
        self.build()  # the decoder's weights exist before its projections are used directly
        memory = state["memory"]
        batch = ops.shape(memory)[0]
        cache = []
        for layer in self.decoder_layers:
            cross = layer.cross_attention.project_key_value(memory)  # 2 × (B, H, S, dk)
            empty = ops.zeros((batch, self.num_heads, max_length,
                               head_size(self.d_model, self.num_heads)),
                              dtype=cross[0].dtype)  # (B, H, L, dk)
            cache.append({"self_attention": (empty, empty), "cross_attention": cross})
        return {**state, "cache": cache}

    def decode_step(self, target_prefix_ids, state):
        """One step of autoregressive decoding (:class:`seqlab.decoding.Translator`).

        Args:
            target_prefix_ids: ``(B, t)`` int32, ``[START]`` followed by the tokens so far.
            state: from :meth:`encode`, optionally with :meth:`init_cache`'s cache
                (batch-major; beam search may have reordered it).

        Returns:
            ``(logits (B, V), state, attention (B, S))`` — the next-token logits, the state
            (with the newest position written into the cache, if there is one), and the last
            decoder layer's cross-attention for the newest position, averaged over heads.
        """
        if "cache" not in state:
            logits, scores = self.decode(target_prefix_ids, state, return_attention_scores=True)
            cross = scores[-1]["cross_attention"][:, :, -1, :]  # (B, H, S), newest position
            return logits[:, -1, :], state, ops.mean(cross, axis=1)
        target_prefix_ids = ops.convert_to_tensor(target_prefix_ids)
        index = ops.shape(target_prefix_ids)[1] - 1  # position of the newest token
        newest = ops.expand_dims(target_prefix_ids[:, -1], 1)  # (B, 1)
        x = self.target_embedding(newest, start_position=index)  # (B, 1, d)
        cache = []
        for layer, layer_cache in zip(self.decoder_layers, state["cache"], strict=True):
            x, scores, self_cache = layer(
                x, state["memory"], encoder_padding_mask=state["padding_mask"],
                return_attention_scores=True,
                self_attention_cache=layer_cache["self_attention"],
                self_attention_cache_update_index=index,
                cross_attention_cache=layer_cache["cross_attention"],
            )  # (B, 1, d), scores, 2 × (B, H, L, dk)
            cache.append({"self_attention": self_cache,
                          "cross_attention": layer_cache["cross_attention"]})
        logits = self.output_layer(x[:, 0, :])  # (B, V)
        attention = ops.mean(scores["cross_attention"][:, :, 0, :], axis=1)  # (B, S)
        return logits, {**state, "cache": cache}, attention

    def get_config(self):
        return {
            **super().get_config(),
            "num_layers": self.num_layers,
            "d_model": self.d_model,
            "num_heads": self.num_heads,
            "dff": self.dff,
            "source_vocab_size": self.source_vocab_size,
            "target_vocab_size": self.target_vocab_size,
            "dropout": self.dropout,
            "attention_dropout": self.attention_dropout,
            "skip_padding": self.skip_padding,
        }


def build_transformer_translator(source_vocab_size: int, target_vocab_size: int, *,
                                 preset: str = "small", strategy=None,
                                 **overrides) -> TransformerTranslator:
    """A built :class:`TransformerTranslator` of a preset, its variables in ``strategy``'s scope.

    Args:
        source_vocab_size / target_vocab_size: vocabulary sizes (0 = padding).
        preset: a key of :data:`TRANSFORMER_PRESETS` (``"tiny"``, ``"small"``, ``"base"``).
        strategy: a ``tf.distribute`` strategy (see :func:`seqlab.distribute.choose_strategy`);
            each replica then holds a copy of every weight. None: the current strategy.
        **overrides: preset values to change (e.g. ``dropout=0.0``).

    Returns:
        The translator, built and not compiled: compile it with
        :func:`seqlab.training.compile_translator`, which works in the model's strategy scope.
    """
    from seqlab.distribute import strategy_scope

    with strategy_scope(strategy):
        model = TransformerTranslator.from_preset(preset, source_vocab_size, target_vocab_size,
                                                  **overrides)
        model.build()
    return model
