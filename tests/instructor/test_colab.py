"""Notebooks as Colab runs them: the setup cell fetches the commit it pins from a bare repository
standing in for GitHub that holds only the branch (no tags), in a folder holding nothing else,
with a ``google.colab`` stand-in imported.

Two kinds of runtime:

- this interpreter, where seqlab is installed already (so the setup cell installs nothing): a
  copy built at commit A keeps running A's library after a breaking change lands on ``main``;
- Colab's packages alone (``SEQLAB_COLAB_PYTHON``: a Python whose environment holds
  ``.ci/colab-preinstalled.txt`` and no seqlab; ``.ci/run`` makes one): each emulated runtime is a
  fresh virtual environment layered over it, so the setup cell's install runs for real and
  lands in that runtime alone. Every notebook and student copy on ``main`` runs its setup cell
  and first lesson cells there, and TFDS imports fully after the setup cell despite Colab's
  protobuf / tensorflow-metadata pair.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from seqlab import config
from seqlab_instructor import notebook_files

pytestmark = pytest.mark.skipif(
    shutil.which("git") is None or not (config.REPO_ROOT / ".git").exists(),
    reason="needs git and a git checkout of the project")

IDENTITY = {"GIT_AUTHOR_NAME": "Instructor", "GIT_AUTHOR_EMAIL": "instructor@example.org",
            "GIT_COMMITTER_NAME": "Instructor", "GIT_COMMITTER_EMAIL": "instructor@example.org"}
COLAB_PYTHON = os.environ.get("SEQLAB_COLAB_PYTHON")
needs_colab_packages = pytest.mark.skipif(
    not COLAB_PYTHON, reason="needs SEQLAB_COLAB_PYTHON: a Python with Colab's packages alone "
    "(.ci/colab-preinstalled.txt, no seqlab), as .ci/run makes")
#: Printed between cells, so each cell's output can be read on its own.
CELL_END = "<<end of cell {}>>"


def _git(root, *args, env=None):
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True,
                          env=env).stdout


def _env(**extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("SEQLAB_HOME", "PYTHONPATH", "SEQLAB_FAST", "SEQLAB_SIZE")}
    return {**env, **IDENTITY, **extra}


def _github(tmp_path, source=config.REPO_ROOT):
    """A bare repository holding ``source``'s HEAD as its only branch, ``main``: no tags."""
    github = tmp_path / "github.git"
    _git(tmp_path, "init", "-q", "--bare", "--initial-branch=main", str(github))
    _git(source, "push", "-q", "--no-follow-tags", str(github), "HEAD:refs/heads/main")
    assert _git(github, "tag", "--list") == ""
    return github


def code_cells(notebook_text: str) -> list[str]:
    return ["".join(cell["source"]) for cell in json.loads(notebook_text)["cells"]
            if cell["cell_type"] == "code"]


def first_lesson_cells(cells: list[str]) -> int:
    """How many code cells to run: the parameters, setup and imports cells, the backups cell,
    and the first lesson cell after it."""
    return next(i for i, source in enumerate(cells) if "KEEP_BACKUPS_ON_DRIVE" in source) + 2


def run_like_colab(notebook_text, folder, github, *, cells=None, python=sys.executable,
                   after="", checkout=None, **env):
    """Run the first ``cells`` code cells (default: :func:`first_lesson_cells`) of a notebook as
    Colab would, in a fresh folder, then ``after``; returns the finished process."""
    folder.mkdir()
    (folder / "google" / "colab").mkdir(parents=True)  # google: a namespace, as protobuf's
    (folder / "google" / "colab" / "__init__.py").write_text('"""Colab stand-in: its name."""\n')
    content = folder / "content"
    content.mkdir()
    if checkout:
        _git(content, "clone", "-q", "--branch", checkout, f"file://{github}", "seqlab")
    sources = code_cells(notebook_text)
    sources = sources[:cells or first_lesson_cells(sources)]
    script = ("import sys\nimport google.colab\nnamespace = {}\n"
              f"for index, source in enumerate({sources!r}):\n"
              "    exec(compile(source, f'<cell {index}>', 'exec'), namespace)\n"
              f"    end = {CELL_END!r}.format(index)\n"
              "    print(end, flush=True)\n    print(end, file=sys.stderr, flush=True)\n"
              + after)
    redirect = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": f"url.file://{github}.insteadOf",
                "GIT_CONFIG_VALUE_0": config.REPOSITORY_URL}
    return subprocess.run([str(python), "-c", script], cwd=content, capture_output=True,
                          text=True, timeout=600,
                          env=_env(**{"PYTHONPATH": str(folder), "SEQLAB_FAST": "1", **redirect, **env}))


