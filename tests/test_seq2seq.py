"""seqlab.models.seq2seq: shapes, the decoding protocol, reversing, padding, save/load."""

from __future__ import annotations

import keras
import numpy as np
import pytest

from seqlab.decoding import beam_search, greedy_decode
from seqlab.layers import BahdanauDecoder
from seqlab.models import Seq2SeqEncoder, Seq2SeqTranslator
from seqlab.models.seq2seq import ATTENTION_CHOICES, reverse_source
from seqlab.training import MaskedAccuracy, MaskedSparseCategoricalCrossentropy

SOURCE = np.array([[5, 6, 7, 8, 0, 0], [9, 4, 3, 0, 0, 0]], "int32")
TARGET_IN = np.array([[1, 5, 6, 0], [1, 7, 0, 0]], "int32")


def tiny(attention="bahdanau", rnn="gru", **kwargs):
    keras.utils.set_random_seed(0)
    return Seq2SeqTranslator(12, 10, embedding_dim=8, units=16, rnn=rnn, attention=attention,
                             **kwargs)


@pytest.mark.parametrize("rnn", ["gru", "lstm"])
@pytest.mark.parametrize("attention", ATTENTION_CHOICES)
def test_logits_shape_for_every_variant(attention, rnn):
    logits = tiny(attention, rnn)((SOURCE, TARGET_IN))
    assert logits.shape == (2, 4, 10)


def test_encoder_concatenates_both_directions():
    encoder = Seq2SeqEncoder(12, 8, 16, "lstm")
    outputs, states, mask = encoder(SOURCE)
    assert outputs.shape == (2, 6, 16) and len(states) == 2
    assert all(s.shape == (2, 16) for s in states)
    np.testing.assert_array_equal(mask, SOURCE != 0)
    with pytest.raises(ValueError, match="even"):
        Seq2SeqEncoder(12, 8, 15)


@pytest.mark.parametrize("rnn", ["gru", "lstm"])
@pytest.mark.parametrize("attention", ["none", "bahdanau"])
def test_summary_shows_each_part_s_output_shapes(attention, rnn, capsys, monkeypatch):
    """A built translator's summary() names the encoder's and decoder's output shapes, not "?",
    and those shapes agree with what a call returns."""
    model = tiny(attention, rnn)
    model.build()
    monkeypatch.setenv("COLUMNS", "400")  # rich cuts a table at the console's width
    model.summary(line_length=360)  # wide enough for no wrapping
    table = capsys.readouterr().out
    states = ", ".join(["(None, 16)"] * (2 if rnn == "lstm" else 1))
    assert f"((None, None, 16), [{states}], (None, None))" in table  # encoder
    weights = "" if attention == "none" else ", (None, None, None)"
    assert f"((None, None, 10), [{states}]{weights})" in table  # decoder
    assert "?" not in table
    outputs, encoder_states, mask = model.encoder(SOURCE)
    shapes = model.encoder.compute_output_shape(SOURCE.shape)
    assert shapes == (tuple(outputs.shape), [tuple(s.shape) for s in encoder_states],
                      tuple(mask.shape))
    logits = model((SOURCE, TARGET_IN))
    assert model.decoder.compute_output_shape(TARGET_IN.shape)[0] == tuple(logits.shape)


def test_reverse_source_reverses_real_tokens_and_keeps_padding_last():
    np.testing.assert_array_equal(reverse_source(SOURCE),
                                  [[8, 7, 6, 5, 0, 0], [3, 4, 9, 0, 0, 0]])


@pytest.mark.parametrize("rnn", ["gru", "lstm"])
@pytest.mark.parametrize("attention", ATTENTION_CHOICES)
def test_step_by_step_decoding_equals_teacher_forcing(attention, rnn):
    """decode_step, fed the same prefix, reproduces the training-time logits position by position."""
    model = tiny(attention, rnn, reverse_source=attention == "luong-general")
    expected = np.asarray(model((SOURCE, TARGET_IN)))
    state = model.encode(SOURCE)
    for t in range(2):  # positions where both rows still have real tokens
        logits, state, attention_weights = model.decode_step(TARGET_IN[:, : t + 1], state)
        np.testing.assert_allclose(logits, expected[:, t], atol=1e-5)
        if attention == "none":
            assert attention_weights is None
        else:
            weights = np.asarray(attention_weights)
            assert weights.shape == (2, 6)
            np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)
            assert np.all(weights[SOURCE == 0] == 0.0)


def test_reversed_source_attention_is_reported_in_the_original_order():
    plain, reversed_ = tiny("luong-dot"), tiny("luong-dot", reverse_source=True)
    reversed_.set_weights(plain.get_weights())
    # Reading [5 6 7 8] backwards is reading [8 7 6 5] forwards: the same attention, mirrored.
    mirrored = reverse_source(SOURCE)
    _, _, a = plain.decode_step(TARGET_IN[:, :1], plain.encode(mirrored))
    _, _, b = reversed_.decode_step(TARGET_IN[:, :1], reversed_.encode(SOURCE))
    a, b = np.asarray(a), np.asarray(b)
    np.testing.assert_allclose(b[0, :4], a[0, :4][::-1], atol=1e-6)
    np.testing.assert_allclose(b[1, :3], a[1, :3][::-1], atol=1e-6)


