"""Checks for notebook 05's exercises: the softmax Jacobian with and without 1/sqrt(d_k), the
translator without its causal mask, and one attention head instead of four."""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from seqlab.course.checks.core import (
    CheckFailed,
    passed,
    require,
    run_student_code,
    softmax,
    value_of,
)
from seqlab.course.checks.transcript import observe

SOFTMAX_GRADIENTS = "Exercise 1: the softmax Jacobian with and without 1/sqrt(d_k)"
#: Exercise 1's possible predictions: the unscaled Jacobian at d_k = 512 against the scaled one.
PREDICTIONS = ("smaller", "same", "larger")
NO_CAUSAL_MASK = "Exercise 2: the decoder without its causal mask"
ONE_HEAD = "Exercise 3: one head instead of four"


def softmax_jacobian_reference(d_k: int, scaled: bool = True) -> float:
    """Mean over 200 random queries of the Frobenius norm of ``d softmax(scores) / d scores``.

    ``q`` ``(200, 1, d_k)`` then ``k`` ``(200, 10, d_k)`` from ``np.random.default_rng(0)``;
    scores ``q k^T`` (over ``sqrt(d_k)`` if ``scaled``); Jacobian ``w_i (delta_ij - w_j)``.
    """
    rng = np.random.default_rng(0)
    q = rng.normal(size=(200, 1, d_k))
    k = rng.normal(size=(200, 10, d_k))
    scores = (q @ np.swapaxes(k, -1, -2))[:, 0] / (np.sqrt(d_k) if scaled else 1.0)  # (200, 10)
    weights = softmax(scores)
    jacobian = weights[:, :, None] * (np.eye(10) - weights[:, None, :])  # (200, 10, 10)
    return float(np.linalg.norm(jacobian, axis=(1, 2)).mean())


def check_softmax_gradients(softmax_jacobian_norm, prediction) -> None:
    """Exercise 1: the softmax's Jacobian with and without 1/sqrt(d_k), and the prediction.

    Args:
        softmax_jacobian_norm: the student's ``(d_k, scaled) -> float``.
        prediction: ``"smaller"``, ``"same"`` or ``"larger"`` (or a function returning it).
    """
    exercise = SOFTMAX_GRADIENTS
    prediction = value_of(exercise, prediction)
    require(exercise, prediction in PREDICTIONS,
            f"predict first: one of {PREDICTIONS}; got {prediction!r}.")
    measured = {}
    for d_k in (8, 64, 512):
        for scaled in (True, False):
            got = run_student_code(exercise, softmax_jacobian_norm, d_k, scaled)
            call = f"softmax_jacobian_norm({d_k}, {scaled})"
            require(exercise, isinstance(got, (int, float, np.floating)) and math.isfinite(got),
                    f"{call} returned {got!r}; return one finite number.")
            measured[d_k, scaled] = got = float(got)
            if abs(got - softmax_jacobian_reference(d_k, scaled)) <= 1e-4:
                continue
            require(exercise, abs(got - softmax_jacobian_reference(d_k, not scaled)) > 1e-4,
                    "scaled and unscaled are swapped: divide the scores by sqrt(d_k) when scaled "
                    "is True.")
            raise CheckFailed(exercise, f"{call} is {got:.4f}, not what the recipe gives: draw q "
                              "first, then k, from np.random.default_rng(0); take the softmax "
                              "over the 10 keys; the Frobenius norm per query, then the mean.")
    print(f"{'d_k':>5} {'with 1/sqrt(d_k)':>17} {'without':>9}")
    for d_k in (8, 64, 512):
        print(f"{d_k:5} {measured[d_k, True]:17.3f} {measured[d_k, False]:9.3f}")
    ratio = measured[512, False] / measured[512, True]
    outcome = "smaller" if ratio < 0.8 else "larger" if ratio > 1.25 else "same"
    verdict = "held" if outcome == prediction else f"did not hold (measured: {outcome})"
    passed(exercise, f"at d_k = 512 the unscaled Jacobian is {ratio:.2f} times the scaled one; "
                     f"your prediction ({prediction}) {verdict}. Explain why in your cell.")


