"""seqlab.layers.bahdanau_decoder: Bahdanau et al.'s decoder step against NumPy, ``call`` as a
loop of ``step``, masks, the symbolic and traced (unknown length, XLA) paths and the
configuration's values. Config round trip, save/load, float16/bfloat16 policies and the mask
contract: tests/test_layer_contract.py."""

from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf

from seqlab.layers import BahdanauAttention, BahdanauDecoder

rng = np.random.default_rng(0)
BATCH, T, TV, EMBEDDING, VALUE, UNITS = 3, 4, 5, 6, 10, 8
TARGETS = rng.normal(size=(BATCH, T, EMBEDDING)).astype("float32")  # embedded target
VALUES = rng.normal(size=(BATCH, TV, VALUE)).astype("float32")  # encoder outputs
MASK = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 0, 0, 0]], bool)


def states(rnn):
    count = 2 if rnn == "lstm" else 1
    return [rng.normal(size=(BATCH, UNITS)).astype("float32") for _ in range(count)]


def make(rnn="gru", **kwargs):
    keras.utils.set_random_seed(1)
    return BahdanauDecoder(UNITS, rnn=rnn, **kwargs)


@pytest.mark.parametrize("rnn", ["gru", "lstm"])
def test_call_is_the_loop_of_step(rnn):
    decoder, state = make(rnn), states(rnn)
    outputs, weights, final = decoder(TARGETS, VALUES, state, encoder_padding_mask=MASK,
                                      return_attention_scores=True, return_state=True)
    assert outputs.shape == (BATCH, T, UNITS + VALUE) and weights.shape == (BATCH, T, TV)
    for t in range(T):
        output, state, w = decoder.step(TARGETS[:, t], state, VALUES, MASK)
        np.testing.assert_allclose(output, outputs[:, t], atol=1e-5)
        np.testing.assert_allclose(w, weights[:, t], atol=1e-6)
    for got, want in zip(final, state, strict=True):
        np.testing.assert_allclose(got, want, atol=1e-5)
    # Without the flags only the outputs come back.
    np.testing.assert_allclose(decoder(TARGETS, VALUES, states(rnn)[:0] + final,
                                       encoder_padding_mask=MASK).shape, outputs.shape)


def test_one_step_equals_the_equations_computed_with_numpy():
    """Eqs. (12)-(14) with the previous state as the query, then the GRU reads [x; c]."""
    decoder, (h,) = make("gru"), states("gru")
    output, (new_h,), weights = decoder.step(TARGETS[:, 0], [h], VALUES, MASK)
    attention = decoder.attention
    w_q, w_v = (np.asarray(layer.kernel) for layer in (attention.query_projection,
                                                        attention.value_projection))
    v = np.asarray(attention.v)
    scores = np.tanh((h @ w_q)[:, None, :] + VALUES @ w_v) @ v  # eq. (12): (batch, Tv)
    scores = np.where(MASK, scores, -np.inf)
    alpha = np.exp(scores - scores.max(-1, keepdims=True))
    alpha /= alpha.sum(-1, keepdims=True)  # eq. (13)
    context = np.einsum("bi,bid->bd", alpha, VALUES)  # eq. (14)
    np.testing.assert_allclose(weights, alpha, atol=1e-6)
    # The cell is an ordinary Keras GRU cell fed [embedding; context] and h(t-1).
    cell = keras.layers.GRUCell(UNITS)
    cell.build((None, EMBEDDING + VALUE))
    cell.set_weights(decoder.cell.get_weights())
    expected_h, _ = cell(np.concatenate([TARGETS[:, 0], context], -1), [h])
    np.testing.assert_allclose(new_h, expected_h, atol=1e-5)
    np.testing.assert_allclose(output, np.concatenate([expected_h, context], -1), atol=1e-5)


def test_the_context_changes_the_state_and_the_query_is_the_previous_state():
    """Two facts that separate Bahdanau's decoder from Luong's: the weights of step t do not
    depend on word t (its query is h(t-1)), and the encoder outputs change the new state."""
    decoder, state = make(), states("gru")
    _, new_state, weights = decoder.step(TARGETS[:, 0], state, VALUES, MASK)
    _, other_state, other_weights = decoder.step(TARGETS[:, 1], state, VALUES, MASK)
    np.testing.assert_allclose(weights, other_weights, atol=1e-7)
    _, shifted_state, _ = decoder.step(TARGETS[:, 0], state, VALUES + 1.0, MASK)
    assert np.abs(np.asarray(new_state[0]) - np.asarray(shifted_state[0])).max() > 1e-3


