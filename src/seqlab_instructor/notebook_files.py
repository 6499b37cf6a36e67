"""The notebook files themselves: every notebook's generated setup cell, its pin and its badge.

Every notebook opens with its parameters cell (tagged ``parameters``: ``FAST``, ``SIZE``
and the notebook's other settings, plain literals, no import, so it runs on Colab
before seqlab is there), then the setup cell written here, the same in every notebook but for
its number and its pin: on Colab it fetches and installs seqlab, then it resolves the parameters
once, ``RUN = seqlab.course.notebook.setup(fast=FAST, size=SIZE, notebook="04")``.

**The pin.** A setup cell fetches one commit of this repository by its SHA, one that the branch
carries (GitHub serves a branch's commits by SHA; tags and release pages do not travel with the
branch). ``sync`` pins the last commit that changed the library a notebook runs on,
:data:`LIBRARY_PATHS`; ``check`` fails when the library at a notebook's pin differs from the
working tree's, so a notebook on ``main`` always fetches ``main``'s library, and a student copy
saved in week 3 keeps fetching week 3's. A library change therefore lands in two commits: the
change, then ``sync`` (and ``homework build``) re-pinning the notebooks and copies to it.

The repository URL and the branch the badges open live in :mod:`seqlab.config`. What runs
*inside* a notebook's kernel (``setup()``, the Colab check) is :mod:`seqlab.course.notebook`.

From a shell::

    python -m seqlab_instructor.notebook_files sync   # pin, setup cells and badges in notebooks/
    python -m seqlab_instructor.notebook_files check  # exit 1 if any notebook drifted
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

from seqlab import config
from seqlab_instructor.cells import SETUP_TAG, has_tag

BADGE_IMAGE = "https://colab.research.google.com/assets/colab-badge.svg"
#: What a notebook's setup cell fetches and runs: the package, FAST mode's data, its install.
LIBRARY_PATHS = ("src/seqlab", "data", "pyproject.toml")
PIN = re.compile(r'^    commit = "([0-9a-f]{40})"', re.M)


class PinError(Exception):
    """The notebooks cannot be pinned (nothing was changed)."""


def _git(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)


def library_changes(commit: str, root: Path = config.REPO_ROOT) -> list[str]:
    """The files of :data:`LIBRARY_PATHS` whose working-tree content differs from ``commit``'s
    (untracked files included); ``["<reason>"]`` when ``commit`` is not in this clone's history
    of ``HEAD``."""
    if _git(root, "merge-base", "--is-ancestor", commit, "HEAD").returncode:
        shallow = _git(root, "rev-parse", "--is-shallow-repository").stdout.strip() == "true"
        return [f"commit {commit[:12]} is not in the history of HEAD"
                + (" (this clone is shallow: git fetch --unshallow)" if shallow else "")]
    changed = _git(root, "diff", "--name-only", commit, "--", *LIBRARY_PATHS).stdout.split()
    untracked = _git(root, "ls-files", "--others", "--exclude-standard", "--",
                     *LIBRARY_PATHS).stdout.split()
    return sorted({*changed, *untracked})


def library_commit(root: Path = config.REPO_ROOT) -> str:
    """The last commit that changed :data:`LIBRARY_PATHS`: the pin ``sync`` writes.

    Raises:
        PinError: outside a git checkout, or while the library has uncommitted changes (a pin
            cannot name them: commit the library first).
    """
    found = _git(root, "log", "-1", "--format=%H", "HEAD", "--", *LIBRARY_PATHS)
    if found.returncode or not found.stdout.strip():
        raise PinError(f"{root} is not a git checkout with a committed library: the notebooks "
                       f"pin a commit. git said: {found.stderr.strip()}")
    commit = found.stdout.strip()
    uncommitted = library_changes(commit, root)
    if uncommitted:
        raise PinError("the library has uncommitted changes, which no commit holds yet: "
                       f"{', '.join(uncommitted[:5])}. Commit them, then sync again.")
    return commit


def pinned_commit(source: str) -> str | None:
    """The commit a setup cell's source pins, or None."""
    match = PIN.search(source)
    return match[1] if match else None


