"""Generated from notebooks/04_neural_machine_translation.ipynb (its #@save cells) by
``python -m seqlab_instructor.lessons``: edit the notebook, not this file."""


import keras
import numpy as np
from keras import ops

from seqlab.layers import BahdanauAttention, BahdanauDecoder, LuongAttention
from seqlab.lessons import ConfigFromArguments


@keras.saving.register_keras_serializable(package="seqlab.nb04")
class Encoder(ConfigFromArguments, keras.layers.Layer):
    """Source ids (batch, S) -> outputs y (batch, S, units), [h(0)], source mask (batch, S)."""

    def __init__(self, vocab_size, embedding_dim, units, **kwargs):
        super().__init__(**kwargs)
        self.embedding = keras.layers.Embedding(vocab_size, embedding_dim, mask_zero=True)
        self.rnn = keras.layers.Bidirectional(  # units // 2 per direction, concatenated
            keras.layers.GRU(units // 2, return_sequences=True, return_state=True))

    def call(self, source_ids):
        mask = ops.not_equal(source_ids, 0)                      # True at real words
        embedded = self.embedding(source_ids)                    # (batch, S, embedding_dim)
        outputs, forward, backward = self.rnn(embedded, mask=mask)
        state = ops.concatenate([forward, backward], axis=-1)    # (batch, units): h(0)
        return outputs, [state], mask


@keras.saving.register_keras_serializable(package="seqlab.nb04")
class Decoder(ConfigFromArguments, keras.layers.Layer):
    """Fig. 12's decoder; attention "luong-dot", "luong-general" or "luong-concat": Luong's."""

    def __init__(self, vocab_size, embedding_dim, units, attention="none", output_norm=False,
                 **kwargs):
        super().__init__(**kwargs)
        self.embedding = keras.layers.Embedding(vocab_size, embedding_dim, mask_zero=True)
        self.rnn = keras.layers.GRU(units, return_sequences=True, return_state=True)
        self.attention = (None if attention == "none" else BahdanauAttention(units)  # eq. (12)
                          if attention == "luong-concat" else LuongAttention(attention[6:]))
        self.combine = keras.layers.Dense(units, activation="tanh") if self.attention else None
        self.norm = keras.layers.LayerNormalization() if output_norm else None
        self.output_layer = keras.layers.Dense(vocab_size)            # one logit per word

    def call(self, target_in, encoder_outputs, source_mask, state):
        embedded = self.embedding(target_in)                          # (batch, T, embedding_dim)
        h, *state = self.rnn(embedded, initial_state=state, mask=ops.not_equal(target_in, 0))
        weights = None                                                # h: (batch, T, units)
        if self.attention is not None:                                # Luong: query h(t)
            context, weights = self.attention(h, encoder_outputs, padding_mask=source_mask,
                                              return_attention_scores=True)  # (batch, T, units)
            h = self.combine(ops.concatenate([h, context], axis=-1))  # tanh(W_c [h(t); c(t)])
        h = h if self.norm is None else self.norm(h)
        return self.output_layer(h), state, weights                   # logits (batch, T, vocab)


@keras.saving.register_keras_serializable(package="seqlab.nb04")
class Translator(ConfigFromArguments, keras.Model):
    """(source ids, decoder input) -> logits (batch, T, target vocab); a decoding Translator."""

    def __init__(self, source_vocab_size, target_vocab_size, embedding_dim, units,
                 attention="none", output_norm=False, **kwargs):
        super().__init__(**kwargs)
        self.encoder = Encoder(source_vocab_size, embedding_dim, units)
        decoder = BahdanauTranslatorDecoder if attention == "bahdanau" else Decoder
        self.decoder = decoder(target_vocab_size, embedding_dim, units, attention, output_norm)

    def build(self, input_shape=None):
        self.call((ops.ones((1, 2), "int32"),) * 2)                  # creates every weight

    def call(self, inputs):
        source_ids, target_in = inputs
        encoder_outputs, state, source_mask = self.encoder(source_ids)
        return self.decoder(target_in, encoder_outputs, source_mask, state)[0]

    def encode(self, source_ids):
        outputs, state, mask = self.encoder(ops.cast(source_ids, "int32"))
        return {"encoder_outputs": outputs, "source_mask": mask, "state": state}

    def decode_step(self, target_prefix_ids, state):                  # the state holds the history
        last = ops.cast(target_prefix_ids, "int32")[:, -1:]           # (batch, 1): the newest word
        logits, new_state, weights = self.decoder(
            last, state["encoder_outputs"], state["source_mask"], state["state"])
        weights = None if weights is None else weights[:, -1]         # (batch, S)
        return logits[:, -1], {**state, "state": list(new_state)}, weights


ATTENTION_VARIANTS = ("none", "bahdanau", "luong-dot", "luong-general", "luong-concat")


def build_rnn_translator(source_vocab_size, target_vocab_size, *, embedding_dim, units,
                         attention="none", output_norm=False):
    """A built, uncompiled Translator of one of the `ATTENTION_VARIANTS`."""
    if attention not in ATTENTION_VARIANTS:
        raise ValueError(f"attention must be one of {ATTENTION_VARIANTS}; got {attention!r}")
    if units % 2:  # each encoder direction has units // 2: odd units fail deep in the GRU
        raise ValueError(f"units must be even (the encoder is bidirectional); got {units}")
    model = Translator(source_vocab_size, target_vocab_size, embedding_dim, units, attention,
                       output_norm)
    model.build()
    return model


def greedy_step(model, prefix, state, finished, end_id):
    """Fig. 13's step: (batch, t) prefix -> the most likely next word (batch,), 0 once ended."""
    logits, state, attention = model.decode_step(prefix, state)        # logits (batch, V)
    word = ops.cast(ops.argmax(logits, axis=-1), "int32")              # the most likely word
    word = ops.where(finished, 0, word)                                # ended: padding
    return word, state, attention, ops.logical_or(finished, ops.equal(word, end_id))


def greedy_decode(model, source_ids, start_id, end_id, max_length):
    """(batch, S) source ids -> ids (batch, T <= max_length), 0 after [END]; attention or None."""
    state = model.encode(source_ids)                                   # the source, read once
    prefix = np.full((len(source_ids), 1), start_id, "int32")          # [START] for every row
    finished, attention = np.zeros(len(source_ids), bool), []
    for _ in range(max_length):
        word, state, weights, finished = greedy_step(model, prefix, state, finished, end_id)
        prefix = np.concatenate([prefix, np.asarray(word)[:, None]], axis=1)  # (batch, t + 1)
        attention.append(weights)                                      # (batch, S) or None
        if np.all(finished):
            break
    tokens = prefix[:, 1:]                                             # [START] left out
    return tokens, None if attention[0] is None else np.stack(attention, axis=1)  # (B, T, S)


@keras.saving.register_keras_serializable(package="seqlab.nb04")
class BahdanauTranslatorDecoder(ConfigFromArguments, keras.layers.Layer):
    """Bahdanau's decoder: query h(t-1), context into the GRU cell, tanh(W_c [h(t); c(t)])."""

    def __init__(self, vocab_size, embedding_dim, units, attention="bahdanau", output_norm=False,
                 **kwargs):
        super().__init__(**kwargs)
        self.embedding = keras.layers.Embedding(vocab_size, embedding_dim, mask_zero=True)
        self.recurrence = BahdanauDecoder(units)                      # eqs. (12)-(14) + GRU cell
        self.combine = keras.layers.Dense(units, activation="tanh")
        self.norm = keras.layers.LayerNormalization() if output_norm else None
        self.output_layer = keras.layers.Dense(vocab_size)

    def call(self, target_in, encoder_outputs, source_mask, state):
        embedded = self.embedding(target_in)                          # (batch, T, embedding_dim)
        both, weights, state = self.recurrence(                       # both: [h(t); c(t)]
            embedded, encoder_outputs, state, encoder_padding_mask=source_mask,
            padding_mask=ops.not_equal(target_in, 0), return_attention_scores=True,
            return_state=True)
        h = self.combine(both)                                        # (batch, T, units)
        h = h if self.norm is None else self.norm(h)
        return self.output_layer(h), state, weights                   # logits (batch, T, vocab)
