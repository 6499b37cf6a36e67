"""benchmarks.embedding_updates: its machinery runs at a tiny size (no timing is asserted)."""

from __future__ import annotations

import math
import sys

import numpy as np
import tensorflow as tf

from seqlab import config
from seqlab.layers import STANDIN_HANDLE

sys.path.insert(0, str(config.REPO_ROOT))  # benchmarks/ is a package at the repository root
from benchmarks import embedding_updates as bench  # noqa: E402


def test_the_old_per_pair_pipeline_makes_the_same_kind_of_batches():
    ids = bench.stand_in_ids(6, vocab=40, words=12)
    (centres, candidates), labels = next(iter(bench.per_pair_skipgram_dataset(ids, 2, 3, 40, 16)))
    assert centres.shape == (16,) and candidates.shape == (16, 4) and labels.shape == (16, 4)
    assert centres.dtype == tf.int64 and int(tf.reduce_min(candidates)) >= 2


def test_the_old_pipelines_pairs_are_every_word_within_the_window():
    centres, contexts = bench.text_pairs(tf.constant([5, 6, 7, 0], tf.int64), 2)
    assert sorted(zip(centres.numpy().tolist(), contexts.numpy().tolist(), strict=True)) == [
        (5, 6), (5, 7), (6, 5), (6, 7), (7, 5), (7, 6)]


def test_skipgram_comparison_runs_every_path_at_a_tiny_size():
    results = bench.compare_skipgram(vocab=60, dim=8, batch=32, reviews=20, rounds=1, steps=2,
                                     held_out=2)
    assert list(results) == ["input pipeline alone (pairs/s)",
                             "training step, same batches (pairs/s)",
                             "pipeline + step in fit (pairs/s)"]
    steps = results["training step, same batches (pairs/s)"]
    assert [row.what for row in steps][:2] == ["today: Adam", "new: FusedAdam"]
    assert all(row.rate > 0 for rows in results.values() for row in rows if not math.isnan(row.rate))
    assert all(np.isfinite(row.loss) for row in steps)


def test_fine_tuning_comparison_runs_on_the_stand_in_module(capsys):
    results = bench.compare_fine_tuning(STANDIN_HANDLE, batch=4, rounds=1, steps=2, frozen_steps=2,
                                        held_out=1)
    rows = results["fine-tuning step, same batches (reviews/s)"]
    assert rows[0].rate > 0 and rows[1].rate > 0 and all(np.isfinite(r.loss) for r in rows)
    bench.print_table("tiny", results, 2)
    assert "× today" in capsys.readouterr().out


def test_labelled_reviews_have_the_length_and_a_label_each():
    texts, labels = bench.labelled_reviews(5, words=30)
    assert len(texts) == 5 and all(len(t.split()) == 30 for t in texts)
    assert labels.shape == (5, 1) and set(labels[:, 0]) <= {0.0, 1.0}
