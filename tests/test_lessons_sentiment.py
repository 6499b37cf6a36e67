"""The sentiment classifiers of notebooks 01 and 03, from their #@save cells (seqlab.lessons.nb01,
nb03): architecture, compile stages, strategies, save/load; and seqlab.training.stages."""

import json
from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf
from layer_contract import assert_distinct_weights

from seqlab import config
from seqlab.layers import STANDIN_HANDLE, HubTextEmbedding
from seqlab.lessons.nb01 import build_sentiment_classifier, predict_sentiment
from seqlab.lessons.nb03 import build_recurrent_classifier
from seqlab.results import read_imdb_results, write_imdb_result
from seqlab.training import (
    TrainingRun,
    compile_sentiment_classifier,
    count_parameters,
    stage_weights_path,
)

NOTEBOOK_03 = Path(__file__).resolve().parents[1] / "notebooks" / "03_recurrent_cells.ipynb"
HEAD = 50 * 128 + 128 + 128 + 1  # 6,657: the slides' trainable parameters when frozen
REVIEWS = ["A wonderful, moving film.", "Dull, tedious and far too long.", ""]


def _batches():
    texts = tf.constant(REVIEWS[:2] * 16)
    return tf.data.Dataset.from_tensor_slices((texts, tf.constant([1.0, 0.0] * 16))).batch(8)


def test_the_case_study_architecture_frozen_by_default():
    model = build_sentiment_classifier(STANDIN_HANDLE)
    embedding, hidden, output = model.layers
    assert isinstance(embedding, HubTextEmbedding) and not embedding.trainable
    assert hidden.units == 128 and hidden.activation is keras.activations.relu
    assert output.units == 1 and output.activation is keras.activations.sigmoid
    counts = count_parameters(model)
    assert counts["trainable"] == HEAD
    assert counts["non_trainable"] == embedding.count_params() > 0
    assert counts["total"] == model.count_params()
    probabilities = model(tf.constant(REVIEWS)).numpy()
    assert probabilities.shape == (3, 1) and ((probabilities > 0) & (probabilities < 1)).all()


def test_hidden_units_and_starting_unfrozen():
    model = build_sentiment_classifier(STANDIN_HANDLE, hidden_units=16, trainable=True)
    counts = count_parameters(model)
    assert counts["non_trainable"] == 0
    assert counts["trainable"] == model.layers[0].count_params() + 50 * 16 + 16 + 17


def test_accepts_a_ready_layer():
    layer = HubTextEmbedding(STANDIN_HANDLE)
    assert build_sentiment_classifier(layer).layers[0] is layer


def test_compile_then_unfreeze_at_one_tenth_of_the_rate():
    model = compile_sentiment_classifier(build_sentiment_classifier(STANDIN_HANDLE), 1e-3)
    assert isinstance(model.optimizer, keras.optimizers.Adam)
    assert float(model.optimizer.learning_rate) == pytest.approx(1e-3)
    assert model.loss == "binary_crossentropy"
    model.fit(_batches(), epochs=1, verbose=0)
    model.layers[0].trainable = True  # notebook 02's two steps: unfreeze, recompile
    compile_sentiment_classifier(model, 1e-3 / 10)
    assert model.layers[0].trainable
    assert float(model.optimizer.learning_rate) == pytest.approx(1e-4)
    assert count_parameters(model)["non_trainable"] == 0
    before = model.layers[0].module.variables[0].numpy().copy()
    model.fit(_batches(), epochs=1, verbose=0)
    assert not np.array_equal(before, model.layers[0].module.variables[0].numpy())


def test_builds_compiles_and_fine_tunes_under_a_distribution_strategy():
    strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
    with strategy.scope():  # the variables of the module too: pass the handle, built in the scope
        model = compile_sentiment_classifier(build_sentiment_classifier(STANDIN_HANDLE))
    table = model.layers[0].module.variables[0]
    assert isinstance(table, tf.distribute.DistributedValues)
    model.fit(_batches(), epochs=1, verbose=0)
    model.layers[0].trainable = True
    compile_sentiment_classifier(model, 1e-4)
    before = table.numpy().copy()
    model.fit(_batches(), epochs=1, verbose=0)
    assert not np.array_equal(before, table.numpy())


def test_predict_sentiment_takes_python_strings():
    model = build_sentiment_classifier(STANDIN_HANDLE)
    probabilities = predict_sentiment(model, REVIEWS)
    assert probabilities.shape == (3,)
    np.testing.assert_allclose(probabilities, model(tf.constant(REVIEWS)).numpy()[:, 0], rtol=1e-6)
    assert predict_sentiment(model, "just one review").shape == (1,)


