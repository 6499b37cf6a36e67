"""Notebook 04's checks accept the reference answers and reject stubs and plausible mistakes."""

from __future__ import annotations

import numpy as np
import pytest
from keras import ops

from seqlab.course import checks
from seqlab.course.checks import CheckFailed
from seqlab.course.checks.attention import general_score_reference
from seqlab.layers import LuongAttention


def general_score(h, y, W):
    return ops.matmul(ops.matmul(h, W), ops.transpose(y, (0, 2, 1)))


def test_reference_answers_pass(capsys):
    checks.check_luong_general_score(general_score)
    assert capsys.readouterr().out.count("passed") == 1


def test_numpy_answers_pass_too():
    checks.check_luong_general_score(lambda h, y, W: np.einsum("btq,qv,biv->bti", h, W, y))


@pytest.mark.parametrize("delegating, name", [
    (lambda h, y, W: LuongAttention("general").score(h, y), "LuongAttention"),
    (lambda h, y, W: general_score_reference(h, y, W), "general_score_reference"),
    (lambda h, y, W: checks.attention.general_score_reference(h, y, W), "general_score_reference"),
])
def test_calling_the_package_is_not_an_answer(delegating, name):
    with pytest.raises(CheckFailed, match=f"calls seqlab's {name}"):
        checks.check_luong_general_score(delegating)


def stub(*args):
    raise NotImplementedError("replace this with your code")


@pytest.mark.parametrize("check", [checks.check_luong_general_score])
def test_the_placeholder_is_not_accepted(check):
    with pytest.raises(CheckFailed, match="placeholder"):
        check(stub)


@pytest.mark.parametrize("wrong, message", [
    (lambda h, y, W: ops.matmul(h, ops.transpose(y, (0, 2, 1))), "raised|dot score"),  # no W
    (lambda h, y, W: ops.matmul(ops.matmul(h, ops.transpose(W)), ops.transpose(y, (0, 2, 1))),
     "raised|transposed"),
    (lambda h, y, W: ops.transpose(general_score(h, y, W), (0, 2, 1)), "Tv, Tq"),
    (lambda h, y, W: ops.tanh(general_score(h, y, W)), "differs"),
])
def test_plausible_wrong_scores_are_rejected(wrong, message):
    with pytest.raises(CheckFailed, match=message):
        checks.check_luong_general_score(wrong)


def test_missing_w_on_square_inputs_is_named():
    def dot_when_possible(h, y, W):
        if h.shape[-1] != y.shape[-1]:
            return general_score(h, y, W)  # right on the first inputs, dot on the square ones
        return ops.matmul(h, ops.transpose(y, (0, 2, 1)))
    with pytest.raises(CheckFailed, match="dot score"):
        checks.check_luong_general_score(dot_when_possible)


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
