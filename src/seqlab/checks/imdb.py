"""Checks for the exercises of notebooks 01 (frozen embedding) and 02 (fine-tuning).

The model checks run the student's function on the offline stand-in module, so they take a
second and work in FAST and full mode alike; :func:`check_shuffled_words` measures the
notebook's own trained model on the test reviews it is given.

:func:`check_frozen_classifier` and :func:`check_recompile_for_fine_tuning` belong to earlier
versions of notebooks 01 and 02, whose exercises re-typed what the lesson shows; no notebook
calls them any more.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import numpy as np

from seqlab.checks.core import (
    CheckFailed,
    assert_close,
    check_entries,
    passed,
    run_student_code,
)
from seqlab.checks.transcript import observe

FROZEN_CLASSIFIER = "Exercise 1: build the frozen classifier"
SHUFFLED_WORDS = "Exercise 1: shuffled words into the frozen classifier"
ACCURACY_FUNCTION = "Exercise 2: accuracy from predicted probabilities"
RECOMPILE_FOR_FINE_TUNING = "Exercise 1: recompile for fine-tuning"
LEARNING_RATE_COMPARISON = "Exercise 1: fine-tuning at the original learning rate"

HIDDEN_UNITS = 128
REVIEWS = ["A wonderful cast and a moving score.", "Dull, tedious and far too long.",
           "Not bad at all.", "I want those two hours back."]
LABELS = [1.0, 0.0, 1.0, 0.0]


def _stand_in_embedding():
    from seqlab.layers import STANDIN_HANDLE

    return STANDIN_HANDLE


def _parameters(weights) -> int:
    return sum(int(np.prod(w.shape)) for w in weights)


def _embedding_of(exercise: str, model):
    from seqlab.layers import HubTextEmbedding

    layers = [layer for layer in model.layers if isinstance(layer, HubTextEmbedding)]
    if len(layers) != 1:
        raise CheckFailed(exercise, f"the model should have one HubTextEmbedding layer; it has "
                                    f"{len(layers)}: {[type(x).__name__ for x in model.layers]}.")
    return layers[0]


def _compile_facts(model) -> dict:
    """What ``compile`` set up, as data: optimizer, learning rate, metrics, loss on REVIEWS."""
    import tensorflow as tf

    if getattr(model, "optimizer", None) is None or not model.compiled:
        return {"compiled": False}
    texts, labels = tf.constant(REVIEWS), tf.constant(LABELS)
    # compute_loss / compute_metrics use what compile set up, without tracing a tf.function.
    predictions = model(texts)
    metrics = model.compute_metrics(texts, labels, predictions, sample_weight=None)
    return {"compiled": True, "optimizer": type(model.optimizer).__name__,
            "learning_rate": float(np.asarray(model.optimizer.learning_rate)),
            "accuracy": "accuracy" in metrics,
            "loss": float(model.compute_loss(x=texts, y=labels, y_pred=predictions)),
            "predictions": np.asarray(predictions).reshape(-1).astype("float64")}


def _check_compiled(exercise: str, facts: dict, learning_rate: float) -> None:
    """Adam at ``learning_rate``, binary cross-entropy and accuracy, from :func:`_compile_facts`."""
    if not facts["compiled"]:
        raise CheckFailed(exercise, "the model is not compiled: call model.compile(...) "
                                    "inside your function.")
    if facts["optimizer"] != "Adam":
        raise CheckFailed(exercise, f"the optimizer is {facts['optimizer']}; the "
                                    "case study uses keras.optimizers.Adam.")
    if not math.isclose(facts["learning_rate"], learning_rate, rel_tol=1e-5):
        raise CheckFailed(exercise, f"the learning rate is {facts['learning_rate']:.3g}; "
                                    f"expected {learning_rate:.3g}.")
    if not facts["accuracy"]:
        raise CheckFailed(exercise, "the model does not report accuracy; compile it with "
                                    "metrics=['accuracy'].")
    probabilities = np.clip(np.asarray(facts["predictions"]).reshape(-1), 1e-7, 1 - 1e-7)
    y = np.asarray(LABELS)
    cross_entropy = -np.mean(y * np.log(probabilities) + (1 - y) * np.log(1 - probabilities))
    loss = facts["loss"]
    if not math.isclose(loss, cross_entropy, rel_tol=1e-3, abs_tol=1e-4):
        raise CheckFailed(exercise, f"the loss is {loss:.4f} where binary cross-entropy "
                                    f"gives {cross_entropy:.4f}; use "
                                    "loss='binary_crossentropy'.")


def _embedding_facts(exercise: str, model) -> dict:
    embedding = _embedding_of(exercise, model)
    return {"embedding_trainable": bool(embedding.trainable),
            "embedding_dim": int(embedding.output_dim),
            "embedding_parameters": int(embedding.count_params()),
            "trainable": _parameters(model.trainable_weights),
            "frozen": _parameters(model.non_trainable_weights)}


# ------------------------------------------------------------------------------ notebook 01


def check_frozen_classifier(build_frozen_classifier: Callable) -> None:
    """Exercise 1 (01): ``build_frozen_classifier(handle)`` returns the compiled, frozen model.

    Expected: ``HubTextEmbedding(handle)`` frozen, ``Dense(128, relu)``, ``Dense(1, sigmoid)``,
    compiled with Adam(1e-3), binary cross-entropy and accuracy: only the head's 6,657
    parameters trainable.
    """
    exercise = FROZEN_CLASSIFIER
    facts = observe(exercise, _describe_frozen_classifier, build_frozen_classifier)
    if facts["returned"] != "model":
        raise CheckFailed(exercise, f"your function returned {facts['returned']}; return "
                                    "the keras model.")
    if facts["embedding_trainable"]:
        raise CheckFailed(exercise, "the embedding layer is trainable; freeze it "
                                    "(trainable=False) before compiling.")
    head = facts["embedding_dim"] * HIDDEN_UNITS + HIDDEN_UNITS + HIDDEN_UNITS + 1
    trainable, frozen = facts["trainable"], facts["frozen"]
    if (trainable, frozen) != (head, facts["embedding_parameters"]):
        raise CheckFailed(exercise, f"the model has {trainable:,} trainable and {frozen:,} "
                                    f"frozen parameters; expected {head:,} trainable (Dense "
                                    f"{HIDDEN_UNITS} relu + Dense 1 sigmoid) and the "
                                    f"embedding's {facts['embedding_parameters']:,} frozen.")
    probabilities = np.asarray(facts["probabilities"])
    if probabilities.shape != (len(REVIEWS), 1):
        raise CheckFailed(exercise, f"the model outputs shape {probabilities.shape}; expected "
                                    f"({len(REVIEWS)}, 1): one probability per review.")
    if not ((probabilities >= 0) & (probabilities <= 1)).all():
        raise CheckFailed(exercise, "the outputs are not probabilities: end with a sigmoid.")
    _check_compiled(exercise, facts["compile"], 1e-3)
    passed(exercise, f"{trainable:,} trainable parameters on top of a frozen embedding "
                     f"of {frozen:,}.")


def _describe_frozen_classifier(build_frozen_classifier: Callable) -> dict:
    """Build the student's model on the stand-in module and report it as data."""
    import keras
    import tensorflow as tf

    exercise = FROZEN_CLASSIFIER
    model = run_student_code(exercise, build_frozen_classifier, _stand_in_embedding())
    if not isinstance(model, keras.Model):
        return {"returned": type(model).__name__}
    facts = {"returned": "model", **_embedding_facts(exercise, model)}
    probabilities = run_student_code(exercise, model, tf.constant(REVIEWS))
    facts["probabilities"] = np.asarray(probabilities).astype("float64")
    facts["compile"] = _compile_facts(model)
    return facts