def test_the_classifier_saves_and_loads_by_registered_names(tmp_path):
    model = build_sentiment_classifier(STANDIN_HANDLE, hidden_units=8)
    model.save(tmp_path / "classifier.keras")
    reloaded = keras.models.load_model(tmp_path / "classifier.keras")
    np.testing.assert_allclose(predict_sentiment(reloaded, REVIEWS), predict_sentiment(model, REVIEWS),
                               rtol=1e-6)


def test_results_file_keeps_both_stages_of_one_mode(tmp_path, monkeypatch):
    monkeypatch.setattr(config, "MODELS_DIR", tmp_path)
    assert read_imdb_results() == {}
    path = tmp_path / "imdb_results.json"
    common = {"trainable_params": HEAD, "seconds_per_epoch": 0.5, "handle": STANDIN_HANDLE}
    write_imdb_result("frozen", test_accuracy=0.7, size="fast", **common)
    history = {"accuracy": [np.float32(0.6), 0.7], "val_accuracy": [0.65, 0.68]}
    write_imdb_result("fine_tuned", test_accuracy=0.8, size="fast", history=history,
                      **common)
    results = read_imdb_results()
    assert results["size"] == "fast"
    assert results["frozen"]["test_accuracy"] == 0.7 and results["fine_tuned"]["test_accuracy"] == 0.8
    assert set(results["frozen"]) >= {"test_accuracy", "trainable_params", "seconds_per_epoch"}
    assert results["fine_tuned"]["history"]["accuracy"] == pytest.approx([0.6, 0.7])
    # A full-mode run replaces FAST results instead of mixing with them.
    write_imdb_result("frozen", test_accuracy=0.75, size="full", **common)
    assert set(json.loads(path.read_text())) == {"size", "frozen"}
    with pytest.raises(ValueError, match="stage"):
        write_imdb_result("thawed", test_accuracy=0.7, size="fast", **common)


def test_stage_weights_are_kept_apart_per_size():
    fast, full = stage_weights_path("frozen", "fast"), stage_weights_path("frozen", "full")
    assert fast != full and fast.name.endswith(".weights.h5")
    assert stage_weights_path("fine_tuned", "fast") not in (fast, full)
    assert stage_weights_path("frozen", "class") not in (fast, full)
    with pytest.raises(ValueError, match="stage"):
        stage_weights_path("thawed", "fast")
    with pytest.raises(ValueError, match="size must be one of"):
        stage_weights_path("frozen", "FAST")


@pytest.fixture(scope="module")
def padded_ids():
    ids = np.random.default_rng(1).integers(1, 40, size=(4, 9))
    ids[1, 5:] = 0  # padding: the mask must skip it in both directions
    ids[3, 2:] = 0
    return ids


def test_recurrent_classifier_with_keras_lstm_equals_it_with_our_cells(padded_ids):
    """Notebook 03's classifier with Keras's LSTM and with RNN(seqlab LSTMCell): the same outputs
    on padded (masked) batches once the weights are copied across."""
    from seqlab.layers import LSTMCell, copy_keras_cell_weights

    keras.utils.set_random_seed(0)
    fused = build_recurrent_classifier(40, 6)
    assert [type(layer).__name__ for layer in fused.layers] == [
        "Embedding", "Bidirectional", "Bidirectional", "Dense"]
    ours = build_recurrent_classifier(
        40, 6, lstm=lambda units, **options: keras.layers.RNN(LSTMCell(units), **options))
    assert ours.count_params() == fused.count_params()
    ours.layers[0].set_weights(fused.layers[0].get_weights())
    for theirs, mine in zip(fused.layers[1:3], ours.layers[1:3], strict=True):
        copy_keras_cell_weights(theirs, mine)
    ours.layers[3].set_weights(fused.layers[3].get_weights())
    np.testing.assert_allclose(ours(padded_ids), fused(padded_ids), rtol=0, atol=1e-5)


def test_recurrent_classifier_weights_start_with_values_of_their_own(padded_ids):
    from seqlab.layers import LSTMCell

    keras.utils.set_random_seed(0)
    for lstm in (keras.layers.LSTM,
                 lambda units, **options: keras.layers.RNN(LSTMCell(units), **options)):
        model = build_recurrent_classifier(40, 6, lstm=lstm)
        model(padded_ids)
        assert_distinct_weights(model.weights)


def test_recurrent_classifier_padding_changes_nothing_and_it_round_trips(padded_ids, tmp_path):
    keras.utils.set_random_seed(0)
    model = build_recurrent_classifier(40, 6, embedding_dim=8)
    wider = np.concatenate([padded_ids, np.zeros((4, 3), padded_ids.dtype)], axis=1)
    np.testing.assert_allclose(model(wider), model(padded_ids), rtol=0, atol=1e-6)
    model.save(tmp_path / "bilstm.keras")
    reloaded = keras.models.load_model(tmp_path / "bilstm.keras")
    np.testing.assert_allclose(reloaded(padded_ids), model(padded_ids), rtol=0, atol=1e-6)