@pytest.mark.parametrize("reverse", [False, True])
def test_translator_returns_its_attention_on_request_in_source_order(reverse):
    model = tiny("luong-general", reverse_source=reverse)
    logits, weights = model((SOURCE, TARGET_IN), return_attention_scores=True)
    np.testing.assert_allclose(logits, model((SOURCE, TARGET_IN)), atol=1e-6)
    weights = np.asarray(weights)
    assert weights.shape == (2, 4, 6)
    assert np.all(weights[np.broadcast_to((SOURCE == 0)[:, None, :], weights.shape)] == 0.0)
    # Step 0 of teacher forcing is the first decoding step, which reports the original order.
    _, _, first_step = model.decode_step(TARGET_IN[:, :1], model.encode(SOURCE))
    np.testing.assert_allclose(weights[:, 0], first_step, atol=1e-5)
    _, none = tiny("none")((SOURCE, TARGET_IN), return_attention_scores=True)
    assert none is None


def test_extra_source_padding_changes_nothing():
    model = tiny("bahdanau")
    padded = np.concatenate([SOURCE, np.zeros((2, 5), "int32")], axis=1)
    np.testing.assert_allclose(model((padded, TARGET_IN)), model((SOURCE, TARGET_IN)), atol=1e-5)


def test_bad_choices_are_refused():
    with pytest.raises(ValueError, match="attention"):
        tiny("multiplicative")
    with pytest.raises(ValueError, match="rnn"):
        tiny(rnn="simple")


def test_compile_prebuilds_optimizer_and_training_learns(tmp_path):
    model = tiny("luong-general")
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss=MaskedSparseCategoricalCrossentropy(),
                  metrics=[MaskedAccuracy()])
    assert model.optimizer.built
    target_out = np.array([[5, 6, 2, 0], [7, 2, 0, 0]], "int32")
    history = model.fit((SOURCE, TARGET_IN), target_out, epochs=6, verbose=0)
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]


@pytest.mark.parametrize("rnn", ["gru", "lstm"])
def test_save_and_load_round_trip(rnn, tmp_path):
    model = tiny("bahdanau", rnn, reverse_source=True)
    model.compile(optimizer="adam", loss=MaskedSparseCategoricalCrossentropy())
    expected = model((SOURCE, TARGET_IN))
    model.save(tmp_path / "translator.keras")
    reloaded = keras.models.load_model(tmp_path / "translator.keras")
    assert isinstance(reloaded, Seq2SeqTranslator) and reloaded.reverse_source
    assert reloaded.attention_kind == "bahdanau"  # still Bahdanau's decoder, not luong-concat
    assert isinstance(reloaded.decoder.bahdanau, BahdanauDecoder)
    assert reloaded.optimizer is not None  # compile settings came back too
    np.testing.assert_allclose(reloaded((SOURCE, TARGET_IN)), expected, atol=1e-6)


@pytest.mark.parametrize("rnn", ["gru", "lstm"])
def test_bahdanau_feeds_the_context_into_the_cell_and_luong_does_not(rnn):
    """"bahdanau": the cell reads [embedding; context] (8 + 16 inputs) and the attention is
    queried with h(t-1); "luong-concat": the same score, the cell reads the embedding only."""
    bahdanau, luong = tiny("bahdanau", rnn), tiny("luong-concat", rnn)
    bahdanau.build()
    luong.build()
    gates = 4 if rnn == "lstm" else 3
    assert tuple(bahdanau.decoder.bahdanau.cell.kernel.shape) == (8 + 16, gates * 16)
    assert bahdanau.decoder.rnn is None and bahdanau.decoder.attention is None
    assert tuple(luong.decoder.rnn.cell.kernel.shape) == (8, gates * 16)
    # Step 0's weights come from the encoder's final state, before any target word is read.
    _, weights = bahdanau((SOURCE, TARGET_IN), return_attention_scores=True)
    _, other = bahdanau((SOURCE, TARGET_IN[:, ::-1] * 0 + 3), return_attention_scores=True)
    np.testing.assert_allclose(np.asarray(weights)[:, 0], np.asarray(other)[:, 0], atol=1e-6)


def test_bahdanau_translator_trains_and_decodes_greedily_and_with_beam():
    model = tiny("bahdanau")
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss=MaskedSparseCategoricalCrossentropy(),
                  metrics=[MaskedAccuracy()])
    target_out = np.array([[5, 6, 2, 0], [7, 2, 0, 0]], "int32")
    history = model.fit((SOURCE, TARGET_IN), target_out, epochs=6, verbose=0)
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]
    tokens, attention = greedy_decode(model, SOURCE, 1, 2, 5)
    assert tokens.shape[0] == 2 and attention.shape[:1] == (2,) and attention.shape[-1] == 6
    np.testing.assert_array_equal(tokens[:, :2], target_out[:, :2])  # it learned the pairs
    beam, _, scores = beam_search(model, SOURCE, 1, 2, 5, beam_width=2)
    np.testing.assert_array_equal(beam[:, :2], target_out[:, :2])
    assert np.isfinite(scores).all()


def test_bahdanau_in_a_traced_train_step_with_unknown_lengths():
    """Shapes unknown when traced, as from a dataset of varying lengths."""
    import tensorflow as tf

    model = tiny("bahdanau", "lstm")
    expected = np.asarray(model((SOURCE, TARGET_IN)))
    spec = (tf.TensorSpec((None, None), tf.int32), tf.TensorSpec((None, None), tf.int32))
    traced = tf.function(lambda s, t: model((s, t)), input_signature=spec)
    np.testing.assert_allclose(traced(SOURCE, TARGET_IN), expected, atol=1e-5)