PROBE_REVIEWS = ["one", "The plot is dull, but the cast is wonderful.",
                 "Not bad at all: the acting is clever , although the pacing is a bit slow and "
                 "the ending , sadly , is far too long for a film of this kind ."]


def check_shuffled_words(shuffle_words: Callable, accuracy_with_shuffled_words: Callable,
                         predict: Callable, texts, labels, seed: int = 0,
                         limit: int = 2000) -> None:
    """Exercise 1 (01): shuffle each review's words, then measure the frozen classifier again.

    ``shuffle_words(review, rng)`` must return the review's space-separated tokens, all of them
    and only them, in a random order drawn from the NumPy generator ``rng``.
    ``accuracy_with_shuffled_words(texts, labels, seed)`` must return the notebook's model's
    accuracy on the texts after ``shuffle_words`` with ``np.random.default_rng(seed)``.
    ``predict(texts)`` is the notebook's model as a function (P(positive) of each text): the
    check recomputes the student's number from it, on the same shuffled texts, and prints the
    accuracy before and after and the largest change of any review's probability. At most
    ``limit`` texts are used, so that the values a grader records stay small.
    """
    exercise = SHUFFLED_WORDS
    facts = observe(exercise, _describe_shuffling, shuffle_words, accuracy_with_shuffled_words,
                    predict, list(texts)[:limit], np.asarray(labels).reshape(-1)[:limit], seed)
    for review, outputs in zip(PROBE_REVIEWS, facts["probes"], strict=True):
        for output in outputs:
            if not isinstance(output, str):
                raise CheckFailed(exercise, f"shuffle_words returned {type(output).__name__}; "
                                            "return one string, the tokens joined by spaces.")
            if sorted(output.split()) != sorted(review.split()):
                raise CheckFailed(exercise, f"shuffle_words({review!r}) returned {output!r}: "
                                            "not the same tokens. Split on spaces, reorder, "
                                            "and join with spaces; keep every token as it is.")
    if all(output == PROBE_REVIEWS[-1] for output in facts["probes"][-1]):
        raise CheckFailed(exercise, "shuffle_words returned a long review unchanged five times "
                                    "out of five: draw the order from rng "
                                    "(e.g. rng.permutation).")
    if facts["failure"]:
        raise CheckFailed(exercise, facts["failure"])
    accuracy = facts["accuracy"]
    if not isinstance(accuracy, (int, float)) or not 0 <= accuracy <= 1:
        raise CheckFailed(exercise, f"accuracy_with_shuffled_words returned {accuracy!r}; "
                                    "return the accuracy, one number between 0 and 1.")
    count = len(facts["labels"])
    if abs(accuracy - facts["recomputed"]) > 0.5 / count:  # less than one review
        raise CheckFailed(exercise, f"your accuracy is {accuracy:.4f}, but the model's "
                                    "predictions on the texts shuffled by your shuffle_words "
                                    f"(rng = np.random.default_rng({seed})) give "
                                    f"{facts['recomputed']:.4f}.")
    print(f"{count:,} test reviews: accuracy {facts['original']:.4f} as written, "
          f"{accuracy:.4f} with every review's words shuffled; the largest change of one "
          f"review's probability: {facts['largest_change']:.2g}.")
    passed(exercise)


