"""Compiling the translators the same way everywhere, inside their ``tf.distribute`` strategy."""

from __future__ import annotations

import keras

from seqlab.training.losses import MaskedAccuracy, MaskedSparseCategoricalCrossentropy


def compile_translator(model: keras.Model, optimizer="adam", *, label_smoothing: float = 0.0,
                       jit_compile="auto", **compile_options) -> keras.Model:
    """Compile an RNN or Transformer translator: masked cross-entropy and masked token accuracy.

    Runs in the model's ``tf.distribute`` strategy scope (the one it was built in, see
    :func:`seqlab.models.build_rnn_translator`), where the metric's and the optimizer's
    variables must be created. An optimizer object keeps the strategy it was created under, so
    one that is not built yet is re-created from its configuration inside the scope (same
    class, learning rate or schedule, and settings): ``model.optimizer`` is then that copy.

    Args:
        model: the translator.
        optimizer: a Keras optimizer, its name, or its configuration.
        label_smoothing: passed to :class:`MaskedSparseCategoricalCrossentropy`.
        jit_compile: passed to ``compile`` (``"auto"``, True, False).
        **compile_options: other ``keras.Model.compile`` arguments (e.g. ``steps_per_execution``).

    Returns:
        ``model``, compiled (its ``history`` keys: ``loss``, ``masked_accuracy``).
    """
    with model.distribute_strategy.scope():
        if isinstance(optimizer, keras.optimizers.Optimizer) and not optimizer.built:
            optimizer = type(optimizer).from_config(optimizer.get_config())
        model.compile(optimizer=optimizer,
                      loss=MaskedSparseCategoricalCrossentropy(label_smoothing=label_smoothing),
                      metrics=[MaskedAccuracy()], jit_compile=jit_compile, **compile_options)
    return model
