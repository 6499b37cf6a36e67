"""Checks for notebook 07's exercises: how surprised a model is by a text, position by position.

* Exercise 1 — ``sample_perplexity(logits, ids, start)``: row ``t`` of ``logits`` ``(L, V)``
  scores the token at ``t + 1``; the perplexity of ``ids[start:]`` is
  ``exp(−mean over t ≥ start of log softmax(logits[t − 1])[ids[t]])``.
* Exercise 2 — ``loss_by_position(logits, targets)``: the mean cross-entropy at each position
  of the window, ``(T,)``.
"""

from __future__ import annotations

import numpy as np

from seqlab.course.checks.core import (
    CheckFailed,
    as_array,
    assert_close,
    log_softmax,
    passed,
    refuse_package_calls,
    run_student_code,
)

PERPLEXITY = "Exercise 1: how surprised is the model by its own samples"
POSITION_LOSS = "Exercise 2: the loss at each position of a window"


def sample_perplexity_reference(logits, ids, start) -> float:
    """What exercise 1 asks for (NumPy, float64)."""
    log_probabilities = log_softmax(logits)                         # (L, V)
    ids = np.asarray(ids).astype(int)
    steps = np.arange(int(start), len(ids))
    return float(np.exp(-np.mean(log_probabilities[steps - 1, ids[steps]])))


def _perplexity_case(seed, length=14, vocabulary_size=7, start=5):
    rng = np.random.default_rng(seed)
    logits = rng.normal(scale=2.0, size=(length, vocabulary_size))
    ids = rng.integers(0, vocabulary_size, length)
    return logits, ids, start


def _one_number(exercise, value, what):
    if np.size(value) != 1:
        raise CheckFailed(exercise, f"return one number for the whole {what}; got an array of "
                                    f"shape {np.shape(value)}.")
    return float(as_array(exercise, value, "your perplexity").reshape(-1)[0])


def check_perplexity(sample_perplexity) -> None:
    """Check ``sample_perplexity(logits, ids, start)`` against the float64 reference."""
    exercise = PERPLEXITY
    refuse_package_calls(exercise, sample_perplexity, ("sample_perplexity_reference",))
    for seed, start in [(0, 5), (1, 1), (2, 9)]:
        logits, ids, start = _perplexity_case(seed, start=start)
        got = _one_number(exercise, run_student_code(exercise, sample_perplexity, logits.copy(),
                                                     ids.copy(), start), "continuation")
        expected = sample_perplexity_reference(logits, ids, start)
        if np.isclose(got, expected, rtol=1e-5):
            continue
        log_probabilities = log_softmax(logits)
        steps = np.arange(start, len(ids))
        aligned = float(np.exp(-np.mean(log_probabilities[steps, ids[steps]])))
        if np.isclose(got, aligned, rtol=1e-5):
            raise CheckFailed(exercise, "row t of the logits scores the token that comes *after* "
                                        "position t: score ids[t] with logits[t - 1].")
        if start > 1 and np.isclose(got, sample_perplexity_reference(logits, ids, 1), rtol=1e-5):
            raise CheckFailed(exercise, "you scored the prompt too; only the continuation, "
                                        "ids[start:], counts.")
        if np.isclose(got, float(np.log(expected)), rtol=1e-5):
            raise CheckFailed(exercise, "that is the mean cross-entropy; perplexity is its "
                                        "exponential.")
        if np.isclose(got, 1 / expected, rtol=1e-5):
            raise CheckFailed(exercise, "the sign is flipped: use the *negative* mean "
                                        "log-probability (perplexity is at least 1).")
        raw = float(np.exp(-np.mean(np.asarray(logits)[steps - 1, ids[steps]])))
        if np.isclose(got, raw, rtol=1e-5):
            raise CheckFailed(exercise, "logits are not log-probabilities: apply a log-softmax "
                                        "over the vocabulary first.")
        raise CheckFailed(exercise, f"for a random case (start={start}) you gave {got:.5g}; "
                                    f"expected {expected:.5g}.")
    # logits near 1000 (a softmax is unchanged by a shift, but a naive exp overflows)
    logits, ids, start = _perplexity_case(3)
    got = _one_number(exercise, run_student_code(exercise, sample_perplexity, logits + 1000.0,
                                                 ids, start), "continuation")
    assert_close(exercise, got, sample_perplexity_reference(logits, ids, start), rtol=1e-4,
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
        expected = loss_by_position_reference(logits, targets)
        if got.shape == (batch,):
            raise CheckFailed(exercise, f"you returned one value per window ({batch}); average "
                                        f"over the windows instead, one value per position ({steps}).")
        if got.shape != expected.shape:
            raise CheckFailed(exercise, f"the result has shape {got.shape}; expected "
                                        f"{expected.shape}: one mean loss per position.")
        if np.allclose(got, -expected, atol=1e-6):
            raise CheckFailed(exercise, "the sign is flipped: the loss is the *negative* "
                                        "log-probability of the true next token.")
        raw = -np.take_along_axis(logits, targets[..., None], -1)[..., 0].mean(axis=0)
        if np.allclose(got, raw, atol=1e-6):
            raise CheckFailed(exercise, "logits are not log-probabilities: apply a log-softmax "
                                        "over the vocabulary first.")
        assert_close(exercise, got, expected, what="the loss by position", atol=1e-6)
    passed(exercise, "Its mean over the positions is the loss Keras reports.")
