"""Every FAST time the README and the notebooks' title cells state comes from one measured
record, ``benchmarks/results/notebooks.json`` (written by ``python -m benchmarks.notebooks``),
rounded by one rule; every full-mode and class-size time they state comes from
``benchmarks/results/full_mode.json`` (written by ``python -m benchmarks.end_to_end`` and the
Anki measurements), and every class size trains within the class limit."""

from __future__ import annotations

import shutil
import sys

import nbformat
import pytest

from seqlab import config, sizes
from seqlab_instructor.notebook_files import notebook_paths

sys.path.insert(0, str(config.REPO_ROOT))  # benchmarks/ is a package at the repository root
from benchmarks import end_to_end  # noqa: E402
from benchmarks import full_mode_record as full_mode  # noqa: E402
from benchmarks import notebooks as timing  # noqa: E402
from benchmarks import record_prose as prose  # noqa: E402
from benchmarks.full_mode_record import complete  # noqa: E402

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


# ------------------------------------------------ full mode and class size
# (measured by benchmarks.end_to_end and the Anki runs, written into prose by benchmarks.record_prose)

FULL_RECORD = full_mode.read_record()
ENTRIES = complete(FULL_RECORD)


def test_the_full_mode_record_measures_every_notebook_it_covers():
    for number in end_to_end.NOTEBOOKS:  # run end to end, IMDB's notebooks on the real reviews
        assert number in ENTRIES, (
            f"notebook {number} has no full and class entry in benchmarks/results/full_mode.json: "
            f"run `python -m benchmarks.end_to_end run {number} --record`")
        for size in full_mode.SIZES:
            entry = ENTRIES[number][size]
            assert entry["command"].startswith("python -m benchmarks.end_to_end"), number
            assert "run end to end" in entry["how"], (number, size)
            assert number == "07" or "IMDB: the real reviews" in entry["how"], (number, size)
    for number, entry in FULL_RECORD["notebooks"].items():
        for size, measured in entry.items():
            assert size in full_mode.SIZES, f"notebook {number}: unknown size {size!r}"
            assert set(measured) == {"minutes", "how", "command", "measured"}, (number, size)
            assert measured["minutes"] > 0 and measured["how"].strip(), (number, size)
            assert measured["command"].startswith("python -m "), (number, size)


def test_every_class_size_trains_within_the_class_limit():
    for number, entry in ENTRIES.items():
        assert entry["class"]["minutes"] <= full_mode.CLASS_LIMIT_MINUTES, (
            f"notebook {number}'s class size measured {entry['class']['minutes']} min, over "
            f"{full_mode.CLASS_LIMIT_MINUTES}: make it smaller")
        assert entry["class"]["minutes"] <= entry["full"]["minutes"] + 0.5, number


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_title_cells_state_the_recorded_full_and_class_minutes(path):
    number = timing.notebook_number(path)
    stated = prose.title_times(path)
    if number not in ENTRIES:
        assert stated == [], f"{path.name} states full-mode minutes the record does not hold"
        return
    entry = ENTRIES[number]
    expected = (prose.displayed_minutes(entry["full"]["minutes"]),
                prose.displayed_minutes(entry["class"]["minutes"]))
    assert stated == [expected], (
        f"{path.name}'s title cell must state '{prose.title_phrase(entry)}' once: run "
        "`python -m benchmarks.end_to_end sync`")
    title = nbformat.read(path, as_version=4).cells[0].source.replace("\n", " ")
    assert prose.GPU_CLAUSE in title, f"{path.name}: say that the GPU time is not measured"


def test_the_readme_table_states_the_recorded_full_and_class_minutes():
    stated = prose.readme_times(timing.README.read_text(encoding="utf-8"))
    assert sorted(stated) == [timing.notebook_number(p) for p in NOTEBOOKS]
    for number, cells in stated.items():
        if number in ENTRIES:
            assert cells == prose.readme_cells(ENTRIES[number]), (
                f"README row {number}: run `python -m benchmarks.end_to_end sync`")
        else:
            assert "min" not in " ".join(cells), f"README row {number} states unrecorded minutes"


def test_the_displayed_minutes_rule():
    assert [prose.displayed_minutes(m) for m in (0.3, 1.49, 1.5, 14.5, 61.7)] == [1, 1, 2, 15, 62]


def test_record_entry_merges_one_entry_and_refuses_a_long_class_size(tmp_path):
    path = tmp_path / "full_mode.json"
    record = full_mode.record_entry("04", "full", 82.04, "four models, real corpus",
                                    "python -m benchmarks.quality", "2026-11-24, load 1.0", path=path)
    record = full_mode.record_entry("04", "class", 12.0, "smaller", "python -m benchmarks.quality",
                                    "2026-11-24, load 1.0", path=path)
    assert record["notebooks"]["04"]["full"]["minutes"] == pytest.approx(82.0)
    assert set(complete(full_mode.read_record(path))) == {"04"}
    with pytest.raises(ValueError, match="at most 15 min"):
        full_mode.record_entry("05", "class", 15.6, "x", "python -m x", "today", path=path)
    with pytest.raises(ValueError, match="size"):
        full_mode.record_entry("05", "medium", 3.0, "x", "python -m x", "today", path=path)
    with pytest.raises(ValueError, match="two digits"):
        full_mode.record_entry("5", "full", 3.0, "x", "python -m x", "today", path=path)


