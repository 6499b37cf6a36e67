"""The Transformer under mixed precision (issue 10.1): finite, close to float32, trainable, decodable.

Every Transformer layer of ``seqlab.layers`` and the ``TransformerTranslator`` are run on CPU
under ``mixed_float16`` and ``mixed_bfloat16`` (float32 variables, low-precision computation) on
a masked batch that includes a fully padded sentence, and compared with float32 twins holding
the same weights.

Tolerances. A ``mixed_*`` layer rounds its inputs and every intermediate result to the compute
dtype, whose unit roundoff is u = 2⁻¹¹ ≈ 4.9e-4 (float16, 10-bit mantissa) or u = 2⁻⁸ ≈ 3.9e-3
(bfloat16, 7-bit mantissa). The outputs compared here are O(1) (layer-normalised activations,
small logits), and each passes through a few dozen rounded operations (projections, softmax
inputs, residual sums, normalisation): first-order error analysis bounds the error by
(number of rounded operations) × u × (output scale). We allow 40 u of the output's largest
magnitude: 0.02 in float16 and 0.16 in bfloat16 for unit-scale outputs. A masking bug (a padded
key with weight, an overflowing −1e9, NaN) changes outputs by O(1) and fails these tests.
"""

from __future__ import annotations

import contextlib

import keras
import numpy as np
import pytest
import tensorflow as tf

from seqlab.decoding import beam_search, greedy_decode
from seqlab.layers import multi_head_attention, positional_embedding, transformer_blocks
from seqlab.models import TransformerTranslator
from seqlab.training import MaskedSparseCategoricalCrossentropy

POLICIES = ["mixed_float16", "mixed_bfloat16"]
UNIT_ROUNDOFF = {"mixed_float16": 2.0**-11, "mixed_bfloat16": 2.0**-8}
SOURCE_VOCAB, TARGET_VOCAB, START, END = 23, 19, 2, 3


@contextlib.contextmanager
def forced_dtype_policy(name):
    """Sets the global dtype policy inside the block and always restores the previous one."""
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy(name)
    try:
        yield name
    finally:
        keras.config.set_dtype_policy(previous)


@pytest.fixture(params=POLICIES)
def policy(request):
    with forced_dtype_policy(request.param):
        yield request.param


def as_float32(x):
    return np.asarray(keras.ops.cast(x, "float32"))


def assert_close_to_float32(mixed, reference, policy):
    mixed, reference = as_float32(mixed), as_float32(reference)
    assert np.all(np.isfinite(mixed)), "non-finite output under " + policy
    scale = max(1.0, float(np.abs(reference).max()))
    np.testing.assert_allclose(mixed, reference, atol=40 * UNIT_ROUNDOFF[policy] * scale, rtol=0)


def twins(make, build, policy):
    """The same layer in float32 and under ``policy``, with the float32 one's weights."""
    reference, mixed = make("float32"), make(policy)
    build(reference), build(mixed)
    mixed.set_weights(reference.get_weights())
    assert reference.compute_dtype == "float32" and mixed.compute_dtype != "float32"
    return reference, mixed


def assert_finite_gradients(layer, loss_of_layer):
    with tf.GradientTape() as tape:
        loss = keras.ops.cast(loss_of_layer(), "float32")
    gradients = tape.gradient(loss, layer.trainable_variables)
    assert gradients and all(g is not None for g in gradients)
    for gradient in gradients:
        gradient = tf.convert_to_tensor(gradient)
        assert np.all(np.isfinite(as_float32(gradient)))