def _describe_shuffling(shuffle_words: Callable, accuracy_with_shuffled_words: Callable,
                        predict: Callable, texts: list, labels: np.ndarray, seed: int) -> dict:
    """The student's shuffles of the probes, their accuracy, and the check's recomputation."""
    exercise = SHUFFLED_WORDS
    probes = [[run_student_code(exercise, shuffle_words, review, np.random.default_rng(s))
               for s in range(5)] for review in PROBE_REVIEWS]
    try:  # judged after the probes, whose message says more when both fail
        accuracy = run_student_code(exercise, accuracy_with_shuffled_words, texts, labels, seed)
        rng = np.random.default_rng(seed)
        shuffled = [run_student_code(exercise, shuffle_words, text, rng) for text in texts]
        if not all(isinstance(text, str) for text in shuffled):
            raise CheckFailed(exercise, "shuffle_words should return strings.")
        before = np.asarray(predict(texts), dtype="float64").reshape(-1)
        after = np.asarray(predict(shuffled), dtype="float64").reshape(-1)
    except CheckFailed as failure:
        return {"probes": probes, "failure": failure.message}
    except Exception as error:  # noqa: BLE001 - e.g. shuffled texts that are not strings
        return {"probes": probes, "failure": f"predicting on your shuffled texts raised "
                                             f"{type(error).__name__}: {error}"}
    labels = np.asarray(labels).reshape(-1)
    return {"probes": probes, "failure": None,
            "accuracy": float(accuracy) if isinstance(accuracy, (int, float, np.number)) else None,
            "labels": labels.astype("int64"),
            "original": float(np.mean((before > 0.5) == labels)),
            "recomputed": float(np.mean((after > 0.5) == labels)),
            "largest_change": float(np.max(np.abs(after - before)))}


