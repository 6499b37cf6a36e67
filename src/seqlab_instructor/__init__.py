"""seqlab_instructor: the instructor's tools beside the student-facing ``seqlab`` package.

What builds, runs and grades the course, none of which a student's notebook imports. Lower
modules first (none imports a later one; ``tests/test_import_graph.py`` checks it, and that
``seqlab`` never imports this package):

- :mod:`~seqlab_instructor.imdb_sample` — writes ``data/imdb_sample/`` (``python -m
  seqlab_instructor.imdb_sample``);
- :mod:`~seqlab_instructor.cells` — every cell-tag and cell-metadata name, and their readers;
- :mod:`~seqlab_instructor.notebook_files` — the generated setup cell and Colab badges
  (``python -m seqlab_instructor.notebook_files sync|check``);
- :mod:`~seqlab_instructor.lessons` — the lesson modules generated from the notebooks' ``#@save``
  cells (``python -m seqlab_instructor.lessons``);
- :mod:`~seqlab_instructor.runner` — the notebooks executed headless
  (``python -m seqlab_instructor.runner``);
- :mod:`~seqlab_instructor.homework` — student copies and grading
  (``python -m seqlab_instructor.homework``);
- :mod:`~seqlab_instructor.site` — the course book (``python -m seqlab_instructor.site``).

Importing this package loads nothing; import the module you need.
"""
