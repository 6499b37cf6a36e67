"""Training that survives a disconnect: Keras's ``BackupAndRestore`` behind one small helper.

A notebook creates a :class:`TrainingRun` right before its ``fit`` and passes the run's
callbacks to it::

    run = TrainingRun("01-frozen-" + SIZE, model)
    if not run.finished:
        model.fit(train, validation_data=valid, epochs=EPOCHS,
                  callbacks=[*callbacks, *run.callbacks])   # the run's callbacks last
    history = run.history

If the kernel dies (a lost Colab session, a restart, the stop button), running the notebook
again continues the ``fit`` from the last finished epoch; once a ``fit`` has completed, running
it again loads the final weights instead of training again.

Backups go to Google Drive when it is mounted on Colab (``/content/drive/MyDrive``, then
``seqlab/backups/<run name>``), else to ``models/backups/<run name>`` (``SEQLAB_HOME``'s
``models/``); ``SEQLAB_BACKUP_DIR`` names another folder. See docs/resuming.md.
"""

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

#: Where Colab mounts Google Drive (``drive.mount("/content/drive")``).
GOOGLE_DRIVE = Path("/content/drive/MyDrive")

_HISTORY_FILE = "history.json"          # one record per finished epoch, kept across resumes
_FINAL_WEIGHTS_FILE = "final.weights.h5"
_FINISHED_FILE = "finished.json"        # written last: the run's fit completed
_SETTINGS_FILE = "settings.json"        # what the run trains: a backup only fits the same
_BACKUP_FOLDER = "backup"               # BackupAndRestore's own; Keras deletes it after fit

#: Models whose fit resumed from a backup at a later epoch (see _start_next_fit_at_epoch_zero).
_RESUMED_MODELS: weakref.WeakSet = weakref.WeakSet()


def backup_root() -> Path:
    """The folder that holds every run's backups (one subfolder per run).

    In this order: ``$SEQLAB_BACKUP_DIR`` if set; ``seqlab/backups`` on Google Drive when Drive
    is mounted on Colab (``/content/drive/MyDrive`` exists), so the backups outlive the Colab
    runtime; else ``models/backups`` of the checkout (``$SEQLAB_HOME/models/backups`` when
    ``SEQLAB_HOME`` is set), which a lost Colab runtime loses with it.
    """
    override = os.environ.get("SEQLAB_BACKUP_DIR")
    if override:
        return Path(override).expanduser()
    if GOOGLE_DRIVE.is_dir():
        return GOOGLE_DRIVE / "seqlab" / "backups"
    return config.MODELS_DIR / "backups"


def _write_json(path: Path, value) -> None:
    """Write ``value`` to ``path`` whole or not at all (a kill mid-write leaves the old file)."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(value, indent=1))
    os.replace(partial, path)


def _first_line(error: Exception) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


def _without_names(value):
    """A Keras config with every ``name`` left out (Keras numbers automatic names, ``dense_3``,
    by how many layers the session has built: the same model gets other names in a new kernel)."""
    if isinstance(value, dict):
        return {key: _without_names(item) for key, item in value.items() if key != "name"}
    if isinstance(value, (list, tuple)):
        return [_without_names(item) for item in value]
    return value


def training_settings(model: keras.Model) -> dict:
    """What a backup of ``model`` only fits: its architecture (config, or its weights' shapes
    where the model has no config), its optimizer's class and settings (learning rate and its
    schedule included), and the number of replicas it trains on."""
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


def _fingerprint(settings: dict) -> str:
    text = json.dumps(settings, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _as_history(records: list[dict]) -> keras.callbacks.History:
    """A ``keras.callbacks.History`` of the epoch records, as ``fit`` returns one: ``.epoch``
    and ``.history[name]``."""
    history = keras.callbacks.History()
    history.epoch = [record["epoch"] for record in records]
    history.history = {}
    for record in records:
        for name, value in record["logs"].items():
            history.history.setdefault(name, []).append(value)
    return history


def _read_records(folder: Path) -> list[dict]:
    """The run's epoch records: ``{"epoch", "logs", "seconds", "steps"}`` per finished epoch."""
    path = folder / _HISTORY_FILE
    return json.loads(path.read_text()) if path.is_file() else []


