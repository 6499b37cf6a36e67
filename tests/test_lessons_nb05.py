"""seqlab.lessons.nb05, notebook 05's Transformer: shapes, causality, padding, decoding, save/load."""

from __future__ import annotations

import keras
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from layer_contract import assert_distinct_weights

from seqlab import sizes
from seqlab.decoding import beam_search, greedy_decode
from seqlab.lessons.nb05 import TransformerTranslator
from seqlab.training import MaskedSparseCategoricalCrossentropy, transformer_optimizer

#: Notebook 05's FAST-mode sizes (``seqlab.sizes``).
TINY = sizes.settings("05", "fast").model

SOURCE_VOCAB, TARGET_VOCAB = 23, 19
START, END = 2, 3


@pytest.fixture(scope="module")
def model():
    keras.utils.set_random_seed(0)
    translator = TransformerTranslator(SOURCE_VOCAB, TARGET_VOCAB, 2, 16, 2, 32, dropout=0.0)
    translator.build()
    return translator


def _batch(rng, batch=3, source_length=6, target_length=5):
    source = rng.integers(4, SOURCE_VOCAB, (batch, source_length)).astype("int32")
    source[0, 4:] = 0
    target = rng.integers(4, TARGET_VOCAB, (batch, target_length)).astype("int32")
    target[:, 0] = START
    return source, target


def test_every_weight_starts_with_values_of_its_own(model):
    """No W^Q = W^K = W^V = W^O in any attention layer, no two equal feed-forward kernels."""
    assert_distinct_weights(model.weights)


def test_logits_shape_and_no_keras_mask(model):
    source, target = _batch(np.random.default_rng(0))
    logits = model((source, target))
    assert logits.shape == (3, 5, TARGET_VOCAB)
    target[0, 3:] = 0  # trailing padding: a Keras mask on the logits would hide it from pooling
    logits = model((source, target))
    pooled = keras.layers.GlobalAveragePooling1D()(logits)  # mask-aware: would skip padding
    np.testing.assert_allclose(pooled, np.asarray(logits).mean(1), atol=1e-6)


def test_the_sizes_are_the_recorded_full_mode_model():
    """Full mode trains the model whose greedy BLEU benchmarks/README.md records (2 layers,
    d_model 128, 4 heads, d_ff 512, dropout 0.1); the class size trains the same model."""
    full = {"num_layers": 2, "d_model": 128, "num_heads": 4, "dff": 512, "dropout": 0.1}
    assert sizes.settings("05", "full").model == full == sizes.settings("05", "class").model
    assert sizes.settings("05", "full").group_by_length is False  # padded to 20 tokens


def test_base_layer_sizes_match_the_paper():
    """Per layer: 4·(d²+d) attention + 2·d·dff + dff + d feed-forward + 2·2·d normalisation."""
    model = TransformerTranslator(100, 100, num_layers=6, d_model=512, num_heads=8, dff=2048)
    model.build()
    d, dff = 512, 2048
    encoder = 4 * (d * d + d) + (d * dff + dff) + (dff * d + d) + 2 * 2 * d
    assert model.encoder.stack[0].count_params() == encoder
    assert model.decoder.stack[0].count_params() == encoder + 4 * (d * d + d) + 2 * d
    assert len(model.encoder.stack) == len(model.decoder.stack) == 6


@settings(max_examples=10, deadline=None, derandomize=True)
@given(st.integers(0, 3), st.integers(0, 2**31 - 1))
def test_logits_at_t_ignore_later_target_tokens(t, seed):
    model = _model_for_properties()
    rng = np.random.default_rng(seed)
    source, target = _batch(rng)
    changed = target.copy()
    changed[:, t + 1:] = rng.integers(4, TARGET_VOCAB, changed[:, t + 1:].shape)
    before = np.asarray(model((source, target)))
    after = np.asarray(model((source, changed)))
    np.testing.assert_allclose(before[:, : t + 1], after[:, : t + 1], atol=1e-5)


_MODELS = []


def _model_for_properties():
    if not _MODELS:
        keras.utils.set_random_seed(1)
        _MODELS.append(TransformerTranslator(SOURCE_VOCAB, TARGET_VOCAB, 1, 8, 2, 16,
                                             dropout=0.0))
    return _MODELS[0]


@settings(max_examples=10, deadline=None, derandomize=True)
@given(st.integers(1, 5), st.integers(0, 2**31 - 1))
def test_source_padding_changes_nothing(extra, seed):
    model = _model_for_properties()
    rng = np.random.default_rng(seed)
    source, target = _batch(rng)
    padded = np.concatenate([source, np.zeros((3, extra), "int32")], axis=1)
    np.testing.assert_allclose(model((source, target)), model((padded, target)), atol=1e-5)


