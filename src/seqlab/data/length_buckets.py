"""Training batches grouped by length, for every sequence task (notebooks 03, 04, 05 and 08).

A recurrent layer or a Transformer does work for every position of a batch, padding included.
Reviews vary a lot in length (IMDB's median review is about 174 words, its mean about 230, and
notebook 03 cuts them at 300), so a random batch padded to its longest review is mostly padding.
:func:`bucket_by_length` regroups a batched dataset so that each batch holds examples of about
the same length, padded only to the longest of them (or to its bucket's fixed width, for XLA):

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


def _parts(element) -> list:
    """The tensors of an example or a batch, tuples flattened, a dict of features kept whole."""
    if isinstance(element, (tuple, list)):
        return [part for item in element for part in _parts(item)]
    return [element]


def _trim(part):
    """An example's sequences without their padding; a scalar (a label) as it is."""
    if isinstance(part, (tuple, list)):
        return tuple(_trim(item) for item in part)
    if isinstance(part, dict):
        length = tf.reduce_sum(tf.cast(part["padding_mask"], tf.int32))
        return {name: feature[:length] for name, feature in part.items()}
    if part.shape.rank == 0:
        return part
    return part[:tf.reduce_sum(tf.cast(tf.not_equal(part, 0), tf.int32))]


def _example_length(*element):
    """The longest sequence of a trimmed example (source, target, features ...)."""
    lengths = [tf.shape(tf.nest.flatten(part)[0])[0] for part in _parts(element)
               if isinstance(part, dict) or part.shape.rank >= 1]
    return tf.reduce_max(tf.stack(lengths))


def _row_lengths(*element):
    """:func:`_example_length` of every row of a padded batch, ``(batch,)``."""
    lengths = [sequence_lengths(part) for part in _parts(element)
               if isinstance(part, dict) or part.shape.rank >= 2]
    return tf.reduce_max(tf.stack(lengths), axis=0)


def bucket_by_length(dataset: tf.data.Dataset, batch_size: int, *,
                     boundaries: Sequence[int] = REVIEW_BOUNDARIES, seed: int = config.SEED,
                     shuffle_buffer: int = 20_000, pad_to_boundaries: bool = False,
                     drop_remainder: bool = False) -> tf.data.Dataset:
    """``dataset``'s examples re-batched by length, zero-padded.

    The batches are cut into examples, shuffled (again every epoch, with ``seed``), trimmed of
    their padding, and grouped by ``tf.data``'s ``bucket_by_sequence_length``: an example of
    length ``n`` (its longest sequence) goes to the first bucket whose boundary is above ``n``,
    and each bucket fills a batch of ``batch_size`` examples. Batches of different lengths come
    in the random order in which the buckets fill. The dataset states its number of batches
    (:func:`bucketed_batches`) as its cardinality.

    Args:
        dataset: batches of ``(ids, label)``, ``ids`` ``(batch, length)`` padded with 0 at the
            end (``TextVectorization``'s output) or a dict of features with a
            ``padding_mask`` (a keras-hub preprocessor's output), or of
            ``((source, target_in), target_out)`` id sequences; each is trimmed alike.
        batch_size: examples per batch (global: ``fit`` splits it among replicas).
        boundaries: increasing lengths that separate the buckets.
        seed: the shuffle's seed.
        shuffle_buffer: examples in the shuffle buffer (the default holds notebook 03's 17,500
            training reviews: a full shuffle).
        pad_to_boundaries: pad each batch to its bucket's boundary minus one instead of to its
            longest example, so there are only ``len(boundaries)`` shapes (XLA compiles one
            program per shape); every length must then be below the last boundary.
        drop_remainder: every batch holds ``batch_size`` examples; each bucket leaves out its
            last, incomplete batch in every epoch (other examples each epoch). Otherwise that
            remainder is a smaller batch.

    Returns:
        The regrouped dataset, sequences of shape ``(batch, None)``.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be a positive number of examples, got {batch_size}")
    if list(boundaries) != sorted(set(boundaries)) or not boundaries or min(boundaries) < 1:
        raise ValueError(f"boundaries must be increasing positive lengths, got {boundaries}")
    steps = bucketed_batches(dataset, batch_size, boundaries, drop_remainder=drop_remainder)
    return (dataset.unbatch()
            .shuffle(shuffle_buffer, seed=seed, reshuffle_each_iteration=True)
            .map(lambda *element: _trim(element), num_parallel_calls=tf.data.AUTOTUNE)
            .bucket_by_sequence_length(_example_length,
                                       bucket_boundaries=list(boundaries),
                                       bucket_batch_sizes=[batch_size] * (len(boundaries) + 1),
                                       pad_to_bucket_boundary=pad_to_boundaries,
                                       drop_remainder=drop_remainder)
            .apply(tf.data.experimental.assert_cardinality(steps))
            .prefetch(tf.data.AUTOTUNE))


def bucketed_batches(dataset: tf.data.Dataset, batch_size: int,
                     boundaries: Sequence[int] = REVIEW_BOUNDARIES, *,
                     drop_remainder: bool = False) -> int:
    """How many batches :func:`bucket_by_length` makes of ``dataset`` in every epoch.

    An example's bucket depends only on its length, so every epoch has the same number of
    batches: per bucket, ``examples // batch_size``, plus one for the remainder unless
    ``drop_remainder``. Counting reads ``dataset`` once (and fills a ``cache()`` in it, which
    the first epoch would fill anyway); as the stated cardinality, ``fit`` knows an epoch's
    length from the start.

    >>> ids = tf.constant([[5, 6, 0, 0], [7, 0, 0, 0], [1, 2, 3, 4], [8, 9, 9, 0]], tf.int64)
    >>> bucketed_batches(tf.data.Dataset.from_tensor_slices((ids, ids[:, 0])).batch(4), 2,
    ...                  boundaries=[3])
    2
    """
    lengths = [np.asarray(batch).reshape(-1) for batch in
               dataset.map(_row_lengths).as_numpy_iterator()]
    if not lengths:
        return 0
    buckets = np.searchsorted(np.asarray(boundaries), np.concatenate(lengths), side="right")
    counts = np.bincount(buckets, minlength=len(boundaries) + 1)
    return int(np.sum(counts // batch_size if drop_remainder else -(-counts // batch_size)))