def _masked_accuracy(logits: np.ndarray, target_out: np.ndarray) -> float:
    """Teacher-forced token accuracy over the real (non-padding) target positions."""
    real = target_out != 0
    return float(np.mean((np.argmax(logits, axis=-1) == target_out)[real]))


def report_lesson_model(model, test_batch, *, greedy_exact_match: float) -> None:
    """Print the lesson's model's teacher-forced accuracy on ``test_batch`` (computed out of
    sight: measuring it is Exercise 2) and its greedy exact match."""
    source_ids, target_in, target_out = (np.asarray(part) for part in test_batch)
    logits = np.asarray(model((source_ids, target_in), training=False), "float32")
    print(f"the lesson's model on the {len(source_ids)} test sentences: teacher-forced accuracy "
          f"{_masked_accuracy(logits, target_out):.1%}, greedy exact match "
          f"{float(greedy_exact_match):.1%}")


def _describe_unmasked_run(exercise: str, experiment, test_batch) -> dict:
    """Run the student's experiment; report its numbers and plain facts about its model."""
    result = value_of(exercise, experiment)
    if not isinstance(result, Mapping):
        return {"returned": type(result).__name__}
    facts = {"returned": "mapping", "keys": sorted(str(key) for key in result)}
    for key in ("teacher_forced_accuracy", "greedy_exact_match"):
        value = result.get(key)
        facts[key] = float(value) if isinstance(value, (int, float, np.floating)) else repr(value)
    model = result.get("model")
    if not callable(getattr(model, "count_params", None)):
        facts["model"] = type(model).__name__
        return facts
    source_ids, target_in, target_out = (np.asarray(part) for part in test_batch)
    logits = np.asarray(run_student_code(exercise, model, (source_ids, target_in), training=False))
    changed = target_in.copy()
    changed[:, -1] = np.where(changed[:, -1] == 1, 2, 1)  # another token at the last position
    logits_changed = np.asarray(run_student_code(exercise, model, (source_ids, changed),
                                                 training=False))
    facts.update(model="model", parameters=int(model.count_params()),
                 sees_future=bool(np.abs(logits[:, :-1] - logits_changed[:, :-1]).max() > 1e-4),
                 recomputed_accuracy=_masked_accuracy(logits, target_out))
    return facts


def check_causal_mask_experiment(experiment, test_batch, lesson_parameters: int) -> None:
    """Exercise 2: the translator trained without the decoder's causal mask.

    Args:
        experiment: the student's function or its result, a dict with ``"model"``,
            ``"teacher_forced_accuracy"`` and ``"greedy_exact_match"``.
        test_batch: ``(source_ids, target_in, target_out)`` of the lesson's test sentences.
        lesson_parameters: the lesson's (masked) model's parameter count.
    """
    exercise = NO_CAUSAL_MASK
    facts = observe(exercise, _describe_unmasked_run, exercise, experiment, test_batch)
    require(exercise, facts.get("returned") == "mapping", "return a dict with the keys 'model', "
            f"'teacher_forced_accuracy' and 'greedy_exact_match'; got {facts.get('returned')}.")
    missing = {"model", "teacher_forced_accuracy", "greedy_exact_match"} - set(facts["keys"])
    require(exercise, not missing, f"your dict lacks {sorted(missing)}.")
    for key in ("teacher_forced_accuracy", "greedy_exact_match"):
        require(exercise, isinstance(facts[key], float) and 0.0 <= facts[key] <= 1.0,
                f"{key} is {facts[key]}; expected a fraction between 0 and 1.")
    require(exercise, facts["model"] == "model",
            f"'model' is a {facts['model']}; return the trained Keras model.")
    require(exercise, facts["parameters"] == int(lesson_parameters), f"your model has "
            f"{facts['parameters']:,} parameters, the lesson's {int(lesson_parameters):,}: change "
            "only the mask, not the sizes.")
    require(exercise, facts["sees_future"], "your model still hides the future: changing the last "
            "target token leaves the earlier positions' logits unchanged. Build it with the "
            "decoder's causal mask switched off.")
    tf_accuracy, recomputed = facts["teacher_forced_accuracy"], facts["recomputed_accuracy"]
    require(exercise, abs(recomputed - tf_accuracy) <= 0.01, f"teacher_forced_accuracy is "
            f"{tf_accuracy:.3f}, but your model's token accuracy on the test batch with the true "
            f"target as input is {recomputed:.3f}: measure it on that batch, over the non-padding "
            "positions.")
    passed(exercise, f"without the causal mask: teacher-forced accuracy "
                     f"{facts['teacher_forced_accuracy']:.1%}, greedy exact match "
                     f"{facts['greedy_exact_match']:.1%}. Explain the gap in Question 1.")