def test_load_frozen_stage_loads_notebook_01s_record_or_trains_it(tmp_path, monkeypatch, capsys):
    from seqlab.training import stages

    monkeypatch.setenv("SEQLAB_BACKUP_DIR", str(tmp_path / "backups"))
    monkeypatch.setattr(stages, "stage_weights_path", lambda stage, size: tmp_path / f"{stage}.weights.h5")
    monkeypatch.setattr(stages, "read_imdb_results", lambda: {})
    keras.utils.set_random_seed(0)
    trained = build_sentiment_classifier(STANDIN_HANDLE, hidden_units=4)
    history, seconds = stages.load_frozen_stage(trained, STANDIN_HANDLE, "fast", _batches(),
                                                _batches(), epochs=2)
    assert "training the frozen stage here" in capsys.readouterr().out
    assert len(history["val_loss"]) == 2 and seconds >= 0 and (tmp_path / "frozen.weights.h5").is_file()

    record = {"size": "fast", "frozen": {"handle": STANDIN_HANDLE, "history": history,
                                         "seconds_per_epoch": 0.5}}
    monkeypatch.setattr(stages, "read_imdb_results", lambda: record)
    loaded = build_sentiment_classifier(STANDIN_HANDLE, hidden_units=4)
    assert stages.load_frozen_stage(loaded, STANDIN_HANDLE, "fast", _batches(), _batches(),
                                    epochs=2) == (history, 0.5)
    assert "Loaded notebook 01's frozen weights" in capsys.readouterr().out
    assert float(loaded.optimizer.learning_rate) == pytest.approx(1e-3)
    np.testing.assert_allclose(predict_sentiment(loaded, REVIEWS),
                               predict_sentiment(trained, REVIEWS), rtol=1e-6)


def _notebook_03_stop():
    """The EarlyStopping that notebook 03's training cell builds, taken from the cell itself."""
    import ast

    cells = json.loads((NOTEBOOK_03).read_text())["cells"]
    source = next("".join(c["source"]) for c in cells
                  if c["cell_type"] == "code" and "EarlyStopping(" in "".join(c["source"]))
    statement = next(node for node in ast.parse(source).body
                     if isinstance(node, ast.Assign) and "EarlyStopping" in ast.unparse(node))
    namespace = {"keras": keras}
    exec(compile(ast.Module([statement], []), "notebook 03", "exec"), namespace)
    return next(v for v in namespace.values() if isinstance(v, keras.callbacks.EarlyStopping))


def test_notebook_03_stops_on_a_rising_validation_loss_and_tests_the_best_weights(tmp_path):
    # Stand-in: word 1 means positive and word 2 negative in training, the reverse in
    # validation. Learning the training rule makes the validation loss rise, as on the real
    # reviews after the first epoch (issue 40's run).
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 256).astype("float32")
    ids = rng.integers(3, 50, (256, 12))
    ids[:, 0] = np.where(labels == 1, 1, 2)
    valid_ids = ids.copy()
    valid_ids[:, 0] = np.where(labels == 1, 2, 1)
    keras.utils.set_random_seed(0)
    model = build_recurrent_classifier(50, 4, embedding_dim=4)
    compile_sentiment_classifier(model, 1e-2)
    weights_after = []
    keep = keras.callbacks.LambdaCallback(
        on_epoch_end=lambda epoch, logs: weights_after.append(model.get_weights()))
    run = TrainingRun("03-bilstm-test", model, root=tmp_path)
    stop = _notebook_03_stop()
    model.fit(ids, labels, validation_data=(valid_ids, labels), epochs=20, batch_size=32,
              verbose=0, callbacks=[keep, stop, *run.callbacks])   # the notebook's order
    losses = run.history.history["val_loss"]
    best = int(np.argmin(losses))
    assert len(losses) == best + 1 + stop.patience < 20   # stopped `patience` epochs after it
    for tested, kept in zip(model.get_weights(), weights_after[best], strict=True):
        np.testing.assert_array_equal(tested, kept)
    keras.utils.set_random_seed(1)
    reloaded = build_recurrent_classifier(50, 4, embedding_dim=4)
    compile_sentiment_classifier(reloaded, 1e-2)
    assert TrainingRun("03-bilstm-test", reloaded, root=tmp_path).finished
    for loaded, kept in zip(reloaded.get_weights(), weights_after[best], strict=True):
        np.testing.assert_array_equal(loaded, kept)
