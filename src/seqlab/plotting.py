"""Plots a person would rather see than read: learning curves, attention heatmaps, encodings.

Every function returns the matplotlib ``Figure`` so notebooks can save it and tests can
inspect it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FormatStrFormatter, LogLocator, MaxNLocator, NullFormatter

#: How token strings that print as nothing are shown on an axis.
_VISIBLE = {"\n": "↵", " ": "␣", "\t": "⇥", "": "∅"}


def _readable_metric(name: str) -> str:
    """``masked_accuracy`` -> ``masked accuracy`` (an axis label, not a Keras log key)."""
    return name.replace("_", " ")


def _visible_token(token: str) -> str:
    return _VISIBLE.get(token, token)


def _tick_every(count: int, most: int = 24) -> int:
    """Label every k-th tick so that at most ``most`` labels share an axis."""
    return max(1, -(-count // most))

__all__ = [
    "plot_attention", "plot_gradient_norms", "plot_learning_curves", "plot_positional_encoding",
]


def _history_dict(history) -> Mapping[str, Sequence[float]]:
    """Accept a ``keras.callbacks.History`` or its ``.history`` dict."""
    return getattr(history, "history", history)


def plot_learning_curves(histories, metrics: Sequence[str] = ("loss", "accuracy"),
                         titles: Sequence[str] | None = None, *, suptitle: str | None = None):
    """Training and validation curves, one column per history, one row per metric.

    Args:
        histories: a ``History`` (or dict), or a list of them to draw side by side with shared
            y axes (e.g. before/after unfreezing).
        metrics: metric names as Keras logs them; ``val_`` curves are drawn when present.
        titles: a title per history.
    """
    if not isinstance(histories, (list, tuple)):
        histories = [histories]
    if not histories:
        raise ValueError("plot_learning_curves needs at least one history.")
    dicts = [_history_dict(h) for h in histories]
    metrics = [m for m in metrics if any(m in d for d in dicts)]
    if not metrics:
        raise ValueError(f"None of the metrics were logged; logged keys: {sorted(dicts[0])}")
    fig, axes = plt.subplots(len(metrics), len(dicts), squeeze=False, sharey="row",
                             figsize=(4.5 * len(dicts), 3.2 * len(metrics)))
    for col, values in enumerate(dicts):
        for row, metric in enumerate(metrics):
            ax = axes[row][col]
            for key, style in ((metric, "-o"), (f"val_{metric}", "--s")):
                if key in values:
                    epochs = np.arange(1, len(values[key]) + 1)
                    ax.plot(epochs, values[key], style, markersize=3,
                            label="validation" if key.startswith("val_") else "training")
            ax.set_xlabel("epoch")
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # epochs are whole numbers
            ax.set_ylabel(_readable_metric(metric))
            ax.legend()
            if titles and row == 0:
                ax.set_title(titles[col])
    if suptitle:
        fig.suptitle(suptitle)
    fig.tight_layout()
    return fig


def plot_attention(weights, source_tokens: Sequence[str], target_tokens: Sequence[str],
                   *, ax=None, title: str | None = None, cmap: str = "viridis",
                   self_attention: bool | None = None):
    """Heatmap of attention weights: one row per query, one column per attended token.

    Args:
        weights: array ``(target_len, source_len)``; extra rows/columns beyond the given
            tokens (padding) are cropped.
        self_attention: label the axes as a sequence attending to itself (queries down the
            side, the earlier tokens they look at across) instead of output -> source. ``None``
            (the default) decides from the tokens: the same list on both axes is self-attention.

    Tokens that print as nothing are drawn visibly (newline ``↵``, space ``␣``), and on
    long sequences only every k-th tick is labelled so labels never overlap.
    """
    weights = np.asarray(weights)
    if weights.ndim != 2:
        raise ValueError(f"plot_attention expects weights of rank 2 (target, source); got shape {weights.shape}")
    if self_attention is None:
        self_attention = list(source_tokens) == list(target_tokens)
    weights = weights[: len(target_tokens), : len(source_tokens)]
    if ax is None:
        width = min(0.5 * len(source_tokens) + 2, 12)
        height = min(0.45 * len(target_tokens) + 1.5, 10)
        fig, ax = plt.subplots(figsize=(width, height))
    else:
        fig = ax.figure
    image = ax.imshow(weights, cmap=cmap, vmin=0.0, vmax=max(float(weights.max()), 1e-9))
    for axis, tokens, rotation in ((ax.xaxis, source_tokens, 60), (ax.yaxis, target_tokens, 0)):
        step = _tick_every(len(tokens))
        positions = list(range(0, len(tokens), step))
        axis.set_ticks(positions, labels=[_visible_token(tokens[i]) for i in positions])
        if rotation:
            ax.tick_params(axis="x", labelrotation=rotation)
    if self_attention:
        ax.set_xlabel("attended token (key)")
        ax.set_ylabel("attending token (query)")
    else:
        ax.set_xlabel("source token")
        ax.set_ylabel("output token")
    ax.grid(False)
    if title:
        ax.set_title(title)
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    return fig


def plot_positional_encoding(encoding, *, title: str = "Positional encodings (eq. 15)"):
    """Heatmap of a ``(length, depth)`` positional-encoding matrix."""
    encoding = np.asarray(encoding)
    if encoding.ndim != 2:
        raise ValueError(f"expected a (length, depth) matrix; got shape {encoding.shape}")
    fig, ax = plt.subplots(figsize=(8, 4))
    image = ax.pcolormesh(encoding, cmap="RdBu", vmin=-1, vmax=1)
    ax.set_xlabel("encoding dimension i")
    ax.set_ylabel("position p")
    ax.set_title(title)
    ax.grid(False)
    fig.colorbar(image, ax=ax)
    return fig


def plot_gradient_norms(curves: Mapping[str, Sequence[float]], *, xlabel: str = "time step t",
                        ylabel: str = "gradient norm", title: str | None = None,
                        log: bool = True, ax=None):
    """One line per curve of gradient norms, on a log scale by default.

    Args:
        curves: name -> norms, e.g. ``{"SimpleRNN": [...], "LSTM": [...]}`` with
            ``||dL/dx(t)||`` for each time step t, or one norm per training step.
        log: logarithmic y axis, where vanishing (and exploding) gradients are straight lines.
        ax: draw into this axes (e.g. a panel of a larger figure) instead of a new figure.
    """
    if not curves:
        raise ValueError("plot_gradient_norms needs at least one curve.")
    if ax is None:
        fig, ax = plt.subplots()
    else:
        fig = ax.figure
    for name, values in curves.items():
        values = np.asarray(values, dtype=float)
        if values.ndim != 1:
            raise ValueError(f"curve {name!r} must be one norm per step; got shape {values.shape}")
        ax.plot(np.arange(len(values)), values, label=name)
    if log:
        ax.set_yscale("log")
        positive = np.concatenate([np.asarray(v, float).ravel() for v in curves.values()])
        positive = positive[positive > 0]
        if positive.size and np.log10(positive.max() / positive.min()) < 2:
            # Curves within two decades would get one or two labelled powers of ten: label
            # the 2x and 5x steps too, as plain numbers.
            ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
            ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
            ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.legend()
    return fig
