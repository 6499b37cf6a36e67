"""Checks for notebook 03's exercises: two recurrent cells (weights named as on the slides,
``W_xf``, ``W_hf``, ``b_f``), the reset-gate comparison and the gradient through ten steps."""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from seqlab.course.checks.core import (
    CheckFailed,
    assert_close,
    check_entries,
    passed,
    require,
    run_student_code,
    value_of,
)
from seqlab.course.checks.transcript import observe

UNITS, FEATURES, STEPS, BATCH = 3, 4, 5, 2

COUPLED_LSTM = "Exercise 1: the coupled-gate LSTM cell"
GRU_WITHOUT_RESET = "Exercise 2a: a GRU cell without reset gate"
RESET_GATE_COMPARISON = "Exercise 2b: GRU with and without reset gate"
GRADIENT_RATIOS = "Exercise 3: the gradient through ten steps"

#: Exercise 3's grid: the recurrent layer's activation and the scale of W_y = scale * I.
ACTIVATIONS = ("linear", "tanh", "relu")
SCALES = (0.5, 1.0, 1.5)
#: Steps between x(0) and the last input x(10): the slide's example raises Lambda to this power.
STEPS_BACK = 10


def _sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


def coupled_lstm_reference(w: Mapping[str, np.ndarray], x: np.ndarray):
    """Eqs. (3)-(7) with i = 1 - f: ``(outputs (batch, time, units), [h, c])`` for the weights
    ``w`` (slide names) and inputs ``x`` ``(batch, time, features)``."""
    h = c = np.zeros((x.shape[0], UNITS))
    outputs = []
    for t in range(x.shape[1]):
        net = {k: x[:, t] @ w[f"W_x{k}"] + h @ w[f"W_h{k}"] + w[f"b_{k}"] for k in "fog"}
        f, o, g = _sigmoid(net["f"]), _sigmoid(net["o"]), np.tanh(net["g"])
        c = f * c + (1.0 - f) * g
        h = o * np.tanh(c)
        outputs.append(h)
    return np.stack(outputs, axis=1), [h, c]


def gru_without_reset_reference(w: Mapping[str, np.ndarray], x: np.ndarray):
    """Eqs. (8), (10), (11) with r = 1: ``(outputs (batch, time, units), [h])``."""
    h = np.zeros((x.shape[0], UNITS))
    outputs = []
    for t in range(x.shape[1]):
        z = _sigmoid(x[:, t] @ w["W_xz"] + h @ w["W_hz"] + w["b_z"])
        g = np.tanh(x[:, t] @ w["W_xg"] + h @ w["W_hg"] + w["b_g"])
        h = z * h + (1.0 - z) * g
        outputs.append(h)
    return np.stack(outputs, axis=1), [h]


def _gate_weights(gates: str) -> set[str]:
    return {f"{name}{gate}" for gate in gates for name in ("W_x", "W_h", "b_")}


def _check_cell(exercise: str, cell_class, *, gates: str, absent_gate: str, why: str,
                reference, state_names: list[str]) -> int:
    """Run ``cell_class`` in an RNN with random weights against ``reference``; its parameters."""
    rng = np.random.default_rng(2000)
    x = rng.normal(size=(BATCH, STEPS, FEATURES)).astype("float32")
    facts = observe(exercise, _describe_cell, exercise, cell_class, x)
    names = set(facts["names"])
    extra, missing = names & _gate_weights(absent_gate), _gate_weights(gates) - names
    require(exercise, not extra, f"your cell has the weights {sorted(extra)}: {why}")
    require(exercise, not missing, f"your cell lacks the weights {sorted(missing)}; create them "
            "in build() with self.add_gates(...), as in the cell's template.")
    got = [np.asarray(r) for r in facts["outputs"]]
    weights = dict(zip(facts["names"], facts["weights"], strict=True))
    expected_sequence, expected_states = reference(weights, x)
    require(exercise, len(got) == 1 + len(state_names), f"the RNN returned {len(got) - 1} "
            f"state(s), expected {len(state_names)} ({', '.join(state_names)}): check state_size "
            "and that call returns (output, [new states]).")
    assert_close(exercise, got[0], expected_sequence, what="the output sequence y(t)")
    for value, expected, name in zip(got[1:], expected_states, state_names, strict=True):
        assert_close(exercise, value, expected, what=f"the final state {name}")
    parameters = facts["parameters"]
    require(exercise, parameters == _block_parameters(len(gates)), f"your cell has {parameters} "
            f"parameters; {len(gates)} gates of this size have {_block_parameters(len(gates))}.")
    return parameters


def _describe_cell(exercise: str, cell_class, x: np.ndarray) -> dict:
    """Run ``cell_class`` in an RNN on ``x`` with random weights; report weights and outputs."""
    import keras

    def build_and_run():
        layer = keras.layers.RNN(cell_class(UNITS), return_sequences=True, return_state=True)
        layer(x)
        return layer

    layer = run_student_code(exercise, build_and_run)
    rng = np.random.default_rng(2001)
    for weight in layer.cell.weights:
        weight.assign(rng.normal(scale=0.6, size=weight.shape).astype("float32"))
    outputs = [np.asarray(r) for r in run_student_code(exercise, layer, x)]
    return {"names": [w.name for w in layer.cell.weights],
            "weights": [np.asarray(w) for w in layer.cell.weights],
            "outputs": outputs, "parameters": int(layer.count_params())}


def _block_parameters(blocks: int) -> int:
    return blocks * (FEATURES * UNITS + UNITS * UNITS + UNITS)


