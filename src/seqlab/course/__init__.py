"""What a notebook's kernel runs besides the library: the setup call and the exercises' checks.

The library (``seqlab.data``, ``layers``, ``models``, ``training``, ``decoding``, ...) is what the
notebooks teach and reuse; nothing in it imports this package. Here, lower modules first (none
imports a later one; ``tests/test_import_graph.py`` checks it):

- :mod:`~seqlab.course.tensorflow_startup` — TensorFlow's start-up lines held back;
- :mod:`~seqlab.course.gpu_choices` — the dtype policy and XLA for the devices, and why;
- :mod:`~seqlab.course.notebook` — what runs in a notebook's kernel: ``setup()``, the Colab check;
- :mod:`~seqlab.course.checks` — the exercises' checks, run in the notebooks.

The instructor's tools (student copies, grading, the runner, the book, the notebook files) are
the package ``seqlab_instructor``, which nothing here imports.

Importing this package loads nothing; import the module you need.
"""
