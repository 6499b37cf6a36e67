"""seqlab.sampling: temperature, top-k, and greedy as the temperature -> 0 limit."""

from __future__ import annotations

import numpy as np
import pytest

from seqlab.sampling import next_token_probabilities, sample_next_token


def test_temperature_zero_is_argmax_and_small_temperatures_approach_it():
    logits = np.random.default_rng(0).normal(size=(64, 20)) * 3
    greedy = np.argmax(logits, axis=-1)
    np.testing.assert_array_equal(sample_next_token(logits, temperature=0), greedy)
    probabilities = next_token_probabilities(logits, temperature=1e-3)
    np.testing.assert_array_equal(np.argmax(probabilities, axis=-1), greedy)
    assert probabilities.max(axis=-1).min() > 0.99
    # a tie goes to the first, as argmax
    assert sample_next_token([1.0, 3.0, 3.0], temperature=0) == 1


def test_temperature_sharpens_or_flattens():
    logits = np.array([2.0, 1.0, 0.0, -1.0])
    one = next_token_probabilities(logits)
    np.testing.assert_allclose(one, np.exp(logits) / np.exp(logits).sum())
    cold, hot = next_token_probabilities(logits, 0.5), next_token_probabilities(logits, 5.0)
    assert cold[0] > one[0] > hot[0]
    assert np.ptp(hot) < np.ptp(one)


def test_top_k_keeps_k_tokens_and_renormalises():
    logits = np.array([0.5, 2.0, -1.0, 1.5, 0.0])
    probabilities = next_token_probabilities(logits, top_k=2)
    assert np.count_nonzero(probabilities) == 2 and probabilities[[1, 3]].sum() == pytest.approx(1)
    np.testing.assert_allclose(probabilities[[1, 3]], np.exp([2.0, 1.5]) / np.exp([2.0, 1.5]).sum())
    np.testing.assert_allclose(next_token_probabilities(logits, top_k=10), next_token_probabilities(logits))


def test_samples_follow_the_distribution_and_never_leave_the_top_k():
    logits = np.array([0.0, 1.0, 2.0, -3.0])
    rng = np.random.default_rng(1)
    draws = sample_next_token(np.tile(logits, (20_000, 1)), temperature=1.0, top_k=3, rng=rng)
    assert draws.shape == (20_000,) and 3 not in set(draws.tolist())
    np.testing.assert_allclose(np.bincount(draws, minlength=4) / draws.size,
                               next_token_probabilities(logits, top_k=3), atol=0.015)
    assert sample_next_token(logits, rng=5) == sample_next_token(logits, rng=5)


@pytest.mark.parametrize("kwargs, message", [
    ({"logits": np.zeros((2, 3, 4))}, "shape"),
    ({"logits": [1.0, 2.0], "temperature": -1.0}, "temperature"),
    ({"logits": [1.0, 2.0], "top_k": 0}, "top_k"),
])
def test_bad_input_gets_one_clear_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        next_token_probabilities(**kwargs)