def check_coupled_lstm_cell(cell_class) -> None:
    """Exercise 1: ``cell_class(units)`` builds the gates ``f``, ``o``, ``g``, keeps ``[h, c]``
    and computes eqs. (3)-(7) with ``i = 1 - f``."""
    parameters = _check_cell(COUPLED_LSTM, cell_class, gates="fog", absent_gate="i", why="a "
                             "coupled cell has no input gate of its own; i(t) = 1 - f(t) needs "
                             "no weights.", reference=coupled_lstm_reference,
                             state_names=["h(t)", "c(t)"])
    passed(COUPLED_LSTM, f"Three weight blocks instead of four: {parameters} "
                         f"parameters where an LSTM has {_block_parameters(4)}.")


def check_gru_without_reset_gate(cell_class) -> None:
    """Exercise 2a: a GRU cell with ``r = 1``: eqs. (8), (10), (11) and no reset weights."""
    parameters = _check_cell(GRU_WITHOUT_RESET, cell_class, gates="zg", absent_gate="r",
                             why="without a reset gate the cell needs no W_xr, W_hr or b_r.",
                             reference=gru_without_reset_reference, state_names=["h(t)"])
    passed(GRU_WITHOUT_RESET, f"{parameters} parameters where the GRU of eqs. (8)-(11) "
                              f"has {_block_parameters(3)}.")


def check_reset_gate_comparison(comparison) -> None:
    """Exercise 2b: ``comparison`` (or the function returning it) maps ``"with reset gate"`` and
    ``"without reset gate"`` to ``cell_parameters``, ``val_accuracy`` and ``epochs``."""
    exercise = RESET_GATE_COMPARISON
    comparison = value_of(exercise, comparison)
    expected_keys = ("with reset gate", "without reset gate")
    check_entries(exercise, comparison, expected_keys,
                  ("cell_parameters", "val_accuracy", "epochs"), what="the comparison")
    for name, result in comparison.items():
        accuracy = result["val_accuracy"]
        require(exercise, isinstance(accuracy, (int, float)) and 0.0 <= accuracy <= 1.0,
                f"{name!r}: val_accuracy is {accuracy!r}, expected a number between 0 and 1.")
    with_reset, without_reset = (comparison[k] for k in expected_keys)
    require(exercise, 3 * without_reset["cell_parameters"] == 2 * with_reset["cell_parameters"],
            f"the cells have {with_reset['cell_parameters']} and "
            f"{without_reset['cell_parameters']} parameters; without the reset gate there should "
            "be exactly 2/3 as many. Did both runs use the same units?")
    require(exercise, with_reset["epochs"] == without_reset["epochs"], "train both cells for the "
            "same number of epochs, or the comparison says nothing about the reset gate.")
    table = "".join(
        f"\n  {name:<20} {comparison[name]['cell_parameters']:>7,} parameters, validation "
        f"accuracy {comparison[name]['val_accuracy']:.3f} after {comparison[name]['epochs']} "
        "epochs" for name in expected_keys)
    passed(exercise, table)


def _float_or_nan(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def check_gradient_ratios(table) -> None:
    """Exercise 3: ``||dL/dx(0)|| / ||dL/dx(10)||`` through an RNN whose ``W_y = scale * I``;
    the linear row must be ``scale ** 10``. ``table`` (or the function returning it) maps each
    of :data:`ACTIVATIONS` to ``{scale: ratio}`` for :data:`SCALES`."""
    exercise = GRADIENT_RATIOS
    table = value_of(exercise, table)
    require(exercise, isinstance(table, Mapping) and set(table) == set(ACTIVATIONS), f"the table "
            f"must have one row per activation {list(ACTIVATIONS)}; found {table!r}.")
    rows = {}
    for activation in ACTIVATIONS:
        row = table[activation] if isinstance(table[activation], Mapping) else {}
        rows[activation] = {_float_or_nan(k): _float_or_nan(v) for k, v in row.items()}
        require(exercise, set(rows[activation]) == set(SCALES), f"row {activation!r} must have "
                f"one entry per scale {list(SCALES)}; found {table[activation]!r}.")
        for scale, ratio in rows[activation].items():
            require(exercise, math.isfinite(ratio) and ratio >= 0, f"{activation!r}, scale "
                    f"{scale}: the ratio is {ratio}, expected a finite number >= 0.")
    for scale in SCALES:
        expected = scale ** STEPS_BACK
        if not math.isclose(rows["linear"][scale], expected, rel_tol=1e-3):
            hint = ("the inverse: divide the norm at x(0) by the norm at x(10)"
                    if math.isclose(rows["linear"][scale], 1 / expected, rel_tol=1e-3) else
                    f"scale**{STEPS_BACK} = {expected:.5g}; check that W_y = scale * I "
                    "(keras.initializers.Identity(gain=scale)), that the inputs have "
                    f"{STEPS_BACK + 1} steps and that the ratio compares the first step with "
                    "the last")
            raise CheckFailed(exercise, f"linear, scale {scale}: your ratio is "
                                        f"{rows['linear'][scale]:.5g}; expected {hint}.")
    lines = ["", f"  {'':<9}" + "".join(f"{'scale ' + str(s):>12}" for s in SCALES)]
    lines += [f"  {activation:<9}" + "".join(f"{rows[activation][s]:>12.4g}" for s in SCALES)
              for activation in ACTIVATIONS]
    lines.append(f"  {'scale^10':<9}" + "".join(f"{s ** STEPS_BACK:>12.4g}" for s in SCALES)
                 + "   (the diagonal of the slide's Lambda^10)")
    passed(exercise, "\n".join(lines))
