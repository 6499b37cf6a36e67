"""Timing helpers of the benchmarks: a timed part of a notebook's run, the median of timed
steps, the wall time of each step in ``fit`` (:class:`StepTimer`), batch counts, and the
measurements several notebooks share (notebook 01's classifier on the nnlm-sized stand-in,
measured once per run)."""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import keras

from benchmarks.stand_ins import nnlm_sized_module, review_batch
from seqlab import config


class StepTimer(keras.callbacks.Callback):
    """Wall time of every training step of a ``fit``, in ``seconds``."""

    def __init__(self):
        super().__init__()
        self.seconds = []

    def on_train_batch_begin(self, batch, logs=None):
        self.started = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        self.seconds.append(time.perf_counter() - self.started)


@dataclass
class Part:
    """One timed kind of batch and how many of them the notebook runs."""

    what: str
    median_seconds: float  # per batch: the median of the timed batches, or their mean (below)
    timed: int
    count: int
    statistic: str = "median"  # "mean" for batches that differ in their work (grouped by length)

    @property
    def seconds(self) -> float:
        return self.median_seconds * self.count


def median_seconds(step: Callable[[], object], steps: int) -> float:
    """Median wall time of ``step()`` over ``steps`` calls after one warm-up call (tracing)."""
    step()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def mean_seconds(steps: list[Callable[[], object]]) -> float:
    """Mean wall time of ``steps`` (each called once): for batches that differ in their work,
    such as batches grouped by length, whose mean, not median, sums to an epoch."""
    times = []
    for step in steps:
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.fmean(times)


def batches(examples: int, batch: int) -> int:
    return math.ceil(examples / batch)



# -------------------------------------------------------------------- shared measurements


def hub_classifier_parts(batch: int, steps: int) -> dict[str, float]:
    """Seconds per batch of notebook 01's classifier on the nnlm-sized stand-in module."""
    import keras

    from seqlab.layers import HubTextEmbedding
    from seqlab.lessons.nb01 import build_sentiment_classifier
    from seqlab.training import compile_sentiment_classifier

    texts, labels = review_batch(batch)
    keras.utils.set_random_seed(config.SEED)
    model = build_sentiment_classifier(HubTextEmbedding(nnlm_sized_module(), trainable=False))
    compile_sentiment_classifier(model, 1e-3)
    frozen = median_seconds(lambda: model.train_on_batch(texts, labels), steps)
    evaluate = median_seconds(lambda: model.test_on_batch(texts, labels), steps)
    model.layers[0].trainable = True
    compile_sentiment_classifier(model, 1e-4)
    unfrozen = median_seconds(lambda: model.train_on_batch(texts, labels), steps)
    return {"frozen": frozen, "evaluate": evaluate, "unfrozen": unfrozen}


_CACHE: dict = {}


def cached(key, compute):
    if key not in _CACHE:
        _CACHE[key] = compute()
    return _CACHE[key]