def cell_output(stream: str, index: int) -> str:
    """What cell ``index`` printed to ``stream``."""
    before = stream.split(CELL_END.format(index))[0]
    return before.split(CELL_END.format(index - 1))[-1] if index else before


def _sync_and_build(work):
    for step in (["seqlab_instructor.notebook_files", "sync"], ["seqlab_instructor.homework", "build"]):
        done = subprocess.run([sys.executable, "-m", *step], cwd=work, capture_output=True,
                              text=True, env=_env(PYTHONPATH=str(work / "src")))
        assert done.returncode == 0, done.stdout + done.stderr


# ------------------------------------------------------------------- on this interpreter

NOTEBOOK = "01_imdb_pretrained_embedding.ipynb"


def test_a_copy_keeps_its_commit_after_a_breaking_change_on_main_with_no_tag_anywhere(tmp_path):
    github = _github(tmp_path)
    work = tmp_path / "work"
    _git(tmp_path, "clone", "-q", str(github), str(work))
    copy_a = (work / "assignments" / NOTEBOOK).read_text(encoding="utf-8")
    pin_a = json.loads(copy_a)["metadata"]["seqlab"]["commit"]
    assert notebook_files.library_changes(pin_a, work) == []  # main's copy: main's library

    # The next commit on main breaks copy A's import: NNLM_EN_DIM50 is renamed; then the
    # notebooks are re-pinned to it and the copies rebuilt, as the sync check demands.
    for path in [*(work / "src").rglob("*.py"), *(work / "notebooks").glob("*.ipynb")]:
        text = path.read_text(encoding="utf-8")
        path.write_text(re.sub(r"\bNNLM_EN_DIM50\b", "NNLM_HANDLE", text), encoding="utf-8")
    _git(work, "commit", "-qam", "rename NNLM_EN_DIM50", env=_env())
    assert notebook_files.library_changes(pin_a, work) != []
    _sync_and_build(work)
    _git(work, "commit", "-qam", "pin the notebooks to the rename", env=_env())
    _git(work, "push", "-q", "origin", "HEAD:main")
    assert _git(github, "tag", "--list") == "" and "NNLM_EN_DIM50" not in _git(
        github, "show", "main:src/seqlab/layers/__init__.py")
    copy_b = (work / "assignments" / NOTEBOOK).read_text(encoding="utf-8")
    pin_b = json.loads(copy_b)["metadata"]["seqlab"]["commit"]
    assert pin_b == _git(work, "rev-parse", "HEAD~1").strip()

    show = "import seqlab.layers\nprint('holds', seqlab.layers.__file__, sorted(vars(seqlab.layers)))\n"
    ran = run_like_colab(copy_a, tmp_path / "a", github, after=show)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert "'NNLM_EN_DIM50'" in ran.stdout and "'NNLM_HANDLE'" not in ran.stdout
    assert str(tmp_path / "a" / "content" / "seqlab" / "src") in ran.stdout
    ran = run_like_colab(copy_b, tmp_path / "b", github, after=show)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert "'NNLM_HANDLE'" in ran.stdout and "'NNLM_EN_DIM50'" not in ran.stdout


