"""Notebook 03's checks accept the reference answers and reject stubs and plausible mistakes."""

from __future__ import annotations

import numpy as np
import pytest
from keras import ops

from seqlab.course import checks
from seqlab.course.checks import CheckFailed
from seqlab.layers import RecurrentCell


class CoupledLSTMCell(RecurrentCell):
    """Reference answer of exercise 1; the mistakes below override one piece of it."""

    def __init__(self, units, **kwargs):
        super().__init__(units, **kwargs)
        self.state_size = [units, units]
        self.output_size = units

    def build(self, input_shape):
        super().build(input_shape)
        self.add_gates("f", "o", "g")

    def input_gate(self, f):
        return 1.0 - f

    def squash(self, c):
        return ops.tanh(c)

    def call(self, inputs, states):
        h_previous, c_previous = states
        f = ops.sigmoid(self.net_input("f", inputs, h_previous))
        o = ops.sigmoid(self.net_input("o", inputs, h_previous))
        g = ops.tanh(self.net_input("g", inputs, h_previous))
        c = f * c_previous + self.input_gate(f) * g
        h = o * self.squash(c)
        return h, [h, c]


class InputGateEqualsForgetGate(CoupledLSTMCell):
    def input_gate(self, f):
        return f


class NoTanhOnTheOutput(CoupledLSTMCell):
    def squash(self, c):
        return c


class KeepsItsInputGateWeights(CoupledLSTMCell):
    def build(self, input_shape):
        super().build(input_shape)
        self.add_gates("i")


class ForgetsTheLongTermState(CoupledLSTMCell):
    def __init__(self, units, **kwargs):
        super().__init__(units, **kwargs)
        self.state_size = units

    def call(self, inputs, states):
        h, _ = super().call(inputs, [states[0], ops.zeros_like(states[0])])
        return h, [h]


class CoupledStub(CoupledLSTMCell):
    def call(self, inputs, states):
        raise NotImplementedError("Exercise 1: replace this line with your solution.")


class GRUCellWithoutResetGate(RecurrentCell):
    """Reference answer of exercise 2a."""

    def __init__(self, units, **kwargs):
        super().__init__(units, **kwargs)
        self.state_size = units
        self.output_size = units

    def build(self, input_shape):
        super().build(input_shape)
        self.add_gates("z", "g")

    def mix(self, z, h_previous, g):
        return z * h_previous + (1.0 - z) * g

    def call(self, inputs, states):
        h_previous = states[0]
        z = ops.sigmoid(self.net_input("z", inputs, h_previous))
        g = ops.tanh(self.net_input("g", inputs, h_previous))
        h = self.mix(z, h_previous, g)
        return h, [h]


class UpdateGateSwapped(GRUCellWithoutResetGate):
    def mix(self, z, h_previous, g):
        return (1.0 - z) * h_previous + z * g


class GRUStub(GRUCellWithoutResetGate):
    def call(self, inputs, states):
        raise NotImplementedError("Exercise 2a: replace this line with your solution.")


def test_reference_answers_pass(capsys):
    assert checks.check_coupled_lstm_cell(CoupledLSTMCell) is None
    assert checks.check_gru_without_reset_gate(GRUCellWithoutResetGate) is None
    printed = capsys.readouterr().out
    assert "Exercise 1: the coupled-gate LSTM cell passed" in printed
    assert "Exercise 2a" in printed and "passed" in printed


@pytest.mark.parametrize(
    ("check", "stub"),
    [(checks.check_coupled_lstm_cell, CoupledStub),
     (checks.check_gru_without_reset_gate, GRUStub)],
)
def test_placeholders_fail_with_the_friendly_message(check, stub):
    with pytest.raises(CheckFailed, match="still the placeholder") as failure:
        check(stub)
    assert "not passed yet" in failure.value._render_traceback_()[0]


@pytest.mark.parametrize(
    ("wrong", "message"),
    [
        (InputGateEqualsForgetGate, "output sequence y\\(t\\) differs"),
        (NoTanhOnTheOutput, "output sequence y\\(t\\) differs"),
        (KeepsItsInputGateWeights, "W_xi"),
        (ForgetsTheLongTermState, "returned 1 state"),
    ],
    ids=["i_equals_f", "missing_tanh", "input_gate_weights", "no_long_term_state"],
)
def test_plausible_wrong_coupled_cells_are_rejected(wrong, message):
    with pytest.raises(CheckFailed, match=message):
        checks.check_coupled_lstm_cell(wrong)


