"""Checks for notebook 04's exercises: Luong's "general" score and the loss-mask experiment.

* Exercise 1 — ``general_score(h, y, W)``: eq. (12), ``e_ti = h_t^T W y_i`` for every decoder
  step ``t`` and source position ``i``; ``h`` ``(batch, Tq, dq)``, ``y`` ``(batch, Tv, dv)``,
  ``W`` ``(dq, dv)`` -> ``e`` ``(batch, Tq, Tv)``.
* Exercise 2 — the loss-mask experiment: ``unmasked_loss(labels, logits)``, the mean
  cross-entropy over *all* target positions (padding included), and ``compare_loss_masks()``,
  which trains one translator with the masked loss and one with the unmasked loss and returns
  both losses of each on the validation batch, the padding share and the BLEU
  (:func:`check_loss_mask_experiment`).

The functions are compared with NumPy versions of the equations on random inputs; the messages
name the usual mistakes (``W`` left out or transposed, the padding still masked). A general
score that calls ``LuongAttention`` or :func:`general_score_reference` is refused. The experiment's numbers are checked for what can be
checked without re-running it: each model's unmasked loss is at least ``(1 - padding share)``
times its masked loss, because the padded positions' cross-entropy is never negative.
"""

from __future__ import annotations

import math

import numpy as np

from seqlab.course.checks.core import (
    CheckFailed,
    as_array,
    assert_close,
    check_entries,
    passed,
    refuse_package_calls,
    run_student_code,
)

GENERAL_SCORE = "Exercise 1: Luong's general score"
LOSS_MASK = "Exercise 2: drop the loss mask"
#: What ``compare_loss_masks()`` returns: one entry per run, each with these numbers.
LOSS_MASK_RUNS = ("masked", "unmasked")
LOSS_MASK_FIELDS = ("masked_loss", "unmasked_loss", "padding_share", "bleu")
#: What an answer to Exercise 1 may not call: the package's layer (its ``score``) and the
#: reference below.
GENERAL_SCORE_FORBIDDEN = ("LuongAttention", "general_score_reference")


def general_score_reference(h, y, W):
    """``e[b, t, i] = h[b, t] . (W @ y[b, i])``."""
    return np.einsum("btq,qv,biv->bti", h, W, y)


def check_luong_general_score(general_score) -> None:
    """Check ``general_score(h, y, W)`` against eq. (12)'s general score.

    An answer that calls ``LuongAttention`` (its ``score``) or :func:`general_score_reference`
    is refused (:func:`seqlab.course.checks.core.refuse_package_calls`).
    """
    refuse_package_calls(GENERAL_SCORE, general_score, GENERAL_SCORE_FORBIDDEN)
    rng = np.random.default_rng(412)
    for dq, dv in ((3, 5), (4, 4)):  # a rectangular W, then a square one (W vs W^T)
        h = rng.normal(size=(2, 3, dq)).astype("float32")
        y = rng.normal(size=(2, 6, dv)).astype("float32")
        W = rng.normal(size=(dq, dv)).astype("float32")
        got = as_array(GENERAL_SCORE, run_student_code(GENERAL_SCORE, general_score, h, y, W),
                        "your score")
        expected = general_score_reference(h, y, W)
        if got.shape == expected.shape[:1] + expected.shape[:0:-1]:
            raise CheckFailed(GENERAL_SCORE, f"the scores have shape {got.shape}: (batch, Tv, Tq) "
                              "instead of (batch, Tq, Tv). Put the decoder steps first.")
        if dq == dv and got.shape == expected.shape:
            if np.allclose(got, np.einsum("btq,biq->bti", h, y), atol=1e-4):
                raise CheckFailed(GENERAL_SCORE, "this is the dot score h^T y: the general score "
                                  "multiplies by W in between, h^T W y.")
            if np.allclose(got, general_score_reference(h, y, W.T), atol=1e-4):
                raise CheckFailed(GENERAL_SCORE, "W is used transposed: with W of shape (dq, dv), "
                                  "compute h^T W y, i.e. h @ W then the dot with y.")
        assert_close(GENERAL_SCORE, got, expected, what="your score e", atol=1e-4, rtol=1e-4)
    passed(GENERAL_SCORE, "e_ti = h_t^T W y_i, eq. (12).")


def token_cross_entropy(labels, logits):
    """``-log softmax(logits)[label]`` per position: ``(batch, T)``, ``(batch, T, V)`` -> ``(batch, T)``."""
    logits = np.asarray(logits, "float64")
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    return -np.take_along_axis(log_probs, np.asarray(labels)[..., None], axis=-1)[..., 0]


def unmasked_loss_reference(labels, logits):
    """The mean cross-entropy over every position, padding (label 0) included."""
    return float(token_cross_entropy(labels, logits).mean())


