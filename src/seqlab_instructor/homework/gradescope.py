"""A Gradescope autograder for one assignment, grading with seqlab's own grader.

    python -m seqlab_instructor.homework gradescope 01 --out gradescope/ [--sandbox bwrap|none]

writes ``gradescope/autograder_01_<name>.zip`` in the layout of Gradescope's "Autograder
Specifications" (https://gradescope-autograders.readthedocs.io/en/latest/specs/): at the root
of the archive ``setup.sh`` (a Bash script run once, as root, when Gradescope builds the image)
and ``run_autograder`` (run for every submission with ``/autograder`` as working folder; the
archive is unpacked into ``/autograder/source`` and the student's files into
``/autograder/submission``; it must write ``/autograder/results/results.json``). Beside them:

- ``seqlab/``: this repository's packages (``src/seqlab``, ``src/seqlab_instructor``,
  ``pyproject.toml``, ``data/``) with its
  ``requirements.txt`` and ``.ci/colab-runtime.txt``; ``setup.sh`` installs it into a virtual
  environment with ``pip install -r colab-runtime.txt -c colab-runtime.txt -r requirements.txt``
  (Colab's pins, as CI's "Colab today" half): nothing of seqlab is downloaded from GitHub;
- ``notebooks/<assignment>.ipynb``: the instructor's notebook, checks and hidden tests;
- ``seqlab-autograder.json``: the assignment, the sandbox and the limits chosen at build time.

``setup.sh`` only installs; ``run_autograder`` only runs
``python -m seqlab_instructor.homework.gradescope run``, which takes the submitted notebook from
``submission/``, grades it with :func:`seqlab_instructor.homework.grade.grade` (the same collect, run,
sandbox and verdict code as ``grade``) and writes ``results/results.json`` in the documented
format: per exercise a test with ``name``, ``score``, ``max_score``, ``output`` (the check's
message) and ``visibility``; top-level ``score``, ``execution_time``, ``output`` (status, notes)
and ``stdout_visibility: "hidden"`` (the grader's log is for the instructor).

Hidden tests: an exercise whose check has ``### BEGIN HIDDEN TESTS`` gets two tests. "… (checks
in your notebook)" is ``visible``, worth 0, with the verdict of the check as the student copy
shows it; "… (graded, with hidden tests)" holds the exercise's points and the verdict of the whole
check, with ``visibility: "after_published"``. Of the four values the specification documents,
``after_published`` shows a test "only when the assignment is explicitly published from the
Review Grades page": the instructor's release. ``hidden`` would never show it (not even the
points), ``after_due_date`` shows it when the deadline passes, before the instructor has
reviewed anything. (The specification adds: "If test cases are hidden, students will not be able
to see their total score" until then.)

A broken or timed-out notebook, a missing or unreadable file, a grader error: all still give a
valid ``results.json``, each test at 0 with the reason in its output. The root folder is
``/autograder`` unless ``SEQLAB_AUTOGRADER_ROOT`` or ``--root`` says otherwise (tests), and the
Python ``run_autograder`` starts is ``SEQLAB_AUTOGRADER_PYTHON`` or the environment setup.sh made.
See docs/gradescope.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from seqlab import config

CONFIG_NAME = "seqlab-autograder.json"
VENV = "/opt/seqlab-venv"
VISIBLE, AFTER_PUBLISHED = "visible", "after_published"
#: Gradescope's documented visibility values (tests and stdout).
VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")
SANDBOXES = ("bwrap", "none")

SETUP_SH = f"""#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image (apt-get update has run).
# It installs only: run_autograder does the grading. Colab's pins need Python >= 3.11 (Ubuntu 24.04).
set -euxo pipefail
apt-get install -y --no-install-recommends python3 python3-venv python3-pip bubblewrap
python3 -m venv {VENV}
cd /autograder/source/seqlab
# Colab's pins beside the repository's requirements, as CI installs them; "-e ." is this copy.
{VENV}/bin/pip install --no-cache-dir -r .ci/colab-runtime.txt -c .ci/colab-runtime.txt \\
    -r requirements.txt
{VENV}/bin/python -c "import seqlab_instructor.homework.gradescope"
"""

RUN_AUTOGRADER = f"""#!/usr/bin/env bash
# Gradescope runs this for each submission (working folder /autograder). It writes
# results/results.json under the root (SEQLAB_AUTOGRADER_ROOT, default /autograder) and nothing
# else outside a temporary folder; see docs/gradescope.md.
root="${{SEQLAB_AUTOGRADER_ROOT:-/autograder}}"
python="${{SEQLAB_AUTOGRADER_PYTHON:-{VENV}/bin/python}}"
exec "$python" -m seqlab_instructor.homework.gradescope run --root "$root"
"""


# ------------------------------------------------------------------------------- building


def _package_files() -> dict[str, Path]:
    """``{path in the zip: file}``: both packages' sources, data and install files, no caches."""
    root = config.REPO_ROOT
    files = {}
    for name in ("pyproject.toml", "README.md", "LICENSE", "requirements.txt",
                 ".ci/colab-runtime.txt"):
        if (root / name).is_file():
            files[f"seqlab/{name}"] = root / name
    for folder in (root / "src" / "seqlab", root / "src" / "seqlab_instructor", root / "data"):
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                files[f"seqlab/{path.relative_to(root).as_posix()}"] = path
    return files


