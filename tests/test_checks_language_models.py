"""Notebook 07's checks accept the reference answers and reject stubs and plausible mistakes."""

from __future__ import annotations

import numpy as np
import pytest
from student_answers import as_student_answer

from seqlab.course import checks
from seqlab.course.checks import CheckFailed
from seqlab.course.checks import language_models as lm_checks


def stub(*args):
    raise NotImplementedError("replace this with your code")


def _log_softmax(z):
    z = np.asarray(z, "float64")
    z = z - z.max(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


def _perplexity(logits, ids, start):
    steps = np.arange(start, len(ids))
    return np.exp(-np.mean(_log_softmax(logits)[steps - 1, np.asarray(ids)[steps]]))


def test_reference_answers_pass(capsys):
    checks.check_perplexity(as_student_answer(lm_checks.sample_perplexity_reference))
    checks.check_perplexity(_perplexity)
    checks.check_loss_by_position(as_student_answer(lm_checks.loss_by_position_reference))
    checks.check_loss_by_position(
        lambda logits, targets: -np.take_along_axis(_log_softmax(logits), targets[..., None],
                                                    -1)[..., 0].mean(0))
    assert capsys.readouterr().out.count("passed") == 4


def test_the_sample_perplexity_reference_is_the_mean_surprise_of_the_continuation():
    # two tokens, the model always 3:1 sure of token 0; the continuation [0, 1] has p = 3/4, 1/4
    logits = np.log(np.array([[3.0, 1.0]] * 4))
    ids = np.array([1, 1, 0, 1])
    expected = np.exp(-(np.log(0.75) + np.log(0.25)) / 2)
    assert lm_checks.sample_perplexity_reference(logits, ids, 2) == pytest.approx(expected)


@pytest.mark.parametrize("check", [checks.check_perplexity, checks.check_loss_by_position])
def test_the_placeholder_is_not_accepted(check):
    with pytest.raises(CheckFailed, match="placeholder"):
        check(stub)


def _aligned(logits, ids, start):
    steps = np.arange(start, len(ids))
    return np.exp(-np.mean(_log_softmax(logits)[steps, ids[steps]]))


@pytest.mark.parametrize("wrong, message", [
    (_aligned, "after"),
    (lambda logits, ids, start: _perplexity(logits, ids, 1), "prompt"),
    (lambda logits, ids, start: np.log(_perplexity(logits, ids, start)), "cross-entropy"),
    (lambda logits, ids, start: 1 / _perplexity(logits, ids, start), "sign"),
    (lambda logits, ids, start: np.exp(-np.mean(logits[np.arange(start, len(ids)) - 1,
                                                       ids[start:]])), "log-softmax"),
    (lambda logits, ids, start: np.exp(-_log_softmax(logits)[np.arange(start, len(ids)) - 1,
                                                           ids[start:]]), "one number"),
    (lambda logits, ids, start: _perplexity(logits, ids, start) + 0.1, "expected"),
])
def test_plausible_wrong_sample_perplexities_are_rejected(wrong, message):
    with pytest.raises(CheckFailed, match=message):
        checks.check_perplexity(wrong)


def test_a_naive_softmax_that_overflows_is_rejected():
    def naive(logits, ids, start):
        with np.errstate(all="ignore"):
            probabilities = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
            steps = np.arange(start, len(ids))
            return np.exp(-np.mean(np.log(probabilities[steps - 1, ids[steps]])))
    with pytest.raises(CheckFailed, match="near 1000"):
        checks.check_perplexity(naive)


def _picked(logits, targets):
    return np.take_along_axis(_log_softmax(logits), targets[..., None], -1)[..., 0]


@pytest.mark.parametrize("wrong, message", [
    (lambda logits, targets: -_picked(logits, targets).mean(1), "one value per window"),
    (lambda logits, targets: -_picked(logits, targets).mean(), "shape"),
    (lambda logits, targets: _picked(logits, targets).mean(0), "sign"),
    (lambda logits, targets: -np.take_along_axis(logits, targets[..., None], -1)[..., 0].mean(0),
     "log-softmax"),
    (lambda logits, targets: -_picked(logits, targets).sum(0), "differs"),
])
def test_plausible_wrong_losses_by_position_are_rejected(wrong, message):
    with pytest.raises(CheckFailed, match=message):
        checks.check_loss_by_position(wrong)

