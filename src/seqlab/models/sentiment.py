"""The case study's sentiment classifier: a pretrained sentence embedding plus a small head.

    review (string) -> HubTextEmbedding (nnlm-en-dim50: 50 numbers) -> Dense(128, relu)
                    -> Dense(1, sigmoid) = P(positive)

Transfer learning in two stages, as on the slides: train the head with the embedding frozen
(Adam, learning rate 1e-3), then unfreeze it and fine-tune everything at one tenth of that
rate. Notebooks 01 and 02 record each stage's results in ``models/imdb_results.json`` (through
:mod:`seqlab.results`), which notebook 03 reads to compare with a recurrent model trained from
scratch.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from pathlib import Path

import keras
import numpy as np
import tensorflow as tf

from seqlab import config, results
from seqlab.layers.hub import NNLM_EN_DIM50, HubTextEmbedding

STAGES = ("frozen", "fine_tuned")


def build_sentiment_classifier(embedding: str | HubTextEmbedding = NNLM_EN_DIM50,
                               hidden_units: int = 128, *, trainable: bool = False,
                               strategy: tf.distribute.Strategy | None = None,
                               name: str = "sentiment_classifier") -> keras.Sequential:
    """The case-study model: sentence embedding -> Dense(hidden_units, relu) -> Dense(1, sigmoid).

    Args:
        embedding: a TF-Hub handle (URL, local SavedModel, or the stand-in handle
            ``seqlab.layers.STANDIN_HANDLE``) or a ready :class:`HubTextEmbedding`.
        hidden_units: units of the hidden ``Dense`` layer (128 in the case study).
        trainable: whether the embedding starts unfrozen (ignored for a ready layer).
        strategy: a ``tf.distribute`` strategy (e.g. ``MirroredStrategy`` for several GPUs);
            the model's variables are created in its scope. Pass a handle, not a ready layer,
            so the module is loaded inside that scope too.

    Input: a batch of reviews, strings of shape ``(batch,)``. Output: ``(batch, 1)``, the
    probability that each review is positive. Not compiled: see
    :func:`compile_sentiment_classifier`.
    """
    if hidden_units < 1:
        raise ValueError(f"hidden_units must be positive; got {hidden_units}")
    if strategy is not None and isinstance(embedding, keras.layers.Layer):
        raise ValueError("with a strategy, pass the handle rather than a ready layer, so the "
                         "module's variables are created inside strategy.scope().")
    with strategy.scope() if strategy is not None else contextlib.nullcontext():
        layer = (embedding if isinstance(embedding, keras.layers.Layer)
                 else HubTextEmbedding(embedding, trainable=trainable))
        return keras.Sequential([
            keras.Input(shape=(), dtype="string", name="review"),
            layer,
            keras.layers.Dense(hidden_units, activation="relu"),
            keras.layers.Dense(1, activation="sigmoid"),
        ], name=name)


def compile_sentiment_classifier(model: keras.Model, learning_rate: float = 1e-3) -> keras.Model:
    """Compile as the slides do: Adam at ``learning_rate``, binary cross-entropy, accuracy.

    Call it again after changing ``trainable``: Keras fixes the list of trained weights when
    it compiles. Compiles inside the model's ``tf.distribute`` strategy scope, so a model
    built with a strategy needs nothing more.
    """
    with model.distribute_strategy.scope():
        model.compile(optimizer=keras.optimizers.Adam(learning_rate=learning_rate),
                      loss="binary_crossentropy", metrics=["accuracy"])
    return model


def embedding_layer(model: keras.Model) -> HubTextEmbedding:
    """The model's :class:`HubTextEmbedding` (``model.layers[0]`` in the case study)."""
    for layer in model.layers:
        if isinstance(layer, HubTextEmbedding):
            return layer
    raise ValueError(f"{model.name} has no HubTextEmbedding layer")


def count_parameters(model: keras.Model) -> dict[str, int]:
    """``{"trainable": ..., "non_trainable": ..., "total": ...}`` as ``summary()`` counts them."""
    def size(weights):
        return sum(int(np.prod(w.shape)) for w in weights)

    trainable, frozen = size(model.trainable_weights), size(model.non_trainable_weights)
    return {"trainable": trainable, "non_trainable": frozen, "total": trainable + frozen}


