"""Unlabelled reviews (notebooks 06 and 08) and skip-gram pairs for word2vec (notebook 06).

Skip-gram with negative sampling follows slides 001; noise and subsampling follow Mikolov et al.
(2013), §2.2 and §2.3.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import tensorflow as tf

from seqlab import config
from seqlab.data.download import load_tfds
from seqlab.data.imdb import TFDS_DOWNLOAD_HOST
from seqlab.data.synthetic_reviews import generate_reviews

#: Seed of the generated corpus; the labelled sample (data/imdb_sample) uses another one.
CORPUS_SEED = 606


def load_review_corpus(source: str = "tfds", num_reviews: int | None = None,
                       seed: int = CORPUS_SEED, data_dir=None) -> list[str]:
    """Review texts without labels, as a list of strings, for learning word vectors.

    Args:
        source: ``"sample"`` generates reviews offline (FAST mode); ``"tfds"`` reads IMDB's
            ``train`` and ``unsupervised`` splits (75,000 reviews; not ``test``).
        num_reviews: how many reviews (default: 3,000 generated, or all of TFDS's).
        seed: seed of the generator (``"sample"`` only).
        data_dir: TFDS's data directory (``"tfds"`` only).

    Raises:
        ValueError: for an unknown ``source`` or a non-positive ``num_reviews``.
        seqlab.data.DownloadError: when TFDS cannot download the reviews.
    """
    if source not in ("sample", "tfds"):
        raise ValueError(f"Unknown corpus source {source!r}; choose one of 'sample', 'tfds'.")
    if num_reviews is not None and num_reviews < 1:
        raise ValueError(f"num_reviews must be a positive integer; got {num_reviews}.")
    if source == "sample":
        return [review.text for review in generate_reviews(num_reviews or 3000, seed=seed)]
    splits = load_tfds(
        "imdb_reviews", ["train", "unsupervised"], host=TFDS_DOWNLOAD_HOST, data_dir=data_dir,
        what="the IMDB reviews (imdb_reviews: train + unsupervised) with TensorFlow Datasets",
        as_supervised=True, shuffle_files=False)
    texts = []
    for split in splits:
        for text, _ in split.as_numpy_iterator():
            texts.append(text.decode("utf-8").replace("<br />", " "))
            if num_reviews is not None and len(texts) >= num_reviews:
                return texts
    return texts


def log_uniform_probabilities(vocab_size: int) -> np.ndarray:
    """P(k) = (log(k + 2) − log(k + 1)) / log(V + 1), for ids sorted by decreasing frequency."""
    k = np.arange(vocab_size, dtype="float64")
    return (np.log(k + 2) - np.log(k + 1)) / np.log(vocab_size + 1)


def unigram_noise_probabilities(counts, power: float = 0.75) -> np.ndarray:
    """The noise distribution :math:`P_n(w) = U(w)^{3/4} / Z` (§2.2) of word ``i``'s ``counts[i]``."""
    weights = np.asarray(counts, dtype="float64") ** power
    return weights / weights.sum()


def subsampling_keep_probabilities(counts, threshold: float = 1e-5) -> np.ndarray:
    """Probability of keeping each occurrence of word ``w``: :math:`\\min(1, \\sqrt{t / f(w)})` (§2.3).

    :math:`f(w)` = ``counts[w] / counts.sum()``, :math:`t` = ``threshold``.
    """
    counts = np.asarray(counts, dtype="float64")
    frequencies = counts / counts.sum()
    with np.errstate(divide="ignore"):
        return np.minimum(1.0, np.sqrt(threshold / frequencies))


def subsample(sequences: tf.RaggedTensor, keep_probabilities, seed: int = config.SEED
              ) -> tf.RaggedTensor:
    """Drop each token ``i`` with probability ``1 - keep_probabilities[i]`` (one draw per token)."""
    keep = np.asarray(keep_probabilities, dtype="float64")
    ids = sequences.flat_values.numpy()
    draws = np.random.default_rng(seed).random(len(ids))
    kept = draws < keep[ids]
    return tf.ragged.boolean_mask(sequences, sequences.with_flat_values(tf.constant(kept)))


def sample_from_probabilities(shape, probabilities, seed):
    """Ids drawn from ``probabilities``, any ``shape``; ``seed`` is a stateless seed pair."""
    probabilities = np.asarray(probabilities, dtype="float64")
    logits = np.full(probabilities.shape, -1e9)
    logits[probabilities > 0] = np.log(probabilities[probabilities > 0])
    logits = tf.constant(logits[None, :], tf.float32)                  # (1, vocab)
    count = tf.reduce_prod(tf.cast(shape, tf.int32))
    ids = tf.random.stateless_categorical(logits, count, seed=seed, dtype=tf.int64)
    return tf.reshape(ids, shape)


def sample_log_uniform(shape, vocab_size: int, seed):
    """Ids in ``[0, vocab_size)`` drawn from :func:`log_uniform_probabilities`, any ``shape``;
    ``seed`` is a stateless seed pair."""
    u = tf.random.stateless_uniform(shape, seed=seed, dtype=tf.float64)
    ids = tf.floor(tf.exp(u * math.log(vocab_size + 1))) - 1.0
    return tf.clip_by_value(tf.cast(ids, tf.int64), 0, vocab_size - 1)


def vectorize_ragged(vectorizer, texts: Sequence[str], batch_size: int = 1000) -> tf.RaggedTensor:
    """Token ids of every text from a fitted ``TextVectorization``, a ``(texts, None)`` int64
    ``tf.RaggedTensor``."""
    parts = []
    for start in range(0, len(texts), batch_size):
        ids = tf.cast(vectorizer(tf.constant(list(texts[start: start + batch_size]))), tf.int64)
        parts.append(tf.RaggedTensor.from_tensor(ids, padding=0))   # (batch, None)
    return tf.concat(parts, axis=0)


def skipgram_pair_positions(sequences: tf.RaggedTensor, window_size: int, min_id: int = 2):
    """Every skip-gram pair of every text, as positions in one token stream: ``(tokens, pairs)``.

    Ids below ``min_id`` are dropped first. ``tokens`` ``(n,)`` int32 holds the remaining ids of
    all texts one after another; each entry of ``pairs`` is ``position · 2m + k``: centre
    ``tokens[position]``, context ``tokens[position + pair_offsets(m)[k]]``, in the same text.
    """
    flat = sequences.flat_values.numpy()
    text = sequences.value_rowids().numpy()
    kept = flat >= min_id
    flat, text = flat[kept], text[kept]                      # (n,) ids and the text of each
    count = len(flat)
    index_dtype = np.int32 if count * 2 * window_size < 2**31 else np.int64
    parts = []
    for k, offset in enumerate(pair_offsets(window_size)):
        start, stop = max(0, -offset), count - max(0, offset)   # positions with a neighbour
        same_text = text[start:stop] == text[start + offset: stop + offset]
        positions = np.flatnonzero(same_text).astype(index_dtype) + start
        parts.append(positions * (2 * window_size) + k)
    pairs = np.concatenate(parts) if parts else np.zeros(0, index_dtype)
    return flat.astype(np.int32), pairs


def pair_offsets(window_size: int) -> np.ndarray:
    """The context's offset from the centre for each pair kind ``k``: ``[1, …, m, −1, …, −m]``."""
    return np.concatenate([np.arange(1, window_size + 1), -np.arange(1, window_size + 1)])


def skipgram_dataset(sequences, window_size: int, num_negatives: int, vocab_size: int, *,
                     batch_size: int = 1024, seed: int = config.SEED, min_id: int = 2,
                     negative_probabilities=None, keep_probabilities=None) -> tf.data.Dataset:
    """Skip-gram batches with negative sampling; the pairs are found once, reshuffled each epoch.

    Args:
        sequences: token ids of each text: a ``tf.RaggedTensor`` (as :func:`vectorize_ragged`
            returns), a ``(texts, length)`` array or a list of lists (0 = padding, dropped).
        window_size: context words on each side of the centre word (the slides' ``m``).
        num_negatives: negative words per positive pair (``K``).
        vocab_size: size of the (frequency-sorted) vocabulary the ids come from.
        batch_size: pairs per batch (the remainder of an epoch is left out).
        seed: seeds the shuffles and the negative draws.
        min_id: ids below it (padding, out-of-vocabulary) are neither centre, context nor
            negative.
        negative_probabilities: ``(vocab_size,)`` noise distribution of the negatives
            (:func:`unigram_noise_probabilities`); default :func:`sample_log_uniform`.
        keep_probabilities: ``(vocab_size,)`` subsampling before pairing
            (:func:`subsampling_keep_probabilities`).

    Returns:
        A dataset of ``((centre, candidates), labels)`` with a known number of batches:
        ``centre`` ``(batch,)`` int64, ``candidates`` ``(batch, 1 + K)`` int64 with the true
        context in column 0, ``labels`` ``(batch, 1 + K)`` float32, 1 then 0s.
    """
    if num_negatives < 1:
        raise ValueError(f"num_negatives must be a positive integer; got {num_negatives}.")
    if vocab_size <= min_id:
        raise ValueError(f"vocab_size ({vocab_size}) must be larger than min_id ({min_id}).")
    if window_size < 1:
        raise ValueError(f"window_size must be a positive integer; got {window_size}.")
    if negative_probabilities is not None:
        if len(negative_probabilities) != vocab_size:
            raise ValueError(f"negative_probabilities has {len(negative_probabilities)} entries; "
                             f"expected one per id, {vocab_size}.")
        noise = np.asarray(negative_probabilities, dtype="float64")[min_id:]
        if not noise.sum() > 0:
            raise ValueError("negative_probabilities gives no id at or above min_id a chance.")
        noise = noise / noise.sum()                                  # over [min_id, vocab_size)
    if not isinstance(sequences, tf.RaggedTensor):
        sequences = tf.ragged.constant([[int(i) for i in row] for row in sequences], ragged_rank=1)
    sequences = tf.cast(sequences, tf.int64)
    if keep_probabilities is not None:
        sequences = subsample(sequences, keep_probabilities, seed)
    tokens, pairs = skipgram_pair_positions(sequences, window_size, min_id)
    batches = len(pairs) // batch_size
    tokens = tf.constant(tokens)                                     # (n,) int32
    pairs = tf.constant(pairs)                                       # (p,) position · 2m + k
    offsets = tf.constant(pair_offsets(window_size), pairs.dtype)    # (2m,)
    kinds = tf.constant(2 * window_size, pairs.dtype)
    negative_range = vocab_size - min_id

    def shuffled_batches(draw):
        order = tf.random.experimental.stateless_shuffle(pairs, seed=tf.stack([draw, 0]))
        order = tf.reshape(order[:batches * batch_size], (batches, batch_size))
        steps = tf.range(1, batches + 1, dtype=tf.int64)
        return tf.data.Dataset.from_tensor_slices((tf.fill([batches], draw), steps, order))

    def make_batch(draw, step, batch_pairs):
        positions = batch_pairs // kinds                                        # (batch,)
        centres = tf.cast(tf.gather(tokens, positions), tf.int64)              # (batch,)
        contexts = tf.cast(tf.gather(tokens, positions + tf.gather(offsets, batch_pairs % kinds)),
                           tf.int64)                                            # (batch,)
        shape, draw_seed = (batch_size, num_negatives), tf.stack([draw, step])
        if negative_probabilities is None:
            negatives = sample_log_uniform(shape, negative_range, seed=draw_seed) + min_id
        else:
            negatives = sample_from_probabilities(shape, noise, seed=draw_seed) + min_id
        candidates = tf.concat([contexts[:, None], negatives], axis=1)       # (batch, 1 + K)
        labels = tf.concat([tf.ones_like(contexts[:, None], tf.float32),
                            tf.zeros_like(negatives, tf.float32)], axis=1)  # (batch, 1 + K)
        return (centres, candidates), labels

    # A new seed for each pass over the dataset.
    epoch_seed = tf.data.Dataset.random(seed=seed, rerandomize_each_iteration=True).take(1)
    dataset = (epoch_seed.flat_map(shuffled_batches)
               .map(make_batch, num_parallel_calls=tf.data.AUTOTUNE)
               .apply(tf.data.experimental.assert_cardinality(batches)))
    return dataset.prefetch(tf.data.AUTOTUNE)


def cbow_examples(token_ids: Sequence[int], window_size: int) -> tuple[np.ndarray, np.ndarray]:
    """CBOW's (context, centre) examples of one text: ``(n, 2·window_size)`` ids, 0 past the
    ends, and ``(n,)``."""
    ids = np.asarray([t for t in token_ids if t > 0], dtype="int64")
    padded = np.concatenate([np.zeros(window_size, "int64"), ids, np.zeros(window_size, "int64")])
    offsets = [o for o in range(-window_size, window_size + 1) if o != 0]
    contexts = np.stack([padded[window_size + o: window_size + o + len(ids)] for o in offsets], 1)
    return contexts, ids
