"""seqlab.training.optimizers: LazyAdam updates the used rows only, with Adam's update;
FusedAdam is Adam computed by TensorFlow's fused kernel."""

from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf

from seqlab.layers import STANDIN_HANDLE
from seqlab.lessons.nb01 import build_sentiment_classifier
from seqlab.lessons.nb06 import SkipGram
from seqlab.training import compile_sentiment_classifier
from seqlab.training.optimizers import FusedAdam, LazyAdam, sum_rows_per_index


class DenseGradientAdam(keras.optimizers.Adam):
    """The textbook reference: Keras's Adam on the dense gradient (a word's rows added up)."""

    def update_step(self, gradient, variable, learning_rate):
        super().update_step(tf.convert_to_tensor(gradient), variable, learning_rate)


def _apply(optimizer, gradients, shape=(6, 2)):
    """The table after applying each gradient in turn (from ones), and the optimizer."""
    table = keras.Variable(np.ones(shape, "float32"))
    optimizer.build([table])
    for gradient in gradients:
        optimizer.apply([gradient], [table])
    return table.numpy(), optimizer


def _lazy_adam_reference(gradients, shape=(6, 2), lr=0.1, b1=0.9, b2=0.999, eps=1e-7):
    """Lazy Adam written out with NumPy: rows summed per index, only those rows updated."""
    theta, m, v = np.ones(shape), np.zeros(shape), np.zeros(shape)
    for t, (values, indices) in enumerate(gradients, start=1):
        g = np.zeros(shape)
        np.add.at(g, indices, values)
        used = np.unique(indices)
        m[used] = b1 * m[used] + (1 - b1) * g[used]
        v[used] = b2 * v[used] + (1 - b2) * g[used] ** 2
        alpha = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        theta[used] -= alpha * m[used] / (np.sqrt(v[used]) + eps)
    return theta, m, v


STEPS = [(np.array([[0.5, -1.0], [1.5, 0.0], [3.0, 1.0]]), np.array([1, 1, 3])),
         (np.array([[0.2, 0.3], [-1.0, 2.0]]), np.array([3, 4])),
         (np.array([[1.0, 1.0]]), np.array([1]))]


def _slices(values, indices, shape=(6, 2)):
    return tf.IndexedSlices(tf.constant(values, tf.float32), tf.constant(indices), tf.constant(shape))


