"""Grade a folder of submitted student notebooks with the instructor's checks.

    python -m seqlab.assignments grade SUBMISSIONS_DIR [--notebook 04] [--out grades/]
                                       [--timeout S] [--memory-limit GB] [--jobs N] [-p NAME VALUE]

1. **Collect.** Every ``*.ipynb`` under the folder (any file name). The student id is the file
   name, or the value of a ``STUDENT_ID = "…"`` line in the notebook. Each file is matched to its
   assignment by the ``metadata.seqlab.assignment`` entry that ``python -m seqlab.assignments
   build`` writes into every student copy (falling back to the "Generated from
   `notebooks/….ipynb`" note of the copy's title cell); files that match nothing are reported.
2. **Execute** each submission with :func:`seqlab.runner.run_notebook` (the tests' runner) in
   FAST mode: a fresh kernel process per submission, a temporary working directory of its own,
   a wall-clock limit for the whole notebook and an address-space limit for the kernel
   (``RLIMIT_AS``, where the OS has it). Errors do not stop execution (each is reported), so a
   cell that raises costs only what depends on it.
3. **Grade with the instructor's checks.** After the student's cells, in the same kernel, the
   grader runs the *instructor* notebook's check cell of every exercise (hidden tests between
   ``### BEGIN HIDDEN TESTS`` / ``### END HIDDEN TESTS`` included) against the student's
   functions, with ``checks`` bound to the real :mod:`seqlab.checks`. The submission's own check
   cells are ignored, so editing or deleting them changes nothing. An exercise earns its
   points (``metadata.seqlab.points`` of the instructor's exercise cell, default 1) when its
   check passes; the feedback quotes the check's message, the words the student saw.
4. **Write** ``grades.csv``, ``feedback/<student>.md`` and ``executed/<student>.ipynb`` under the
   output folder, and print a summary.

This isolates submissions from each other and from the grader's process; it is not a sandbox
(see "What the grader's isolation does — and does not — protect against" in the README).
"""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import json
import re
import secrets
import shutil
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from seqlab import config
from seqlab.assignments import (
    ALLOWED_ERROR_TAG,
    CHECK_TAG,
    EXERCISE_TAG,
    METADATA_KEY,
    exercise_name,
    make_student_copy,
    source_version,
)

#: The FAST-mode promise (README): every notebook runs in about a minute on 2 CPU cores.
FAST_BUDGET_SECONDS = 60
#: Default wall-clock limit per submission: five FAST budgets (kernel start, a loaded machine).
DEFAULT_TIME_LIMIT = 5 * FAST_BUDGET_SECONDS
#: Default seconds each instructor check may run after the student's cells.
DEFAULT_CHECK_TIMEOUT = 120
#: Default submissions run at once. A FAST run keeps a core busy less than half its wall time
#: (kernel start, imports, small batches): on 2 cores two at once graded 4 submissions of
#: notebook 01 in 79 s against 151 s one at a time (a shared, loaded machine).
DEFAULT_JOBS = 2
#: Default address-space limit of a submission's kernel; TensorFlow alone maps about 3 GB.
DEFAULT_MEMORY_LIMIT_GB = 8.0
STUDENT_ID_LINE = re.compile(r"""^\s*STUDENT_ID\s*=\s*["']([^"'\n]+)["']""", re.MULTILINE)
GENERATED_FROM = re.compile(r"Generated from `notebooks/([^`/]+)\.ipynb`")
RESULT_MARKER = "seqlab-grade-result"
#: The stand-in embedding module's folder under models/ (``seqlab.data.standin.STANDIN_DIRNAME``,
#: not imported: that module loads TensorFlow, which the grader's process never needs).
STANDIN_DIRNAME = "standin-text-embedding"

OK = "ok"
ERROR = "error"
TIMEOUT = "timeout"
KERNEL_DIED = "kernel died"
INVALID = "invalid"
UNMATCHED = "unmatched"


# ------------------------------------------------------------------------- instructor side


@dataclass(frozen=True)
class Exercise:
    """One graded exercise: its label, its points and the instructor's check cell source."""

    name: str
    points: float
    check: str