def setup_cell_source(notebook: str, commit: str, url: str = config.REPOSITORY_URL) -> str:
    """Source of the setup cell of notebook ``"04"`` pinned to ``commit``: the same in every
    notebook but the number and the pin."""
    return f'''# Setup: the same cell in every notebook but for its number (`python -m
# seqlab_instructor.notebook_files sync` writes it). It resolves the parameters cell's FAST and
# SIZE once, into RUN. On Colab it first fetches the commit of seqlab this notebook was
# built with (a copy you saved keeps running the same code), checks the runtime's versions (an old
# Keras is upgraded alone; TensorFlow is never reinstalled) and installs only what Colab lacks.
import os
import subprocess
import sys

if "google.colab" in sys.modules:
    commit = "{commit}"  # the seqlab this notebook runs
    url = "{url}"
    if not os.path.isdir("seqlab/src"):
        for git in (["init", "-q", "seqlab"], ["-C", "seqlab", "fetch", "-q", "--depth=1", url,
                    commit], ["-C", "seqlab", "checkout", "-q", commit]):
            done = subprocess.run(["git", *git], capture_output=True, text=True)
            if done.returncode:
                raise RuntimeError(f"Could not fetch seqlab's commit {{commit[:12]}}, the one this "
                                   f"notebook was built with: {{done.stderr.strip()}} Check the "
                                   "connection and run this cell again.")
    sys.path.insert(0, os.path.abspath("seqlab/src"))
    import seqlab.course.notebook

    seqlab.course.notebook.prepare_colab("seqlab", commit=commit)

import seqlab.course.notebook

RUN = seqlab.course.notebook.setup(fast=FAST, size=SIZE, notebook="{notebook}")'''


def colab_badge(notebook_path: str, url: str = config.REPOSITORY_URL,
                ref: str = config.REPOSITORY_BRANCH) -> str:
    """Markdown for the "Open in Colab" badge of a notebook given relative to the repo root."""
    github = url.removeprefix("https://github.com/").rstrip("/")
    target = f"https://colab.research.google.com/github/{github}/blob/{ref}/{notebook_path}"
    return f"[![Open In Colab]({BADGE_IMAGE})]({target})"


def sync_notebook(path: Path, root: Path = config.REPO_ROOT, write: bool = True,
                  commit: str | None = None) -> list[str]:
    """Make one notebook's setup cell, pin and badge right. Returns what differed.

    A pin whose library equals the working tree's is kept; another is replaced by ``commit``
    (default: :func:`library_commit`, computed only when needed).
    """
    import nbformat

    nb = nbformat.read(path, as_version=4)
    problems: list[str] = []
    relative = path.resolve().relative_to(root.resolve()).as_posix()
    badge = colab_badge(relative)
    setup_cells = [c for c in nb.cells if c.cell_type == "code" and has_tag(c, SETUP_TAG)]
    if len(setup_cells) != 1:
        problems.append(f"{relative}: expected exactly one code cell tagged '{SETUP_TAG}', "
                        f"found {len(setup_cells)}")
    else:
        pin = pinned_commit(setup_cells[0].source)
        changes = library_changes(pin, root) if pin else ["no pin"]
        if changes:
            problems.append(f"{relative}: the library at its pin {pin[:12]} differs from this "
                            f"tree's ({', '.join(changes[:3])}{', ...' if changes[3:] else ''})"
                            if pin else f"{relative}: its setup cell pins no commit")
            if write:
                pin = commit or library_commit(root)
        expected = setup_cell_source(notebook_number(path), pin or "0" * 40)
        if setup_cells[0].source != expected:
            if not changes:
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
    """Point the README's Colab badges at the branch (``colab_badge``'s ref). Returns what
    differed."""
    github = config.REPOSITORY_URL.removeprefix("https://github.com/").rstrip("/")
    text = path.read_text(encoding="utf-8")
    synced = re.sub(rf"(colab\.research\.google\.com/github/{re.escape(github)}/blob/)[^/]+/",
                    rf"\g<1>{config.REPOSITORY_BRANCH}/", text)
    if synced == text:
        return []
    if write:
        path.write_text(synced, encoding="utf-8")
    return [f"{path.name}: Colab badges point elsewhere than {config.REPOSITORY_BRANCH}"]


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
    try:
        commit = library_commit() if args.command == "sync" else None
    except PinError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    for folder in folders:
        for path in notebook_paths(folder):
            problems += sync_notebook(path, write=args.command == "sync", commit=commit)
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