def masked_loss_reference(labels, logits):
    """The mean cross-entropy over the real positions (label != 0) only."""
    real = np.asarray(labels) != 0
    return float(token_cross_entropy(labels, logits)[real].mean())


def _check_unmasked_loss(unmasked_loss) -> None:
    refuse_package_calls(LOSS_MASK, unmasked_loss, ("unmasked_loss_reference",))
    rng = np.random.default_rng(414)
    labels = rng.integers(1, 7, size=(3, 5))
    labels[0, 3:], labels[2, 1:] = 0, 0  # padding after the real tokens
    logits = rng.normal(scale=2.0, size=(3, 5, 7)).astype("float32")
    got = as_array(LOSS_MASK, run_student_code(LOSS_MASK, unmasked_loss, labels, logits),
                   "your unmasked_loss")
    if got.size != 1:
        raise CheckFailed(LOSS_MASK, f"unmasked_loss returned shape {got.shape}; return one "
                          "number, the mean over the batch and the positions.")
    got = float(got.reshape(()))
    if math.isclose(got, masked_loss_reference(labels, logits), rel_tol=1e-4):
        raise CheckFailed(LOSS_MASK, "unmasked_loss still leaves the padding out (it equals the "
                          "masked loss); average over every position, padding included.")
    if math.isclose(got, float(token_cross_entropy(labels, logits).sum()), rel_tol=1e-4):
        raise CheckFailed(LOSS_MASK, "unmasked_loss is a sum; return the mean over all positions.")
    assert_close(LOSS_MASK, got, unmasked_loss_reference(labels, logits),
                 what="your unmasked loss", atol=1e-4, rtol=1e-4)


def check_loss_mask_experiment(unmasked_loss, comparison) -> None:
    """Exercise 2: the unmasked loss, then the two runs' numbers.

    Args:
        unmasked_loss: the student's ``unmasked_loss(labels, logits)``.
        comparison: ``compare_loss_masks`` (called here without arguments) or its result:
            ``{"masked": {...}, "unmasked": {...}}`` with the :data:`LOSS_MASK_FIELDS`.

    The loss is compared with the mean cross-entropy over every position on random inputs.
    For the runs: every number finite, the padding share in ``(0, 1)`` and the same for both
    runs (the same validation batch), BLEU in ``[0, 100]``, and each model's unmasked loss at
    least ``(1 - padding share)`` times its masked loss (the padded positions add a
    cross-entropy that is never negative). On success the runs are printed side by side.
    """
    exercise = LOSS_MASK
    _check_unmasked_loss(unmasked_loss)
    if callable(comparison):
        comparison = run_student_code(exercise, comparison)
    check_entries(exercise, comparison, LOSS_MASK_RUNS, LOSS_MASK_FIELDS, what="the comparison")
    for name, run in comparison.items():
        for field in LOSS_MASK_FIELDS:
            value = run[field]
            if (isinstance(value, bool) or not isinstance(value, (int, float, np.number))
                    or not math.isfinite(float(value))):
                raise CheckFailed(exercise, f"{name!r}: {field} is {value!r}; expected a number.")
        if not 0.0 < run["padding_share"] < 1.0:
            raise CheckFailed(exercise, f"{name!r}: padding_share is {run['padding_share']!r}; "
                              "it is the fraction of valid_labels equal to 0, between 0 and 1.")
        if not 0.0 <= run["bleu"] <= 100.0:
            raise CheckFailed(exercise, f"{name!r}: bleu is {run['bleu']!r}; BLEU lies in [0, 100] "
                              "(use evaluate(...)[1]['bleu']).")
        floor = (1.0 - run["padding_share"]) * run["masked_loss"]
        if run["unmasked_loss"] < floor - 1e-3 * max(1.0, abs(floor)):
            raise CheckFailed(exercise, f"{name!r}: the unmasked loss {run['unmasked_loss']:.4f} "
                              f"is below (1 - padding share) x masked loss = {floor:.4f}, which "
                              "cannot happen on the same batch: compute both losses of the same "
                              "model on (valid_inputs, valid_labels).")
    shares = [comparison[name]["padding_share"] for name in LOSS_MASK_RUNS]
    if not math.isclose(shares[0], shares[1], rel_tol=1e-6):
        raise CheckFailed(exercise, f"the padding shares differ ({shares[0]} and {shares[1]}); "
                          "both runs are measured on the same valid_labels.")
    table = "".join(
        f"\n  trained {name:<9} masked loss {run['masked_loss']:.3f}, unmasked loss "
        f"{run['unmasked_loss']:.3f}, BLEU {run['bleu']:.1f}"
        for name, run in ((n, comparison[n]) for n in LOSS_MASK_RUNS))
    passed(exercise, f"padding is {shares[0]:.0%} of the validation labels.{table}")