def test_another_commits_checkout_or_an_unknown_commit_stops_with_one_message(tmp_path):
    github = _github(tmp_path)
    copy = (config.REPO_ROOT / "assignments" / NOTEBOOK).read_text(encoding="utf-8")
    pin = json.loads(copy)["metadata"]["seqlab"]["commit"]
    ran = run_like_colab(copy, tmp_path / "mixed", github, cells=2, checkout="main")
    assert ran.returncode != 0
    assert (f"built with seqlab's commit {pin[:12]}. Runtime > Disconnect and delete runtime"
            in ran.stderr)
    unknown = copy.replace(pin, "0" * 40)
    ran = run_like_colab(unknown, tmp_path / "unknown", github, cells=2)
    assert ran.returncode != 0
    assert "Could not fetch seqlab's commit 000000000000, the one this notebook was built with: " \
           "fatal: " in ran.stderr


# ------------------------------------------------------------------ on Colab's packages


def colab_runtime(folder: Path) -> Path:
    """A fresh runtime: a virtual environment seeing Colab's packages (``SEQLAB_COLAB_PYTHON``'s)
    behind its own, so what the setup cell installs lands here alone. Returns its Python."""
    base, site = subprocess.run(
        [COLAB_PYTHON, "-c", "import sys, sysconfig; print(sys._base_executable); "
         "print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True).stdout.split()
    subprocess.run([base, "-m", "venv", "--without-pip", str(folder)], check=True)
    python = folder / "bin" / "python"
    own = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         check=True, capture_output=True, text=True).stdout.strip()
    Path(own, "colab-packages.pth").write_text(f"import site; site.addsitedir({site!r})\n")
    return python


def _notebooks_on_main():
    return [path.relative_to(config.REPO_ROOT).as_posix()
            for folder in ("notebooks", "assignments")
            for path in notebook_files.notebook_paths(config.REPO_ROOT / folder)]


@pytest.fixture(scope="module")
def github_main(tmp_path_factory):
    return _github(tmp_path_factory.mktemp("github"))


@needs_colab_packages
@pytest.mark.parametrize("relative", _notebooks_on_main())
def test_every_notebook_and_student_copy_on_main_runs_on_colab(relative, github_main, tmp_path):
    text = (config.REPO_ROOT / relative).read_text(encoding="utf-8")
    python = colab_runtime(tmp_path / "runtime")
    ran = run_like_colab(text, tmp_path / "colab", github_main, python=python)
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-4000:]
    setup = cell_output(ran.stdout, 1) + cell_output(ran.stderr, 1)
    assert re.search(r"TensorFlow 2\.20\.0 \| Keras 3\.13\.2 \| FAST mode ON", setup), setup
    for noise in ("detached HEAD", "hint:", "Collecting", "Successfully installed", "WARNING",
                  "ERROR", "Traceback"):
        assert noise not in setup, setup  # git's advice, pip's progress and warnings
    print(f"{relative}: the setup cell's whole output\n{setup}")


@needs_colab_packages
def test_tensorflow_datasets_imports_fully_after_the_setup_cell_of_a_full_size_run(
        github_main, tmp_path):
    check = ("import tensorflow_datasets as tfds\n"
             "print('tfds.builder:', hasattr(tfds, 'builder'), tfds.builder('imdb_reviews').name)\n")
    bare = subprocess.run([colab_runtime(tmp_path / "bare"), "-c", check.replace(
        "tfds.builder('imdb_reviews').name", "''")], capture_output=True, text=True)
    # The stand-in holds Colab's pair: TFDS half-imports there before the setup cell.
    assert "tfds.builder: False" in bare.stdout, bare.stdout + bare.stderr[-2000:]
    text = (config.REPO_ROOT / "notebooks" / NOTEBOOK).read_text(encoding="utf-8")
    ran = run_like_colab(text, tmp_path / "colab", github_main, cells=2, after=check,
                         python=colab_runtime(tmp_path / "runtime"), SEQLAB_FAST="0",
                         SEQLAB_SIZE="full")
    assert ran.returncode == 0, ran.stderr[-4000:]
    assert "tfds.builder: True imdb_reviews" in ran.stdout
