"""Greedy decoding (the slides' fig. 13) compiled: :func:`seqlab.lessons.nb04.greedy_step`
inside one ``tf.while_loop``; and the compiled-function cache the decoders and
:mod:`seqlab.sampling` share."""

from __future__ import annotations

import weakref

import tensorflow as tf

from seqlab.decoding.protocol import CachingTranslator, Translator
from seqlab.lessons.nb04 import greedy_step

__all__ = ["greedy_decode"]  # the rest serves the decoders, the export and sampling

_COMPILED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def compiled_for(model, name: str, function):
    """One ``tf.function`` per (model, name), kept as long as the model lives (the translation
    decoders here and :func:`seqlab.sampling.generate` share it)."""
    cache = _COMPILED.setdefault(model, {})
    if name not in cache:
        cache[name] = tf.function(function, reduce_retracing=True, autograph=False)
    return cache[name]


def encode_for_decoding(model: Translator, source_ids, max_length: int, use_cache: bool = True):
    """``model.encode(source_ids)``, with a :class:`CachingTranslator`'s key/value cache for
    ``max_length`` steps when ``use_cache``."""
    state = model.encode(source_ids)
    if use_cache and isinstance(model, CachingTranslator):
        state = model.init_cache(state, max_length)
    return state


def greedy_decode_in_graph(model: Translator, source_ids, start_id: int, end_id: int,
                           max_length: int, use_cache: bool = True):
    """Notebook 04's greedy loop as TensorFlow ops: its ``greedy_step`` in a ``tf.while_loop``
    over a fixed-size prefix buffer; call it inside a ``tf.function``.

    Returns ``(tokens (batch, T) int32, attention (batch, T, S) float32 or None)``.
    """
    if max_length < 1:
        raise ValueError(f"max_length must be at least 1; got {max_length}")
    source_ids = tf.cast(source_ids, tf.int32)
    batch = tf.shape(source_ids)[0]
    state = encode_for_decoding(model, source_ids, max_length, use_cache)
    # The prefix lives in a fixed-size buffer; step t reads its first t + 1 columns.
    buffer = tf.concat([tf.fill([batch, 1], start_id),
                        tf.zeros([batch, max_length], tf.int32)], axis=1)  # (batch, L + 1)
    source_length = tf.shape(source_ids)[1]
    # Whether the model returns attention is learnt while tracing the loop body.
    returns_attention = []

    def condition(t, buffer, state, finished, attentions):
        return (t < max_length) & ~tf.reduce_all(finished)

    def body(t, buffer, state, finished, attentions):
        token, state, attention, now_finished = greedy_step(model, buffer[:, : t + 1], state,
                                                            finished, end_id)  # (batch,)
        column = tf.one_hot(t + 1, max_length + 1, dtype=tf.int32)  # (L + 1,)
        buffer = buffer + column[tf.newaxis, :] * token[:, tf.newaxis]
        returns_attention[:] = [attention is not None]
        if attention is None:
            attention = tf.zeros([batch, source_length])
        attention = tf.where(finished[:, tf.newaxis], 0.0, tf.cast(attention, tf.float32))
        attentions = attentions.write(t, attention)
        return t + 1, buffer, state, now_finished, attentions

    t, buffer, _, _, attentions = tf.while_loop(
        condition, body,
        (tf.constant(0), buffer, state, tf.zeros([batch], tf.bool),
         tf.TensorArray(tf.float32, size=0, dynamic_size=True)),
        maximum_iterations=max_length,
    )
    tokens = buffer[:, 1: t + 1]  # (batch, T)
    attention = tf.transpose(attentions.stack(), (1, 0, 2))  # (batch, T, S)
    return tokens, attention if returns_attention[0] else None


def greedy_decode(model: Translator, source_ids, start_id: int, end_id: int, max_length: int,
                  use_cache: bool = True):
    """Notebook 04's ``greedy_decode`` (the slides' fig. 13), compiled: the same tokens.

    Args:
        source_ids: ``(batch, S)`` int ids, 0 = padding.
        start_id / end_id: ids of ``[START]`` and ``[END]`` in the target vocabulary.
        max_length: most tokens to generate per sentence (``[END]`` included).
        use_cache: use the model's key/value cache if it has one (a
            :class:`CachingTranslator`); ``False`` recomputes the whole prefix at every step
            (same tokens, slower).

    Returns:
        ``(tokens, attention)`` as NumPy arrays: ``(batch, T)`` ids and ``(batch, T, S)``
        weights (``None`` for a model without attention).
    """
    def decode(ids):
        return greedy_decode_in_graph(model, ids, start_id, end_id, max_length, use_cache)

    source_ids = tf.convert_to_tensor(source_ids, tf.int32)
    key = f"greedy-{start_id}-{end_id}-{max_length}-{use_cache}"
    cache = _COMPILED.setdefault(model, {})
    if key not in cache:
        # The first call runs eagerly (tracing costs more than one run); later calls share a
        # tf.function traced for any batch size and source length.
        cache[key] = None
        tokens, attention = decode(source_ids)
    else:
        if cache[key] is None:
            cache[key] = tf.function(decode, autograph=False,
                                     input_signature=[tf.TensorSpec([None, None], tf.int32)])
        tokens, attention = cache[key](source_ids)
    return tokens.numpy(), None if attention is None else attention.numpy()
