"""seqlab_instructor: the instructor's tools beside the student-facing ``seqlab`` package.

What builds, runs and grades the course, none of which a student's notebook imports:
:mod:`~seqlab_instructor.lessons` (the lesson modules generated from the notebooks' ``#@save``
cells). ``seqlab`` never imports this package (``tests/test_import_graph.py`` checks it).
"""
