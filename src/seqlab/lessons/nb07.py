"""Generated from notebooks/07_language_models.ipynb (its #@save cells) by
``python -m seqlab_instructor.lessons``: edit the notebook, not this file."""


import keras

from seqlab.layers import PositionalEmbedding
from seqlab.lessons import ConfigFromArguments
from seqlab.lessons.nb05 import TransformerEncoderLayer


def build_char_lstm(vocab_size, embedding_dim, units, batch_size=None):
    """Embedding -> LSTM -> Dense: logits ``(batch, T, vocab_size)`` for the next character.

    Args: ``vocab_size`` character ids; ``embedding_dim`` a character's vector size; ``units``
    LSTM state size; ``batch_size`` None or a fixed batch: stateful (truncated BPTT; 1 generates).
    Example: ``build_char_lstm(30, 8, 16)(np.zeros((2, 5), "int32")).shape == (2, 5, 30)``.
    """
    if batch_size is None:   # stateless: any batch size, every window starts from a zero state
        ids = keras.Input(shape=(None,), dtype="int32", name="ids")
    else:                    # stateful: one stored state per row of a fixed-size batch
        ids = keras.Input(batch_shape=(batch_size, None), dtype="int32", name="ids")
    x = keras.layers.Embedding(vocab_size, embedding_dim, name="embedding")(ids)  # (batch, T, e)
    x = keras.layers.LSTM(units, return_sequences=True, stateful=batch_size is not None,
                          name="lstm")(x)                                   # (batch, T, units)
    logits = keras.layers.Dense(vocab_size, name="logits")(x)              # (batch, T, vocab)
    return keras.Model(ids, logits, name="char_lstm")


@keras.saving.register_keras_serializable(package="seqlab.nb07")
class MiniGPT(ConfigFromArguments, keras.Model):
    """Embedding + positions -> causally masked Transformer blocks -> Dense: ids ``(batch, T)``
    to logits ``(batch, T, vocab_size)``; ``return_attention_scores=True`` adds each block's
    ``(batch, heads, T, T)`` weights. Example: ``MiniGPT(30, 16, 16, 2, 32, 1)(ids)``."""

    def __init__(self, vocab_size, context_length, d_model, num_heads, dff, num_layers,
                 dropout=0.1, **kwargs):
        super().__init__(**kwargs)
        self.context_length = context_length  # id 0 is a character: mask_zero=False below
        policy = self.dtype_policy   # MiniGPT(..., dtype="mixed_float16"): mixed throughout
        self.embedding = PositionalEmbedding(vocab_size, d_model, mask_zero=False, dtype=policy)
        self.blocks = [TransformerEncoderLayer(d_model, num_heads, dff, dropout=dropout,
                                               name=f"block_{i}", dtype=policy)
                       for i in range(num_layers)]
        self.logits = keras.layers.Dense(vocab_size, name="logits", dtype=policy)

    def build(self, input_shape=None):
        self.call(keras.ops.zeros((1, 1), "int32"))

    def call(self, ids, return_attention_scores=False, training=None):
        x, scores = self.embedding(ids), []                                   # (batch, T, d)
        for block in self.blocks:   # position t attends to positions <= t: the causal mask
            x, weights = block(x, use_causal_mask=True, return_attention_scores=True,
                               training=training)           # (batch, T, d), (batch, H, T, T)
            scores.append(weights)
        logits = self.logits(x)                                               # (batch, T, vocab)
        return (logits, scores) if return_attention_scores else logits
