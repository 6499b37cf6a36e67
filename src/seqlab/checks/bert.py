"""Checks for notebook 08's exercises: BERT's 80/10/10 masking rule and the masked-LM loss.

* Exercise 1 — ``apply_masking(token_ids, chosen, draws, random_ids, mask_id)``: of the
  positions ``chosen`` for prediction (BERT: 15 % of the tokens), replace a token by
  ``mask_id`` when its ``draws`` value is below 0.8, by ``random_ids`` at that position when it
  is in ``[0.8, 0.9)``, and keep it otherwise; positions not chosen never change. All inputs
  are 1-D of the same length; return the new ids.
* Exercise 2 — ``masked_lm_loss(logits, labels, weights)``: the mean cross-entropy over the
  *real* masked positions: ``logits`` ``(B, P, V)`` at the ``P`` mask slots of each example,
  ``labels`` ``(B, P)`` the original token ids, ``weights`` ``(B, P)`` 1 for a real masked
  position and 0 for an unused slot. ``Σ w·CE / Σ w``; one number.
"""

from __future__ import annotations

import numpy as np

from seqlab.checks.core import CheckFailed, as_array, assert_close, passed, run_student_code

MASKING = "Exercise 1: the 80/10/10 masking rule"
LOSS = "Exercise 2: the loss on masked positions only"

#: BERT's split of the chosen positions: [MASK] below 0.8, a random token below 0.9, else kept.
MASK_SHARE = 0.8
RANDOM_SHARE = 0.1


def apply_masking_reference(token_ids, chosen, draws, random_ids, mask_id):
    """What exercise 1 asks for (NumPy)."""
    token_ids = np.asarray(token_ids)
    chosen = np.asarray(chosen, bool)
    draws = np.asarray(draws, "float64")
    masked = chosen & (draws < MASK_SHARE)
    randomised = chosen & (draws >= MASK_SHARE) & (draws < MASK_SHARE + RANDOM_SHARE)
    result = np.where(masked, mask_id, token_ids)
    return np.where(randomised, np.asarray(random_ids), result)


def _masking_case(seed, length=400, mask_id=4, vocabulary_size=50):
    rng = np.random.default_rng(seed)
    token_ids = rng.integers(5, vocabulary_size, length)
    chosen = rng.random(length) < 0.15
    chosen[:3] = True                       # make sure each branch is exercised
    draws = rng.random(length)
    draws[:3] = [0.1, 0.85, 0.95]
    random_ids = rng.integers(5, vocabulary_size, length)
    random_ids[1] = (token_ids[1] + 1 - 5) % (vocabulary_size - 5) + 5  # differs from the token
    return token_ids, chosen, draws, random_ids, mask_id


def check_masking_rule(apply_masking) -> None:
    """Check ``apply_masking(token_ids, chosen, draws, random_ids, mask_id)`` on random cases."""
    for seed in (0, 1, 2):
        token_ids, chosen, draws, random_ids, mask_id = _masking_case(seed)
        value = run_student_code(MASKING, apply_masking, token_ids.copy(), chosen.copy(),
                                 draws.copy(), random_ids.copy(), mask_id)
        got = np.asarray(value)
        expected = apply_masking_reference(token_ids, chosen, draws, random_ids, mask_id)
        if got.shape != expected.shape:
            raise CheckFailed(MASKING, f"the result has shape {got.shape}; expected "
                              f"{expected.shape}: one id per input token.")
        if np.array_equal(got, expected):
            continue
        outside = ~chosen & (got != token_ids)
        if outside.any():
            i = int(np.argmax(outside))
            raise CheckFailed(MASKING, f"position {i} was not chosen but changed from "
                              f"{token_ids[i]} to {got[i]}: only chosen positions may change.")
        if np.array_equal(got, np.where(chosen, mask_id, token_ids)):
            raise CheckFailed(MASKING, "every chosen position became the mask id; only those "
                              "with a draw below 0.8 should (10 % get a random token, 10 % stay).")
        for i in np.flatnonzero(chosen):
            if got[i] == expected[i]:
                continue
            if draws[i] < MASK_SHARE:
                should = f"the mask id {mask_id} (draw {draws[i]:.2f} < 0.8)"
            elif draws[i] < MASK_SHARE + RANDOM_SHARE:
                should = f"its random id {random_ids[i]} (0.8 <= draw {draws[i]:.2f} < 0.9)"
            else:
                should = f"unchanged, {token_ids[i]} (draw {draws[i]:.2f} >= 0.9)"
            raise CheckFailed(MASKING, f"chosen position {i} holds {got[i]}; it should be {should}.")
    passed(MASKING, "Of the chosen tokens about 80 % become [MASK], 10 % a random "
                    "token and 10 % stay as they were.")


