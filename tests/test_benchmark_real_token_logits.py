"""benchmarks.real_token_logits' machinery on the offline sample (no timing assertions: the
numbers it prints are measured by hand, benchmarks/README.md)."""

from __future__ import annotations

import sys

from seqlab import config

sys.path.insert(0, str(config.REPO_ROOT))  # benchmarks/ is a package at the repository root
from benchmarks import real_token_logits  # noqa: E402


def test_the_three_output_layers_train_on_the_same_batches_to_the_same_scores(capsys):
    assert real_token_logits.main(["--source", "sample", "--steps", "4", "--chunk", "2",
                                   "--valid-batches", "2"]) == 0
    printed = capsys.readouterr().out
    rows = {cells[0]: cells[1:] for line in printed.splitlines()
            if line.startswith("| ") and not line.startswith("| **")
            for cells in [[cell.strip() for cell in line.split("|")[1:-1]]]
            if cells[0] in real_token_logits.VARIANTS}
    assert set(rows) == set(real_token_logits.VARIANTS)
    assert {row[0] for row in rows.values()} == {"4"}                # the same steps
    assert len({row[3] for row in rows.values()}) == 1               # the same batches
    # the same gradients summed in another order: equal validation losses to ~1e-4
    losses = [float(row[4]) for row in rows.values()]
    assert max(losses) - min(losses) < 1e-3
    assert printed.count("**ratio** real tokens only /") == 2