@dataclass
class Assignment:
    """An instructor notebook as the grader sees it."""

    name: str
    path: Path
    version: str
    exercises: list[Exercise]

    @property
    def max_points(self) -> float:
        return sum(exercise.points for exercise in self.exercises)


def _tags(cell) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def _seqlab_metadata(cell) -> dict:
    return cell.get("metadata", {}).get(METADATA_KEY, {}) or {}


def load_assignment(path: Path) -> Assignment:
    """Read an instructor notebook's exercises, points and check cells.

    Raises:
        ValueError: if an exercise has no check cell after it, or its points are not a
            positive number.
    """
    import nbformat

    path = Path(path)
    text = path.read_text(encoding="utf-8")
    notebook = nbformat.reads(text, as_version=4)
    exercises = []
    cells = notebook.cells
    for index, cell in enumerate(cells):
        if cell.cell_type != "code" or EXERCISE_TAG not in _tags(cell):
            continue
        name = exercise_name(cell) or f"Exercise in cell {index}"
        points = _seqlab_metadata(cell).get("points", 1)
        if isinstance(points, bool) or not isinstance(points, (int, float)) or points <= 0:
            raise ValueError(f"{path.name}: cell {index} ({name}) has metadata.seqlab.points = "
                             f"{points!r}; expected a positive number.")
        check = next((c for c in cells[index + 1:] if c.cell_type == "code"), None)
        if check is None or CHECK_TAG not in _tags(check):
            raise ValueError(f"{path.name}: exercise cell {index} ({name}) is not followed by a "
                             f"code cell tagged '{CHECK_TAG}'.")
        exercises.append(Exercise(name, float(points), check.source))
    return Assignment(path.stem, path, source_version(text), exercises)


def load_assignments(notebooks_dir: Path | None = None) -> dict[str, Assignment]:
    """Every instructor notebook with exercises, by name (``"04_neural_machine_translation"``)."""
    from seqlab.notebook_files import notebook_paths

    found = {}
    for path in notebook_paths(Path(notebooks_dir or config.REPO_ROOT / "notebooks")):
        assignment = load_assignment(path)
        if assignment.exercises:
            found[assignment.name] = assignment
    return found


# ---------------------------------------------------------------------------- submissions


@dataclass
class Submission:
    """A collected file: who, which assignment, and why it cannot be run (if so)."""

    path: Path
    student: str
    assignment: str | None = None
    notebook: object | None = None
    problem: str | None = None
    status: str | None = None
    notes: list[str] = field(default_factory=list)


def _student_id(notebook, path: Path) -> str:
    for cell in notebook.cells if notebook is not None else []:
        if cell.cell_type == "code":
            match = STUDENT_ID_LINE.search(cell.source)
            if match and match.group(1).strip():
                return match.group(1).strip()
    return path.stem


def _match(notebook, assignments: dict[str, Assignment]) -> tuple[str | None, str | None]:
    """``(assignment name, note)`` from the copy's metadata, else from its title cell."""
    entry = notebook.metadata.get(METADATA_KEY, {}) or {}
    name = entry.get("assignment") if isinstance(entry, dict) else None
    if name in assignments:
        note = None
        version = entry.get("version")
        if version and version != assignments[name].version:
            note = (f"built from another version of the instructor notebook ({version}; "
                    f"now {assignments[name].version}): cells may differ")
        return name, note
    for cell in notebook.cells[:3]:
        if cell.cell_type == "markdown":
            match = GENERATED_FROM.search(cell.source)
            if match and match.group(1) in assignments:
                return match.group(1), ("matched by its title cell: the notebook lost the "
                                        "metadata.seqlab entry of the student copy")
    return None, None


