"""benchmarks.bucketing_reviews' machinery at tiny sizes (no timing assertions: the numbers it
prints are measured by hand, benchmarks/README.md)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from seqlab import config

sys.path.insert(0, str(config.REPO_ROOT))  # benchmarks/ is a package at the repository root
from benchmarks import bucketing_reviews, stand_ins  # noqa: E402


def test_the_stand_in_lengths_have_imdbs_median_and_mean():
    lengths = stand_ins.imdb_review_lengths(50_000)
    # 50,000 draws: the sample median and mean are within about 1 % of the target (log-normal,
    # sigma 0.75); 3 % leaves room without letting a wrong distribution through.
    assert abs(np.median(lengths) / stand_ins.IMDB_MEDIAN_WORDS - 1) < 0.03
    assert abs(lengths.mean() / stand_ins.IMDB_MEAN_WORDS - 1) < 0.03


def test_stand_in_reviews_have_those_lengths_and_both_labels():
    texts, labels = bucketing_reviews.stand_in_reviews(40, seed=3)
    expected = stand_ins.imdb_review_lengths(40, seed=3)
    assert [len(text.split()) for text in texts] == list(expected)
    assert set(labels) == {0.0, 1.0}


@pytest.mark.parametrize("notebook", ["03", "08"])
def test_the_benchmark_trains_both_pipelines_alternately_and_prints_the_ratio(notebook, capsys):
    if notebook == "08":
        pytest.importorskip("keras_hub")
    assert bucketing_reviews.main(["--quick", "--notebook", notebook]) == 0
    printed = capsys.readouterr().out
    rows = {line.split()[0]: line.split() for line in printed.splitlines()
            if line.split()[:1] in (["padded"], ["bucketed"]) and line.split()[1].isdigit()}
    assert set(rows) == {"padded", "bucketed"}
    assert all(row[1] == "4" for row in rows.values())          # the same steps for both
    real = {name: float(row[4].rstrip("%")) for name, row in rows.items()}
    assert real["bucketed"] > real["padded"]                    # less padding trained on
    assert "bucketed / padded reviews per second:" in printed
