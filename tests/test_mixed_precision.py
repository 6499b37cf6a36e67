"""The RNN attentions and the RNN translator under mixed precision (issue 10.1), on a CPU.

Under ``mixed_float16`` / ``mixed_bfloat16`` the variables stay float32 and the layers compute
in float16 / bfloat16. Every test forces a policy with the ``policy`` fixture, which puts the
global policy back afterwards, and compares with a float32 twin holding the same weights.

Tolerances. A float16 number carries 10 mantissa bits (machine epsilon ``2**-10`` ~ 9.8e-4),
bfloat16 7 bits (``2**-7`` ~ 7.8e-3); rounding to them costs at most half of that, relative.
An attention output passes through about three such roundings (inputs, projections, context)
whose errors add up, and the softmax runs in float32 (``masked_softmax``), so we allow
``4 * eps`` of the float32 output's largest magnitude: 3.9e-3 (float16), 3.1e-2 (bfloat16);
measured: at most 6.6e-4 and 4.0e-3. The translator stacks more layers (embedding, a
bidirectional GRU, the decoder GRU, attention, two dense layers), so its logits get
``16 * eps`` of their scale.
"""

from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from seqlab.data import load_translation
from seqlab.decoding import beam_search, greedy_decode, translate
from seqlab.export import export_translator, translate_with_export
from seqlab.layers import BahdanauAttention, LuongAttention
from seqlab.layers.masking import masked_softmax
from seqlab.models import Seq2SeqTranslator
from seqlab.models.seq2seq import ATTENTION_CHOICES
from seqlab.training import MaskedSparseCategoricalCrossentropy

EPS = {"float32": 2.0**-23, "float16": 2.0**-10, "bfloat16": 2.0**-7}
POLICIES = ["mixed_float16", "mixed_bfloat16"]

rng = np.random.default_rng(10)
QUERY = rng.normal(size=(4, 3, 16)).astype("float32")   # (batch, Tq, d)
VALUES = rng.normal(size=(4, 7, 16)).astype("float32")  # (batch, Tv, d)
#: Row 3 is all padding (an empty source): its weights and context must be 0, not NaN.
MASK = np.arange(7)[None, :] < np.array([[7], [4], [1], [0]])


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


# ---- the masking primitive -------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_masked_softmax_in_every_dtype(dtype):
    scores = keras.ops.cast(rng.normal(scale=3.0, size=(4, 3, 7)), dtype)
    weights = masked_softmax(scores, MASK[:, None, :])  # (batch, Tq, Tv)
    assert weights.dtype == scores.dtype
    weights = as_float32(weights)
    assert np.isfinite(weights).all()
    assert np.all(weights[~np.broadcast_to(MASK[:, None, :], weights.shape)] == 0.0)
    np.testing.assert_allclose(weights[:3].sum(-1), 1.0, atol=4 * EPS[dtype])
    assert np.all(weights[3] == 0.0)  # fully padded row: zeros, not NaN or 1/7
    # float16 has no room for the -1e9 of a penalty: the where-select must not need it.
    big = keras.ops.cast(np.full((1, 3), 60000.0), dtype)
    assert np.isfinite(as_float32(masked_softmax(big, np.array([[True, False, True]])))).all()


def test_masked_softmax_without_mask_is_softmax():
    scores = rng.normal(size=(2, 5)).astype("float32")
    expected = np.exp(scores) / np.exp(scores).sum(-1, keepdims=True)
    np.testing.assert_allclose(masked_softmax(scores), expected, atol=1e-6)


@settings(max_examples=25, deadline=None)
@given(lengths=st.lists(st.integers(0, 5), min_size=1, max_size=4), extra=st.integers(1, 4),
       dtype=st.sampled_from(["float32", "float16", "bfloat16"]))