def read_submission(path: Path, assignments: dict[str, Assignment]) -> Submission:
    """Parse, validate and match one submitted file; never raises for a bad file."""
    import nbformat

    path = Path(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        return Submission(path, path.stem, problem=f"not valid JSON ({error})", status=INVALID)
    try:
        notebook = nbformat.reads(json.dumps(raw), as_version=4)
        # Outputs are the student's, never trusted or needed: drop them before validating.
        for cell in notebook.cells:
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None
        nbformat.validate(notebook)
    except Exception as error:  # noqa: BLE001 - any malformed notebook is reported, not fatal
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        return Submission(path, path.stem, problem=f"not a valid notebook ({message})",
                          status=INVALID)
    submission = Submission(path, _student_id(notebook, path), notebook=notebook)
    submission.assignment, note = _match(notebook, assignments)
    if note:
        submission.notes.append(note)
    if submission.assignment is None:
        submission.problem = ("not a student copy of any assignment (no metadata.seqlab."
                              "assignment, no 'Generated from' title)")
        submission.status = UNMATCHED
    return submission


def _safe_name(student: str) -> str:
    return re.sub(r"[^\w.@-]+", "_", student).strip("._") or "student"


def collect(submissions_dir: Path, assignments: dict[str, Assignment],
            only: str | None = None,
            exclude: Path | None = None) -> tuple[list[Submission], list[Submission]]:
    """``(to grade, skipped)``: every ``*.ipynb`` under the folder, read and matched.

    With ``only`` (an assignment name), invalid and unmatched files are graded as that
    assignment (zero points, with the reason) and files of other assignments are skipped.
    Files under ``exclude`` (the grader's own output folder, if inside) are not collected.
    """
    submissions_dir = Path(submissions_dir)
    if not submissions_dir.is_dir():
        raise FileNotFoundError(f"No submissions folder at {submissions_dir}")
    paths = sorted(p for p in submissions_dir.rglob("*.ipynb")
                   if ".ipynb_checkpoints" not in p.parts
                   and not (exclude is not None and p.resolve().is_relative_to(exclude)))
    graded, skipped = [], []
    seen: Counter = Counter()
    for path in paths:
        submission = read_submission(path, assignments)
        if only is not None:
            if submission.assignment not in (None, only):
                submission.problem = f"a copy of {submission.assignment}, not {only}"
                skipped.append(submission)
                continue
            submission.assignment = only
        seen[submission.student] += 1
        if seen[submission.student] > 1:
            submission.notes.append(f"another file already had student id "
                                    f"{submission.student!r}; this one is "
                                    f"{submission.student}-{seen[submission.student]}")
            submission.student = f"{submission.student}-{seen[submission.student]}"
        graded.append(submission)
    return graded, skipped


def structure_notes(submission_notebook, template_notebook) -> list[str]:
    """Which of the student copy's code cells the submission deleted, reordered or (checks) edited.

    Cells are matched by cell id, else by identical source, else (edited exercise cells) by
    their first line. The notes explain a grade; they never change it.
    """
    def first_line(source: str) -> str:
        return next((line.strip() for line in source.splitlines() if line.strip()), "")

    cells = [c for c in submission_notebook.cells if c.cell_type == "code"]
    by_id = {c.get("id"): i for i, c in enumerate(cells) if c.get("id")}
    by_source = {c.source: i for i, c in enumerate(cells)}
    by_first = {first_line(c.source): i for i, c in enumerate(cells) if c.source.strip()}
    positions, missing, edited_checks = [], [], 0
    for cell in (c for c in template_notebook.cells if c.cell_type == "code"):
        index = by_id.get(cell.get("id"), by_source.get(cell.source,
                                                        by_first.get(first_line(cell.source))))
        if index is None:
            label = exercise_name(cell)
            if label:
                missing.append(f"the cell of {label}")
            elif CHECK_TAG in _tags(cell):
                missing.append("a check cell")
            else:
                missing.append("a code cell")
        else:
            positions.append(index)
            if CHECK_TAG in _tags(cell) and cells[index].source.strip() != cell.source.strip():
                edited_checks += 1
    notes = []
    if missing:
        counts = Counter(missing)
        notes.append("deleted: " + ", ".join(f"{label}" + (f" (x{n})" if n > 1 else "")
                                             for label, n in counts.items()))
    if positions != sorted(positions):
        notes.append("code cells were reordered")
    if edited_checks:
        notes.append(f"check cells edited: {edited_checks} (grading ran the instructor's checks, "
                     "not these)")
    return notes


# --------------------------------------------------------------------- inside the kernel


def check_in_kernel(exercise: str, source: str, nonce: str,
                    namespace: dict | None = None) -> dict:
    """Run an instructor check in the student's kernel and print its verdict as one line.

    Called by the grader's epilogue cells, never by students. The check runs in a copy of
    ``namespace`` (default: the kernel's, where the student's functions live; a copy, so hidden
    tests leave no trace) with ``checks`` and ``seqlab`` bound to the real package; what it
    prints is captured, and one line ``seqlab-grade-result <nonce> {json}`` reports ``passed``
    and ``message`` (also returned).
    """
    import seqlab
    import seqlab.checks
    from seqlab.checks import CheckFailed

    if namespace is None:
        import IPython

        shell = IPython.get_ipython()
        namespace = shell.user_ns if shell is not None else {}
    namespace = dict(namespace)
    namespace.update(checks=seqlab.checks, seqlab=seqlab)
    captured = io.StringIO()
    failed = "\u2717 {} not passed yet: {}"
    try:
        with contextlib.redirect_stdout(captured):
            exec(compile(source, f"<instructor check: {exercise}>", "exec"), namespace)  # noqa: S102
    except CheckFailed as failure:
        result = {"passed": False, "message": failed.format(failure.exercise, failure.message)}
    except NameError as error:
        result = {"passed": False, "message": failed.format(
            exercise, f"{error}: the grader could not find your solution (was its cell "
                      "deleted, renamed, or never reached?).")}
    except AssertionError as error:
        detail = f": {error}" if str(error) else "."
        result = {"passed": False, "message": failed.format(exercise, f"a hidden test failed{detail}")}
    except KeyboardInterrupt:
        result = {"passed": False, "message": failed.format(
            exercise, "the check did not finish in time (does your code loop forever?).")}
    except Exception as error:  # noqa: BLE001 - every failure is a verdict, not a crash
        result = {"passed": False, "message": failed.format(
            exercise, f"the check raised {type(error).__name__}: {error}")}
    else:
        lines = [line for line in captured.getvalue().splitlines() if line.startswith("\u2713")]
        result = {"passed": True, "message": lines[-1] if lines else f"\u2713 {exercise} passed."}
    print(f"{RESULT_MARKER} {nonce} {json.dumps(result)}")
    return result


def _epilogue(assignment: Assignment, nonce: str) -> list[str]:
    return [
        "from seqlab.grading import check_in_kernel as _seqlab_check_in_kernel\n"
        f"_seqlab_check_in_kernel({exercise.name!r}, {exercise.check!r}, {nonce!r});"
        for exercise in assignment.exercises
    ]


def _results_from(cells, nonce: str) -> list[dict | None]:
    """The verdict line of each epilogue cell (None where the cell printed none)."""
    prefix = f"{RESULT_MARKER} {nonce} "
    results = []
    for cell in cells:
        found = None
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream" and output.get("name") == "stdout":
                for line in output.get("text", "").splitlines():
                    if line.startswith(prefix):
                        found = json.loads(line[len(prefix):])
        results.append(found)
    return results


# ------------------------------------------------------------------------------- grading


@dataclass
class ExerciseResult:
    name: str
    points: float
    max_points: float
    passed: bool
    message: str


@dataclass
class Grade:
    """One row of ``grades.csv`` and one feedback file."""

    student: str
    file: str
    assignment: str | None
    results: list[ExerciseResult]
    status: str
    reason: str = ""
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    feedback: Path | None = None
    executed: Path | None = None

    @property
    def total(self) -> float:
        return sum(result.points for result in self.results)

    @property
    def max_points(self) -> float:
        return sum(result.max_points for result in self.results)


def _not_run(assignment: Assignment | None, message: str) -> list[ExerciseResult]:
    if assignment is None:
        return []
    return [ExerciseResult(e.name, 0.0, e.points, False, f"\u2717 {e.name} not graded: {message}")
            for e in assignment.exercises]


def _status_of(run, executed_cells, own_cells: int) -> tuple[str, str]:
    """``(status, reason)`` from a run: time limit, dead kernel, or cells that raised."""
    if run.stopped:
        return (KERNEL_DIED if "kernel died" in run.stopped else TIMEOUT), run.stopped
    unexpected = [(index, error) for index, error in run.errors
                  if index < own_cells
                  and ALLOWED_ERROR_TAG not in _tags(executed_cells[index])]
    if unexpected:
        index, error = unexpected[0]
        more = f" (and {len(unexpected) - 1} more)" if len(unexpected) > 1 else ""
        return ERROR, f"cell {index} raised {error}{more}"
    return OK, ""


def _private_home(home: Path) -> Path:
    """A ``SEQLAB_HOME`` of the submission's own: a copy of ``data/``, an empty ``models/``.

    Checkpoints and results a notebook writes then land in the temporary folder, so parallel
    submissions never share a file and none overwrites the instructor's ``models/``. The
    stand-in module is copied when built already, so each kernel need not rebuild it.
    """
    shutil.copytree(config.DATA_DIR, home / "data")
    (home / "models").mkdir(parents=True)
    standin = config.MODELS_DIR / STANDIN_DIRNAME
    if standin.is_dir():
        shutil.copytree(standin, home / "models" / STANDIN_DIRNAME)
    return home


async def grade_submission(submission: Submission, assignment: Assignment, out_dir: Path, *,
                           time_limit: float = DEFAULT_TIME_LIMIT,
                           check_timeout: int = DEFAULT_CHECK_TIMEOUT,
                           memory_limit: int | None = None,
                           parameters: dict | None = None) -> Grade:
    """Execute one matched, valid submission and grade it with the instructor's checks."""
    import nbformat

    from seqlab.runner import async_run_notebook

    safe = _safe_name(submission.student)
    grade = Grade(submission.student, submission.path.name, assignment.name, [], OK,
                  notes=list(submission.notes))
    template = make_student_copy(
        nbformat.read(assignment.path, as_version=4), f"notebooks/{assignment.path.name}",
        f"assignments/{assignment.path.name}")
    grade.notes += structure_notes(submission.notebook, template)
    nonce = secrets.token_hex(8)
    with tempfile.TemporaryDirectory(prefix=f"seqlab-grade-{safe}-",
                                     ignore_cleanup_errors=True) as work:
        work = Path(work)
        notebook_path = work / f"{assignment.name}.ipynb"
        nbformat.write(submission.notebook, notebook_path)
        try:
            home = _private_home(work / "seqlab-home")
            run = await async_run_notebook(
                notebook_path, work / "executed", fast=True, parameters=parameters, cwd=work,
                allow_errors=True, time_limit=time_limit, memory_limit=memory_limit,
                epilogue=_epilogue(assignment, nonce), epilogue_timeout=check_timeout,
                # No GPU: FAST runs are sized for a CPU, TensorFlow would give each parallel
                # kernel the whole GPU memory, and CUDA maps more address space than RLIMIT_AS
                # allows.
                env={"SEQLAB_HOME": str(home), "CUDA_VISIBLE_DEVICES": ""})
        except Exception as error:  # noqa: BLE001 - one broken submission never stops the rest
            grade.status, grade.reason = ERROR, f"could not be run: {type(error).__name__}: {error}"
            grade.results = _not_run(assignment, grade.reason)
            return grade
        executed = nbformat.read(run.output, as_version=4)
    grade.seconds = run.seconds
    own_cells = len(executed.cells) - len(assignment.exercises)  # the epilogue comes last
    verdicts = _results_from(executed.cells[own_cells:], nonce)
    grade.status, grade.reason = _status_of(run, executed.cells, own_cells)
    for exercise, verdict in zip(assignment.exercises, verdicts, strict=True):
        if verdict is None:
            verdict = {"passed": False, "message": f"\u2717 {exercise.name} not graded: the "
                                                   f"check could not run ({grade.reason or 'no verdict'})."}
        grade.results.append(ExerciseResult(exercise.name, exercise.points if verdict["passed"] else 0.0,
                                            exercise.points, bool(verdict["passed"]),
                                            verdict["message"]))
    # The student gets their notebook as it ran, without the grader's cells (hidden tests).
    executed.cells = executed.cells[:own_cells]
    executed_dir = Path(out_dir) / "executed"
    executed_dir.mkdir(parents=True, exist_ok=True)
    grade.executed = executed_dir / f"{safe}.ipynb"
    nbformat.write(executed, grade.executed)
    return grade


def _blockquote(text: str) -> str:
    return "\n".join("> " + line if line else ">" for line in text.splitlines())


def _points(value: float) -> str:
    return f"{value:g}"


def write_feedback(grade: Grade, out_dir: Path) -> Path:
    """``feedback/<student>.md``: points, status and each exercise's check message."""
    folder = Path(out_dir) / "feedback"
    folder.mkdir(parents=True, exist_ok=True)
    lines = [f"# {grade.assignment or 'Unknown assignment'}: feedback for {grade.student}", "",
             f"- File: `{grade.file}`",
             f"- Points: **{_points(grade.total)} / {_points(grade.max_points)}**",
             f"- Status: {grade.status}" + (f" ({grade.reason})" if grade.reason else "")]
    lines += [f"- Note: {note}" for note in grade.notes]
    if grade.executed is not None:
        lines.append(f"- Your notebook as it ran: [executed/{grade.executed.name}]"
                     f"(../executed/{grade.executed.name})")
    for result in grade.results:
        lines += ["", f"## {result.name}: {_points(result.points)} / {_points(result.max_points)}",
                  "", _blockquote(result.message)]
    path = folder / f"{_safe_name(grade.student)}.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_csv(grades: list[Grade], path: Path) -> Path:
    """One row per student: each exercise's points, total, max, status and reason."""
    exercises: list[str] = []
    for grade in grades:
        exercises += [r.name for r in grade.results if r.name not in exercises]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", "file", "assignment", *exercises, "total", "max", "status",
                         "reason"])
        for grade in grades:
            points = {r.name: _points(r.points) for r in grade.results}
            writer.writerow([grade.student, grade.file, grade.assignment or "",
                             *[points.get(name, "") for name in exercises],
                             _points(grade.total), _points(grade.max_points) if grade.results else "",
                             grade.status, grade.reason])
    return path


