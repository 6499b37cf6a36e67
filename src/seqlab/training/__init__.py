"""Training helpers: the masked loss and metric, compiling a translator, learning-rate schedules, callbacks.

A package rather than one file so each topic has its own module; everything is re-exported
here, so ``seqlab.training.<name>`` is the stable import.
"""

from seqlab.training.callbacks import EpochTimer as EpochTimer
from seqlab.training.callbacks import standard_callbacks as standard_callbacks
from seqlab.training.compiling import compile_translator as compile_translator
from seqlab.training.losses import MaskedAccuracy as MaskedAccuracy
from seqlab.training.losses import (
    MaskedSparseCategoricalCrossentropy as MaskedSparseCategoricalCrossentropy,
)
from seqlab.training.schedules import TransformerSchedule as TransformerSchedule
from seqlab.training.schedules import transformer_optimizer as transformer_optimizer
