"""Language models for notebook 07: a character LSTM and a decoder-only Transformer ("mini-GPT").

Both predict the next token from the ones before it (slides 003, "LSTM application: language
model": ``P(X) = Π_t P(X_t | X_<t)``), output logits ``(batch, T, vocab)``, and generate text
one token at a time with :func:`seqlab.sampling.generate` and the sampling functions of
:mod:`seqlab.sampling`.

* :func:`build_char_lstm` — Embedding → LSTM → Dense. With ``batch_size`` given, the LSTM is
  **stateful**: its state carries over from one batch to the next, which together with
  :func:`seqlab.data.corpus_chars.tbptt_dataset` is truncated BPTT (gradients flow back only
  through one window, the state flows forward through the whole text).
* :class:`MiniGPT` — notebook 05's ``PositionalEmbedding`` and ``num_layers`` Transformer blocks
  whose self-attention is causally masked (the slides' "Masked Self-Attention Block": position
  ``t`` sees positions ``≤ t`` only), then a Dense to the vocabulary: the Transformer's decoder
  without cross-attention, built from :class:`seqlab.layers.TransformerEncoderLayer`.

Notebook 07 assembles both networks in its own cells from the same layers and shows them equal
to these (same weights, same logits; ``tests/test_language_model.py`` too); the benchmarks
(``benchmarks/full_mode.py``), :func:`seqlab.sampling.generate` and the offline full-mode tests
use the versions here.
"""

from __future__ import annotations

import math

import keras
from keras import ops

from seqlab.layers import PositionalEmbedding, TransformerEncoderLayer


def build_char_lstm(vocab_size: int, embedding_dim: int = 64, units: int = 256,
                    batch_size: int | None = None, name: str = "char_lstm") -> keras.Model:
    """A character-level LSTM language model (logits for the next character at every step).

    Args:
        vocab_size: number of character ids.
        embedding_dim: size of each character's vector.
        units: LSTM state size.
        batch_size: a fixed batch size makes the LSTM **stateful** (truncated BPTT over a
            :func:`~seqlab.data.corpus_chars.tbptt_dataset`, and generation with batch 1);
            None gives an ordinary stateless model.
        name: the model's name.

    Returns:
        A ``keras.Model`` from ids ``(batch, T)`` to logits ``(batch, T, vocab_size)``.

    Example:
        >>> import numpy as np
        >>> model = build_char_lstm(30, embedding_dim=8, units=16)
        >>> model(np.zeros((2, 5), "int32")).shape
        TensorShape([2, 5, 30])
    """
    if batch_size is None:
        inputs = keras.Input(shape=(None,), dtype="int32", name="ids")
    else:
        inputs = keras.Input(batch_shape=(batch_size, None), dtype="int32", name="ids")
    x = keras.layers.Embedding(vocab_size, embedding_dim, name="embedding")(inputs)  # (batch, T, e)
    x = keras.layers.LSTM(units, return_sequences=True, stateful=batch_size is not None,
                          name="lstm")(x)                                         # (batch, T, units)
    logits = keras.layers.Dense(vocab_size, name="logits")(x)                    # (batch, T, vocab)
    return keras.Model(inputs, logits, name=name)


def with_batch_size(model: keras.Model, batch_size: int | None) -> keras.Model:
    """The same character LSTM (weights copied) rebuilt for another batch size (1: generation)."""
    embedding, lstm = model.get_layer("embedding"), model.get_layer("lstm")
    twin = build_char_lstm(embedding.input_dim, embedding.output_dim, lstm.units, batch_size,
                           name=model.name)
    twin.set_weights(model.get_weights())
    return twin


def reset_states(model: keras.Model) -> None:
    """Zero the state of every stateful recurrent layer (start of an epoch or of a new text)."""
    for layer in model.layers:
        if getattr(layer, "stateful", False):
            layer.reset_state()


class ResetStatesCallback(keras.callbacks.Callback):
    """Zero a stateful model's states before every epoch and every evaluation.

    Truncated BPTT carries the state from batch to batch *within* one pass over the text; a new
    pass (or the held-out text) starts from the beginning, so it starts from a zero state.
    """

    def on_epoch_begin(self, epoch, logs=None):
        reset_states(self.model)

    def on_test_begin(self, logs=None):
        reset_states(self.model)


