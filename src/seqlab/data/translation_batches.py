"""Translation pairs as batches: vectorizers, padded datasets, and training batches bucketed by
length (:func:`make_bucketed_dataset`), for :func:`seqlab.data.translation.load_translation`."""

from __future__ import annotations

from collections.abc import Sequence

import keras
import numpy as np
import tensorflow as tf

from seqlab import config
from seqlab.data.length_buckets import bucket_by_length
from seqlab.data.translation_text import standardize_with_markers

MIN_VOCAB_SIZE = 5


def make_vectorizer(texts: Sequence[str], vocab_size: int) -> keras.layers.TextVectorization:
    """A ragged ``TextVectorization`` with :func:`standardize_with_markers`, adapted on ``texts``."""
    vectorizer = keras.layers.TextVectorization(max_tokens=vocab_size, ragged=True,
                                                standardize=standardize_with_markers)
    vectorizer.adapt(tf.data.Dataset.from_tensor_slices(list(texts)).batch(1024))
    return vectorizer


def vectorize_pairs(pairs: Sequence[tuple[str, str]], source_vectorizer, target_vectorizer,
                    max_length: int) -> tuple[tf.RaggedTensor, tf.RaggedTensor, np.ndarray]:
    """Ragged token ids of the pairs that fit in ``max_length``: ``(source_ids, target_ids, kept)``.

    Longer pairs are dropped rather than cut, so no target loses ``[END]``.
    """
    sources = source_vectorizer(tf.constant([s for s, _ in pairs], tf.string))
    targets = target_vectorizer(tf.constant([t for _, t in pairs], tf.string))
    kept = ((sources.row_lengths() <= max_length)
            & (targets.row_lengths() <= max_length + 1)).numpy()
    return (tf.ragged.boolean_mask(sources, kept), tf.ragged.boolean_mask(targets, kept), kept)


def pad_ids(ids: tf.RaggedTensor, length: int) -> np.ndarray:
    """Ragged ids -> ``(rows, length)`` int32 array, right-padded with 0."""
    return tf.cast(ids.to_tensor(shape=[None, length]), tf.int32).numpy()


def make_dataset(source_ids: np.ndarray, target_ids: np.ndarray, batch_size: int, *,
                 shuffle: bool = False, seed: int = config.SEED) -> tf.data.Dataset:
    """``((source_ids, target_in), target_out)`` batches from padded id arrays."""
    dataset = tf.data.Dataset.from_tensor_slices(((source_ids, target_ids[:, :-1]),
                                                   target_ids[:, 1:]))
    if shuffle:
        dataset = dataset.shuffle(len(source_ids), seed=seed, reshuffle_each_iteration=True)
    return dataset.batch(batch_size, drop_remainder=shuffle).prefetch(tf.data.AUTOTUNE)


#: The narrowest bucket; then one bucket every :data:`BUCKET_STEP` tokens up to the longest pair.
SHORTEST_BUCKET = 6
BUCKET_STEP = 2


def bucket_widths(longest: int) -> list[int]:
    """Padded widths of the training buckets for pairs of at most ``longest`` tokens.

    >>> bucket_widths(11)
    [6, 8, 10, 11]
    """
    if longest <= SHORTEST_BUCKET:
        return [longest]
    return [*range(SHORTEST_BUCKET, longest, BUCKET_STEP), longest]


def pair_lengths(source_ids: tf.RaggedTensor, target_ids: tf.RaggedTensor) -> np.ndarray:
    """``max(source tokens, target tokens - 1)`` per pair: the length bucketing sorts by."""
    return np.maximum(source_ids.row_lengths().numpy(), target_ids.row_lengths().numpy() - 1)


def fitted_bucket_widths(lengths: np.ndarray, batch_size: int, *, longest: int) -> list[int]:
    """:func:`bucket_widths` of ``longest``, buckets too small for a batch merged into wider ones."""
    candidates = bucket_widths(longest)
    counts = np.bincount(np.searchsorted(candidates, lengths), minlength=len(candidates))
    kept, pending = [], 0
    for width, count in zip(candidates, counts, strict=True):
        pending += int(count)
        if pending >= batch_size:
            kept.append(width)
            pending = 0
    if pending or not kept:  # the widest pairs alone fill no batch: widen the last bucket
        kept = [*kept[:-1], candidates[-1]]
    return kept


def make_bucketed_dataset(source_ids: tf.RaggedTensor, target_ids: tf.RaggedTensor,
                          batch_size: int, *, source_length: int, target_length: int,
                          seed: int = config.SEED, widths: list[int] | None = None
                          ) -> tf.data.Dataset:
    """Shuffled training batches grouped by length: ``((source_ids, target_in), target_out)``.

    Every batch holds ``batch_size`` pairs (each bucket's incomplete batch is left out).

    Args:
        source_ids / target_ids: ragged token ids (:func:`vectorize_pairs`); target with
            ``[START]`` and ``[END]``.
        batch_size: rows per batch.
        source_length / target_length: the padded lengths of the unbucketed splits (no batch
            is wider).
        seed: the shuffle's seed.
        widths: the buckets' widths; default :func:`fitted_bucket_widths` of the pairs.
    """
    lengths = pair_lengths(source_ids, target_ids)
    if widths is None:
        widths = fitted_bucket_widths(lengths, batch_size,
                                      longest=max(source_length, target_length - 1))
    counts = np.bincount(np.searchsorted(widths, lengths), minlength=len(widths))
    if int((counts // batch_size).sum()) == 0:
        raise ValueError(f"{len(lengths)} training pairs do not fill one batch of {batch_size}")
    padded = make_dataset(pad_ids(source_ids, source_length), pad_ids(target_ids, target_length),
                          4096)
    target = target_length - 1

    def without_end(features, target_out):  # [END] is never an input: as long as target_out
        source, target_in = features
        return (source, tf.where(target_out != 0, target_in, 0)), target_out

    def clip(features, target_out):  # a bucket's width, at most the split's padded lengths
        source, target_in = features
        return (source[:, :source_length], target_in[:, :target]), target_out[:, :target]

    return (bucket_by_length(padded.map(without_end), batch_size,
                             boundaries=[width + 1 for width in widths], seed=seed,
                             shuffle_buffer=len(lengths), pad_to_boundaries=True,
                             drop_remainder=True)
            .map(clip, num_parallel_calls=tf.data.AUTOTUNE))
