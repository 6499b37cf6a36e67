"""Notebook 06's checks accept the reference answers and reject stubs and plausible mistakes."""

from __future__ import annotations

import numpy as np
import pytest
from student_answers import as_student_answer

from seqlab.course import checks
from seqlab.course.checks import CheckFailed
from seqlab.course.checks.embeddings import cbow_probabilities_reference


def stub(*args):
    raise NotImplementedError("replace this with your code")


def test_reference_answers_pass(capsys):
    checks.check_cbow_probabilities(as_student_answer(cbow_probabilities_reference))
    assert capsys.readouterr().out.count("passed") == 1


def test_the_placeholder_is_not_accepted():
    with pytest.raises(CheckFailed, match="placeholder"):
        checks.check_cbow_probabilities(stub)


def _softmax(z):
    e = np.exp(z - z.max())
    return e / e.sum()


@pytest.mark.parametrize("wrong, message", [
    (lambda W, U, c: _softmax(U @ W[c].sum(axis=0)), "summed"),
    (lambda W, U, c: _softmax(W @ U[c].mean(axis=0)), "swapped"),
    (lambda W, U, c: U @ W[c].mean(axis=0), "softmax"),
    (lambda W, U, c: _softmax(U @ W[c].mean(axis=0))[:-1], "shape"),
    (lambda W, U, c: _softmax(U @ W[c[:1]].mean(axis=0)), "differs"),
])
def test_plausible_wrong_cbow_answers_are_rejected(wrong, message):
    with pytest.raises(CheckFailed, match=message):
        checks.check_cbow_probabilities(wrong)


# ------------------------------------------------------------ subsampling sized for a corpus


def dropped(counts, threshold):
    frequencies = np.asarray(counts, dtype=float) / np.sum(counts)
    return float(np.sum(frequencies * np.maximum(0.0, 1.0 - np.sqrt(threshold / frequencies))))


def threshold_for(counts, share):
    low, high = -80.0, 0.0  # log t: drops everything ... nothing
    for _ in range(100):
        middle = (low + high) / 2
        low, high = (middle, high) if dropped(counts, np.exp(middle)) > share else (low, middle)
    return float(np.exp(low))


def test_subsampling_share_accepts_a_derivation_and_a_bisection(capsys):
    checks.check_subsampling_share(dropped, threshold_for)
    out = capsys.readouterr().out
    assert "passed" in out and "t = 1e-5 drops" in out


def unweighted(counts, threshold):
    frequencies = np.asarray(counts, dtype=float) / np.sum(counts)
    return float(np.mean(np.maximum(0.0, 1.0 - np.sqrt(threshold / frequencies))))


def uncapped(counts, threshold):
    frequencies = np.asarray(counts, dtype=float) / np.sum(counts)
    return float(np.sum(frequencies * (1.0 - np.sqrt(threshold / frequencies))))


@pytest.mark.parametrize("wrong_dropped, wrong_threshold, message", [
    (stub, threshold_for, "placeholder"),
    (dropped, stub, "placeholder"),
    (unweighted, threshold_for, "weight it by the word's share"),
    (uncapped, threshold_for, "never discarded"),
    (lambda c, t: [dropped(c, t)], threshold_for, "expected one number"),
    (dropped, lambda c, share: share, "drops"),                       # t = the share itself
    (dropped, lambda c, share: -1.0, "t > 0"),
])
def test_subsampling_share_explains_mistakes(wrong_dropped, wrong_threshold, message):
    with pytest.raises(CheckFailed, match=message):
        checks.check_subsampling_share(wrong_dropped, wrong_threshold)

