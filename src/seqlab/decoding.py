"""Turning a trained translator into translations: greedy decoding, beam search, ``translate``.

Translation only: sampling text from a language model (notebook 07) is :mod:`seqlab.sampling`.

Works with any model that follows the decoding protocol (the RNN translator of
:mod:`seqlab.models.seq2seq` and the Transformer alike):

* ``model.encode(source_ids) -> state``: ``source_ids`` ``(batch, S)`` int32, 0 = padding;
  ``state`` a nested structure (dicts/lists) of tensors whose first axis is the batch.
* ``model.decode_step(target_prefix_ids, state) -> (logits, new_state, attention)``:
  ``target_prefix_ids`` ``(batch, t)`` int32 starting with ``[START]``; ``logits``
  ``(batch, vocab)`` for token ``t + 1``; ``new_state`` with the same structure and the same
  shapes as ``state``; ``attention`` ``(batch, S)`` or ``None``. ``t`` is not known when the
  step is traced, so ``decode_step`` must not need it as a Python number.
* optional: ``model.init_cache(state, max_length) -> state`` adds a key/value cache (of fixed
  shapes) to the state, so that ``decode_step`` runs only the newest token through the model
  (the Transformer; same tokens, less work). The decoders call it unless ``use_cache=False``.

Beam search reorders and repeats the state along its first axis (``tf.gather``), which is why
every tensor in it must be batch-major.

Both decoders stop at ``[END]`` or after ``max_length`` generated tokens, whichever comes first,
so they always terminate. Output ids are ``(batch, T)`` with ``T <= max_length``, ``[START]``
left out, ``[END]`` kept, 0 after it. TensorFlow only (``tf.while_loop``, ``tf.function``), like
the ``tf.data`` pipelines and the SavedModel export.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import tensorflow as tf

from seqlab.data.translation import END, START, detokenize, standardize_text

__all__ = [
    "Translations", "beam_search", "compiled_for", "encode_for_decoding", "greedy_decode",
    "greedy_decode_in_graph", "translate",
]

_COMPILED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def compiled_for(model, name: str, function):
    """One ``tf.function`` per (model, name), kept as long as the model lives (the translation
    decoders here and :func:`seqlab.sampling.generate` share it)."""
    cache = _COMPILED.setdefault(model, {})
    if name not in cache:
        cache[name] = tf.function(function, reduce_retracing=True, autograph=False)
    return cache[name]


def encode_for_decoding(model, source_ids, max_length: int, use_cache: bool = True):
    """``model.encode(source_ids)``, plus the model's key/value cache for ``max_length`` steps
    when it has one (``model.init_cache``) and ``use_cache`` is true."""
    state = model.encode(source_ids)
    if use_cache and hasattr(model, "init_cache"):
        state = model.init_cache(state, max_length)
    return state


def greedy_decode_in_graph(model, source_ids, start_id: int, end_id: int, max_length: int,
                        use_cache: bool = True):
    """The greedy loop as TensorFlow ops (``tf.while_loop``); call it inside a ``tf.function``.

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
    # Whether the model returns attention is learnt while tracing the loop body (traced once;
    # run eagerly, the body sets it on every step).
    returns_attention = []

    def condition(t, buffer, state, finished, attentions):
        return (t < max_length) & ~tf.reduce_all(finished)

    def body(t, buffer, state, finished, attentions):
        logits, state, attention = model.decode_step(buffer[:, : t + 1], state)
        token = tf.argmax(logits, axis=-1, output_type=tf.int32)  # (batch,)
        token = tf.where(finished, 0, token)
        column = tf.one_hot(t + 1, max_length + 1, dtype=tf.int32)  # (L + 1,)
        buffer = buffer + column[tf.newaxis, :] * token[:, tf.newaxis]
        returns_attention[:] = [attention is not None]
        if attention is None:
            attention = tf.zeros([batch, source_length])
        attention = tf.where(finished[:, tf.newaxis], 0.0, tf.cast(attention, tf.float32))
        attentions = attentions.write(t, attention)
        return t + 1, buffer, state, finished | tf.equal(token, end_id), attentions

    t, buffer, _, _, attentions = tf.while_loop(
        condition, body,
        (tf.constant(0), buffer, state, tf.zeros([batch], tf.bool),
         tf.TensorArray(tf.float32, size=0, dynamic_size=True)),
        maximum_iterations=max_length,
    )
    tokens = buffer[:, 1: t + 1]  # (batch, T)
    attention = tf.transpose(attentions.stack(), (1, 0, 2))  # (batch, T, S)
    return tokens, attention if returns_attention[0] else None