def check_accuracy_function(accuracy_from_probabilities: Callable) -> None:
    """Exercise 2 (01): ``accuracy_from_probabilities(probabilities, labels) -> float``.

    A review counts as predicted positive when its probability is above 0.5 (as Keras's
    ``accuracy`` metric does); probabilities may come as ``(n, 1)`` (``model.predict``) or ``(n,)``.
    """
    exercise = ACCURACY_FUNCTION
    rng = np.random.default_rng(7)
    cases = [
        (np.array([[0.9], [0.2], [0.6], [0.4]]), np.array([1, 0, 0, 0]), 0.75),
        (np.array([0.5, 0.51, 0.49]), np.array([1, 1, 0]), 2 / 3),  # 0.5 is not "above"
    ]
    probabilities = rng.uniform(size=(50, 1))
    labels = rng.integers(0, 2, size=50)
    cases.append((probabilities, labels, float(np.mean((probabilities[:, 0] > 0.5) == labels))))
    for probabilities, labels, expected in cases:
        got = run_student_code(exercise, accuracy_from_probabilities, probabilities, labels)
        try:
            got = float(got)
        except (TypeError, ValueError):
            raise CheckFailed(exercise, f"return one number, not {type(got).__name__}.") from None
        assert_close(exercise, got, expected, what=f"the accuracy for {len(labels)} reviews")
    passed(exercise, "It agrees with Keras's accuracy metric.")


# ------------------------------------------------------------------------------ notebook 02


def check_recompile_for_fine_tuning(recompile_for_fine_tuning: Callable) -> None:
    """Exercise 1 (02): ``recompile_for_fine_tuning(model, base_learning_rate)``.

    Expected: the embedding becomes trainable (all parameters trainable), the model is
    recompiled (so that training now changes the embedding) with Adam at
    ``base_learning_rate / 10``, binary cross-entropy and accuracy, and the trained weights
    are kept (no new model).
    """
    exercise = RECOMPILE_FOR_FINE_TUNING
    base_learning_rate = 2e-3  # not the notebook's 1e-3, so a hard-coded 1e-4 shows
    facts = observe(exercise, _describe_recompiled, recompile_for_fine_tuning, base_learning_rate)
    if facts["returned_other_model"]:
        raise CheckFailed(exercise, "your function returned a different model; change and "
                                    "recompile the one you are given.")
    if not facts["embedding_trainable"]:
        raise CheckFailed(exercise, "the embedding layer is still frozen: set its trainable "
                                    "attribute to True before compiling.")
    if facts["frozen"]:
        raise CheckFailed(exercise, f"{facts['frozen']:,} parameters "
                                    "are still frozen; unfreeze the embedding.")
    if not facts["weights_kept"]:
        raise CheckFailed(exercise, "the weights changed: fine-tuning starts from the frozen "
                                    "stage's weights; do not rebuild the model.")
    if not facts["recompiled"]:
        raise CheckFailed(exercise, "the model was not compiled again, so fit would keep "
                                    "training only the head: Keras decides which weights to "
                                    "train when it compiles, so call model.compile(...) after "
                                    "setting trainable = True.")
    _check_compiled(exercise, facts["compile"], base_learning_rate / 10)
    passed(exercise, "Unfrozen and recompiled at one tenth of the learning rate.")


