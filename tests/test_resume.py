"""seqlab.training.resume: TrainingRun and ResumableBackup (Keras's BackupAndRestore)."""

import doctest
import json

import keras
import numpy as np
import pytest

from seqlab import config
from seqlab.training import TrainingRun, backup_root
from seqlab.training import resume as resume_module

EPOCHS = 6


def _data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 3)).astype("float32")
    return x, (x @ np.array([1.0, -2.0, 0.5], dtype="float32") > 0).astype("float32")


def _model():
    """The same tiny classifier each call (seeded), as a notebook re-run in a new kernel builds it."""
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(8, activation="relu"),
                              keras.layers.Dense(1, activation="sigmoid")])
    model.compile(keras.optimizers.Adam(0.02), loss="binary_crossentropy", metrics=["accuracy"])
    return model


def _fit(model, callbacks=(), epochs=EPOCHS):
    # shuffle=False and no dropout: every run sees the same batches in the same order, so an
    # interrupted-and-resumed run can be compared with an uninterrupted one number for number.
    x, y = _data()
    return model.fit(x, y, validation_data=_data(), batch_size=16, epochs=epochs, shuffle=False,
                     verbose=0, callbacks=list(callbacks))


class Interrupt(keras.callbacks.Callback):
    """Raises in epoch ``epoch`` after ``batches`` training steps of it (a kernel that dies)."""

    def __init__(self, epoch, batches=0):
        super().__init__()
        self.epoch, self.batches, self._current = epoch, batches, -1

    def on_epoch_begin(self, epoch, logs=None):
        self._current = epoch
        if epoch == self.epoch and self.batches == 0:
            raise RuntimeError("interrupted")

    def on_train_batch_begin(self, batch, logs=None):
        if self._current == self.epoch and batch == self.batches:
            raise RuntimeError("interrupted")


def _interrupted_run(root, epoch=3, batches=0, name="tiny-fast", **options):
    """A fresh model's run, killed in epoch ``epoch`` after ``batches`` steps: ``(model, run)``."""
    model = _model()
    run = TrainingRun(name, model, root=root, **options)
    with pytest.raises(RuntimeError, match="interrupted"):
        _fit(model, [Interrupt(epoch, batches), *run.callbacks])
    return model, run


def _assert_same_weights(model, reference):
    # The resumed run computes the same float32 operations on the same batches in the same
    # order on this CPU as the uninterrupted one, from the same restored weights and Adam
    # state: equal up to at most a rounding difference (1e-6 relative), in practice bitwise.
    for ours, theirs in zip(model.get_weights(), reference.get_weights(), strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-7)


@pytest.fixture
def uninterrupted():
    model = _model()
    history = _fit(model)
    return model, history


@pytest.mark.parametrize("batches", [0, 2], ids=["at-epoch-start", "mid-epoch"])
def test_an_interrupted_fit_resumes_at_the_epoch_and_ends_as_an_uninterrupted_one(
        tmp_path, capsys, uninterrupted, batches):
    reference, reference_history = uninterrupted
    model, run = _interrupted_run(tmp_path, batches=batches)
    assert run.history.epoch == [0, 1, 2]

    model = _model()  # a new kernel builds the model again
    run = TrainingRun("tiny-fast", model, root=tmp_path)
    assert not run.finished
    resumed = _fit(model, run.callbacks)

    assert resumed.epoch == [3, 4, 5]  # only the missing epochs were trained
    assert "tiny-fast: resuming from epoch 4 of 6, backed up at " in capsys.readouterr().out
    _assert_same_weights(model, reference)
    assert run.history.epoch == list(range(EPOCHS))
    assert run.steps == EPOCHS * 4 and len(run.epoch_seconds) == EPOCHS  # 64 examples / 16
    for name in ("loss", "accuracy", "val_loss", "val_accuracy"):
        np.testing.assert_allclose(run.history.history[name], reference_history.history[name],
                                   rtol=1e-6)
    assert not (tmp_path / "tiny-fast" / "backup").exists()  # Keras deletes it after a fit


