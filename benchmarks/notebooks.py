"""Wall time of every notebook (and student copy) in FAST mode, against its budget — the one
measured source of the FAST times the README table and the notebooks' title cells state.

    python -m benchmarks.notebooks            # measure notebooks/, record, update README + titles
    python -m benchmarks.notebooks --student  # also time the student copies (not recorded)
    python -m benchmarks.notebooks --sync     # no measuring: rewrite README + titles from the record
    python -m benchmarks.notebooks --only 08  # measure these notebooks, merge them into the record
    python -m benchmarks.notebooks --other-versions  # a second version set: recorded beside, shown nowhere

Measuring writes ``benchmarks/results/notebooks.json`` (seconds per notebook number, the
device, the baseline) and then rewrites, from that file only, the FAST column of the README's
notebook table and the ``about N s on 2 CPU cores`` phrase in each notebook's title cell, so
the three always agree; ``tests/test_benchmark_records.py`` fails if they do not. Displayed
times are the recorded seconds rounded to whole seconds, halves up (:func:`displayed_seconds`).
After a run that changed title cells, rebuild the student copies
(``python -m seqlab_instructor.homework build``).

The budgets are the course's promises: 60 s for notebooks 01–03 and 08, 90 s for the others on
two CPU cores. The baseline measured in the same run is a notebook that only runs the shared setup
cell (Python start-up, TensorFlow import, kernel launch), so the table also shows how much of
each notebook's time is the notebook's own work.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import tempfile
import time
from pathlib import Path

import nbformat

from seqlab import config
from seqlab.course.notebook import installed_version
from seqlab_instructor.notebook_files import notebook_paths, setup_cell_source

BUDGET_SECONDS = {"01": 60, "02": 60, "03": 60, "08": 60}
DEFAULT_BUDGET = 90
RECORD = config.REPO_ROOT / "benchmarks" / "results" / "notebooks.json"
README = config.REPO_ROOT / "README.md"
README_COLUMN = "FAST (2 CPU cores)"
#: The phrase every title cell carries (once) for its FAST time.
TITLE_PHRASE = re.compile(r"about (\d+) s on 2 CPU cores")


def displayed_seconds(seconds: float) -> int:
    """The rounding rule for every displayed FAST time: whole seconds, halves up."""
    return math.floor(seconds + 0.5)


def notebook_number(path: Path) -> str:
    return path.name[:2]


def read_record(path: Path = RECORD) -> dict:
    """The recorded measurement: ``{"seconds": {"01": 14.8, ...}, "device": ..., ...}``."""
    return json.loads(path.read_text(encoding="utf-8"))


def versions() -> str:
    """The TensorFlow and Keras a record was measured with (the kernel's: this interpreter's)."""
    return (f"TensorFlow {installed_version('tensorflow')}, "
            f"Keras {installed_version('keras')}")


def save_record(record: dict, path: Path = RECORD) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


def write_record(seconds: dict[str, float], *, device: str, baseline: float | None,
                 source: str, path: Path = RECORD, sources: dict[str, str] | None = None) -> dict:
    previous = read_record(path) if path.exists() else {}
    record = {
        "what": "FAST-mode wall time of each notebook in seconds: kernel start, TensorFlow "
                "import and every cell, executed with seqlab_instructor.runner (papermill + nbclient)",
        "device": device,
        "source": source,
        "versions": versions(),
        "baseline_seconds": baseline,
        "seconds": dict(sorted(seconds.items())),
    }
    if sources:
        record["sources"] = dict(sorted(sources.items()))
    if "other_versions" in previous:
        record["other_versions"] = previous["other_versions"]
    save_record(record, path)
    return record


# ------------------------------------------------------------------- README and title cells


def device() -> str:
    """The machine every record names: processor and CPU count."""
    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores"


def readme_table(text: str, *columns: str):
    """The README's notebook table: its lines, ``(line index, cells)`` of each row, and the index
    of each of ``columns`` in the header (the table is the first one that has them all).

    Both records (FAST here, full mode and class size in ``benchmarks.end_to_end``) read and
    rewrite their columns of this one table; :func:`table_line` writes a row back.
    """
    lines = text.splitlines()
    for i, line in enumerate(lines):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and all(column in cells for column in columns):
            rows = []
            for j in range(i + 2, len(lines)):
                if not lines[j].startswith("|"):
                    break
                rows.append((j, [c.strip() for c in lines[j].strip().strip("|").split("|")]))
            return lines, rows, [cells.index(column) for column in columns]
    raise ValueError(f"README.md has no table with the column(s) {', '.join(map(repr, columns))}")


def table_line(cells: list[str]) -> str:
    """One README table row from its cells."""
    return "| " + " | ".join(cells) + " |"


def readme_times(text: str) -> dict[str, str]:
    """Notebook number -> the README table's FAST cell, e.g. ``{"01": "15 s"}``."""
    _, rows, (column,) = readme_table(text, README_COLUMN)
    return {cells[0]: cells[column] for _, cells in rows}


def title_times(path: Path) -> list[int]:
    """Every FAST time the notebook's title cell states (the phrase should occur once)."""
    title = nbformat.read(path, as_version=4).cells[0].source
    return [int(n) for n in TITLE_PHRASE.findall(title.replace("\n", " "))]


