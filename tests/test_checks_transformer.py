"""Notebook 05's checks: Exercise 1's measurement passes and grades the prediction, wrong
measurements and stubs are rejected; the two experiments' checks accept honest reports and
reject the usual slips."""

from __future__ import annotations

import keras
import numpy as np
import pytest
from keras import ops

from seqlab import sizes
from seqlab.course import checks
from seqlab.course.checks import CheckFailed
from seqlab.lessons.nb05 import TransformerTranslator


def stub(*args):
    raise NotImplementedError("replace this with your code")


# ------------------------------------------------------------- Exercise 1: predict, measure, explain


def _jacobian_norm(d_k, scaled=True, *, seed=0, draw_k_first=False, norm=np.linalg.norm):
    rng = np.random.default_rng(seed)
    if draw_k_first:
        k = rng.normal(size=(200, 10, d_k))
        q = rng.normal(size=(200, 1, d_k))
    else:
        q = rng.normal(size=(200, 1, d_k))
        k = rng.normal(size=(200, 10, d_k))
    scores = (q @ np.swapaxes(k, -1, -2))[:, 0] / (np.sqrt(d_k) if scaled else 1.0)
    w = np.asarray(ops.softmax(scores, axis=-1), "float64")
    jacobian = w[:, :, None] * (np.eye(10) - w[:, None, :])
    return float(np.mean([norm(j) for j in jacobian]))


def test_the_softmax_gradients_check_passes_and_grades_the_prediction(capsys):
    checks.check_softmax_gradients(_jacobian_norm, lambda: "smaller")
    out = capsys.readouterr().out
    assert "passed" in out and "(smaller) held" in out and "512" in out
    checks.check_softmax_gradients(_jacobian_norm, "larger")  # a wrong prediction still passes
    assert "(larger) did not hold (measured: smaller)" in capsys.readouterr().out


def test_the_softmax_jacobian_falls_without_the_scaling():
    ratio = (checks.transformer.softmax_jacobian_reference(512, False)
             / checks.transformer.softmax_jacobian_reference(512, True))
    assert ratio < 0.5  # what the exercise asks the student to explain


@pytest.mark.parametrize("wrong, prediction, message", [
    (_jacobian_norm, None, "predict first"),
    (_jacobian_norm, "much smaller", "predict first"),
    (_jacobian_norm, stub, "placeholder"),
    (lambda d_k, scaled=True: _jacobian_norm(d_k, not scaled), "same", "swapped"),
    (lambda d_k, scaled=True: _jacobian_norm(d_k, scaled, draw_k_first=True), "same",
     "draw q first"),
    (lambda d_k, scaled=True: _jacobian_norm(d_k, scaled, norm=lambda j: np.abs(j).max()),
     "same", "Frobenius"),
    (lambda d_k, scaled=True: [1.0], "same", "one finite number"),
    (stub, "same", "placeholder"),
])
def test_the_softmax_gradients_check_rejects_wrong_measurements(wrong, prediction, message):
    with pytest.raises(CheckFailed, match=message):
        checks.check_softmax_gradients(wrong, prediction)


# ------------------------------------------------------------- Exercises 2 and 3: experiments

SOURCE_VOCAB, TARGET_VOCAB = 13, 11


class PeekingTranslator(keras.Model):
    """A stand-in for the unmasked model: every position sees the whole target (its sum)."""

    def __init__(self):
        super().__init__()
        self.embedding = keras.layers.Embedding(TARGET_VOCAB, 4)
        self.logits = keras.layers.Dense(TARGET_VOCAB)

    def call(self, inputs, training=False):
        _, target_in = inputs
        x = self.embedding(target_in)                        # (B, T, 4)
        return self.logits(x + ops.sum(x, axis=1, keepdims=True))


def _test_batch():
    rng = np.random.default_rng(0)
    source = rng.integers(1, SOURCE_VOCAB, (4, 5)).astype("int32")
    target = rng.integers(1, TARGET_VOCAB, (4, 7)).astype("int32")
    target[:, -1] = 0                                        # one padded position
    return source, target[:, :-1], target[:, 1:]


