"""``python -m seqlab_instructor.homework build|check|grade|similarity``: student copies, grading and
the similarity report in one CLI."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from seqlab import config


def _grade_command(args) -> int:
    from seqlab_instructor.homework.grade import PROGRESS_DIR, GradingInterrupted, grade
    from seqlab_instructor.runner import parse_parameters

    try:
        grade(args.submissions, args.out, notebook=args.notebook, notebooks_dir=args.notebooks,
              time_limit=args.timeout, check_timeout=args.check_timeout,
              memory_limit_gb=args.memory_limit, jobs=args.jobs,
              parameters=parse_parameters(args.parameter), sandbox=args.sandbox,
              roster=args.roster, no_submission=0.0 if args.no_submission == "zero" else None)
    except (FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except GradingInterrupted as stop:
        print(stop, file=sys.stderr)
        return 130
    except KeyboardInterrupt:  # before or after the submissions ran: nothing half-done is kept
        print(f"interrupted; graded submissions are kept in {args.out / PROGRESS_DIR}: run the "
              f"same command again to continue", file=sys.stderr)
        return 130
    return 0


def _similarity_command(args) -> int:
    from seqlab_instructor.homework.similarity import similarity_report

    try:
        similarity_report(args.submissions, args.out, notebook=args.notebook,
                          threshold=args.threshold)
    except (FileNotFoundError, ValueError, ImportError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


def _copies_command(command: str) -> int:
    from seqlab_instructor.homework.student_copies import ASSIGNMENTS_DIR, build, stale_copies

    try:
        copies = build()
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if command == "check":
        stale = stale_copies(copies, ASSIGNMENTS_DIR)
        if stale:
            print("assignments/ is out of date with notebooks/: " + ", ".join(stale)
                  + "\nRun `python -m seqlab_instructor.homework build` and commit the result.",
                  file=sys.stderr)
            return 1
        print(f"assignments/ is in sync ({len(copies)} student copies).")
        return 0
    ASSIGNMENTS_DIR.mkdir(exist_ok=True)
    for stale in sorted(set(ASSIGNMENTS_DIR.glob("*.ipynb")) - set(copies)):
        stale.unlink()
    for path, text in copies.items():
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(config.REPO_ROOT)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    from seqlab_instructor.homework import grade, gradescope, sandbox, similarity, student_copies

    parser = argparse.ArgumentParser(prog="python -m seqlab_instructor.homework",
                                     description=student_copies.__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("build", help="write assignments/ from notebooks/")
    commands.add_parser("check", help="exit 1 if assignments/ is out of date")
    command = commands.add_parser(
        "grade", help="execute and score submitted notebooks", description=grade.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    command.add_argument("submissions", type=Path, metavar="SUBMISSIONS_DIR")
    command.add_argument("--notebook", help="grade only this assignment, e.g. 04")
    command.add_argument("--notebooks", type=Path, metavar="DIR",
                         help="the instructor notebooks (default: the course's notebooks/)")
    command.add_argument("--out", type=Path, default=Path("grades"),
                         help="output folder; a run stopped part-way continues there when "
                              "started again (default: grades/)")
    command.add_argument("--sandbox", choices=sandbox.CHOICES, default="auto",
                         help="isolate each submission: auto (bwrap where it works, else a "
                              "Docker/Podman container, else refuse to grade), bwrap, docker "
                              "(engine: SEQLAB_CONTAINER_ENGINE, default docker), none (no "
                              "sandbox, only when asked for) (default: %(default)s)")
    command.add_argument("--timeout", type=float, default=grade.DEFAULT_TIME_LIMIT,
                         help="seconds per submission (default: %(default)s, five times the "
                              "one-minute FAST budget)")
    command.add_argument("--check-timeout", type=int, default=grade.DEFAULT_CHECK_TIMEOUT,
                         help="seconds per exercise's recording after the notebook (default: "
                              "%(default)s)")
    command.add_argument("--memory-limit", type=float, default=grade.DEFAULT_MEMORY_LIMIT_GB,
                         metavar="GB", help="address space per kernel (default: %(default)s; "
                                            "0: no limit)")
    command.add_argument("--jobs", type=int, default=grade.DEFAULT_JOBS,
                         help="submissions run at once, each in its own kernel (default: "
                              "%(default)s)")
    command.add_argument("-p", "--parameter", nargs=2, action="append",
                         metavar=("NAME", "VALUE"),
                         help="override a parameters-cell variable in every submission")
    command.add_argument("--roster", type=Path, metavar="CSV",
                         help="class list for canvas.csv and moodle.csv: columns student, name, "
                              "email, sis_id, canvas_id, section, username, or a Canvas or Moodle "
                              "grade export (docs/gradebooks.md)")
    command.add_argument("--no-submission", choices=("empty", "zero"), default="empty",
                         help="what a roster student without a submission gets in those files "
                              "(default: %(default)s)")
    command = commands.add_parser(
        "similarity", help="pairs of submissions whose solutions are unusually alike",
        description=similarity.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    command.add_argument("submissions", type=Path, metavar="SUBMISSIONS_DIR")
    command.add_argument("--notebook", help="only this assignment, e.g. 04")
    command.add_argument("--out", type=Path, default=Path("grades"),
                         help="output folder; the report goes to its similarity/ (default: "
                              "grades/)")
    command.add_argument("--threshold", type=float, default=similarity.THRESHOLD,
                         help="report pairs at or above this similarity, 0-1 (default: "
                              "%(default)s, chosen on benchmarks.similarity)")
    gradescope.add_build_arguments(commands.add_parser(
        "gradescope", help="write a Gradescope autograder zip for one assignment",
        description=gradescope.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter))
    args = parser.parse_args(argv)
    if args.command == "grade":
        return _grade_command(args)
    if args.command == "gradescope":
        return gradescope.build_command(args)
    if args.command == "similarity":
        return _similarity_command(args)
    return _copies_command(args.command)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