class ResumableBackup(keras.callbacks.BackupAndRestore):
    """Keras's ``BackupAndRestore`` that also keeps the run's history and marks it finished.

    What Keras's ``BackupAndRestore`` does (Keras 3, ``save_freq="epoch"``): at the end of every
    epoch it saves the model's weights *and the optimizer's state* (Adam's moments, its step
    count, so a learning-rate schedule continues where it was) and the number of finished
    epochs to ``backup_dir``; at the start of the next ``fit`` it loads them, and ``fit``
    continues with the next epoch. When a ``fit`` completes (all epochs, or stopped early by a
    callback) it deletes ``backup_dir``.

    With ``double_checkpoint=True`` it keeps the previous epoch's backup as well (twice the
    disk space) and falls back to it when the latest cannot be read, e.g. after a kill in the
    middle of writing it; if neither can be read, this callback says so and trains from the
    first epoch.

    What it does not restore: the position inside an epoch (an interrupted epoch starts again
    from its first batch, so at most one epoch of training is lost: minutes in every notebook
    of this course), the order in which a shuffled dataset deals its batches (the resumed
    process shuffles its first epoch as a fresh one would), random draws such as dropout's,
    and other callbacks' state (``EarlyStopping`` and ``ReduceLROnPlateau`` count their
    patience, ``TimeBudget`` its seconds, from the resumed epoch). So a resumed run ends near,
    not exactly at, the uninterrupted run's numbers, as two runs with different shuffles do.
    Keras's integer ``save_freq`` (a backup every n batches) is not used: Keras 3 records only
    the epoch, restarts that epoch from its first batch and would train those batches twice.

    What this subclass adds: each finished epoch's logs, wall seconds (validation included)
    and training steps go to ``history.json`` (before the epoch's backup is written, and cut
    back to the restored epoch when a fit resumes), so the run's record covers every epoch
    across resumes; one line is printed when a fit resumes; and when the fit completes, the
    final weights, the history and a ``finished.json`` marker are written next to the backup
    before Keras deletes it.

    Pass it *last* in ``fit(callbacks=...)``: callbacks run in list order, and
    ``EarlyStopping(restore_best_weights=True)`` puts the best epoch's weights back when
    training ends, which must happen before this callback saves the final weights.

    Args:
        folder: the run's folder; the backup itself goes to its ``backup`` subfolder.
        name: the run's name, for the printed lines.
    """

    def __init__(self, folder: str | Path, name: str | None = None):
        self.folder = Path(folder)
        self.name = name or self.folder.name
        # double_checkpoint: Keras keeps the previous epoch's backup too, and falls back to it
        # when a kill in the middle of writing the latest one left that unreadable.
        super().__init__(backup_dir=str(self.folder / _BACKUP_FOLDER), save_freq="epoch",
                         double_checkpoint=True)
        self._first_epoch_of_fit = True
        self._backup_time: str | None = None
        self._epoch_start = 0.0
        self._epoch_steps = 0

    def _start_next_fit_at_epoch_zero(self):
        """Make the model's next ``fit`` start at epoch 0, and leave a backup of that state.

        Keras (3.10 to 3.13) keeps the epoch a ``BackupAndRestore`` restored on the model and
        starts every later ``fit`` of that model there, with or without a backup (a plain
        ``fit`` too). Restoring a backup in which no epoch has finished is the public way to set
        it back. The optimizer is built first, as ``BackupAndRestore`` does before it loads, so
        the backup holds its state and loads back without warnings.
        """
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
            weights = self.model.get_weights()
            try:
                super().on_train_begin(logs)  # weights, optimizer state and epoch from the backup
            except OSError as error:  # both copies cut off mid-write
                print(f"{self.name}: the backup cannot be read ({_first_line(error)}); training "
                      "from the first epoch")
                shutil.rmtree(self.backup_dir, ignore_errors=True)
            except ValueError as error:  # written by another model (changed since)
                self.model.set_weights(weights)
                print(f"{self.name}: the backup does not fit this model, which must have changed "
                      f"({_first_line(error)}); training from the first epoch")
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
        records = [record for record in _read_records(self.folder) if record["epoch"] < epoch]
        self.folder.mkdir(parents=True, exist_ok=True)
        _write_json(self.folder / _HISTORY_FILE, records)
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
        records = [r for r in _read_records(self.folder) if r["epoch"] < epoch] + [record]
        _write_json(self.folder / _HISTORY_FILE, records)
        super().on_epoch_end(epoch, logs)

    def on_train_end(self, logs=None):
        self.model.save_weights(str(self.folder / _FINAL_WEIGHTS_FILE))
        _write_json(self.folder / _FINISHED_FILE, {
            "name": self.name, "epochs": len(_read_records(self.folder)), "keras": keras.version(),
            "finished": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        })
        super().on_train_end(logs)  # deletes the backup
        if self.model in _RESUMED_MODELS:
            self._start_next_fit_at_epoch_zero()
            shutil.rmtree(self.backup_dir, ignore_errors=True)


