"""Automatic feedback for the notebooks' exercises: each ``check_*`` runs a student's answer
against a reference and prints a verdict, or raises :class:`CheckFailed` saying what differs."""

from seqlab.course.checks.attention import check_general_score_scale, check_loss_mask_experiment
from seqlab.course.checks.bert import check_frozen_probe, check_masked_lm_loss, check_masking_rule
from seqlab.course.checks.core import CheckFailed, assert_close, passed, run_student_code
from seqlab.course.checks.embeddings import check_cbow_probabilities, check_subsampling_share
from seqlab.course.checks.imdb import (
    check_accuracy_function,
    check_learning_rate_comparison,
    check_shuffled_words,
)
from seqlab.course.checks.language_models import check_loss_by_position, check_perplexity
from seqlab.course.checks.recurrent import (
    check_coupled_lstm_cell,
    check_gradient_ratios,
    check_gru_without_reset_gate,
    check_reset_gate_comparison,
)
from seqlab.course.checks.transformer import (
    check_causal_mask_experiment,
    check_one_head,
    check_softmax_gradients,
)

__all__ = ["CheckFailed", "assert_close", "passed", "run_student_code",
           "check_accuracy_function", "check_learning_rate_comparison", "check_shuffled_words",
           "check_coupled_lstm_cell", "check_gradient_ratios", "check_gru_without_reset_gate",
           "check_reset_gate_comparison", "check_loss_mask_experiment",
           "check_general_score_scale", "check_causal_mask_experiment", "check_one_head",
           "check_softmax_gradients", "check_cbow_probabilities", "check_subsampling_share",
           "check_loss_by_position", "check_perplexity", "check_frozen_probe",
           "check_masked_lm_loss", "check_masking_rule"]