def _sublayers(model) -> list:
    """Every Keras layer held by ``model``'s attributes (lists too), at any depth, once each."""
    import keras

    found, todo = [], [model]
    while todo:
        layer = todo.pop()
        if any(layer is seen for seen in found):
            continue
        found.append(layer)
        for value in vars(layer).values():
            items = value if isinstance(value, (list, tuple)) else [value]
            todo.extend(item for item in items if isinstance(item, keras.layers.Layer))
    return found


def _describe_heads(exercise: str, build_model) -> dict:
    """Build the student's model; report its parameters and each attention layer's heads."""
    model = value_of(exercise, build_model)
    if not callable(getattr(model, "count_params", None)):
        return {"returned": type(model).__name__}
    if not model.built:
        return {"returned": "an unbuilt model"}
    attentions = [getattr(layer, name) for layer in _sublayers(model)
                  for name in ("self_attention", "cross_attention") if hasattr(layer, name)]
    return {"returned": "model", "parameters": int(model.count_params()),
            "heads": [int(a.num_heads) for a in attentions],
            "head_sizes": [int(a.key_dim) for a in attentions]}


def check_one_head(build_one_head, four_head_parameters: int, d_model: int) -> None:
    """Exercise 3: the lesson's translator with one attention head of size ``d_model``.

    Args:
        build_one_head: the student's function returning the one-head model (or the model).
        four_head_parameters: the lesson's four-head model's parameter count.
        d_model: the lesson's model size.
    """
    # Imported here, as in the other checks: importing the checks loads no Keras.
    from seqlab.layers.transformer_blocks import head_size

    exercise = ONE_HEAD
    facts = observe(exercise, _describe_heads, exercise, build_one_head)
    require(exercise, facts.get("returned") == "model",
            f"return the Keras model, built (model.build()); got {facts.get('returned')}.")
    require(exercise, facts["heads"], "your model has no encoder or decoder layers with "
            "attention: build it with the lesson's TransformerTranslator.")
    require(exercise, set(facts["heads"]) == {1}, f"the attention layers have "
            f"{sorted(set(facts['heads']))} heads; every one should have exactly 1.")
    require(exercise, set(facts["head_sizes"]) == {head_size(int(d_model), 1)}, f"the head size "
            f"is {sorted(set(facts['head_sizes']))}; keep d_model = {int(d_model)}, so the one "
            "head has all of it.")
    four_heads = int(four_head_parameters)
    require(exercise, facts["parameters"] == four_heads, f"your model has "
            f"{facts['parameters']:,} parameters, the lesson's {four_heads:,}: change only "
            "num_heads (the same num_layers, d_model, dff and vocabularies).")
    passed(exercise, f"one head: {facts['parameters']:,} parameters; four heads: "
                     f"{four_heads:,}. Was your prediction right? Explain in Question 2.")
