"""seqlab: sequence models on Keras 3 — the tested code behind the course notebooks.

Data flows one way (docs/architecture.md):
``data -> layers -> models -> training -> decoding/sampling/evaluation -> plotting``, with
``config`` and ``results`` below them all and the tools (``notebook``, ``notebook_files``, ``checks``,
``runner``, ``homework``, ``site``) on top. Lower modules never import higher ones, not even inside a
function (``tests/test_import_graph.py`` checks it), and nothing here imports a notebook.
"""

__version__ = "0.1.0"
