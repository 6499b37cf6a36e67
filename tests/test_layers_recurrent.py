"""The recurrent cells compute the slide equations and exactly what Keras's fused layers compute.

Config round trip, save/load (inside a Bidirectional RNN), mixed precision and the mask
contract: tests/test_layer_contract.py."""

from __future__ import annotations

import itertools

import keras
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqlab.layers import (
    GRUCell,
    LSTMCell,
    SimpleRNNCell,
    copy_keras_cell_weights,
)

UNITS, FEATURES, STEPS, BATCH = 4, 3, 6, 5

#: name -> (our cell factory, the Keras twin layer factory)
KINDS = {
    "simple_rnn": (SimpleRNNCell, keras.layers.SimpleRNN),
    "lstm": (LSTMCell, keras.layers.LSTM),
    "lstm_peephole": (lambda units: LSTMCell(units, peephole=True), keras.layers.LSTM),
    "gru": (GRUCell, lambda units, **kw: keras.layers.GRU(units, reset_after=False, **kw)),
}


def _inputs(seed=0, batch=BATCH, steps=STEPS):
    return np.random.default_rng(seed).normal(size=(batch, steps, FEATURES)).astype("float32")


def _ragged_mask(batch=BATCH, steps=STEPS):
    """Right-padded lengths 1..steps, one sequence per length (cycled)."""
    lengths = 1 + np.arange(batch) % steps
    return np.arange(steps)[None, :] < lengths[:, None]


def _randomize(layer, seed=1):
    """Move every weight away from its initial value, so copying really has to copy."""
    rng = np.random.default_rng(seed)
    for weight in layer.weights:
        weight.assign(rng.normal(scale=0.5, size=weight.shape).astype("float32"))


def _keras_and_ours(kind, **rnn_kwargs):
    ours_factory, keras_factory = KINDS[kind]
    theirs = keras_factory(UNITS, **rnn_kwargs)
    theirs(_inputs())
    _randomize(theirs)
    ours = keras.layers.RNN(ours_factory(UNITS), **rnn_kwargs)
    copy_keras_cell_weights(theirs, ours)
    return theirs, ours


def _assert_all_close(got, expected, atol=1e-5):
    got, expected = keras.tree.flatten(got), keras.tree.flatten(expected)
    assert len(got) == len(expected)
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), atol=atol, rtol=1e-5)


# ------------------------------------------------------------------------ equality with Keras


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("masked", [False, True], ids=["unmasked", "masked"])
def test_equal_to_keras_outputs_and_final_states(kind, masked):
    theirs, ours = _keras_and_ours(kind, return_sequences=True, return_state=True)
    x = _inputs(seed=2)
    mask = _ragged_mask() if masked else None
    expected, got = theirs(x, mask=mask), ours(x, mask=mask)
    assert len(got) == (3 if kind.startswith("lstm") else 2)  # sequence + final state(s)
    _assert_all_close(got, expected)


@pytest.mark.parametrize("kind", KINDS)
def test_a_changed_weight_changes_the_output(kind):
    theirs, ours = _keras_and_ours(kind)
    x = _inputs(seed=3)
    weight = ours.cell.weights[0]
    weight.assign(weight + 0.1)
    assert not np.allclose(ours(x), theirs(x), atol=1e-3)


def test_masked_steps_keep_the_state_like_keras_and_unlike_no_mask():
    theirs, ours = _keras_and_ours("lstm", return_state=True)
    x, mask = _inputs(seed=4), _ragged_mask()
    _, h_masked, _ = ours(x, mask=mask)
    _, h_unmasked, _ = ours(x)
    # Sequence 0 has length 1: its final state is the state after step 0.
    _, h_first, _ = ours(x[:1, :1])
    np.testing.assert_allclose(h_masked[0], h_first[0], atol=1e-6)
    assert not np.allclose(h_masked[0], h_unmasked[0], atol=1e-3)


def test_bidirectional_copy_and_equality():
    theirs = keras.layers.Bidirectional(keras.layers.GRU(UNITS, reset_after=False,
                                                         return_sequences=True))
    x, mask = _inputs(seed=5), _ragged_mask()
    theirs(x)
    _randomize(theirs)
    ours = keras.layers.Bidirectional(keras.layers.RNN(GRUCell(UNITS), return_sequences=True))
    ours(x)
    copy_keras_cell_weights(theirs, ours)
    got = ours(x, mask=mask)
    assert got.shape == (BATCH, STEPS, 2 * UNITS)
    _assert_all_close(got, theirs(x, mask=mask))


