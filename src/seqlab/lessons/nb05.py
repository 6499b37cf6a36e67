"""Generated from notebooks/05_transformer.ipynb (its #@save cells) by
``python -m seqlab_instructor.lessons``: edit the notebook, not this file."""


import keras
from keras import ops

from seqlab.layers import (
    CachedMultiHeadAttention,
    PositionalEmbedding,
    RealTokenDense,
    TransformerDecoderLayer,
    TransformerEncoderLayer,
    padding_mask,
)
from seqlab.lessons import ConfigFromArguments


@keras.saving.register_keras_serializable(package="seqlab.nb05")
class TransformerEncoder(ConfigFromArguments, keras.layers.Layer):
    """(B, S) source ids -> the memory (B, S, d): eq. (15)'s embedding, dropout, N layers."""

    def __init__(self, vocab_size, num_layers, d_model, num_heads, dff, dropout=0.1, **kwargs):
        super().__init__(**kwargs)
        policy = self.dtype_policy  # every sub-layer computes in the model's precision
        self.embedding = PositionalEmbedding(vocab_size, d_model, name="embedding", dtype=policy)
        self.dropout = keras.layers.Dropout(dropout, name="source_dropout", dtype=policy)
        self.stack = [TransformerEncoderLayer(d_model, num_heads, dff, dropout, dtype=policy,
                                              name=f"encoder_{i}") for i in range(num_layers)]

    def call(self, source_ids, training=None):
        source_mask = padding_mask(source_ids)                            # (B, S): False on padding
        x = self.dropout(self.embedding(source_ids), training=training)   # (B, S, d)
        for layer in self.stack:                                          # N identical layers
            x = layer(x, mask=source_mask, training=training)             # (B, S, d)
        return x


@keras.saving.register_keras_serializable(package="seqlab.nb05")
class TransformerDecoder(ConfigFromArguments, keras.layers.Layer):
    """(B, T) shifted target ids + the memory (B, S, d) -> next-token logits (B, T, V)."""

    def __init__(self, vocab_size, num_layers, d_model, num_heads, dff, dropout=0.1, causal=True,
                 skip_padding=False, **kwargs):
        super().__init__(**kwargs)
        self.causal = causal
        policy = self.dtype_policy
        self.embedding = PositionalEmbedding(vocab_size, d_model, mask_zero=False,
                                             name="target_embedding", dtype=policy)
        self.dropout = keras.layers.Dropout(dropout, name="target_dropout", dtype=policy)
        self.stack = [TransformerDecoderLayer(d_model, num_heads, dff, dropout, dtype=policy,
                                              name=f"decoder_{i}") for i in range(num_layers)]
        self.logits = RealTokenDense(vocab_size, skip_padding=skip_padding, name="logits",
                                     dtype=policy)  # skip_padding: real target positions only

    def call(self, target_in, memory, source_mask, training=None, return_attention_scores=False):
        x = self.dropout(self.embedding(target_in), training=training)   # (B, T, d)
        scores = []                                                      # per layer, for heatmaps
        for layer in self.stack:
            x, layer_scores = layer(x, memory, encoder_padding_mask=source_mask,
                                    use_causal_mask=self.causal,
                                    return_attention_scores=True, training=training)  # (B, T, d)
            scores.append(layer_scores)
        logits = self.logits(x, padding_mask=padding_mask(target_in))   # (B, T, V)
        return (logits, scores) if return_attention_scores else logits


