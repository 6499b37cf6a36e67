"""seqlab: sequence models on Keras 3 — the tested code behind the course notebooks.

Data flows one way (docs/architecture.md):
``data -> layers -> lessons/models -> training -> decoding/sampling/evaluation -> plotting``, with
``config`` and ``results`` below them all and ``course`` (the setup call, the exercises' checks) on
top. The models the notebooks teach (the classifiers, notebook 04's and 05's translators, the
language models) are in ``lessons``, generated from the notebooks' ``#@save`` cells; ``models``
holds the tools around them (word vectors, perplexity, keras-hub's BERT presets). Lower modules
never import higher ones, not even inside a function, and nothing here imports the instructor's
tools, ``seqlab_instructor`` (``tests/test_import_graph.py`` checks both).
"""

__version__ = "0.1.0"