def test_copy_into_a_bare_cell_builds_it_and_steps_like_keras():
    theirs = keras.layers.LSTMCell(UNITS)
    state = [np.zeros((BATCH, UNITS), "float32")] * 2
    x = _inputs()[:, 0]
    theirs(x, state)
    _randomize(theirs)
    ours = copy_keras_cell_weights(theirs, LSTMCell(UNITS))
    assert ours.built and ours.W_xi.shape == (FEATURES, UNITS)
    _assert_all_close(ours(x, state), theirs(x, state))


def test_keras_layer_without_bias_copies_as_zero_bias():
    theirs = keras.layers.SimpleRNN(UNITS, use_bias=False, activation="relu")
    x = _inputs()
    theirs(x)
    ours = copy_keras_cell_weights(theirs, keras.layers.RNN(SimpleRNNCell(UNITS, "relu")))
    np.testing.assert_array_equal(ours.cell.b, np.zeros(UNITS))
    _assert_all_close(ours(x), theirs(x))


@pytest.mark.parametrize(
    ("source", "target", "message"),
    [
        (lambda: keras.layers.GRU(UNITS), lambda: GRUCell(UNITS), "reset_after=False"),
        (lambda: keras.layers.LSTM(UNITS), lambda: GRUCell(UNITS), "GRUCell"),
        (lambda: keras.layers.LSTM(UNITS + 1), lambda: LSTMCell(UNITS), "units"),
        (lambda: keras.layers.SimpleRNN(UNITS), lambda: SimpleRNNCell(UNITS, "relu"), "relu"),
        (lambda: keras.layers.LSTM(UNITS, recurrent_activation="hard_sigmoid"),
         lambda: LSTMCell(UNITS), "hard_sigmoid"),
        (lambda: keras.layers.LSTM(UNITS), lambda: keras.layers.LSTMCell(UNITS), "seqlab"),
    ],
    ids=["gru_reset_after", "wrong_kind", "units", "activation", "recurrent_activation",
         "keras_target"],
)
def test_copy_refuses_layers_that_do_not_match(source, target, message):
    layer = source()
    layer(_inputs())
    with pytest.raises(ValueError, match=message):
        copy_keras_cell_weights(layer, target())


def test_copy_refuses_an_unbuilt_source_and_a_different_input_size():
    with pytest.raises(ValueError, match="no weights yet"):
        copy_keras_cell_weights(keras.layers.LSTM(UNITS), LSTMCell(UNITS))
    theirs = keras.layers.LSTM(UNITS)
    theirs(_inputs())
    built = LSTMCell(UNITS)
    built.build((None, FEATURES + 2))
    with pytest.raises(ValueError, match="input features"):
        copy_keras_cell_weights(theirs, built)
    with pytest.raises(ValueError, match="Bidirectional"):
        copy_keras_cell_weights(keras.layers.Bidirectional(keras.layers.LSTM(UNITS)), built)


# ------------------------------------------------------------------------ the slide equations


def _sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


def _numpy_lstm_peephole(cell, x):
    """Eqs. (2)-(7) with peepholes (Gers & Schmidhuber 2000), step by step in NumPy."""
    w = {v.name: np.asarray(v) for v in cell.weights}
    h = c = np.zeros((x.shape[0], cell.units))
    for t in range(x.shape[1]):
        net = {k: x[:, t] @ w[f"W_x{k}"] + h @ w[f"W_h{k}"] + w[f"b_{k}"] for k in "ifgo"}
        i = _sigmoid(net["i"] + w["p_i"] * c)
        f = _sigmoid(net["f"] + w["p_f"] * c)
        c = f * c + i * np.tanh(net["g"])
        o = _sigmoid(net["o"] + w["p_o"] * c)
        h = o * np.tanh(c)
    return h, c


def _numpy_gru(cell, x):
    """Eqs. (8)-(11) in NumPy: the reset gate multiplies h(t-1) before W_hg."""
    w = {v.name: np.asarray(v) for v in cell.weights}
    h = np.zeros((x.shape[0], cell.units))
    for t in range(x.shape[1]):
        z = _sigmoid(x[:, t] @ w["W_xz"] + h @ w["W_hz"] + w["b_z"])
        r = _sigmoid(x[:, t] @ w["W_xr"] + h @ w["W_hr"] + w["b_r"])
        g = np.tanh(x[:, t] @ w["W_xg"] + (r * h) @ w["W_hg"] + w["b_g"])
        h = z * h + (1 - z) * g
    return h


