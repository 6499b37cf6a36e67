"""Training helpers: masked losses and metrics, learning-rate schedules, callbacks.

A package rather than one file so each topic has its own module; everything is re-exported
here, so ``seqlab.training.<name>`` is the stable import.
"""
