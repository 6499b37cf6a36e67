"""Tools for notebook 07's language models (the models themselves are its ``#@save`` cells,
:mod:`seqlab.lessons.nb07`): zeroing a stateful LSTM's state, and perplexity.

Truncated BPTT (slides 001) carries a stateful LSTM's state from batch to batch within one pass
over the text; :func:`reset_states` and :class:`ResetStatesCallback` start each pass (and each
held-out evaluation, and each generated text) from a zero state.
"""

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

    Truncated BPTT carries the state from batch to batch *within* one pass over the text; a new
    pass (or the held-out text) starts from the beginning, so it starts from a zero state.
    """

    def on_epoch_begin(self, epoch, logs=None):
        reset_states(self.model)

    def on_test_begin(self, logs=None):
        reset_states(self.model)


def perplexity(mean_cross_entropy: float) -> float:
    """``exp`` of the mean cross-entropy in nats per token: the model is as unsure as a fair die
    with this many sides. A uniform guess over ``V`` tokens has perplexity ``V``."""
    return float(math.exp(mean_cross_entropy))
