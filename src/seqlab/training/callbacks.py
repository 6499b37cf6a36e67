"""The case study's callbacks in one call, and a wall-clock (or step) budget for ``fit``."""

from __future__ import annotations

import time
from pathlib import Path

import keras


def standard_callbacks(checkpoint_path: str | Path, monitor: str = "val_accuracy",
                       patience: int = 3, lr_patience: int | None = None,
                       min_lr: float = 1e-6) -> list[keras.callbacks.Callback]:
    """Keras's ``[ModelCheckpoint, EarlyStopping, ReduceLROnPlateau]`` as the case study uses them.

    The best weights saved to ``checkpoint_path`` (``*.weights.h5``), a stop after ``patience``
    epochs without improvement of ``monitor`` (best weights restored), and the rate halved after
    ``lr_patience`` such epochs (default: half of ``patience``, at least 1).

    Raises:
        ValueError: if ``checkpoint_path`` does not end in ``.weights.h5`` or a patience is
            not positive.
    """
    checkpoint_path = Path(checkpoint_path)
    if not checkpoint_path.name.endswith(".weights.h5"):
        raise ValueError("checkpoint_path must end in '.weights.h5' (Keras 3 saves weights only "
                         f"to that format); got {checkpoint_path.name!r}, e.g. use "
                         f"{checkpoint_path.name.split('.')[0] + '.weights.h5'!r}.")
    lr_patience = max(1, patience // 2) if lr_patience is None else lr_patience
    if patience < 1 or lr_patience < 1:
        raise ValueError("patience and lr_patience must be at least 1; got "
                         f"{patience}, {lr_patience}.")
    checkpoint_path.parent.mkdir(parents=True, exist_ok=True)
    return [
        keras.callbacks.ModelCheckpoint(str(checkpoint_path), monitor=monitor,
                                        save_best_only=True, save_weights_only=True),
        keras.callbacks.EarlyStopping(monitor=monitor, patience=patience,
                                      restore_best_weights=True),
        keras.callbacks.ReduceLROnPlateau(monitor=monitor, factor=0.5, patience=lr_patience,
                                          min_lr=min_lr),
    ]


class TimeBudget(keras.callbacks.Callback):
    """Stops training after the batch that ends ``seconds`` after ``fit`` began, or after
    ``steps`` training steps; that epoch is validated.

    Args:
        seconds: the budget, > 0; ``None``: no budget, only record ``elapsed`` and ``steps``.
        steps: a step budget (> 0) as well; ``None``: none.
        clock: a function returning seconds (tests pass a fake one).

    Attributes (after ``fit``):
        steps: training steps run.
        elapsed: wall seconds from the start of ``fit`` to the end of each epoch.
        stopped: True if the budget ended training before the last epoch.

    Raises:
        ValueError: if ``seconds`` or ``steps`` is not a positive number.
    """

    def __init__(self, seconds: float | None = None, *, steps: int | None = None,
                 clock=time.perf_counter):
        super().__init__()
        if seconds is not None and (not isinstance(seconds, (int, float)) or not seconds > 0):
            raise ValueError("TimeBudget needs a positive number of seconds (or None: no "
                             f"budget); got {seconds!r}.")
        if steps is not None and (not isinstance(steps, int) or steps < 1):
            raise ValueError(f"TimeBudget needs a positive whole number of steps (or None); "
                             f"got {steps!r}.")
        self.seconds, self.max_steps = None if seconds is None else float(seconds), steps
        self.clock = clock
        self.steps, self.elapsed, self.stopped, self._start = 0, [], False, 0.0

    def on_train_begin(self, logs=None):
        self._start = self.clock()
        self.steps, self.elapsed, self.stopped = 0, [], False

    def on_train_batch_end(self, batch, logs=None):
        self.steps += 1
        if (self.seconds is not None and self.clock() - self._start >= self.seconds
                or self.max_steps is not None and self.steps >= self.max_steps):
            self.stopped = True
            self.model.stop_training = True

    def on_epoch_end(self, epoch, logs=None):
        self.elapsed.append(self.clock() - self._start)
