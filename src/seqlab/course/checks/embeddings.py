"""Checks for notebook 06's exercises: word2vec's noise distribution and subsampling, and CBOW.

* Exercise 1 — ``noise_distribution(counts, power=0.75)``, :math:`U(w)^{3/4}/Z`, and
  ``keep_probabilities(counts, threshold)``, :math:`\\min(1, \\sqrt{t / f(w)})` (Mikolov et
  al., 2013, "Distributed Representations of Words and Phrases and their Compositionality",
  §2.2 and §2.3).
* Exercise 2 — ``cbow_probabilities(W, U, context_ids)``: the slides' "Continuous Bag of Words
  Model (CBOW)", ``softmax(U v̄)`` with ``v̄`` the mean of the context rows of ``W``.
"""

from __future__ import annotations

import numpy as np

from seqlab.course.checks.core import (
    CheckFailed,
    as_array,
    assert_close,
    passed,
    refuse_package_calls,
    run_student_code,
    softmax,
)

NOISE_AND_SUBSAMPLING = "Exercise 1: the paper's noise distribution and subsampling"
CBOW = "Exercise 2: the CBOW prediction"
#: What the answers may not call: the package's versions and the checks' references.
NOISE_AND_SUBSAMPLING_FORBIDDEN = ("unigram_noise_probabilities", "subsampling_keep_probabilities")
CBOW_FORBIDDEN = ("cbow_probabilities_reference",)


def check_noise_and_subsampling(noise_distribution, keep_probabilities) -> None:
    """Check word2vec's noise distribution and subsampling on word counts of several shapes."""
    from seqlab.data.corpus import subsampling_keep_probabilities, unigram_noise_probabilities

    exercise = NOISE_AND_SUBSAMPLING
    for function in (noise_distribution, keep_probabilities):
        refuse_package_calls(exercise, function, NOISE_AND_SUBSAMPLING_FORBIDDEN)
    rng = np.random.default_rng(2013)
    cases = [np.array([5000, 1200, 300, 40, 7, 1]), rng.integers(1, 10_000, size=50),
             np.array([3, 3, 3])]
    for counts in cases:
        got = as_array(exercise, run_student_code(exercise, noise_distribution, counts.copy()),
                       "the noise distribution")
        expected = unigram_noise_probabilities(counts)
        if got.shape != expected.shape:
            raise CheckFailed(exercise, f"noise_distribution returned shape {got.shape}; "
                                        f"expected {expected.shape}, one probability per word.")
        if not np.allclose(got, expected, rtol=1e-6, atol=1e-9):
            if np.isclose(got.sum(), 1.0) and np.allclose(got, counts / counts.sum()):
                raise CheckFailed(exercise, "noise_distribution returned the unigram "
                                            "distribution itself: raise the counts to the power "
                                            "3/4 before normalising.")
            if not np.isclose(got.sum(), 1.0, atol=1e-6):
                raise CheckFailed(exercise, f"noise_distribution sums to {got.sum():.4g}; "
                                            "normalise it (divide by Z) so that it sums to 1.")
            assert_close(exercise, got, expected, what="the noise distribution",
                         rtol=1e-6, atol=1e-9)
        for power in (1.0, 0.5):
            got = as_array(exercise, run_student_code(exercise, noise_distribution,
                                                      counts.copy(), power=power),
                           "the noise distribution")
            assert_close(exercise, got, unigram_noise_probabilities(counts, power),
                         what=f"noise_distribution(counts, power={power})", rtol=1e-6, atol=1e-9)
        for threshold in (1e-3, 1e-5, 0.5):
            got = as_array(exercise, run_student_code(exercise, keep_probabilities,
                                                      counts.copy(), threshold),
                           "the keep probabilities")
            expected = subsampling_keep_probabilities(counts, threshold)
            if got.shape != expected.shape:
                raise CheckFailed(exercise, f"keep_probabilities returned shape {got.shape}; "
                                            f"expected {expected.shape}, one per word.")
            if (got > 1 + 1e-9).any():
                raise CheckFailed(exercise, "a keep probability is above 1: a word rarer than "
                                            "the threshold is always kept (cap at 1).")
            if np.allclose(got, 1 - expected, rtol=1e-6, atol=1e-9):
                raise CheckFailed(exercise, "you returned the probability of discarding; "
                                            "return the probability of keeping.")
            assert_close(exercise, got, expected, rtol=1e-6, atol=1e-9,
                         what=f"keep_probabilities(counts, {threshold:g})")
    counts = cases[0]
    noise, unigram = unigram_noise_probabilities(counts), counts / counts.sum()
    keep = subsampling_keep_probabilities(counts, 1e-3)
    print(f"For counts {counts.tolist()}: the most frequent word is {unigram[0]:.1%} of the text "
          f"but {noise[0]:.1%} of the negatives, the rarest {unigram[-1]:.3%} and "
          f"{noise[-1]:.3%}; with t = 1e-3, {keep[0]:.1%} of the most frequent word's "
          "occurrences are kept.")
    passed(exercise)


def cbow_probabilities_reference(W, U, context_ids):
    """``softmax(U · mean(W[context_ids]))``."""
    W, U = np.asarray(W, "float64"), np.asarray(U, "float64")
    average = W[np.asarray(context_ids)].mean(axis=0)   # (N,)
    return softmax(U @ average)                         # (V,)


def check_cbow_probabilities(cbow_probabilities) -> None:
    """Check ``cbow_probabilities(W, U, context_ids)`` on random matrices."""
    refuse_package_calls(CBOW, cbow_probabilities, CBOW_FORBIDDEN)
    rng = np.random.default_rng(6)
    vocab, dim = 12, 4
    W = rng.normal(size=(vocab, dim))
    U = rng.normal(size=(vocab, dim))
    for context_ids in ([1, 4, 7, 9], [2, 2, 5, 11], [3, 8]):
        got = as_array(CBOW, run_student_code(CBOW, cbow_probabilities, W.copy(), U.copy(),
                                              np.array(context_ids)), "your probabilities")
        expected = cbow_probabilities_reference(W, U, context_ids)
        if got.shape != expected.shape:
            raise CheckFailed(CBOW, f"the result has shape {got.shape}; expected ({vocab},): one "
                              "probability per word of the vocabulary.")
        if np.allclose(got, expected, atol=1e-6):
            continue
        if not np.isclose(got.sum(), 1.0, atol=1e-4) or (got < 0).any():
            raise CheckFailed(CBOW, "the result does not sum to 1: apply the softmax to the "
                              "scores z = U v̄.")
        summed = softmax(U @ W[context_ids].sum(axis=0))
        if np.allclose(got, summed, atol=1e-6):
            raise CheckFailed(CBOW, "you summed the context vectors; CBOW averages them "
                              "(divide by the number of context words, 2m).")
        if np.allclose(got, cbow_probabilities_reference(U, W, context_ids), atol=1e-6):
            raise CheckFailed(CBOW, "the two tables are swapped: context vectors come from W, "
                              "scores from U.")
        assert_close(CBOW, got, expected, what="the probabilities", atol=1e-6)
    passed(CBOW)