def greedy_decode(model, source_ids, start_id: int, end_id: int, max_length: int,
                  use_cache: bool = True):
    """Pick the most likely next token at every step (the slides' fig. 13).

    Args:
        model: follows the decoding protocol (module docstring).
        source_ids: ``(batch, S)`` int ids, 0 = padding.
        start_id / end_id: ids of ``[START]`` and ``[END]`` in the target vocabulary.
        max_length: most tokens to generate per sentence (``[END]`` included).
        use_cache: use the model's key/value cache if it has one (``init_cache``); ``False``
            recomputes the whole prefix at every step (same tokens, slower).

    Returns:
        ``(tokens, attention)`` as NumPy arrays: ``(batch, T)`` ids and ``(batch, T, S)``
        weights (``None`` for a model without attention).
    """
    source_ids = tf.convert_to_tensor(source_ids, tf.int32)
    key = f"greedy-{start_id}-{end_id}-{max_length}-{use_cache}"
    cache = _COMPILED.setdefault(model, {})
    if key not in cache:
        # The first call runs eagerly: tracing the loop costs more than running it once (a
        # notebook often decodes each model once); from the second call on, a tf.function
        # traced for any batch size and source length serves every call.
        cache[key] = None
        tokens, attention = greedy_decode_in_graph(model, source_ids, start_id, end_id, max_length,
                                                use_cache)
    else:
        if cache[key] is None:
            cache[key] = tf.function(
                lambda ids: greedy_decode_in_graph(model, ids, start_id, end_id, max_length,
                                                use_cache),
                input_signature=[tf.TensorSpec([None, None], tf.int32)], autograph=False)
        tokens, attention = cache[key](source_ids)
    return tokens.numpy(), None if attention is None else attention.numpy()


def _length_normalised(score: float, length: int, length_penalty: float) -> float:
    return score / (max(length, 1) ** length_penalty)


def beam_search(model, source_ids, start_id: int, end_id: int, max_length: int,
                beam_width: int = 4, length_penalty: float = 0.6, use_cache: bool = True):
    """Keep the ``beam_width`` most likely prefixes at every step; return the best finished one.

    A hypothesis ends when it emits ``[END]`` or reaches ``max_length`` tokens. Finished
    hypotheses are ranked by ``log p / length ** length_penalty`` (length normalisation: without
    it, ``length_penalty=0``, beam search favours short outputs because every extra token
    lowers the log-probability). A sentence stops searching once it has ``beam_width``
    finished hypotheses. With ``beam_width=1`` this is exactly :func:`greedy_decode`.
    ``use_cache`` as in :func:`greedy_decode` (the cache is reordered with the beams).

    Returns:
        ``(tokens (batch, T), attention (batch, T, S) or None, scores (batch,))`` as NumPy
        arrays; ``scores`` are the length-normalised log-probabilities of the chosen outputs.
    """
    if beam_width < 1:
        raise ValueError(f"beam_width must be at least 1; got {beam_width}")
    if max_length < 1:
        raise ValueError(f"max_length must be at least 1; got {max_length}")
    source_ids = np.asarray(source_ids, np.int32)
    batch, source_length = source_ids.shape
    width = beam_width
    encode = compiled_for(model, f"encode-{max_length}-{use_cache}",
                       lambda ids: encode_for_decoding(model, ids, max_length, use_cache))
    decode_step = compiled_for(model, "decode_step", model.decode_step)
    gather = compiled_for(model, "gather", lambda state, index: tf.nest.map_structure(
        lambda tensor: tf.gather(tensor, index), state))

    # Every sentence starts with `width` copies of its state; only copy 0 is live at first.
    state = gather(encode(tf.constant(source_ids)),
                   tf.constant(np.repeat(np.arange(batch), width), tf.int32))
    prefixes = np.full((batch, width, 1), start_id, np.int32)
    scores = np.full((batch, width), -np.inf, np.float32)
    scores[:, 0] = 0.0
    attention_history = np.zeros((batch, width, 0, source_length), np.float32)
    finished: list[list[tuple[float, list[int], np.ndarray | None]]] = [[] for _ in range(batch)]
    done = np.zeros(batch, bool)
    has_attention = True

    for step in range(max_length):
        logits, state, attention = decode_step(
            tf.constant(prefixes.reshape(batch * width, -1)), state)
        log_probs = tf.nn.log_softmax(tf.cast(logits, tf.float32), axis=-1).numpy()
        vocab = log_probs.shape[-1]
        if attention is None:
            has_attention = False
            attention = np.zeros((batch * width, source_length), np.float32)
        attention = np.asarray(attention, np.float32).reshape(batch, width, source_length)
        candidates = scores[:, :, None] + log_probs.reshape(batch, width, vocab)
        candidates = candidates.reshape(batch, width * vocab)
        # 2 * width candidates always hold `width` that do not end the sentence.
        count = min(2 * width, candidates.shape[1])
        top = np.argpartition(-candidates, count - 1, axis=1)[:, :count]
        order = np.argsort(-np.take_along_axis(candidates, top, axis=1), axis=1, kind="stable")
        top = np.take_along_axis(top, order, axis=1)
        new_prefixes = np.zeros((batch, width, step + 2), np.int32)
        new_scores = np.full((batch, width), -np.inf, np.float32)
        parents = np.zeros((batch, width), np.int64)
        last_step = step + 1 == max_length
        for b in range(batch):
            if done[b]:
                continue
            alive = 0
            for rank, flat in enumerate(top[b]):
                parent, token = divmod(int(flat), vocab)
                score = float(candidates[b, flat])
                if not np.isfinite(score):
                    break
                tokens = [*prefixes[b, parent, 1:].tolist(), token]
                if token == end_id or last_step:
                    # An [END] only counts when it ranks among the top `width` candidates.
                    if token != end_id or rank < width:
                        history = np.concatenate(
                            [attention_history[b, parent], attention[b, parent][None]], axis=0)
                        finished[b].append(
                            (_length_normalised(score, len(tokens), length_penalty), tokens,
                             history))
                    if token == end_id:
                        continue
                if alive < width:
                    new_prefixes[b, alive] = [start_id, *tokens]
                    new_scores[b, alive] = score
                    parents[b, alive] = parent
                    alive += 1
                if alive == width:
                    break
            if len(finished[b]) >= width or last_step:
                done[b] = True
        if done.all():
            break
        attention_history = np.concatenate(
            [attention_history[np.arange(batch)[:, None], parents],
             attention[np.arange(batch)[:, None], parents][:, :, None]], axis=2)
        prefixes, scores = new_prefixes, new_scores
        state = gather(state, tf.constant(
            (np.arange(batch)[:, None] * width + parents).reshape(-1), tf.int32))

    best = [max(hypotheses, key=lambda h: h[0]) for hypotheses in finished]
    length = max(len(tokens) for _, tokens, _ in best)
    tokens = np.zeros((batch, length), np.int32)
    attention = np.zeros((batch, length, source_length), np.float32)
    for b, (_, hypothesis, history) in enumerate(best):
        tokens[b, : len(hypothesis)] = hypothesis
        attention[b, : len(hypothesis)] = history
    return tokens, attention if has_attention else None, np.array([h[0] for h in best])


