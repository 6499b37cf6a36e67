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


# ------------------------------------------------------------ noise distribution and subsampling


def noise(counts, power=0.75):
    weights = np.asarray(counts, dtype=float) ** power
    return weights / weights.sum()


def keep(counts, threshold):
    return np.minimum(1.0, np.sqrt(threshold / (np.asarray(counts) / np.sum(counts))))


def test_noise_and_subsampling_accepts_the_paper_formulas(capsys):
    checks.check_noise_and_subsampling(noise, keep)
    out = capsys.readouterr().out
    assert "passed" in out and "of the negatives" in out


@pytest.mark.parametrize("wrong_noise, wrong_keep, message", [
    (stub, keep, "placeholder"),
    (noise, stub, "placeholder"),
    (lambda c, power=0.75: np.asarray(c) / np.sum(c), keep, "unigram distribution itself"),
    (lambda c, power=0.75: np.asarray(c, float) ** power, keep, "sums to"),
    (lambda c, power=0.75: noise(c, 0.75), keep, "power=1.0"),
    (lambda c, power=0.75: noise(c, power)[:-1], keep, "shape"),
    (noise, lambda c, t: 1 - keep(c, t), "discarding"),
    (noise, lambda c, t: np.sqrt(t / (np.asarray(c) / np.sum(c))), "above 1"),
    (noise, lambda c, t: np.minimum(1.0, t / (np.asarray(c) / np.sum(c))), "differs"),
])
def test_noise_and_subsampling_explains_mistakes(wrong_noise, wrong_keep, message):
    with pytest.raises(CheckFailed, match=message):
        checks.check_noise_and_subsampling(wrong_noise, wrong_keep)
