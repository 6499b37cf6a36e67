"""benchmarks.early_stopping: the epochs a finished notebook-07 run trained are read from its
runs' histories and an unfinished run is refused. Timing itself is measured by hand
(benchmarks/README.md)."""

from __future__ import annotations

import json
import sys

import pytest

from seqlab import config
from seqlab.training.resume import FINISHED_FILE, HISTORY_FILE

sys.path.insert(0, str(config.REPO_ROOT))  # benchmarks/ is a package at the repository root
from benchmarks import early_stopping  # noqa: E402


def _run(folder, name, val_losses, finished=True):
    run = folder / name
    run.mkdir(parents=True)
    records = [{"epoch": i, "logs": {"loss": 2.0, "val_loss": v}, "seconds": 1.0, "steps": 3}
               for i, v in enumerate(val_losses)]
    (run / HISTORY_FILE).write_text(json.dumps(records))
    if finished:
        (run / FINISHED_FILE).write_text("{}")


def test_the_epochs_of_each_finished_training_are_recorded(tmp_path):
    _run(tmp_path, "07-lstm-full", [1.7, 1.5, 1.45, 1.47, 1.49])     # best at 3, stopped at 5
    _run(tmp_path, "07-gpt-full", [1.9, 1.6, 1.62, 1.65])
    path = tmp_path / "early_stopping.json"
    entry = early_stopping.record(tmp_path, "07", "full", path=path)
    assert (entry["lstm_epochs"], entry["gpt_epochs"]) == (5, 4)
    assert entry["best_val_loss"] == {"lstm": 1.45, "gpt": 1.6}
    assert early_stopping.read_record(path)["07"]["full"]["lstm_epochs"] == 5


def test_a_run_still_in_progress_is_refused_or_recorded_as_not_measured(tmp_path):
    _run(tmp_path, "07-lstm-full", [1.7, 1.5])
    _run(tmp_path, "07-gpt-full", [1.9, 1.8], finished=False)
    with pytest.raises(ValueError, match="no finished run"):
        early_stopping.stopped_epochs(tmp_path, "07", "full")
    entry = early_stopping.stopped_epochs(tmp_path, "07", "full", partial=True)
    assert (entry["lstm_epochs"], entry["gpt_epochs"]) == (2, None)
    assert entry["val_loss"]["gpt"] == [1.9, 1.8]
