"""Compiling the course's models the same way, inside their ``tf.distribute`` strategy."""

from __future__ import annotations

import keras

from seqlab.layers.hub import HubTextEmbedding
from seqlab.training.losses import MaskedAccuracy, MaskedSparseCategoricalCrossentropy
from seqlab.training.optimizers import LazyAdam


def compile_translator(model: keras.Model, optimizer="adam", *, label_smoothing: float = 0.0,
                       tokens_per_batch: float | None = None, jit_compile="auto",
                       **compile_options) -> keras.Model:
    """Compile an RNN or Transformer translator: masked cross-entropy and masked token accuracy.

    Compiles in the model's strategy scope, re-creating an optimizer not built yet there.

    Args:
        optimizer: a Keras optimizer, its name, or its configuration.
        label_smoothing, tokens_per_batch: passed to
            :class:`MaskedSparseCategoricalCrossentropy`.
        jit_compile, **compile_options: passed to ``keras.Model.compile``.

    Returns:
        ``model``, compiled (its ``history`` keys: ``loss``, ``masked_accuracy``).
    """
    with model.distribute_strategy.scope():
        if isinstance(optimizer, keras.optimizers.Optimizer) and not optimizer.built:
            optimizer = type(optimizer).from_config(optimizer.get_config())
        model.compile(optimizer=optimizer,
                      loss=MaskedSparseCategoricalCrossentropy(label_smoothing=label_smoothing,
                                                               tokens_per_batch=tokens_per_batch),
                      metrics=[MaskedAccuracy()], jit_compile=jit_compile, **compile_options)
    return model


def compile_sentiment_classifier(model: keras.Model, learning_rate: float = 1e-3) -> keras.Model:
    """Compile as the slides do: Adam at ``learning_rate``, binary cross-entropy, accuracy.

    Call it again after changing ``trainable``. A model with a TF-Hub embedding gets
    :class:`seqlab.training.optimizers.LazyAdam`, any other Keras's Adam.
    """
    hub = any(isinstance(layer, HubTextEmbedding) for layer in model.layers)
    adam = LazyAdam if hub else keras.optimizers.Adam
    with model.distribute_strategy.scope():
        model.compile(optimizer=adam(learning_rate=learning_rate),
                      loss="binary_crossentropy", metrics=["accuracy"])
    return model
