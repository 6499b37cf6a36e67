"""Training batches grouped by length, for every sequence task (notebooks 03, 04, 05 and 08).

>>> import tensorflow as tf
>>> ids = tf.constant([[5, 6, 0, 0], [7, 0, 0, 0], [1, 2, 3, 4], [8, 9, 9, 0]], tf.int64)
>>> batches = tf.data.Dataset.from_tensor_slices((ids, tf.constant([1, 0, 1, 0]))).batch(4)
>>> sorted(tuple(x.shape) for x, _ in bucket_by_length(batches, 2, boundaries=[3], seed=0))
[(2, 2), (2, 4)]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import tensorflow as tf

from seqlab import config

#: Bucket boundaries for reviews cut at 300 tokens (notebook 03's full mode).
REVIEW_BOUNDARIES = (64, 96, 128, 160, 192, 224, 256, 288)


def sequence_lengths(ids) -> tf.Tensor:
    """Real tokens per row of zero-padded ids, or of a keras-hub features dict (``padding_mask``)."""
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
    """``dataset``'s examples re-batched by length, zero-padded and reshuffled every epoch.

    Args:
        dataset: batches of ``(ids, label)``, ``ids`` ``(batch, length)`` padded with 0 at the
            end or a dict of features with a ``padding_mask``, or of
            ``((source, target_in), target_out)`` id sequences.
        batch_size: examples per batch (global: ``fit`` splits it among replicas).
        boundaries: increasing lengths that separate the buckets.
        seed: the shuffle's seed.
        shuffle_buffer: examples in the shuffle buffer.
        pad_to_boundaries: pad each batch to its bucket's boundary minus one, so there are only
            ``len(boundaries)`` shapes (for XLA); every length must be below the last boundary.
        drop_remainder: drop each bucket's last, incomplete batch every epoch.

    Returns:
        The regrouped dataset, sequences ``(batch, None)``, with a known cardinality.
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
    """How many batches :func:`bucket_by_length` makes of ``dataset`` per epoch (reads it once).

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
