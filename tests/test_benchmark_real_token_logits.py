"""benchmarks.real_token_logits' machinery on the offline sample (no timing assertions: the
numbers it prints are measured by hand, benchmarks/README.md)."""

from __future__ import annotations

import sys

from seqlab import config

sys.path.insert(0, str(config.REPO_ROOT))  # benchmarks/ is a package at the repository root
from benchmarks import real_token_logits  # noqa: E402


def test_both_output_layers_train_on_the_same_batches_to_the_same_scores(capsys):
    assert real_token_logits.main(["--source", "sample", "--steps", "4", "--chunk", "2",
                                   "--valid-batches", "2"]) == 0
    printed = capsys.readouterr().out
    rows = {line.split("|")[1].strip(): [cell.strip() for cell in line.split("|")[2:-1]]
            for line in printed.splitlines() if line.startswith("| every") or
            line.startswith("| real tokens")}
    assert set(rows) == {"every position", "real tokens only"}
    assert rows["every position"][0] == rows["real tokens only"][0] == "4"       # same steps
    assert rows["every position"][3] == rows["real tokens only"][3]              # same batches
    # the same gradients summed in another order: equal validation scores to ~1e-4
    loss, other = (float(rows[name][4]) for name in rows)
    assert abs(loss - other) < 1e-3
    assert "real tokens only / every position" in printed
