"""Homework: student copies of the notebooks, and grading of what students hand in.

    python -m seqlab_instructor.homework build       # notebooks/*.ipynb -> assignments/*.ipynb
    python -m seqlab_instructor.homework check       # exit 1 if assignments/ is stale
    python -m seqlab_instructor.homework grade SUBMISSIONS_DIR [--notebook 04] [--sandbox auto] ...
    python -m seqlab_instructor.homework similarity SUBMISSIONS_DIR [--notebook 04]  # copied solutions
    python -m seqlab_instructor.homework gradescope 04 --out DIR  # Gradescope's autograder zip

Modules, lower ones first (none imports a later one; cell tags and ``metadata.seqlab`` are
read with :mod:`seqlab_instructor.cells`, one level below):

- :mod:`~seqlab_instructor.homework.giveaways` — a student copy must not show an answer early;
- :mod:`~seqlab_instructor.homework.student_copies` — build and check ``assignments/`` (nbgrader);
- :mod:`~seqlab_instructor.homework.collect` — instructor assignments, submitted files, matching;
- :mod:`~seqlab_instructor.homework.written` — the written-answer sheets the instructor scores;
- :mod:`~seqlab_instructor.homework.report` — grades, feedback files, summary;
- :mod:`~seqlab_instructor.homework.gradebook` — Canvas and Moodle import files, the roster;
- :mod:`~seqlab_instructor.homework.docker_sandbox` / :mod:`~seqlab_instructor.homework.sandbox` — a
  container (Docker, Podman) or bubblewrap around each submission, and the ``auto`` choice;
- :mod:`~seqlab_instructor.homework.verdicts` — values recorded in the kernel, verdicts in the grader;
- :mod:`~seqlab_instructor.homework.run` — one submission's process, kernel and sandbox;
- :mod:`~seqlab_instructor.homework.feedback_html` — each student's notebook with the verdicts, as HTML;
- :mod:`~seqlab_instructor.homework.grade` — the whole run; :mod:`~seqlab_instructor.homework.__main__`, the CLI;
- :mod:`~seqlab_instructor.homework.similarity` — unusually similar solutions (copydetect);
- :mod:`~seqlab_instructor.homework.gradescope` — the autograder zip and its ``run_autograder``.

Importing this package loads nothing heavy; import the module you need.
"""