@keras.saving.register_keras_serializable(package="seqlab.nb05")
class TransformerTranslator(ConfigFromArguments, keras.Model):
    """(source_ids (B, S), target_in (B, T)) -> logits (B, T, V): the slides' architecture.

    Example: TransformerTranslator(20, 15, num_layers=2, d_model=64, num_heads=4, dff=128)
    """

    def __init__(self, source_vocab_size, target_vocab_size, num_layers, d_model, num_heads, dff,
                 dropout=0.1, causal=True, skip_padding=False, **kwargs):
        super().__init__(**kwargs)
        sizes = {"num_layers": num_layers, "d_model": d_model, "num_heads": num_heads,
                 "dff": dff, "dropout": dropout}
        self.encoder = TransformerEncoder(source_vocab_size, **sizes, dtype=self.dtype_policy)
        self.decoder = TransformerDecoder(target_vocab_size, **sizes, causal=causal,
                                          skip_padding=skip_padding, dtype=self.dtype_policy)

    def build(self, input_shape=None):
        ids = keras.KerasTensor((None, None), dtype="int32")  # every weight, also on loading
        self.call((ids, ids))

    def encode(self, source_ids, training=None):
        """The decoding state: {"memory": (B, S, d), "padding_mask": (B, S)}."""
        return {"memory": self.encoder(source_ids, training=training),
                "padding_mask": padding_mask(source_ids)}

    def call(self, inputs, training=None):
        source_ids, target_in = inputs
        state = self.encode(source_ids, training=training)
        return self.decoder(target_in, state["memory"], state["padding_mask"], training=training)

    def init_cache(self, state, max_length):
        """state + per decoder layer the source's keys and values and room for max_length steps."""
        if not self.built:  # the decoder's projections exist before they are used directly
            self.build()
        memory = state["memory"]                                     # (B, S, d)
        cache = []
        for layer in self.decoder.stack:
            attention = CachedMultiHeadAttention.sharing(layer.cross_attention)  # its weights
            cross = attention.project_key_value(memory)              # 2 × (B, H, S, dk)
            empty = ops.zeros((ops.shape(memory)[0], attention.num_heads, max_length,
                               attention.key_dim), dtype=cross[0].dtype)  # (B, H, L, dk)
            cache.append({"self_attention": (empty, empty), "cross_attention": cross})
        return {**state, "cache": cache}

    def decode_step(self, target_prefix_ids, state):
        """(B, t) prefix -> (next-token logits (B, V), state, last layer's cross-attention (B, S))."""
        memory, source_mask = state["memory"], state["padding_mask"]
        if "cache" not in state:  # recompute the whole prefix
            logits, scores = self.decoder(target_prefix_ids, memory, source_mask,
                                          return_attention_scores=True)
            return logits[:, -1], state, ops.mean(scores[-1]["cross_attention"][:, :, -1], axis=1)
        index = ops.shape(target_prefix_ids)[1] - 1                        # the newest position
        x = self.decoder.embedding(target_prefix_ids[:, -1:], start_position=index)  # (B, 1, d)
        cache = []
        for layer, old in zip(self.decoder.stack, state["cache"], strict=True):
            x, scores, keys_values = decoder_layer_step(layer, x, memory, source_mask, old, index)
            cache.append({"self_attention": keys_values, "cross_attention": old["cross_attention"]})
        attention = ops.mean(scores[:, :, 0], axis=1)                    # (B, S), heads averaged
        return self.decoder.logits(x[:, 0]), {**state, "cache": cache}, attention


def decoder_layer_step(layer, x, memory, source_mask, cache, index):
    """A TransformerDecoderLayer's call for the newest position x (B, 1, d), through the cache:
    -> (x (B, 1, d), cross-attention weights (B, H, 1, S), the updated self-attention cache)."""
    self_attention = CachedMultiHeadAttention.sharing(layer.self_attention)
    cross_attention = CachedMultiHeadAttention.sharing(layer.cross_attention)
    attended, keys_values = self_attention(                 # writes position index, sees <= index
        x, x, use_causal_mask=True, cache=cache["self_attention"], cache_update_index=index)
    x = layer.self_attention_norm(x + attended)             # (B, 1, d)
    attended, scores, _ = cross_attention(                  # the memory's keys and values, cached
        x, memory, value_mask=source_mask, return_attention_scores=True,
        cache=cache["cross_attention"])
    x = layer.cross_attention_norm(x + attended)
    x = layer.feed_forward_norm(x + layer.feed_forward(x))
    return x, scores, keys_values
