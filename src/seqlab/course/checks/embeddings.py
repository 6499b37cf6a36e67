"""Checks for notebook 06's exercises: the share of tokens subsampling drops,
``sum_w f(w) max(0, 1 - sqrt(t / f(w)))`` (Mikolov et al., 2013, §2.3), and CBOW's
``softmax(U v̄)``."""

from __future__ import annotations

import numpy as np

from seqlab.course.checks.core import (
    as_array,
    assert_close,
    one_number,
    passed,
    refuse_package_calls,
    require,
    run_student_code,
    softmax,
)

SUBSAMPLING = "Exercise 1: subsampling sized for our corpus"
CBOW = "Exercise 2: the CBOW prediction"
#: How close ``threshold_for``'s threshold must bring the dropped share to the target.
SHARE_TOLERANCE = 0.005


def dropped_share_reference(counts, threshold):
    """``sum_w f(w) * (1 - keep(w))``: each occurrence of ``w`` is dropped with ``1 - keep(w)``."""
    from seqlab.data.corpus import subsampling_keep_probabilities

    frequencies = np.asarray(counts, dtype="float64") / np.sum(counts)
    return float(np.sum(frequencies * (1.0 - subsampling_keep_probabilities(counts, threshold))))


def check_subsampling_share(dropped_share, threshold_for) -> None:
    """Check the expected dropped share and the threshold for a share, on counts of several
    shapes (a Zipf-like corpus, random counts, a flat vocabulary)."""
    exercise = SUBSAMPLING
    for function in (dropped_share, threshold_for):
        refuse_package_calls(exercise, function,
                             ("subsampling_keep_probabilities", "dropped_share_reference"))
    rng = np.random.default_rng(2013)
    cases = [np.array([5000, 1200, 300, 40, 7, 1]), rng.integers(1, 10_000, size=50),
             (100_000 / np.arange(1, 2001)).astype(int) + 1]
    for counts in cases:
        frequencies = counts / counts.sum()
        for threshold in (1e-5, 1e-3, 0.05, 1.0):
            got = one_number(exercise, run_student_code(exercise, dropped_share, counts.copy(),
                                                        threshold), "dropped_share")
            discard = 1.0 - np.sqrt(threshold / frequencies)
            assert_close(exercise, got, dropped_share_reference(counts, threshold), rtol=1e-6,
                         atol=1e-9, what=f"dropped_share(counts, {threshold:g})", mistakes=[
                (np.mean(np.maximum(discard, 0.0)), "dropped_share averaged the words' discard "
                 "probabilities; each applies to every occurrence of its word: weight it by the "
                 "word's share f(w)."),
                (np.sum(frequencies * discard), "a word rarer than t has 1 - sqrt(t/f) < 0: it "
                 "is never discarded, its share dropped is 0.")])
        for share in (0.1, 1 / 3, 0.6):
            threshold = run_student_code(exercise, threshold_for, counts.copy(), share)
            require(exercise, np.isfinite(threshold) and threshold > 0,
                    f"threshold_for(counts, {share:.2f}) returned {threshold}; expected a "
                    "threshold t > 0.")
            reached = dropped_share_reference(counts, float(threshold))
            require(exercise, abs(reached - share) <= SHARE_TOLERANCE,
                    f"threshold_for(counts, {share:.2f}) returned t = {float(threshold):.3g}, "
                    f"which drops {reached:.1%} of the tokens, not {share:.1%}. The share falls "
                    "as t grows: search for the t that gives it (bisection on log t works).")
    counts = cases[2]
    print(f"A Zipf-like corpus of {counts.sum():,} tokens over {len(counts):,} words: t = 1e-5 "
          f"drops {dropped_share_reference(counts, 1e-5):.0%} of its tokens, t = 1e-3 "
          f"{dropped_share_reference(counts, 1e-3):.0%}.")
    passed(exercise)


def cbow_probabilities_reference(W, U, context_ids):
    """``softmax(U · mean(W[context_ids]))``."""
    W, U = np.asarray(W, "float64"), np.asarray(U, "float64")
    average = W[np.asarray(context_ids)].mean(axis=0)   # (N,)
    return softmax(U @ average)                         # (V,)


def check_cbow_probabilities(cbow_probabilities) -> None:
    """Check ``cbow_probabilities(W, U, context_ids)`` on random matrices."""
    refuse_package_calls(CBOW, cbow_probabilities, ("cbow_probabilities_reference",))
    rng = np.random.default_rng(6)
    W = rng.normal(size=(12, 4))                        # (V, N)
    U = rng.normal(size=(12, 4))
    for context_ids in ([1, 4, 7, 9], [2, 2, 5, 11], [3, 8]):
        got = as_array(CBOW, run_student_code(CBOW, cbow_probabilities, W.copy(), U.copy(),
                                              np.array(context_ids)), "your probabilities")
        sums_to_one = np.isclose(got.sum(), 1.0, atol=1e-4) and (got >= 0).all()
        require(CBOW, sums_to_one or got.shape != (12,),
                "the result does not sum to 1: apply the softmax to the scores z = U v̄.")
        assert_close(CBOW, got, cbow_probabilities_reference(W, U, context_ids), atol=1e-6,
                     what="the probability vector (one per word)", mistakes=[
            (softmax(U @ W[context_ids].sum(axis=0)), "you summed the context vectors; CBOW "
             "averages them (divide by the number of context words, 2m)."),
            (cbow_probabilities_reference(U, W, context_ids), "the two tables are swapped: "
             "context vectors come from W, scores from U.")])
    passed(CBOW)
