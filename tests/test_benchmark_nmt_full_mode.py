"""benchmarks.nmt_full_mode's machinery on the offline sample (no timing assertions: the minutes
it records are measured on the real pairs by hand, benchmarks/README.md)."""

from __future__ import annotations

import sys

import pytest

from seqlab import config

sys.path.insert(0, str(config.REPO_ROOT))  # benchmarks/ is a package at the repository root
from benchmarks import nmt_full_mode  # noqa: E402


def test_every_variant_of_notebook_04_is_timed_for_training_and_validation(capsys):
    assert nmt_full_mode.main(["--source", "sample", "--steps", "2"]) == 0
    printed = capsys.readouterr().out
    for variant in nmt_full_mode.VARIANTS:
        assert f"  {variant}: training (4 epochs × " in printed    # notebook 04's full epochs
        assert f"  {variant}: validation (4 × " in printed
    assert "mean of 4" in printed                                 # 2 × --steps training batches


def test_only_the_real_pairs_are_recorded(capsys, tmp_path):
    with pytest.raises(SystemExit):
        nmt_full_mode.main(["--source", "sample", "--record"])
    assert "--record needs the real Anki pairs" in capsys.readouterr().err
