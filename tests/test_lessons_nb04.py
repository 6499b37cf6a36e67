"""seqlab.lessons.nb04, notebook 04's translator: shapes, the decoding protocol, padding,
training, save/load by registered name, a traced step with unknown lengths."""

from __future__ import annotations

import keras
import numpy as np
import pytest
from layer_contract import assert_distinct_weights

from seqlab.decoding import Translator as DecodingProtocol
from seqlab.decoding import beam_search, greedy_decode
from seqlab.lessons.nb04 import BahdanauTranslatorDecoder, Translator, build_rnn_translator
from seqlab.training import MaskedAccuracy, MaskedSparseCategoricalCrossentropy

ATTENTION_CHOICES = ("none", "bahdanau", "luong-dot", "luong-general", "luong-concat")
SOURCE = np.array([[5, 6, 7, 8, 0, 0], [9, 4, 3, 0, 0, 0]], "int32")
TARGET_IN = np.array([[1, 5, 6, 0], [1, 7, 0, 0]], "int32")
TARGET_OUT = np.array([[5, 6, 2, 0], [7, 2, 0, 0]], "int32")


def tiny(attention="bahdanau", output_norm=False):
    keras.utils.set_random_seed(0)
    return build_rnn_translator(12, 10, embedding_dim=8, units=16, attention=attention,
                                output_norm=output_norm)


@pytest.mark.parametrize("attention", ATTENTION_CHOICES)
def test_logits_shape_and_the_decoding_protocol(attention):
    model = tiny(attention)
    assert isinstance(model, DecodingProtocol)
    assert model((SOURCE, TARGET_IN)).shape == (2, 4, 10)


@pytest.mark.parametrize("attention", ATTENTION_CHOICES)
def test_every_weight_starts_with_values_of_its_own(attention):
    model = tiny(attention)
    model((SOURCE, TARGET_IN))  # builds every layer
    assert_distinct_weights(model.weights)


@pytest.mark.parametrize(("arguments", "message"), [
    ({"units": 15}, "units must be even (the encoder is bidirectional); got 15"),
    ({"units": 16, "attention": "luong"},
     "attention must be one of ('none', 'bahdanau', 'luong-dot', 'luong-general', "
     "'luong-concat'); got 'luong'"),
])
def test_bad_arguments_get_one_readable_error_before_any_weight(arguments, message):
    with pytest.raises(ValueError) as caught:
        build_rnn_translator(10, 10, embedding_dim=16, **arguments)
    assert str(caught.value) == message


def test_encoder_concatenates_both_directions():
    outputs, states, mask = tiny("none").encoder(SOURCE)
    assert outputs.shape == (2, 6, 16) and len(states) == 1 and states[0].shape == (2, 16)
    np.testing.assert_array_equal(mask, SOURCE != 0)


@pytest.mark.parametrize("attention", ATTENTION_CHOICES)
def test_step_by_step_decoding_equals_teacher_forcing(attention):
    """decode_step, fed the same prefix, reproduces the training-time logits position by position."""
    model = tiny(attention, output_norm=attention == "luong-dot")
    expected = np.asarray(model((SOURCE, TARGET_IN)))
    state = model.encode(SOURCE)
    for t in range(2):  # positions where both rows still have real tokens
        logits, state, weights = model.decode_step(TARGET_IN[:, : t + 1], state)
        np.testing.assert_allclose(logits, expected[:, t], atol=1e-5)
        if attention == "none":
            assert weights is None
        else:
            weights = np.asarray(weights)
            assert weights.shape == (2, 6)
            np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)
            assert np.all(weights[SOURCE == 0] == 0.0)


@pytest.mark.parametrize("attention", ["bahdanau", "luong-dot"])
def test_extra_source_padding_changes_nothing(attention):
    model = tiny(attention)
    padded = np.concatenate([SOURCE, np.zeros((2, 5), "int32")], axis=1)
    np.testing.assert_allclose(model((padded, TARGET_IN)), model((SOURCE, TARGET_IN)), atol=1e-5)


def test_bahdanau_feeds_the_context_into_the_cell_and_luong_does_not():
    """"bahdanau": the cell reads [embedding; context] (8 + 16 inputs), queried with h(t-1);
    "luong-concat": the same score after the GRU, which reads the embedding only."""
    bahdanau, luong = tiny("bahdanau"), tiny("luong-concat")
    assert isinstance(bahdanau.decoder, BahdanauTranslatorDecoder)
    assert tuple(bahdanau.decoder.recurrence.cell.kernel.shape) == (8 + 16, 3 * 16)
    assert tuple(luong.decoder.rnn.cell.kernel.shape) == (8, 3 * 16)
    # Step 0's weights come from the encoder's final state, before any target word is read.
    _, first = bahdanau.decode_step(TARGET_IN[:, :1], bahdanau.encode(SOURCE))[1:]
    _, other = bahdanau.decode_step(TARGET_IN[:, :1] * 0 + 3, bahdanau.encode(SOURCE))[1:]
    np.testing.assert_allclose(first, other, atol=1e-6)


@pytest.mark.parametrize("attention", ["bahdanau", "luong-general"])
def test_translator_trains_and_decodes_greedily_and_with_beam(attention):
    model = tiny(attention)
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss=MaskedSparseCategoricalCrossentropy(),
                  metrics=[MaskedAccuracy()])
    history = model.fit((SOURCE, TARGET_IN), TARGET_OUT, epochs=6, verbose=0)
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]
    tokens, weights = greedy_decode(model, SOURCE, 1, 2, 5)
    assert tokens.shape[0] == 2 and weights.shape[:1] == (2,) and weights.shape[-1] == 6
    np.testing.assert_array_equal(tokens[:, :2], TARGET_OUT[:, :2])  # it learned the pairs
    beam, _, scores = beam_search(model, SOURCE, 1, 2, 5, beam_width=2)
    np.testing.assert_array_equal(beam[:, :2], TARGET_OUT[:, :2])
    assert np.isfinite(scores).all()


@pytest.mark.parametrize("attention", ["bahdanau", "luong-general"])
def test_save_and_load_round_trip_by_registered_name(attention, tmp_path):
    model = tiny(attention, output_norm=True)
    expected = model((SOURCE, TARGET_IN))
    model.save(tmp_path / "translator.keras")
    reloaded = keras.models.load_model(tmp_path / "translator.keras")
    assert isinstance(reloaded, Translator)
    assert reloaded.get_config()["attention"] == attention
    assert keras.saving.get_registered_name(Translator) == "seqlab.nb04>Translator"
    np.testing.assert_allclose(reloaded((SOURCE, TARGET_IN)), expected, atol=1e-6)


def test_bahdanau_in_a_traced_call_with_unknown_lengths():
    """Shapes unknown when traced, as from a dataset of varying lengths."""
    import tensorflow as tf

    model = tiny("bahdanau")
    expected = np.asarray(model((SOURCE, TARGET_IN)))
    spec = (tf.TensorSpec((None, None), tf.int32), tf.TensorSpec((None, None), tf.int32))
    traced = tf.function(lambda s, t: model((s, t)), input_signature=spec)
    np.testing.assert_allclose(traced(SOURCE, TARGET_IN), expected, atol=1e-5)
