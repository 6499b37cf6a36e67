"""Training that survives a disconnect (:class:`TrainingRun`, :class:`ResumableBackup`); see
docs/resuming.md."""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import shutil
import statistics
import time
import weakref
from pathlib import Path

import keras

from seqlab import config

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
    """What a backup of ``model`` only fits: architecture, weights, optimizer and replicas."""
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


def read_records(folder: Path) -> list[dict]:
    """The run's epoch records: ``{"epoch", "logs", "seconds", "steps"}`` per finished epoch."""
    path = folder / HISTORY_FILE
    return json.loads(path.read_text()) if path.is_file() else []


GOOGLE_DRIVE = Path("/content/drive/MyDrive")


def backup_root() -> Path:
    """``$SEQLAB_BACKUP_DIR``, else ``seqlab/backups`` on a mounted Google Drive, else
    ``models/backups``."""
    override = os.environ.get("SEQLAB_BACKUP_DIR")
    if override:
        return Path(override).expanduser()
    if GOOGLE_DRIVE.is_dir():
        return GOOGLE_DRIVE / "seqlab" / "backups"
    return config.MODELS_DIR / "backups"


#: Models whose fit resumed from a backup at a later epoch (see _start_next_fit_at_epoch_zero).
_RESUMED_MODELS: weakref.WeakSet = weakref.WeakSet()


