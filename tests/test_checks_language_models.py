"""Notebook 07's checks accept the reference answers and reject stubs and plausible mistakes."""

from __future__ import annotations

import numpy as np
import pytest

from seqlab import checks
from seqlab.checks import CheckFailed
from seqlab.sampling import next_token_probabilities


def stub(*args):
    raise NotImplementedError("replace this with your code")


def test_reference_answers_pass(capsys):
    checks.check_perplexity(lambda p: np.exp(-np.mean(np.log(p))))
    checks.check_perplexity(lambda p: 2 ** (-np.mean(np.log2(p))))  # same number, base 2
    checks.check_sampling_distribution(
        lambda logits, temperature, top_k=None: next_token_probabilities(logits, temperature, top_k))
    assert capsys.readouterr().out.count("passed") == 3


@pytest.mark.parametrize("check", [checks.check_perplexity, checks.check_sampling_distribution])
def test_the_placeholder_is_not_accepted(check):
    with pytest.raises(CheckFailed, match="placeholder"):
        check(stub)


@pytest.mark.parametrize("wrong, message", [
    (lambda p: np.mean(1 / p), "averaged 1/p"),
    (lambda p: np.exp(np.mean(np.log(p))), "sign"),
    (lambda p: -np.mean(np.log(p)), "cross-entropy"),
    (lambda p: np.exp(-np.log(p)), "one number"),
    (lambda p: np.exp(-np.sum(np.log(p))), "expected"),
])
def test_plausible_wrong_perplexities_are_rejected(wrong, message):
    with pytest.raises(CheckFailed, match=message):
        checks.check_perplexity(wrong)


def _softmax(z):
    e = np.exp(z - z[np.isfinite(z)].max())
    e = np.where(np.isfinite(z), e, 0.0)
    return e / e.sum()


def _top_k(z, k):
    if k is None:
        return z
    return np.where(z >= np.sort(z)[-k], z, -np.inf)


@pytest.mark.parametrize("wrong, message", [
    (lambda z, t, k=None: _softmax(_top_k(z * t, k)), "divide the logits"),
    (lambda z, t, k=None: _softmax(z / t), "keeps some probability"),
    (lambda z, t, k=None: np.where(np.isfinite(_top_k(z / t, k)), _softmax(z / t), 0.0), "sum to"),
    (lambda z, t, k=None: _softmax(_top_k(z / t, k))[:3], "shape"),
    (lambda z, t, k=None: _softmax(_top_k(z / t, None if k is None else k + 1)), "tokens have a probability"),
])
def test_plausible_wrong_sampling_distributions_are_rejected(wrong, message):
    with pytest.raises(CheckFailed, match=message):
        checks.check_sampling_distribution(wrong)
