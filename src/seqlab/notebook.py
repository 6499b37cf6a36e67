"""One-call notebook setup, and the generator of every notebook's setup cell and Colab badge.

In a notebook::

    import seqlab.notebook
    seqlab.notebook.setup()

From a shell, after changing :data:`seqlab.config.REPOSITORY_URL` or ``REPOSITORY_REF``::

    python -m seqlab.notebook sync      # rewrite setup cells and badges in notebooks/
    python -m seqlab.notebook check     # exit 1 if any notebook drifted (what the tests run)
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

from seqlab import config

SETUP_TAG = "setup"
PARAMETERS_TAG = "parameters"
BADGE_IMAGE = "https://colab.research.google.com/assets/colab-badge.svg"


def setup(seed: int = config.SEED, *, quiet: bool = False) -> dict:
    """Prepare a notebook session: seeds, plot style, and a one-line report.

    Sets Python, NumPy and backend seeds with ``keras.utils.set_random_seed`` so a class sees the
    same curves as the instructor, picks a readable matplotlib style, and prints the TensorFlow
    and Keras versions, whether FAST mode is on, and whether a GPU is visible (with the Colab
    menu path to get one when it is not).

    Returns:
        A dict with ``tensorflow``, ``keras``, ``fast``, ``gpus`` and ``colab`` entries, so a
        notebook (or a test) can act on them.
    """
    import keras
    import matplotlib
    import matplotlib.pyplot as plt
    import tensorflow as tf

    keras.utils.set_random_seed(seed)
    # Keras 3 warns on every fit with a tf.data pipeline that `shuffle` is ignored (the pipeline
    # shuffles itself); in class that line only distracts.
    warnings.filterwarnings("ignore", message=r".*`shuffle=True` was passed.*")
    if "inline" not in matplotlib.get_backend().lower() and not _in_notebook():
        matplotlib.use("Agg")
    plt.rcParams.update(
        {
            "figure.figsize": (7, 4),
            "figure.dpi": 100,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "axes.spines.top": False,
            "axes.spines.right": False,
        }
    )
    gpus = tf.config.list_physical_devices("GPU")
    info = {
        "tensorflow": tf.__version__,
        "keras": keras.__version__,
        "fast": config.is_fast(),
        "gpus": len(gpus),
        "colab": in_colab(),
    }
    if not quiet:
        print(
            f"TensorFlow {info['tensorflow']} | Keras {info['keras']} | "
            f"FAST mode {'ON (offline sample data, stand-in modules)' if info['fast'] else 'off (full data)'} | "
            f"GPUs: {info['gpus']}"
        )
        if not gpus:
            hint = (
                "Runtime > Change runtime type > GPU"
                if info["colab"]
                else "a CUDA-enabled TensorFlow build"
            )
            print(f"No GPU visible: FAST mode is fine on a CPU; for full runs use {hint}.")
    return info


def in_colab() -> bool:
    """True inside Google Colab."""
    return "google.colab" in sys.modules


def _in_notebook() -> bool:
    return "ipykernel" in sys.modules


# --------------------------------------------------------------------------------------------
# Generated cells: the repository URL/ref live only in seqlab.config; these functions write them
# into the notebooks, and the hygiene test compares.
# --------------------------------------------------------------------------------------------


def setup_cell_source(url: str = config.REPOSITORY_URL, ref: str = config.REPOSITORY_REF) -> str:
    """Source of the setup cell shared by every notebook."""
    return f'''# Setup: the same cell in every notebook (written by `python -m seqlab.notebook sync`).
# On Colab it fetches seqlab and installs only what Colab lacks: its TensorFlow and Keras stay.
import os
import subprocess
import sys

if "google.colab" in sys.modules and not os.path.isdir("seqlab"):
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--branch", "{ref}",
                    "{url}", "seqlab"], check=True)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "-e", "seqlab"], check=True)
if "google.colab" in sys.modules:
    sys.path.insert(0, os.path.abspath("seqlab/src"))

import seqlab.notebook

seqlab.notebook.setup();'''


def colab_badge(notebook_path: str, url: str = config.REPOSITORY_URL,
                ref: str = config.REPOSITORY_REF) -> str:
    """Markdown for the "Open in Colab" badge of a notebook given relative to the repo root."""
    github = url.removeprefix("https://github.com/").rstrip("/")
    target = f"https://colab.research.google.com/github/{github}/blob/{ref}/{notebook_path}"
    return f"[![Open In Colab]({BADGE_IMAGE})]({target})"


def _cell_has_tag(cell, tag: str) -> bool:
    return tag in cell.get("metadata", {}).get("tags", [])


def sync_notebook(path: Path, root: Path = config.REPO_ROOT, write: bool = True) -> list[str]:
    """Make one notebook's setup cell and badge match the config. Returns what differed."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    problems: list[str] = []
    relative = path.resolve().relative_to(root.resolve()).as_posix()
    badge = colab_badge(relative)
    setup_cells = [c for c in nb.cells if c.cell_type == "code" and _cell_has_tag(c, SETUP_TAG)]
    if len(setup_cells) != 1:
        problems.append(f"{relative}: expected exactly one code cell tagged '{SETUP_TAG}', "
                        f"found {len(setup_cells)}")
    elif setup_cells[0].source != setup_cell_source():
        problems.append(f"{relative}: setup cell differs from seqlab.notebook.setup_cell_source()")
        setup_cells[0].source = setup_cell_source()
    title = nb.cells[0] if nb.cells else None
    if title is None or title.cell_type != "markdown":
        problems.append(f"{relative}: the first cell must be the markdown title cell")
    else:
        lines = title.source.splitlines()
        badge_lines = [i for i, line in enumerate(lines) if BADGE_IMAGE in line]
        if not badge_lines:
            problems.append(f"{relative}: no Colab badge in the title cell")
            lines.insert(1 if lines else 0, badge)
        elif lines[badge_lines[0]] != badge:
            problems.append(f"{relative}: Colab badge points elsewhere than {badge}")
            lines[badge_lines[0]] = badge
        title.source = "\n".join(lines)
    if write and problems:
        nbformat.write(nb, path)
    return problems


def notebook_paths(folder: Path | None = None) -> list[Path]:
    folder = folder or (config.REPO_ROOT / "notebooks")
    return sorted(p for p in folder.glob("*.ipynb") if not p.name.startswith("."))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m seqlab.notebook", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["sync", "check"])
    parser.add_argument("folders", nargs="*", type=Path,
                        help="folders of notebooks (default: notebooks/)")
    args = parser.parse_args(argv)
    folders = args.folders or [config.REPO_ROOT / "notebooks"]
    problems = []
    for folder in folders:
        for path in notebook_paths(folder):
            problems += sync_notebook(path, write=args.command == "sync")
    for line in problems:
        print(line)
    if args.command == "check" and problems:
        print("Run `python -m seqlab.notebook sync` to fix.", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    raise SystemExit(main())