def test_an_epoch_logged_but_not_backed_up_is_trained_again_and_logged_once(tmp_path,
                                                                          uninterrupted):
    reference, reference_history = uninterrupted
    model, run = _interrupted_run(tmp_path)
    # A kill between writing epoch 3's logs and its backup: the history is one epoch ahead.
    history_file = tmp_path / "tiny-fast" / "history.json"
    entries = json.loads(history_file.read_text())
    logs = {**entries[-1]["logs"], "loss": -1.0}
    history_file.write_text(json.dumps([*entries, {**entries[-1], "epoch": 3, "logs": logs}]))

    model = _model()
    run = TrainingRun("tiny-fast", model, root=tmp_path)
    _fit(model, run.callbacks)
    assert run.history.epoch == list(range(EPOCHS))
    np.testing.assert_allclose(run.history.history["loss"], reference_history.history["loss"],
                               rtol=1e-6)


def test_a_backup_cut_off_mid_write_falls_back_to_the_one_before_or_starts_over(
        tmp_path, capsys, uninterrupted):
    reference, _ = uninterrupted
    model, run = _interrupted_run(tmp_path)
    backup = tmp_path / "tiny-fast" / "backup"
    latest, previous = sorted(backup.glob("*.weights.h5*"), key=lambda path: len(path.name))
    latest.write_bytes(latest.read_bytes()[:96])  # a kill while the latest was being written

    model = _model()
    run = TrainingRun("tiny-fast", model, root=tmp_path)
    assert _fit(model, run.callbacks).epoch == [2, 3, 4, 5]  # from the epoch before
    _assert_same_weights(model, reference)

    model, run = _interrupted_run(tmp_path, retrain=True)
    for path in backup.glob("*.weights.h5*"):  # both copies unreadable
        path.write_bytes(b"")
    model = _model()
    run = TrainingRun("tiny-fast", model, root=tmp_path)
    assert _fit(model, run.callbacks).epoch == list(range(EPOCHS))
    assert "the backup cannot be read" in capsys.readouterr().out
    _assert_same_weights(model, reference)


def test_a_finished_run_loads_its_final_weights_and_is_not_trained_again(tmp_path, capsys):
    model = _model()
    run = TrainingRun("tiny-fast", model, root=tmp_path)
    trained = _fit(model, run.callbacks)
    capsys.readouterr()

    again = _model()
    run = TrainingRun("tiny-fast", again, root=tmp_path)
    printed = capsys.readouterr().out
    assert run.finished and run.callbacks == []
    assert "finished earlier (6 epochs)" in printed and "retrain=True" in printed
    _assert_same_weights(again, model)
    assert run.history.epoch == list(range(EPOCHS))
    assert run.history.history["val_loss"] == pytest.approx(trained.history["val_loss"])
    assert run.steps == EPOCHS * 4 and run.seconds_per_epoch() > 0  # timings kept too

    fresh = _model()
    run = TrainingRun("tiny-fast", fresh, root=tmp_path, retrain=True)
    assert not run.finished and run.history.epoch == []
    assert _fit(fresh, run.callbacks).epoch == list(range(EPOCHS))


def test_a_run_whose_model_changed_says_so_and_trains_again(tmp_path, capsys):
    model = _model()
    _fit(model, TrainingRun("tiny-fast", model, root=tmp_path).callbacks)
    keras.utils.set_random_seed(0)
    wider = keras.Sequential([keras.Input((3,)), keras.layers.Dense(16, activation="relu"),
                              keras.layers.Dense(1, activation="sigmoid")])
    wider.compile(keras.optimizers.Adam(0.02), loss="binary_crossentropy")
    initial = wider.get_weights()
    run = TrainingRun("tiny-fast", wider, root=tmp_path)
    assert not run.finished and "changed since this run was backed up" in capsys.readouterr().out
    for ours, theirs in zip(wider.get_weights(), initial, strict=True):
        np.testing.assert_array_equal(ours, theirs)  # nothing half-loaded
    assert _fit(wider, run.callbacks).epoch == list(range(EPOCHS))


