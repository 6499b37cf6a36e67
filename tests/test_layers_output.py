"""seqlab.layers.RealTokenDense: equal to keras.layers.Dense at the real positions, zeros at the
padded ones, and the same masked loss and gradients, so training is unchanged."""

from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf

from seqlab.layers import RealTokenDense
from seqlab.training.losses import MaskedSparseCategoricalCrossentropy

RNG = np.random.default_rng(0)
X = RNG.normal(size=(3, 6, 8)).astype("float32")                     # (B, T, d)
MASK = np.array([[1, 1, 1, 1, 0, 0], [1, 0, 0, 0, 0, 0], [1] * 6], bool)  # (B, T)
TARGETS = np.where(MASK, RNG.integers(1, 11, MASK.shape), 0)          # 0 = padding

#: The same float32 products summed in the same order give the same bits; a 2-D and a 3-D
#: matmul kernel may sum in another order: a few float32 ulps of O(1) logits.
ATOL = 1e-5


def twins(units=11, **kwargs):
    """A RealTokenDense and a keras Dense holding the same weights."""
    ours, keras_dense = RealTokenDense(units, **kwargs), keras.layers.Dense(units)
    ours.build(X.shape)
    keras_dense.build(X.shape)
    keras_dense.set_weights(ours.get_weights())
    return ours, keras_dense


def test_equal_to_keras_dense_at_real_positions_and_zero_at_padding():
    ours, theirs = twins()
    got, want = np.asarray(ours(X, padding_mask=MASK)), np.asarray(theirs(X))
    np.testing.assert_allclose(got[MASK], want[MASK], atol=ATOL)
    assert np.all(got[~MASK] == 0.0)


@pytest.mark.parametrize("kwargs, mask", [({}, None), ({"skip_padding": False}, MASK)])
def test_without_a_mask_or_with_skip_padding_off_it_is_dense(kwargs, mask):
    ours, theirs = twins(**kwargs)
    np.testing.assert_allclose(np.asarray(ours(X, padding_mask=mask)), np.asarray(theirs(X)),
                               atol=ATOL)


def test_the_masked_loss_and_its_gradients_are_those_of_dense():
    ours, theirs = twins()
    loss = MaskedSparseCategoricalCrossentropy(from_logits=True, label_smoothing=0.1)
    values, gradients = [], []
    for layer, kwargs in ((ours, {"padding_mask": MASK}), (theirs, {})):
        with tf.GradientTape() as tape:
            value = loss(TARGETS, layer(X, **kwargs))
        values.append(float(value))
        gradients.append([np.asarray(g) for g in tape.gradient(value, layer.trainable_weights)])
    assert values[0] == pytest.approx(values[1], abs=ATOL)
    for got, want in zip(*gradients, strict=True):
        np.testing.assert_allclose(got, want, atol=ATOL)


def test_it_trains_in_a_model_with_a_sequence_axis_of_none():
    ids = keras.Input((None,), dtype="int32")
    hidden = keras.layers.Embedding(12, 8)(ids)
    logits = RealTokenDense(12)(hidden, padding_mask=keras.ops.not_equal(ids, 0))
    model = keras.Model(ids, logits)
    model.compile("adam", MaskedSparseCategoricalCrossentropy(from_logits=True))
    for width in (4, 6):  # batches of two widths: one trace serves both
        history = model.fit(TARGETS[:, :width], TARGETS[:, :width], epochs=2, verbose=0)
        assert np.all(np.isfinite(history.history["loss"]))


def test_the_config_keeps_skip_padding():
    layer = RealTokenDense(5, skip_padding=False, name="logits")
    clone = RealTokenDense.from_config(layer.get_config())
    assert clone.skip_padding is False and clone.units == 5 and clone.name == "logits"