def perplexity(mean_cross_entropy: float) -> float:
    """``exp`` of the mean cross-entropy in nats per token: the model is as unsure as a fair die
    with this many sides. A uniform guess over ``V`` tokens has perplexity ``V``."""
    return float(math.exp(mean_cross_entropy))


@keras.saving.register_keras_serializable(package="seqlab")
class MiniGPT(keras.Model):
    """A decoder-only Transformer language model from notebook 05's layers.

    ``PositionalEmbedding`` (token embedding × √d plus the sinusoidal encoding of eq. 15),
    ``num_layers`` Transformer blocks whose multi-head self-attention (eq. 16) is **causally
    masked** — position ``t`` attends to positions ``≤ t`` only, the slides' "Masked
    Self-Attention Block" — and a ``Dense`` to the vocabulary. Each block is a
    ``TransformerEncoderLayer`` (self-attention + feed-forward, each with a residual connection
    and LayerNorm) run with the causal mask: a Transformer decoder layer without its
    cross-attention, which is what GPT stacks.

    Args:
        vocab_size: number of token ids (id 0 is an ordinary token here, not padding).
        context_length: the longest input; :func:`seqlab.sampling.generate` feeds the last this many tokens.
        d_model: width of the embeddings and of every block.
        num_heads: attention heads per block.
        dff: hidden units of each block's feed-forward network.
        num_layers: number of blocks.
        dropout: dropout rate inside the blocks.
        **kwargs: passed to ``keras.Model``.

    Call arguments:
        ids: ``(batch, T)`` int token ids.
        return_attention_scores: also return each block's weights, a list of
            ``(batch, heads, T, T)``.
        training: Python bool, dropout on or off.

    Returns:
        Logits ``(batch, T, vocab_size)`` (position ``t`` depends on ``ids[:, :t + 1]`` only),
        or ``(logits, scores)`` with ``return_attention_scores=True``.

    Example:
        >>> import numpy as np
        >>> model = MiniGPT(vocab_size=30, context_length=16, d_model=16, num_heads=2, dff=32,
        ...                 num_layers=1)
        >>> model(np.zeros((2, 5), "int32")).shape
        TensorShape([2, 5, 30])
    """

    def __init__(self, vocab_size, context_length, d_model=64, num_heads=4, dff=256,
                 num_layers=2, dropout=0.1, **kwargs):
        super().__init__(**kwargs)
        self.vocab_size = int(vocab_size)
        self.context_length = int(context_length)
        self.d_model = int(d_model)
        self.num_heads = int(num_heads)
        self.dff = int(dff)
        self.num_layers = int(num_layers)
        self.dropout = float(dropout)
        # Every sub-layer gets the model's dtype policy (as TransformerTranslator does), so
        # MiniGPT(..., dtype="mixed_float16") is mixed precision throughout.
        policy = self.dtype_policy
        self.embedding = PositionalEmbedding(vocab_size, d_model, mask_zero=False, name="embedding",
                                             dtype=policy)
        self.blocks = [TransformerEncoderLayer(d_model=d_model, num_heads=num_heads, dff=dff,
                                               dropout=dropout, name=f"block_{i}", dtype=policy)
                       for i in range(num_layers)]
        self.logits = keras.layers.Dense(vocab_size, name="logits", dtype=policy)

    def build(self, input_shape=None):
        self.call(ops.zeros((1, 1), "int32"))
        self.built = True

    def call(self, ids, return_attention_scores=False, training=None):
        x = self.embedding(ids)                                  # (batch, T, d)
        scores = []
        for block in self.blocks:
            # The encoder layer with the look-ahead mask is GPT's masked self-attention block.
            x, weights = block(x, use_causal_mask=True, return_attention_scores=True,
                               training=training)               # (batch, T, d), (batch, H, T, T)
            scores.append(weights)
        logits = self.logits(x)                                  # (batch, T, vocab)
        return (logits, scores) if return_attention_scores else logits

    def get_config(self):
        config = super().get_config()
        config.update(vocab_size=self.vocab_size, context_length=self.context_length,
                      d_model=self.d_model, num_heads=self.num_heads, dff=self.dff,
                      num_layers=self.num_layers, dropout=self.dropout)
        return config