def build(notebook: str, out_dir: Path, *, notebooks_dir: Path | None = None,
          sandbox: str = "bwrap", time_limit: float | None = None,
          check_timeout: int | None = None, memory_limit_gb: float | None = None) -> Path:
    """Write ``out_dir/autograder_<assignment>.zip`` and return its path.

    Raises:
        ValueError: if ``notebook`` matches no instructor notebook or several, or for an
            unknown sandbox.
    """
    from seqlab_instructor.homework import grade as grading
    from seqlab_instructor.homework.collect import load_assignments

    if sandbox not in SANDBOXES:
        raise ValueError(f"--sandbox must be one of {', '.join(SANDBOXES)} on Gradescope; "
                         f"got {sandbox!r}.")
    assignments = load_assignments(notebooks_dir)
    names = [name for name in assignments if name.startswith(notebook)]
    if len(names) != 1:
        raise ValueError(f"{notebook!r} matches {names or 'no notebook'}; expected one of "
                         f"{sorted(assignments)}.")
    assignment = assignments[names[0]]
    settings = {"assignment": assignment.name, "sandbox": sandbox,
                "time_limit": time_limit or grading.DEFAULT_TIME_LIMIT,
                "check_timeout": check_timeout or grading.DEFAULT_CHECK_TIMEOUT,
                "memory_limit_gb": grading.DEFAULT_MEMORY_LIMIT_GB
                if memory_limit_gb is None else memory_limit_gb}
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"autograder_{assignment.name}.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in (("setup.sh", SETUP_SH), ("run_autograder", RUN_AUTOGRADER)):
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = 0o100755 << 16  # executable once unpacked
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, text)
        archive.writestr(CONFIG_NAME, json.dumps(settings, indent=1) + "\n")
        archive.write(assignment.path, f"notebooks/{assignment.path.name}")
        for name, path in _package_files().items():
            archive.write(path, name)
    return target


def unpack(archive: Path, root: Path) -> Path:
    """Lay ``archive`` out as Gradescope does under ``root`` (tests; a local trial run)."""
    root = Path(root)
    with zipfile.ZipFile(archive) as zipped:
        zipped.extractall(root / "source")
        for info in zipped.infolist():
            if info.external_attr >> 16 & 0o111:
                (root / "source" / info.filename).chmod(0o755)
    shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")
    (root / "submission").mkdir(exist_ok=True)
    (root / "results").mkdir(exist_ok=True)
    return root


# ------------------------------------------------------------------------------- grading


@contextlib.contextmanager
def _visible_verdicts(found: dict):
    """Also judge each check without its hidden tests, on the same recorded values.

    :func:`seqlab_instructor.homework.grade.grade_submission` judges the whole check cell; this
    wraps the ``judge`` it calls so that the verdict a student copy's check gives is kept too
    (``found[exercise]``), for the visible tests. Nothing else changes.
    """
    from seqlab_instructor.homework import grade as grading
    from seqlab_instructor.homework.verdicts import hidden_part, visible_part

    original = grading.judge

    def judge(exercise, check_source, values, *args):
        if hidden_part(check_source).strip():
            found[exercise] = original(exercise, visible_part(check_source), values, *args)
        return original(exercise, check_source, values, *args)

    grading.judge = judge
    try:
        yield found
    finally:
        grading.judge = original


def _tests(assignment, results: dict, visible: dict) -> list[dict]:
    """Gradescope tests from the exercises and ``{exercise: (points, message)}``."""
    from seqlab_instructor.homework.verdicts import hidden_part

    tests = []
    for number, exercise in enumerate(assignment.exercises, start=1):
        score, message = results.get(exercise.name, (0.0, f"\u2717 {exercise.name} not graded."))
        if hidden_part(exercise.check).strip():
            shown = visible.get(exercise.name, {"message": message})
            tests.append({"name": f"{exercise.name} (checks in your notebook)",
                          "number": f"{number}.1", "score": 0.0, "max_score": 0.0,
                          "output": shown["message"], "visibility": VISIBLE})
            tests.append({"name": f"{exercise.name} (graded, with hidden tests)",
                          "number": f"{number}.2", "score": score,
                          "max_score": exercise.points, "output": message,
                          "visibility": AFTER_PUBLISHED})
        else:
            tests.append({"name": exercise.name, "number": str(number), "score": score,
                          "max_score": exercise.points, "output": message,
                          "visibility": VISIBLE})
    return tests