def masked_lm_loss_reference(logits, labels, weights) -> float:
    """What exercise 2 asks for (NumPy, float64)."""
    logits = np.asarray(logits, "float64")
    shifted = logits - logits.max(-1, keepdims=True)
    log_probabilities = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))  # (B, P, V)
    labels = np.asarray(labels).astype(int)
    picked = np.take_along_axis(log_probabilities, labels[..., None], -1)[..., 0]  # (B, P)
    weights = np.asarray(weights, "float64")
    return float(-(picked * weights).sum() / weights.sum())


def _loss_case(seed, batch=3, slots=5, vocabulary_size=11):
    rng = np.random.default_rng(seed)
    logits = rng.normal(scale=2.0, size=(batch, slots, vocabulary_size))
    labels = rng.integers(0, vocabulary_size, (batch, slots))
    weights = np.zeros((batch, slots))
    for row, real in enumerate(rng.integers(1, slots, batch)):
        weights[row, :real] = 1.0
    labels[weights == 0] = 0                   # unused slots hold id 0, as keras-hub's do
    return logits, labels, weights


def check_masked_lm_loss(masked_lm_loss) -> None:
    """Check ``masked_lm_loss(logits, labels, weights)`` against the float64 reference."""
    for seed in (0, 1):
        logits, labels, weights = _loss_case(seed)
        value = run_student_code(LOSS, masked_lm_loss, logits.copy(), labels.copy(),
                                 weights.copy())
        if np.size(value) != 1:
            raise CheckFailed(LOSS, f"return one number (the mean over the real masked "
                              f"positions); got an array of shape {np.shape(value)}.")
        got = float(as_array(LOSS, value, "your loss").reshape(-1)[0])
        expected = masked_lm_loss_reference(logits, labels, weights)
        if np.isclose(got, expected, rtol=1e-5):
            continue
        if np.isclose(got, masked_lm_loss_reference(logits, labels, np.ones_like(weights)),
                      rtol=1e-5):
            raise CheckFailed(LOSS, "you averaged over every slot; the unused slots (weight 0) "
                              "are not masked tokens and must not count.")
        every_slot = masked_lm_loss_reference(logits, labels, weights) * weights.sum() / weights.size
        if np.isclose(got, every_slot, rtol=1e-5):
            raise CheckFailed(LOSS, "you summed over the real positions but divided by the "
                              "number of all slots; divide by the sum of the weights.")
        if np.isclose(got, -expected, rtol=1e-5):
            raise CheckFailed(LOSS, "the sign is flipped: the loss is the *negative* "
                              "log-probability of the true token.")
        raise CheckFailed(LOSS, f"for a random case you gave {got:.5g}; expected "
                          f"{expected:.5g} (mean of −log softmax(logits)[label] over the "
                          "positions whose weight is 1).")
    # a large-logit case: a naive softmax overflows
    logits, labels, weights = _loss_case(3)
    got = run_student_code(LOSS, masked_lm_loss, 100.0 * logits, labels, weights)
    assert_close(LOSS, np.reshape(np.asarray(got, "float64"), ()),
                 masked_lm_loss_reference(100.0 * logits, labels, weights), what="the loss for "
                 "logits of size ~100 (subtract the row maximum before exp)", rtol=1e-4)
    passed(LOSS, "Only the chosen tokens are predicted, so only they carry loss.")