def test_wrong_gru_answers_are_rejected():
    with pytest.raises(CheckFailed, match="differs"):
        checks.check_gru_without_reset_gate(UpdateGateSwapped)
    from seqlab.layers import GRUCell
    with pytest.raises(CheckFailed, match="W_hr"):  # the full GRU still has its reset gate
        checks.check_gru_without_reset_gate(GRUCell)
    with pytest.raises(CheckFailed, match="lacks the weights"):
        checks.check_gru_without_reset_gate(CoupledLSTMCell)


def _package_cell_outputs(cell, weights, x):
    """Run ``seqlab``'s cell (tested against Keras's twin) in an RNN with the given weights."""
    import keras

    layer = keras.layers.RNN(cell, return_sequences=True, return_state=True)
    layer.build(x.shape)
    for weight in layer.cell.weights:
        weight.assign(np.asarray(weights[weight.name], "float32"))
    return [np.asarray(r) for r in layer(x)]


def test_the_numpy_references_named_in_same_as_are_the_package_cells_in_disguise():
    """Notebook 03's ``same_as`` names these references for the giveaway audit; they must be
    the exercises' answers: an LSTM whose input gate has the forget gate's weights negated has
    i = sigmoid(-a) = 1 - f, and a GRU whose reset gate is saturated at 1 has no reset."""
    from seqlab.course.checks.recurrent import (
        FEATURES,
        STEPS,
        UNITS,
        coupled_lstm_reference,
        gru_without_reset_reference,
    )
    from seqlab.layers import GRUCell, LSTMCell
    from seqlab_instructor.homework.giveaways import import_object

    rng = np.random.default_rng(7)
    x = rng.normal(size=(2, STEPS, FEATURES)).astype("float32")

    def block(gate):
        return {f"W_x{gate}": rng.normal(scale=0.6, size=(FEATURES, UNITS)),
                f"W_h{gate}": rng.normal(scale=0.6, size=(UNITS, UNITS)),
                f"b_{gate}": rng.normal(scale=0.6, size=UNITS)}

    coupled = {**block("f"), **block("o"), **block("g")}
    lstm = {**coupled, **{name.replace("f", "i"): -value for name, value in coupled.items()
                          if name.endswith("f")}}
    expected, states = coupled_lstm_reference(coupled, x)
    got = _package_cell_outputs(LSTMCell(UNITS), lstm, x)
    np.testing.assert_allclose(got[0], expected, atol=1e-5)
    np.testing.assert_allclose(got[2], states[1], atol=1e-5)  # c(t)

    no_reset = {**block("z"), **block("g")}
    gru = {**no_reset, "W_xr": np.zeros((FEATURES, UNITS)), "W_hr": np.zeros((UNITS, UNITS)),
           "b_r": np.full(UNITS, 50.0)}  # r = sigmoid(50) = 1 in float32
    expected, _ = gru_without_reset_reference(no_reset, x)
    np.testing.assert_allclose(_package_cell_outputs(GRUCell(UNITS), gru, x)[0], expected,
                               atol=1e-5)

    assert import_object("seqlab.course.checks.recurrent.coupled_lstm_reference") is coupled_lstm_reference
    assert (import_object("seqlab.course.checks.recurrent.gru_without_reset_reference")
            is gru_without_reset_reference)


def _comparison(with_parameters=75, without_parameters=50, accuracy=0.8, epochs=(3, 3)):
    return {
        "with reset gate": {"cell_parameters": with_parameters, "val_accuracy": accuracy,
                            "epochs": epochs[0]},
        "without reset gate": {"cell_parameters": without_parameters, "val_accuracy": 0.75,
                               "epochs": epochs[1]},
    }


def test_reset_gate_comparison_accepts_a_fair_comparison_or_the_function_making_it(capsys):
    assert checks.check_reset_gate_comparison(_comparison()) is None
    printed = capsys.readouterr().out
    assert "passed" in printed and "0.800" in printed and "0.750" in printed
    assert checks.check_reset_gate_comparison(_comparison) is None


def test_reset_gate_comparison_placeholder_fails_with_the_friendly_message():
    def compare():
        raise NotImplementedError("Exercise 2b: replace this line with your solution.")

    with pytest.raises(CheckFailed, match="still the placeholder"):
        checks.check_reset_gate_comparison(compare)


