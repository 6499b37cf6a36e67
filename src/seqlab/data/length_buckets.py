"""Training batches of zero-padded token ids grouped by length (notebooks 03 and 08).

A recurrent layer or a Transformer does work for every position of a batch, padding included.
Reviews vary a lot in length (IMDB's median review is about 174 words, its mean about 230, and
notebook 03 cuts them at 300), so a random batch padded to its longest review is mostly padding.
:func:`bucket_by_length` regroups a batched dataset so that each batch holds reviews of about
the same length, padded only to the longest of them:

>>> import tensorflow as tf
>>> ids = tf.constant([[5, 6, 0, 0], [7, 0, 0, 0], [1, 2, 3, 4], [8, 9, 9, 0]], tf.int64)
>>> batches = tf.data.Dataset.from_tensor_slices((ids, tf.constant([1, 0, 1, 0]))).batch(4)
>>> sorted(tuple(x.shape) for x, _ in bucket_by_length(batches, 2, boundaries=[3], seed=0))
[(2, 2), (2, 4)]

The model must then accept a sequence axis of ``None`` (``keras.Input((None,))``); a mask
(``Embedding(mask_zero=True)``, or keras-hub's ``padding_mask``) keeps the padding out of the
result, so only the amount of padding changes, not what is learned from a batch.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import tensorflow as tf

from seqlab import config

#: Bucket boundaries for reviews cut at 300 tokens (notebook 03's full mode): a length ``n``
#: goes to the first bucket whose boundary is above ``n``. Batches are padded to their own
#: longest review, so a bucket's width only bounds its padding.
REVIEW_BOUNDARIES = (64, 96, 128, 160, 192, 224, 256, 288)


def sequence_lengths(ids) -> tf.Tensor:
    """Real tokens per row, ``(..., length) -> (...)``: of zero-padded ids (0 = padding), or of
    a keras-hub preprocessor's dict of features (its ``padding_mask``)."""
    if isinstance(ids, dict):
        return tf.reduce_sum(tf.cast(ids["padding_mask"], tf.int32), axis=-1)
    return tf.reduce_sum(tf.cast(tf.not_equal(ids, 0), tf.int32), axis=-1)


def bucket_by_length(dataset: tf.data.Dataset, batch_size: int, *,
                     boundaries: Sequence[int] = REVIEW_BOUNDARIES,
                     seed: int = config.SEED, shuffle_buffer: int = 20_000) -> tf.data.Dataset:
    """``dataset``'s examples re-batched by length: ``(ids, label)`` batches, ids zero-padded.

    The batches are cut into examples, shuffled (again every epoch, with ``seed``; a cached
    dataset would otherwise repeat one order), trimmed of their padding, and grouped by
    ``tf.data``'s ``bucket_by_sequence_length``: each bucket fills a batch of ``batch_size``
    examples, padded with 0 to its longest; at the end of an epoch every bucket's remainder is a
    smaller batch, so no example is left out. Batches of different lengths come in the random
    order in which the buckets fill.

    Args:
        dataset: batches of ``(ids, label)``, ``ids`` of shape ``(batch, length)`` padded with 0
            at the end (``TextVectorization``'s output), or a dict of such features with a
            ``padding_mask`` (a keras-hub preprocessor's output: ``token_ids``,
            ``segment_ids``, ``padding_mask``), each cut and padded alike.
        batch_size: examples per batch (global: ``fit`` splits it among replicas).
        boundaries: increasing lengths that separate the buckets.
        seed: the shuffle's seed.
        shuffle_buffer: examples in the shuffle buffer (the default holds notebook 03's 17,500
            training reviews: a full shuffle).

    Returns:
        The regrouped dataset, ``ids`` of shape ``(batch, None)``.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be a positive number of examples, got {batch_size}")
    if list(boundaries) != sorted(set(boundaries)) or not boundaries or min(boundaries) < 1:
        raise ValueError(f"boundaries must be increasing positive lengths, got {boundaries}")

    def trim(ids, label):  # (length,) -> (real tokens,), each feature alike
        length = sequence_lengths(ids)
        return tf.nest.map_structure(lambda feature: feature[:length], ids), label

    def length_of(ids, label):
        return tf.shape(tf.nest.flatten(ids)[0])[0]

    return (dataset.unbatch()
            .shuffle(shuffle_buffer, seed=seed, reshuffle_each_iteration=True)
            .map(trim, num_parallel_calls=tf.data.AUTOTUNE)
            .bucket_by_sequence_length(length_of,
                                       bucket_boundaries=list(boundaries),
                                       bucket_batch_sizes=[batch_size] * (len(boundaries) + 1))
            .apply(tf.data.experimental.assert_cardinality(
                bucketed_batches(dataset, batch_size, boundaries)))
            .prefetch(tf.data.AUTOTUNE))


def bucketed_batches(dataset: tf.data.Dataset, batch_size: int,
                     boundaries: Sequence[int] = REVIEW_BOUNDARIES) -> int:
    """How many batches :func:`bucket_by_length` makes of ``dataset`` in every epoch.

    A review's bucket depends only on its length, so every epoch has the same number of
    batches: ``ceil(reviews in the bucket / batch_size)`` summed over the buckets (each bucket's
    remainder is one smaller batch). Counting reads ``dataset`` once (and fills a ``cache()``
    in it, which the first epoch would fill anyway). :func:`bucket_by_length` states the count
    as the dataset's cardinality: ``fit`` then knows an epoch's length from the start (its
    progress bar shows it, and Keras does not warn "Your input ran out of data; interrupting
    training" at the end of the first epoch, as it does for a dataset of unknown length).

    >>> ids = tf.constant([[5, 6, 0, 0], [7, 0, 0, 0], [1, 2, 3, 4], [8, 9, 9, 0]], tf.int64)
    >>> bucketed_batches(tf.data.Dataset.from_tensor_slices((ids, ids[:, 0])).batch(4), 2,
    ...                  boundaries=[3])
    2
    """
    lengths = [np.asarray(batch).reshape(-1) for batch in
               dataset.map(lambda ids, label: sequence_lengths(ids)).as_numpy_iterator()]
    if not lengths:
        return 0
    buckets = np.searchsorted(np.asarray(boundaries), np.concatenate(lengths), side="right")
    counts = np.bincount(buckets, minlength=len(boundaries) + 1)
    return int(np.sum(-(-counts // batch_size)))
