"""The case study's sentiment classifier: a pretrained sentence embedding plus a small head.

    review (string) -> HubTextEmbedding (nnlm-en-dim50: 50 numbers) -> Dense(128, relu)
                    -> Dense(1, sigmoid) = P(positive)

Transfer learning in two stages, as on the slides: train the head with the embedding frozen
(Adam, learning rate 1e-3), then unfreeze it and fine-tune everything at one tenth of that
rate. Notebooks 01 and 02 record each stage's results in ``models/imdb_results.json``
(:func:`seqlab.results.write_imdb_result`), which notebook 03 reads to compare with a recurrent
model trained from scratch. The optimizer and the compiling live in :mod:`seqlab.training`
(:func:`seqlab.training.compile_sentiment_classifier`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import keras
import numpy as np
import tensorflow as tf

from seqlab import config
from seqlab.distribute import strategy_scope, text_as_codepoints
from seqlab.layers.hub import NNLM_EN_DIM50, HubTextEmbedding
from seqlab.layers.text import TextFromCodepoints
from seqlab.results import STAGES
from seqlab.sizes import check_size


def build_sentiment_classifier(embedding: str | HubTextEmbedding = NNLM_EN_DIM50,
                               hidden_units: int = 128, *, trainable: bool = False,
                               strategy: tf.distribute.Strategy | None = None,
                               text_input: str = "auto",
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
        text_input: how reviews reach the model: ``"strings"``, a ``(batch,)`` string tensor;
            ``"codepoints"``, a ``(batch, characters)`` int32 matrix of Unicode code points
            (:func:`seqlab.distribute.text_as_codepoints`; a
            :class:`~seqlab.layers.text.TextFromCodepoints` layer turns it back into strings);
            ``"auto"`` (default), code points when ``strategy`` has several replicas, strings
            otherwise. Keras 3.10-3.15 cannot start ``fit`` on string batches under several
            replicas (it averages the first batch to learn its shapes), so there the data goes
            through ``text_as_codepoints``. Same weights, same numbers either way.

    Input: a batch of reviews, strings of shape ``(batch,)`` (or code points, see
    ``text_input``). Output: ``(batch, 1)``, the probability that each review is positive.
    Not compiled: see :func:`compile_sentiment_classifier`.
    """
    if hidden_units < 1:
        raise ValueError(f"hidden_units must be positive; got {hidden_units}")
    if strategy is not None and isinstance(embedding, keras.layers.Layer):
        raise ValueError("with a strategy, pass the handle rather than a ready layer, so the "
                         "module's variables are created inside strategy.scope().")
    if text_input not in ("auto", "strings", "codepoints"):
        raise ValueError(f"text_input must be 'auto', 'strings' or 'codepoints'; got {text_input!r}")
    if text_input == "auto":
        several = strategy is not None and strategy.num_replicas_in_sync > 1
        text_input = "codepoints" if several else "strings"
    with strategy_scope(strategy):
        layer = (embedding if isinstance(embedding, keras.layers.Layer)
                 else HubTextEmbedding(embedding, trainable=trainable))
        reads = ([keras.Input(shape=(), dtype="string", name="review")]
                 if text_input == "strings" else
                 [keras.Input(shape=(None,), dtype="int32", name="review_codepoints"),
                  TextFromCodepoints(name="text_from_codepoints")])
        return keras.Sequential([
            *reads,
            layer,
            keras.layers.Dense(hidden_units, activation="relu"),
            keras.layers.Dense(1, activation="sigmoid"),
        ], name=name)


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
    handle numbers only); a string tensor it does. A model that reads code points
    (``text_input="codepoints"``) gets them.
    """
    if isinstance(reviews, str):
        reviews = [reviews]
    texts = tf.constant(list(reviews), tf.string)
    if reads_codepoints(model):
        texts = text_as_codepoints(texts)
    return model.predict(texts, verbose=0).reshape(-1)


def reads_codepoints(model: keras.Model) -> bool:
    """Whether ``model`` takes reviews as code points (built with several replicas)."""
    return keras.backend.standardize_dtype(model.inputs[0].dtype) != "string"


def stage_weights_path(stage: str, size: str) -> Path:
    """``models/imdb_{stage}_{size}.weights.h5``: a stage's best weights, kept apart per size.

    FAST mode's stand-in and the real nnlm-en-dim50 have different weights, so a FAST-mode
    checkpoint must never be loaded into a full-size model, or the other way round; ``size`` is
    the notebook's ``SIZE`` (one of :data:`seqlab.sizes.SIZES`).
    """
    if stage not in STAGES:
        raise ValueError(f"stage must be one of {STAGES}; got {stage!r}")
    check_size(size)
    return config.MODELS_DIR / f"imdb_{stage}_{size}.weights.h5"


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
        The model, not compiled: :func:`seqlab.training.compile_sentiment_classifier` compiles it (in the
        model's strategy scope).
    """
    if vocab_size < 2 or units < 1:
        raise ValueError(f"vocab_size must be at least 2 and units positive; got {vocab_size}, {units}")
    with strategy_scope(strategy):
        return keras.Sequential([
            keras.Input((sequence_length,), dtype="int64"),
            keras.layers.Embedding(vocab_size, embedding_dim, mask_zero=True),
            keras.layers.Bidirectional(keras.layers.LSTM(units, return_sequences=True)),
            keras.layers.Bidirectional(keras.layers.LSTM(units)),
            keras.layers.Dense(1, activation="sigmoid"),
        ], name=name)
