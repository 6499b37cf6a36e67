"""The RNN translator under mixed precision (issue 10.1), on a CPU: logits, training,
decoding and export.

Under ``mixed_float16`` / ``mixed_bfloat16`` the variables stay float32 and the layers compute
in float16 / bfloat16. Every test forces a policy with the ``policy`` fixture, which puts the
global policy back afterwards, and compares with a float32 twin holding the same weights. The
layers themselves (the RNN attentions, Bahdanau's decoder) are checked under both policies by
the layer contract (tests/test_layer_contract.py); ``masked_softmax`` in every dtype by
tests/test_layers_masking.py.

Tolerances. A float16 number carries 10 mantissa bits (machine epsilon ``2**-10`` ~ 9.8e-4),
bfloat16 7 bits (``2**-7`` ~ 7.8e-3); rounding to them costs at most half of that, relative.
An attention output passes through about three such roundings, hence ``4 * eps`` for one
attention layer (the layer contract's bound); the translator stacks more layers (embedding, a
bidirectional GRU, the decoder GRU, attention, two dense layers), so its logits get
``16 * eps`` of their scale, and the attention weights a decoder returns ``4 * eps``.
"""

from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf

from seqlab.data import load_translation
from seqlab.decoding import beam_search, greedy_decode, translate
from seqlab.export import export_translator, translate_with_export
from seqlab.lessons.nb04 import build_rnn_translator
from seqlab.training import MaskedSparseCategoricalCrossentropy

ATTENTION_CHOICES = ("none", "bahdanau", "luong-dot", "luong-general", "luong-concat")
EPS = {"float32": 2.0**-23, "float16": 2.0**-10, "bfloat16": 2.0**-7}
POLICIES = ["mixed_float16", "mixed_bfloat16"]


@pytest.fixture(params=POLICIES)
def policy(request):
    """Forces a mixed policy for one test; the global policy is restored afterwards."""
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy(request.param)
    yield keras.config.dtype_policy()
    keras.config.set_dtype_policy(previous)


def as_float32(tensor):
    return np.asarray(keras.ops.cast(tensor, "float32"))


def in_float32(build):
    """``build()`` under the float32 policy, whatever the test forced."""
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy("float32")
    try:
        return build()
    finally:
        keras.config.set_dtype_policy(previous)


def assert_close(got, want, dtype, factor):
    got, want = as_float32(got), np.asarray(want, "float32")
    tolerance = factor * EPS[dtype] * max(float(np.abs(want).max()), 1.0)
    np.testing.assert_allclose(got, want, rtol=0, atol=tolerance)


# ---- the translator --------------------------------------------------------------------------

SOURCE = np.array([[5, 6, 7, 8, 0, 0], [9, 4, 3, 0, 0, 0], [0, 0, 0, 0, 0, 0]], "int32")
TARGET_IN = np.array([[1, 5, 6, 0], [1, 7, 0, 0], [1, 0, 0, 0]], "int32")
TARGET_OUT = np.array([[5, 6, 2, 0], [7, 2, 0, 0], [2, 0, 0, 0]], "int32")


def tiny(attention):
    keras.utils.set_random_seed(0)
    return build_rnn_translator(12, 10, embedding_dim=8, units=16, attention=attention)


@pytest.mark.parametrize("attention", ATTENTION_CHOICES)
def test_translator_is_finite_and_close_to_float32(attention, policy):
    def build_reference():
        model = tiny(attention)
        logits = np.asarray(model((SOURCE, TARGET_IN)))
        return model.get_weights(), logits

    weights32, logits32 = in_float32(build_reference)
    model = tiny(attention)
    model.build()
    model.set_weights(weights32)
    loss_function = MaskedSparseCategoricalCrossentropy()
    with tf.GradientTape() as tape:
        logits = model((SOURCE, TARGET_IN), training=True)
        loss = loss_function(TARGET_OUT, logits)
    assert logits.dtype == policy.compute_dtype
    gradients = tape.gradient(loss, model.trainable_variables)
    assert np.isfinite(float(loss))
    assert all(g is not None for g in gradients)
    # Embedding gradients come as IndexedSlices: made dense before the check.
    assert all(np.isfinite(as_float32(tf.convert_to_tensor(g))).all() for g in gradients)
    assert_close(logits, logits32, policy.compute_dtype, 16)