def test_full_mode_sync_rewrites_readme_and_title_cells_and_leaves_the_others(tmp_path):
    readme = tmp_path / "README.md"
    shutil.copy(timing.README, readme)
    number = next(iter(ENTRIES))
    source = next(p for p in NOTEBOOKS if timing.notebook_number(p) == number)
    copy = tmp_path / source.name
    shutil.copy(source, copy)
    # Another notebook, whose recorded entry is unchanged: sync must leave it byte for byte.
    other = next(p for p in NOTEBOOKS if timing.notebook_number(p) != number)
    other_copy = tmp_path / other.name
    shutil.copy(other, other_copy)
    entry = {"full": {**ENTRIES[number]["full"], "minutes": 40.4},
             "class": {**ENTRIES[number]["class"], "minutes": 9.6}}
    record = {"notebooks": {**FULL_RECORD["notebooks"], number: entry}}
    changed = prose.sync(record, [copy, other_copy], readme)
    assert changed == [f"README.md row {number}", copy.name]
    assert prose.readme_times(readme.read_text(encoding="utf-8"))[number] == ("10 min", "40 min")
    assert prose.title_times(copy) == [(40, 10)]
    assert nbformat.read(copy, as_version=4).cells[1:] == nbformat.read(source, as_version=4).cells[1:]
    assert other_copy.read_bytes() == other.read_bytes()
    assert prose.sync(record, [copy, other_copy], readme) == []


@pytest.mark.parametrize("number", end_to_end.NOTEBOOKS)
def test_measured_notebooks_take_a_size_parameter(number):
    path = next(p for p in NOTEBOOKS if timing.notebook_number(p) == number)
    cells = nbformat.read(path, as_version=4).cells
    parameters = next(c for c in cells if c.cell_type == "code")  # the first code cell
    assert "parameters" in parameters.metadata.get("tags", [])
    assert "\nSIZE = None" in parameters.source, f"{path.name}: the parameters cell needs SIZE = None"
    resolve = f'setup(fast=FAST, size=SIZE, notebook="{number}")'
    assert any(resolve in c.source for c in cells if "setup" in c.metadata.get("tags", [])), (
        f"{path.name}: the setup cell must resolve SIZE with {resolve}")


def test_full_mode_sync_replaces_the_unmeasured_sentence_the_first_time(tmp_path):
    # Notebook 04 as it was before its first measurement: the title cell's old sentence.
    source = next(p for p in NOTEBOOKS if timing.notebook_number(p) == "04")
    readme = tmp_path / "README.md"
    shutil.copy(timing.README, readme)
    copy = tmp_path / source.name
    nb = nbformat.read(source, as_version=4)
    nb.cells[0].source = prose.TITLE_PHRASE.pattern.sub("PHRASE", nb.cells[0].source).replace(
        ": PHRASE; on a GPU not measured.",
        " is sized for a Colab\nGPU; its time is not measured yet on a GPU (no GPU was lent to "
        "this project so far; `python -m benchmarks.gpu` measures it).")
    assert "not measured yet" in nb.cells[0].source
    nbformat.write(nb, copy)
    entry = {size: {"minutes": minutes, "how": "x", "command": "python -m x", "measured": "today"}
             for size, minutes in (("full", 82.0), ("class", 14.2))}
    prose.sync({"notebooks": {"04": entry}}, [copy], readme)
    assert prose.title_times(copy) == [(82, 14)]
    title = nbformat.read(copy, as_version=4).cells[0].source
    assert "not measured yet" not in title and prose.GPU_CLAUSE in title


@pytest.mark.parametrize("template", [prose.TITLE_PHRASE, prose.README_CELL, prose.UNMEASURED])
def test_each_template_s_pattern_finds_what_it_writes_even_wrapped(template):
    values = {name: "12" if pattern == r"\d+" else "why not" for name, pattern in
              template.fields.items()}
    text = template.fill(**values)
    wrapped = text.replace(" ", "\n", 2)
    for written in (text, wrapped):
        match = template.pattern.fullmatch(written)
        assert match and match.groupdict() == values, (template.text, written)
    assert not template.pattern.search(text.upper()), "other words must not match"


def test_the_title_phrase_is_filled_from_the_record_by_the_rounding_rule():
    entry = {"full": {"minutes": 81.5}, "class": {"minutes": 0.2}}
    assert prose.title_phrase(entry) == (
        'training about 82 min on 2 CPU cores, or about 1 min with SIZE = "class", on the '
        f"record's CPU (speed probe {sizes.RECORD_SPEED:.0f} GFLOP/s; the setup cell prints the "
        "minutes at yours)")
    assert prose.readme_cells(entry) == ("1 min", "82 min")
