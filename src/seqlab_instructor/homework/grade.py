"""Grade a folder of submitted student notebooks with the instructor's checks.

    python -m seqlab_instructor.homework grade SUBMISSIONS_DIR [--notebook 04] [--out grades/]
                                    [--sandbox auto|bwrap|docker|none] [--timeout S]
                                    [--memory-limit GB] [--jobs N] [-p NAME VALUE]

1. **Collect** (:mod:`seqlab_instructor.homework.collect`): every ``*.ipynb`` under the folder, matched
   to its assignment by the metadata every student copy carries; files that match nothing
   are reported.
2. **Run** (:mod:`seqlab_instructor.homework.run`) each submission in FAST mode in a process of its own,
   inside a bubblewrap sandbox or a container (never without one unless told ``--sandbox none``)
   (:mod:`seqlab_instructor.homework.sandbox`): a temporary working folder, a fresh kernel, a wall-clock
   limit for the notebook and an address-space limit for the kernel. Errors do not stop
   execution (each is reported), so a cell that raises costs only what depends on it. After
   the student's cells, one epilogue cell per exercise records the student's values on the
   checks' inputs (never the hidden tests' source).
3. **Check** (:mod:`seqlab_instructor.homework.verdicts`) in the grader's own process: the instructor's
   whole check cell, hidden tests included, runs on the recorded values with the real
   :mod:`seqlab.course.checks`. An exercise earns its points (``metadata.seqlab.points`` of the
   instructor's exercise cell, default 1) when its check passes; the feedback quotes the
   check's message, the words the student saw. Editing or deleting check cells, replacing
   ``seqlab.course.checks`` in the kernel or printing "passed" change nothing.
4. **Report** (:mod:`seqlab_instructor.homework.report`): ``grades.csv``, ``feedback/<student>.md``,
   ``feedback/<student>.html`` (the executed notebook with each verdict under its exercise,
   :mod:`seqlab_instructor.homework.feedback_html`) and ``executed/<student>.ipynb`` under the
   output folder, and a summary. Answers to the
   questions answered in words are not scored automatically: they are collected per
   assignment into ``written/<assignment>.md`` and ``.csv``, beside each question's model
   answer and rubric, for the instructor, who enters points in the CSV; the next run into the
   same folder reads them back into the totals (:mod:`seqlab_instructor.homework.written`).
   ``canvas.csv`` and ``moodle.csv`` export the class for the LMS, matched to ``--roster`` if
   given (:mod:`seqlab_instructor.homework.gradebook`, ``docs/gradebooks.md``).
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from pathlib import Path

from seqlab import config
from seqlab_instructor.cells import ALLOWED_ERROR_TAG, has_tag
from seqlab_instructor.homework.collect import (
    Assignment,
    Submission,
    collect,
    load_assignments,
    safe_name,
    structure_notes,
    written_answers,
)
from seqlab_instructor.homework.feedback_html import write_feedback_html
from seqlab_instructor.homework.gradebook import read_roster, summary_lines, write_gradebooks
from seqlab_instructor.homework.report import (
    ERROR,
    KERNEL_DIED,
    OK,
    TIMEOUT,
    ExerciseResult,
    Grade,
    points_text,
    summary,
    write_csv,
    write_feedback,
)
from seqlab_instructor.homework.student_copies import make_student_copy
from seqlab_instructor.homework.verdicts import MAX_VALUES_BYTES, judge, parse_values, record_cell
from seqlab_instructor.homework.written import update_written_sheets

#: The FAST-mode promise (README): every notebook runs in about a minute on 2 CPU cores.
FAST_BUDGET_SECONDS = 60
#: Default wall-clock limit per submission: five FAST budgets (kernel start, a loaded machine).
DEFAULT_TIME_LIMIT = 5 * FAST_BUDGET_SECONDS
#: Default seconds each exercise's recording may run after the student's cells.
DEFAULT_CHECK_TIMEOUT = 120
#: Default submissions run at once. A FAST run keeps a core busy less than half its wall time
#: (kernel start, imports, small batches): on 2 cores two at once graded 4 submissions of
#: notebook 01 in 79 s against 151 s one at a time (a shared, loaded machine).
DEFAULT_JOBS = 2
#: Default address-space limit of a submission's kernel; TensorFlow alone maps about 3 GB.
DEFAULT_MEMORY_LIMIT_GB = 8.0


def _not_run(assignment: Assignment | None, message: str) -> list[ExerciseResult]:
    if assignment is None:
        return []
    return [ExerciseResult(e.name, 0.0, e.points, False, f"\u2717 {e.name} not graded: {message}")
            for e in assignment.exercises]


def _status_of(run, own_cells: int) -> tuple[str, str]:
    """``(status, reason)`` from a run: time limit, dead kernel, or cells that raised."""
    if run.stopped:
        return (KERNEL_DIED if "kernel died" in run.stopped else TIMEOUT), run.stopped
    if run.executed is None:
        return (TIMEOUT if run.problem and "stopped after" in run.problem else ERROR), \
            run.problem or "no executed notebook came back"
    unexpected = [(index, error) for index, error in run.errors
                  if 0 <= index < min(own_cells, len(run.executed.cells))
                  and not has_tag(run.executed.cells[index], ALLOWED_ERROR_TAG)]
    if unexpected:
        index, error = unexpected[0]
        more = f" (and {len(unexpected) - 1} more)" if len(unexpected) > 1 else ""
        return ERROR, f"cell {index} raised {error}{more}"
    return OK, ""


async def grade_submission(submission: Submission, assignment: Assignment, out_dir: Path, *,
                           sandbox: str = "none", hide=(),
                           time_limit: float = DEFAULT_TIME_LIMIT,
                           check_timeout: int = DEFAULT_CHECK_TIMEOUT,
                           memory_limit: int | None = None,
                           parameters: dict | None = None) -> Grade:
    """Run one matched, valid submission and grade it with the instructor's checks."""
    import nbformat

    from seqlab_instructor.homework.run import read_untrusted, run_submission

    safe = safe_name(submission.student)
    grade = Grade(submission.student, submission.path.name, assignment.name, [], OK,
                  notes=list(submission.notes))
    template = make_student_copy(
        nbformat.read(assignment.path, as_version=4), f"notebooks/{assignment.path.name}",
        f"assignments/{assignment.path.name}")
    grade.notes += structure_notes(submission.notebook, template)
    values_dir = "seqlab-values"
    with tempfile.TemporaryDirectory(prefix=f"seqlab-grade-{safe}-",
                                     ignore_cleanup_errors=True) as work:
        work = Path(work)
        epilogue = [record_cell(exercise.name, exercise.check, str(work / values_dir / f"{i}.json"))
                    for i, exercise in enumerate(assignment.exercises)]
        try:
            run = await run_submission(
                submission.notebook, work, sandbox=sandbox, hide=hide, parameters=parameters,
                time_limit=time_limit, check_timeout=check_timeout, memory_limit=memory_limit,
                epilogue=epilogue)
        except Exception as error:  # noqa: BLE001 - one broken submission never stops the rest
            grade.status, grade.reason = ERROR, f"could not be run: {type(error).__name__}: {error}"
            grade.results = _not_run(assignment, grade.reason)
            return grade
        values = []
        for index in range(len(assignment.exercises)):
            try:
                values.append(parse_values(read_untrusted(
                    work / values_dir / f"{index}.json", MAX_VALUES_BYTES, work)))
            except ValueError as error:
                values.append(str(error))
    grade.seconds = run.seconds
    own_cells = (len(run.executed.cells) - len(epilogue)) if run.executed is not None else 0
    grade.status, grade.reason = _status_of(run, own_cells)
    for exercise, recorded in zip(assignment.exercises, values, strict=True):
        if isinstance(recorded, str):
            verdict = judge(exercise.name, exercise.check, None,
                            f"{grade.reason or recorded}")
        else:
            verdict = judge(exercise.name, exercise.check, recorded)
        grade.results.append(ExerciseResult(
            exercise.name, exercise.points if verdict["passed"] else 0.0, exercise.points,
            bool(verdict["passed"]), verdict["message"]))
    if run.executed is not None:
        # The student gets their notebook as it ran, without the grader's cells.
        run.executed.cells = run.executed.cells[:own_cells]
        executed_dir = Path(out_dir) / "executed"
        executed_dir.mkdir(parents=True, exist_ok=True)
        grade.executed = executed_dir / f"{safe}.ipynb"
        nbformat.write(run.executed, grade.executed)
    return grade


