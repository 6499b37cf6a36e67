"""Every FAST time the README and the notebooks' title cells state comes from one measured
record, ``benchmarks/results/notebooks.json`` (written by ``python -m benchmarks.notebooks``),
rounded by one rule."""

from __future__ import annotations

import shutil
import sys

import nbformat
import pytest

from seqlab import config
from seqlab.notebook_files import notebook_paths

sys.path.insert(0, str(config.REPO_ROOT))  # benchmarks/ is a package at the repository root
from benchmarks import notebooks as timing  # noqa: E402

NOTEBOOKS = notebook_paths(config.REPO_ROOT / "notebooks")
RECORD = timing.read_record()


def test_the_rounding_rule():
    assert [timing.displayed_seconds(s) for s in (14.8, 19.1, 44.5, 45.49, 68.0)] == \
        [15, 19, 45, 45, 68]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_notebook_has_a_measured_time_and_its_title_cell_states_it(path):
    number = timing.notebook_number(path)
    assert number in RECORD["seconds"], (
        f"{path.name} has no measured FAST time in benchmarks/results/notebooks.json: "
        "run `python -m benchmarks.notebooks`")
    expected = timing.displayed_seconds(RECORD["seconds"][number])
    assert timing.title_times(path) == [expected], (
        f"{path.name}'s title cell must say 'about {expected} s on 2 CPU cores' once (the "
        "recorded time): run `python -m benchmarks.notebooks --sync`")


def test_the_readme_table_states_the_recorded_times():
    stated = timing.readme_times(timing.README.read_text(encoding="utf-8"))
    numbers = [timing.notebook_number(p) for p in NOTEBOOKS]
    assert sorted(stated) == numbers, "the README table needs one row per notebook"
    expected = {n: f"{timing.displayed_seconds(RECORD['seconds'][n])} s" for n in numbers}
    assert stated == expected, "run `python -m benchmarks.notebooks --sync`"


def test_sync_rewrites_readme_and_title_cells_from_the_record(tmp_path):
    readme = tmp_path / "README.md"
    shutil.copy(timing.README, readme)
    copy = tmp_path / NOTEBOOKS[0].name
    shutil.copy(NOTEBOOKS[0], copy)
    number = timing.notebook_number(copy)
    record = {"seconds": {**RECORD["seconds"], number: 123.5}}
    changed = timing.sync(record, [copy], readme)
    assert changed == [f"README.md row {number}", copy.name]
    assert timing.readme_times(readme.read_text(encoding="utf-8"))[number] == "124 s"
    assert timing.title_times(copy) == [124]
    assert nbformat.read(copy, as_version=4).cells[1:] == nbformat.read(NOTEBOOKS[0], as_version=4).cells[1:]
    assert timing.sync(record, [copy], readme) == []  # nothing left to change
