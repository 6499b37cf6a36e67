"""Draws docs/images/architecture.png, the data-flow picture of docs/architecture.md.

    python docs/images/architecture.py

Edit the boxes below when a package face moves, run this, look at the PNG and commit both.
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch  # noqa: E402

FLOW = [  # (module, what it does), top to bottom: what a notebook calls, in order
    ("seqlab.data", "load, split, vectorize, batch"),
    ("seqlab.layers", "RNN cells (1)–(11), attention (12)–(14),\nTransformer blocks (15)–(16), hub embedding"),
    ("seqlab.lessons · seqlab.models", "the notebooks' models (#@save): classifiers,\n"
     "translators, LMs · word vectors, perplexity"),
    ("seqlab.training", "masked losses and metrics, schedules,\ncallbacks, optimizers → model.fit"),
    ("seqlab.decoding · seqlab.evaluation", "greedy, beam, sampling · BLEU, accuracy"),
    ("seqlab.plotting", "learning curves, attention heatmaps"),
]
BETWEEN = ["tf.data.Dataset", "Keras layers", "keras.Model", "trained weights → models/",
           "translations, scores"]
# seqlab.course.<name>, then seqlab_instructor.<name>
COURSE = [("notebook", "setup cell,\nsetup()"), ("checks", "exercise checks")]
INSTRUCTOR = [("runner", "papermill runs"), ("homework", "student copies,\ngrading"),
              ("site", "course book")]
BLUE, GREY, ORANGE = "#dbe9f6", "#eeeeee", "#fde3c8"


def box(ax, x, y, w, h, title, text, color):
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0.02,rounding_size=0.08",
                                facecolor=color, edgecolor="#555555", linewidth=1))
    title_y = y + h / 2 - 0.22 if text else y
    ax.text(x, title_y, title, ha="center", va="center", fontsize=10.5, fontweight="bold",
            family="monospace")
    if text:  # centred in the space under the title
        ax.text(x, (y - h / 2 + title_y - 0.12) / 2, text, ha="center", va="center",
                fontsize=8.5, linespacing=1.15)


def arrow(ax, start, end, label=None):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=14,
                                 color="#333333", linewidth=1.2))
    if label:
        ax.text(start[0] + 0.12, (start[1] + end[1]) / 2, label, fontsize=8.5, va="center",
                style="italic", color="#333333")


OUTPUT = Path(__file__).with_name("architecture.png")


def main(path=OUTPUT):
    fig, ax = plt.subplots(figsize=(10, 10.5))
    ax.set_xlim(0, 10)
    ax.set_ylim(-1.0, 11.2)
    ax.axis("off")
    # Where the data comes from.
    box(ax, 2.6, 10.4, 4.4, 0.8, "full mode", "TFDS imdb_reviews · TF Hub nnlm-en-dim50\nAnki spa-eng.zip (downloads)", GREY)
    box(ax, 7.4, 10.4, 4.4, 0.8, "FAST mode", "data/ samples · dates task · stand-in\nTF-Hub module (offline)", GREY)
    top = 8.9
    arrow(ax, (2.6, 9.98), (4.3, top + 0.42))
    arrow(ax, (7.4, 9.98), (5.7, top + 0.42))
    step = 1.45
    for i, (title, text) in enumerate(FLOW):
        y = top - i * step
        box(ax, 5, y, 5.0, 0.8, title, text, BLUE)
        if i < len(FLOW) - 1:
            arrow(ax, (5, y - 0.42), (5, y - step + 0.42), BETWEEN[i])
    bottom = top - (len(FLOW) - 1) * step
    ax.text(5, bottom - 0.7, "a notebook calls these top to bottom; a lower module never imports a higher one",
            ha="center", fontsize=9, color="#333333")
    # Below everything: configuration and results files.
    box(ax, 1.15, 5.3, 2.1, 1.2, "seqlab.config", "FAST flag, paths,\nseed, tested range", ORANGE)
    box(ax, 8.85, 5.3, 2.1, 1.2, "seqlab.results", "results files the\nnotebooks hand on", ORANGE)
    ax.text(1.15, 4.5, "used by all", ha="center", fontsize=8, style="italic")
    ax.text(8.85, 4.5, "used by all", ha="center", fontsize=8, style="italic")
    # On top of the library: seqlab.course (students' kernels), then the instructor's tools.
    for i, (title, text) in enumerate(COURSE + INSTRUCTOR):
        box(ax, 1.0 + i * 2.0, -0.45, 1.85, 0.9, title, text, BLUE if i < len(COURSE) else GREY)
    ax.text(2.0, 0.25, "seqlab.course: in the student's kernel", ha="center", fontsize=9,
            color="#333333")
    ax.text(7.0, 0.25, "seqlab_instructor: the instructor's tools\n(seqlab never imports them)",
            ha="center", fontsize=9, color="#333333")
    fig.savefig(path, dpi=110, bbox_inches="tight")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
