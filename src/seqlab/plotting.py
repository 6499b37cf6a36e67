"""Plots a person would rather see than read; every function returns the matplotlib ``Figure``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FormatStrFormatter, LogLocator, MaxNLocator, NullFormatter

__all__ = [
    "plot_attention", "plot_gradient_norms", "plot_learning_curves", "plot_positional_encoding",
    "plot_scaling", "plot_word_map",
]

#: How token strings that print as nothing are shown on an axis.
_VISIBLE = {"\n": "↵", " ": "␣", "\t": "⇥", "": "∅"}


def _label_log_axis(axis, values, decades: float = 3) -> None:
    """Plain-number labels (1x, 2x, 5x steps) on a log axis spanning under ``decades``."""
    values = np.asarray(values, float).ravel()
    values = values[values > 0]
    if values.size and np.log10(values.max() / values.min()) < decades:
        axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        axis.set_major_formatter(FormatStrFormatter("%g"))
        axis.set_minor_formatter(NullFormatter())


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
    dicts = [getattr(h, "history", h) for h in histories]  # a History or its dict
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
            ax.set_ylabel(metric.replace("_", " "))
            ax.legend()
            if titles and row == 0:
                ax.set_title(titles[col])
    if suptitle:
        fig.suptitle(suptitle)
    fig.tight_layout()
    return fig


def plot_attention(weights, source_tokens: Sequence[str], target_tokens: Sequence[str],
                   *, ax=None, title: str | None = None):
    """Heatmap of attention weights: one row per query, one column per attended token.

    Args:
        weights: array ``(target_len, source_len)``; rows and columns past the tokens (padding)
            are cropped. The same tokens on both axes are labelled as self-attention.
    """
    weights = np.asarray(weights)
    if weights.ndim != 2:
        raise ValueError("plot_attention expects weights of rank 2 (target, source); got shape "
                         f"{weights.shape}")
    self_attention = list(source_tokens) == list(target_tokens)
    weights = weights[: len(target_tokens), : len(source_tokens)]
    size = (min(0.5 * len(source_tokens) + 2, 12), min(0.45 * len(target_tokens) + 1.5, 10))
    fig, ax = plt.subplots(figsize=size) if ax is None else (ax.figure, ax)
    image = ax.imshow(weights, cmap="viridis", vmin=0.0, vmax=max(float(weights.max()), 1e-9))
    for axis, tokens, rotation in ((ax.xaxis, source_tokens, 60), (ax.yaxis, target_tokens, 0)):
        positions = range(0, len(tokens), -(-len(tokens) // 24))  # at most 24 labels an axis
        axis.set_ticks(positions, labels=[_VISIBLE.get(tokens[i], tokens[i]) for i in positions])
        if rotation:
            ax.tick_params(axis="x", labelrotation=rotation)
    if self_attention:
        ax.set(xlabel="attended token (key)", ylabel="attending token (query)")
    else:
        ax.set(xlabel="source token", ylabel="output token")
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
    ax.set(xlabel="encoding dimension i", ylabel="position p", title=title)
    ax.grid(False)
    fig.colorbar(image, ax=ax)
    return fig


def plot_gradient_norms(curves: Mapping[str, Sequence[float]], *, xlabel: str = "time step t",
                        ylabel: str = "gradient norm", title: str | None = None,
                        ax=None):
    """One line per curve of gradient norms, on a log scale.

    Args:
        curves: name -> norms, e.g. ``{"SimpleRNN": [...], "LSTM": [...]}`` with
            ``||dL/dx(t)||`` for each time step t, or one norm per training step.
        ax: draw into this axes instead of a new figure.
    """
    if not curves:
        raise ValueError("plot_gradient_norms needs at least one curve.")
    fig, ax = plt.subplots() if ax is None else (ax.figure, ax)
    for name, values in curves.items():
        values = np.asarray(values, dtype=float)
        if values.ndim != 1:
            raise ValueError(f"curve {name!r} must be one norm per step; got shape {values.shape}")
        ax.plot(values, label=name)
    ax.set_yscale("log")
    _label_log_axis(ax.yaxis, np.concatenate(list(curves.values()), axis=None), decades=2)
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title or "")
    ax.legend()
    return fig


def plot_scaling(lengths, panels: Mapping[str, Mapping[str, Sequence[float]]], *,
                 guides: Mapping[str, Mapping[str, float]] | None = None,
                 titles: Sequence[str] | None = None,
                 xlabel: str = "sequence length n (tokens)"):
    """How measured costs grow with the sequence length: one log-log panel per quantity.

    Args:
        lengths: the measured sequence lengths, increasing.
        panels: y-axis label (with its unit, e.g. ``"forward time (ms)"``) -> {curve name:
            one value per length}.
        guides: y-axis label -> {curve name: exponent k}: a grey reference line ``∝ n^k``
            through that curve's last point.
        titles: a title per panel.

    Example:
        >>> fig = plot_scaling([16, 64, 256], {"time (ms)": {"a": [1, 4, 16], "b": [2, 3, 4]}},
        ...                    guides={"time (ms)": {"a": 1}})
        >>> [line.get_label() for line in fig.axes[0].lines]
        ['a', 'b', '∝ n']
    """
    lengths = np.asarray(lengths, float)
    if lengths.ndim != 1 or lengths.size < 2 or np.any(lengths <= 0):
        raise ValueError(f"lengths must be two or more positive numbers; got {lengths.tolist()}")
    if not panels:
        raise ValueError("plot_scaling needs at least one panel.")
    guides = guides or {}
    fig, axes = plt.subplots(1, len(panels), squeeze=False, figsize=(5 * len(panels), 3.6))
    for index, (ax, (ylabel, curves)) in enumerate(zip(axes[0], panels.items(), strict=True)):
        plotted = []
        for (name, values), marker in zip(curves.items(), "os^vDx" * len(curves), strict=False):
            values = np.asarray(values, float)
            if values.shape != lengths.shape:
                raise ValueError(f"{ylabel!r}: curve {name!r} has {values.size} values for "
                                 f"{lengths.size} lengths.")
            if np.any(values <= 0):
                raise ValueError(f"{ylabel!r}: curve {name!r} has values <= 0, which a log "
                                 "axis cannot show.")
            ax.loglog(lengths, values, f"{marker}-", label=name)
            plotted.append(values)
        for (name, exponent), style in zip(guides.get(ylabel, {}).items(), (":", "--", "-."),
                                            strict=False):
            if name not in curves:
                raise ValueError(f"guide for {name!r}, which is not a curve of {ylabel!r}")
            anchor = float(np.asarray(curves[name], float)[-1])
            guide = anchor * (lengths / lengths[-1]) ** exponent
            power = {1: "", 2: "\u00b2", 3: "\u00b3"}.get(exponent, f"^{exponent:g}")
            ax.loglog(lengths, guide, style, color="gray", label=f"\u221d n{power}")
            plotted.append(guide)
        ax.set_xticks(lengths, [f"{v:g}" for v in lengths])
        ax.xaxis.set_minor_locator(plt.NullLocator())
        _label_log_axis(ax.yaxis, np.concatenate(plotted))
        ax.set(xlabel=xlabel, ylabel=ylabel)
        if titles:
            ax.set_title(titles[index])
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def _overlap(box, others) -> float:
    """Total area ``box`` shares with ``others`` (all ``(x0, y0, x1, y1)`` in pixels)."""
    if not len(others):
        return 0.0
    others = np.asarray(others)
    width = np.minimum(box[2], others[:, 2]) - np.maximum(box[0], others[:, 0])
    height = np.minimum(box[3], others[:, 3]) - np.maximum(box[1], others[:, 1])
    return float(np.sum(np.clip(width, 0, None) * np.clip(height, 0, None)))


def plot_word_map(points, groups: Mapping[str, Sequence[str]], *, title: str | None = None):
    """A scatter of 2-D word positions (e.g. PCA of word vectors), coloured by group, every word
    labelled where its label overlaps no other label and no point (else the least overlap).

    Args:
        points: ``(n, 2)`` positions, in the order of the groups' words.
        groups: group name -> its words; ``n`` words in all.

    Example:
        >>> fig = plot_word_map(np.array([[0, 0], [0, 0.01], [1, 1]]), {"a": ["x", "y"], "b": ["z"]})
        >>> sorted(t.get_text() for t in fig.axes[0].texts)
        ['x', 'y', 'z']
    """
    points = np.asarray(points, float)
    words = [word for members in groups.values() for word in members]
    if points.ndim != 2 or points.shape[1] != 2:
        raise ValueError(f"points must have shape (n, 2); got {points.shape}")
    if len(words) != len(points):
        raise ValueError(f"{len(points)} points for {len(words)} words in the groups")
    fig, ax = plt.subplots(figsize=(8.5, 6))
    ends = np.cumsum([len(members) for members in groups.values()])
    for name, xy in zip(groups, np.split(points, ends[:-1]), strict=True):
        ax.scatter(xy[:, 0], xy[:, 1], label=name, s=30, zorder=3)
    ax.margins(0.12)  # room for the labels of the outermost points
    ax.set(xlabel="PC 1", ylabel="PC 2", title=title or "")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    # Labels are placed in pixels, after the layout has fixed where the points are drawn.
    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    anchors = ax.transData.transform(points)
    radius = 3 * fig.dpi / 72  # a marker of s=30 is about 5.5 points wide
    placed = [(x - radius, y - radius, x + radius, y + radius) for x, y in anchors]
    directions = [(1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, -1)]
    candidates = [(dx * distance, dy * distance) for distance in (4, 9, 16, 26, 38, 52)
                  for dx, dy in directions]
    horizontal = {-1: "right", 0: "center", 1: "left"}
    vertical = {-1: "top", 0: "center", 1: "bottom"}
    for word, point in zip(words, points, strict=True):
        text = ax.annotate(word, point, xytext=(0, 0), textcoords="offset points", fontsize=8)
        options = []  # (cost, offset, box); the cost: overlap, and 1e6 outside the frame
        for dx, dy in candidates:
            text.set(position=(dx, dy), ha=horizontal[np.sign(dx)], va=vertical[np.sign(dy)])
            box = text.get_window_extent(renderer).extents
            inside = (box[0] >= frame.x0 and box[2] <= frame.x1 and box[1] >= frame.y0
                      and box[3] <= frame.y1)
            options.append((_overlap(box, placed) + (0.0 if inside else 1e6), (dx, dy), box))
            if options[-1][0] == 0:
                break
        _, (dx, dy), box = min(options, key=lambda option: option[0])
        text.set(position=(dx, dy), ha=horizontal[np.sign(dx)], va=vertical[np.sign(dy)])
        if max(abs(dx), abs(dy)) > 4:
            ax.annotate("", point, xytext=(dx, dy), textcoords="offset points",
                        arrowprops={"arrowstyle": "-", "color": "gray", "lw": 0.6,
                                    "shrinkA": 0, "shrinkB": 2})
        placed.append(tuple(box))
    return fig
