"""``seqlab.recorded_minutes`` is the record's minutes (``seqlab_instructor.record``)."""

from __future__ import annotations

import json

from seqlab import recorded_minutes, sizes
from seqlab_instructor import record


def test_the_package_s_minutes_are_the_record_s():
    text = record.module_text(json.loads(record.RECORD.read_text(encoding="utf-8")))
    assert record.MODULE.read_text(encoding="utf-8") == text, (
        "src/seqlab/recorded_minutes.py differs from benchmarks/results/full_mode.json: "
        "run python -m seqlab_instructor.record")
    assert record.main(["--check"]) == 0


def test_a_changed_record_is_caught(tmp_path, monkeypatch):
    changed = json.loads(record.RECORD.read_text(encoding="utf-8"))
    changed["notebooks"]["04"]["class"]["minutes"] += 1
    path = tmp_path / "full_mode.json"
    path.write_text(json.dumps(changed), encoding="utf-8")
    monkeypatch.setattr(record, "RECORD", path)
    assert record.main(["--check"]) == 1
    assert "'04': {'class': 11.7" in record.module_text(changed)


def test_the_setup_line_reads_the_table():
    assert sizes.expected_minutes("04", "class") == recorded_minutes.MINUTES["04"]["class"]


def test_the_docstring_example_runs():
    import doctest

    assert doctest.testmod(record).failed == 0