def sync(record: dict, notebooks: list[Path] | None = None, readme: Path = README) -> list[str]:
    """Rewrite the README's FAST column and the title cells from ``record``; return what changed."""
    changed = []
    seconds = record["seconds"]
    lines, rows, (column,) = readme_table(readme.read_text(encoding="utf-8"), README_COLUMN)
    for j, cells in rows:
        if cells[0] in seconds:
            wanted = f"{displayed_seconds(seconds[cells[0]])} s"
            if cells[column] != wanted:
                cells[column] = wanted
                lines[j] = table_line(cells)
                changed.append(f"README.md row {cells[0]}")
    text = "\n".join(lines) + "\n"
    if changed:
        readme.write_text(text, encoding="utf-8")
    for path in notebooks if notebooks is not None else notebook_paths():
        number = notebook_number(path)
        if number not in seconds:
            continue
        nb = nbformat.read(path, as_version=4)  # read, change the title cell, write at once
        title = nb.cells[0].source
        shown = displayed_seconds(seconds[number])
        new = re.sub(r"about \d+ s(\s+)on(\s+)2(\s+)CPU(\s+)cores",  # keep the line breaks
                     lambda m, shown=shown: f"about {shown} s{m[1]}on{m[2]}2{m[3]}CPU{m[4]}cores",
                     title)
        if new != title:
            nb.cells[0].source = new
            nbformat.write(nb, path)
            changed.append(path.name)
    return changed


# ------------------------------------------------------------------------------- measuring


def _setup_only_notebook(folder: Path) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Python 3"}
    nb.cells = [nbformat.v4.new_code_cell("FAST = True\nSIZE = None",
                                          metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell(setup_cell_source("00", "0" * 40), metadata={"tags": ["setup"]})]
    path = folder / "00_setup_only.ipynb"
    nbformat.write(nb, path)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.notebooks", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--student", action="store_true", help="also time assignments/")
    parser.add_argument("--only", nargs="+", metavar="NN",
                        help="measure only these notebook numbers and merge them into the record")
    parser.add_argument("--sync", action="store_true",
                        help="do not measure: rewrite README and title cells from the record")
    parser.add_argument("--other-versions", action="store_true",
                        help="record these times under other_versions (README and titles keep "
                             "the main record's)")
    args = parser.parse_args(argv)
    if args.sync:
        for name in sync(read_record()):
            print("updated", name)
        return 0

    from seqlab_instructor.runner import run_notebook

    paths = notebook_paths(config.REPO_ROOT / "notebooks")
    if args.only:
        paths = [p for p in paths if notebook_number(p) in args.only]
    if args.student:
        paths += notebook_paths(config.REPO_ROOT / "assignments")
    machine = device()
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        baseline = run_notebook(_setup_only_notebook(scratch), scratch, fast=True,
                                cwd=config.REPO_ROOT / "notebooks").seconds
        rows = []
        for path in paths:
            # An empty backup folder for each run: with models/backups' finished runs the
            # notebook would load their weights and skip its training (TrainingRun), and the
            # time would not be the notebook's.
            backups = scratch / "backups" / f"{path.parent.name}-{path.stem}"
            seconds = run_notebook(path, scratch / path.parent.name, fast=True,
                                   env={"SEQLAB_BACKUP_DIR": str(backups)}).seconds
            budget = BUDGET_SECONDS.get(notebook_number(path), DEFAULT_BUDGET)
            rows.append((path, seconds, budget))
    print(f"Notebook wall time, FAST mode, device: {machine}")
    print(f"baseline (setup cell only: kernel start + imports): {baseline:.1f} s\n")
    print(f"{'notebook':<48} {'seconds':>8} {'budget':>7} {'of budget':>10} {'own work':>9}")
    for path, seconds, budget in rows:
        print(f"{path.parent.name + '/' + path.name:<48} {seconds:8.1f} {budget:>7} "
              f"{seconds / budget:>10.0%} {seconds - baseline:8.1f}s")
    total = sum(seconds for _, seconds, _ in rows)
    print(f"{'total':<48} {total:8.1f}")

    measured = {notebook_number(p): round(s, 1) for p, s, _ in rows if p.parent.name == "notebooks"}
    source = f"python -m benchmarks.notebooks, {time.strftime('%Y-%m-%d')}"
    if args.other_versions:
        record = read_record()
        record["other_versions"] = {"versions": versions(), "source": source,
                                    "baseline_seconds": round(baseline, 1), "seconds": measured}
        save_record(record)
        print(f"\nrecorded under other_versions in {RECORD.relative_to(config.REPO_ROOT)}")
        return 0
    sources = {}
    if args.only:  # keep the other notebooks' times; say which run measured which
        previous = read_record()
        sources = previous.get("sources", {n: previous["source"] for n in previous["seconds"]})
        sources.update({n: f"{source} --only (baseline {baseline:.1f} s)" for n in measured})
        measured = {**previous["seconds"], **measured}
        baseline, source = previous["baseline_seconds"], previous["source"]
    record = write_record(measured, device=machine, baseline=round(baseline, 1), source=source,
                          sources=sources)
    print(f"\nrecorded in {RECORD.relative_to(config.REPO_ROOT)}")
    for name in sync(record):
        print("updated", name)
    print("If title cells changed: python -m seqlab_instructor.homework build")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
