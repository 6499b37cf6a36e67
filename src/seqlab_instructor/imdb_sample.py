"""Writes ``data/imdb_sample/{train,valid,test}.csv`` from :mod:`seqlab.data.synthetic_reviews`.

``python -m seqlab_instructor.imdb_sample`` reproduces the committed files byte for byte.
"""

from __future__ import annotations

import argparse
import csv
import random
from collections.abc import Sequence
from pathlib import Path

from seqlab.data.imdb import SAMPLE_DIR
from seqlab.data.synthetic_reviews import Review, generate_reviews

#: Split sizes of the committed sample: 700 / 150 / 150, each half positive.
SPLIT_SIZES = {"train": 700, "valid": 150, "test": 150}
SAMPLE_SEED = 2024


def split_reviews(reviews: Sequence[Review], sizes: dict[str, int]) -> dict[str, list[Review]]:
    """Stratified splits of the given sizes (even sizes: exactly half of each split positive)."""
    positive = [r for r in reviews if r.label == 1]
    negative = [r for r in reviews if r.label == 0]
    splits: dict[str, list[Review]] = {}
    for name, size in sizes.items():
        half = size // 2
        if len(positive) < size - half or len(negative) < half:
            raise ValueError(f"not enough reviews left for the {name!r} split of {size}")
        chosen = positive[: size - half] + negative[:half]
        positive, negative = positive[size - half:], negative[half:]
        random.Random(f"{name}-{size}").shuffle(chosen)
        splits[name] = chosen
    return splits


def write_sample(directory: Path = SAMPLE_DIR, sizes: dict[str, int] | None = None,
                 seed: int = SAMPLE_SEED) -> dict[str, Path]:
    """Generate the sample and write ``{split}.csv`` files (columns ``text,label``)."""
    sizes = dict(sizes or SPLIT_SIZES)
    splits = split_reviews(generate_reviews(sum(sizes.values()), seed), sizes)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, reviews in splits.items():
        path = directory / f"{name}.csv"
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(["text", "label"])
            writer.writerows((r.text, r.label) for r in reviews)
        paths[name] = path
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m seqlab_instructor.imdb_sample",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output", type=Path, default=SAMPLE_DIR)
    parser.add_argument("--seed", type=int, default=SAMPLE_SEED)
    args = parser.parse_args(argv)
    for name, path in write_sample(args.output, seed=args.seed).items():
        rows = sum(1 for _ in path.open(encoding="utf-8")) - 1
        print(f"{name:<6} {rows:>4} reviews -> {path}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
