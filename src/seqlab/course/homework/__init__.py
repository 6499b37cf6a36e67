"""Homework: student copies of the notebooks, and grading of what students hand in.

    python -m seqlab.course.homework build       # notebooks/*.ipynb -> assignments/*.ipynb
    python -m seqlab.course.homework check       # exit 1 if assignments/ is stale
    python -m seqlab.course.homework grade SUBMISSIONS_DIR [--notebook 04] [--sandbox auto] ...

Modules, lower ones first (none imports a later one; cell tags and ``metadata.seqlab`` are
read with :mod:`seqlab.course.cells`, one level below):

- :mod:`~seqlab.course.homework.giveaways` — a student copy must not show an answer early;
- :mod:`~seqlab.course.homework.student_copies` — build and check ``assignments/`` (nbgrader);
- :mod:`~seqlab.course.homework.collect` — instructor assignments, submitted files, matching;
- :mod:`~seqlab.course.homework.report` — grades, feedback files, summary;
- :mod:`~seqlab.course.homework.sandbox` — bubblewrap around each submission;
- :mod:`~seqlab.course.homework.verdicts` — values recorded in the kernel, verdicts in the grader;
- :mod:`~seqlab.course.homework.run` — one submission's process, kernel and sandbox;
- :mod:`~seqlab.course.homework.grade` — the whole run; :mod:`~seqlab.course.homework.__main__`, the CLI.

Importing this package loads nothing heavy; import the module you need.
"""