@pytest.mark.parametrize(
    ("comparison", "message"),
    [
        ({}, "must have the entries"),
        (None, "must have the entries"),
        ({"with reset gate": {}, "without reset gate": {}}, "lacks"),
        (_comparison(without_parameters=75), "2/3"),
        (_comparison(accuracy=1.7), "between 0 and 1"),
        (_comparison(accuracy=float("nan")), "between 0 and 1"),
        (_comparison(epochs=(3, 1)), "same number of epochs"),
    ],
    ids=["empty", "none", "missing_keys", "same_parameters", "accuracy_over_1", "nan", "epochs"],
)
def test_reset_gate_comparison_rejects_incomplete_or_unfair_results(comparison, message):
    with pytest.raises(CheckFailed, match=message):
        checks.check_reset_gate_comparison(comparison)


def _ratios(linear=(0.5 ** 10, 1.0, 1.5 ** 10), tanh=(1e-4, 0.05, 0.4), relu=(1e-5, 0.6, 40.0)):
    return {name: dict(zip((0.5, 1.0, 1.5), row, strict=True))
            for name, row in (("linear", linear), ("tanh", tanh), ("relu", relu))}


def test_gradient_ratios_accepts_the_slides_powers_and_prints_the_table(capsys):
    from seqlab.course.checks.recurrent import check_gradient_ratios

    assert check_gradient_ratios(_ratios()) is None
    assert check_gradient_ratios(_ratios) is None
    printed = capsys.readouterr().out
    assert "Exercise 3" in printed and "passed" in printed
    assert "57.67" in printed and "0.0009766" in printed and "0.4" in printed


def test_gradient_ratios_placeholder_fails_with_the_friendly_message():
    from seqlab.course.checks.recurrent import check_gradient_ratios

    def table():
        raise NotImplementedError("Exercise 3: replace this line with your solution.")

    with pytest.raises(CheckFailed, match="still the placeholder"):
        check_gradient_ratios(table)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({}, "one row per activation"),
        ({"linear": {}, "tanh": {}, "relu": {}}, "one entry per scale"),
        ({**_ratios(), "tanh": {"half": 1.0}}, "one entry per scale"),
        (_ratios(tanh=(1e-4, float("nan"), 0.4)), "finite number"),
        (_ratios(relu=(1e-5, -0.6, 40.0)), "finite number"),
        (_ratios(linear=(1.0, 1.0, 1.0)), "scale\\*\\*10"),            # gain not applied
        (_ratios(linear=(0.5 ** 9, 1.0, 1.5 ** 9)), "scale\\*\\*10"),  # ten steps, not eleven
        (_ratios(linear=(2.0 ** 10, 1.0, 1.5 ** -10)), "the inverse"),
    ],
    ids=["empty", "empty_rows", "bad_scale", "nan", "negative", "no_gain", "nine_steps",
         "inverted"],
)
def test_gradient_ratios_rejects_incomplete_or_wrong_tables(table, message):
    from seqlab.course.checks.recurrent import check_gradient_ratios

    with pytest.raises(CheckFailed, match=message):
        check_gradient_ratios(table)


def test_gradient_ratios_of_a_real_linear_rnn_pass():
    """The measurement the exercise asks for, done once here: the linear row is scale**10."""
    import keras
    import numpy as np
    import tensorflow as tf

    from seqlab.course.checks.recurrent import ACTIVATIONS, SCALES, check_gradient_ratios
    from seqlab.layers import SimpleRNNCell

    inputs = tf.constant(np.random.default_rng(0).normal(size=(4, 11, 3)).astype("float32"))
    table = {}
    for activation in ACTIVATIONS:
        table[activation] = {}
        for scale in SCALES:
            layer = keras.layers.RNN(SimpleRNNCell(
                5, activation=activation, recurrent_initializer=keras.initializers.Identity(scale)))
            layer.build(inputs.shape)
            with tf.GradientTape() as tape:
                tape.watch(inputs)
                loss = keras.ops.sum(layer(inputs))
            norms = np.linalg.norm(tape.gradient(loss, inputs).numpy(), axis=-1).mean(axis=0)
            table[activation][scale] = norms[0] / norms[-1]
    check_gradient_ratios(table)
