"""IMDB movie reviews as ``tf.data`` pipelines: the real 50K reviews (TFDS) or the offline sample.

Batches are ``(text, label)``, ``(batch,)`` strings and ``(batch,)`` int64 labels (1 positive);
TFDS's training reviews split 70/30 into train/valid.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import NamedTuple

import tensorflow as tf

from seqlab import config
from seqlab.data.download import load_tfds

#: The generated sample's CSV files (``data/imdb_sample/{train,valid,test}.csv``).
SAMPLE_DIR = config.DATA_DIR / "imdb_sample"
TFDS_SPLITS = ("train[:70%]", "train[70%:]", "test")
#: Where TFDS downloads the reviews from (imdb_reviews' builder); checked before downloading.
TFDS_DOWNLOAD_HOST = "ai.stanford.edu"
# Larger than the 17,500 training reviews, so the shuffle is a full one.
SHUFFLE_BUFFER = 20_000


class IMDBSplits(NamedTuple):
    """The three pipelines; unpacks as ``train, valid, test = load_imdb(...)``."""

    train: tf.data.Dataset
    valid: tf.data.Dataset
    test: tf.data.Dataset


def load_imdb(source: str = "tfds", batch_size: int = 32, seed: int = config.SEED,
              data_dir: str | Path | None = None) -> IMDBSplits:
    """Load the IMDB reviews, split as in the case study, as batched and prefetched pipelines.

    Args:
        source: ``"tfds"`` (the 50K IMDB reviews) or ``"sample"`` (``data/imdb_sample/``, FAST).
        batch_size: reviews per batch.
        seed: seeds the training split's shuffle (reshuffled every epoch).
        data_dir: TFDS's data directory (``"tfds"``) or the folder of CSV files (``"sample"``).

    Returns:
        ``IMDBSplits(train, valid, test)`` of ``(text, label)`` batches.

    Raises:
        ValueError: for an unknown ``source`` or a non-positive ``batch_size``.
        seqlab.data.DownloadError: when TFDS cannot download the reviews.
    """
    if source not in ("tfds", "sample"):
        raise ValueError(f"Unknown IMDB source {source!r}; choose one of 'tfds', 'sample'.")
    if batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer; got {batch_size}.")
    if source == "tfds":
        splits = load_tfds("imdb_reviews", list(TFDS_SPLITS), host=TFDS_DOWNLOAD_HOST,
                           what="the IMDB reviews (imdb_reviews) with TensorFlow Datasets",
                           data_dir=data_dir, as_supervised=True, shuffle_files=False)
    else:
        columns = [read_sample_split(name, data_dir) for name in ("train", "valid", "test")]
        splits = [tf.data.Dataset.from_tensor_slices((texts, tf.constant(labels, tf.int64)))
                  for texts, labels in columns]
    train, valid, test = splits
    count = int(train.cardinality())
    train = train.shuffle(min(SHUFFLE_BUFFER, count) if count > 0 else SHUFFLE_BUFFER, seed=seed,
                          reshuffle_each_iteration=True)
    return IMDBSplits(*(split.batch(batch_size).prefetch(tf.data.AUTOTUNE)
                        for split in (train, valid, test)))


def read_sample_split(name: str, data_dir: str | Path | None = None) -> tuple[list[str], list[int]]:
    """Texts and labels of one sample split (``"train"``, ``"valid"`` or ``"test"``) as lists."""
    path = Path(data_dir or SAMPLE_DIR) / f"{name}.csv"
    if not path.is_file():
        raise FileNotFoundError(f"No sample split at {path}. Regenerate the sample with "
                                "`python -m seqlab_instructor.imdb_sample`.")
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    return [row["text"] for row in rows], [int(row["label"]) for row in rows]
