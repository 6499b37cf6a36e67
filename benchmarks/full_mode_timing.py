"""Timing helpers of the benchmarks: a timed part of a notebook's run, the median or mean of
timed steps, the wall time of each step in ``fit`` (:class:`StepTimer`), and a cache of
measurements shared by both sizes of a notebook."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import keras


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


_CACHE: dict = {}


def cached(key, compute):
    if key not in _CACHE:
        _CACHE[key] = compute()
    return _CACHE[key]
