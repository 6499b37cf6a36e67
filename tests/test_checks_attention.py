"""Notebook 04's checks accept the reference answers and reject stubs and plausible mistakes."""

from __future__ import annotations

import numpy as np
import pytest
from keras import ops

from seqlab.course import checks
from seqlab.course.checks import CheckFailed
from seqlab.layers import LuongAttention

H = np.random.default_rng(4).normal(size=(1, 4)).astype("float32")
Y = np.random.default_rng(5).normal(size=(1, 3, 4)).astype("float32")
MASK = np.array([[True, True, False]])


def attention_entropy(scale, h=H, y=Y, mask=MASK):
    layer = LuongAttention("general")
    layer(h, y, padding_mask=mask)
    layer.set_weights([scale * np.eye(4, dtype="float32")])
    _, alpha = layer(h, y, padding_mask=mask, return_attention_scores=True)
    alpha = np.asarray(alpha)
    return float(-np.sum(np.where(alpha > 0, alpha * np.log(np.maximum(alpha, 1e-30)), 0.0)))


@pytest.mark.parametrize("prediction, verdict", [("sharper", "was right"),
                                                 ("flatter", "was wrong")])
def test_the_measurement_passes_and_the_prediction_is_graded(prediction, verdict, capsys):
    checks.check_general_score_scale(prediction, attention_entropy, H, Y, MASK)
    out = capsys.readouterr().out
    assert "passed" in out and verdict in out and ": sharper." in out


def test_the_entropy_at_scale_zero_is_that_of_uniform_weights_over_the_real_words():
    assert checks.attention.attention_entropy_reference(H, Y, MASK, 0.0) == pytest.approx(
        np.log(2.0))


def test_a_missing_prediction_is_refused():
    with pytest.raises(CheckFailed, match="prediction is None"):
        checks.check_general_score_scale(None, attention_entropy, H, Y, MASK)


def test_a_prediction_function_is_called():
    checks.check_general_score_scale(lambda: "sharper", attention_entropy, H, Y, MASK)


def stub(*args):
    raise NotImplementedError("replace this with your code")


@pytest.mark.parametrize("prediction, entropy", [("sharper", stub), (stub, attention_entropy)])
def test_the_placeholders_are_not_accepted(prediction, entropy):
    with pytest.raises(CheckFailed, match="placeholder"):
        checks.check_general_score_scale(prediction, entropy, H, Y, MASK)


def test_a_w_that_is_never_set_is_named():
    def unscaled(scale):
        return attention_entropy(1.0)
    with pytest.raises(CheckFailed, match="does not change with the scale"):
        checks.check_general_score_scale("sharper", unscaled, H, Y, MASK)


@pytest.mark.parametrize("wrong", [
    lambda scale: attention_entropy(scale, mask=np.ones((1, 3), bool)),  # padding counted
    lambda scale: -attention_entropy(scale),                              # sign
])
def test_plausible_wrong_entropies_are_rejected(wrong):
    with pytest.raises(CheckFailed):
        checks.check_general_score_scale("sharper", wrong, H, Y, MASK)


def unmasked_loss(labels, logits):
    return ops.mean(ops.sparse_categorical_crossentropy(labels, logits, from_logits=True))


def runs(**changes):
    result = {"masked": {"masked_loss": 1.9, "unmasked_loss": 7.0, "padding_share": 0.36,
                         "bleu": 17.1},
              "unmasked": {"masked_loss": 2.9, "unmasked_loss": 1.9, "padding_share": 0.36,
                           "bleu": 1.3}}
    for key, value in changes.items():
        name, field = key.split("__")
        result[name][field] = value
    return result


def test_loss_mask_experiment_accepts_consistent_runs(capsys):
    checks.check_loss_mask_experiment(unmasked_loss, lambda: runs())
    out = capsys.readouterr().out
    assert "passed" in out and "36%" in out and "BLEU 1.3" in out


def test_loss_mask_experiment_refuses_the_placeholder():
    with pytest.raises(CheckFailed, match="placeholder"):
        checks.check_loss_mask_experiment(stub, runs())
    with pytest.raises(CheckFailed, match="placeholder"):
        checks.check_loss_mask_experiment(unmasked_loss, stub)


def masked_mean(labels, logits):
    losses = ops.sparse_categorical_crossentropy(labels, logits, from_logits=True)
    real = ops.cast(labels != 0, "float32")
    return ops.sum(losses * real) / ops.sum(real)


@pytest.mark.parametrize("wrong, message", [
    (masked_mean, "leaves the padding out"),
    (lambda labels, logits: ops.sum(ops.sparse_categorical_crossentropy(labels, logits,
                                                                       from_logits=True)), "sum"),
    (lambda labels, logits: ops.sparse_categorical_crossentropy(labels, logits, from_logits=True),
     "one number"),
    (lambda labels, logits: ops.mean(ops.sparse_categorical_crossentropy(labels, logits)),
     "differs"),  # logits read as probabilities
])
def test_plausible_wrong_unmasked_losses_are_rejected(wrong, message):
    with pytest.raises(CheckFailed, match=message):
        checks.check_loss_mask_experiment(wrong, runs())


@pytest.mark.parametrize("changes, message", [
    ({"masked__unmasked_loss": 0.5}, "cannot happen"),  # below (1 - 0.36) * 1.9
    ({"unmasked__padding_share": 0.4}, "padding shares differ"),
    ({"masked__padding_share": 0.0}, "between 0 and 1"),
    ({"unmasked__bleu": 0.4 * 300}, r"\[0, 100\]"),
    ({"masked__bleu": float("nan")}, "expected a number"),
    ({"masked__masked_loss": "1.9"}, "expected a number"),
])
def test_inconsistent_runs_are_rejected(changes, message):
    with pytest.raises(CheckFailed, match=message):
        checks.check_loss_mask_experiment(unmasked_loss, runs(**changes))


def test_missing_runs_or_fields_are_named():
    with pytest.raises(CheckFailed, match="entries"):
        checks.check_loss_mask_experiment(unmasked_loss, {"masked": runs()["masked"]})
    broken = runs()
    del broken["unmasked"]["bleu"]
    with pytest.raises(CheckFailed, match="bleu"):
        checks.check_loss_mask_experiment(unmasked_loss, broken)