def summary(grades: list[Grade], skipped: list[Submission] = ()) -> str:
    """A table per student, the mean points per exercise and the failures by reason."""
    exercises: list[tuple[str, float]] = []
    for grade in grades:
        exercises += [(r.name, r.max_points) for r in grade.results
                      if r.name not in [name for name, _ in exercises]]
    short = [name.split(":")[0] for name, _ in exercises]
    width = max([len("student"), *(len(g.student) for g in grades)]) + 2
    header = f"{'student':<{width}}" + "".join(f"{s:>13}" for s in short) + \
        f"{'total':>9}  status"
    rows = [header, "-" * len(header)]
    for grade in grades:
        points = {r.name: r.points for r in grade.results}
        cells = "".join(f"{_points(points[name]) if name in points else '-':>13}"
                        for name, _ in exercises)
        rows.append(f"{grade.student:<{width}}{cells}{_points(grade.total):>9}  {grade.status}"
                    + (f": {grade.reason}" if grade.reason else ""))
    means = []
    for name, max_points in exercises:
        earned = [r.points for g in grades for r in g.results if r.name == name]
        means.append(f"{sum(earned) / len(earned):.2f}/{_points(max_points)}" if earned else "-")
    rows.append("-" * len(header))
    rows.append(f"{'mean':<{width}}" + "".join(f"{m:>13}" for m in means))
    rows.append("")
    rows.append(f"{len(grades)} students; exercises: "
                + "; ".join(f"{s} = {name}" for s, (name, _) in zip(short, exercises, strict=True)))
    failures = Counter(g.status for g in grades if g.status != OK)
    ranked = sorted(failures.items(), key=lambda item: (-item[1], item[0]))
    rows.append("failures by reason: " + (", ".join(f"{status} {count}" for status, count in ranked)
                                          or "none"))
    for submission in skipped:
        rows.append(f"skipped {submission.path}: {submission.problem}")
    return "\n".join(rows)