class TrainingRun:
    """One named training run that survives a disconnect: resumes, or loads when finished.

    Create it in the cell of the ``fit``, right before it. It prints one line saying where its
    backups go. If this run finished earlier (its folder holds ``finished.json`` and the final
    weights), it loads the final weights into ``model``, prints how to train again, and
    ``finished`` is True: the notebook skips ``fit``, so a finished run is never trained again
    by accident. Otherwise ``callbacks`` holds a :class:`ResumableBackup` for ``fit``: the fit
    resumes from the last finished epoch if an earlier one was interrupted.

    To train again from scratch: pass ``retrain=True`` (the run's folder is deleted first), or
    delete the folder printed by the first line.

    ``history`` holds every epoch of the run, across resumes, as ``fit``'s return value does:
    ``run.history.history["val_loss"]``, ``run.history.epoch``.

    Name each run after what it trains and its size (``f"04-{variant}-{SIZE}"``), so that runs
    of another model or size never share a backup: a backup only fits the model and compile
    settings that wrote it (Keras's ``BackupAndRestore`` documentation says so too). A resumed
    run restarts a ``TimeBudget`` and the patience of ``EarlyStopping``: see
    :class:`ResumableBackup` for what a resume restores and what it does not.

    Args:
        name: the run's folder name: letters, digits, ``-``, ``_``, ``.``; no path separators.
        model: the model ``fit`` will train, built (its weights exist) and compiled.
        retrain: delete this run's backups and final weights and train from scratch.
        root: the folder of all runs; default :func:`backup_root` (Google Drive if mounted).

    Attributes:
        folder: this run's folder (``root / name``).
        finished: True if an earlier ``fit`` of this run completed (weights now loaded).
        callbacks: ``[ResumableBackup(...)]``, or ``[]`` when finished; put them last in
            ``fit(callbacks=...)``.
        history: every epoch's logs, across resumes (a ``keras.callbacks.History``).
        epoch_seconds, steps: each epoch's wall seconds and the run's training steps, across
            resumes; :meth:`seconds_per_epoch` as ``EpochTimer`` reports it. A finished run
            keeps them, so a notebook can print its times without training again.

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
        on_drive = GOOGLE_DRIVE in self.folder.parents
        print(f"{name}: backups in {self.folder} "
              f"({'Google Drive' if on_drive else 'a local folder'})")
        if retrain and self.folder.exists():
            shutil.rmtree(self.folder)
        # A backup or a finished run of other settings (a changed learning rate, layer size,
        # optimizer or number of replicas) would resume or load the wrong thing: start afresh.
        settings = training_settings(model)
        settings_file = self.folder / _SETTINGS_FILE
        recorded = (json.loads(settings_file.read_text()).get("fingerprint")
                    if settings_file.is_file() else None)
        if recorded != _fingerprint(settings):
            if self.folder.exists():
                print(f"{name}: the model or its optimizer changed since this run was backed "
                      "up: training it from the start")
            self._start_afresh(settings)
        final = self.folder / _FINAL_WEIGHTS_FILE
        self.finished = (self.folder / _FINISHED_FILE).is_file() and final.is_file()
        if self.finished:
            optimizer = model.optimizer
            if optimizer is not None and not optimizer.built:
                # The final weights hold the optimizer's state too (Keras saves it with them).
                optimizer.build(model.trainable_variables)
            weights = model.get_weights()
            try:
                model.load_weights(str(final))
            except ValueError as error:  # written by another model (changed since)
                model.set_weights(weights)
                print(f"{name}: the finished run's weights do not fit this model, which must "
                      f"have changed ({_first_line(error)}); training it again")
                self._start_afresh(settings)
                self.finished = False
        if self.finished:
            print(f"{name}: finished earlier ({len(_read_records(self.folder))} epochs): final "
                  "weights loaded, not trained again; to train again pass retrain=True or "
                  f"delete {self.folder}")
            self.callbacks: list[keras.callbacks.Callback] = []
        else:
            self.callbacks = [ResumableBackup(self.folder, name)]

    def _start_afresh(self, settings: dict) -> None:
        """An empty run folder that records ``settings`` (what a backup of it will fit)."""
        shutil.rmtree(self.folder, ignore_errors=True)
        self.folder.mkdir(parents=True)
        _write_json(self.folder / _SETTINGS_FILE,
                    {"fingerprint": _fingerprint(settings), "settings": settings})

    @property
    def history(self) -> keras.callbacks.History:
        """Every epoch trained so far in this run, across resumes (``.history``, ``.epoch``)."""
        return _as_history(_read_records(self.folder))

    @property
    def epoch_seconds(self) -> list[float]:
        """Wall seconds of each epoch of the run (validation included), across resumes; an
        epoch cut short by a callback (``TimeBudget``) counts what it ran."""
        return [record["seconds"] for record in _read_records(self.folder)]

    @property
    def steps(self) -> int:
        """Training steps (batches) of the run's finished epochs, across resumes."""
        return sum(record["steps"] for record in _read_records(self.folder))

    def seconds_per_epoch(self) -> float:
        """Median epoch time, as :class:`seqlab.training.EpochTimer` reports it: the first
        epoch also traces the training step, so it is left out when there are others.

        Raises:
            ValueError: if no epoch has finished yet.
        """
        seconds = self.epoch_seconds
        if not seconds:
            raise ValueError(f"run {self.name!r} has no finished epoch yet: fit it first.")
        return statistics.median(seconds[1:] or seconds)