RNG = np.random.default_rng(0)
X = RNG.normal(size=(3, 5, 16)).astype("float32")
CONTEXT = RNG.normal(size=(3, 6, 16)).astype("float32")
CONTEXT_MASK = np.array([[1, 1, 1, 1, 0, 0], [0] * 6, [1] * 6], bool)  # row 1: all padding
X_MASK = np.array([[1, 1, 1, 0, 0], [0] * 5, [1] * 5], bool)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_scaled_dot_product_attention_in_low_precision(dtype):
    q, k, v = (keras.ops.cast(a, dtype) for a in (X, CONTEXT, CONTEXT))
    output, weights = multi_head_attention.scaled_dot_product_attention(q, k, v, mask=CONTEXT_MASK[:, None, :])
    assert output.dtype == dtype and weights.dtype == dtype
    weights = as_float32(weights)
    assert np.all(np.isfinite(weights)) and np.all(np.isfinite(as_float32(output)))
    assert np.all(weights[1] == 0)  # the fully padded row: zero weights, not NaN
    assert np.all(weights[0, :, 4:] == 0)
    np.testing.assert_allclose(weights[[0, 2]].sum(-1), 1.0, atol=1e-2)
    reference, _ = multi_head_attention.scaled_dot_product_attention(X, CONTEXT, CONTEXT,
                                                  mask=CONTEXT_MASK[:, None, :])
    assert_close_to_float32(output, reference, "mixed_" + dtype)


def test_multi_head_attention(policy):
    reference, mixed = twins(lambda dtype: multi_head_attention.MultiHeadAttention(4, 4, dtype=dtype),
                             lambda layer: layer(X, CONTEXT), policy)
    kwargs = {"value_mask": CONTEXT_MASK, "return_attention_scores": True}
    output, weights = mixed(X, CONTEXT, **kwargs)
    expected, expected_weights = reference(X, CONTEXT, **kwargs)
    assert_close_to_float32(output, expected, policy)
    assert_close_to_float32(weights, expected_weights, policy)
    assert np.all(as_float32(weights)[1] == 0)
    assert_close_to_float32(mixed(X, X, use_causal_mask=True, query_mask=X_MASK),
                            reference(X, X, use_causal_mask=True, query_mask=X_MASK), policy)
    assert_finite_gradients(mixed, lambda: keras.ops.sum(mixed(X, CONTEXT, value_mask=CONTEXT_MASK)))


def test_positional_embedding_and_feed_forward(policy):
    ids = np.array([[4, 5, 6, 0, 0], [0] * 5, [7, 8, 9, 10, 11]])
    reference, mixed = twins(lambda dtype: positional_embedding.PositionalEmbedding(30, 16, dtype=dtype),
                             lambda layer: layer(ids), policy)
    assert_close_to_float32(mixed(ids), reference(ids), policy)
    assert_finite_gradients(mixed, lambda: keras.ops.sum(mixed(ids)))
    reference, mixed = twins(lambda dtype: transformer_blocks.PositionwiseFeedForward(16, 32, dtype=dtype),
                             lambda layer: layer(X), policy)
    assert_close_to_float32(mixed(X), reference(X), policy)
    assert_finite_gradients(mixed, lambda: keras.ops.sum(mixed(X)))


def test_encoder_layer(policy):
    reference, mixed = twins(
        lambda dtype: transformer_blocks.TransformerEncoderLayer(16, 4, 32, dropout=0.0, dtype=dtype),
        lambda layer: layer(CONTEXT), policy)
    output, scores = mixed(CONTEXT, mask=CONTEXT_MASK, return_attention_scores=True)
    expected, _ = reference(CONTEXT, mask=CONTEXT_MASK, return_attention_scores=True)
    assert output.dtype == keras.config.dtype_policy().compute_dtype
    assert_close_to_float32(output, expected, policy)
    assert np.all(as_float32(scores)[1] == 0)
    assert_finite_gradients(mixed, lambda: keras.ops.sum(mixed(CONTEXT, mask=CONTEXT_MASK)))


def test_decoder_layer_full_and_cached(policy):
    reference, mixed = twins(
        lambda dtype: transformer_blocks.TransformerDecoderLayer(16, 4, 32, dropout=0.0, dtype=dtype),
        lambda layer: layer(X, CONTEXT), policy)
    output, scores = mixed(X, CONTEXT, context_mask=CONTEXT_MASK, return_attention_scores=True)
    expected = reference(X, CONTEXT, context_mask=CONTEXT_MASK)
    assert_close_to_float32(output, expected, policy)
    assert np.all(as_float32(scores["cross_attention"])[1] == 0)
    assert_finite_gradients(
        mixed, lambda: keras.ops.sum(mixed(X, CONTEXT, context_mask=CONTEXT_MASK)))
    # the step-by-step path with the key/value cache, in the low-precision dtype
    dtype = keras.config.dtype_policy().compute_dtype
    empty = keras.ops.zeros((3, 4, 5, 4), dtype)
    cache, cross = (empty, empty), mixed.cross_attention.project_key_value(CONTEXT)
    for t in range(5):
        step, cache = mixed(X[:, t: t + 1], CONTEXT, context_mask=CONTEXT_MASK,
                            self_attention_cache=cache, self_attention_cache_update_index=t,
                            cross_attention_cache=cross)
        assert_close_to_float32(step[:, 0], as_float32(expected)[:, t], policy)


