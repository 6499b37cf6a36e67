"""The notebook files themselves: every notebook's generated setup cell and Colab badge.

Every notebook opens with its parameters cell (tagged ``parameters``: ``FAST``, ``SIZE``,
``STRATEGY`` and the notebook's other settings, plain literals, no import, so it runs on Colab
before seqlab is there), then the setup cell written here, the same in every notebook but for
its number: on Colab it fetches and installs seqlab, then it resolves the parameters once,
``RUN = seqlab.course.notebook.setup(fast=FAST, size=SIZE, strategy=STRATEGY, notebook="04")``.

The repository URL and the release's tag live only in :mod:`seqlab.config` (the tag from
``seqlab.__version__``); these functions write them into the notebooks, and the hygiene test
compares. What runs *inside* a notebook's kernel
(``setup()``, the Colab check) is the student-facing :mod:`seqlab.course.notebook`.

From a shell, after changing :data:`seqlab.config.REPOSITORY_URL` or the version (the release
command, :mod:`seqlab_instructor.release`, runs ``sync`` itself)::

    python -m seqlab_instructor.notebook_files sync   # rewrite setup cells and badges in notebooks/
    python -m seqlab_instructor.notebook_files check  # exit 1 if any notebook drifted
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from seqlab import config
from seqlab_instructor.cells import SETUP_TAG, has_tag

BADGE_IMAGE = "https://colab.research.google.com/assets/colab-badge.svg"


def setup_cell_source(notebook: str, url: str = config.REPOSITORY_URL,
                      ref: str = config.REPOSITORY_REF) -> str:
    """Source of the setup cell of notebook ``"04"``: the same in every notebook but the number."""
    return f'''# Setup: the same cell in every notebook but for its number (`python -m
# seqlab_instructor.notebook_files sync` writes it). It resolves the parameters cell's FAST, SIZE
# and STRATEGY once, into RUN. On Colab it first fetches the seqlab release this notebook was
# built from, checks the runtime's versions against the tested range (an old Keras is upgraded
# alone; TensorFlow is never reinstalled), and installs only what Colab lacks.
import os
import subprocess
import sys

if "google.colab" in sys.modules:
    release, url = "{ref}", "{url}"
    if not os.path.isdir("seqlab"):
        fetched = subprocess.run(["git", "clone", "-q", "--depth", "1", "--branch", release, url,
                                  "seqlab"])
        if fetched.returncode:
            raise RuntimeError(f"Could not fetch seqlab {{release}}, the release this notebook was "
                               "built from (git says why above). Check the connection and run "
                               f"this cell again, or open the notebook from a listed release: "
                               f"{{url}}/releases")
    sys.path.insert(0, os.path.abspath("seqlab/src"))
    import seqlab.course.notebook

    seqlab.course.notebook.prepare_colab("seqlab", release=release)

import seqlab.course.notebook

RUN = seqlab.course.notebook.setup(fast=FAST, size=SIZE, strategy=STRATEGY, notebook="{notebook}")'''


def colab_badge(notebook_path: str, url: str = config.REPOSITORY_URL,
                ref: str = config.REPOSITORY_REF) -> str:
    """Markdown for the "Open in Colab" badge of a notebook given relative to the repo root."""
    github = url.removeprefix("https://github.com/").rstrip("/")
    target = f"https://colab.research.google.com/github/{github}/blob/{ref}/{notebook_path}"
    return f"[![Open In Colab]({BADGE_IMAGE})]({target})"


def sync_notebook(path: Path, root: Path = config.REPO_ROOT, write: bool = True) -> list[str]:
    """Make one notebook's setup cell and badge match the config. Returns what differed."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    problems: list[str] = []
    relative = path.resolve().relative_to(root.resolve()).as_posix()
    badge = colab_badge(relative)
    expected = setup_cell_source(notebook_number(path))
    setup_cells = [c for c in nb.cells if c.cell_type == "code" and has_tag(c, SETUP_TAG)]
    if len(setup_cells) != 1:
        problems.append(f"{relative}: expected exactly one code cell tagged '{SETUP_TAG}', "
                        f"found {len(setup_cells)}")
    elif setup_cells[0].source != expected:
        problems.append(f"{relative}: setup cell differs from "
                        "seqlab_instructor.notebook_files.setup_cell_source()")
        setup_cells[0].source = expected
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


def sync_readme(path: Path, write: bool = True) -> list[str]:
    """Point the README's Colab badges at the release (``colab_badge``'s ref). Returns what
    differed."""
    github = config.REPOSITORY_URL.removeprefix("https://github.com/").rstrip("/")
    text = path.read_text(encoding="utf-8")
    synced = re.sub(rf"(colab\.research\.google\.com/github/{re.escape(github)}/blob/)[^/]+/",
                    rf"\g<1>{config.REPOSITORY_REF}/", text)
    if synced == text:
        return []
    if write:
        path.write_text(synced, encoding="utf-8")
    return [f"{path.name}: Colab badges point elsewhere than {config.REPOSITORY_REF}"]


def notebook_number(path: Path) -> str:
    """``"04"`` for ``notebooks/04_neural_machine_translation.ipynb``: the name's first two
    characters, the number a notebook's sizes and results files go by."""
    return Path(path).name[:2]


def notebook_paths(folder: Path | None = None) -> list[Path]:
    folder = folder or (config.REPO_ROOT / "notebooks")
    return sorted(p for p in folder.glob("*.ipynb") if not p.name.startswith("."))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m seqlab_instructor.notebook_files", description=__doc__,
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
    if not args.folders:
        problems += sync_readme(config.REPO_ROOT / "README.md", write=args.command == "sync")
    for line in problems:
        print(line)
    if args.command == "check" and problems:
        print("Run `python -m seqlab_instructor.notebook_files sync` to fix.", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