def _choose(submission_dir: Path, assignments: dict, name: str) -> tuple[Path | None, list[str]]:
    """The notebook to grade: the first copy of the assignment, else the first ``.ipynb``."""
    from seqlab_instructor.homework.collect import read_submission

    paths = sorted(p for p in submission_dir.rglob("*.ipynb")
                   if ".ipynb_checkpoints" not in p.parts and p.is_file() and not p.is_symlink())
    if not paths:
        return None, []
    matched = [p for p in paths if read_submission(p, assignments).assignment == name]
    chosen = (matched or paths)[0]
    others = [p.name for p in paths if p != chosen]
    return chosen, [f"graded {chosen.name}; not graded: {', '.join(others)}"] if others else []


def results_for(root: Path, log=print) -> dict:
    """Grade the notebook under ``root/submission``; the results.json content (never raises)."""
    from seqlab_instructor.homework import grade as grading
    from seqlab_instructor.homework.collect import load_assignments

    start = time.monotonic()
    root = Path(root)
    settings = json.loads((root / "source" / CONFIG_NAME).read_text(encoding="utf-8"))
    notebooks_dir = root / "source" / "notebooks"
    assignments = load_assignments(notebooks_dir)
    assignment = assignments[settings["assignment"]]
    results, visible, lines = {}, {}, []
    try:
        chosen, lines = _choose(root / "submission", assignments, assignment.name)
        if chosen is None:
            raise FileNotFoundError(f"no .ipynb file was submitted (expected your copy of "
                                    f"{assignment.name}.ipynb)")
        with tempfile.TemporaryDirectory(prefix="seqlab-gradescope-") as work:
            submissions = Path(work) / "submissions"
            submissions.mkdir()
            shutil.copyfile(chosen, submissions / chosen.name)
            with _visible_verdicts(visible):
                grades = grading.grade(
                    submissions, Path(work) / "out", notebook=assignment.name,
                    notebooks_dir=notebooks_dir, sandbox=settings["sandbox"], jobs=1,
                    time_limit=settings["time_limit"], check_timeout=settings["check_timeout"],
                    memory_limit_gb=settings["memory_limit_gb"], log=log)
        grade, = grades
        results = {result.name: (result.points, result.message) for result in grade.results}
        status = grade.status + (f": {grade.reason}" if grade.reason else "")
        lines = [f"Status: {status}", *lines, *(f"Note: {note}" for note in grade.notes)]
        if grade.written:
            lines.append("Written answers (" + ", ".join(grade.written) + ") are graded by "
                         "your instructor.")
    except Exception as error:  # noqa: BLE001 - Gradescope must always get a results.json
        reason = f"{type(error).__name__}: {error}"
        lines = [f"Not graded: {reason}", *lines]
        visible = {e.name: {"message": f"\u2717 {e.name} not graded: {reason}"}
                   for e in assignment.exercises}
        results = {name: (0.0, shown["message"]) for name, shown in visible.items()}
    tests = _tests(assignment, results, visible)
    return {"score": sum(test["score"] for test in tests),
            "execution_time": max(1, round(time.monotonic() - start)),
            "output": "\n".join(lines), "stdout_visibility": "hidden", "tests": tests}


def run(root: Path, log=print) -> Path:
    """``run_autograder``'s work: write ``root/results/results.json`` and return its path."""
    root = Path(root)
    try:
        data = results_for(root, log=log)
    except Exception as error:  # noqa: BLE001 - e.g. an unreadable autograder: still valid JSON
        data = {"score": 0.0, "execution_time": 0, "stdout_visibility": "hidden", "tests": [],
                "output": f"The autograder failed before grading ({type(error).__name__}: "
                          f"{error}); please tell your instructor."}
    folder = root / "results"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "results.json"
    if target.is_symlink() or target.exists():  # whatever a submission left there
        target.unlink()
    target.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    log(f"wrote {target}: {data['score']:g} / "
        f"{sum(test['max_score'] for test in data['tests']):g}")
    return target


def add_build_arguments(command: argparse.ArgumentParser) -> None:
    """The ``gradescope`` command's arguments (shared with ``python -m seqlab_instructor.homework``)."""
    command.add_argument("notebook", help="the assignment, e.g. 01")
    command.add_argument("--out", type=Path, default=Path("gradescope"),
                         help="folder for the zip (default: gradescope/)")
    command.add_argument("--sandbox", choices=SANDBOXES, default="bwrap",
                         help="bwrap (installed by setup.sh; if Gradescope's container cannot "
                              "run it, every result says so) or none: Gradescope's container "
                              "is then the only isolation (default: %(default)s)")
    command.add_argument("--timeout", type=float, default=None, help="seconds per submission")


def build_command(args) -> int:
    try:
        target = build(args.notebook, args.out, sandbox=args.sandbox, time_limit=args.timeout)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"wrote {target}: upload it as the assignment's autograder (docs/gradescope.md)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m seqlab_instructor.homework.gradescope",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    add_build_arguments(commands.add_parser("build", help="write the autograder zip"))
    command = commands.add_parser("run", help="grade /autograder/submission (run_autograder)")
    command.add_argument("--root", type=Path, default=Path("/autograder"))
    args = parser.parse_args(argv)
    if args.command == "build":
        return build_command(args)
    run(args.root)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
