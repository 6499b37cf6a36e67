"""seqlab_instructor.imdb_sample: the committed data/imdb_sample/ and how it is written."""

import csv

import pytest

from seqlab.data.imdb import SAMPLE_DIR
from seqlab.data.synthetic_reviews import generate_reviews
from seqlab_instructor import imdb_sample


def _read(path):
    with path.open(newline="", encoding="utf-8") as handle:
        return [(row["text"], int(row["label"])) for row in csv.DictReader(handle)]


def test_splits_are_stratified_and_share_no_text(tmp_path):
    paths = imdb_sample.write_sample(tmp_path, sizes={"train": 60, "valid": 20, "test": 20},
                                     seed=5)
    texts = {}
    for name, path in paths.items():
        rows = _read(path)
        labels = [label for _, label in rows]
        assert labels.count(1) == labels.count(0) == len(rows) // 2, name
        texts[name] = {text for text, _ in rows}
    assert not texts["train"] & texts["valid"]
    assert not texts["train"] & texts["test"]
    assert not texts["valid"] & texts["test"]


def test_the_committed_sample_is_what_the_generator_writes(tmp_path):
    """data/imdb_sample/ is reproducible: regenerate it and compare byte for byte."""
    fresh = imdb_sample.write_sample(tmp_path)
    for name, path in fresh.items():
        committed = SAMPLE_DIR / f"{name}.csv"
        assert committed.read_bytes() == path.read_bytes(), (
            f"{committed} is stale; run `python -m seqlab_instructor.imdb_sample`"
        )
    sizes = {name: len(_read(path)) for name, path in fresh.items()}
    assert sizes == imdb_sample.SPLIT_SIZES and sum(sizes.values()) >= 600


def test_split_refuses_sizes_the_reviews_cannot_fill():
    generated = generate_reviews(10, seed=1)
    with pytest.raises(ValueError, match="train"):
        imdb_sample.split_reviews(generated, {"train": 20})