@dataclass
class Translations:
    """What :func:`translate` returns; index ``i`` belongs to input sentence ``i``.

    ``attention[i]`` is ``(len(target_tokens[i]), len(source_tokens[i]))``, ready for
    ``seqlab.plotting.plot_attention(attention[i], source_tokens[i], target_tokens[i])``
    (``None`` for a model without attention).
    """

    texts: list[str]
    source_tokens: list[list[str]]
    target_tokens: list[list[str]]
    attention: list[np.ndarray | None]
    scores: list[float] | None = None

    def __len__(self) -> int:
        return len(self.texts)

    def __getitem__(self, index: int) -> str:
        return self.texts[index]


def _readable(token: str) -> str:
    return detokenize([str(token)]) or str(token)


def translate(model, texts: str | Sequence[str], source_vectorizer, target_vectorizer, *,
              method: str = "greedy", beam_width: int = 4, max_length: int = 40,
              length_penalty: float = 0.6, batch_size: int = 256) -> Translations:
    """Raw sentences in, readable translations (and their attention) out.

    Raises:
        ValueError: for an empty (or punctuation-free whitespace) sentence, which has nothing
            to translate, or an unknown ``method``.
    """
    if isinstance(texts, str):
        texts = [texts]
    texts = list(texts)
    if method not in ("greedy", "beam"):
        raise ValueError(f"method must be 'greedy' or 'beam'; got {method!r}")
    for index, text in enumerate(texts):
        if not standardize_text(text):
            raise ValueError(
                f"Sentence {index} ({text!r}) is empty after standardisation: nothing to translate."
            )
    vocabulary = np.array(target_vectorizer.get_vocabulary())
    source_vocabulary = np.array(source_vectorizer.get_vocabulary())
    start_id, end_id = int(np.flatnonzero(vocabulary == START)[0]), int(np.flatnonzero(vocabulary == END)[0])
    result = Translations([], [], [], [], [] if method == "beam" else None)
    for first in range(0, len(texts), batch_size):
        chunk = texts[first: first + batch_size]
        ids = source_vectorizer(tf.constant(chunk))
        ids = ids.to_tensor().numpy() if isinstance(ids, tf.RaggedTensor) else np.asarray(ids)
        if method == "greedy":
            tokens, attention = greedy_decode(model, ids, start_id, end_id, max_length)
        else:
            tokens, attention, scores = beam_search(model, ids, start_id, end_id, max_length,
                                                    beam_width, length_penalty)
            result.scores.extend(float(s) for s in scores)
        for row in range(len(chunk)):
            source_tokens = [_readable(t) for t in source_vocabulary[ids[row][ids[row] != 0]]]
            generated = tokens[row]
            length = int(np.argmax(generated == end_id)) + 1 if (generated == end_id).any() \
                else int((generated != 0).sum())
            words = [str(w) for w in vocabulary[generated[:length]]]
            result.texts.append(detokenize(words))
            result.source_tokens.append(source_tokens)
            result.target_tokens.append([_readable(w) for w in words])
            result.attention.append(None if attention is None
                                    else attention[row, :length, : len(source_tokens)])
    return result
