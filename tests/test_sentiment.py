"""seqlab.models.sentiment: the case-study classifier, its two compile stages and results file."""

import json

import keras
import numpy as np
import pytest
import tensorflow as tf

from seqlab.layers import STANDIN_HANDLE, HubTextEmbedding
from seqlab.models import (
    build_sentiment_classifier,
    count_parameters,
    embedding_layer,
    predict_sentiment,
    stage_weights_path,
)
from seqlab.results import read_imdb_results, write_imdb_result
from seqlab.training import compile_sentiment_classifier

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
    with pytest.raises(ValueError, match="hidden_units"):
        build_sentiment_classifier(STANDIN_HANDLE, hidden_units=0)


def test_accepts_a_ready_layer():
    layer = HubTextEmbedding(STANDIN_HANDLE)
    assert embedding_layer(build_sentiment_classifier(layer)) is layer


def test_compile_then_unfreeze_at_one_tenth_of_the_rate():
    model = compile_sentiment_classifier(build_sentiment_classifier(STANDIN_HANDLE), 1e-3)
    assert isinstance(model.optimizer, keras.optimizers.Adam)
    assert float(model.optimizer.learning_rate) == pytest.approx(1e-3)
    assert model.loss == "binary_crossentropy"
    model.fit(_batches(), epochs=1, verbose=0)
    embedding_layer(model).trainable = True  # notebook 02's two steps: unfreeze, recompile
    compile_sentiment_classifier(model, 1e-3 / 10)
    assert embedding_layer(model).trainable
    assert float(model.optimizer.learning_rate) == pytest.approx(1e-4)
    assert count_parameters(model)["non_trainable"] == 0
    before = embedding_layer(model).module.variables[0].numpy().copy()
    model.fit(_batches(), epochs=1, verbose=0)
    assert not np.array_equal(before, embedding_layer(model).module.variables[0].numpy())


def test_builds_compiles_and_fine_tunes_under_a_distribution_strategy():
    strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
    model = compile_sentiment_classifier(
        build_sentiment_classifier(STANDIN_HANDLE, strategy=strategy))
    table = embedding_layer(model).module.variables[0]
    assert isinstance(table, tf.distribute.DistributedValues)
    model.fit(_batches(), epochs=1, verbose=0)
    embedding_layer(model).trainable = True
    compile_sentiment_classifier(model, 1e-4)
    before = table.numpy().copy()
    model.fit(_batches(), epochs=1, verbose=0)
    assert not np.array_equal(before, table.numpy())
    with pytest.raises(ValueError, match="handle"):
        build_sentiment_classifier(HubTextEmbedding(STANDIN_HANDLE), strategy=strategy)


def test_embedding_layer_of_a_model_without_one():
    with pytest.raises(ValueError, match="no HubTextEmbedding"):
        embedding_layer(keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)]))


def test_predict_sentiment_takes_python_strings():
    model = build_sentiment_classifier(STANDIN_HANDLE)
    probabilities = predict_sentiment(model, REVIEWS)
    assert probabilities.shape == (3,)
    np.testing.assert_allclose(probabilities, model(tf.constant(REVIEWS)).numpy()[:, 0], rtol=1e-6)
    assert predict_sentiment(model, "just one review").shape == (1,)


def test_results_file_keeps_both_stages_of_one_mode(tmp_path):
    path = tmp_path / "imdb_results.json"
    common = {"trainable_params": HEAD, "seconds_per_epoch": 0.5, "handle": STANDIN_HANDLE}
    write_imdb_result("frozen", test_accuracy=0.7, size="fast", path=path, **common)
    history = {"accuracy": [np.float32(0.6), 0.7], "val_accuracy": [0.65, 0.68]}
    write_imdb_result("fine_tuned", test_accuracy=0.8, size="fast", path=path, history=history,
                      **common)
    results = read_imdb_results(path)
    assert results["size"] == "fast"
    assert results["frozen"]["test_accuracy"] == 0.7 and results["fine_tuned"]["test_accuracy"] == 0.8
    assert set(results["frozen"]) >= {"test_accuracy", "trainable_params", "seconds_per_epoch"}
    assert results["fine_tuned"]["history"]["accuracy"] == pytest.approx([0.6, 0.7])
    # A full-mode run replaces FAST results instead of mixing with them.
    write_imdb_result("frozen", test_accuracy=0.75, size="full", path=path, **common)
    assert set(json.loads(path.read_text())) == {"size", "frozen"}
    with pytest.raises(ValueError, match="stage"):
        write_imdb_result("thawed", test_accuracy=0.7, size="fast", path=path, **common)
    assert read_imdb_results(tmp_path / "missing.json") == {}


def test_stage_weights_are_kept_apart_per_size():
    fast, full = stage_weights_path("frozen", "fast"), stage_weights_path("frozen", "full")
    assert fast != full and fast.name.endswith(".weights.h5")
    assert stage_weights_path("fine_tuned", "fast") not in (fast, full)
    assert stage_weights_path("frozen", "class") not in (fast, full)
    with pytest.raises(ValueError, match="stage"):
        stage_weights_path("thawed", "fast")
    with pytest.raises(ValueError, match="size must be one of"):
        stage_weights_path("frozen", "FAST")


def _notebook_03_assembly(vocab_size, units, sequence_length, cell=None):
    """Notebook 03's classifier as the notebook writes it; ``cell``: our cells instead of LSTM."""
    def recurrent(return_sequences):
        layer = (keras.layers.RNN(cell(units), return_sequences=return_sequences) if cell
                 else keras.layers.LSTM(units, return_sequences=return_sequences))
        return keras.layers.Bidirectional(layer)

    return keras.Sequential([
        keras.Input((sequence_length,), dtype="int64"),
        keras.layers.Embedding(vocab_size, 32, mask_zero=True),
        recurrent(return_sequences=True),
        recurrent(return_sequences=False),
        keras.layers.Dense(1, activation="sigmoid"),
    ])


@pytest.mark.parametrize("sequence_length", [None, 9])
def test_recurrent_classifier_equals_notebook_03_assembly_and_our_cells(sequence_length):
    """build_recurrent_classifier (benchmarks) = notebook 03's cells, with Keras's LSTM and with
    RNN(seqlab LSTMCell), on padded (masked) batches once the weights are copied across."""
    from seqlab.layers import LSTMCell, copy_keras_cell_weights
    from seqlab.models import build_recurrent_classifier

    keras.utils.set_random_seed(0)
    package = build_recurrent_classifier(40, 6, embedding_dim=32, sequence_length=sequence_length)
    notebook = _notebook_03_assembly(40, 6, sequence_length)
    assert [type(layer) for layer in notebook.layers] == [type(layer) for layer in package.layers]
    assert notebook.count_params() == package.count_params()
    notebook.set_weights(package.get_weights())

    ours = _notebook_03_assembly(40, 6, sequence_length, cell=LSTMCell)
    ours.layers[0].set_weights(package.layers[0].get_weights())
    for theirs, mine in zip(package.layers[1:3], ours.layers[1:3], strict=True):
        copy_keras_cell_weights(theirs, mine)
    ours.layers[3].set_weights(package.layers[3].get_weights())

    ids = np.random.default_rng(1).integers(1, 40, size=(4, 9))
    ids[1, 5:] = 0  # padding: the mask must skip it in both directions
    ids[3, 2:] = 0
    expected = package(ids)
    np.testing.assert_allclose(notebook(ids), expected, rtol=0, atol=1e-6)
    np.testing.assert_allclose(ours(ids), expected, rtol=0, atol=1e-5)