def grade(submissions_dir: Path, out_dir: Path = Path("grades"), *, notebook: str | None = None,
          notebooks_dir: Path | None = None, time_limit: float = DEFAULT_TIME_LIMIT,
          check_timeout: int = DEFAULT_CHECK_TIMEOUT,
          memory_limit_gb: float | None = DEFAULT_MEMORY_LIMIT_GB, jobs: int = DEFAULT_JOBS,
          parameters: dict | None = None, sandbox: str = "auto", roster: Path | None = None,
          no_submission: float | None = None, log=print) -> list[Grade]:
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
        sandbox: "auto" (bwrap, else a container, else a refusal), "bwrap", "docker",
            "none" (:mod:`seqlab_instructor.homework.sandbox`).
        roster: the class list matching submissions to the rows of ``canvas.csv`` and
            ``moodle.csv`` (:func:`seqlab_instructor.homework.gradebook.read_roster`).
        no_submission: what a roster student without a submission gets there (None: empty).
        log: where progress lines go (``print``; pass ``lambda *_: None`` to silence).

    Returns:
        One :class:`Grade` per collected file, in file-name order.

    Raises:
        ValueError: if ``notebook`` matches no instructor notebook, or several; for a
            sandbox that cannot be used.
    """
    from seqlab_instructor import runner
    from seqlab_instructor.homework import sandbox as sandboxes

    sandbox = sandboxes.resolve(sandbox, log=log)
    if roster is not None:
        read_roster(roster)  # a missing or unreadable roster stops here, before any grading

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
    # No stale files from an earlier grading run; written/ is kept: it holds the instructor's
    # points, read back below.
    for folder in ("feedback", "executed"):
        shutil.rmtree(out_dir / folder, ignore_errors=True)
    submissions, skipped = collect(submissions_dir, assignments, only, exclude=out_dir.resolve())
    for submission in skipped:
        log(f"skipped {submission.path.name}: {submission.problem}")
    log(f"grading {len(submissions)} submissions ({jobs} at a time, {time_limit:g} s each at "
        f"most, sandbox: {sandbox})")
    # Folders a submission must not see: instructor notebooks, other submissions, the output.
    hide = [Path(notebooks_dir or config.REPO_ROOT / "notebooks"), Path(submissions_dir), out_dir,
            *(a.path.parent for a in assignments.values())]

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
                    parameters=parameters, sandbox=sandbox, hide=hide)
        if assignment is not None:
            result.written = written_answers(submission.notebook, assignment)
        result.feedback = write_feedback(result, out_dir)
        write_feedback_html(result, out_dir)
        log(f"  {result.student}: {points_text(result.total)}/{points_text(result.max_points)} "
            f"{result.status}" + (f" ({result.reason})" if result.reason else "")
            + (f" in {result.seconds:.0f} s" if result.seconds else ""))
        return result

    async def everything() -> list[Grade]:
        slots = asyncio.Semaphore(max(1, jobs))
        return list(await asyncio.gather(*(one(s, slots) for s in submissions)))

    from nbclient.util import run_sync

    start = time.monotonic()
    grades = run_sync(everything)()
    sheets = update_written_sheets(grades, assignments, out_dir)  # first: its points count
    write_csv(grades, out_dir / "grades.csv")
    exports, book = write_gradebooks(grades, out_dir, roster, no_submission)
    log("")
    log(summary(grades, skipped))
    for line in summary_lines(book) + [f"written sheet: {p}" for p in sheets.problems]:
        log(line)
    log(f"\nwrote {out_dir / 'grades.csv'}, {out_dir / 'feedback'}/ and {out_dir / 'executed'}/ "
        f"in {time.monotonic() - start:.0f} s")
    log("for Canvas and Moodle: " + ", ".join(path.name for path in exports)
        + " (docs/gradebooks.md)")
    if sheets.paths:
        log(f"written answers to grade by hand (model answers and rubrics beside them): "
            f"{out_dir / 'written'}/: {sheets.ungraded} without points yet; enter them in the "
            "CSV and grade again into this folder")
    return grades

