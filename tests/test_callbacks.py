"""seqlab.training.standard_callbacks and TimeBudget."""

import keras
import numpy as np
import pytest

from seqlab.training import TimeBudget, standard_callbacks


def _data(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(64, 4)).astype("float32")
    return x, (x[:, 0] > 0).astype("float32")


def _model():
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, activation="sigmoid")])
    model.compile(keras.optimizers.Adam(0.05), loss="binary_crossentropy", metrics=["accuracy"])
    return model


def test_returns_checkpoint_early_stopping_and_reduce_lr_watching_the_same_metric(tmp_path):
    checkpoint, stopping, reduce_lr = standard_callbacks(tmp_path / "sub" / "best.weights.h5",
                                                         monitor="val_loss", patience=4)
    assert isinstance(checkpoint, keras.callbacks.ModelCheckpoint)
    assert checkpoint.save_best_only and checkpoint.save_weights_only
    assert isinstance(stopping, keras.callbacks.EarlyStopping) and stopping.restore_best_weights
    assert stopping.patience == 4
    assert isinstance(reduce_lr, keras.callbacks.ReduceLROnPlateau) and reduce_lr.patience == 2
    assert {c.monitor for c in (checkpoint, stopping, reduce_lr)} == {"val_loss"}
    assert (tmp_path / "sub").is_dir()


def test_the_checkpoint_holds_the_best_epoch_and_the_model_ends_with_it(tmp_path):
    x, y = _data()
    valid = _data(1)
    path = tmp_path / "best.weights.h5"
    model = _model()
    history = model.fit(x, y, validation_data=valid, epochs=12, verbose=0,
                        callbacks=standard_callbacks(path, monitor="val_loss", patience=2))
    best_epoch = int(np.argmin(history.history["val_loss"]))
    best_loss = history.history["val_loss"][best_epoch]
    assert path.is_file()
    restored = _model()
    restored.load_weights(path)
    assert restored.evaluate(*valid, verbose=0)[0] == pytest.approx(best_loss, rel=1e-4)
    assert model.evaluate(*valid, verbose=0)[0] == pytest.approx(best_loss, rel=1e-4)


def test_reduce_lr_lowers_the_rate_when_the_metric_stalls(tmp_path):
    x, y = _data()
    model = _model()
    model.optimizer.learning_rate.assign(1e-9)  # nothing improves
    _, _, reduce_lr = standard_callbacks(tmp_path / "w.weights.h5", monitor="loss",
                                         patience=10, lr_patience=1, min_lr=1e-12)
    model.fit(x, y, epochs=4, verbose=0, callbacks=[reduce_lr])
    assert float(model.optimizer.learning_rate) < 1e-9


@pytest.mark.parametrize("path", ["best.h5", "best.keras", "best"])
def test_refuses_a_path_keras_cannot_save_weights_to(tmp_path, path):
    with pytest.raises(ValueError, match=r"\.weights\.h5"):
        standard_callbacks(tmp_path / path)


def test_refuses_non_positive_patience(tmp_path):
    with pytest.raises(ValueError, match="patience"):
        standard_callbacks(tmp_path / "w.weights.h5", patience=0)


class FakeClock:
    """A clock that advances by ``tick`` seconds each time it is read."""

    def __init__(self, tick):
        self.now, self.tick = 0.0, tick

    def __call__(self):
        self.now += self.tick
        return self.now


def test_time_budget_stops_at_the_first_batch_past_the_budget_and_still_validates():
    x, y = _data()
    # 64 examples, batch 8: 8 steps per epoch. Each clock read advances 1 s; the callback
    # reads the clock at the start, after every batch and after every epoch.
    budget = TimeBudget(12.0, clock=FakeClock(1.0))
    history = _model().fit(x, y, batch_size=8, epochs=5, validation_data=_data(1), verbose=0,
                           callbacks=[budget])
    # Reads: start (1), batches 1..8 (2..9), epoch end (10), batches of epoch 2 (11, 12, 13):
    # the batch read at 13 s (13 - 1 = 12 s elapsed) stops training after 11 steps.
    assert budget.steps == 11 and budget.stopped
    assert len(history.history["loss"]) == 2                # the cut epoch is still recorded
    assert len(history.history["val_loss"]) == 2            # ... and validated
    assert budget.elapsed == [9.0, 13.0]


def test_time_budget_without_a_budget_only_records():
    x, y = _data()
    budget = TimeBudget(None)  # no budget: it only records
    history = _model().fit(x, y, batch_size=16, epochs=3, verbose=0, callbacks=[budget])
    assert budget.steps == 12 and not budget.stopped
    assert len(history.history["loss"]) == 3 and len(budget.elapsed) == 3
    assert budget.elapsed == sorted(budget.elapsed)


def test_time_budget_lets_a_run_that_fits_finish():
    x, y = _data()
    budget = TimeBudget(3600.0)
    _model().fit(x, y, batch_size=16, epochs=2, verbose=0, callbacks=[budget])
    assert budget.steps == 8 and not budget.stopped


@pytest.mark.parametrize("seconds", [0, -5, float("nan"), "60"])
def test_time_budget_refuses_a_budget_that_is_not_positive(seconds):
    with pytest.raises(ValueError, match="positive number of seconds"):
        TimeBudget(seconds)


def test_a_step_budget_stops_after_that_many_steps_across_epochs_and_still_validates():
    x, y = _data()
    budget = TimeBudget(steps=11)  # 8 steps per epoch: three into the second epoch
    history = _model().fit(x, y, batch_size=8, epochs=5, validation_data=_data(1), verbose=0,
                           callbacks=[budget])
    assert budget.steps == 11 and budget.stopped
    assert len(history.history["val_loss"]) == 2


@pytest.mark.parametrize("steps", [0, -1, 2.5, "10"])
def test_a_step_budget_refuses_a_number_that_is_not_a_positive_whole_number(steps):
    with pytest.raises(ValueError, match="positive whole number of steps"):
        TimeBudget(steps=steps)