def test_a_short_fit_under_mixed_float16_keeps_the_loss_finite():
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy("mixed_float16")
    try:
        model = tiny("bahdanau")
        model.compile(optimizer=keras.optimizers.Adam(0.05),
                      loss=MaskedSparseCategoricalCrossentropy())
        # Keras wraps the optimizer for float16 so that small gradients survive the cast.
        assert isinstance(model.optimizer, keras.optimizers.LossScaleOptimizer)
        history = model.fit((SOURCE, TARGET_IN), TARGET_OUT, epochs=4, verbose=0)
    finally:
        keras.config.set_dtype_policy(previous)
    losses = history.history["loss"]
    assert np.all(np.isfinite(losses))
    assert losses[-1] < losses[0]


# ---- decoding and export under a forced policy -----------------------------------------------


@pytest.fixture(scope="module")
def sample():
    return load_translation("sample", batch_size=16, max_length=10)


def test_decoding_and_export_work_under_the_policy(policy, sample, tmp_path):
    keras.utils.set_random_seed(3)
    model = build_rnn_translator(sample.source_vocab_size, sample.target_vocab_size,
                                 embedding_dim=8, units=16, attention="bahdanau")
    (source, _), _ = next(iter(sample.test))
    source = np.concatenate([np.asarray(source)[:4], np.zeros((1, source.shape[1]), "int32")])
    tokens, attention = greedy_decode(model, source, sample.start_id, sample.end_id, 6)
    assert attention.dtype == np.float32 and np.isfinite(attention).all()
    real = tokens[:4] != 0
    np.testing.assert_allclose(attention[:4][real].sum(-1), 1.0, atol=4 * EPS[policy.compute_dtype])
    assert np.all(attention[4] == 0.0)  # the empty source
    beam, beam_attention, scores = beam_search(model, source, sample.start_id, sample.end_id, 6,
                                               beam_width=2)
    assert beam.shape[0] == 5 and np.isfinite(scores).all() and np.isfinite(beam_attention).all()

    texts = [english for english, _ in sample.test_pairs[:4]] + ["I am hungry."]
    expected = translate(model, texts, sample.source_vectorizer, sample.target_vectorizer,
                         max_length=6)
    export_translator(model, sample.source_vectorizer, sample.target_vectorizer,
                      tmp_path / "export", max_length=6)
    exported = tf.saved_model.load(str(tmp_path / "export"))
    assert translate_with_export(exported, texts) == expected.texts


def test_the_sentiment_classifier_predicts_under_the_policy_as_in_float32(policy):
    """Notebook 01's classifier: the TF-Hub module computes in float32 (its SavedModel graph),
    the two dense layers under the policy; two roundings before the sigmoid, whose slope is at
    most 1/4, so ``4 * eps`` of a probability is a generous bound."""
    from seqlab.layers import STANDIN_HANDLE
    from seqlab.lessons.nb01 import build_sentiment_classifier, predict_sentiment

    reviews = ["A wonderful, moving film.", "Ça m'a plu: très drôle ☺", "", "dull"]
    keras.config.set_dtype_policy("float32")
    keras.utils.set_random_seed(0)
    reference = build_sentiment_classifier(STANDIN_HANDLE, 8)
    expected = predict_sentiment(reference, reviews)
    keras.config.set_dtype_policy(policy.name)
    model = build_sentiment_classifier(STANDIN_HANDLE, 8)
    model.set_weights(reference.get_weights())
    got = predict_sentiment(model, reviews)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, expected, rtol=0, atol=4 * EPS[policy.compute_dtype])
