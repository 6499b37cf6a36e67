"""Tools for notebook 07's language models: zeroing a stateful LSTM's state, and perplexity."""

from __future__ import annotations

import math

import keras


def reset_states(model: keras.Model) -> None:
    """Zero the state of every stateful recurrent layer (start of an epoch or of a new text)."""
    for layer in model.layers:
        if getattr(layer, "stateful", False):
            layer.reset_state()


class ResetStatesCallback(keras.callbacks.Callback):
    """Zero a stateful model's states before every epoch and every evaluation.

    Truncated BPTT (slides 001) carries the state only *within* one pass over the text.
    """

    def on_epoch_begin(self, epoch, logs=None):
        reset_states(self.model)

    def on_test_begin(self, logs=None):
        reset_states(self.model)


def perplexity(mean_cross_entropy: float) -> float:
    """``exp`` of the mean cross-entropy in nats per token (a uniform guess over ``V`` tokens: ``V``)."""
    return float(math.exp(mean_cross_entropy))
