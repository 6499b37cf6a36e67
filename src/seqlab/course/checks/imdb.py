"""Checks for the exercises of notebooks 01 (frozen embedding) and 02 (fine-tuning)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import numpy as np

from seqlab.course.checks.core import (
    CheckFailed,
    assert_close,
    check_entries,
    one_number,
    passed,
    require,
    run_student_code,
    value_of,
)
from seqlab.course.checks.transcript import observe

SHUFFLED_WORDS = "Exercise 1: shuffled words into the frozen classifier"
ACCURACY_FUNCTION = "Exercise 2: accuracy from predicted probabilities"
LEARNING_RATE_COMPARISON = "Exercise 1: fine-tuning at the original learning rate"
PROBE_REVIEWS = ["one", "The plot is dull, but the cast is wonderful.",
                 "A tedious\tscript, a flat\ncast  and two spaces .",
                 "Not bad at all: the acting is clever , although the pacing is a bit slow and "
                 "the ending , sadly , is far too long for a film of this kind ."]


def module_tokens(text: str) -> list[str]:
    """The tokens nnlm-en-dim50 reads: split on the space character only, empty strings skipped."""
    return [token for token in text.split(" ") if token]


def check_shuffled_words(shuffle_words: Callable, accuracy_with_shuffled_words: Callable,
                         predict: Callable, texts, labels, seed: int = 0,
                         limit: int = 2000) -> None:
    """Exercise 1 (01): ``shuffle_words(review, rng)`` reorders the review's
    :func:`module_tokens` with ``rng``; ``accuracy_with_shuffled_words(texts, labels, seed)``
    matches ``predict(texts)`` (P(positive)) on the shuffled texts, the first ``limit`` of them.
    """
    exercise = SHUFFLED_WORDS
    facts = observe(exercise, _describe_shuffling, shuffle_words, accuracy_with_shuffled_words,
                    predict, list(texts)[:limit], np.asarray(labels).reshape(-1)[:limit], seed)
    for review, outputs in zip(PROBE_REVIEWS, facts["probes"], strict=True):
        for output in outputs:
            require(exercise, isinstance(output, str), f"shuffle_words returned "
                    f"{type(output).__name__}; return one string, the tokens joined by spaces.")
            require(exercise, sorted(module_tokens(output)) == sorted(module_tokens(review)),
                    f"shuffle_words({review!r}) returned {output!r}: not the same tokens. Split "
                    "on the space character only, as the module does (a tab or a line break "
                    "stays inside its token), reorder, and join with spaces; keep every token "
                    "as it is.")
    require(exercise, any(output != PROBE_REVIEWS[-1] for output in facts["probes"][-1]),
            "shuffle_words returned a long review unchanged five times out of five: draw the "
            "order from rng (e.g. rng.permutation).")
    require(exercise, not facts["failure"], facts["failure"])
    accuracy = facts["accuracy"]
    require(exercise, isinstance(accuracy, (int, float)) and 0 <= accuracy <= 1,
            f"accuracy_with_shuffled_words returned {accuracy!r}; return the accuracy, one "
            "number between 0 and 1.")
    count = len(facts["labels"])
    require(exercise, abs(accuracy - facts["recomputed"]) <= 0.5 / count,  # within one review
            f"your accuracy is {accuracy:.4f}, but the model's predictions on the texts shuffled "
            f"by your shuffle_words (rng = np.random.default_rng({seed})) give "
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
    """Exercise 2 (01): ``accuracy_from_probabilities(probabilities, labels) -> float``, positive
    above 0.5; probabilities ``(n, 1)`` or ``(n,)``."""
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
        got = one_number(exercise, run_student_code(exercise, accuracy_from_probabilities,
                                                    probabilities, labels), "your function")
        assert_close(exercise, got, expected, what=f"the accuracy for {len(labels)} reviews")
    passed(exercise, "It agrees with Keras's accuracy metric.")


def check_learning_rate_comparison(runs: Mapping[str, Mapping] | Callable[[], Mapping]) -> None:
    """Exercise 1 (02): ``runs`` (or the function returning it) maps ``"one tenth"`` and
    ``"original"`` to ``learning_rate``, ``val_accuracy`` (per epoch) and ``embedding_change``."""
    exercise = LEARNING_RATE_COMPARISON
    runs = value_of(exercise, runs)
    check_entries(exercise, runs, ("one tenth", "original"),
                  ("learning_rate", "val_accuracy", "embedding_change"), what="runs")
    for name, run in runs.items():
        accuracies = np.asarray(run["val_accuracy"], dtype=float)
        require(exercise, accuracies.ndim == 1 and len(accuracies) and (accuracies >= 0).all()
                and (accuracies <= 1).all(), f"runs[{name!r}]['val_accuracy'] should be the list "
                "of validation accuracies, one per epoch.")
    slow, fast = runs["one tenth"], runs["original"]
    require(exercise, math.isclose(fast["learning_rate"], 10 * slow["learning_rate"],
                                   rel_tol=1e-5), f"the learning rates are "
            f"{slow['learning_rate']:.3g} and {fast['learning_rate']:.3g}; the original is ten "
            "times the fine-tuning rate.")
    require(exercise, len(slow["val_accuracy"]) == len(fast["val_accuracy"]),
            "train both runs for the same number of epochs.")
    require(exercise, 0 < slow["embedding_change"] < fast["embedding_change"], "the embedding "
            f"should move, and move more at the larger rate; got changes "
            f"{slow['embedding_change']:.3g} (one tenth) and {fast['embedding_change']:.3g} "
            "(original). Did both runs start from the frozen stage's weights?")
    ratio = fast["embedding_change"] / slow["embedding_change"]
    for name, run in runs.items():
        accuracies = ", ".join(f"{a:.3f}" for a in run["val_accuracy"])
        print(f"{name:<10} rate {run['learning_rate']:.0e}: validation accuracy per epoch "
              f"[{accuracies}], mean |change| of the embedding {run['embedding_change']:.2e}")
    passed(exercise, f"At the original rate the pretrained embedding moved {ratio:.1f} "
                     "times as far.")
