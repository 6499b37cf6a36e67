"""Checks for notebook 07's exercises: a sample's perplexity and the loss at each position."""

from __future__ import annotations

import numpy as np

from seqlab.course.checks.core import (
    as_array,
    assert_close,
    log_softmax,
    one_number,
    passed,
    refuse_package_calls,
    require,
    run_student_code,
)

PERPLEXITY = "Exercise 1: how surprised is the model by its own samples"
POSITION_LOSS = "Exercise 2: the loss at each position of a window"
LOG_SOFTMAX_FIRST = ("logits are not log-probabilities: apply a log-softmax over the vocabulary "
                     "first.")


def sample_perplexity_reference(logits, ids, start) -> float:
    """What exercise 1 asks for (NumPy, float64)."""
    log_probabilities = log_softmax(logits)                         # (L, V)
    ids = np.asarray(ids).astype(int)
    steps = np.arange(int(start), len(ids))
    return float(np.exp(-np.mean(log_probabilities[steps - 1, ids[steps]])))


def _perplexity_case(seed, length=14, vocabulary_size=7):
    rng = np.random.default_rng(seed)
    logits = rng.normal(scale=2.0, size=(length, vocabulary_size))
    return logits, rng.integers(0, vocabulary_size, length)


def check_perplexity(sample_perplexity) -> None:
    """Check ``sample_perplexity(logits, ids, start)`` against the float64 reference."""
    exercise = PERPLEXITY
    refuse_package_calls(exercise, sample_perplexity, ("sample_perplexity_reference",))
    for seed, start in [(0, 5), (1, 1), (2, 9)]:
        logits, ids = _perplexity_case(seed)
        got = one_number(exercise, run_student_code(exercise, sample_perplexity, logits.copy(),
                                                    ids.copy(), start), "your sample_perplexity")
        expected = sample_perplexity_reference(logits, ids, start)
        steps = np.arange(start, len(ids))
        assert_close(exercise, got, expected, what=f"your perplexity (start={start})", mistakes=[
            (np.exp(-np.mean(log_softmax(logits)[steps, ids[steps]])), "row t of the logits "
             "scores the token that comes *after* position t: score ids[t] with logits[t - 1]."),
            (sample_perplexity_reference(logits, ids, 1), "you scored the prompt too; only the "
             "continuation, ids[start:], counts."),
            (np.log(expected), "that is the mean cross-entropy; perplexity is its exponential."),
            (1 / expected, "the sign is flipped: use the *negative* mean log-probability "
             "(perplexity is at least 1)."),
            (np.exp(-np.mean(logits[steps - 1, ids[steps]])), LOG_SOFTMAX_FIRST)])
    # logits near 1000 (a softmax is unchanged by a shift, but a naive exp overflows)
    logits, ids = _perplexity_case(3)
    got = one_number(exercise, run_student_code(exercise, sample_perplexity, logits + 1000.0,
                                                ids, 5), "your sample_perplexity")
    assert_close(exercise, got, sample_perplexity_reference(logits, ids, 5), rtol=1e-4,
                 what="the perplexity for logits near 1000 (subtract the row maximum before exp)")
    passed(exercise, "Now score the samples below.")


def loss_by_position_reference(logits, targets) -> np.ndarray:
    """What exercise 2 asks for (NumPy, float64): ``(T,)``."""
    log_probabilities = log_softmax(logits)                          # (B, T, V)
    targets = np.asarray(targets).astype(int)
    picked = np.take_along_axis(log_probabilities, targets[..., None], axis=-1)[..., 0]  # (B, T)
    return -picked.mean(axis=0)


def check_loss_by_position(loss_by_position) -> None:
    """Check ``loss_by_position(logits, targets)`` on random batches."""
    exercise = POSITION_LOSS
    refuse_package_calls(exercise, loss_by_position, ("loss_by_position_reference",))
    for seed, (batch, steps, vocabulary_size) in enumerate([(4, 6, 9), (3, 8, 5)]):
        rng = np.random.default_rng(seed)
        logits = rng.normal(scale=2.0, size=(batch, steps, vocabulary_size))
        targets = rng.integers(0, vocabulary_size, (batch, steps))
        got = as_array(exercise, run_student_code(exercise, loss_by_position, logits.copy(),
                                                  targets.copy()), "your losses")
        require(exercise, got.shape != (batch,), f"you returned one value per window ({batch}); "
                f"average over the windows instead, one value per position ({steps}).")
        expected = loss_by_position_reference(logits, targets)
        raw = -np.take_along_axis(logits, targets[..., None], -1)[..., 0].mean(axis=0)
        assert_close(exercise, got, expected, what="the loss by position", atol=1e-6, mistakes=[
            (-expected, "the sign is flipped: the loss is the *negative* log-probability of the "
                        "true next token."),
            (raw, LOG_SOFTMAX_FIRST)])
    passed(exercise, "Its mean over the positions is the loss Keras reports.")
