"""The callback of a training run: Keras's ``BackupAndRestore`` that also keeps the run's
history and marks it finished (:class:`ResumableBackup`, used by
:class:`seqlab.training.TrainingRun`)."""

from __future__ import annotations

import datetime
import shutil
import time
import weakref
from pathlib import Path

import keras

from seqlab.training.run_files import (
    BACKUP_FOLDER,
    FINAL_WEIGHTS_FILE,
    FINISHED_FILE,
    HISTORY_FILE,
    first_line,
    read_records,
    write_json,
)

#: Models whose fit resumed from a backup at a later epoch (see _start_next_fit_at_epoch_zero).
_RESUMED_MODELS: weakref.WeakSet = weakref.WeakSet()


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
        super().__init__(backup_dir=str(self.folder / BACKUP_FOLDER), save_freq="epoch",
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
                print(f"{self.name}: the backup cannot be read ({first_line(error)}); training "
                      "from the first epoch")
                shutil.rmtree(self.backup_dir, ignore_errors=True)
            except ValueError as error:  # written by another model (changed since)
                self.model.set_weights(weights)
                print(f"{self.name}: the backup does not fit this model, which must have changed "
                      f"({first_line(error)}); training from the first epoch")
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