def test_lazy_adam_updates_only_the_used_rows_with_adams_formula():
    table, optimizer = _apply(LazyAdam(0.1), [_slices(*step) for step in STEPS])
    theta, m, v = _lazy_adam_reference(STEPS)
    np.testing.assert_allclose(table, theta, rtol=1e-5)
    np.testing.assert_array_equal(table[[0, 2, 5]], 1.0)          # never used: never moved
    moments = [w.numpy() for w in optimizer.variables if w.shape == (6, 2)]
    np.testing.assert_allclose(moments[0], m, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(moments[1], v, rtol=1e-4, atol=1e-9)  # float32 against float64


def test_keras_adam_moves_rows_the_step_did_not_use():
    """What LazyAdam changes: Keras's Adam moves row 1 again at step 2 (its momentum)."""
    dense, _ = _apply(keras.optimizers.Adam(0.1), [_slices(*step) for step in STEPS[:2]])
    lazy, _ = _apply(LazyAdam(0.1), [_slices(*step) for step in STEPS[:2]])
    after_one, _ = _apply(LazyAdam(0.1), [_slices(*STEPS[0])])
    assert lazy[1, 0] == after_one[1, 0] and dense[1, 0] != after_one[1, 0]


def test_rows_used_on_every_step_and_dense_gradients_get_adams_update():
    every_step = [_slices([[0.5, -1.0], [0.25, 2.0]], [2, 2]), _slices([[1.0, 0.5]], [2])]
    lazy, _ = _apply(LazyAdam(0.1), every_step)
    summed, _ = _apply(DenseGradientAdam(0.1), every_step)
    np.testing.assert_allclose(lazy[2], summed[2], rtol=1e-5)  # float32, another order of operations
    dense = [tf.constant(np.arange(12, dtype="float32").reshape(6, 2) - 5)] * 2
    np.testing.assert_allclose(_apply(LazyAdam(0.1), dense)[0],
                               _apply(keras.optimizers.Adam(0.1), dense)[0], rtol=1e-6)


def test_sum_rows_per_index_adds_rows_of_the_same_index():
    summed = sum_rows_per_index(_slices(*STEPS[0]))
    np.testing.assert_array_equal(summed.indices.numpy(), [1, 3])
    np.testing.assert_allclose(summed.values.numpy(), [[2.0, -1.0], [3.0, 1.0]])


@pytest.mark.parametrize("cls", [LazyAdam, FusedAdam])
def test_refuses_amsgrad_and_round_trips_its_config(cls):
    with pytest.raises(ValueError, match="amsgrad"):
        cls(amsgrad=True)
    optimizer = cls(learning_rate=0.02, beta_2=0.99)
    again = keras.optimizers.deserialize(keras.optimizers.serialize(optimizer))
    assert isinstance(again, cls) and again.get_config() == optimizer.get_config()
    assert keras.saving.get_registered_name(cls) == f"seqlab>{cls.__name__}"


def test_fused_adam_is_adam_on_dense_and_summed_sparse_gradients():
    dense = [tf.constant(np.arange(12, dtype="float32").reshape(6, 2) - 5),
             tf.constant(np.linspace(-1, 1, 12, dtype="float32").reshape(6, 2))]
    np.testing.assert_allclose(_apply(FusedAdam(0.1), dense)[0],
                               _apply(keras.optimizers.Adam(0.1), dense)[0], rtol=1e-5)
    sparse = [_slices(*step) for step in STEPS]
    np.testing.assert_allclose(_apply(FusedAdam(0.1), sparse)[0],
                               _apply(DenseGradientAdam(0.1), sparse)[0], rtol=1e-5)


@pytest.mark.parametrize("jit_compile", [False, True])
def test_fused_adam_trains_the_skipgram_as_adam_does_with_and_without_xla(jit_compile):
    rng = np.random.default_rng(0)
    x = (rng.integers(2, 30, 64), rng.integers(2, 30, (64, 4)))
    y = np.tile(np.array([[1.0, 0, 0, 0]], "float32"), (64, 1))
    weights = {}
    # The reference is Adam on the dense gradient (DenseGradientAdam): Keras's Adam squares a
    # word's rows apart when it occurs twice in a batch.
    for name, optimizer in (("adam", DenseGradientAdam), ("fused", FusedAdam)):
        keras.utils.set_random_seed(0)
        model = SkipGram(30, 8)
        model.compile(optimizer(0.01), keras.losses.BinaryCrossentropy(from_logits=True),
                      jit_compile=jit_compile and name == "fused")
        model.fit(x, y, batch_size=16, epochs=2, verbose=0, shuffle=False)
        weights[name] = model.get_weights()
    for a, b in zip(weights["adam"], weights["fused"], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def _embedding_model():
    keras.utils.set_random_seed(0)
    inputs = keras.Input((3,), dtype="int32")
    x = keras.layers.Embedding(10, 4)(inputs)                        # (batch, 3, 4)
    outputs = keras.layers.Dense(1)(keras.layers.GlobalAveragePooling1D()(x))
    model = keras.Model(inputs, outputs)
    model.compile(LazyAdam(0.05), "mse")
    return model


def test_a_keras_embedding_trained_with_lazy_adam_keeps_its_unused_rows():
    model = _embedding_model()
    before = model.layers[1].embeddings.numpy()
    x, y = np.array([[1, 2, 3], [3, 4, 4]] * 4), np.ones((8, 1))
    model.fit(x, y, batch_size=4, epochs=2, verbose=0)
    after = model.layers[1].embeddings.numpy()
    assert not np.allclose(after[[1, 2, 3, 4]], before[[1, 2, 3, 4]])
    np.testing.assert_array_equal(after[[0, 5, 6, 7, 8, 9]], before[[0, 5, 6, 7, 8, 9]])


def test_a_saved_model_resumes_with_its_lazy_adam_state(tmp_path):
    x, y = np.array([[1, 2, 3], [3, 4, 4]] * 4), np.ones((8, 1))
    model = _embedding_model()
    model.fit(x, y, batch_size=4, epochs=1, verbose=0)
    model.save(tmp_path / "lazy.keras")
    loaded = keras.models.load_model(tmp_path / "lazy.keras")
    assert isinstance(loaded.optimizer, LazyAdam)
    for m in (model, loaded):
        m.fit(x, y, batch_size=4, epochs=1, verbose=0, shuffle=False)
    for a, b in zip(model.get_weights(), loaded.get_weights(), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def test_the_hub_classifier_is_compiled_with_lazy_adam_and_fine_tunes_the_used_rows_only():
    keras.utils.set_random_seed(3)
    model = build_sentiment_classifier(STANDIN_HANDLE, 8, trainable=True)
    assert isinstance(compile_sentiment_classifier(model, 0.05).optimizer, LazyAdam)
    table = model.layers[0].weights[0]
    before = table.numpy()
    reviews = tf.constant(["a wonderful film", "a dull film"] * 4)
    model.fit(reviews, np.array([[1.0], [0.0]] * 4), batch_size=4, epochs=2, verbose=0)
    changed = np.flatnonzero(np.any(table.numpy() != before, axis=1))
    assert 1 <= len(changed) <= 4   # the rows of "a", "wonderful", "dull", "film" (or their buckets)
