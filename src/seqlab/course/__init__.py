"""The course tools: what runs, builds and grades the course, on top of the library.

The library (``seqlab.data``, ``layers``, ``models``, ``training``, ``decoding``, ...) is what the
notebooks teach and reuse; nothing in it imports this package. Here, lower modules first (none
imports a later one; ``tests/test_import_graph.py`` checks it):

- :mod:`~seqlab.course.cells` — every cell-tag and cell-metadata name, and their readers;
- :mod:`~seqlab.course.tensorflow_startup` — TensorFlow's start-up lines held back;
- :mod:`~seqlab.course.gpu_choices` — the dtype policy and XLA for the devices, and why;
- :mod:`~seqlab.course.notebook_files` — the generated setup cell and Colab badges
  (``python -m seqlab.course.notebook sync|check``);
- :mod:`~seqlab.course.notebook` — what runs in a notebook's kernel: ``setup()``, the Colab check;
- :mod:`~seqlab.course.checks` — the exercises' checks, run in the notebooks;
- :mod:`~seqlab.course.runner` — the notebooks executed headless (``python -m seqlab.course.runner``);
- :mod:`~seqlab.course.homework` — student copies and grading (``python -m seqlab.course.homework``);
- :mod:`~seqlab.course.site` — the course book (``python -m seqlab.course.site``).

Importing this package loads nothing; import the module you need.
"""