def _numpy_simple_rnn(cell, x):
    """Eq. (1) unrolled through time, with ReLU as f."""
    y = np.zeros((x.shape[0], cell.units))
    for t in range(x.shape[1]):
        y = np.maximum(0.0, x[:, t] @ np.asarray(cell.W_x) + y @ np.asarray(cell.W_y)
                       + np.asarray(cell.b))
    return y


def test_peephole_lstm_follows_the_equations_and_needs_its_extra_weights():
    layer = keras.layers.RNN(LSTMCell(UNITS, peephole=True), return_state=True)
    x = _inputs(seed=6)
    layer(x)
    _randomize(layer, seed=7)
    _, h, c = layer(x)
    expected_h, expected_c = _numpy_lstm_peephole(layer.cell, x)
    np.testing.assert_allclose(h, expected_h, atol=1e-5)
    np.testing.assert_allclose(c, expected_c, atol=1e-5)

    plain = keras.layers.RNN(LSTMCell(UNITS), return_state=True)
    plain(x)
    for weight in plain.cell.weights:  # same weights, without the peepholes
        weight.assign(getattr(layer.cell, weight.name))
    _, h_plain, _ = plain(x)
    assert not np.allclose(h, h_plain, atol=1e-3)
    extra = {w.name: tuple(w.shape) for w in layer.cell.weights
             if w.name not in {v.name for v in plain.cell.weights}}
    assert extra == {"p_i": (UNITS,), "p_f": (UNITS,), "p_o": (UNITS,)}
    assert layer.count_params() == plain.count_params() + 3 * UNITS


def test_gru_follows_eqs_8_to_11():
    layer = keras.layers.RNN(GRUCell(UNITS))
    x = _inputs(seed=8)
    layer(x)
    _randomize(layer, seed=9)
    np.testing.assert_allclose(layer(x), _numpy_gru(layer.cell, x), atol=1e-5)


def test_simple_rnn_follows_eq_1_with_any_activation():
    layer = keras.layers.RNN(SimpleRNNCell(UNITS, activation="relu"))
    x = _inputs(seed=10)
    layer(x)
    _randomize(layer, seed=11)
    np.testing.assert_allclose(layer(x), _numpy_simple_rnn(layer.cell, x), atol=1e-5)


@pytest.mark.parametrize(
    ("cell", "keras_layer", "blocks"),
    [
        (SimpleRNNCell(UNITS), keras.layers.SimpleRNN(UNITS), 1),
        (LSTMCell(UNITS), keras.layers.LSTM(UNITS), 4),
        (GRUCell(UNITS), keras.layers.GRU(UNITS, reset_after=False), 3),
    ],
    ids=["simple_rnn", "lstm", "gru"],
)
def test_parameter_counts_match_keras_and_the_block_formula(cell, keras_layer, blocks):
    ours = keras.layers.RNN(cell)
    ours(_inputs())
    keras_layer(_inputs())
    expected = blocks * (FEATURES * UNITS + UNITS * UNITS + UNITS)
    assert ours.count_params() == keras_layer.count_params() == expected


def test_lstm_starts_like_keras_with_forget_bias_one():
    cell = LSTMCell(UNITS)
    cell.build((None, FEATURES))
    np.testing.assert_array_equal(cell.b_f, np.ones(UNITS))
    np.testing.assert_array_equal(cell.b_i, np.zeros(UNITS))
    no_forget_bias = LSTMCell(UNITS, unit_forget_bias=False)
    no_forget_bias.build((None, FEATURES))
    np.testing.assert_array_equal(no_forget_bias.b_f, np.zeros(UNITS))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(("cell_class", "gates"), [(LSTMCell, "ifgo"), (GRUCell, "zrg")],
                         ids=["lstm", "gru"])
def test_a_fresh_cells_gates_start_different(cell_class, gates, seed):
    """Notebook 03's step by hand: a fresh cell's gate net inputs differ, through the input
    weights (h(t-1) = 0) and through the recurrent ones (x(t) = 0); one initializer instance
    shared by the gates made i(t) = o(t) there."""
    keras.utils.set_random_seed(seed)
    cell = cell_class(3)
    cell.build((None, 2))
    x_t, h_previous = np.array([[0.5, -1.0]], "float32"), np.array([[0.1, -0.2, 0.3]], "float32")
    for x, h in ((x_t, 0 * h_previous), (0 * x_t, h_previous)):
        net = {gate: np.asarray(cell.net_input(gate, x, h)) for gate in gates}
        for a, b in itertools.combinations(gates, 2):
            assert np.abs(net[a] - net[b]).max() > 1e-3, f"{a}(t) and {b}(t) start alike"


# ------------------------------------------------------------------------ the RNN wrapper


