"""Checks for notebook 07's exercises: perplexity and temperature / top-k sampling.

* Exercise 1 — ``perplexity_of(probabilities)``: given the probability the model gave to each
  *actual* next character, ``(n,)``, return the perplexity ``exp(−(1/n) Σ log p)``.
* Exercise 2 — ``sampling_distribution(logits, temperature, top_k)``: the distribution a
  sampler draws the next character from: divide the logits by the temperature, keep the
  ``top_k`` largest (``None``: all), softmax over those (the rest get 0). Shape ``(V,)``.
"""

from __future__ import annotations

import numpy as np

from seqlab.checks.core import CheckFailed, as_array, assert_close, passed, run_student_code

PERPLEXITY = "Exercise 1: perplexity"
SAMPLING = "Exercise 2: temperature and top-k"


def perplexity_reference(probabilities) -> float:
    return float(np.exp(-np.mean(np.log(np.asarray(probabilities, "float64")))))


def check_perplexity(perplexity_of) -> None:
    """Check ``perplexity_of(probabilities)`` on certain, uniform and mixed predictions."""
    cases = [np.ones(5), np.full(8, 1 / 4), np.array([0.5, 0.25, 0.9, 0.05, 0.6])]
    for probabilities in cases:
        value = run_student_code(PERPLEXITY, perplexity_of, probabilities.copy())
        got = float(as_array(PERPLEXITY, value, "your perplexity").reshape(-1)[0]) \
            if np.size(value) == 1 else None
        if got is None:
            raise CheckFailed(PERPLEXITY, "return one number for the whole text, not one per "
                              "character.")
        expected = perplexity_reference(probabilities)
        if np.isclose(got, expected, rtol=1e-5):
            continue
        if np.isclose(got, float(np.mean(1 / probabilities)), rtol=1e-5):
            raise CheckFailed(PERPLEXITY, "you averaged 1/p; perplexity is the exponential of "
                              "the average negative log-probability (a geometric mean).")
        if np.isclose(got, float(np.exp(np.mean(np.log(probabilities)))), rtol=1e-5):
            raise CheckFailed(PERPLEXITY, "the sign is flipped: use the *negative* "
                              "log-probability (perplexity is at least 1).")
        if np.isclose(got, -float(np.mean(np.log(probabilities))), rtol=1e-5):
            raise CheckFailed(PERPLEXITY, "that is the cross-entropy; perplexity is its "
                              "exponential.")
        raise CheckFailed(PERPLEXITY, f"for probabilities {np.round(probabilities, 3).tolist()} "
                          f"you gave {got:.4g}; expected {expected:.4g}.")
    passed(PERPLEXITY, "A model that gives every true character 1/4 has perplexity 4.")


def _softmax(z):
    z = z - z[np.isfinite(z)].max()
    e = np.where(np.isfinite(z), np.exp(z), 0.0)
    return e / e.sum()


def sampling_distribution_reference(logits, temperature, top_k=None):
    z = np.asarray(logits, "float64") / temperature
    if top_k is not None:
        kth = np.sort(z)[-top_k]
        z = np.where(z >= kth, z, -np.inf)
    return _softmax(z)


def check_sampling_distribution(sampling_distribution) -> None:
    """Check ``sampling_distribution(logits, temperature, top_k)`` for several settings."""
    logits = np.array([1.5, -0.3, 2.4, 0.0, 0.9, -1.2])
    for temperature, top_k in [(1.0, None), (0.5, None), (2.0, None), (1.0, 3), (0.7, 2), (1.5, 1)]:
        got = as_array(SAMPLING, run_student_code(SAMPLING, sampling_distribution, logits.copy(),
                                                  temperature, top_k), "your distribution")
        expected = sampling_distribution_reference(logits, temperature, top_k)
        if got.shape != expected.shape:
            raise CheckFailed(SAMPLING, f"the result has shape {got.shape}; expected "
                              f"{expected.shape}: one probability per character.")
        if np.allclose(got, expected, atol=1e-6):
            continue
        setting = f"temperature={temperature}, top_k={top_k}"
        if not np.isclose(got.sum(), 1.0, atol=1e-4):
            raise CheckFailed(SAMPLING, f"with {setting} the probabilities sum to {got.sum():.4f}; "
                              "renormalise after dropping the tokens outside the top k.")
        if np.allclose(got, sampling_distribution_reference(logits, 1 / temperature, top_k), atol=1e-6):
            raise CheckFailed(SAMPLING, f"with {setting}: divide the logits by the temperature "
                              "(a low temperature must sharpen the distribution).")
        if top_k is not None and np.allclose(got, sampling_distribution_reference(logits, temperature),
                                             atol=1e-6):
            raise CheckFailed(SAMPLING, f"with {setting} every token keeps some probability; only "
                              f"the {top_k} most likely may.")
        if top_k is not None and (got > 1e-12).sum() != min(top_k, len(logits)):
            raise CheckFailed(SAMPLING, f"with {setting}, {(got > 1e-12).sum()} tokens have a "
                              f"probability above 0; expected {top_k}.")
        assert_close(SAMPLING, got, expected, what=f"the distribution ({setting})", atol=1e-6)
    passed(SAMPLING)
