"""The files of a training run's folder (:class:`seqlab.training.TrainingRun`)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import keras

HISTORY_FILE = "history.json"         # one record per finished epoch, kept across resumes
FINAL_WEIGHTS_FILE = "final.weights.h5"
FINISHED_FILE = "finished.json"       # written last: the run's fit completed
SETTINGS_FILE = "settings.json"       # what the run trains: a backup only fits the same
BACKUP_FOLDER = "backup"              # BackupAndRestore's own; Keras deletes it after fit


def write_json(path: Path, value) -> None:
    """Write ``value`` to ``path`` whole or not at all (a kill mid-write leaves the old file)."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(value, indent=1))
    os.replace(partial, path)


def first_line(error: Exception) -> str:
    """The first line of an error's message (its type's name if it has none)."""
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


def _without_names(value):
    """A Keras config without ``name``s (automatic names such as ``dense_3`` vary by session)."""
    if isinstance(value, dict):
        return {key: _without_names(item) for key, item in value.items() if key != "name"}
    if isinstance(value, (list, tuple)):
        return [_without_names(item) for item in value]
    return value


def training_settings(model: keras.Model) -> dict:
    """What a backup of ``model`` only fits: architecture, weights' shapes, optimizer settings
    and number of replicas."""
    try:
        architecture = _without_names(model.get_config())
    except NotImplementedError:
        architecture = None
    optimizer = model.optimizer
    return {
        "model": type(model).__name__, "architecture": architecture,
        "weights": [[list(weight.shape), str(weight.dtype)] for weight in model.weights],
        "optimizer": None if optimizer is None else [
            type(optimizer).__name__, _without_names(optimizer.get_config())],
        "replicas": model.distribute_strategy.num_replicas_in_sync,
    }


def settings_fingerprint(settings: dict) -> str:
    """A short hash of :func:`training_settings`, recorded in the run's ``settings.json``."""
    text = json.dumps(settings, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def as_history(records: list[dict]) -> keras.callbacks.History:
    """A ``keras.callbacks.History`` of the epoch records, as ``fit`` returns one."""
    history = keras.callbacks.History()
    history.epoch = [record["epoch"] for record in records]
    history.history = {}
    for record in records:
        for name, value in record["logs"].items():
            history.history.setdefault(name, []).append(value)
    return history


def read_records(folder: Path) -> list[dict]:
    """The run's epoch records: ``{"epoch", "logs", "seconds", "steps"}`` per finished epoch."""
    path = folder / HISTORY_FILE
    return json.loads(path.read_text()) if path.is_file() else []
