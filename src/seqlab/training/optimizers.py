"""Optimizers the course needs beyond Keras's own."""

from __future__ import annotations

import keras
import tensorflow as tf


@keras.saving.register_keras_serializable(package="seqlab")
class SummedRowsAdam(keras.optimizers.Adam):
    """Adam (Kingma & Ba, 2015) that adds up a sparse gradient's rows for the same word first.

    An embedding table's gradient arrives as ``tf.IndexedSlices``: rows of the table, by
    index. Keras's Adam squares those rows one by one (``ops.square`` keeps them sparse)
    before adding them into the second moment, so a word whose gradient comes in two rows
    gets ``g1² + g2²`` where the algorithm asks for ``(g1 + g2)²``. The TF-Hub module sums
    each batch's rows per word itself, so on one device the two agree; under a strategy with
    several replicas each replica sends its own row for a word and the all-reduce puts them
    side by side, so the fine-tuned embedding would drift from the one-device run. Summing
    rows with the same index before the update (nothing else changes) makes several replicas
    match one device (``tests/test_distribute.py``) and is exactly what Adam computes on the
    dense gradient.
    """

    def update_step(self, gradient, variable, learning_rate):
        if isinstance(gradient, tf.IndexedSlices):
            words, row_of = tf.unique(gradient.indices)
            rows = tf.math.unsorted_segment_sum(gradient.values, row_of, tf.shape(words)[0])
            gradient = tf.IndexedSlices(rows, words, gradient.dense_shape)
        super().update_step(gradient, variable, learning_rate)
