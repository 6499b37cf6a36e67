"""Training several models in turn on the same batches, each step timed: the loop of the
benchmarks that compare two ways of training one model in one run (``real_token_logits``,
``lm_schedule``), so that load from other jobs falls on every way alike."""

from __future__ import annotations

import time
from collections.abc import Iterator


def train_in_turn(models: dict, batches: Iterator, steps: int, chunk: int,
                  times: dict[str, list[float]]) -> Iterator[tuple]:
    """Train every model of ``models`` for ``steps`` steps on the same batches of ``batches``.

    ``chunk`` batches are drawn once, then each model trains on all of them in turn
    (``train_on_batch``, each step timed, the very first step of each model left out: its
    trace), its seconds appended to ``times[name]``. Yields ``(steps done, the chunk's
    batches)`` after each chunk, so a caller can score the models along the way.
    """
    for name in models:
        times.setdefault(name, [])
    done = 0
    while done < steps:
        batch = [next(batches) for _ in range(min(chunk, steps - done))]
        for name, model in models.items():
            for step, (x, y) in enumerate(batch):
                start = time.perf_counter()
                model.train_on_batch(x, y)
                if done or step:
                    times[name].append(time.perf_counter() - start)
        done += len(batch)
        yield done, batch