def predict_sentiment(model: keras.Model, reviews: Sequence[str]) -> np.ndarray:
    """P(positive) for each review in a list of Python strings, as a 1-D NumPy array.

    ``model.predict`` does not take a list of strings directly (Keras's array adapters
    handle numbers only); a string tensor it does.
    """
    if isinstance(reviews, str):
        reviews = [reviews]
    return model.predict(tf.constant(list(reviews), tf.string), verbose=0).reshape(-1)


def stage_weights_path(stage: str, mode: str) -> Path:
    """``models/imdb_{stage}_{mode}.weights.h5``: a stage's best weights, kept apart per mode.

    FAST mode's stand-in and the real nnlm-en-dim50 have different weights, so a FAST
    checkpoint must never be loaded into a full-mode model, or the other way round.
    """
    if stage not in STAGES:
        raise ValueError(f"stage must be one of {STAGES}; got {stage!r}")
    return config.MODELS_DIR / f"imdb_{stage}_{mode.lower()}.weights.h5"


def read_imdb_results(path: str | Path | None = None) -> dict:
    """The results notebooks 01/02 recorded in ``models/imdb_results.json`` (``{}`` if none yet)."""
    return results.read_results("imdb", path)


def write_imdb_result(stage: str, *, test_accuracy: float, trainable_params: int,
                      seconds_per_epoch: float, mode: str, handle: str,
                      history: Mapping[str, Sequence[float]] | None = None,
                      path: str | Path | None = None) -> dict:
    """Record one stage (``"frozen"`` or ``"fine_tuned"``) in ``models/imdb_results.json``.

    Each stage holds ``test_accuracy``, ``trainable_params``, ``seconds_per_epoch`` and
    ``handle``, plus the training ``history`` (``History.history``) when given, so notebook 02
    can draw notebook 01's learning curves. Results of the other mode (FAST vs full) are
    dropped, so the file never mixes a FAST frozen model with a full fine-tuned one. Returns
    the whole file's content.
    """
    if stage not in STAGES:
        raise ValueError(f"stage must be one of {STAGES}; got {stage!r}")
    entry = {"test_accuracy": float(test_accuracy), "trainable_params": int(trainable_params),
             "seconds_per_epoch": float(seconds_per_epoch), "handle": handle}
    if history is not None:
        entry["history"] = {key: [float(v) for v in values]
                            for key, values in getattr(history, "history", history).items()}
    return results.record_result("imdb", (stage,), entry, mode=mode, path=path)


def build_recurrent_classifier(vocab_size: int, units: int = 64, *, embedding_dim: int = 32,
                               sequence_length: int | None = None, strategy=None,
                               name: str = "deep_bidirectional_lstm") -> keras.Sequential:
    """Notebook 03's classifier trained from scratch: token ids -> two bidirectional LSTMs -> P(positive).

    ``Embedding(mask_zero=True)`` -> ``Bidirectional(LSTM(units, return_sequences=True))`` ->
    ``Bidirectional(LSTM(units))`` -> ``Dense(1, sigmoid)``: a deep (2-layer) bidirectional
    RNN, with Keras's fused LSTM.

    Args:
        vocab_size: size of the id vocabulary (0 = padding).
        units: units per direction of each LSTM.
        embedding_dim: size of the learned word vectors.
        sequence_length: fixed input length (a TPU needs one), or None for any length.
        strategy: a ``tf.distribute`` strategy; the variables are created in its scope.
        name: the model's name.

    Returns:
        The model, not compiled: :func:`compile_sentiment_classifier` compiles it (in the
        model's strategy scope).
    """
    if vocab_size < 2 or units < 1:
        raise ValueError(f"vocab_size must be at least 2 and units positive; got {vocab_size}, {units}")
    with strategy.scope() if strategy is not None else contextlib.nullcontext():
        return keras.Sequential([
            keras.Input((sequence_length,), dtype="int64"),
            keras.layers.Embedding(vocab_size, embedding_dim, mask_zero=True),
            keras.layers.Bidirectional(keras.layers.LSTM(units, return_sequences=True)),
            keras.layers.Bidirectional(keras.layers.LSTM(units)),
            keras.layers.Dense(1, activation="sigmoid"),
        ], name=name)
