"""benchmarks.end_to_end's machinery at tiny sizes: the stand-in text
(benchmarks.stand_in_downloads), the timing start-up file and how the minutes are counted (the
minutes themselves are measured by hand: benchmarks/README.md)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from seqlab import config

sys.path.insert(0, str(config.REPO_ROOT))  # benchmarks/ is a package at the repository root
from benchmarks import bert_control, end_to_end, stand_in_downloads, stand_ins  # noqa: E402


def test_made_up_words_are_distinct_and_shortest_first():
    words = stand_in_downloads.made_up_words(2_000)
    assert len(set(words)) == 2_000
    assert [len(w) for w in words] == sorted(len(w) for w in words)


def test_the_stand_in_vocabulary_starts_with_the_samples_english_words():
    words = stand_in_downloads.stand_in_vocabulary(3_000)
    assert len(words) == len(set(words)) == 3_000
    assert words[0] == "the" and {"good", "bad", "acting"} <= set(words[:400])


def test_stand_in_reviews_have_imdbs_lengths_labels_and_label_words():
    words = stand_in_downloads.made_up_words(5_000)
    texts, labels = stand_in_downloads.stand_in_reviews(400, words, seed=3)
    assert [len(t.split()) for t in texts] == list(stand_ins.imdb_review_lengths(400, seed=3))
    assert set(labels) == {0, 1}
    # the label-specific words: "...ful" in positive reviews only, "...less" in negative ones
    positive = {w for t, y in zip(texts, labels, strict=True) if y == 1 for w in t.rstrip(".").split()}
    negative = {w for t, y in zip(texts, labels, strict=True) if y == 0 for w in t.rstrip(".").split()}
    made_up = set(words)
    assert {w for w in positive - made_up if w.endswith("ful")}
    assert not {w for w in negative - made_up if w.endswith("ful")}
    # Zipf: the most frequent word is far more frequent than the hundredth
    counts = sorted(np.unique(" ".join(texts).split(), return_counts=True)[1], reverse=True)
    assert counts[0] > 20 * counts[99]


def test_the_start_up_file_logs_top_level_calls_and_grouping_only(tmp_path):
    log = tmp_path / "calls.jsonl"
    script = end_to_end.STARTUP + textwrap.dedent("""
        import numpy as np
        import tensorflow as tf
        from seqlab.data import bucket_by_length  # as a notebook imports it, after start-up
        ids = tf.constant([[5, 6, 0], [7, 0, 0]], tf.int64)
        bucket_by_length(tf.data.Dataset.from_tensor_slices((ids, tf.constant([1, 0]))).batch(2),
                         2, boundaries=[2])
        model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)], name="tiny")
        model.compile(optimizer="sgd", loss="mse")
        x, y = np.ones((8, 3)), np.ones((8, 1))
        model.fit(x, y, validation_data=(x, y), epochs=2, verbose=0)  # evaluates inside
        model.evaluate(x, y, verbose=0)
        socket.getaddrinfo("www.kaggle.com", 443)  # answered without the network
    """)
    subprocess.run([sys.executable, "-c", script], check=True, timeout=300,
                   env={**__import__("os").environ, "SEQLAB_TIMING_LOG": str(log),
                        "TF_CPP_MIN_LOG_LEVEL": "3"})
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(c["call"], c["model"]) for c in calls] == [
        ("bucket_by_length", "input pipeline"), ("fit", "tiny"), ("evaluate", "tiny")]
    assert calls[1]["epochs"] == 2 and len(calls[1]["epoch_ends"]) == 2
    assert calls[1]["epoch_ends"][-1] <= calls[1]["seconds"]


def test_the_record_text_names_the_data_and_the_stand_in_texts_figure():
    timing = {"number": "03", "size": "full", "seconds": 300.0, "notebook_seconds": 420.0,
              "parameters": {"SIZE": "full"},
              "calls": [{"call": "fit", "model": "m", "seconds": 280.0, "epochs": 5,
                         "epoch_ends": [100.0, 190.0, 280.0]},
                        {"call": "evaluate", "model": "m", "seconds": 20.0, "epochs": None,
                         "epoch_ends": None}]}
    stand_in = {"minutes": 2.5, "measured": "2026-11-28 03:01, load 0.4",
                "how": "IMDB: its split sizes in generated words of Zipf frequencies"}
    text = end_to_end.how(timing, stand_in)
    assert "fit m: 280 s (3 of 5 epochs, first 100 s)" in text
    assert "evaluate and predict, per batch too, 20 s" in text
    assert "IMDB: the real reviews" in text
    assert "it was 2.5 min (2026-11-28 03:01, load 0.4): the real reviews take 2.0× that" in text
    # measured on the real reviews again: the stand-in text's figure stays the one compared with
    again = end_to_end.how(timing, {"minutes": 4.0, "how": text, "measured": "today"})
    assert "it was 2.5 min (2026-11-28 03:01, load 0.4): the real reviews take 2.0× that" in again
    assert "stand-in text" not in end_to_end.how(timing, None)


def test_imdbs_notebooks_are_timed_on_the_real_reviews_only(tmp_path):
    import gzip

    stand_in_downloads.prepare_imdb(tmp_path / "tfds", {"train": 30, "test": 10, "unsupervised": 5})
    assert not end_to_end.real_reviews(tmp_path)
    with pytest.raises(SystemExit, match="--imdb"):
        end_to_end.run("03", "class", tmp_path, tmp_path / "home", tmp_path / "runs")
    with pytest.raises(SystemExit, match="--imdb"):
        bert_control.main([str(tmp_path), "--rates", "1e-4"])
    real = tmp_path / "real"  # two files in the format of ../shared/data/imdb (our own text)
    real.mkdir()
    for split in ("train", "test"):
        with gzip.open(real / f"{split}.tsv.gz", "wt", encoding="utf-8") as out:
            out.writelines(f"{k % 2}\ta review, number {k}\n" for k in range(10))
    stand_in_downloads.prepare_imdb(tmp_path / "tfds2", {"train": 10, "test": 10,
                                                         "unsupervised": 5}, real=real)
    other = tmp_path / "with-real"
    other.mkdir()
    (tmp_path / "tfds2").rename(other / "tfds")
    assert end_to_end.real_reviews(other)


def test_the_imdb_stand_in_is_read_by_the_notebooks_loader_and_profiled(tmp_path, capsys):
    from benchmarks import imdb_epoch
    from seqlab.data import load_imdb

    stand_in_downloads.prepare_imdb(tmp_path / "tfds",
                                    {"train": 300, "test": 40, "unsupervised": 20})
    train, valid, test = load_imdb("tfds", batch_size=100, data_dir=tmp_path / "tfds")
    assert sum(len(y) for _, y in train) == 210 and sum(len(y) for _, y in test) == 40  # 70/30
    assert imdb_epoch.main(["--stand-ins", str(tmp_path), "--reviews", "128"]) == 0
    printed = capsys.readouterr().out
    assert "input pipeline's share of an epoch" in printed
    assert "grouped is" in printed and "as fast as padded" in printed


def test_the_real_reviews_become_imdb_reviews_labelled_splits(tmp_path):
    """``prepare --imdb``'s reader and TFDS's records, on a folder in the real copy's format
    (``label<TAB>text`` lines, gzip) written here: the real reviews are never read in tests."""
    import gzip

    from seqlab.data import load_imdb

    real = tmp_path / "imdb"
    real.mkdir()
    for split, count in (("train", 20), ("test", 10)):
        with gzip.open(real / f"{split}.tsv.gz", "wt", encoding="utf-8") as out:
            out.writelines(f"{i % 2}\t{split} review {i}, ça va <br />\n" for i in range(count))
    stand_in_downloads.prepare_imdb(tmp_path / "tfds", {"train": 0, "test": 0, "unsupervised": 5},
                                    real=real)
    train, valid, test = load_imdb("tfds", batch_size=100, data_dir=tmp_path / "tfds")
    texts = sorted(t.decode() for batch, _ in test for t in batch.numpy())
    assert texts == sorted(f"test review {i}, ça va <br />" for i in range(10))
    assert sum(len(y) for _, y in train) == 14 and sum(len(y) for _, y in valid) == 6  # 70/30
    assert sorted(int(y) for _, ys in test for y in ys.numpy()) == [0] * 5 + [1] * 5

    (real / "test.tsv.gz").write_bytes(gzip.compress(b"positive\tno label\n"))
    with pytest.raises(ValueError, match="line 1: expected 0 or 1, a tab, then the review"):
        stand_in_downloads.read_real_reviews(real / "test.tsv.gz")