def test_appending_padding_leaves_real_positions_unchanged(lengths, extra, dtype):
    scores = rng.normal(scale=2.0, size=(len(lengths), 5)).astype("float32")
    mask = np.arange(5)[None, :] < np.array(lengths)[:, None]
    padded_scores = np.concatenate([scores, rng.normal(size=(len(lengths), extra))], 1)
    padded_mask = np.concatenate([mask, np.zeros((len(lengths), extra), bool)], 1)
    weights = as_float32(masked_softmax(keras.ops.cast(scores, dtype), mask))
    padded = as_float32(masked_softmax(keras.ops.cast(padded_scores, dtype), padded_mask))
    # Not bit-equal: the two softmaxes reduce rows of different lengths, so a vectorised CPU
    # kernel may sum them in another order (measured: 1 float32 ulp, 7.45e-09, on one CPU), and
    # casting back to float16/bfloat16 can then flip the last bit of that dtype. Weights lie in
    # [0, 1], so 2 units in the last place of the compute dtype bound both effects; a padding
    # leak would move a weight by about padded_weight/(1 + padded_weight), far above that.
    assert_close(padded[:, :5], weights, dtype, 2)
    assert np.all(padded[:, 5:] == 0.0)  # a where-select, exact by construction


# ---- the attention layers --------------------------------------------------------------------

LAYERS = {"bahdanau": lambda: BahdanauAttention(16), "luong-dot": lambda: LuongAttention("dot"),
          "luong-general": lambda: LuongAttention("general")}


@pytest.mark.parametrize("kind", list(LAYERS))
def test_attention_is_finite_and_close_to_float32(kind, policy):
    def build_reference():
        keras.utils.set_random_seed(1)
        layer = LAYERS[kind]()
        context, weights = layer(QUERY, VALUES, mask=MASK, return_attention_scores=True)
        return layer.get_weights(), context, weights

    weights32, context32, attention32 = in_float32(build_reference)
    layer = LAYERS[kind]()
    layer(QUERY, VALUES, mask=MASK)
    layer.set_weights(weights32)
    assert all(v.dtype == "float32" for v in layer.weights)  # mixed: float32 variables
    context, weights = layer(QUERY, VALUES, mask=MASK, return_attention_scores=True)
    assert context.dtype == policy.compute_dtype and weights.dtype == policy.compute_dtype
    context, weights = as_float32(context), as_float32(weights)
    assert np.isfinite(context).all() and np.isfinite(weights).all()
    assert np.all(weights[3] == 0.0) and np.all(context[3] == 0.0)  # the empty source
    assert_close(context, context32, policy.compute_dtype, 4)
    assert_close(weights, attention32, policy.compute_dtype, 4)


@pytest.mark.parametrize("kind", list(LAYERS))
def test_attention_gradients_are_finite(kind, policy):
    layer = LAYERS[kind]()
    query = tf.Variable(QUERY)
    with tf.GradientTape() as tape:
        context = layer(query, VALUES, mask=MASK)
        loss = tf.reduce_sum(tf.square(tf.cast(context, tf.float32)))
    gradients = tape.gradient(loss, [query, *layer.trainable_variables])
    assert len(gradients) == 1 + len(layer.trainable_variables)
    for gradient in gradients:
        assert np.isfinite(np.asarray(gradient)).all()
    assert np.any(np.asarray(gradients[0]) != 0)


# ---- the translator --------------------------------------------------------------------------

SOURCE = np.array([[5, 6, 7, 8, 0, 0], [9, 4, 3, 0, 0, 0], [0, 0, 0, 0, 0, 0]], "int32")
TARGET_IN = np.array([[1, 5, 6, 0], [1, 7, 0, 0], [1, 0, 0, 0]], "int32")
TARGET_OUT = np.array([[5, 6, 2, 0], [7, 2, 0, 0], [2, 0, 0, 0]], "int32")


def tiny(attention):
    keras.utils.set_random_seed(0)
    return Seq2SeqTranslator(12, 10, embedding_dim=8, units=16, attention=attention)


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
    model = Seq2SeqTranslator(sample.source_vocab_size, sample.target_vocab_size,
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
