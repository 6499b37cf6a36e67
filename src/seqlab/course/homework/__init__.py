"""Homework: student copies of the notebooks, and grading of what students hand in.

    python -m seqlab.homework build       # notebooks/*.ipynb -> assignments/*.ipynb
    python -m seqlab.homework check       # exit 1 if assignments/ is stale
    python -m seqlab.homework grade SUBMISSIONS_DIR [--notebook 04] [--sandbox auto] ...

Modules, lower ones first (none imports a later one):

- :mod:`~seqlab.homework.tags` — the one reader of cell tags and ``metadata.seqlab``;
- :mod:`~seqlab.homework.student_copies` — build and check ``assignments/`` (nbgrader);
- :mod:`~seqlab.homework.collect` — instructor assignments, submitted files, matching;
- :mod:`~seqlab.homework.report` — grades, feedback files, summary;
- :mod:`~seqlab.homework.sandbox` — bubblewrap around each submission;
- :mod:`~seqlab.homework.verdicts` — values recorded in the kernel, verdicts in the grader;
- :mod:`~seqlab.homework.run` — one submission's process, kernel and sandbox;
- :mod:`~seqlab.homework.grade` — the whole run; :mod:`~seqlab.homework.__main__`, the CLI.

Importing this package loads nothing heavy; import the module you need.
"""
