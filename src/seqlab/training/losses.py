"""The masked loss and metric for sequence outputs where token id 0 is padding.

Each replica divides its tokens' losses by the global batch's token count and Keras sums them
(reduction ``"sum"``), so several replicas give the single-device values and gradients.
"""

from __future__ import annotations

import keras
from keras import ops

PAD_ID = 0


def _token_losses(y_true, logits, label_smoothing: float = 0.0):
    """Per-token cross-entropy: ``(batch, T)`` ints, ``(batch, T, V)`` logits -> ``(batch, T)``."""
    logits = ops.cast(logits, "float32")
    y_true = ops.cast(y_true, "int32")
    negative_log_likelihood = ops.sparse_categorical_crossentropy(y_true, logits, from_logits=True)
    if not label_smoothing:
        return negative_log_likelihood
    # The uniform target's cross-entropy is -mean(log_softmax) = logsumexp - mean(logits).
    uniform = ops.logsumexp(logits, axis=-1) - ops.mean(logits, axis=-1)
    return (1.0 - label_smoothing) * negative_log_likelihood + label_smoothing * uniform


def sum_over_replicas(value):
    """``value`` summed over the replicas of the ``tf.distribute`` strategy running this step."""
    if keras.backend.backend() != "tensorflow":
        return value
    import tensorflow as tf
    context = tf.distribute.get_replica_context()  # None in a cross-replica context
    if context is None or context.num_replicas_in_sync == 1:
        return value
    return context.all_reduce(tf.distribute.ReduceOp.SUM, value)


@keras.saving.register_keras_serializable(package="seqlab")
class MaskedSparseCategoricalCrossentropy(keras.losses.Loss):
    """Cross-entropy averaged over the real (non-padding) tokens of the global batch.

    Args:
        from_logits: whether ``y_pred`` holds logits (default) or probabilities.
        label_smoothing: ``eps`` in ``(1 - eps) * one_hot + eps / vocab`` (0 turns it off).
        tokens_per_batch: divide by this number for every batch instead of by the real tokens
            of the global batch (every token weighs the same when batches are grouped by length).

    Call arguments:
        y_true: ``(batch, T)`` token ids, 0 for padding.
        y_pred: ``(batch, T, vocab)`` logits (or probabilities with ``from_logits=False``).
        sample_weight: optional ``(batch, T)`` weights, multiplied into each token's loss.

    Returns:
        A scalar: this replica's share of the global-batch mean (the whole mean on one device).

    Example:

    >>> import numpy as np
    >>> loss = MaskedSparseCategoricalCrossentropy()
    >>> y_true = np.array([[3, 1, 0]])                    # the last position is padding
    >>> logits = np.zeros((1, 3, 4), "float32")           # uniform over 4 tokens
    >>> round(float(loss(y_true, logits)), 4)             # log 4, over the 2 real tokens
    1.3863
    """

    def __init__(self, from_logits: bool = True, label_smoothing: float = 0.0,
                 tokens_per_batch: float | None = None,
                 name: str = "masked_sparse_categorical_crossentropy", **kwargs):
        # "sum" is part of the definition; a saved config repeats it.
        if kwargs.setdefault("reduction", "sum") != "sum":
            raise ValueError("MaskedSparseCategoricalCrossentropy always averages over the real "
                             f"tokens of the global batch; got reduction={kwargs['reduction']!r}")
        super().__init__(name=name, **kwargs)
        if not 0.0 <= label_smoothing < 1.0:
            raise ValueError(f"label_smoothing must be in [0, 1); got {label_smoothing}")
        if tokens_per_batch is not None and not tokens_per_batch > 0:
            raise ValueError("tokens_per_batch must be a positive number or None; got "
                             f"{tokens_per_batch}")
        self.from_logits = from_logits
        self.label_smoothing = label_smoothing
        self.tokens_per_batch = None if tokens_per_batch is None else float(tokens_per_batch)

    def call(self, y_true, y_pred):
        logits = y_pred if self.from_logits else ops.log(ops.clip(y_pred, 1e-7, 1.0))
        losses = _token_losses(y_true, logits, self.label_smoothing)  # (batch, T)
        mask = ops.cast(ops.not_equal(y_true, PAD_ID), losses.dtype)  # (batch, T)
        if self.tokens_per_batch is None:
            real_tokens = ops.maximum(sum_over_replicas(ops.sum(mask)), 1.0)  # global batch
        else:
            real_tokens = ops.cast(self.tokens_per_batch, losses.dtype)  # one constant
        return losses * mask / real_tokens  # (batch, T); Keras sums them ("sum" reduction)

    def get_config(self):
        return {**super().get_config(), "from_logits": self.from_logits,
                "label_smoothing": self.label_smoothing, "tokens_per_batch": self.tokens_per_batch}


@keras.saving.register_keras_serializable(package="seqlab")
class MaskedAccuracy(keras.metrics.Metric):
    """Token accuracy over the real (non-padding) tokens seen since the last reset.

    Call arguments (``update_state``):
        y_true: ``(batch, T)`` token ids, 0 for padding.
        y_pred: ``(batch, T, vocab)`` logits or probabilities (the arg-max is compared).
        sample_weight: optional ``(batch, T)`` weights of the tokens.

    Returns:
        ``result()``: a scalar in ``[0, 1]`` (0 when no real token was seen).

    Example:

    >>> import numpy as np
    >>> metric = MaskedAccuracy()
    >>> metric.update_state(np.array([[2, 1, 0]]), np.eye(3, dtype="float32")[None, [2, 2, 0]])
    >>> float(metric.result())                            # 1 of the 2 real tokens is right
    0.5
    """

    def __init__(self, name: str = "masked_accuracy", **kwargs):
        super().__init__(name=name, **kwargs)
        self.correct = self.add_variable(shape=(), initializer="zeros", name="correct")
        self.total = self.add_variable(shape=(), initializer="zeros", name="total")

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = ops.cast(y_true, "int32")
        predicted = ops.cast(ops.argmax(y_pred, axis=-1), "int32")
        mask = ops.cast(ops.not_equal(y_true, PAD_ID), "float32")
        if sample_weight is not None:
            mask = mask * ops.cast(sample_weight, "float32")
        self.correct.assign_add(ops.sum(ops.cast(ops.equal(predicted, y_true), "float32") * mask))
        self.total.assign_add(ops.sum(mask))

    def result(self):
        return self.correct / ops.maximum(self.total, 1.0)
