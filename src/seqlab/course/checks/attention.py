"""Checks for notebook 04's exercises: the general score's scale (``W = s I``) and the
loss-mask experiment."""

from __future__ import annotations

import math

import numpy as np

from seqlab.course.checks.core import (
    assert_close,
    check_entries,
    log_softmax,
    one_number,
    passed,
    refuse_package_calls,
    require,
    run_student_code,
    softmax,
    value_of,
)

GENERAL_SCALE = "Exercise 1: what W does to the general score"
LOSS_MASK = "Exercise 2: drop the loss mask"
#: What ``compare_loss_masks()`` returns: one entry per run, each with these numbers.
LOSS_MASK_RUNS = ("masked", "unmasked")
LOSS_MASK_FIELDS = ("masked_loss", "unmasked_loss", "padding_share", "bleu")
#: The scales the check measures: uniform weights, the dot score, the predicted case.
SCALES = (0.0, 1.0, 4.0)


def attention_entropy_reference(h, y, mask, scale):
    """Entropy of ``softmax(scale * h . y_i)`` over the real positions, summed over the batch."""
    h, y = np.asarray(h, "float64"), np.asarray(y, "float64")
    scores = scale * (np.einsum("bu,biu->bi", h, y) if h.ndim == 2
                      else np.einsum("btu,biu->bti", h, y))
    mask = np.asarray(mask, bool)
    mask = mask if h.ndim == 2 else mask[:, None, :]
    alpha = softmax(np.where(mask, scores, -np.inf))
    return float(-np.sum(np.where(alpha > 0, alpha * np.log(np.maximum(alpha, 1e-300)), 0.0)))


def check_general_score_scale(prediction, attention_entropy, h, y, mask) -> None:
    """Exercise 1: check ``attention_entropy`` at :data:`SCALES`; report ``prediction`` as right
    or wrong (a wrong one passes).

    Args:
        prediction: ``"sharper"`` or ``"flatter"``, or the student's ``predict()`` returning it.
        attention_entropy: the student's ``attention_entropy(scale) -> float``.
        h, y, mask: the inputs it uses, ``(batch, units)``, ``(batch, S, units)``, ``(batch, S)``.
    """
    exercise = GENERAL_SCALE
    refuse_package_calls(exercise, attention_entropy, ("attention_entropy_reference",))
    prediction = value_of(exercise, prediction)
    require(exercise, prediction in ("sharper", "flatter"), f"your prediction is {prediction!r}; "
            "make it \"sharper\" or \"flatter\", written before you measure.")
    measured = {scale: one_number(exercise, run_student_code(exercise, attention_entropy, scale),
                                  f"attention_entropy({scale})") for scale in SCALES}
    expected = {scale: attention_entropy_reference(h, y, mask, scale) for scale in SCALES}
    require(exercise, not math.isclose(measured[1.0], measured[4.0], rel_tol=1e-4)
            or math.isclose(expected[1.0], expected[4.0], rel_tol=1e-4), "the entropy does not "
            "change with the scale: set the layer's W to scale * I (layer.set_weights) after it "
            "is built, then call it.")
    for scale in SCALES:
        assert_close(exercise, measured[scale], expected[scale],
                     what=f"your entropy at scale {scale}", atol=1e-4, rtol=1e-4)
    answer = "sharper" if measured[4.0] < measured[1.0] else "flatter"
    verdict = "right" if prediction == answer else "wrong: explain why"
    passed(exercise, f"entropy {measured[0.0]:.3f} (s = 0, uniform), {measured[1.0]:.3f} (s = 1), "
           f"{measured[4.0]:.3f} (s = 4): {answer}. Your prediction {prediction!r} was {verdict}.")


def token_cross_entropy(labels, logits):
    """``-log softmax(logits)[label]``: ``(batch, T)`` and ``(batch, T, V)`` -> ``(batch, T)``."""
    log_probs = log_softmax(logits)
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
    got = one_number(LOSS_MASK, run_student_code(LOSS_MASK, unmasked_loss, labels, logits),
                     "your unmasked_loss")
    assert_close(LOSS_MASK, got, unmasked_loss_reference(labels, logits),
                 what="your unmasked loss", atol=1e-4, rtol=1e-4, mistakes=[
        (masked_loss_reference(labels, logits), "unmasked_loss still leaves the padding out (it "
         "equals the masked loss); average over every position, padding included."),
        (token_cross_entropy(labels, logits).sum(), "unmasked_loss is a sum; return the mean "
         "over all positions.")])


def _is_number(value) -> bool:
    return (isinstance(value, (int, float, np.number)) and not isinstance(value, bool)
            and math.isfinite(float(value)))


def check_loss_mask_experiment(unmasked_loss, comparison) -> None:
    """Exercise 2: the unmasked loss, then the two runs' numbers, consistent with each other.

    Args:
        unmasked_loss: the student's ``unmasked_loss(labels, logits)``.
        comparison: ``compare_loss_masks`` or its result, :data:`LOSS_MASK_RUNS` of
            :data:`LOSS_MASK_FIELDS`.
    """
    exercise = LOSS_MASK
    _check_unmasked_loss(unmasked_loss)
    comparison = value_of(exercise, comparison)
    check_entries(exercise, comparison, LOSS_MASK_RUNS, LOSS_MASK_FIELDS, what="the comparison")
    for name, run in comparison.items():
        for field in LOSS_MASK_FIELDS:
            require(exercise, _is_number(run[field]),
                    f"{name!r}: {field} is {run[field]!r}; expected a number.")
        require(exercise, 0.0 < run["padding_share"] < 1.0, f"{name!r}: padding_share is "
                f"{run['padding_share']!r}; it is the fraction of valid_labels equal to 0, "
                "between 0 and 1.")
        require(exercise, 0.0 <= run["bleu"] <= 100.0, f"{name!r}: bleu is {run['bleu']!r}; "
                "BLEU lies in [0, 100] (use evaluate(...)[1]['bleu']).")
        floor = (1.0 - run["padding_share"]) * run["masked_loss"]
        require(exercise, run["unmasked_loss"] >= floor - 1e-3 * max(1.0, abs(floor)),
                f"{name!r}: the unmasked loss {run['unmasked_loss']:.4f} is below (1 - padding "
                f"share) x masked loss = {floor:.4f}, which cannot happen on the same batch: "
                "compute both losses of the same model on (valid_inputs, valid_labels).")
    shares = [comparison[name]["padding_share"] for name in LOSS_MASK_RUNS]
    require(exercise, math.isclose(shares[0], shares[1], rel_tol=1e-6), f"the padding shares "
            f"differ ({shares[0]} and {shares[1]}); both runs are measured on the same "
            "valid_labels.")
    table = "".join(
        f"\n  trained {name:<9} masked loss {comparison[name]['masked_loss']:.3f}, unmasked loss "
        f"{comparison[name]['unmasked_loss']:.3f}, BLEU {comparison[name]['bleu']:.1f}"
        for name in LOSS_MASK_RUNS)
    passed(exercise, f"padding is {shares[0]:.0%} of the validation labels.{table}")
