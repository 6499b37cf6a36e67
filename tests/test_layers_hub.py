"""HubTextEmbedding: a TF-Hub text-embedding SavedModel as a Keras 3 layer (on the stand-in)."""

import sys
import types
import urllib.error

import keras
import numpy as np
import pytest
import tensorflow as tf

from seqlab.data import DownloadError
from seqlab.data.standin import build_standin_text_embedding, standin_path
from seqlab.layers import STANDIN_HANDLE, HubTextEmbedding
from seqlab.layers.hub import NNLM_EN_DIM50, is_trusted_handle, resolve_handle, trusted_handles

REVIEWS = tf.constant([
    "A great cast and a wonderful score.",
    "The plot is dull and the ending is awful.",
    "Not bad at all!",
    "I would not recommend it to anyone.",
])
LABELS = tf.constant([1.0, 0.0, 1.0, 0.0])


def _classifier(layer):
    return keras.Sequential([
        keras.Input(shape=(), dtype="string"),
        layer,
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),
    ])


def _dataset(repeats=8):
    texts = tf.tile(REVIEWS, [repeats])
    labels = tf.tile(LABELS, [repeats])
    return tf.data.Dataset.from_tensor_slices((texts, labels)).batch(8)


def _module_values(layer):
    return [v.numpy().copy() for v in layer.module.variables]


@pytest.fixture(scope="module")
def untrusted_copy(tmp_path_factory):
    """The stand-in built somewhere else: a local SavedModel that safe mode does not know."""
    return str(build_standin_text_embedding(tmp_path_factory.mktemp("elsewhere") / "module"))


def test_works_in_a_sequential_model_and_outputs_one_vector_per_review():
    layer = HubTextEmbedding(STANDIN_HANDLE)
    model = _classifier(layer)
    assert layer(REVIEWS).shape == (4, 50)
    assert layer.output_dim == 50
    assert model(REVIEWS).shape == (4, 1)
    assert model.layers[0] is layer


def test_weights_are_the_modules_own_variables_not_copies():
    layer = HubTextEmbedding(STANDIN_HANDLE)
    assert len(layer.weights) == len(layer.module.variables) >= 1
    for weight, variable in zip(layer.weights, layer.module.variables, strict=True):
        assert weight.value is variable
        assert ":" not in weight.name and "/" not in weight.name
    before = layer(REVIEWS[:1]).numpy()
    layer.weights[0].assign(layer.weights[0].numpy() * 2.0)  # through Keras ...
    np.testing.assert_allclose(layer(REVIEWS[:1]).numpy(), 2.0 * before, rtol=1e-6)  # ... into the module


def test_summary_counts_the_module_parameters_and_freezing_leaves_the_head_trainable():
    layer = HubTextEmbedding(STANDIN_HANDLE)
    model = _classifier(layer)
    module_size = sum(int(np.prod(v.shape)) for v in layer.module.variables)
    assert layer.count_params() == module_size
    head = 50 * 128 + 128 + 128 + 1  # 6,657 as on the slides
    trainable = sum(int(np.prod(w.shape)) for w in model.trainable_weights)
    frozen = sum(int(np.prod(w.shape)) for w in model.non_trainable_weights)
    assert (trainable, frozen) == (head, module_size)
    lines = []
    model.summary(print_fn=lambda line, **_: lines.append(line))
    text = "\n".join(lines)
    assert f"{module_size + head:,}" in text and f"{module_size:,}" in text
    layer.trainable = True
    assert sum(int(np.prod(w.shape)) for w in model.trainable_weights) == module_size + head


def test_frozen_module_does_not_change_during_fit_but_the_head_does():
    layer = HubTextEmbedding(STANDIN_HANDLE, trainable=False)
    model = _classifier(layer)
    model.compile(keras.optimizers.Adam(1e-3), loss="binary_crossentropy", metrics=["accuracy"])
    module_before = _module_values(layer)
    head_before = model.layers[1].kernel.numpy().copy()
    model.fit(_dataset(), epochs=2, verbose=0)
    for before, after in zip(module_before, _module_values(layer), strict=True):
        np.testing.assert_array_equal(before, after)
    assert not np.allclose(head_before, model.layers[1].kernel.numpy())


def test_unfrozen_module_is_fine_tuned_with_adam_on_sparse_gradients():
    layer = HubTextEmbedding(STANDIN_HANDLE)
    model = _classifier(layer)
    model.compile(keras.optimizers.Adam(1e-3), loss="binary_crossentropy")
    model.fit(_dataset(), epochs=1, verbose=0)
    layer.trainable = True
    model.compile(keras.optimizers.Adam(1e-4), loss="binary_crossentropy")
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(model(REVIEWS))
    gradient = tape.gradient(loss, layer.trainable_weights[0])
    assert isinstance(gradient, tf.IndexedSlices)  # embedding lookups touch few rows
    before = _module_values(layer)
    model.fit(_dataset(), epochs=2, verbose=0)
    after = _module_values(layer)
    changed = np.any(before[0] != after[0], axis=1)
    assert changed.any(), "fine-tuning did not change the embedding table"
    assert not changed.all(), "rows of words never seen in training should stay as they were"