def grade(submissions_dir: Path, out_dir: Path = Path("grades"), *, notebook: str | None = None,
          notebooks_dir: Path | None = None, time_limit: float = DEFAULT_TIME_LIMIT,
          check_timeout: int = DEFAULT_CHECK_TIMEOUT,
          memory_limit_gb: float | None = DEFAULT_MEMORY_LIMIT_GB, jobs: int = DEFAULT_JOBS,
          parameters: dict | None = None, log=print) -> list[Grade]:
    """Grade every submission in ``submissions_dir``; write CSV, feedback and executed copies.

    Args:
        submissions_dir: folder of ``.ipynb`` files (searched recursively).
        out_dir: where ``grades.csv``, ``feedback/`` and ``executed/`` go.
        notebook: grade only this assignment (a name prefix such as ``"04"``).
        notebooks_dir: the instructor notebooks (default ``notebooks/``).
        time_limit: wall-clock seconds per submission for the student's cells.
        check_timeout: seconds each instructor check may take after them.
        memory_limit_gb: address-space limit of each kernel, GB (None or 0: no limit).
        jobs: submissions executed at once (each in its own kernel).
        parameters: ``parameters``-cell overrides for every submission (FAST stays on).
        log: where progress lines go (``print``; pass ``lambda *_: None`` to silence).

    Returns:
        One :class:`Grade` per collected file, in file-name order.

    Raises:
        ValueError: if ``notebook`` matches no instructor notebook, or several.
    """
    from seqlab import runner

    assignments = load_assignments(notebooks_dir)
    only = None
    if notebook is not None:
        names = [name for name in assignments if name.startswith(notebook)]
        if len(names) != 1:
            raise ValueError(f"--notebook {notebook!r} matches {names or 'no notebook'}; "
                             f"expected one of {sorted(assignments)}.")
        only = names[0]
    memory_limit = None
    if memory_limit_gb and runner.memory_limit_supported():
        memory_limit = int(memory_limit_gb * 1024**3)
    elif memory_limit_gb:
        log("warning: this OS cannot limit a kernel's memory (no RLIMIT_AS); running without.")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for folder in ("feedback", "executed"):  # no stale files from an earlier grading run
        shutil.rmtree(out_dir / folder, ignore_errors=True)
    submissions, skipped = collect(submissions_dir, assignments, only, exclude=out_dir.resolve())
    for submission in skipped:
        log(f"skipped {submission.path.name}: {submission.problem}")
    log(f"grading {len(submissions)} submissions ({jobs} at a time, {time_limit:g} s each at most)")

    async def one(submission: Submission, slots: asyncio.Semaphore) -> Grade:
        assignment = assignments.get(submission.assignment)
        if submission.problem is not None:
            result = Grade(submission.student, submission.path.name, submission.assignment,
                           _not_run(assignment, submission.problem), submission.status,
                           submission.problem, notes=submission.notes)
        else:
            async with slots:
                result = await grade_submission(
                    submission, assignment, out_dir, time_limit=time_limit,
                    check_timeout=check_timeout, memory_limit=memory_limit,
                    parameters=parameters)
        result.feedback = write_feedback(result, out_dir)
        log(f"  {result.student}: {_points(result.total)}/{_points(result.max_points)} "
            f"{result.status}" + (f" ({result.reason})" if result.reason else "")
            + (f" in {result.seconds:.0f} s" if result.seconds else ""))
        return result

    async def everything() -> list[Grade]:
        slots = asyncio.Semaphore(max(1, jobs))
        return list(await asyncio.gather(*(one(s, slots) for s in submissions)))

    from nbclient.util import run_sync

    start = time.monotonic()
    grades = run_sync(everything)()
    write_csv(grades, out_dir / "grades.csv")
    log("")
    log(summary(grades, skipped))
    log(f"\nwrote {out_dir / 'grades.csv'}, {out_dir / 'feedback'}/ and {out_dir / 'executed'}/ "
        f"in {time.monotonic() - start:.0f} s")
    return grades

