"""The project's synthetic movie reviews: seeded, balanced, distinct, and what is committed."""

import csv

import pytest

from seqlab.data import synthetic_reviews as reviews


def _read(path):
    with path.open(newline="", encoding="utf-8") as handle:
        return [(row["text"], int(row["label"])) for row in csv.DictReader(handle)]


def test_the_same_seed_gives_the_same_reviews_and_another_seed_others():
    first = reviews.generate_reviews(50, seed=3)
    assert first == reviews.generate_reviews(50, seed=3)
    assert first != reviews.generate_reviews(50, seed=4)


def test_reviews_are_balanced_and_distinct():
    generated = reviews.generate_reviews(200, seed=1)
    assert sum(r.label for r in generated) == 100
    assert len({r.text for r in generated}) == 200
    assert {r.label for r in generated} == {0, 1}


def test_splits_are_stratified_and_share_no_text(tmp_path):
    paths = reviews.write_sample(tmp_path, sizes={"train": 60, "valid": 20, "test": 20}, seed=5)
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
    fresh = reviews.write_sample(tmp_path)
    for name, path in fresh.items():
        committed = reviews.SAMPLE_DIR / f"{name}.csv"
        assert committed.read_bytes() == path.read_bytes(), (
            f"{committed} is stale; run `python -m seqlab.data.synthetic_reviews`"
        )
    sizes = {name: len(_read(path)) for name, path in fresh.items()}
    assert sizes == reviews.SPLIT_SIZES and sum(sizes.values()) >= 600


def test_reviews_carry_the_hard_cases():
    texts = [r.text for r in reviews.generate_reviews(300, seed=2)]
    assert any(" not " in t or " never " in t or " hardly " in t for t in texts)  # negation
    assert any(", but " in t or t.startswith("Although") or ". Although" in t for t in texts)
    lengths = [len(t.split()) for t in texts]
    assert min(lengths) < 10 and max(lengths) > 50


def test_split_refuses_sizes_the_reviews_cannot_fill():
    generated = reviews.generate_reviews(10, seed=1)
    with pytest.raises(ValueError, match="train"):
        reviews.split_reviews(generated, {"train": 20})
