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


# ------------------------------------------------------------ Exercise 3: the frozen probes


@pytest.fixture(scope="module")
def probe_kit():
    """A tiny BERT backbone, a few tokenized batches, and notebook 08's head assembly."""
    keras_hub = pytest.importorskip("keras_hub")

    def backbone():
        return keras_hub.models.BertBackbone(vocabulary_size=30, num_layers=1, num_heads=2,
                                             hidden_dim=8, intermediate_dim=16,
                                             max_sequence_length=12)

    def head(encoder):
        inputs = {name: keras.Input(shape=(None,), dtype="int32", name=name)
                  for name in ("token_ids", "segment_ids", "padding_mask")}
        logits = keras.layers.Dense(2)(encoder(inputs)["pooled_output"])
        return keras.Model(inputs, logits)

    rng = np.random.default_rng(0)
    batches = [({"token_ids": rng.integers(1, 30, (4, 12)).astype("int32"),
                 "segment_ids": np.zeros((4, 12), "int32"),
                 "padding_mask": np.ones((4, 12), "int32")}, rng.integers(0, 2, 4))
               for _ in range(2)]
    return backbone, head, batches


def _trained(model, batches, fit=True):
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    if fit:
        for x, y in batches:
            model.train_on_batch(x, y)
    return model


def _probe(kit, encoder, freeze=True, fit=True):
    _, head, batches = kit
    encoder.trainable = not freeze
    return _trained(head(encoder), batches, fit)


def test_the_probe_check_passes_two_frozen_trained_heads(probe_kit, capsys):
    backbone, _, batches = probe_kit
    pretrained, twin = backbone(), backbone()
    probes = {"MLM-pretrained, frozen": _probe(probe_kit, pretrained),
              "random weights, frozen": _probe(probe_kit, twin)}
    checks.check_frozen_probe(lambda: probes, batches)
    out = capsys.readouterr().out
    assert "passed" in out and "test accuracy" in out


@pytest.mark.parametrize("mistake, message", [
    ("unfrozen", "freeze it"),
    ("untrained", "never trained"),
    ("same encoder", "same encoder weights"),
    ("one entry", "entries"),
    ("not a dict", "dict"),
    ("placeholder", "placeholder"),
])
def test_the_probe_check_explains_mistakes(probe_kit, mistake, message):
    backbone, _, batches = probe_kit
    first, second = backbone(), backbone()
    probes = {"MLM-pretrained, frozen": _probe(probe_kit, first, freeze=mistake != "unfrozen"),
              "random weights, frozen": _probe(probe_kit, first if mistake == "same encoder"
                                               else second, fit=mistake != "untrained")}
    build = {"one entry": lambda: {"MLM-pretrained, frozen": probes["MLM-pretrained, frozen"]},
             "not a dict": lambda: list(probes.values()),
             "placeholder": lambda: (_ for _ in ()).throw(NotImplementedError("Exercise 3"))
             }.get(mistake, lambda: probes)
    with pytest.raises(CheckFailed, match=message):
        checks.check_frozen_probe(build, batches)