def test_module_with_unsanitary_variable_names_fine_tunes(tmp_path):
    """TFSMLayer fails here ("'Variable:0_momentum' is not a valid scope name")."""
    module = tf.train.Checkpoint()  # a bare trackable root, as TF-Hub's own examples use
    with tf.name_scope("embeddings"):
        module.table = tf.Variable(tf.random.stateless_normal((4, 3), seed=(1, 2)))
    module.unnamed = tf.Variable(tf.ones((3,)))
    module.variables = [module.table, module.unnamed]
    module.trainable_variables = [module.table, module.unnamed]
    module.__call__ = tf.function(
        lambda s: tf.gather(module.table, tf.strings.to_hash_bucket_fast(s, 4)) * module.unnamed,
        input_signature=[tf.TensorSpec([None], tf.string)],
    )
    tf.saved_model.save(module, str(tmp_path))
    assert any(":" in v.name or "/" in v.name for v in tf.saved_model.load(str(tmp_path)).variables)
    layer = HubTextEmbedding(str(tmp_path), trainable=True)
    model = _classifier(layer)
    model.compile(keras.optimizers.SGD(0.1, momentum=0.9), loss="binary_crossentropy")
    before = _module_values(layer)
    model.fit(_dataset(), epochs=1, verbose=0)
    assert not np.allclose(before[1], _module_values(layer)[1])


def test_save_and_load_round_trips_the_fine_tuned_weights(tmp_path):
    layer = HubTextEmbedding(STANDIN_HANDLE, trainable=True)
    model = _classifier(layer)
    model.compile(keras.optimizers.Adam(1e-2), loss="binary_crossentropy")
    model.fit(_dataset(), epochs=2, verbose=0)
    expected = model.predict(REVIEWS, verbose=0)
    path = tmp_path / "fine_tuned.keras"
    model.save(path)
    restored = keras.models.load_model(path)  # safe mode: the stand-in is a trusted handle
    np.testing.assert_allclose(restored.predict(REVIEWS, verbose=0), expected, rtol=1e-5, atol=1e-6)
    restored_layer = restored.layers[0]
    assert isinstance(restored_layer, HubTextEmbedding) and restored_layer.trainable
    np.testing.assert_array_equal(_module_values(restored_layer)[0], _module_values(layer)[0])
    # A fresh stand-in still has the pretrained (not fine-tuned) table: the file carried them.
    assert not np.array_equal(_module_values(HubTextEmbedding(STANDIN_HANDLE))[0],
                              _module_values(layer)[0])


def test_loading_refuses_an_untrusted_module_and_the_weights_path_works(tmp_path, untrusted_copy):
    model = _classifier(HubTextEmbedding(untrusted_copy))
    model.compile(keras.optimizers.Adam(1e-2), loss="binary_crossentropy")
    model.fit(_dataset(), epochs=1, verbose=0)
    expected = model.predict(REVIEWS, verbose=0)
    model.save(tmp_path / "model.keras")
    model.save_weights(tmp_path / "model.weights.h5")

    with pytest.raises(ValueError, match="Refusing to load") as refused:
        keras.models.load_model(tmp_path / "model.keras")
    assert "load_weights" in str(refused.value)
    # Leaving Keras's safe mode is not enough: the trust must come from code, not the file.
    with pytest.raises(ValueError, match="Refusing to load"):
        keras.models.load_model(tmp_path / "model.keras", safe_mode=False)

    # The notebooks' path: rebuild in code with a handle you chose, then restore the numbers.
    rebuilt = _classifier(HubTextEmbedding(untrusted_copy))
    rebuilt.load_weights(tmp_path / "model.weights.h5")
    np.testing.assert_allclose(rebuilt.predict(REVIEWS, verbose=0), expected, rtol=1e-5, atol=1e-6)

    # Your own file: vouching for its module in code is your call, and it works.
    with trusted_handles(untrusted_copy):
        mine = keras.models.load_model(tmp_path / "model.keras")
    np.testing.assert_allclose(mine.predict(REVIEWS, verbose=0), expected, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="Refusing to load"):  # the trust ended with the block
        keras.models.load_model(tmp_path / "model.keras")


def test_from_config_outside_loading_is_safe_by_default(untrusted_copy):
    config = HubTextEmbedding(untrusted_copy).get_config()
    assert config["handle"] == untrusted_copy
    with pytest.raises(ValueError, match="Refusing to load"):
        HubTextEmbedding.from_config(config)
    trusted = HubTextEmbedding.from_config(HubTextEmbedding(STANDIN_HANDLE).get_config())
    assert trusted.handle == STANDIN_HANDLE


