"""seqlab: sequence models on Keras 3 — the tested code behind the course notebooks.

Data flows one way (see ../../README.md and DESIGN):
``data -> layers -> models -> training -> decoding/evaluation -> plotting``.
Lower modules never import higher ones, and nothing here imports a notebook.
"""

__version__ = "0.1.0"