def test_padded_source_positions_get_zero_weight_and_change_nothing():
    decoder, state = make(), states("gru")
    outputs, weights = decoder(TARGETS, VALUES, state, encoder_padding_mask=MASK,
                               return_attention_scores=True)
    weights = np.asarray(weights)
    assert np.all(weights[np.broadcast_to(~MASK[:, None, :], weights.shape)] == 0.0)
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-6)
    # Whatever the padded encoder outputs hold, and however many there are.
    noisy = np.where(MASK[:, :, None], VALUES, 100.0).astype("float32")
    longer = np.concatenate([noisy, np.full((BATCH, 3, VALUE), -7.0, "float32")], axis=1)
    longer_mask = np.concatenate([MASK, np.zeros((BATCH, 3), bool)], axis=1)
    np.testing.assert_allclose(decoder(TARGETS, noisy, state, encoder_padding_mask=MASK), outputs,
                               atol=1e-5)
    np.testing.assert_allclose(decoder(TARGETS, longer, state, encoder_padding_mask=longer_mask),
                               outputs, atol=1e-5)


def test_padded_target_steps_carry_the_state_over():
    decoder, state = make(), states("gru")
    mask = np.array([[1, 1, 0, 0]] * BATCH, bool)
    _, final = decoder(TARGETS, VALUES, state, encoder_padding_mask=MASK, padding_mask=mask, return_state=True)
    _, two_steps = decoder(TARGETS[:, :2], VALUES, state, encoder_padding_mask=MASK, return_state=True)
    np.testing.assert_allclose(final[0], two_steps[0], atol=1e-6)


def test_unknown_length_traced_with_xla_equals_the_eager_call():
    """Lengths unknown when traced (the scan needs none), compiled by XLA."""
    decoder, (h, c) = make("lstm"), states("lstm")
    expected = decoder(TARGETS, VALUES, [h, c], encoder_padding_mask=MASK)
    spec = [tf.TensorSpec((None, None, EMBEDDING)), tf.TensorSpec((None, None, VALUE)),
            tf.TensorSpec((None, UNITS)), tf.TensorSpec((None, UNITS)),
            tf.TensorSpec((None, None), tf.bool)]
    traced = tf.function(lambda x, y, h0, c0, m: decoder(x, y, [h0, c0], encoder_padding_mask=m),
                         input_signature=spec, jit_compile=True)
    np.testing.assert_allclose(traced(TARGETS, VALUES, h, c, MASK), expected, atol=1e-5)


def test_symbolic_call_builds_a_functional_model():
    decoder = make()
    targets, values = keras.Input((None, EMBEDDING)), keras.Input((None, VALUE))
    state, mask = keras.Input((UNITS,)), keras.Input((None,), dtype="bool")
    outputs, weights = decoder(targets, values, [state], encoder_padding_mask=mask,
                               return_attention_scores=True)
    assert tuple(outputs.shape) == (None, None, UNITS + VALUE)
    assert tuple(weights.shape) == (None, None, None)
    model = keras.Model([targets, values, state, mask], [outputs, weights])
    (h,) = states("gru")
    got = model([TARGETS, VALUES, h, MASK])
    want = decoder(TARGETS, VALUES, [h], encoder_padding_mask=MASK, return_attention_scores=True)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-5)


def test_configuration_round_trip_and_refusals():
    decoder = BahdanauDecoder(16, attention_units=12, rnn="lstm", dropout=0.25, name="d")
    config = decoder.get_config()
    assert {k: config[k] for k in ("units", "attention_units", "rnn", "dropout")} == {
        "units": 16, "attention_units": 12, "rnn": "lstm", "dropout": 0.25}
    again = BahdanauDecoder.from_config(config)
    assert again.get_config() == config and again.attention.units == 12
    assert isinstance(again.attention, BahdanauAttention)
    with pytest.raises(ValueError, match="rnn"):
        BahdanauDecoder(8, rnn="simple")


def test_dropout_acts_in_training_only():
    decoder, state = make(dropout=0.5), states("gru")
    plain = decoder(TARGETS, VALUES, state)
    np.testing.assert_allclose(decoder(TARGETS, VALUES, state, training=False), plain)
    assert np.abs(np.asarray(decoder(TARGETS, VALUES, state, training=True)) - plain).max() > 1e-4