def test_encode_and_decode_step_follow_the_protocol(model):
    source, target = _batch(np.random.default_rng(2))
    state = model.encode(source)
    assert set(state) == {"memory", "padding_mask"}
    assert state["memory"].shape == (3, 6, 16)
    np.testing.assert_array_equal(state["padding_mask"], source != 0)
    logits, new_state, attention = model.decode_step(target[:, :3], state)
    assert logits.shape == (3, TARGET_VOCAB) and attention.shape == (3, 6)
    np.testing.assert_allclose(np.asarray(attention).sum(-1), 1.0, rtol=1e-5)
    assert np.all(np.asarray(attention)[0, 4:] == 0)
    assert new_state is state
    full, scores = model.decoder(target, state["memory"], state["padding_mask"],
                                 return_attention_scores=True)
    np.testing.assert_allclose(logits, np.asarray(full)[:, 2], atol=1e-5)  # as teacher forcing
    np.testing.assert_allclose(full, model((source, target)), atol=1e-6)
    assert len(scores) == 2 and scores[0]["cross_attention"].shape == (3, 2, 5, 6)
    np.testing.assert_allclose(  # the step's attention is the last layer's, averaged over heads
        attention, np.asarray(scores[-1]["cross_attention"])[:, :, 2].mean(1), atol=1e-6)


def test_cached_decode_steps_equal_teacher_forcing(model):
    """The key/value cache: one token per step gives the logits of the full forward pass."""
    source, target = _batch(np.random.default_rng(12))
    target[:, 2] = 0  # a padding id inside the prefix is a token like any other here
    state = model.init_cache(model.encode(source), max_length=7)
    assert state["cache"][0]["self_attention"][0].shape == (3, 2, 7, 8)
    assert state["cache"][0]["cross_attention"][0].shape == (3, 2, 6, 8)
    full, scores = model.decoder(target, state["memory"], state["padding_mask"],
                                 return_attention_scores=True)
    for t in range(target.shape[1]):
        logits, state, attention = model.decode_step(target[:, : t + 1], state)
        np.testing.assert_allclose(logits, np.asarray(full)[:, t], atol=1e-4)
        np.testing.assert_allclose(
            attention, np.asarray(scores[-1]["cross_attention"])[:, :, t].mean(1), atol=1e-5)
        assert state["cache"][0]["self_attention"][0].shape == (3, 2, 7, 8)  # fixed shapes


@settings(max_examples=3, deadline=None, derandomize=True)
@given(st.integers(0, 2**31 - 1))
def test_cached_decoding_gives_the_same_tokens_as_uncached(seed):
    """Random models (which also emit padding id 0 mid-sentence), greedy and beam search."""
    keras.utils.set_random_seed(seed % 1000)
    model = TransformerTranslator(SOURCE_VOCAB, TARGET_VOCAB, 2, 16, 4, 32, dropout=0.0)
    rng = np.random.default_rng(seed)
    source, _ = _batch(rng, batch=4, source_length=7)
    source[1] = 0  # a fully padded sentence decodes too
    never = TARGET_VOCAB + 5  # an end id the model cannot produce: every step runs
    cached, cached_attention = greedy_decode(model, source, START, never, 8)
    uncached, uncached_attention = greedy_decode(model, source, START, never, 8,
                                                 use_cache=False)
    np.testing.assert_array_equal(cached, uncached)
    np.testing.assert_allclose(cached_attention, uncached_attention, atol=1e-5)
    cached, _, cached_scores = beam_search(model, source, START, never, 5, beam_width=2)
    uncached, _, uncached_scores = beam_search(model, source, START, never, 5, beam_width=2,
                                               use_cache=False)
    np.testing.assert_array_equal(cached, uncached)
    np.testing.assert_allclose(cached_scores, uncached_scores, atol=1e-4)


def test_cached_greedy_in_the_traced_while_loop_equals_uncached(model):
    """The second call runs the compiled ``tf.while_loop`` (the cache's index is a tensor there)."""
    source, _ = _batch(np.random.default_rng(13))
    never = TARGET_VOCAB + 5
    for _ in range(2):  # eager, then traced
        cached, cached_attention = greedy_decode(model, source, START, never, 7)
        uncached, uncached_attention = greedy_decode(model, source, START, never, 7,
                                                     use_cache=False)
        np.testing.assert_array_equal(cached, uncached)
        np.testing.assert_allclose(cached_attention, uncached_attention, atol=1e-5)


