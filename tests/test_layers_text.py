"""Reviews as code points (TextFromCodepoints, text_as_codepoints) and Adam on a word's summed rows.

Both exist for the sentiment classifier under several replicas (issue 15); the two-replica
comparisons themselves are in tests/test_distribute.py. Here: each piece on one device.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from seqlab.distribute import text_as_codepoints
from seqlab.layers import STANDIN_HANDLE, TextFromCodepoints
from seqlab.lessons.nb01 import build_sentiment_classifier, predict_sentiment
from seqlab.training import FusedAdam, LazyAdam, compile_sentiment_classifier

REVIEWS = ["A wonderful, moving film.", "Ça m'a plu: très drôle ☺", "", "dull"]


def test_code_points_round_trip_to_the_same_strings():
    codes = text_as_codepoints(tf.constant(REVIEWS))
    # (batch, longest review in characters), 0-padded
    assert codes.shape == (4, max(len(r) for r in REVIEWS)) and codes.dtype == tf.int32
    assert codes.numpy()[0, :3].tolist() == [ord("A"), ord(" "), ord("w")]
    assert codes.numpy()[3, 4:].tolist() == [0] * (codes.shape[1] - 4)
    text = TextFromCodepoints()(codes)
    assert text.shape == (4,) and text.dtype == tf.string
    assert [t.decode("utf-8") for t in text.numpy()] == REVIEWS


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\0")),
                min_size=1, max_size=5))
def test_any_text_without_nul_round_trips(reviews):
    text = TextFromCodepoints()(text_as_codepoints(tf.constant(reviews)))
    assert [t.decode("utf-8") for t in text.numpy()] == reviews


def test_a_dataset_of_reviews_and_labels_keeps_its_labels():
    data = tf.data.Dataset.from_tensor_slices((REVIEWS, [1.0, 1.0, 0.0, 0.0])).batch(3)
    batches = list(text_as_codepoints(data))
    longest = max(len(r) for r in REVIEWS[:3])
    assert [tuple(x.shape) for x, _ in batches] == [(3, longest), (1, 4)]
    np.testing.assert_array_equal(np.concatenate([y for _, y in batches]), [1, 1, 0, 0])
    only_text = list(text_as_codepoints(tf.data.Dataset.from_tensor_slices(REVIEWS).batch(4)))
    assert only_text[0].shape == (4, longest)


def test_bad_input_gets_one_clear_error():
    with pytest.raises(ValueError, match="Batch the dataset first"):
        text_as_codepoints(tf.constant("one review, unbatched"))
    with pytest.raises(ValueError, match=r"batches of strings of shape \(batch,\)"):
        text_as_codepoints(tf.constant([1, 2]))
    with pytest.raises(ValueError, match="expects Unicode code points"):
        TextFromCodepoints()(tf.constant(["a string"]))
    with pytest.raises(ValueError, match="expects Unicode code points"):
        TextFromCodepoints()(tf.constant([[1.5]]))
    with pytest.raises(ValueError, match="text_input must be"):
        build_sentiment_classifier(STANDIN_HANDLE, text_input="bytes")


@pytest.mark.parametrize("policy", ["float32", "mixed_float16", "mixed_bfloat16"])
def test_the_code_point_model_predicts_what_the_string_model_does(policy):
    keras.config.set_dtype_policy(policy)
    try:
        keras.utils.set_random_seed(0)
        strings = build_sentiment_classifier(STANDIN_HANDLE, 8)
        codepoints = build_sentiment_classifier(STANDIN_HANDLE, 8, text_input="codepoints")
        codepoints.set_weights(strings.get_weights())  # the code-point layer has no weights
        assert not _reads_codepoints(strings) and _reads_codepoints(codepoints)
        expected = predict_sentiment(strings, REVIEWS)
        np.testing.assert_array_equal(predict_sentiment(codepoints, REVIEWS), expected)
        assert np.all(np.isfinite(expected))
    finally:
        keras.config.set_dtype_policy("float32")


def test_the_code_point_model_saves_and_loads(tmp_path):
    model = build_sentiment_classifier(STANDIN_HANDLE, 8, text_input="codepoints")
    model.save(tmp_path / "m.keras")
    reloaded = keras.models.load_model(tmp_path / "m.keras")
    assert isinstance(reloaded.layers[0], TextFromCodepoints)
    np.testing.assert_allclose(predict_sentiment(reloaded, REVIEWS),
                               predict_sentiment(model, REVIEWS), rtol=1e-6)


def _reads_codepoints(model):
    return isinstance(model.layers[0], TextFromCodepoints)


def test_one_replica_keeps_strings_under_auto():
    strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
    with strategy.scope():
        assert not _reads_codepoints(build_sentiment_classifier(STANDIN_HANDLE, 8))


def _apply(optimizer, gradient, steps=3):
    table = keras.Variable(np.ones((5, 2), "float32"))
    optimizer.build([table])
    for _ in range(steps):
        optimizer.apply([gradient], [table])
    return table.numpy()


def test_fused_adam_is_adam_on_the_dense_gradient():
    # Word 1's gradient arrives in two rows, as from two replicas: 0.5 + 1.5 = 2.0.
    rows = tf.IndexedSlices(tf.constant([[0.5, -1.0], [1.5, 0.0], [3.0, 1.0]]),
                            tf.constant([1, 1, 3]), tf.constant([5, 2]))
    dense = tf.convert_to_tensor(rows)
    textbook = _apply(keras.optimizers.Adam(0.1), dense)
    np.testing.assert_allclose(_apply(FusedAdam(0.1), rows), textbook, rtol=1e-5)
    # Keras's Adam squares the two rows apart (0.5² + 1.5² instead of 2²): a different update.
    assert not np.allclose(_apply(keras.optimizers.Adam(0.1), rows), textbook, rtol=1e-4)


def test_fused_adam_equals_keras_adam_on_one_device_for_the_hub_model():
    data = tf.data.Dataset.from_tensor_slices((REVIEWS * 4, [1.0, 0.0] * 8)).batch(8)
    weights = {}
    for name, optimizer in (("keras", keras.optimizers.Adam), ("summed", FusedAdam)):
        keras.utils.set_random_seed(3)
        model = build_sentiment_classifier(STANDIN_HANDLE, 8, trainable=True)
        model.compile(optimizer(0.05), "binary_crossentropy")
        model.fit(data, epochs=2, verbose=0, shuffle=False)
        weights[name] = model.get_weights()
    for a, b in zip(weights["keras"], weights["summed"], strict=True):
        np.testing.assert_allclose(a, b, atol=1e-5)  # the fused kernel rounds otherwise
    compiled = compile_sentiment_classifier(build_sentiment_classifier(STANDIN_HANDLE, 8))
    assert isinstance(compiled.optimizer, LazyAdam)
