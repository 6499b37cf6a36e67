"""Grading throughput with and without the per-submission sandbox (bubblewrap).

    python -m benchmarks.grading                 # 40 copies of notebook 01, --jobs 2
    python -m benchmarks.grading -n 8 --notebook 01 --jobs 2

Builds a class of N identical, solved submissions of one FAST notebook (the instructor's
solutions in the student copy), grades it with ``--sandbox none`` and then with
``--sandbox bwrap`` (same machine, same run, same settings) and prints seconds per submission
for each and the ratio. The baseline is the unsandboxed run measured in the same invocation.
Both runs must give every submission full marks, or the benchmark stops: a sandbox that
breaks grading is not measured.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import tempfile
import time
from pathlib import Path

import nbformat

from seqlab import config
from seqlab_instructor.cells import EXERCISE_TAG, has_tag
from seqlab_instructor.homework import grade, sandbox, student_copies


def _solved_copy(instructor, copy):
    """The student copy with each exercise cell replaced by the instructor's solution."""
    solutions = [c.source for c in instructor.cells if has_tag(c, EXERCISE_TAG)]
    exercises = [c for c in copy.cells if has_tag(c, EXERCISE_TAG)]
    for cell, source in zip(exercises, solutions, strict=True):
        cell.source = "\n".join(line for line in source.splitlines()
                                if "### BEGIN SOLUTION" not in line
                                and "### END SOLUTION" not in line)
    return copy


def build_class(folder: Path, prefix: str, count: int) -> Path:
    """``folder/notebooks`` (one instructor notebook) and ``folder/submissions`` (N copies)."""
    source, = sorted((config.REPO_ROOT / "notebooks").glob(f"{prefix}*.ipynb"))
    (folder / "notebooks").mkdir(parents=True)
    shutil.copy(source, folder / "notebooks" / source.name)
    (path, text), = student_copies.build(folder / "notebooks", folder / "assignments",
                                         root=folder).items()
    solved = _solved_copy(nbformat.read(source, as_version=4), nbformat.reads(text, as_version=4))
    (folder / "submissions").mkdir()
    for index in range(count):
        nbformat.write(solved, folder / "submissions" / f"student{index:03d}.ipynb")
    return folder


def measure(folder: Path, mode: str, jobs: int) -> tuple[float, list]:
    start = time.monotonic()
    grades = grade.grade(folder / "submissions", folder / f"grades-{mode}",
                         notebooks_dir=folder / "notebooks", jobs=jobs, sandbox=mode,
                         log=lambda *_: None)
    seconds = time.monotonic() - start
    wrong = [g.student for g in grades if g.total != g.max_points or g.status != grade.OK]
    if wrong:
        raise SystemExit(f"--sandbox {mode}: not full marks for {wrong}; see "
                         f"{folder / f'grades-{mode}'}")
    return seconds, grades


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.grading", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", "--submissions", type=int, default=40)
    parser.add_argument("--notebook", default="01", help="notebook name prefix (default 01)")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    problem = sandbox.bwrap_problem()
    if problem:
        print(f"cannot measure the sandbox here: {problem}")
        return 2
    with tempfile.TemporaryDirectory(prefix="seqlab-bench-grading-") as tmp:
        folder = build_class(Path(tmp), args.notebook, args.submissions)
        results = {mode: measure(folder, mode, args.jobs) for mode in ("none", "bwrap")}
    print(f"Grading {args.submissions} solved copies of notebook {args.notebook} (FAST), "
          f"--jobs {args.jobs}, on {platform.machine()} with {os.cpu_count()} CPUs "
          f"({platform.processor() or platform.platform()})")
    print(f"{'sandbox':<8} {'total s':>8} {'s/submission':>13} {'mean run s':>11} {'ratio':>6}")
    baseline = results["none"][0]
    for mode, (seconds, grades) in results.items():
        mean_run = sum(g.seconds for g in grades) / len(grades)
        print(f"{mode:<8} {seconds:8.1f} {seconds / len(grades):13.2f} {mean_run:11.1f} "
              f"{seconds / baseline:6.3f}")
    print("s/submission: wall time of the whole grading run / submissions; mean run s: the "
          "notebook's own execution time inside each submission's process; ratio: against "
          "--sandbox none in this run.")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
