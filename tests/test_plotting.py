import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from seqlab import plotting  # noqa: E402


def test_learning_curves_draw_training_and_validation_side_by_side():
    history = {"loss": [1.0, 0.5], "val_loss": [1.1, 0.7], "accuracy": [0.5, 0.8],
               "val_accuracy": [0.4, 0.7]}
    fig = plotting.plot_learning_curves([history, history], titles=["frozen", "fine-tuned"])
    axes = fig.get_axes()
    assert len(axes) == 4
    assert [line.get_label() for line in axes[0].get_lines()] == ["training", "validation"]
    assert axes[0].get_title() == "frozen"
    np.testing.assert_allclose(axes[0].get_lines()[1].get_ydata(), [1.1, 0.7])


def test_learning_curves_refuse_unknown_metrics():
    with pytest.raises(ValueError, match="None of the metrics"):
        plotting.plot_learning_curves({"loss": [1.0]}, metrics=["bleu"])


def test_attention_heatmap_crops_padding_and_labels_tokens():
    weights = np.random.rand(5, 6)
    fig = plotting.plot_attention(weights, ["a", "b", "c"], ["x", "y"])
    image = fig.get_axes()[0].get_images()[0]
    assert image.get_array().shape == (2, 3)
    assert [t.get_text() for t in fig.get_axes()[0].get_xticklabels()] == ["a", "b", "c"]


def test_attention_heatmap_rejects_wrong_rank():
    with pytest.raises(ValueError, match="rank 2"):
        plotting.plot_attention(np.zeros((1, 2, 3)), ["a"], ["b"])


def test_positional_encoding_plot_rejects_vectors():
    with pytest.raises(ValueError, match="length, depth"):
        plotting.plot_positional_encoding(np.zeros(4))


def test_gradient_norms_one_line_per_curve_on_a_log_axis():
    curves = {"SimpleRNN": [1e-6, 1e-3, 1.0], "LSTM": [1e-2, 1e-1, 1.0]}
    fig = plotting.plot_gradient_norms(curves, title="short-term memory")
    ax = fig.get_axes()[0]
    assert ax.get_yscale() == "log" and ax.get_title() == "short-term memory"
    assert [line.get_label() for line in ax.get_lines()] == ["SimpleRNN", "LSTM"]
    np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), [1e-6, 1e-3, 1.0])


def test_gradient_norms_reject_empty_and_matrix_curves():
    with pytest.raises(ValueError, match="at least one"):
        plotting.plot_gradient_norms({})
    with pytest.raises(ValueError, match="one norm per step"):
        plotting.plot_gradient_norms({"x": np.ones((2, 2))})
