"""Losses and metrics for sequence outputs where token id 0 is padding.

A translation batch pads every target to the same length; averaging the loss over the padding
would reward the model for predicting padding after ``[END]``. Both the loss and the accuracy
here count real tokens only (``y_true != 0``).
"""

from __future__ import annotations

import keras
from keras import ops

PAD_ID = 0


def _token_losses(y_true, logits, label_smoothing: float = 0.0):
    """Per-token cross-entropy from logits: ``(batch, T)`` ints, ``(batch, T, V)`` -> ``(batch, T)``.

    ``ops.sparse_categorical_crossentropy(from_logits=True)`` is one fused kernel on TensorFlow
    (``sparse_softmax_cross_entropy_with_logits``, whose gradient is computed alongside): with
    an 8,000-word vocabulary this, not the RNN, is the largest tensor of a training step.
    """
    logits = ops.cast(logits, "float32")
    y_true = ops.cast(y_true, "int32")
    negative_log_likelihood = ops.sparse_categorical_crossentropy(y_true, logits, from_logits=True)
    if not label_smoothing:
        return negative_log_likelihood
    # Label smoothing: the target is (1 - eps) on the true token + eps spread uniformly; the
    # uniform part's cross-entropy is -mean(log_softmax) = logsumexp - mean(logits).
    uniform = ops.logsumexp(logits, axis=-1) - ops.mean(logits, axis=-1)
    return (1.0 - label_smoothing) * negative_log_likelihood + label_smoothing * uniform


@keras.saving.register_keras_serializable(package="seqlab")
class MaskedSparseCategoricalCrossentropy(keras.losses.Loss):
    """Cross-entropy averaged over the real (non-padding) tokens of the batch.

    ``y_true``: ``(batch, T)`` token ids with 0 for padding; ``y_pred``: ``(batch, T, vocab)``
    logits (``from_logits=True``, the default) or probabilities.

    Args:
        label_smoothing: ``eps`` in ``(1 - eps) * one_hot + eps / vocab`` (0 turns it off).
    """

    def __init__(self, from_logits: bool = True, label_smoothing: float = 0.0,
                 name: str = "masked_sparse_categorical_crossentropy", **kwargs):
        kwargs.setdefault("reduction", "sum_over_batch_size")
        super().__init__(name=name, **kwargs)
        if not 0.0 <= label_smoothing < 1.0:
            raise ValueError(f"label_smoothing must be in [0, 1); got {label_smoothing}")
        self.from_logits = from_logits
        self.label_smoothing = label_smoothing

    def call(self, y_true, y_pred):
        logits = y_pred if self.from_logits else ops.log(ops.clip(y_pred, 1e-7, 1.0))
        losses = _token_losses(y_true, logits, self.label_smoothing)  # (batch, T)
        mask = ops.cast(ops.not_equal(y_true, PAD_ID), losses.dtype)
        # One scalar per batch: the mean over real tokens (a batch of short sentences weighs as
        # much per token as a batch of long ones).
        return ops.sum(losses * mask) / ops.maximum(ops.sum(mask), 1.0)

    def get_config(self):
        return {**super().get_config(), "from_logits": self.from_logits,
                "label_smoothing": self.label_smoothing}


@keras.saving.register_keras_serializable(package="seqlab")
def masked_loss(y_true, y_pred):
    """Function form of :class:`MaskedSparseCategoricalCrossentropy` (logits, no smoothing)."""
    losses = _token_losses(y_true, y_pred)
    mask = ops.cast(ops.not_equal(y_true, PAD_ID), losses.dtype)
    return ops.sum(losses * mask) / ops.maximum(ops.sum(mask), 1.0)


@keras.saving.register_keras_serializable(package="seqlab")
def masked_accuracy(y_true, y_pred):
    """Fraction of real (non-padding) tokens whose arg-max prediction is right, per batch."""
    y_true = ops.cast(y_true, "int32")
    predicted = ops.cast(ops.argmax(y_pred, axis=-1), "int32")
    mask = ops.cast(ops.not_equal(y_true, PAD_ID), "float32")
    correct = ops.cast(ops.equal(predicted, y_true), "float32") * mask
    return ops.sum(correct) / ops.maximum(ops.sum(mask), 1.0)


@keras.saving.register_keras_serializable(package="seqlab")
class MaskedAccuracy(keras.metrics.Metric):
    """Token accuracy over real tokens, accumulated exactly over an epoch (correct / total),
    rather than the mean of per-batch ratios that ``metrics=[masked_accuracy]`` gives."""

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

    def reset_state(self):
        self.correct.assign(0.0)
        self.total.assign(0.0)
