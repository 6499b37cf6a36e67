"""The plots read as a student needs: whole epochs, readable labels, visible tokens."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from seqlab import plotting  # noqa: E402


def _tick_labels(axis):
    return [t.get_text() for t in axis.get_ticklabels()]


def test_learning_curves_count_whole_epochs_and_name_metrics_in_words():
    history = {"loss": [2.0, 1.5, 1.2], "masked_accuracy": [0.2, 0.4, 0.5],
               "val_loss": [2.1, 1.7, 1.4], "val_masked_accuracy": [0.1, 0.3, 0.4]}
    fig = plotting.plot_learning_curves(history, metrics=("loss", "masked_accuracy"))
    fig.canvas.draw()
    loss_ax, accuracy_ax = fig.axes[0], fig.axes[1]
    assert accuracy_ax.get_ylabel() == "masked accuracy"
    ticks = [t for t in loss_ax.get_xticks() if 1 <= t <= 3]
    assert ticks and all(float(t).is_integer() for t in ticks), ticks
    assert [line.get_label() for line in loss_ax.lines] == ["training", "validation"]


def test_self_attention_is_labelled_as_queries_and_keys_and_shows_newlines():
    tokens = list("to be\nor")
    fig = plotting.plot_attention(np.full((len(tokens), len(tokens)), 0.1), tokens, tokens)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "attended token (key)"
    assert ax.get_ylabel() == "attending token (query)"
    labels = _tick_labels(ax.xaxis)
    assert "\u21b5" in labels and "\u2423" in labels and "\n" not in labels


def test_translation_attention_keeps_source_and_output_axes():
    fig = plotting.plot_attention(np.eye(2), ["hola", "[END]"], ["hello", "[END]"])
    assert fig.axes[0].get_xlabel() == "source token"
    assert fig.axes[0].get_ylabel() == "output token"


def test_long_sequences_label_few_enough_ticks_not_to_overlap():
    tokens = [chr(97 + i % 26) for i in range(100)]
    fig = plotting.plot_attention(np.random.default_rng(0).random((100, 100)), tokens, tokens)
    assert len(_tick_labels(fig.axes[0].xaxis)) <= 24
    assert len(_tick_labels(fig.axes[0].yaxis)) <= 24


def test_a_log_axis_within_one_decade_still_has_several_labels():
    fig = plotting.plot_gradient_norms({"GRU": np.linspace(2.0, 8.0, 10)})
    fig.canvas.draw()
    ax = fig.axes[0]
    low, high = ax.get_ylim()
    visible = [t for t in ax.get_yticks() if low <= t <= high]
    assert len(visible) >= 2, visible


def test_attention_rejects_weights_that_are_not_a_matrix():
    with pytest.raises(ValueError, match="rank 2"):
        plotting.plot_attention(np.zeros((2, 2, 2)), ["a", "b"], ["a", "b"])
