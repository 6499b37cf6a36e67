"""Notebook 08's exercise checks (seqlab.course.checks.bert): each passes the reference and explains
the typical mistakes. NumPy and Keras only; keras-hub only where a test compares with its masking."""

from __future__ import annotations

import keras
import numpy as np
import pytest
from student_answers import as_student_answer

from seqlab.course import checks
from seqlab.course.checks import bert as bert_checks
from seqlab.course.checks.core import CheckFailed

#: The reference under another name: the checks refuse answers that call the reference itself.
masked_lm_loss_copy = as_student_answer(bert_checks.masked_lm_loss_reference)


def test_masking_check_passes_the_reference_and_explains_mistakes(capsys):
    predict = as_student_answer(bert_checks.predict_shares_reference)
    checks.check_masking_rule(as_student_answer(bert_checks.apply_masking_reference), predict)
    out = capsys.readouterr().out
    assert "passed" in out and "predicted" in out and "measured" in out

    def always_mask(token_ids, chosen, draws, random_ids, mask_id):
        return np.where(chosen, mask_id, token_ids)

    def touches_everything(token_ids, chosen, draws, random_ids, mask_id):
        return np.where(draws < 0.8, mask_id, token_ids)

    def placeholder(*args):
        raise NotImplementedError("Exercise 1")

    for wrong, message in [(always_mask, "below 0.8"), (touches_everything, "not chosen"),
                           (placeholder, "placeholder")]:
        with pytest.raises(CheckFailed, match=message):
            checks.check_masking_rule(wrong, predict)


def test_the_prediction_is_graded_against_the_measured_shares():
    rule = as_student_answer(bert_checks.apply_masking_reference)

    def the_rule_as_written(vocabulary_size):      # forgets that a draw can give [MASK] or itself
        return {"[MASK]": 0.8, "another token": 0.1, "unchanged": 0.1}

    def only_itself(vocabulary_size):              # forgets [MASK]
        return {"[MASK]": 0.8, "another token": 0.1 - 0.1 / vocabulary_size,
                "unchanged": 0.1 + 0.1 / vocabulary_size}

    for wrong in (the_rule_as_written, only_itself):
        with pytest.raises(CheckFailed, match="Which ids"):
            checks.check_masking_rule(rule, wrong)
    with pytest.raises(CheckFailed, match="keys"):
        checks.check_masking_rule(rule, lambda v: [0.8, 0.1, 0.1])


def test_the_predicted_shares_are_what_keras_hubs_generator_does():
    """The reference prediction against keras-hub's own MaskedLMMaskGenerator at V = 8."""
    keras_hub = pytest.importorskip("keras_hub")
    import tensorflow as tf

    size = 8
    generator = keras_hub.layers.MaskedLMMaskGenerator(
        vocabulary_size=size, mask_selection_rate=0.15, mask_token_id=4,
        mask_selection_length=None, unselectable_token_ids=[0])
    ids = np.random.default_rng(0).integers(5, size, (2000, 64)).astype("int32")

    def mask(batch):
        ragged = tf.RaggedTensor.from_tensor(batch)
        return ragged, generator(ragged)

    original, out = next(iter(tf.data.Dataset.from_tensor_slices(ids).batch(2000).map(mask)))
    starts = tf.cast(original.row_starts(), out["mask_positions"].dtype)[:, None]
    chosen = (out["mask_positions"] + starts).flat_values
    before = tf.gather(original.flat_values, chosen).numpy()
    after = tf.gather(out["token_ids"].flat_values, chosen).numpy()
    expected = bert_checks.predict_shares_reference(size)
    noise = np.sqrt(0.1 * 0.9 / len(before))       # ~0.002 for ~19,000 chosen tokens
    assert abs(np.mean(after == before) - expected["unchanged"]) < 4 * noise
    assert abs(np.mean((after != 4) & (after != before)) - expected["another token"]) < 4 * noise
    assert abs(np.mean(after == 4) - expected["[MASK]"]) < 4 * noise


def test_loss_check_passes_the_reference_and_explains_mistakes(capsys):
    checks.check_masked_lm_loss(as_student_answer(bert_checks.masked_lm_loss_reference))
    assert "passed" in capsys.readouterr().out

    def every_slot(logits, labels, weights):
        return masked_lm_loss_copy(logits, labels, np.ones_like(weights))

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
    assert np.isclose(masked_lm_loss_copy(logits, labels, weights), expected,
                      rtol=1e-5)


def _fake_masked_lm(batch=3, slots=5, vocabulary_size=11):
    """A preprocessor and a "model" with keras-hub's interfaces: fixed masks and logits."""
    logits, labels, weights = bert_checks._loss_case(7, batch, slots, vocabulary_size)

    def preprocessor(reviews):
        assert all(isinstance(review, str) for review in reviews)
        return {"mask_positions": np.zeros_like(labels)}, labels, weights

    def masked_lm(x, training=False):
        return logits.astype("float32")

    return masked_lm, preprocessor, (logits, labels, weights)