class ResumableBackup(keras.callbacks.BackupAndRestore):
    """Keras's ``BackupAndRestore`` that also keeps the run's history and marks it finished.

    Each epoch's logs, seconds and steps go to ``history.json``; at the end of the fit, the
    final weights and ``finished.json``. Pass it *last* in ``fit(callbacks=...)``, after
    ``EarlyStopping`` restores the best weights.

    Args:
        folder: the run's folder; the backup itself goes to its ``backup`` subfolder.
        name: the run's name, for the printed lines.
    """

    def __init__(self, folder: str | Path, name: str | None = None):
        self.folder = Path(folder)
        self.name = name or self.folder.name
        # double_checkpoint: fall back to the previous epoch's backup if the latest is unreadable.
        super().__init__(backup_dir=str(self.folder / BACKUP_FOLDER), save_freq="epoch",
                         double_checkpoint=True)
        self._first_epoch_of_fit = True
        self._backup_time: str | None = None
        self._epoch_start = 0.0
        self._epoch_steps = 0

    def _start_next_fit_at_epoch_zero(self):
        # Keras starts every later fit at the epoch a backup restored: restore epoch 0.
        if self.model.optimizer is not None and not self.model.optimizer.built:
            self.model.optimizer.build(self.model.trainable_variables)
        super().on_epoch_end(-1)      # a backup of the current weights, 0 epochs finished
        super().on_train_begin()      # restored: the next fit starts at epoch 0
        _RESUMED_MODELS.discard(self.model)

    def on_train_begin(self, logs=None):
        backup = Path(self.backup_dir)
        saved = list(backup.iterdir()) if backup.is_dir() else []
        self._first_epoch_of_fit = True
        if saved:
            newest = max(file.stat().st_mtime for file in saved)
            self._backup_time = datetime.datetime.fromtimestamp(
                newest, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
            try:
                super().on_train_begin(logs)  # weights, optimizer state and epoch from the backup
            except OSError as error:  # both copies cut off mid-write
                print(f"{self.name}: the backup cannot be read ({first_line(error)}); training "
                      "from the first epoch")
                shutil.rmtree(self.backup_dir, ignore_errors=True)
        elif self.model in _RESUMED_MODELS:  # an earlier fit of this model resumed
            self._start_next_fit_at_epoch_zero()

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch_start, self._epoch_steps = time.perf_counter(), 0
        if not self._first_epoch_of_fit:
            return
        self._first_epoch_of_fit = False
        # The record may hold an epoch whose backup was never written (a kill between the
        # two writes): keep only the epochs before the one fit starts with.
        records = [record for record in read_records(self.folder) if record["epoch"] < epoch]
        self.folder.mkdir(parents=True, exist_ok=True)
        write_json(self.folder / HISTORY_FILE, records)
        if epoch > 0:
            _RESUMED_MODELS.add(self.model)
            total = self.params.get("epochs", "?") if self.params else "?"
            print(f"{self.name}: resuming from epoch {epoch + 1} of {total}, backed up at "
                  f"{self._backup_time} (epochs 1-{epoch} are in the backup)")

    def on_train_batch_end(self, batch, logs=None):
        self._epoch_steps += 1
        super().on_train_batch_end(batch, logs)

    def on_epoch_end(self, epoch, logs=None):
        record = {"epoch": int(epoch),
                  "logs": {name: float(value) for name, value in (logs or {}).items()},
                  "seconds": time.perf_counter() - self._epoch_start, "steps": self._epoch_steps}
        records = [r for r in read_records(self.folder) if r["epoch"] < epoch] + [record]
        write_json(self.folder / HISTORY_FILE, records)
        super().on_epoch_end(epoch, logs)

    def on_train_end(self, logs=None):
        self.model.save_weights(str(self.folder / FINAL_WEIGHTS_FILE))
        write_json(self.folder / FINISHED_FILE, {
            "name": self.name, "epochs": len(read_records(self.folder)), "keras": keras.version(),
            "finished": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        })
        super().on_train_end(logs)  # deletes the backup
        if self.model in _RESUMED_MODELS:
            self._start_next_fit_at_epoch_zero()
            shutil.rmtree(self.backup_dir, ignore_errors=True)


class TrainingRun:
    """One named training run that survives a disconnect: resumes, or loads when finished.

    If this run finished earlier, it loads the final weights and ``finished`` is True;
    otherwise ``callbacks`` holds a :class:`ResumableBackup` for ``fit``. A run whose settings
    changed (model, optimizer, replicas) starts afresh.

    Args:
        name: the run's folder name, e.g. ``f"04-{variant}-{SIZE}"``.
        model: the model ``fit`` will train, built (its weights exist) and compiled.
        retrain: delete this run's backups and final weights and train from scratch.
        root: the folder of all runs; default :func:`backup_root` (Google Drive if mounted).

    Attributes:
        folder: this run's folder (``root / name``).
        finished: True if an earlier ``fit`` of this run completed (weights now loaded).
        callbacks: ``[ResumableBackup(...)]``, or ``[]`` when finished.

    Raises:
        ValueError: if ``name`` is empty or holds a path separator, or ``model`` is not a
            ``keras.Model`` or not built.

    Example:
        >>> import keras, numpy as np, tempfile
        >>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
        >>> model.compile("sgd", "mse")
        >>> root = tempfile.mkdtemp()
        >>> run = TrainingRun("demo", model, root=root)  # doctest: +ELLIPSIS
        demo: backups in .../demo (a local folder)
        >>> if not run.finished:
        ...     _ = model.fit(np.zeros((4, 2)), np.zeros(4), epochs=2, verbose=0,
        ...                   callbacks=run.callbacks)
        >>> run.history.epoch
        [0, 1]
        >>> TrainingRun("demo", model, root=root).finished  # doctest: +ELLIPSIS
        demo: backups in .../demo (a local folder)
        demo: finished earlier (2 epochs): final weights loaded, not trained again; ...
        True
    """

    def __init__(self, name: str, model: keras.Model, *, retrain: bool = False,
                 root: str | Path | None = None):
        if not isinstance(name, str) or not name.strip() or name in (".", "..") or any(
                separator in name for separator in ("/", "\\", os.sep)):
            raise ValueError("TrainingRun needs a run name that is a folder name, such as "
                             f"'04-luong-dot-full' (no '/' or '\\\\'); got {name!r}.")
        if not isinstance(model, keras.Model):
            raise ValueError(f"TrainingRun needs a keras.Model; got {type(model).__name__}.")
        if not model.built:
            raise ValueError(f"TrainingRun needs a built model, whose weights exist to be backed "
                             f"up; {model.name!r} is not built yet: call it on a batch (or give "
                             "it a keras.Input) first.")
        self.name = name
        self.model = model
        root = Path(root) if root is not None else backup_root()
        self.folder = root / name
        where = "Google Drive" if GOOGLE_DRIVE in self.folder.parents else "a local folder"
        print(f"{name}: backups in {self.folder} ({where})")
        if retrain and self.folder.exists():
            shutil.rmtree(self.folder)
        # A backup of other settings would resume or load the wrong thing: start afresh.
        settings = training_settings(model)
        text = json.dumps(settings, sort_keys=True, default=str)
        fingerprint = hashlib.sha256(text.encode()).hexdigest()[:16]
        settings_file = self.folder / SETTINGS_FILE
        recorded = (json.loads(settings_file.read_text()).get("fingerprint")
                    if settings_file.is_file() else None)
        if recorded != fingerprint:
            if self.folder.exists():
                print(f"{name}: the model or its optimizer changed since this run was backed "
                      "up: training it from the start")
                shutil.rmtree(self.folder)
            self.folder.mkdir(parents=True)
            write_json(settings_file, {"fingerprint": fingerprint, "settings": settings})
        final = self.folder / FINAL_WEIGHTS_FILE
        self.finished = (self.folder / FINISHED_FILE).is_file() and final.is_file()
        if self.finished:
            optimizer = model.optimizer
            if optimizer is not None and not optimizer.built:
                # The final weights hold the optimizer's state too (Keras saves it with them).
                optimizer.build(model.trainable_variables)
            model.load_weights(str(final))  # the same settings: the same weights' shapes
            print(f"{name}: finished earlier ({len(read_records(self.folder))} epochs): final "
                  "weights loaded, not trained again; to train again pass retrain=True or "
                  f"delete {self.folder}")
            self.callbacks: list[keras.callbacks.Callback] = []
        else:
            self.callbacks = [ResumableBackup(self.folder, name)]

    @property
    def history(self) -> keras.callbacks.History:
        """Every epoch trained so far in this run, across resumes, as ``fit`` returns it."""
        records = read_records(self.folder)
        history = keras.callbacks.History()
        history.epoch = [record["epoch"] for record in records]
        history.history = {}
        for record in records:
            for name, value in record["logs"].items():
                history.history.setdefault(name, []).append(value)
        return history

    @property
    def epoch_seconds(self) -> list[float]:
        """Wall seconds of each epoch of the run (validation included), across resumes."""
        return [record["seconds"] for record in read_records(self.folder)]

    @property
    def steps(self) -> int:
        """Training steps (batches) of the run's finished epochs, across resumes."""
        return sum(record["steps"] for record in read_records(self.folder))

    def seconds_per_epoch(self) -> float:
        """Median epoch time, leaving out the first (tracing) epoch when there are others."""
        seconds = self.epoch_seconds
        if not seconds:
            raise ValueError(f"run {self.name!r} has no finished epoch yet: fit it first.")
        return statistics.median(seconds[1:] or seconds)