def _teacher_forced(model, batch):
    source, target_in, target_out = batch
    right = np.argmax(np.asarray(model((source, target_in))), -1) == target_out
    return float(right[target_out != 0].mean())


def _run(trained, batch, **changes):
    return {"model": trained, "teacher_forced_accuracy": _teacher_forced(trained, batch),
            "greedy_exact_match": 0.0, **changes}


@pytest.fixture(scope="module")
def peeking():
    model = PeekingTranslator()
    model(_test_batch()[:2])
    return model


def test_the_unmasked_experiment_passes_and_reports_both_numbers(peeking, capsys):
    batch = _test_batch()
    checks.check_causal_mask_experiment(lambda: _run(peeking, batch), batch,
                                                    peeking.count_params())
    assert "greedy exact match 0.0%" in capsys.readouterr().out


def test_the_lesson_model_report_prints_the_teacher_forced_accuracy(peeking, capsys):
    batch = _test_batch()
    checks.transformer.report_lesson_model(peeking, batch, greedy_exact_match=0.25)
    out = capsys.readouterr().out
    assert f"teacher-forced accuracy {_teacher_forced(peeking, batch):.1%}" in out
    assert "greedy exact match 25.0%" in out and "on the 4 test sentences" in out


@pytest.mark.parametrize("changes, message", [
    ({"teacher_forced_accuracy": 1.5}, "between 0 and 1"),
    ({"greedy_exact_match": "high"}, "between 0 and 1"),
    ({"model": "a model"}, "return the trained Keras model"),
    ({"teacher_forced_accuracy": "recomputed + 0.2"}, "recomputed"),
])
def test_the_unmasked_experiment_rejects_wrong_reports(peeking, changes, message):
    batch = _test_batch()
    if changes.get("teacher_forced_accuracy") == "recomputed + 0.2":
        changes = {"teacher_forced_accuracy": min(1.0, _teacher_forced(peeking, batch) + 0.2)}
        message = "token accuracy on the test batch"
    with pytest.raises(CheckFailed, match=message):
        checks.check_causal_mask_experiment(lambda: _run(peeking, batch, **changes),
                                                        batch, peeking.count_params())


def test_the_unmasked_experiment_rejects_a_model_that_still_hides_the_future():
    batch = _test_batch()
    masked = _translator()
    masked.build()
    with pytest.raises(CheckFailed, match="still hides the future"):
        checks.check_causal_mask_experiment(lambda: _run(masked, batch), batch,
                                                        masked.count_params())
    with pytest.raises(CheckFailed, match="change only the mask"):
        checks.check_causal_mask_experiment(lambda: _run(masked, batch), batch, 7)
    with pytest.raises(CheckFailed, match="placeholder"):
        checks.check_causal_mask_experiment(stub, batch, 7)


def _translator(**overrides):
    tiny = sizes.settings("05", "fast").model  # notebook 05's FAST-mode translator
    model = TransformerTranslator(SOURCE_VOCAB, TARGET_VOCAB, **{**tiny, **overrides})
    model.build()
    return model


def test_one_head_passes_and_prints_both_counts(capsys):
    four = _translator()
    checks.check_one_head(lambda: _translator(num_heads=1), four.count_params(), 64)
    out = capsys.readouterr().out
    assert "passed" in out and out.count(f"{four.count_params():,}") == 2


@pytest.mark.parametrize("build, message", [
    (lambda: _translator(), r"\[4\] heads"),
    (lambda: _translator(num_heads=1, d_model=32), "keep d_model = 64"),
    (lambda: _translator(num_heads=1, dff=64), "change only num_heads"),
    (lambda: "not a model", "return the Keras model"),
    (lambda: TransformerTranslator(SOURCE_VOCAB, TARGET_VOCAB, 2, 64, 1, 128), "built"),
    (stub, "placeholder"),
])
def test_one_head_rejects_other_models(build, message):
    with pytest.raises(CheckFailed, match=message):
        checks.check_one_head(build, _translator().count_params(), 64)
