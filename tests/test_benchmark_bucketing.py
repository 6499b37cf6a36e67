"""benchmarks.bucketing's machinery on the offline sample (no timing assertions: the numbers it
prints are measured by hand, benchmarks/README.md)."""

from __future__ import annotations

import sys
import zipfile

import keras
import numpy as np
from keras import ops

from seqlab import config

sys.path.insert(0, str(config.REPO_ROOT))  # benchmarks/ is a package at the repository root
from benchmarks import bucketing  # noqa: E402


class TinyTranslator(keras.Model):
    """A stand-in with the translators' inputs and outputs that traces in a second (the real
    ones take tens of seconds to trace on a 2-core CPU): ``(source (B, S), target_in (B, T))
    -> logits (B, T, V)``."""

    def __init__(self, source_vocab_size, target_vocab_size):
        super().__init__()
        self.source_embedding = keras.layers.Embedding(source_vocab_size, 8)
        self.target_embedding = keras.layers.Embedding(target_vocab_size, 8)
        self.output_layer = keras.layers.Dense(target_vocab_size)

    def call(self, inputs):
        source, target_in = inputs
        summary = ops.mean(self.source_embedding(source), axis=1, keepdims=True)  # (B, 1, 8)
        return self.output_layer(self.target_embedding(target_in) + summary)  # (B, T, V)


def tiny_model(kind, data):
    model = TinyTranslator(data.source_vocab_size, data.target_vocab_size)
    model((np.ones((1, 2), "int32"), np.ones((1, 2), "int32")))
    return bucketing.compile_for_benchmark(model, keras.optimizers.Adam(1e-2))


def test_the_benchmark_trains_both_pipelines_alternately_and_prints_the_ratio(capsys,
                                                                             monkeypatch):
    monkeypatch.setattr(bucketing, "build_model", tiny_model)
    assert bucketing.main(["--source", "sample", "--models", "transformer", "--steps", "4",
                           "--chunk", "2", "--batch-size", "16", "--valid-batches", "1"]) == 0
    printed = capsys.readouterr().out
    rows = [line for line in printed.splitlines() if line.startswith("| transformer |")]
    assert [row.split("|")[2].strip() for row in rows] == ["padded", "bucketed",
                                                          "**ratio** bucketed / padded"]
    for row in rows[:2]:
        cells = [cell.strip() for cell in row.split("|")]
        assert cells[3] == "4"  # steps, the same for both pipelines
        assert float(cells[4].replace(",", "")) > 0  # real target tokens/s
        assert 0 < float(cells[6].rstrip(" %")) <= 100  # real share of the target positions
    assert "'sample' (320 training pairs)" in printed
    traces = [int(row.split("|")[9]) for row in rows[:2]]
    assert traces[0] == traces[1] >= 1  # grouping by length adds no trace of the train step


def test_the_measurement_copy_goes_to_a_private_keras_cache(tmp_path):
    assert bucketing.find_anki(tmp_path / "missing.zip") is None
    archive = tmp_path / "spa-eng.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr("spa-eng/spa.txt", "Go.\tVe.\n")
    cache = bucketing.find_anki(archive)
    try:
        assert (cache / "datasets" / "spa-eng.zip").read_bytes() == archive.read_bytes()
        assert not str(cache).startswith(str(config.REPO_ROOT))
    finally:
        import shutil

        shutil.rmtree(cache)


def test_the_step_log_counts_real_tokens_per_step_and_marks_each_fits_first_step():
    log = bucketing.StepLog()
    log.on_train_begin()
    for real, positions in ((10.0, 16.0), (25.0, 40.0)):
        log.on_train_batch_begin(0)
        log.on_train_batch_end(0, {"real_tokens": real, "positions": positions})
    assert [step[1:] for step in log.steps] == [(10.0, 16.0, True), (15.0, 24.0, False)]