def test_loss_check_measures_a_real_batch_beside_the_loss_keras_logs(capsys):
    masked_lm, preprocessor, (logits, labels, weights) = _fake_masked_lm()
    checks.check_masked_lm_loss(as_student_answer(bert_checks.masked_lm_loss_reference), masked_lm, preprocessor,
                                ["a review", "another review", "a third one"])
    out = capsys.readouterr().out
    assert "passed" in out
    chosen = int(weights.sum())
    assert f"3 sequences x 5 mask slots = 15 slots, {chosen} of them chosen tokens" in out
    # Keras's default reduction divides by every slot: logged = masked mean x chosen / slots
    ratio = float(out.split("logged / your masked mean")[1].split()[0])
    assert ratio == pytest.approx(chosen / 15, abs=1e-4)


def test_loss_check_on_a_real_batch_fails_a_function_that_only_passes_the_unit_cases():
    masked_lm, preprocessor, (logits, labels, weights) = _fake_masked_lm(batch=4)
    unit_cases = {bert_checks._loss_case(seed)[0].tobytes() for seed in (0, 1)}

    def overfitted(logits, labels, weights):
        value = masked_lm_loss_copy(logits, labels, weights)
        known = np.asarray(logits, "float64").tobytes() in unit_cases or np.abs(logits).max() > 50
        return value if known else 2 * value

    with pytest.raises(CheckFailed, match="on a batch of the masked LM"):
        checks.check_masked_lm_loss(overfitted, masked_lm, preprocessor, ["one", "two", "three", "four"])


def test_the_real_batch_measurement_is_judged_from_the_recorded_facts(tmp_path):
    """The grader's two halves (record in the kernel, judge elsewhere) pass the experiment."""
    from seqlab_instructor.homework import verdicts

    masked_lm, preprocessor, _ = _fake_masked_lm()
    source = ("checks.check_masked_lm_loss(masked_lm_loss, masked_lm, preprocessor,\n"
              "                            (texts or FILL_IN_SENTENCES)[:8])")
    namespace = {"masked_lm_loss": as_student_answer(bert_checks.masked_lm_loss_reference), "masked_lm": masked_lm,
                 "preprocessor": preprocessor, "texts": ["one", "two", "three"],
                 "FILL_IN_SENTENCES": ["the [MASK] ."]}
    path = tmp_path / "values.json"
    verdicts.record_values(bert_checks.LOSS, source, verdicts.student_names(source), [],
                           str(path), namespace)
    verdict = verdicts.judge(bert_checks.LOSS, source, verdicts.parse_values(path.read_text()))
    assert verdict["passed"], verdict["message"]


def test_the_loss_keras_logs_divides_by_every_mask_slot():
    """What the experiment of Exercise 2 measures, as Keras computes it: Σ w·CE / (B·P)."""
    logits, labels, weights = bert_checks._loss_case(6)
    logged = float(keras.losses.SparseCategoricalCrossentropy(from_logits=True)(
        labels, logits.astype("float32"), sample_weight=weights))
    masked_mean = masked_lm_loss_copy(logits, labels, weights)
    assert logged == pytest.approx(masked_mean * weights.sum() / weights.size, rel=1e-5)
    assert weights.sum() < weights.size  # so the two differ


def test_keras_hubs_masked_lm_logs_that_loss():
    """BertMaskedLM compiled with keras-hub's defaults reports Σ w·CE / (B·P) for a batch."""
    keras_hub = pytest.importorskip("keras_hub")
    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(20)]
    tokenizer = keras_hub.models.BertTokenizer(vocabulary=vocabulary)
    # A selection rate of 0.5 and a seed: at BERT's 15 % these ten tokens may draw no blank at
    # all (a batch with nothing to predict, whose masked mean is undefined).
    keras.utils.set_random_seed(8)
    preprocessor = keras_hub.models.BertMaskedLMPreprocessor(
        tokenizer, sequence_length=12, mask_selection_rate=0.5, mask_selection_length=6)
    backbone = keras_hub.models.BertBackbone(vocabulary_size=len(vocabulary), num_layers=1,
                                             num_heads=1, hidden_dim=8, intermediate_dim=16,
                                             max_sequence_length=12)
    masked_lm = keras_hub.models.BertMaskedLM(backbone, preprocessor=None)
    masked_lm.compile()
    x, y, weights = preprocessor(["w1 w2 w3 w4 w5 w6 w7 w8", "w9 w10"])
    assert 0 < np.sum(weights) < np.size(weights)  # some slots chosen, some unused
    logged = masked_lm.evaluate(x, y, sample_weight=weights, verbose=0, return_dict=True)["loss"]
    logits, weights = np.asarray(masked_lm(x)), np.asarray(weights)
    masked_mean = masked_lm_loss_copy(logits, np.asarray(y), weights)
    assert logged == pytest.approx(masked_mean * weights.sum() / weights.size, rel=1e-4)


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
