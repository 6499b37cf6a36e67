"""The exercise checks of notebooks 01 and 02 accept right answers and explain wrong ones."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from seqlab.course import checks
from seqlab.course.checks import CheckFailed
from seqlab.layers import HubTextEmbedding


def build_frozen(handle):
    model = keras.Sequential([
        keras.Input(shape=(), dtype="string"),
        HubTextEmbedding(handle, trainable=False),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),
    ])
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="binary_crossentropy",
                  metrics=["accuracy"])
    return model


def unfinished(*args):
    raise NotImplementedError("Exercise: replace this line with your solution.")


# ------------------------------------------------------------------ 01, exercise 2


def test_accuracy_function_passes():
    def accuracy(probabilities, labels):
        predicted = np.asarray(probabilities).reshape(-1) > 0.5
        return float(np.mean(predicted == np.asarray(labels)))

    checks.check_accuracy_function(accuracy)


@pytest.mark.parametrize("wrong, message", [
    (lambda p, y: float(np.mean((np.asarray(p).reshape(-1) >= 0.5) == y)), "differs"),
    (lambda p, y: float(np.mean(np.asarray(p) > 0.5)), "differs"),   # forgot the labels
    (lambda p, y: [0.5], "one number"),
    (unfinished, "placeholder"),
])
def test_accuracy_function_explains_what_is_wrong(wrong, message):
    with pytest.raises(CheckFailed, match=message):
        checks.check_accuracy_function(wrong)


# ------------------------------------------------------------------ 01, exercise 1 (shuffled words)


def shuffle_words(review, rng):
    return " ".join(rng.permutation(review.split(" ")))


@pytest.fixture(scope="module")
def frozen_on_the_stand_in():
    from seqlab.layers import STANDIN_HANDLE

    keras.utils.set_random_seed(0)
    return build_frozen(STANDIN_HANDLE)


def measured_with(model, shuffle=shuffle_words):
    def accuracy_with_shuffled_words(texts, labels, seed):
        rng = np.random.default_rng(seed)
        shuffled = tf.constant([shuffle(text, rng) for text in texts])
        return float(model.evaluate(shuffled, np.asarray(labels), verbose=0)[1])
    return accuracy_with_shuffled_words


def predictor(model):
    return lambda texts: model.predict(tf.constant(list(texts)), verbose=0)


TEXTS = ["A wonderful film with a brilliant cast .", "Dull , tedious and far too long .",
         "Not bad at all , clever and moving .", "The plot is awful and the ending is flat ."]
TEXT_LABELS = [1, 0, 1, 0]


def test_shuffled_words_passes_and_reports_a_bag_of_words(frozen_on_the_stand_in, capsys):
    model = frozen_on_the_stand_in
    checks.check_shuffled_words(shuffle_words, measured_with(model), predictor(model), TEXTS,
                                TEXT_LABELS)
    out = capsys.readouterr().out
    assert "passed" in out and "4 test reviews" in out
    # sqrtn sums the token vectors: the order cannot matter beyond float rounding.
    largest = float(out.split("probability: ")[1].split(".\n")[0].rstrip("."))
    assert largest < 1e-5


def test_shuffled_words_uses_at_most_limit_texts(frozen_on_the_stand_in, capsys):
    model = frozen_on_the_stand_in
    checks.check_shuffled_words(shuffle_words, measured_with(model), predictor(model), TEXTS,
                                TEXT_LABELS, limit=2)
    assert "2 test reviews" in capsys.readouterr().out


@pytest.mark.parametrize("shuffle, accuracy, message", [
    (unfinished, None, "placeholder"),
    (lambda review, rng: review, None, "unchanged"),
    (lambda review, rng: " ".join(rng.permutation(review.lower().split())), None,
     "not the same tokens"),
    (lambda review, rng: " ".join(rng.permutation(list(review))), None, "not the same tokens"),
    # any white space is not the module's split: a tab or a line break stays inside its token
    (lambda review, rng: " ".join(rng.permutation(review.split())), None, "space character"),
    (lambda review, rng: review.split()[::-1], None, "one string"),
    (shuffle_words, lambda texts, labels, seed: 1.5, "between 0 and 1"),
    (shuffle_words, "wrong", "give"),
])
def test_shuffled_words_explains_what_is_wrong(frozen_on_the_stand_in, shuffle, accuracy,
                                               message):
    model = frozen_on_the_stand_in
    if accuracy is None:
        accuracy = measured_with(model, shuffle)
    elif accuracy == "wrong":
        right = measured_with(model)
        accuracy = lambda texts, labels, seed: (right(texts, labels, seed) + 0.5) % 1.0  # noqa: E731
    with pytest.raises(CheckFailed, match=message):
        checks.check_shuffled_words(shuffle, accuracy, predictor(model), TEXTS, TEXT_LABELS)


# ------------------------------------------------------------------ 02, exercise 1


def _runs(**overrides):
    runs = {
        "one tenth": {"learning_rate": 1e-4, "val_accuracy": [0.7, 0.72], "embedding_change": 0.002},
        "original": {"learning_rate": 1e-3, "val_accuracy": [0.7, 0.69], "embedding_change": 0.02},
    }
    for key, value in overrides.items():
        name, field = key.split("__")
        runs[name.replace("_", " ")][field] = value
    return runs


def test_learning_rate_comparison_passes(capsys):
    checks.check_learning_rate_comparison(_runs())
    out = capsys.readouterr().out
    assert "10.0 times" in out and "0.720" in out


def test_learning_rate_comparison_calls_a_function_that_returns_the_runs():
    checks.check_learning_rate_comparison(lambda: _runs())
    with pytest.raises(CheckFailed, match="placeholder"):
        checks.check_learning_rate_comparison(unfinished)


@pytest.mark.parametrize("runs, message", [
    ({}, "must have the entries"),
    ({"one tenth": {}, "original": {}}, "lacks"),
    (_runs(original__learning_rate=1e-4), "ten times"),
    (_runs(original__val_accuracy=[0.7]), "same number of epochs"),
    (_runs(original__val_accuracy=[70, 69]), "one per epoch"),
    (_runs(original__embedding_change=0.001), "move more"),
    (_runs(one_tenth__embedding_change=0.0), "move more"),
])
def test_learning_rate_comparison_explains_what_is_wrong(runs, message):
    with pytest.raises(CheckFailed, match=message):
        checks.check_learning_rate_comparison(runs)
