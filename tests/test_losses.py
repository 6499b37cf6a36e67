"""seqlab.training.losses: padding is ignored; values match a hand computation and Keras."""

from __future__ import annotations

import keras
import numpy as np
import pytest

from seqlab.training import MaskedAccuracy, MaskedSparseCategoricalCrossentropy

rng = np.random.default_rng(1)
Y_TRUE = np.array([[4, 2, 1, 0, 0], [3, 3, 2, 2, 1]], "int32")
LOGITS = rng.normal(size=(2, 5, 6)).astype("float32")
REAL = Y_TRUE != 0


def _log_softmax(x):
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def test_loss_is_the_mean_over_real_tokens():
    log_probs = _log_softmax(LOGITS)
    expected = -np.take_along_axis(log_probs, Y_TRUE[..., None], -1)[..., 0][REAL].mean()
    np.testing.assert_allclose(MaskedSparseCategoricalCrossentropy()(Y_TRUE, LOGITS), expected, rtol=1e-5)


def test_padding_positions_do_not_matter():
    changed = LOGITS.copy()
    changed[~REAL] = 100 * rng.normal(size=changed[~REAL].shape)
    loss = MaskedSparseCategoricalCrossentropy()
    np.testing.assert_allclose(loss(Y_TRUE, changed), loss(Y_TRUE, LOGITS), rtol=1e-6)
    accuracies = []
    for logits in (changed, LOGITS):
        metric = MaskedAccuracy()
        metric.update_state(Y_TRUE, logits)
        accuracies.append(float(metric.result()))
    assert accuracies[0] == accuracies[1]


def test_without_padding_it_equals_keras_sparse_crossentropy():
    y_true = np.where(Y_TRUE == 0, 1, Y_TRUE)
    keras_loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)(y_true, LOGITS)
    np.testing.assert_allclose(MaskedSparseCategoricalCrossentropy()(y_true, LOGITS), keras_loss, rtol=1e-5)


def test_label_smoothing_equals_keras_categorical_crossentropy_with_smoothing():
    y_true = np.where(Y_TRUE == 0, 1, Y_TRUE)
    one_hot = keras.ops.one_hot(y_true, 6)
    expected = keras.losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.1)(one_hot, LOGITS)
    ours = MaskedSparseCategoricalCrossentropy(label_smoothing=0.1)(y_true, LOGITS)
    np.testing.assert_allclose(ours, expected, rtol=1e-5)
    with pytest.raises(ValueError):
        MaskedSparseCategoricalCrossentropy(label_smoothing=1.0)


def test_probabilities_give_the_same_loss_as_logits():
    probabilities = keras.ops.softmax(LOGITS)
    np.testing.assert_allclose(MaskedSparseCategoricalCrossentropy(from_logits=False)(Y_TRUE, probabilities),
                               MaskedSparseCategoricalCrossentropy()(Y_TRUE, LOGITS), rtol=1e-4)


def test_accuracy_counts_real_tokens_only():
    predictions = np.zeros((2, 5, 6), "float32")
    predicted_ids = np.array([[4, 0, 1, 0, 0], [3, 3, 2, 0, 0]])  # 2/3 and 3/5 right
    np.put_along_axis(predictions, predicted_ids[..., None], 1.0, -1)
    metric = MaskedAccuracy()
    metric.update_state(Y_TRUE, predictions)
    np.testing.assert_allclose(metric.result(), 5 / 8)
    metric.reset_state()
    metric.update_state(Y_TRUE[:1], predictions[:1])
    metric.update_state(Y_TRUE[1:], predictions[1:])
    np.testing.assert_allclose(metric.result(), 5 / 8)  # exact, not the mean of 2/3 and 3/5
    metric.reset_state()
    assert float(metric.result()) == 0.0


def test_all_padding_gives_zero_not_nan():
    zeros = np.zeros((1, 3), "int32")
    assert float(MaskedSparseCategoricalCrossentropy()(zeros, LOGITS[:1, :3])) == 0.0
    metric = MaskedAccuracy()
    metric.update_state(zeros, LOGITS[:1, :3])
    assert float(metric.result()) == 0.0


