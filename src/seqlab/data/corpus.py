"""Unlabelled text for notebooks 06 and 07: a review corpus and skip-gram pairs for word2vec.

    texts = load_review_corpus("sample", num_reviews=3000)   # generated offline (FAST mode)
    texts = load_review_corpus("tfds")                       # IMDB train + unsupervised (75,000)
    pairs = skipgram_dataset(sequences, window_size=2, num_negatives=4, vocab_size=V)

Word2vec learns from raw text, no labels: FAST mode generates reviews with the project's own
generator (:mod:`seqlab.data.synthetic_reviews`, a different seed from the labelled sample, the
way IMDB's 50,000 ``unsupervised`` reviews sit beside its labelled ones), full mode reads the
IMDB reviews from TensorFlow Datasets.

Skip-gram with negative sampling (slides 001, "Skip-Gram (SG)" and "Word2vec last words"): every
word in a window of ``window_size`` words on either side of a centre word is a positive
*(centre, context)* pair; ``num_negatives`` words drawn from a log-uniform (Zipf) distribution
over the frequency-sorted vocabulary are its negatives. :func:`skipgram_dataset` builds this as
a ``tf.data`` pipeline: pairs come from the token ids with tensor ops per text, negatives are
drawn per batch with one vectorised draw.

The word2vec paper (Mikolov, Sutskever, Chen, Corrado and Dean, 2013, "Distributed
Representations of Words and Phrases and their Compositionality") makes two other choices,
which :func:`skipgram_dataset` accepts as arrays over the vocabulary's ids:
``negative_probabilities``, e.g. its noise distribution :math:`U(w)^{3/4}/Z` (§2.2,
:func:`unigram_noise_probabilities`), and ``keep_probabilities``, its subsampling of frequent
words, each occurrence kept with probability :math:`\\sqrt{t / f(w)}` (at most 1; §2.3,
:func:`subsampling_keep_probabilities`).
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

SOURCES = ("sample", "tfds")
#: Seed of the generated corpus; the labelled sample (data/imdb_sample) uses another one.
CORPUS_SEED = 606
#: TFDS splits read in full mode: the labelled training reviews and the 50,000 unlabelled ones.
TFDS_SPLITS = ("train", "unsupervised")


def load_review_corpus(source: str = "tfds", num_reviews: int | None = None,
                       seed: int = CORPUS_SEED, data_dir=None) -> list[str]:
    """Review texts without labels, for learning word vectors.

    Args:
        source: ``"sample"`` generates reviews offline with
            :func:`seqlab.data.synthetic_reviews.generate_reviews` (FAST mode); ``"tfds"`` reads
            IMDB's ``train`` and ``unsupervised`` splits from TensorFlow Datasets (75,000 reviews,
            an 80 MB download the first time). The test split is left out, so notebook 06's
            classifier is tested on reviews the vectors never saw.
        num_reviews: how many reviews (default: 3,000 generated, or all of TFDS's).
        seed: seed of the generator (``"sample"`` only).
        data_dir: TFDS's data directory (``"tfds"`` only).

    Returns:
        A list of review strings.

    Raises:
        ValueError: for an unknown ``source`` or a non-positive ``num_reviews``.
        seqlab.data.DownloadError: when TFDS cannot download the reviews (says to use FAST mode).
    """
    if source not in SOURCES:
        raise ValueError(f"Unknown corpus source {source!r}; choose one of {', '.join(map(repr, SOURCES))}.")
    if num_reviews is not None and num_reviews < 1:
        raise ValueError(f"num_reviews must be a positive integer; got {num_reviews}.")
    if source == "sample":
        return [review.text for review in generate_reviews(num_reviews or 3000, seed=seed)]
    return _load_tfds_reviews(num_reviews, data_dir)


def _load_tfds_reviews(num_reviews, data_dir) -> list[str]:
    splits = load_tfds(
        "imdb_reviews", list(TFDS_SPLITS), host=TFDS_DOWNLOAD_HOST, data_dir=data_dir,
        what="the IMDB reviews (imdb_reviews: train + unsupervised) with TensorFlow Datasets",
        as_supervised=True, shuffle_files=False)
    texts = []
    for split in splits:
        for text, _ in split.as_numpy_iterator():
            texts.append(text.decode("utf-8").replace("<br />", " "))
            if num_reviews is not None and len(texts) >= num_reviews:
                return texts
    return texts


# ------------------------------------------------------------------------------ skip-gram


def skipgram_pairs(token_ids, window_size: int):
    """All (centre, context) pairs of one text, as two int64 tensors of equal length.

    ``token_ids`` is one text's ids (1-D); ids 0 (padding) are dropped first. For each offset
    ``1 … window_size`` the pairs ``(w[i], w[i+o])`` and ``(w[i+o], w[i])`` are produced, so
    every word within the window on either side of a centre word is one of its contexts (the
    slides' "Input↔Output pairs").

    Example:
        >>> centres, contexts = skipgram_pairs([5, 6, 7], window_size=1)
        >>> sorted(zip(centres.numpy().tolist(), contexts.numpy().tolist()))
        [(5, 6), (6, 5), (6, 7), (7, 6)]
    """
    if window_size < 1:
        raise ValueError(f"window_size must be a positive integer; got {window_size}.")
    ids = tf.cast(tf.convert_to_tensor(token_ids), tf.int64)
    if ids.shape.rank != 1:
        raise ValueError(f"skipgram_pairs expects the ids of one text (1-D); got shape {ids.shape}.")
    ids = tf.boolean_mask(ids, ids > 0)                 # (n,) without padding
    centres, contexts = [], []
    for offset in range(1, window_size + 1):
        left, right = ids[:-offset], ids[offset:]       # (n - offset,) each
        centres += [left, right]
        contexts += [right, left]
    return tf.concat(centres, 0), tf.concat(contexts, 0)


def log_uniform_probabilities(vocab_size: int) -> np.ndarray:
    """P(k) = (log(k + 2) − log(k + 1)) / log(V + 1): the Zipf-like law of ``tf.random.log_uniform_candidate_sampler``.

    Ids are assumed sorted by decreasing frequency (``keras.layers.TextVectorization`` sorts its
    vocabulary so), so frequent words are drawn as negatives more often.
    """
    k = np.arange(vocab_size, dtype="float64")
    return (np.log(k + 2) - np.log(k + 1)) / np.log(vocab_size + 1)


def unigram_noise_probabilities(counts, power: float = 0.75) -> np.ndarray:
    """The word2vec paper's noise distribution: :math:`P_n(w) = U(w)^{3/4} / Z` (§2.2).

    ``counts[i]`` is how often word ``i`` occurs; the result is ``counts ** power``
    normalised to sum to 1 (``power=1``: the unigram distribution itself; ``power=0``:
    uniform). Mikolov et al. (2013, "Distributed Representations of Words and Phrases and their
    Compositionality") found 3/4 better than both.
    """
    weights = np.asarray(counts, dtype="float64") ** power
    return weights / weights.sum()


def subsampling_keep_probabilities(counts, threshold: float = 1e-5) -> np.ndarray:
    """Probability of keeping each occurrence of each word: :math:`\\min(1, \\sqrt{t / f(w)})`.

    The paper discards an occurrence of word :math:`w` with probability
    :math:`1 - \\sqrt{t / f(w)}` (§2.3), :math:`f(w)` = ``counts[w] / counts.sum()`` and
    :math:`t` = ``threshold`` ("typically around 1e-5", for corpora of billions of words; the
    word2vec tool's default ``-sample`` is 1e-3). Words with a zero count get 1.
    """
    counts = np.asarray(counts, dtype="float64")
    frequencies = counts / counts.sum()
    with np.errstate(divide="ignore"):
        return np.minimum(1.0, np.sqrt(threshold / frequencies))


def subsample(sequences: tf.RaggedTensor, keep_probabilities, seed: int = config.SEED
              ) -> tf.RaggedTensor:
    """Drop each token ``i`` with probability ``1 - keep_probabilities[i]`` (one draw per token).

    Discarded tokens leave the text before any window is formed, as in the word2vec tool: the
    words around them move closer together.
    """
    keep = np.asarray(keep_probabilities, dtype="float64")
    ids = sequences.flat_values.numpy()
    draws = np.random.default_rng(seed).random(len(ids))
    kept = draws < keep[ids]
    return tf.ragged.boolean_mask(sequences, sequences.with_flat_values(tf.constant(kept)))


def sample_from_probabilities(shape, probabilities, seed=None):
    """Ids drawn independently from ``probabilities`` (one per vocabulary id), any ``shape``.

    ``seed`` is a stateless seed pair (two ints) or None.
    """
    probabilities = np.asarray(probabilities, dtype="float64")
    logits = np.full(probabilities.shape, -1e9)
    logits[probabilities > 0] = np.log(probabilities[probabilities > 0])
    logits = tf.constant(logits[None, :], tf.float32)                  # (1, vocab)
    count = tf.reduce_prod(tf.cast(shape, tf.int32))
    if seed is None:
        ids = tf.random.categorical(logits, count, dtype=tf.int64)
    else:
        ids = tf.random.stateless_categorical(logits, count, seed=seed, dtype=tf.int64)
    return tf.reshape(ids, shape)


def sample_log_uniform(shape, vocab_size: int, seed=None):
    """Ids in ``[0, vocab_size)`` drawn from :func:`log_uniform_probabilities`, any ``shape``.

    The inverse of the distribution's CDF, ``floor(exp(u · log(V + 1))) − 1`` for uniform
    ``u``: the same law as ``tf.random.log_uniform_candidate_sampler`` with ``unique=False``, but
    one independent draw per entry of a whole batch instead of one shared set per call.
    ``seed`` is a stateless seed pair (two ints) or None.
    """
    if seed is None:
        u = tf.random.uniform(shape, dtype=tf.float64)
    else:
        u = tf.random.stateless_uniform(shape, seed=seed, dtype=tf.float64)
    ids = tf.floor(tf.exp(u * math.log(vocab_size + 1))) - 1.0
    return tf.clip_by_value(tf.cast(ids, tf.int64), 0, vocab_size - 1)


def vectorize_ragged(vectorizer, texts: Sequence[str], batch_size: int = 1000) -> tf.RaggedTensor:
    """Token ids of every text as one ``(texts, None)`` int64 ``tf.RaggedTensor`` (no padding).

    ``vectorizer`` is a fitted ``keras.layers.TextVectorization`` (``output_mode="int"``). Texts
    go through it ``batch_size`` at a time and the padding is dropped, so 75,000 IMDB reviews
    take the memory of their tokens, not of 75,000 copies of the longest review.
    """
    parts = []
    for start in range(0, len(texts), batch_size):
        ids = tf.cast(vectorizer(tf.constant(list(texts[start: start + batch_size]))), tf.int64)
        parts.append(tf.RaggedTensor.from_tensor(ids, padding=0))   # (batch, None)
    return tf.concat(parts, axis=0)


def skipgram_dataset(sequences, window_size: int, num_negatives: int, vocab_size: int, *,
                     batch_size: int = 1024, shuffle_buffer: int = 100_000,
                     seed: int = config.SEED, min_id: int = 2,
                     negative_probabilities=None, keep_probabilities=None) -> tf.data.Dataset:
    """Skip-gram training batches with negative sampling, as a ``tf.data`` pipeline.

    The (centre, context) pairs are computed once, when it is called, and kept in memory; each
    epoch shuffles them and draws new negatives.

    Args:
        sequences: token ids of each text: a ``tf.RaggedTensor`` (as
            :func:`vectorize_ragged` returns), a ``(texts, length)`` array or a list of lists
            (0 = padding, dropped; the dataset then knows its number of batches), or a
            ``tf.data.Dataset`` of 1-D int tensors.
        window_size: context words on each side of the centre word (the slides' ``m``).
        num_negatives: negative words per positive pair (``K``; Mikolov et al. use 5–20 on
            small corpora).
        vocab_size: size of the (frequency-sorted) vocabulary the ids come from.
        batch_size: pairs per batch (the last, smaller batch is dropped).
        shuffle_buffer: pairs held for shuffling.
        seed: seeds the shuffle and the negative draws (the same batches on every run).
        min_id: centre and context ids below it are dropped (default 2: TextVectorization's
            padding 0 and out-of-vocabulary 1 carry no meaning), and negatives are drawn from
            ``[min_id, vocab_size)``.
        negative_probabilities: ``(vocab_size,)`` probabilities to draw the negatives from
            (e.g. the paper's :func:`unigram_noise_probabilities`, padded to the full id range);
            ids below ``min_id`` are never drawn. Default: the log-uniform law of
            :func:`sample_log_uniform`.
        keep_probabilities: ``(vocab_size,)`` probability of keeping each occurrence of each id
            (e.g. :func:`subsampling_keep_probabilities`): the texts are subsampled once, with
            ``seed``, before the pairs are formed (the word2vec tool draws again on every pass).
            Not for a ``tf.data.Dataset`` of sequences.

    Returns:
        A dataset of ``((centre, candidates), labels)``: ``centre`` ``(batch,)`` int64,
        ``candidates`` ``(batch, 1 + num_negatives)`` int64 with the true context in column 0
        and the negatives after it, ``labels`` ``(batch, 1 + num_negatives)`` float32, 1 then 0s.
    """
    if num_negatives < 1:
        raise ValueError(f"num_negatives must be a positive integer; got {num_negatives}.")
    if vocab_size <= min_id:
        raise ValueError(f"vocab_size ({vocab_size}) must be larger than min_id ({min_id}).")
    batches = None
    if keep_probabilities is not None and isinstance(sequences, tf.data.Dataset):
        raise ValueError("keep_probabilities needs the sequences as a RaggedTensor, an array or "
                         "a list of lists, not a tf.data.Dataset.")
    if negative_probabilities is not None:
        if len(negative_probabilities) != vocab_size:
            raise ValueError(f"negative_probabilities has {len(negative_probabilities)} entries; "
                             f"expected one per id, {vocab_size}.")
        noise = np.asarray(negative_probabilities, dtype="float64")[min_id:]
        if not noise.sum() > 0:
            raise ValueError("negative_probabilities gives no id at or above min_id a chance.")
        noise = noise / noise.sum()                                  # over [min_id, vocab_size)
    if not isinstance(sequences, tf.data.Dataset):
        if not isinstance(sequences, tf.RaggedTensor):
            sequences = tf.ragged.constant([[int(i) for i in row] for row in sequences], tf.int64)
        if keep_probabilities is not None:
            sequences = subsample(tf.cast(sequences, tf.int64), keep_probabilities, seed)
        # Known in advance without a dataset: the number of batches, so Keras can show progress.
        lengths = tf.reduce_sum(tf.cast(sequences >= min_id, tf.int64), axis=1).numpy()
        pairs_count = sum(2 * np.maximum(lengths - o, 0).sum() for o in range(1, window_size + 1))
        batches = int(pairs_count) // batch_size
        sequences = tf.data.Dataset.from_tensor_slices(tf.cast(sequences, tf.int64))

    def pairs(ids):
        ids = ids.to_tensor() if isinstance(ids, tf.RaggedTensor) else ids
        ids = tf.where(tf.cast(ids, tf.int64) < min_id, tf.zeros_like(ids, tf.int64),
                       tf.cast(ids, tf.int64))
        return tf.data.Dataset.from_tensor_slices(skipgram_pairs(ids, window_size))

    negative_range = vocab_size - min_id

    def add_negatives(step, batch):
        centres, contexts = batch
        shape, draw_seed = (tf.shape(centres)[0], num_negatives), tf.stack([tf.cast(seed, tf.int64), step])
        if negative_probabilities is None:
            negatives = sample_log_uniform(shape, negative_range, seed=draw_seed) + min_id
        else:
            negatives = sample_from_probabilities(shape, noise, seed=draw_seed) + min_id
        candidates = tf.concat([contexts[:, None], negatives], axis=1)       # (batch, 1 + K)
        labels = tf.concat([tf.ones_like(contexts[:, None], tf.float32),
                            tf.zeros_like(negatives, tf.float32)], axis=1)  # (batch, 1 + K)
        return (centres, candidates), labels

    # The pairs are the same every epoch (the negatives are not): cached in memory, and read once
    # here in full. A cache that an iterator leaves half-written (a look at the first batch, as
    # notebook 06 takes) is thrown away, with a "did not fully read the dataset being cached"
    # warning, and computed again by the next iterator.
    all_pairs = sequences.flat_map(pairs).cache()
    if sequences.cardinality() != tf.data.INFINITE_CARDINALITY:
        for _ in all_pairs.batch(1 << 16):
            pass
    dataset = (all_pairs
               .shuffle(shuffle_buffer, seed=seed, reshuffle_each_iteration=True)
               .batch(batch_size, drop_remainder=True)
               .enumerate()
               .map(add_negatives, num_parallel_calls=tf.data.AUTOTUNE))
    if batches is not None:
        dataset = dataset.apply(tf.data.experimental.assert_cardinality(batches))
    return dataset.prefetch(tf.data.AUTOTUNE)


def cbow_examples(token_ids: Sequence[int], window_size: int) -> tuple[np.ndarray, np.ndarray]:
    """CBOW's (context, centre) examples of one text: ``(n, 2·window_size)`` ids and ``(n,)``.

    Each row holds the ``window_size`` words before and after a centre word, 0 where the text
    ends (the slides' "Continuous Bag of Words Model (CBOW)", estimating
    ``P(w_c | w_{c−m}, …, w_{c+m})``).
    """
    ids = np.asarray([t for t in token_ids if t > 0], dtype="int64")
    padded = np.concatenate([np.zeros(window_size, "int64"), ids, np.zeros(window_size, "int64")])
    offsets = [o for o in range(-window_size, window_size + 1) if o != 0]
    contexts = np.stack([padded[window_size + o: window_size + o + len(ids)] for o in offsets], 1)
    return contexts, ids