@pytest.mark.parametrize("handle, trusted", [
    (NNLM_EN_DIM50, True),
    ("https://tfhub.dev/google/universal-sentence-encoder/4", True),
    ("https://www.kaggle.com/models/google/nnlm/TensorFlow2/en-dim50/1", True),
    ("https://tfhub.dev/someone-else/nnlm-en-dim50/2", False),
    ("http://tfhub.dev/google/nnlm-en-dim50/2", False),
    ("https://tfhub.dev/google/../someone-else/module/1", False),
    ("https://tfhub.dev.example.com/google/nnlm-en-dim50/2", False),
    ("https://example.com/models/google/nnlm", False),
    (STANDIN_HANDLE, True),
    ("/tmp/some/saved_model", False),
])
def test_trusted_handles(handle, trusted):
    assert is_trusted_handle(handle) is trusted


def test_the_stand_in_folder_itself_is_trusted():
    build_standin_text_embedding()
    assert is_trusted_handle(str(standin_path()))


@pytest.mark.parametrize("bad_input", [
    tf.constant([1.0, 2.0]),                       # numbers, not strings
    tf.constant([["a review"], ["another"]]),      # rank 2
    tf.constant("a single review, not a batch"),  # rank 0
])
def test_bad_input_raises_a_clear_value_error(bad_input):
    layer = HubTextEmbedding(STANDIN_HANDLE)
    with pytest.raises(ValueError, match=r"batch of strings.*shape \(batch,\)"):
        layer(bad_input)


def test_bad_symbolic_input_is_refused_when_the_model_is_built():
    with pytest.raises(ValueError, match="batch of strings"):
        keras.Sequential([keras.Input(shape=(3,), dtype="float32"),
                          HubTextEmbedding(STANDIN_HANDLE)])


def test_empty_and_non_ascii_strings_embed_without_error():
    layer = HubTextEmbedding(STANDIN_HANDLE)
    texts = ["", "   ", "Amélie était magnifique ✨", "東京物語", "naïve café — très bon", "great"]
    vectors = layer(tf.constant(texts)).numpy()
    assert vectors.shape == (len(texts), 50) and np.isfinite(vectors).all()
    np.testing.assert_array_equal(vectors[:2], 0.0)  # nothing to embed: zeros, as nnlm does
    assert np.abs(vectors[-1]).sum() > 0
    assert layer(tf.constant([], tf.string)).shape == (0, 50)


def test_a_url_that_cannot_be_downloaded_gives_one_clear_error(monkeypatch):
    fake_hub = types.ModuleType("tensorflow_hub")

    def resolve(handle):
        raise urllib.error.URLError("[Errno -2] Name or service not known")

    fake_hub.resolve = resolve
    monkeypatch.setitem(sys.modules, "tensorflow_hub", fake_hub)
    with pytest.raises(DownloadError) as caught:
        HubTextEmbedding(NNLM_EN_DIM50)
    message = str(caught.value)
    assert NNLM_EN_DIM50 in message and "SEQLAB_FAST=1" in message and "stand-in" in message


def test_a_missing_local_module_names_what_to_pass(tmp_path):
    with pytest.raises(FileNotFoundError, match="saved_model.pb"):
        resolve_handle(str(tmp_path / "nothing-here"))


def test_a_module_that_does_not_return_one_vector_per_string_is_refused(tmp_path):
    module = tf.train.Checkpoint()
    module.table = tf.Variable(tf.ones((4, 3)))
    module.variables = [module.table]
    module.__call__ = tf.function(lambda s: {"vectors": tf.gather(module.table, tf.zeros_like(s, tf.int64))},
                                  input_signature=[tf.TensorSpec([None], tf.string)])
    tf.saved_model.save(module, str(tmp_path))
    with pytest.raises(ValueError, match=r"one tensor of shape \(batch, dim\)"):
        HubTextEmbedding(str(tmp_path))


def test_the_variable_sharing_hook_works_on_this_keras_and_its_fallback_is_public_api(monkeypatch):
    from seqlab.layers import hub

    layer = HubTextEmbedding(STANDIN_HANDLE)
    assert layer.shares_module_variables
    assert [w.value for w in layer.weights] == list(layer.module.variables)
    expected = layer(REVIEWS)

    # A Keras release without the initialisation hook: simulated by removing our override.
    monkeypatch.delattr(hub._ModuleVariable, "_initialize")
    with pytest.warns(UserWarning, match="frozen but not fine-tuned"):
        frozen = HubTextEmbedding(STANDIN_HANDLE)
    assert not frozen.shares_module_variables and frozen.weights == []
    np.testing.assert_allclose(frozen(REVIEWS), expected)  # frozen use still works
    with pytest.raises(RuntimeError, match="frozen but not fine-tuned"):
        frozen.trainable = True
    with pytest.raises(RuntimeError, match="frozen but not fine-tuned"):
        HubTextEmbedding(STANDIN_HANDLE, trainable=True)
