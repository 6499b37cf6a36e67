"""Training helpers: compiling, the masked loss and metric, optimizers, learning-rate schedules,
callbacks, resumable runs and the case study's stages. Import from here:
``from seqlab.training import compile_translator``; the results files are in
:mod:`seqlab.results`, the ``tf.distribute`` helpers in :mod:`seqlab.distribute`.
"""

from seqlab.training.callbacks import TimeBudget, standard_callbacks
from seqlab.training.compiling import compile_sentiment_classifier, compile_translator
from seqlab.training.losses import MaskedAccuracy, MaskedSparseCategoricalCrossentropy
from seqlab.training.optimizers import FusedAdam, LazyAdam
from seqlab.training.resume import ResumableBackup, TrainingRun, backup_root
from seqlab.training.schedules import TransformerSchedule, transformer_optimizer
from seqlab.training.stages import count_parameters, load_frozen_stage, stage_weights_path

__all__ = [
    # compiling, losses, optimizers, schedules
    "FusedAdam", "LazyAdam", "MaskedAccuracy", "MaskedSparseCategoricalCrossentropy",
    "TransformerSchedule", "compile_sentiment_classifier", "compile_translator",
    "transformer_optimizer",
    # callbacks
    "TimeBudget", "standard_callbacks",
    # training that survives a disconnect (seqlab.training.resume)
    "ResumableBackup", "TrainingRun", "backup_root",
    # the case study's two stages (seqlab.training.stages)
    "count_parameters", "load_frozen_stage", "stage_weights_path",
]
