"""Homework: student copies of the notebooks, and grading of what students hand in.

    python -m seqlab.course.homework build       # notebooks/*.ipynb -> assignments/*.ipynb
    python -m seqlab.course.homework check       # exit 1 if assignments/ is stale
    python -m seqlab.course.homework grade SUBMISSIONS_DIR [--notebook 04] [--sandbox auto] ...
    python -m seqlab.course.homework similarity SUBMISSIONS_DIR [--notebook 04]  # copied solutions
    python -m seqlab.course.homework gradescope 04 --out DIR  # Gradescope's autograder zip

Modules, lower ones first (none imports a later one; cell tags and ``metadata.seqlab`` are
read with :mod:`seqlab.course.cells`, one level below):

- :mod:`~seqlab.course.homework.giveaways` — a student copy must not show an answer early;
- :mod:`~seqlab.course.homework.student_copies` — build and check ``assignments/`` (nbgrader);
- :mod:`~seqlab.course.homework.collect` — instructor assignments, submitted files, matching;
- :mod:`~seqlab.course.homework.written` — the written-answer sheets the instructor scores;
- :mod:`~seqlab.course.homework.report` — grades, feedback files, summary;
- :mod:`~seqlab.course.homework.gradebook` — Canvas and Moodle import files, the roster;
- :mod:`~seqlab.course.homework.docker_sandbox` / :mod:`~seqlab.course.homework.sandbox` — a
  container (Docker, Podman) or bubblewrap around each submission, and the ``auto`` choice;
- :mod:`~seqlab.course.homework.verdicts` — values recorded in the kernel, verdicts in the grader;
- :mod:`~seqlab.course.homework.run` — one submission's process, kernel and sandbox;
- :mod:`~seqlab.course.homework.feedback_html` — each student's notebook with the verdicts, as HTML;
- :mod:`~seqlab.course.homework.grade` — the whole run; :mod:`~seqlab.course.homework.__main__`, the CLI;
- :mod:`~seqlab.course.homework.similarity` — unusually similar solutions (copydetect);
- :mod:`~seqlab.course.homework.gradescope` — the autograder zip and its ``run_autograder``.

Importing this package loads nothing heavy; import the module you need.
"""
