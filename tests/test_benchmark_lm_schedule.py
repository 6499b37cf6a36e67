"""benchmarks.lm_schedule's machinery on the generated play (no quality or timing assertions:
the numbers it prints on the real text are measured by hand, benchmarks/README.md)."""

from __future__ import annotations

import sys

import pytest

from seqlab import config

sys.path.insert(0, str(config.REPO_ROOT))  # benchmarks/ is a package at the repository root
from benchmarks import lm_schedule  # noqa: E402


def test_both_schedules_start_from_the_same_model_and_train_on_the_same_batches(capsys):
    assert lm_schedule.main(["--source", "sample", "--size", "fast", "--steps", "4",
                             "--chunk", "2", "--every", "2", "--valid-batches", "2"]) == 0
    printed = capsys.readouterr().out
    curve = [[cell.strip() for cell in line.split("|")[1:-1]] for line in printed.splitlines()
             if line.startswith("| ") and line.split("|")[1].strip().isdigit()]
    assert [row[0] for row in curve] == ["0", "2", "4"]
    assert curve[0][1] == curve[0][2]            # before the first step: one model, twice
    assert curve[1][1] != curve[1][2]            # a warm-up's first steps are smaller ones
    assert "**ratio**" in printed and "Cosine horizon" in printed and "unigram model" in printed


def test_the_schedule_warms_up_linearly_then_anneals_to_zero():
    rate = lm_schedule.schedule(1000, warmup=100, peak=1e-3)
    assert float(rate(0)) == 0.0
    assert float(rate(50)) == pytest.approx(5e-4)           # half-way up the warm-up
    assert float(rate(100)) == pytest.approx(1e-3)          # the peak
    assert float(rate(550)) == pytest.approx(5e-4, rel=1e-3)  # half-way down the cosine
    assert float(rate(1000)) == pytest.approx(0.0, abs=1e-9)


def test_a_missing_text_is_one_clear_error(tmp_path, capsys):
    with pytest.raises(SystemExit):
        lm_schedule.main(["--text", str(tmp_path / "input.txt")])
    assert "no such file" in capsys.readouterr().err