@pytest.mark.parametrize("max_length", [1, 6])
def test_decoding_is_bounded_by_max_length(model, max_length):
    source, _ = _batch(np.random.default_rng(3))
    # an end id the model can never produce: decoding must stop at max_length anyway
    tokens, attention = greedy_decode(model, source, START, TARGET_VOCAB + 5, max_length)
    assert tokens.shape == (3, max_length) and attention.shape == (3, max_length, 6)
    tokens, attention, scores = beam_search(model, source, START, TARGET_VOCAB + 5, max_length,
                                            beam_width=3)
    assert tokens.shape[1] <= max_length and scores.shape == (3,)


def test_beam_width_one_equals_greedy(model):
    source, _ = _batch(np.random.default_rng(4))
    greedy, _ = greedy_decode(model, source, START, END, 6)  # compiled above: no new trace
    beam, _, _ = beam_search(model, source, START, END, 6, beam_width=1)
    width = min(greedy.shape[1], beam.shape[1])
    np.testing.assert_array_equal(greedy[:, :width], beam[:, :width])


def test_trains_saves_and_reloads(tmp_path):
    keras.utils.set_random_seed(5)
    rng = np.random.default_rng(5)
    model = TransformerTranslator(SOURCE_VOCAB, TARGET_VOCAB, 1, 16, 2, 32, dropout=0.1)
    model.compile(optimizer=transformer_optimizer(16, warmup_steps=10),
                  loss=MaskedSparseCategoricalCrossentropy(label_smoothing=0.1),
                  jit_compile=False)  # XLA compilation would triple this test's time
    source, target = _batch(rng, batch=16)
    history = model.fit((source, target[:, :-1]), target[:, 1:], epochs=2, verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    path = tmp_path / "transformer.keras"
    model.save(path)
    restored = keras.models.load_model(path)  # by the registered names, no custom_objects
    assert keras.saving.get_registered_name(TransformerTranslator) == (
        "seqlab.nb05>TransformerTranslator")
    assert isinstance(restored, TransformerTranslator)
    assert restored.get_config() == model.get_config()
    np.testing.assert_allclose(restored((source, target)), model((source, target)), atol=1e-5)
    a, _ = greedy_decode(model, source, START, END, 5)
    b, _ = greedy_decode(restored, source, START, END, 5)
    np.testing.assert_array_equal(a, b)
    # the optimizer (and its schedule) came back too, ready to resume training
    assert int(restored.optimizer.iterations) == int(model.optimizer.iterations)
    restored.fit((source, target[:, :-1]), target[:, 1:], epochs=1, verbose=0)


def test_without_the_causal_mask_the_decoder_sees_the_future():
    """Exercise 2's model (causal=False) changes its earlier logits when a later target token
    changes; the lesson's (causal=True) does not."""
    source, target = _batch(np.random.default_rng(3))
    changed = target.copy()
    changed[:, -1] = np.where(changed[:, -1] == 4, 5, 4)
    for causal in (True, False):
        keras.utils.set_random_seed(4)
        model = TransformerTranslator(SOURCE_VOCAB, TARGET_VOCAB, causal=causal, **TINY)
        before = np.asarray(model((source, target)))[:, :-1]
        after = np.asarray(model((source, changed)))[:, :-1]
        assert np.allclose(before, after, atol=1e-6) == causal


def test_skip_padding_gives_the_same_masked_loss_and_gradients():
    """skip_padding=True computes the logits at real target positions only: the masked loss
    and every gradient equal those of the model that computes every position (same weights)."""
    import tensorflow as tf

    from seqlab.training.losses import MaskedSparseCategoricalCrossentropy

    rng = np.random.default_rng(1)
    source = np.where(np.arange(7) < rng.integers(2, 8, (4, 1)), rng.integers(1, 20, (4, 7)), 0)
    target = np.where(np.arange(6) < rng.integers(1, 7, (4, 1)), rng.integers(1, 15, (4, 6)), 0)
    models = [TransformerTranslator(20, 15, **{**TINY, "dropout": 0.0}, skip_padding=skip)
              for skip in (False, True)]
    for model in models:
        model.build()
    models[1].set_weights(models[0].get_weights())
    loss = MaskedSparseCategoricalCrossentropy(from_logits=True, label_smoothing=0.1)
    results = []
    for model in models:
        with tf.GradientTape() as tape:
            value = loss(target[:, 1:], model((source, target[:, :-1]), training=True))
        gradients = tape.gradient(value, model.trainable_weights)  # embeddings: IndexedSlices
        results.append((float(value), [tf.convert_to_tensor(g) for g in gradients]))
    # the same products, in a 2-D view of other rows: a few float32 ulps of O(1) values
    assert results[1][0] == pytest.approx(results[0][0], abs=1e-5)
    for got, want in zip(results[1][1], results[0][1], strict=True):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), atol=1e-5)
    assert TransformerTranslator.from_config(models[1].get_config()).decoder.logits.skip_padding