def _describe_recompiled(recompile_for_fine_tuning: Callable, base_learning_rate: float) -> dict:
    """Give the student's function a frozen-stage model; report what it did to it as data."""
    from seqlab.models import build_sentiment_classifier
    from seqlab.training import compile_sentiment_classifier

    exercise = RECOMPILE_FOR_FINE_TUNING
    model = compile_sentiment_classifier(
        build_sentiment_classifier(_stand_in_embedding()), base_learning_rate)
    # As after the frozen stage's fit: Keras holds a training function that trains the weights
    # that were trainable when it was made, until compile() replaces it.
    model.make_train_function()
    frozen_stage_function = model.train_function
    kernel = model.layers[-1].kernel.numpy().copy()
    result = run_student_code(exercise, recompile_for_fine_tuning, model, base_learning_rate)
    return {"returned_other_model": result is not None and result is not model,
            **_embedding_facts(exercise, model),
            "weights_kept": bool(np.array_equal(kernel, model.layers[-1].kernel.numpy())),
            "recompiled": model.train_function is not frozen_stage_function,
            "compile": _compile_facts(model)}


def check_learning_rate_comparison(runs: Mapping[str, Mapping] | Callable[[], Mapping]) -> None:
    """Exercise 1 (02): fine-tuning at the original rate vs one tenth of it, from the same start.

    ``runs`` (or the function that returns it, which the check calls) maps ``"one tenth"``
    and ``"original"`` to dicts with ``learning_rate``, ``val_accuracy`` (one value per
    epoch) and ``embedding_change`` (mean absolute change of the embedding table from the
    frozen stage's values). On success it prints the two runs side by side.
    """
    exercise = LEARNING_RATE_COMPARISON
    if callable(runs):
        runs = run_student_code(exercise, runs)
    check_entries(exercise, runs, ("one tenth", "original"),
                  ("learning_rate", "val_accuracy", "embedding_change"), what="runs")
    for name, run in runs.items():
        accuracies = np.asarray(run["val_accuracy"], dtype=float)
        if accuracies.ndim != 1 or not len(accuracies) or not ((accuracies >= 0) & (accuracies <= 1)).all():
            raise CheckFailed(exercise, f"runs[{name!r}]['val_accuracy'] should be the list of "
                                        "validation accuracies, one per epoch.")
    slow, fast = runs["one tenth"], runs["original"]
    if not math.isclose(fast["learning_rate"], 10 * slow["learning_rate"], rel_tol=1e-5):
        raise CheckFailed(exercise, f"the learning rates are {slow['learning_rate']:.3g} and "
                                    f"{fast['learning_rate']:.3g}; the original is ten times "
                                    "the fine-tuning rate.")
    if len(slow["val_accuracy"]) != len(fast["val_accuracy"]):
        raise CheckFailed(exercise, "train both runs for the same number of epochs.")
    if not 0 < slow["embedding_change"] < fast["embedding_change"]:
        raise CheckFailed(exercise, "the embedding should move, and move more at the larger "
                                    f"rate; got changes {slow['embedding_change']:.3g} (one "
                                    f"tenth) and {fast['embedding_change']:.3g} (original). Did "
                                    "both runs start from the frozen stage's weights?")
    ratio = fast["embedding_change"] / slow["embedding_change"]
    for name, run in runs.items():
        accuracies = ", ".join(f"{a:.3f}" for a in run["val_accuracy"])
        print(f"{name:<10} rate {run['learning_rate']:.0e}: validation accuracy per epoch "
              f"[{accuracies}], mean |change| of the embedding {run['embedding_change']:.2e}")
    passed(exercise, f"At the original rate the pretrained embedding moved {ratio:.1f} "
                     "times as far.")
