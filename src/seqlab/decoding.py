"""Turning a trained translator into translations: greedy decoding, beam search, ``translate``.

Translation only: sampling text from a language model (notebook 07) is :mod:`seqlab.sampling`.

Works with any model that is a :class:`Translator` (the RNN translator of
:mod:`seqlab.models.seq2seq` and the Transformer alike): :class:`Translator` states what the
decoders need of a model. Both decoders stop at ``[END]`` or after ``max_length`` generated
tokens, whichever comes first, so they always terminate. Output ids are ``(batch, T)`` with
``T <= max_length``, ``[START]`` left out, ``[END]`` kept, 0 after it. TensorFlow only
(``tf.while_loop``, ``tf.function``), like the ``tf.data`` pipelines and the SavedModel export.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import tensorflow as tf

from seqlab.data.translation import END, START, detokenize, standardize_text

__all__ = [
    "CachingTranslator", "Translations", "Translator", "beam_search", "compiled_for",
    "encode_for_decoding", "greedy_decode", "greedy_decode_in_graph", "translate",
]


@runtime_checkable
class Translator(Protocol):
    """What :func:`greedy_decode`, :func:`beam_search`, :func:`translate` and the SavedModel
    export (:mod:`seqlab.export`) need of a translation model: the decoding protocol.

    :class:`seqlab.models.Seq2SeqTranslator` and :class:`seqlab.models.TransformerTranslator`
    both satisfy it (``isinstance(model, Translator)``; ``tests/test_decoding.py`` checks it).

    * ``encode(source_ids) -> state``: ``source_ids`` ``(batch, S)`` int32, 0 = padding;
      ``state`` a nested structure (dicts/lists) of tensors whose first axis is the batch.
      Beam search repeats and reorders the state along that axis (``tf.gather``), which is why
      every tensor in it must be batch-major.
    * ``decode_step(target_prefix_ids, state) -> (logits, new_state, attention)``:
      ``target_prefix_ids`` ``(batch, t)`` int32 starting with ``[START]``; ``logits``
      ``(batch, target_vocab)`` for token ``t + 1``; ``new_state`` with the same structure and
      the same shapes as ``state``; ``attention`` ``(batch, S)``, the weights over the source
      in its original order, or ``None``. ``t`` is not known when the step is traced
      (``None``), so ``decode_step`` must not need it as a Python number. A model may use only
      the prefix's last token (the RNN: its history is in the state) or all of it.

    A model that also has ``init_cache`` is a :class:`CachingTranslator`.
    """

    def encode(self, source_ids):
        """``(batch, S)`` source ids -> the batch-major decoding state."""
        ...

    def decode_step(self, target_prefix_ids, state):
        """``(batch, t)`` prefix and state -> ``(logits (batch, V), new_state, attention)``."""
        ...


@runtime_checkable
class CachingTranslator(Translator, Protocol):
    """A :class:`Translator` with a key/value cache (the Transformer): the optional part of
    the decoding protocol.

    * ``init_cache(state, max_length) -> state``: the state plus a cache of fixed shapes for up
      to ``max_length`` decoding steps (batch-major, like the rest of the state), so that
      ``decode_step`` runs only the newest token through the model: the same tokens, less work.
      The decoders call it unless ``use_cache=False`` (:func:`encode_for_decoding`).
    """

    def init_cache(self, state, max_length):
        """``state`` -> ``state`` with room for ``max_length`` steps of keys and values."""
        ...


_COMPILED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def compiled_for(model, name: str, function):
    """One ``tf.function`` per (model, name), kept as long as the model lives (the translation
    decoders here and :func:`seqlab.sampling.generate` share it)."""
    cache = _COMPILED.setdefault(model, {})
    if name not in cache:
        cache[name] = tf.function(function, reduce_retracing=True, autograph=False)
    return cache[name]


def encode_for_decoding(model: Translator, source_ids, max_length: int, use_cache: bool = True):
    """``model.encode(source_ids)``, plus the model's key/value cache for ``max_length`` steps
    when it has one (a :class:`CachingTranslator`) and ``use_cache`` is true."""
    state = model.encode(source_ids)
    if use_cache and isinstance(model, CachingTranslator):
        state = model.init_cache(state, max_length)
    return state


def greedy_decode_in_graph(model: Translator, source_ids, start_id: int, end_id: int,
                           max_length: int, use_cache: bool = True):
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


def greedy_decode(model: Translator, source_ids, start_id: int, end_id: int, max_length: int,
                  use_cache: bool = True):
    """Pick the most likely next token at every step (the slides' fig. 13).

    Args:
        model: a :class:`Translator`.
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


@dataclass
class _Finished:
    """A hypothesis that emitted ``[END]`` or reached ``max_length`` tokens."""

    score: float  # log p / length ** length_penalty
    tokens: list[int]  # [START] left out, [END] kept
    attention: np.ndarray  # (len(tokens), S)


@dataclass
class _Beams:
    """The ``width`` live hypotheses of every sentence after ``t`` steps, batch-major.

    A slot whose score is ``-inf`` holds no hypothesis (at the start only slot 0 is live: the
    other copies would repeat it).
    """

    prefixes: np.ndarray  # (batch, width, t + 1) int32, [START] first
    scores: np.ndarray  # (batch, width) float32 log-probabilities
    attention: np.ndarray  # (batch, width, t, S) the weights of every generated token

    @classmethod
    def start(cls, batch: int, width: int, start_id: int, source_length: int) -> _Beams:
        scores = np.full((batch, width), -np.inf, np.float32)
        scores[:, 0] = 0.0
        return cls(np.full((batch, width, 1), start_id, np.int32), scores,
                   np.zeros((batch, width, 0, source_length), np.float32))

    def extended(self, parents: np.ndarray, prefixes: np.ndarray, scores: np.ndarray,
                 attention: np.ndarray) -> _Beams:
        """The next step's beams: slot ``k`` continues slot ``parents[:, k]`` with
        ``prefixes[:, k]`` and ``scores[:, k]``; ``attention`` ``(batch, width, S)`` is this
        step's weights of every old slot."""
        rows = np.arange(len(parents))[:, None]  # (batch, 1)
        history = np.concatenate([self.attention[rows, parents],  # (batch, width, t, S)
                                  attention[rows, parents][:, :, None]], axis=2)
        return _Beams(prefixes, scores, history)  # history: (batch, width, t + 1, S)


def _ranked_candidates(scores: np.ndarray, log_probs: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray]:
    """Every one-token extension of every live hypothesis, best first.

    ``scores`` ``(batch, width)`` and ``log_probs`` ``(batch, width, vocab)`` -> the extensions'
    scores ``(batch, width * vocab)`` (index ``parent * vocab + token``) and, per sentence, the
    indices of the best ``2 * width`` of them in descending order (stable: ties keep their
    order), ``(batch, 2 * width)``. ``2 * width`` candidates always hold ``width`` that do not
    end the sentence.
    """
    batch, width, vocab = log_probs.shape
    candidates = (scores[:, :, None] + log_probs).reshape(batch, width * vocab)
    count = min(2 * width, candidates.shape[1])
    top = np.argpartition(-candidates, count - 1, axis=1)[:, :count]
    order = np.argsort(-np.take_along_axis(candidates, top, axis=1), axis=1, kind="stable")
    return candidates, np.take_along_axis(top, order, axis=1)


#: One hypothesis extended by one token: ``(parent slot, token id, log-probability)``.
_Extension = tuple[int, int, float]


def _choose_extensions(ranked: list[_Extension], width: int, end_id: int, last_step: bool
                       ) -> tuple[list[_Extension], list[_Extension]]:
    """One sentence's choice among its extensions, ranked best first.

    Returns ``(continuing, ending)``: the best ``width`` extensions that do not emit ``[END]``
    live on; an ``[END]`` ends its hypothesis, but counts only when it ranks among the top
    ``width`` (otherwise ``width`` better hypotheses are still live). At the last step every
    continuing extension also ends (it reached ``max_length``). An extension of score ``-inf``
    (of an empty slot) stops the choice.
    """
    continuing, ending = [], []
    for rank, (parent, token, score) in enumerate(ranked):
        if not np.isfinite(score):
            break
        if token == end_id:
            if rank < width:
                ending.append((parent, token, score))
            continue
        if last_step:
            ending.append((parent, token, score))
        continuing.append((parent, token, score))
        if len(continuing) == width:
            break
    return continuing, ending


def _best_translations(finished: list[list[_Finished]], source_length: int
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The best finished hypothesis of every sentence, padded with 0 to the longest:
    ``(tokens (batch, T), attention (batch, T, S), scores (batch,))``."""
    best = [max(hypotheses, key=lambda h: h.score) for hypotheses in finished]
    length = max(len(h.tokens) for h in best)
    tokens = np.zeros((len(best), length), np.int32)
    attention = np.zeros((len(best), length, source_length), np.float32)
    for row, hypothesis in enumerate(best):
        tokens[row, : len(hypothesis.tokens)] = hypothesis.tokens
        attention[row, : len(hypothesis.tokens)] = hypothesis.attention
    return tokens, attention, np.array([h.score for h in best])


def beam_search(model: Translator, source_ids, start_id: int, end_id: int, max_length: int,
                beam_width: int = 4, length_penalty: float = 0.6, use_cache: bool = True):
    """Keep the ``beam_width`` most likely prefixes at every step; return the best finished one.

    A hypothesis ends when it emits ``[END]`` or reaches ``max_length`` tokens. Finished
    hypotheses are ranked by ``log p / length ** length_penalty`` (length normalisation: without
    it, ``length_penalty=0``, beam search favours short outputs because every extra token
    lowers the log-probability). A sentence stops searching once it has ``beam_width``
    finished hypotheses. With ``beam_width=1`` this is exactly :func:`greedy_decode`.
    ``use_cache`` as in :func:`greedy_decode` (the cache is reordered with the beams).

    Each step: decode every live hypothesis one token further, rank the extensions
    (:func:`_ranked_candidates`), let each sentence choose which live on and which end
    (:func:`_choose_extensions`), and reorder the beams and the model's state to follow the
    survivors' parents. At the end, :func:`_best_translations`.

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

    # Every sentence starts with `width` copies of its state (row b * width + k: copy k of b).
    state = gather(encode(tf.constant(source_ids)),
                   tf.constant(np.repeat(np.arange(batch), width), tf.int32))
    beams = _Beams.start(batch, width, start_id, source_length)
    finished: list[list[_Finished]] = [[] for _ in range(batch)]
    done = np.zeros(batch, bool)
    has_attention = True

    for step in range(max_length):
        logits, state, attention = decode_step(
            tf.constant(beams.prefixes.reshape(batch * width, -1)), state)
        log_probs = tf.nn.log_softmax(tf.cast(logits, tf.float32), axis=-1).numpy()
        log_probs = log_probs.reshape(batch, width, -1)  # (batch, width, vocab)
        if attention is None:
            has_attention = False
            attention = np.zeros((batch * width, source_length), np.float32)
        attention = np.asarray(attention, np.float32).reshape(batch, width, source_length)
        candidates, top = _ranked_candidates(beams.scores, log_probs)
        vocab = log_probs.shape[-1]
        last_step = step + 1 == max_length
        # The next step's beams; sentences that are done keep empty slots.
        prefixes = np.zeros((batch, width, step + 2), np.int32)
        scores = np.full((batch, width), -np.inf, np.float32)
        parents = np.zeros((batch, width), np.int64)
        for b in np.flatnonzero(~done):
            ranked = [(*divmod(int(flat), vocab), float(candidates[b, flat])) for flat in top[b]]
            continuing, ending = _choose_extensions(ranked, width, end_id, last_step)
            for parent, token, score in ending:
                tokens = [*beams.prefixes[b, parent, 1:].tolist(), token]
                history = np.concatenate([beams.attention[b, parent], attention[b, parent][None]])
                finished[b].append(_Finished(
                    _length_normalised(score, len(tokens), length_penalty), tokens, history))
            for slot, (parent, token, score) in enumerate(continuing):
                prefixes[b, slot] = [*beams.prefixes[b, parent].tolist(), token]
                scores[b, slot], parents[b, slot] = score, parent
            done[b] = len(finished[b]) >= width or last_step
        if done.all():
            break
        beams = beams.extended(parents, prefixes, scores, attention)
        state = gather(state, tf.constant(
            (np.arange(batch)[:, None] * width + parents).reshape(-1), tf.int32))

    tokens, attention, scores = _best_translations(finished, source_length)
    return tokens, attention if has_attention else None, scores


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


def translate(model: Translator, texts: str | Sequence[str], source_vectorizer,
              target_vectorizer, *, method: str = "greedy", beam_width: int = 4,
              max_length: int = 40, length_penalty: float = 0.6,
              batch_size: int = 256) -> Translations:
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
