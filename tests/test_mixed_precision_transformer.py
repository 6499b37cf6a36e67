"""The TransformerTranslator under mixed precision (issue 10.1): close to float32, trainable,
decodable, exportable.

The ``TransformerTranslator`` is run on CPU under ``mixed_float16`` and ``mixed_bfloat16``
(float32 variables, low-precision computation) on a masked batch that includes a fully padded
sentence, and compared with a float32 twin holding the same weights. Its layers are checked
under both policies by the layer contract (tests/test_layer_contract.py, the same tolerance);
``scaled_dot_product_attention`` in low precision by tests/test_layers_multi_head_attention.py
and the decoder layer's cached steps by tests/test_layers_transformer_blocks.py.

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

import keras
import numpy as np
import pytest
import tensorflow as tf
from layer_contract import as_float32, assert_close_to_float32, dtype_policy

from seqlab.decoding import beam_search, greedy_decode
from seqlab.lessons.nb05 import TransformerTranslator
from seqlab.training import MaskedSparseCategoricalCrossentropy

POLICIES = ["mixed_float16", "mixed_bfloat16"]
SOURCE_VOCAB, TARGET_VOCAB, START, END = 23, 19, 2, 3


@pytest.fixture(params=POLICIES)
def policy(request):
    with dtype_policy(request.param):
        yield request.param


def assert_finite_gradients(layer, loss_of_layer):
    with tf.GradientTape() as tape:
        loss = keras.ops.cast(loss_of_layer(), "float32")
    gradients = tape.gradient(loss, layer.trainable_variables)
    assert gradients and all(g is not None for g in gradients)
    for gradient in gradients:
        gradient = tf.convert_to_tensor(gradient)
        assert np.all(np.isfinite(as_float32(gradient)))


def _translator(dtype=None):
    keras.utils.set_random_seed(3)
    model = TransformerTranslator(SOURCE_VOCAB, TARGET_VOCAB, 2, 16, 4, 32, dropout=0.0,
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
    assert model.decoder.stack[0].cross_attention.output_dense.compute_dtype != "float32"
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
    with dtype_policy("mixed_float16"):
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
    with a mixed policy forced as ``seqlab.course.notebook.setup()`` would choose it on a GPU."""
    from seqlab.data import load_translation
    from seqlab.decoding import translate
    from seqlab.export import export_translator, translate_with_export

    data = load_translation("dates", max_length=8, batch_size=32, num_examples=200)
    with dtype_policy(policy_name):
        keras.utils.set_random_seed(6)
        model = TransformerTranslator(data.source_vocab_size, data.target_vocab_size, 1, 16, 2, 32)
        sources = [source for source, _ in data.test_pairs[:4]]
        expected = translate(model, sources, data.source_vectorizer, data.target_vectorizer,
                             max_length=8).texts
        export_translator(model, data.source_vectorizer, data.target_vectorizer,
                          tmp_path / "export", max_length=8)
        exported = tf.saved_model.load(str(tmp_path / "export"))
        assert translate_with_export(exported, sources) == expected