def test_the_final_weights_are_those_early_stopping_restores(tmp_path):
    model = _model()
    # No later epoch beats the first by 10: training stops after the second epoch and the
    # first epoch's weights are put back when training ends.
    stop = keras.callbacks.EarlyStopping(monitor="loss", min_delta=10, patience=1,
                                         restore_best_weights=True)
    run = TrainingRun("tiny-fast", model, root=tmp_path)
    _fit(model, [stop, *run.callbacks], epochs=40)  # the run's callbacks last, as documented
    assert run.history.epoch == [0, 1]
    one_epoch = _model()
    _fit(one_epoch, epochs=1)
    loaded = _model()
    assert TrainingRun("tiny-fast", loaded, root=tmp_path).finished
    _assert_same_weights(loaded, one_epoch)


def test_a_later_fit_of_a_resumed_model_starts_at_epoch_zero(tmp_path):
    # Keras keeps the epoch BackupAndRestore restored on the model; without the reset a later
    # fit of the same model (notebook 02 fine-tunes the model it trained frozen) would skip
    # that many epochs.
    model, run = _interrupted_run(tmp_path, epoch=4, name="first")
    _fit(model, TrainingRun("first", model, root=tmp_path).callbacks)
    assert _fit(model, TrainingRun("second", model, root=tmp_path).callbacks).epoch == list(
        range(EPOCHS))
    assert _fit(model, epochs=2).epoch == [0, 1]


def test_backups_go_to_drive_when_mounted_else_to_models(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("SEQLAB_BACKUP_DIR", raising=False)
    monkeypatch.setattr(config, "MODELS_DIR", tmp_path / "home" / "models")
    drive = tmp_path / "drive" / "MyDrive"
    monkeypatch.setattr(resume_module, "GOOGLE_DRIVE", drive)
    assert backup_root() == tmp_path / "home" / "models" / "backups"
    TrainingRun("tiny-fast", _model())
    assert "(a local folder)" in capsys.readouterr().out

    drive.mkdir(parents=True)  # what drive.mount("/content/drive") makes appear
    assert backup_root() == drive / "seqlab" / "backups"
    run = TrainingRun("tiny-fast", _model())
    assert run.folder == drive / "seqlab" / "backups" / "tiny-fast"
    assert "(Google Drive)" in capsys.readouterr().out

    monkeypatch.setenv("SEQLAB_BACKUP_DIR", str(tmp_path / "elsewhere"))
    assert backup_root() == tmp_path / "elsewhere"


@pytest.mark.parametrize("name", ["", "  ", "a/b", "a\\b", "..", None])
def test_a_name_that_is_not_a_folder_name_is_refused(tmp_path, name):
    with pytest.raises(ValueError, match="run name that is a folder name"):
        TrainingRun(name, _model(), root=tmp_path)


def test_an_unbuilt_model_or_no_model_is_refused(tmp_path):
    unbuilt = keras.Sequential([keras.layers.Dense(1)], name="unbuilt")
    with pytest.raises(ValueError, match="built model.*'unbuilt' is not built"):
        TrainingRun("tiny-fast", unbuilt, root=tmp_path)
    with pytest.raises(ValueError, match="needs a keras.Model; got str"):
        TrainingRun("tiny-fast", "model", root=tmp_path)


def test_the_docstring_example_runs():
    result = doctest.testmod(resume_module, optionflags=doctest.ELLIPSIS, report=False)
    assert result.attempted > 0 and result.failed == 0


def test_a_changed_learning_rate_trains_again_and_the_same_settings_load(tmp_path, capsys):
    """Only the settings count, not Keras's automatic names: a second, identical model built in
    the same session (other layer names) loads the finished run; another rate trains again."""
    model = _model()
    _fit(model, TrainingRun("tiny-fast", model, root=tmp_path).callbacks)
    twin = _model()
    assert [w.path for w in twin.weights] != [w.path for w in model.weights]
    assert TrainingRun("tiny-fast", twin, root=tmp_path).finished
    capsys.readouterr()
    other_rate = _model()
    other_rate.compile(keras.optimizers.Adam(0.001), loss="binary_crossentropy")
    run = TrainingRun("tiny-fast", other_rate, root=tmp_path)
    assert not run.finished and "changed since" in capsys.readouterr().out
