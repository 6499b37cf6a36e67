"""The models the notebooks teach, generated from their ``#@save`` cells (``nb04``: notebook 04).

Each ``nbNN`` module is written by ``python -m seqlab_instructor.lessons`` from the notebook's
cells and never edited by hand (a test fails when one differs from its notebook).
"""