def _translator(dtype=None):
    keras.utils.set_random_seed(3)
    model = TransformerTranslator(2, 16, 4, 32, SOURCE_VOCAB, TARGET_VOCAB, dropout=0.0,
                                  dtype=dtype)
    model.build()
    return model


def _batch():
    rng = np.random.default_rng(4)
    source = rng.integers(4, SOURCE_VOCAB, (4, 6)).astype("int32")
    source[0, 3:] = 0
    source[1] = 0  # a fully padded sentence
    target = rng.integers(4, TARGET_VOCAB, (4, 5)).astype("int32")
    target[:, 0] = START
    return source, target


def test_translator_logits_gradients_and_decoding(policy):
    reference = _translator("float32")
    model = _translator()  # the global policy, as a notebook gets it
    assert model.compute_dtype != "float32"
    assert model.decoder_layers[0].cross_attention.output_dense.compute_dtype != "float32"
    model.set_weights(reference.get_weights())
    source, target = _batch()
    assert_close_to_float32(model((source, target)), reference((source, target)), policy)
    loss = MaskedSparseCategoricalCrossentropy()
    assert_finite_gradients(model, lambda: loss(target[:, 1:], model((source, target[:, :-1]))))
    never = TARGET_VOCAB + 5  # every step runs
    for use_cache in (True, False):
        tokens, attention = greedy_decode(model, source, START, never, 6, use_cache=use_cache)
        assert tokens.shape == (4, 6) and np.all((tokens >= 0) & (tokens < TARGET_VOCAB))
        assert np.all(np.isfinite(attention)) and np.all(attention[1] == 0)
    tokens, attention, scores = beam_search(model, source, START, never, 4, beam_width=2)
    assert np.all(np.isfinite(scores)) and np.all(np.isfinite(attention))


def test_short_fit_under_mixed_float16_keeps_the_loss_finite():
    with forced_dtype_policy("mixed_float16"):
        model = _translator()
        model.compile(optimizer=keras.optimizers.Adam(1e-3),
                      loss=MaskedSparseCategoricalCrossentropy(), jit_compile=False)
        assert isinstance(model.optimizer, keras.optimizers.LossScaleOptimizer)
        source, target = _batch()
        source, target = np.tile(source, (4, 1)), np.tile(target, (4, 1))
        history = model.fit((source, target[:, :-1]), target[:, 1:], batch_size=8, epochs=3,
                            verbose=0)
        losses = history.history["loss"]
        assert np.all(np.isfinite(losses)) and losses[-1] < losses[0]


@pytest.mark.parametrize("policy_name", ["float32", *POLICIES])
def test_exported_savedmodel_translates_raw_strings_like_the_model(policy_name, tmp_path):
    """Notebook 04's export path (raw strings in, strings out) works for the Transformer, also
    with a mixed policy forced as ``seqlab.notebook.setup()`` would choose it on a GPU."""
    from seqlab.data import load_translation
    from seqlab.decoding import translate
    from seqlab.export import export_translator, translate_with_export

    data = load_translation("dates", max_length=8, batch_size=32, num_examples=200)
    with forced_dtype_policy(policy_name):
        keras.utils.set_random_seed(6)
        model = TransformerTranslator(1, 16, 2, 32, data.source_vocab_size,
                                      data.target_vocab_size)
        sources = [source for source, _ in data.test_pairs[:4]]
        expected = translate(model, sources, data.source_vectorizer, data.target_vectorizer,
                             max_length=8).texts
        export_translator(model, data.source_vectorizer, data.target_vectorizer,
                          tmp_path / "export", max_length=8)
        exported = tf.saved_model.load(str(tmp_path / "export"))
        assert translate_with_export(exported, sources) == expected
