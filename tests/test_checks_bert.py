"""Notebook 08's exercise checks (seqlab.checks.bert): each passes the reference and explains
the typical mistakes. NumPy and Keras only, no keras-hub."""

from __future__ import annotations

import keras
import numpy as np
import pytest

from seqlab import checks
from seqlab.checks import bert as bert_checks
from seqlab.checks.core import CheckFailed


def test_masking_check_passes_the_reference_and_explains_mistakes(capsys):
    checks.check_masking_rule(bert_checks.apply_masking_reference)
    assert "passed" in capsys.readouterr().out

    def always_mask(token_ids, chosen, draws, random_ids, mask_id):
        return np.where(chosen, mask_id, token_ids)

    def touches_everything(token_ids, chosen, draws, random_ids, mask_id):
        return np.where(draws < 0.8, mask_id, token_ids)

    def placeholder(*args):
        raise NotImplementedError("Exercise 1")

    for wrong, message in [(always_mask, "below 0.8"), (touches_everything, "not chosen"),
                           (placeholder, "placeholder")]:
        with pytest.raises(CheckFailed, match=message):
            checks.check_masking_rule(wrong)


def test_loss_check_passes_the_reference_and_explains_mistakes(capsys):
    checks.check_masked_lm_loss(bert_checks.masked_lm_loss_reference)
    assert "passed" in capsys.readouterr().out

    def every_slot(logits, labels, weights):
        return bert_checks.masked_lm_loss_reference(logits, labels, np.ones_like(weights))

    def naive_softmax(logits, labels, weights):
        logits = np.asarray(logits, "float32")
        p = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
        picked = np.take_along_axis(p, np.asarray(labels)[..., None], -1)[..., 0]
        return float(-(np.log(picked) * weights).sum() / weights.sum())

    for wrong, message in [(every_slot, "every slot"), (naive_softmax, "maximum|finite")]:
        with pytest.raises(CheckFailed, match=message):
            checks.check_masked_lm_loss(wrong)


def test_loss_reference_agrees_with_keras_cross_entropy():
    logits, labels, weights = bert_checks._loss_case(5)
    per_slot = np.asarray(keras.losses.sparse_categorical_crossentropy(
        labels, logits.astype("float32"), from_logits=True))
    expected = float((per_slot * weights).sum() / weights.sum())
    # float32 Keras vs float64 NumPy on logits of size ~2: relative error ~1e-7
    assert np.isclose(bert_checks.masked_lm_loss_reference(logits, labels, weights), expected,
                      rtol=1e-5)
