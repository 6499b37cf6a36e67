"""The callback of a training run (:class:`ResumableBackup`, used by
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

    Each finished epoch's logs, wall seconds and training steps go to ``history.json``, cut
    back to the restored epoch when a fit resumes; when the fit completes, the final weights
    and ``finished.json`` are written before Keras deletes the backup. An interrupted epoch
    restarts from its first batch.

    Pass it *last* in ``fit(callbacks=...)``, so that ``EarlyStopping(restore_best_weights=True)``
    has put the best weights back before the final weights are saved.

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
        """Make the model's next ``fit`` start at epoch 0, and leave a backup of that state.

        Keras (3.10 to 3.13) starts every later ``fit`` of a model at the epoch a backup
        restored; restoring a backup with no finished epoch is the public way to reset it.
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

