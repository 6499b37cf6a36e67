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


def _visible_labels(ax, axis="y"):
    ax.figure.canvas.draw()
    low, high = ax.get_ylim() if axis == "y" else ax.get_xlim()
    ticks = ax.get_yticks() if axis == "y" else ax.get_xticks()
    labels = _tick_labels(ax.yaxis if axis == "y" else ax.xaxis)
    return [label for tick, label in zip(ticks, labels, strict=True)
            if low <= tick <= high and label]


def test_scaling_plot_labels_both_log_axes_with_plain_numbers():
    fig = plotting.plot_scaling(
        [16, 64, 256], {"forward time (ms)": {"attention": [0.9, 1.4, 5.0], "GRU": [3.0, 9.0, 35.0]},
                        "memory (MiB)": {"attention": [0.1, 1.0, 12.0], "GRU": [0.05, 0.2, 0.8]}},
        guides={"memory (MiB)": {"attention": 2, "GRU": 1}})
    time_ax, memory_ax = fig.axes
    assert time_ax.get_xscale() == time_ax.get_yscale() == "log"
    assert _visible_labels(time_ax, "x") == ["16", "64", "256"]
    time_labels = _visible_labels(time_ax)
    assert len(time_labels) >= 3 and "1" in time_labels and "10" in time_labels, time_labels
    assert not any("$" in label for label in time_labels)  # no 10^k mathtext
    assert time_ax.get_ylabel() == "forward time (ms)"
    assert time_ax.get_xlabel() == "sequence length n (tokens)"
    assert [line.get_label() for line in memory_ax.lines] == ["attention", "GRU", "\u221d n\u00b2",
                                                              "\u221d n"]
    np.testing.assert_allclose(memory_ax.lines[2].get_ydata(), [12 / 256, 12 / 16, 12.0])


def test_scaling_plot_refuses_values_a_log_axis_cannot_show():
    with pytest.raises(ValueError, match="<= 0"):
        plotting.plot_scaling([16, 64], {"time (ms)": {"a": [0.0, 1.0]}})
    with pytest.raises(ValueError, match="2 values for 3 lengths"):
        plotting.plot_scaling([16, 64, 256], {"time (ms)": {"a": [1.0, 2.0]}})


def test_word_map_labels_every_word_without_overlaps():
    rng = np.random.default_rng(0)
    groups = {"close": [f"word{i}" for i in range(12)], "far": ["alpha", "beta"]}
    points = np.concatenate([rng.normal(0, 0.02, size=(12, 2)), [[1.0, 1.0], [-1.0, 1.0]]])
    fig = plotting.plot_word_map(points, groups, title="map")
    ax = fig.axes[0]
    renderer = fig.canvas.get_renderer()
    labels = [t for t in ax.texts if t.get_text()]
    assert sorted(t.get_text() for t in labels) == sorted(groups["close"] + groups["far"])
    boxes = [t.get_window_extent(renderer) for t in labels]
    overlapping = [(labels[i].get_text(), labels[j].get_text())
                   for i in range(len(labels)) for j in range(i + 1, len(labels))
                   if boxes[i].overlaps(boxes[j])]
    assert not overlapping, overlapping
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["close", "far"]


def test_word_map_needs_one_point_per_word():
    with pytest.raises(ValueError, match="3 points for 2 words"):
        plotting.plot_word_map(np.zeros((3, 2)), {"a": ["x", "y"]})
