"""Wall time of every notebook (and student copy) in FAST mode, against its budget.

    python -m benchmarks.notebooks            # instructor notebooks
    python -m benchmarks.notebooks --student  # plus the student copies in assignments/

The budgets are the course's promises: 60 s for notebooks 01–03 and 90 s for 04–05 on two
CPU cores. The baseline measured in the same run is a notebook that only runs the shared setup
cell (Python start-up, TensorFlow import, kernel launch), so the table also shows how much of
each notebook's time is the notebook's own work.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
from pathlib import Path

import nbformat

from seqlab import config
from seqlab.notebook import notebook_paths, setup_cell_source
from seqlab.runner import run_notebook

BUDGET_SECONDS = {"01": 60, "02": 60, "03": 60, "04": 90, "05": 90}


def _setup_only_notebook(folder: Path) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Python 3"}
    nb.cells = [nbformat.v4.new_code_cell(setup_cell_source(), metadata={"tags": ["setup"]}),
                nbformat.v4.new_code_cell("FAST = True", metadata={"tags": ["parameters"]})]
    path = folder / "00_setup_only.ipynb"
    nbformat.write(nb, path)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--student", action="store_true", help="also time assignments/")
    args = parser.parse_args(argv)
    paths = notebook_paths(config.REPO_ROOT / "notebooks")
    if args.student:
        paths += notebook_paths(config.REPO_ROOT / "assignments")
    device = f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores"
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        baseline = run_notebook(_setup_only_notebook(scratch), scratch, fast=True,
                                cwd=config.REPO_ROOT / "notebooks").seconds
        rows = []
        for path in paths:
            seconds = run_notebook(path, scratch / path.parent.name, fast=True).seconds
            budget = BUDGET_SECONDS.get(path.name[:2])
            rows.append((f"{path.parent.name}/{path.name}", seconds, budget))
    print(f"Notebook wall time, FAST mode, device: {device}")
    print(f"baseline (setup cell only: kernel start + imports): {baseline:.1f} s\n")
    print(f"{'notebook':<48} {'seconds':>8} {'budget':>7} {'of budget':>10} {'own work':>9}")
    for name, seconds, budget in rows:
        share = f"{seconds / budget:.0%}" if budget else "-"
        print(f"{name:<48} {seconds:8.1f} {budget or '-':>7} {share:>10} "
              f"{seconds - baseline:8.1f}s")
    total = sum(seconds for _, seconds, _ in rows)
    print(f"{'total':<48} {total:8.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
