"""Training helpers: compiling, the masked loss and metric, optimizers, learning-rate schedules,
callbacks, resumable runs and the case study's stages (``from seqlab.training import ...``)."""

from seqlab.training.callbacks import TimeBudget, standard_callbacks
from seqlab.training.compiling import compile_sentiment_classifier, compile_translator
from seqlab.training.losses import MaskedAccuracy, MaskedSparseCategoricalCrossentropy
from seqlab.training.optimizers import FusedAdam, LazyAdam
from seqlab.training.resume import ResumableBackup, TrainingRun, backup_root
from seqlab.training.schedules import TransformerSchedule, transformer_optimizer
from seqlab.training.stages import count_parameters, load_frozen_stage, stage_weights_path

__all__ = [
    "FusedAdam", "LazyAdam", "MaskedAccuracy", "MaskedSparseCategoricalCrossentropy",
    "ResumableBackup", "TimeBudget", "TrainingRun", "TransformerSchedule", "backup_root",
    "compile_sentiment_classifier", "compile_translator", "count_parameters",
    "load_frozen_stage", "stage_weights_path", "standard_callbacks", "transformer_optimizer",
]
