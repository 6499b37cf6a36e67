"""Generated from notebooks/05_transformer.ipynb (its #@save cells) by
``python -m seqlab_instructor.lessons``: edit the notebook, not this file."""


import keras
from keras import ops

from seqlab.layers import (
    CachedMultiHeadAttention,
    MultiHeadAttention,
    PositionalEmbedding,
    PositionwiseFeedForward,
    RealTokenDense,
    TransformerDecoderLayer,
    padding_mask,
)
from seqlab.lessons import ConfigFromArguments


@keras.saving.register_keras_serializable(package="seqlab.nb05")
class TransformerEncoderLayer(ConfigFromArguments, keras.layers.Layer):
    """One encoder layer, post-LN as in the paper: x (B, S, d) -> (B, S, d).
    Example: TransformerEncoderLayer(64, num_heads=4, dff=128)(x, mask=source_mask)"""

    def __init__(self, d_model, num_heads, dff, dropout=0.1, **kwargs):
        super().__init__(**kwargs)
        if d_model % num_heads:
            raise ValueError(f"d_model={d_model} must be a multiple of num_heads={num_heads}")
        policy = self.dtype_policy                                   # the model's precision
        self.self_attention = MultiHeadAttention(num_heads, d_model // num_heads,
                                                 name="self_attention", dtype=policy)
        self.self_attention_dropout = keras.layers.Dropout(dropout, dtype=policy)
        self.self_attention_norm = keras.layers.LayerNormalization(
            epsilon=1e-6, name="self_attention_norm", dtype=policy)
        self.feed_forward = PositionwiseFeedForward(d_model, dff, name="feed_forward", dtype=policy)
        self.feed_forward_dropout = keras.layers.Dropout(dropout, dtype=policy)
        self.feed_forward_norm = keras.layers.LayerNormalization(
            epsilon=1e-6, name="feed_forward_norm", dtype=policy)
        self.supports_masking = True                                 # the output keeps x's mask

    def call(self, x, mask=None, use_causal_mask=False, return_attention_scores=False,
             training=None):
        attended, scores = self.self_attention(                      # eq. (16), H heads
            x, x, value_mask=mask, use_causal_mask=use_causal_mask,
            return_attention_scores=True, training=training)         # (B, S, d), (B, H, S, S)
        x = self.self_attention_norm(x + self.self_attention_dropout(attended, training=training))
        transformed = self.feed_forward(x)                           # (B, S, d), per position
        x = self.feed_forward_norm(x + self.feed_forward_dropout(transformed, training=training))
        return (x, scores) if return_attention_scores else x


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

    def decode_step(self, target_prefix_ids, state):
        """(B, t) prefix -> (next-token logits (B, V), state, last layer's cross-attention (B, S))."""
        if "cache" in state:                                               # the cached step, below
            return self.cached_decode_step(target_prefix_ids, state)
        logits, scores = self.decoder(target_prefix_ids, state["memory"], state["padding_mask"],
                                      return_attention_scores=True)        # (B, t, V), per layer
        attention = ops.mean(scores[-1]["cross_attention"][:, :, -1], axis=1)  # heads averaged
        return logits[:, -1], state, attention

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

    def cached_decode_step(self, target_prefix_ids, state):
        """decode_step through the cache: only the newest token (B, 1) runs through the decoder."""
        memory, source_mask = state["memory"], state["padding_mask"]
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