def test_loss_and_metric_serialize():
    loss = MaskedSparseCategoricalCrossentropy(label_smoothing=0.2)
    again = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(loss))
    assert isinstance(again, MaskedSparseCategoricalCrossentropy) and again.label_smoothing == 0.2
    assert again.get_config() == loss.get_config()
    metric = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(MaskedAccuracy()))
    assert isinstance(metric, MaskedAccuracy)


def test_reduction_is_part_of_the_definition():
    assert MaskedSparseCategoricalCrossentropy().reduction == "sum"
    with pytest.raises(ValueError, match="real tokens of the global batch"):
        MaskedSparseCategoricalCrossentropy(reduction="sum_over_batch_size")


def test_token_weights_multiply_each_tokens_loss():
    weights = np.where(REAL, 1.0, 0.0).astype("float32")
    weights[0, 0] = 0.0  # drop one real token's loss; the count of real tokens stays 8
    log_probs = _log_softmax(LOGITS)
    token_losses = -np.take_along_axis(log_probs, Y_TRUE[..., None], -1)[..., 0]
    expected = (token_losses * weights).sum() / REAL.sum()
    ours = MaskedSparseCategoricalCrossentropy()(Y_TRUE, LOGITS, sample_weight=weights)
    np.testing.assert_allclose(ours, expected, rtol=1e-5)


def test_the_mean_is_over_the_whole_batch_not_per_sentence():
    # Sentence 0 has 3 real tokens, sentence 1 has 5: a per-sentence mean would weigh sentence
    # 0's tokens 5/3 times as much. Splitting the batch in two and adding the halves' shares
    # (what the replicas of a tf.distribute strategy do) must give the whole batch's loss.
    log_probs = _log_softmax(LOGITS)
    token_losses = -np.take_along_axis(log_probs, Y_TRUE[..., None], -1)[..., 0]
    per_sentence = np.mean([token_losses[i][REAL[i]].mean() for i in range(2)])
    whole = float(MaskedSparseCategoricalCrossentropy()(Y_TRUE, LOGITS))
    assert abs(whole - per_sentence) > 1e-3
    np.testing.assert_allclose(whole, token_losses[REAL].mean(), rtol=1e-5)


def test_a_constant_token_count_weighs_every_token_alike_across_batches():
    rng = np.random.default_rng(1)
    short = np.array([[3, 2, 0, 0, 0]] * 2)                 # 4 real tokens
    long = np.array([[3, 2, 1, 3, 2]] * 2)                  # 10 real tokens
    per_batch = MaskedSparseCategoricalCrossentropy()
    constant = MaskedSparseCategoricalCrossentropy(tokens_per_batch=7.0)
    for y_true in (short, long):
        logits = rng.normal(size=(*y_true.shape, 4)).astype("float32")
        real = np.count_nonzero(y_true)
        # the per-batch mean times this batch's tokens is the token sum; so is constant x 7
        np.testing.assert_allclose(float(constant(y_true, logits)) * 7.0,
                                   float(per_batch(y_true, logits)) * real, rtol=1e-6)
    same = MaskedSparseCategoricalCrossentropy(tokens_per_batch=4.0)
    logits = rng.normal(size=(2, 5, 4)).astype("float32")
    np.testing.assert_allclose(float(same(short, logits)), float(per_batch(short, logits)),
                               rtol=1e-6)


def test_a_constant_token_count_round_trips_and_must_be_positive():
    loss = MaskedSparseCategoricalCrossentropy(tokens_per_batch=12.5)
    restored = MaskedSparseCategoricalCrossentropy.from_config(loss.get_config())
    assert restored.tokens_per_batch == 12.5
    assert MaskedSparseCategoricalCrossentropy().get_config()["tokens_per_batch"] is None
    for bad in (0, -3.0):
        with pytest.raises(ValueError, match="tokens_per_batch must be a positive number"):
            MaskedSparseCategoricalCrossentropy(tokens_per_batch=bad)
