"""The case study's two stages (notebooks 01 and 02): their weights files, parameter counts, and
notebook 01's frozen stage made ready for notebook 02."""

from __future__ import annotations

from pathlib import Path

import keras
import numpy as np
import tensorflow as tf

from seqlab import config
from seqlab.results import STAGES, read_imdb_results
from seqlab.sizes import check_size
from seqlab.training.callbacks import standard_callbacks
from seqlab.training.compiling import compile_sentiment_classifier
from seqlab.training.resume import TrainingRun


def stage_weights_path(stage: str, size: str) -> Path:
    """``models/imdb_{stage}_{size}.weights.h5``: a stage's best weights at one size.

    Example:
        >>> stage_weights_path("frozen", "fast").name
        'imdb_frozen_fast.weights.h5'
    """
    if stage not in STAGES:
        raise ValueError(f"stage must be one of {STAGES}; got {stage!r}")
    check_size(size)
    return config.MODELS_DIR / f"imdb_{stage}_{size}.weights.h5"


def count_parameters(model: keras.Model) -> dict[str, int]:
    """``{"trainable": ..., "non_trainable": ..., "total": ...}`` as ``summary()`` counts them."""
    trainable = sum(int(np.prod(w.shape)) for w in model.trainable_weights)
    frozen = sum(int(np.prod(w.shape)) for w in model.non_trainable_weights)
    return {"trainable": trainable, "non_trainable": frozen, "total": trainable + frozen}


def load_frozen_stage(model: keras.Model, handle: str, size: str, train: tf.data.Dataset,
                      valid: tf.data.Dataset, *, epochs: int,
                      learning_rate: float = 1e-3) -> tuple[dict, float]:
    """Notebook 01's frozen stage in ``model``, compiled at ``learning_rate``: its weights and
    record when notebook 01 left them for this ``size`` and ``handle``, else trained here on
    ``train`` and ``valid`` (at most ``epochs`` epochs, early stopping, resumable).

    Returns:
        ``(history, seconds_per_epoch)``: the frozen stage's ``History.history`` and its median
        seconds per epoch.
    """
    weights = stage_weights_path("frozen", size)
    results = read_imdb_results()
    recorded = results.get("frozen", {}) if results.get("size") == size else {}
    if weights.is_file() and recorded.get("handle") == handle and "history" in recorded:
        model.load_weights(weights)  # before compiling: the model's weights, not an optimizer's
        compile_sentiment_classifier(model, learning_rate)
        print(f"Loaded notebook 01's frozen weights from {weights.name}.")
        return recorded["history"], recorded["seconds_per_epoch"]
    compile_sentiment_classifier(model, learning_rate)
    print("Notebook 01's frozen weights are not in models/ for this size: training the frozen "
          f"stage here first ({epochs} epochs at most, the code of notebook 01).")
    run = TrainingRun(f"02-frozen-{size}", model)  # resumes a lost session; loads a finished one
    if not run.finished:  # early stopping leaves the best epoch's weights in the model
        model.fit(train, validation_data=valid, epochs=epochs, verbose=0,
                  callbacks=[*standard_callbacks(weights, monitor="val_loss"), *run.callbacks])
    return run.history.history, run.seconds_per_epoch()
