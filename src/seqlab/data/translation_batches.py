"""Translation pairs as batches: vectorizers, padded datasets, and training batches bucketed by
length (:func:`make_bucketed_dataset`), for :func:`seqlab.data.translation.load_translation`.

>>> bucket_widths(20)
[6, 8, 10, 12, 14, 16, 18, 20]
"""

from __future__ import annotations

from collections.abc import Sequence

import keras
import numpy as np
import tensorflow as tf

from seqlab import config
from seqlab.data.translation_text import standardize_with_markers

MIN_VOCAB_SIZE = 5


def make_vectorizer(texts: Sequence[str], vocab_size: int) -> keras.layers.TextVectorization:
    """A ``TextVectorization`` with :func:`standardize_with_markers`, whitespace split, ragged output,
    adapted on ``texts``. Index 0 is padding, 1 is ``[UNK]``."""
    vectorizer = keras.layers.TextVectorization(
        max_tokens=vocab_size, standardize=standardize_with_markers, split="whitespace", ragged=True
    )
    vectorizer.adapt(tf.data.Dataset.from_tensor_slices(list(texts)).batch(1024))
    return vectorizer


def vectorize_pairs(pairs: Sequence[tuple[str, str]], source_vectorizer, target_vectorizer,
                    max_length: int) -> tuple[tf.RaggedTensor, tf.RaggedTensor, np.ndarray]:
    """Ragged token ids of the pairs that fit in ``max_length``.

    Returns ``(source_ids, target_ids, kept)``: ``kept`` is the boolean mask of the pairs short
    enough (``max_length`` source tokens, ``max_length + 1`` target tokens so that the shifted
    target has ``max_length``); the others are dropped rather than cut, so no target loses
    ``[END]``.
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
    dataset = tf.data.Dataset.from_tensor_slices(
        ((source_ids, target_ids[:, :-1]), target_ids[:, 1:])
    )
    if shuffle:
        dataset = dataset.shuffle(len(source_ids), seed=seed, reshuffle_each_iteration=True)
    return dataset.batch(batch_size, drop_remainder=shuffle).prefetch(tf.data.AUTOTUNE)


#: The narrowest bucket; then one bucket every :data:`BUCKET_STEP` tokens up to the longest pair.
SHORTEST_BUCKET = 6
BUCKET_STEP = 2


def bucket_widths(longest: int) -> list[int]:
    """Padded lengths of the training buckets for a corpus whose longest pair has ``longest``
    tokens (source, or shifted target): ``6, 8, 10, ...`` below ``longest``, then ``longest``
    (``bucket_widths(20)`` -> ``[6, 8, 10, 12, 14, 16, 18, 20]``).

    Why a few fixed widths rather than each batch padded to its own longest sentence: every new
    batch shape may make Keras compile its train step again. Without XLA it does not: ``fit``
    traces its step from the dataset's ``element_spec``, whose lengths are ``None`` here, so
    one trace serves every width (``python -m benchmarks.bucketing`` counts the traces: the same
    for both pipelines), and eager batches (``train_on_batch``) are covered by the
    ``tf.function(reduce_retracing=True)`` Keras 3 wraps the step in, which relaxes the shape
    after the second one. But XLA (``jit_compile=True``, which ``setup()`` picks on a GPU)
    compiles once per concrete shape, and a source and a target each padded to their own
    longest sentence give up to ``longest**2`` shapes; with fixed widths there are at most
    ``len(bucket_widths(longest))`` (8 for the Anki pairs at ``max_length=20``). On the Anki
    pairs, 2-token steps keep 82 % of the padded target positions real (17 widths of 1 token:
    87 %; today's single width of 20: 41 %): finer buckets would buy little and cost more
    compilations.
    """
    if longest <= SHORTEST_BUCKET:
        return [longest]
    return [*range(SHORTEST_BUCKET, longest, BUCKET_STEP), longest]


def pair_lengths(source_ids: tf.RaggedTensor, target_ids: tf.RaggedTensor) -> np.ndarray:
    """What bucketing sorts by: ``max(source tokens, target tokens - 1)`` per pair, the
    target counted after the teacher-forcing shift."""
    return np.maximum(source_ids.row_lengths().numpy(), target_ids.row_lengths().numpy() - 1)


def fitted_bucket_widths(lengths: np.ndarray, batch_size: int, *, longest: int) -> list[int]:
    """:func:`bucket_widths` of ``longest`` for pairs of ``lengths`` (:func:`pair_lengths`):
    a bucket that would hold fewer than ``batch_size`` pairs is merged into the next wider one;
    if the widest pairs are too few for a batch of their own, the last full bucket is widened
    to hold them.
    """
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

    Each pair's length is ``max(source tokens, shifted target tokens)``; it goes into the
    narrowest bucket of :func:`bucket_widths` that holds it, and a bucket's batch is padded
    with 0 to its width ``W`` (the source to ``min(W, source_length)``, the target to
    ``min(W + 1, target_length)`` before the shift). ``tf.data``'s ``group_by_window`` does the
    grouping, after a shuffle of the whole split (reshuffled every epoch, with ``seed``): the
    sentences of a batch are a random draw among those of its length, and batches of
    different lengths follow each other in a random order, as the buckets fill. The masked
    loss and accuracy ignore padding, so only the amount of padding changes, not what is
    learned from a batch.

    Every batch has ``batch_size`` rows (``tf.distribute`` splits it evenly): each bucket
    leaves out the last ``batch_size - 1`` pairs or fewer that it drew in an epoch (other ones
    each epoch, as the shuffle changes). As which bucket a pair goes to never changes, an
    epoch is always the same number of batches, ``sum(bucket pairs // batch_size)``, at most
    one per bucket fewer than ``len(source_ids) // batch_size``; ``cardinality()`` says it
    (schedules and progress bars use it). A bucket with fewer than ``batch_size`` pairs would
    never fill: it is merged into the next wider one (:func:`fitted_bucket_widths`).

    Args:
        source_ids / target_ids: ragged token ids (:func:`vectorize_pairs`); target with
            ``[START]`` and ``[END]``.
        batch_size: rows per batch.
        source_length / target_length: the padded lengths of the unbucketed splits (the
            longest source, the longest target before the shift): no batch is wider.
        seed: the shuffle's seed.
        widths: the buckets' widths, if the caller has them already; default
            :func:`fitted_bucket_widths` of the pairs.

    Returns:
        The dataset, its batches padded to ``widths``.
    """
    source_lengths = source_ids.row_lengths().numpy().astype(np.int32)
    target_lengths = target_ids.row_lengths().numpy().astype(np.int32)
    lengths = pair_lengths(source_ids, target_ids)
    if widths is None:
        widths = fitted_bucket_widths(lengths, batch_size,
                                      longest=max(source_length, target_length - 1))
    counts = np.bincount(np.searchsorted(widths, lengths), minlength=len(widths))
    steps = int((counts // batch_size).sum())
    if steps == 0:
        raise ValueError(f"{len(source_lengths)} training pairs do not fill one batch of "
                         f"{batch_size}")
    limits = tf.constant(widths, tf.int64)  # (buckets,): the inclusive upper length of each

    def trim(source, target, source_count, target_count):
        return source[:source_count], target[:target_count]  # (s,), (t,): no padding

    def bucket_of(source, target):
        length = tf.cast(tf.maximum(tf.size(source), tf.size(target) - 1), tf.int64)
        return tf.argmax(tf.cast(limits >= length, tf.int64), output_type=tf.int64)

    def batch_bucket(bucket, pairs):
        width = limits[bucket]
        shapes = (tf.reshape(tf.minimum(width, source_length), [1]),
                  tf.reshape(tf.minimum(width + 1, target_length), [1]))
        return pairs.padded_batch(batch_size, padded_shapes=shapes, drop_remainder=True)

    def teacher_forcing(source, target):  # (B, W), (B, W + 1)
        return (source, target[:, :-1]), target[:, 1:]

    dataset = tf.data.Dataset.from_tensor_slices((
        pad_ids(source_ids, source_length), pad_ids(target_ids, target_length),
        source_lengths, target_lengths))
    dataset = (dataset.shuffle(len(source_lengths), seed=seed, reshuffle_each_iteration=True)
               .map(trim, num_parallel_calls=tf.data.AUTOTUNE)
               .group_by_window(bucket_of, batch_bucket, window_size=batch_size)
               .map(teacher_forcing)
               .apply(tf.data.experimental.assert_cardinality(steps)))
    return dataset.prefetch(tf.data.AUTOTUNE)

