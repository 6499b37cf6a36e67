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

**Resuming.** Each graded submission is kept in the output folder's ``.grading/`` as soon as
its feedback is written, under a key of the submission file's bytes, the instructor notebook's
bytes and the grading options. A run stopped at any point (Ctrl-C, a lost session, a crash) and
started again with the same command grades only what has no kept result with the same key:
a changed submission or instructor notebook is graded again, the rest keep their verdicts, and
the totals and files come out as an uninterrupted run's. Ctrl-C (or SIGTERM, SIGHUP) stops the
running kernels and raises :class:`GradingInterrupted`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import json
import os
import signal
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
#: Folder of the output folder that keeps each graded submission for a resumed run.
PROGRESS_DIR = ".grading"


class GradingInterrupted(Exception):
    """A grading run stopped by Ctrl-C or a signal; ``done`` of ``total`` are kept."""

    def __init__(self, done: int, total: int, out_dir: Path):
        self.done, self.total, self.out_dir = done, total, out_dir
        super().__init__(f"interrupted: {done} of {total} submissions graded and kept in "
                         f"{out_dir / PROGRESS_DIR}; run the same command again to grade the "
                         f"other {total - done}")


def _kept_name(submission: Submission, submissions_dir: Path) -> str:
    relative = submission.path.resolve().relative_to(Path(submissions_dir).resolve())
    return hashlib.sha256(str(relative).encode()).hexdigest()[:20] + ".json"


def _kept_key(submission: Submission, assignment: Assignment, options: dict) -> str:
    digest = hashlib.sha256(submission.path.read_bytes())
    digest.update(assignment.path.read_bytes())
    digest.update(json.dumps(options, sort_keys=True, default=str).encode())
    return digest.hexdigest()


def _keep(grade: Grade, key: str, path: Path) -> None:
    """Write ``grade`` under ``key`` to ``path`` (atomically: a killed run leaves no half)."""
    fields = dataclasses.asdict(grade)
    fields["executed"] = grade.executed.name if grade.executed else None
    for name in ("feedback", "written", "written_points", "written_max"):
        fields.pop(name)  # recomputed from the submission and the written sheet each run
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps({"key": key, "grade": fields}), encoding="utf-8")
    os.replace(partial, path)


def _kept(path: Path, key: str, out_dir: Path) -> Grade | None:
    """The grade kept at ``path`` if its key is ``key`` and its executed copy is still there."""
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
        if kept["key"] != key:
            return None
        fields = kept["grade"]
        fields["results"] = [ExerciseResult(**result) for result in fields["results"]]
        if fields["executed"] is not None:
            fields["executed"] = out_dir / "executed" / fields["executed"]
            if not fields["executed"].is_file():
                return None
        return Grade(**fields)
    except (OSError, ValueError, KeyError, TypeError):
        return None  # missing, from another version or damaged: graded again


def _remove_stale(out_dir: Path, grades: list[Grade], kept: set[str]) -> None:
    """Delete feedback, executed copies and kept grades of submissions no longer graded."""
    names = {safe_name(g.student) for g in grades}
    for folder, suffixes in (("feedback", (".md", ".html")), ("executed", (".ipynb",))):
        for path in (out_dir / folder).glob("*"):
            if path.suffix in suffixes and path.stem not in names:
                path.unlink()
    for path in (out_dir / PROGRESS_DIR).glob("*"):
        if path.name not in kept:
            path.unlink()


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
    submissions, skipped = collect(submissions_dir, assignments, only, exclude=out_dir.resolve())
    for submission in skipped:
        log(f"skipped {submission.path.name}: {submission.problem}")
    options = {"time_limit": time_limit, "check_timeout": check_timeout,
               "memory_limit": memory_limit, "parameters": parameters, "sandbox": sandbox}
    progress = out_dir / PROGRESS_DIR
    kept_names = {s.path: _kept_name(s, submissions_dir) for s in submissions}
    log(f"grading {len(submissions)} submissions ({jobs} at a time, {time_limit:g} s each at "
        f"most, sandbox: {sandbox})")
    # Folders a submission must not see: instructor notebooks, other submissions, the output.
    hide = [Path(notebooks_dir or config.REPO_ROOT / "notebooks"), Path(submissions_dir), out_dir,
            *(a.path.parent for a in assignments.values())]

    done = set()

    async def one(submission: Submission, slots: asyncio.Semaphore) -> Grade:
        assignment = assignments.get(submission.assignment)
        key, result, how = None, None, ""
        if submission.problem is not None:
            result = Grade(submission.student, submission.path.name, submission.assignment,
                           _not_run(assignment, submission.problem), submission.status,
                           submission.problem, notes=submission.notes)
        else:
            key = _kept_key(submission, assignment, options)
            result = _kept(progress / kept_names[submission.path], key, out_dir)
            how = " (kept from an earlier run)" if result else ""
        if result is None:
            async with slots:
                result = await grade_submission(
                    submission, assignment, out_dir, time_limit=time_limit,
                    check_timeout=check_timeout, memory_limit=memory_limit,
                    parameters=parameters, sandbox=sandbox, hide=hide)
        if assignment is not None:
            result.written = written_answers(submission.notebook, assignment)
        result.feedback = write_feedback(result, out_dir)
        write_feedback_html(result, out_dir)
        if key is not None and not how:
            _keep(result, key, progress / kept_names[submission.path])
        done.add(submission.path)
        log(f"  {result.student}: {points_text(result.total)}/{points_text(result.max_points)} "
            f"{result.status}" + (f" ({result.reason})" if result.reason else "")
            + (f" in {result.seconds:.0f} s" if result.seconds and not how else "") + how)
        return result

    async def everything() -> list[Grade]:
        loop, task = asyncio.get_running_loop(), asyncio.current_task()
        for name in ("SIGTERM", "SIGHUP"):  # a lost session or `kill`: stop as Ctrl-C does
            with contextlib.suppress(AttributeError, NotImplementedError, RuntimeError):
                loop.add_signal_handler(getattr(signal, name), task.cancel)
        slots = asyncio.Semaphore(max(1, jobs))
        # every task ends (its kernel stopped) before a stop propagates: return_exceptions
        results = await asyncio.gather(*(one(s, slots) for s in submissions),
                                       return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return results

    start = time.monotonic()
    try:  # on Ctrl-C asyncio.run cancels every task, so each run's process group is killed
        grades = asyncio.run(everything())
    except (KeyboardInterrupt, asyncio.CancelledError):
        raise GradingInterrupted(len(done), len(submissions), out_dir) from None
    _remove_stale(out_dir, grades, set(kept_names.values()))
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