@pytest.mark.parametrize("kind", ["simple_rnn", "lstm", "gru"])
@pytest.mark.parametrize("return_sequences", [False, True])
@pytest.mark.parametrize("return_state", [False, True])
def test_return_sequences_and_return_state_shapes(kind, return_sequences, return_state):
    layer = keras.layers.RNN(KINDS[kind][0](UNITS), return_sequences=return_sequences,
                             return_state=return_state)
    result = layer(_inputs())
    outputs = result if return_state else [result]
    expected_output = (BATCH, STEPS, UNITS) if return_sequences else (BATCH, UNITS)
    assert tuple(outputs[0].shape) == expected_output
    states = outputs[1:]
    assert len(states) == ((2 if kind == "lstm" else 1) if return_state else 0)
    assert all(tuple(s.shape) == (BATCH, UNITS) for s in states)
    if return_sequences and return_state:  # the last output is the final short-term state
        np.testing.assert_allclose(outputs[0][:, -1], states[0], atol=1e-6)


def test_stacked_rnns_in_a_functional_model_report_shapes_symbolically():
    inputs = keras.Input((None, FEATURES))
    hidden = keras.layers.RNN(LSTMCell(UNITS), return_sequences=True)(inputs)
    outputs = keras.layers.Bidirectional(keras.layers.RNN(GRUCell(UNITS)))(hidden)
    assert tuple(outputs.shape) == (None, 2 * UNITS)
    model = keras.Model(inputs, outputs)
    assert model.predict(_inputs(), verbose=0).shape == (BATCH, 2 * UNITS)


def test_get_config_keeps_every_argument():
    cell = LSTMCell(7, peephole=True, unit_forget_bias=False, recurrent_initializer="zeros",
                    name="slides")
    clone = LSTMCell.from_config(cell.get_config())
    assert (clone.units, clone.peephole, clone.unit_forget_bias, clone.name) == (
        7, True, False, "slides")
    assert isinstance(clone.recurrent_initializer, keras.initializers.Zeros)
    simple = SimpleRNNCell.from_config(SimpleRNNCell(3, activation="relu").get_config())
    assert simple.activation is keras.activations.relu


# ------------------------------------------------------------------------ bad input


@pytest.mark.parametrize("cell_class", [SimpleRNNCell, LSTMCell, GRUCell])
def test_rank_2_sequences_given_to_rnn_raise_a_clear_error(cell_class):
    with pytest.raises(ValueError, match=r"rank 2.*keras.layers.RNN.*time axis"):
        keras.layers.RNN(cell_class(UNITS))(np.zeros((BATCH, FEATURES), "float32"))


@pytest.mark.parametrize("cell_class", [SimpleRNNCell, LSTMCell, GRUCell])
def test_a_built_cell_called_on_a_sequence_or_wrong_width_raises(cell_class):
    cell = cell_class(UNITS)
    cell.build((None, FEATURES))
    states = [np.zeros((BATCH, UNITS), "float32")] * (2 if cell_class is LSTMCell else 1)
    with pytest.raises(ValueError, match=r"built for steps of shape \(batch, 3\)"):
        cell(_inputs(), states)
    with pytest.raises(ValueError, match="built for steps"):
        cell(np.zeros((BATCH, FEATURES + 1), "float32"), states)


def test_unknown_feature_size_and_bad_units_raise():
    with pytest.raises(ValueError, match="number of input features"):
        keras.layers.RNN(GRUCell(UNITS))(keras.Input((None, None)))
    for units in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="positive integer"):
            LSTMCell(units)


# ------------------------------------------------------------------------ masks (property)


@settings(max_examples=12, deadline=None)
@given(
    kind=st.sampled_from(sorted(KINDS)),
    length=st.integers(1, 5),
    padding=st.integers(1, 4),
    seed=st.integers(0, 2**16),
)
def test_appending_masked_padding_changes_nothing_at_real_positions(kind, length, padding, seed):
    layer = keras.layers.RNN(KINDS[kind][0](UNITS), return_sequences=True, return_state=True)
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(2, length, FEATURES)).astype("float32")
    garbage = rng.normal(scale=10.0, size=(2, padding, FEATURES)).astype("float32")
    padded = np.concatenate([x, garbage], axis=1)
    mask = np.tile(np.arange(length + padding) < length, (2, 1))   # (batch, time)
    short, long = layer(x), layer(padded, mask=mask)
    np.testing.assert_allclose(long[0][:, :length], short[0], atol=1e-5)
    for state_short, state_long in zip(short[1:], long[1:], strict=True):
        np.testing.assert_allclose(state_long, state_short, atol=1e-5)
