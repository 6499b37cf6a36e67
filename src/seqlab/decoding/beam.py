"""Beam search with length normalisation: :func:`beam_search` and the steps it is made of."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from seqlab.decoding.greedy import compiled_for, encode_for_decoding
from seqlab.decoding.protocol import Translator

__all__ = ["beam_search"]


def _ranked_candidates(scores: np.ndarray, log_probs: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray]:
    """All extensions' scores ``(batch, width * vocab)`` (index ``parent * vocab + token``) and
    the indices of the best ``2 * width`` per sentence, best first (enough for ``width`` that
    do not end the sentence)."""
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

    Returns ``(continuing, ending)``: the best ``width`` extensions without ``[END]`` live on;
    an ``[END]`` among the top ``width`` ends its hypothesis; at the last step every continuing
    extension ends too. A score of ``-inf`` (an empty slot) stops the choice.
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


def beam_search(model: Translator, source_ids, start_id: int, end_id: int, max_length: int,
                beam_width: int = 4, length_penalty: float = 0.6, use_cache: bool = True):
    """Keep the ``beam_width`` most likely prefixes at every step; return the best finished one.

    Finished hypotheses are ranked by ``log p / length ** length_penalty``; a sentence stops at
    ``beam_width`` of them. ``beam_width=1`` is :func:`greedy_decode`; ``use_cache`` as there.

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

    # Every sentence starts with `width` copies of its state (row b * width + k: copy k of b),
    # and one live hypothesis: the other slots are empty (score -inf).
    state = gather(encode(tf.constant(source_ids)),
                   tf.constant(np.repeat(np.arange(batch), width), tf.int32))
    prefixes = np.full((batch, width, 1), start_id, np.int32)  # (batch, width, t + 1), [START] first
    scores = np.full((batch, width), -np.inf, np.float32)  # log-probabilities
    scores[:, 0] = 0.0
    history = np.zeros((batch, width, 0, source_length), np.float32)  # (batch, width, t, S)
    # Per sentence: (log p / length ** length_penalty, tokens, attention (len(tokens), S)).
    finished: list[list[tuple[float, list[int], np.ndarray]]] = [[] for _ in range(batch)]
    done = np.zeros(batch, bool)
    has_attention = True
    for step in range(max_length):
        logits, state, attention = decode_step(tf.constant(prefixes.reshape(batch * width, -1)),
                                               state)
        log_probs = tf.nn.log_softmax(tf.cast(logits, tf.float32), axis=-1).numpy()
        log_probs = log_probs.reshape(batch, width, -1)  # (batch, width, vocab)
        if attention is None:
            has_attention = False
            attention = np.zeros((batch * width, source_length), np.float32)
        attention = np.asarray(attention, np.float32).reshape(batch, width, source_length)
        candidates, top = _ranked_candidates(scores, log_probs)
        vocab = log_probs.shape[-1]
        last_step = step + 1 == max_length
        # The next step's beams; sentences that are done keep empty slots.
        next_prefixes = np.zeros((batch, width, step + 2), np.int32)
        scores = np.full((batch, width), -np.inf, np.float32)
        parents = np.zeros((batch, width), np.int64)
        for b in np.flatnonzero(~done):
            ranked = [(*divmod(int(flat), vocab), float(candidates[b, flat])) for flat in top[b]]
            continuing, ending = _choose_extensions(ranked, width, end_id, last_step)
            for parent, token, score in ending:
                tokens = [*prefixes[b, parent, 1:].tolist(), token]
                weights = np.concatenate([history[b, parent], attention[b, parent][None]])
                finished[b].append((score / len(tokens) ** length_penalty, tokens, weights))
            for slot, (parent, token, score) in enumerate(continuing):
                next_prefixes[b, slot] = [*prefixes[b, parent].tolist(), token]
                scores[b, slot], parents[b, slot] = score, parent
            done[b] = len(finished[b]) >= width or last_step
        if done.all():
            break
        rows = np.arange(batch)[:, None]  # (batch, 1)
        history = np.concatenate([history[rows, parents],  # (batch, width, t + 1, S)
                                  attention[rows, parents][:, :, None]], axis=2)
        prefixes = next_prefixes
        state = gather(state, tf.constant((rows * width + parents).reshape(-1), tf.int32))

    # The best finished hypothesis of every sentence, padded with 0 to the longest.
    best = [max(hypotheses, key=lambda hypothesis: hypothesis[0]) for hypotheses in finished]
    length = max(len(tokens) for _, tokens, _ in best)
    tokens = np.zeros((batch, length), np.int32)
    attention = np.zeros((batch, length, source_length), np.float32)
    for row, (_, hypothesis, weights) in enumerate(best):
        tokens[row, : len(hypothesis)] = hypothesis
        attention[row, : len(hypothesis)] = weights
    return tokens, attention if has_attention else None, np.array([score for score, _, _ in best])
