"""Training helpers: compiling, the masked loss and metric, optimizers, learning-rate schedules,
callbacks, resumable runs, and the results and ``tf.distribute`` helpers a training cell needs.
Import from here: ``from seqlab.training import compile_translator``.
"""

from seqlab.distribute import (
    batch_and_rate,
    choose_strategy,
    global_batch_size,
    scale_learning_rate,
    scale_warmup_steps,
)
from seqlab.results import read_imdb_results, write_imdb_result
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
    # one or several devices (seqlab.distribute)
    "batch_and_rate", "choose_strategy", "global_batch_size", "scale_learning_rate",
    "scale_warmup_steps",
    # the sentiment results file (seqlab.results)
    "read_imdb_results", "write_imdb_result",
    # the case study's two stages (seqlab.training.stages)
    "count_parameters", "load_frozen_stage", "stage_weights_path",
]
