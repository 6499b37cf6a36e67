"""seqlab_instructor.notebook_files: the generated setup cell and badges, and the sync/check
command."""

import os
import subprocess
import sys

import nbformat
import pytest

from seqlab import config
from seqlab_instructor import notebook_files

PIN = "0123456789abcdef0123456789abcdef01234567"


def test_setup_cell_installs_on_colab_only_and_names_the_repo_once():
    source = notebook_files.setup_cell_source("04", PIN)
    assert source.count(config.REPOSITORY_URL) == 1
    assert '"google.colab" in sys.modules' in source
    # Colab keeps its own TensorFlow/Keras: the cell never installs them explicitly.
    code_lines = [line for line in source.lower().splitlines() if not line.startswith("#")]
    assert not [line for line in code_lines if "tensorflow" in line or "keras" in line]
    compile(source, "<setup cell>", "exec")


def test_badge_points_at_the_notebook_in_the_configured_repo():
    badge = notebook_files.colab_badge("notebooks/01_x.ipynb", url="https://github.com/a/b")
    assert badge.endswith("(https://colab.research.google.com/github/a/b/blob/main/notebooks/01_x.ipynb)")


def _write_notebook(path, setup_source="placeholder", badge="badge: " + notebook_files.BADGE_IMAGE):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell(f"# 99 · Test\n{badge}"),
        nbformat.v4.new_code_cell("FAST = None\nSIZE = None",
                                  metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell(setup_source, metadata={"tags": ["setup"]}),
    ]
    nbformat.write(nb, path)


def test_sync_rewrites_a_drifted_setup_cell_and_badge(tmp_path, monkeypatch):
    folder = tmp_path / "notebooks"
    folder.mkdir()
    path = folder / "99_test.ipynb"
    _write_notebook(path)
    monkeypatch.setattr(notebook_files, "library_changes", lambda commit, root: [])
    problems = notebook_files.sync_notebook(path, root=tmp_path, write=True, commit=PIN)
    assert len(problems) == 2 and problems[0].endswith("its setup cell pins no commit")
    assert notebook_files.sync_notebook(path, root=tmp_path, write=False) == []
    synced = nbformat.read(path, as_version=4)
    assert synced.cells[2].source == notebook_files.setup_cell_source("99", PIN)
    assert notebook_files.colab_badge("notebooks/99_test.ipynb") in synced.cells[0].source


def test_sync_reports_a_missing_setup_cell(tmp_path):
    path = tmp_path / "99_test.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# title " + notebook_files.BADGE_IMAGE)]
    nbformat.write(nb, path)
    problems = notebook_files.sync_notebook(path, root=tmp_path, write=False)
    assert any("exactly one code cell tagged 'setup'" in p for p in problems)


def test_committed_notebooks_are_in_sync():
    assert notebook_files.main(["check"]) == 0


def test_the_setup_cell_runs_the_colab_check_before_installing():
    source = notebook_files.setup_cell_source("04", PIN)
    assert source.index("prepare_colab") > source.index("git")
    assert "pip" not in source  # every install goes through prepare_colab
    assert source.rstrip().endswith('RUN = seqlab.course.notebook.setup(fast=FAST, size=SIZE, '
                                    'notebook="04")')


def test_setup_cells_differ_only_in_the_notebook_number():
    first, second = (notebook_files.setup_cell_source(n, PIN).splitlines() for n in ("01", "08"))
    assert [(a, b) for a, b in zip(first, second, strict=True) if a != b] == [
        (first[-1], first[-1].replace('"01"', '"08"'))]
    assert notebook_files.notebook_number(config.REPO_ROOT / "notebooks" / "04_x.ipynb") == "04"


def test_the_sync_command_the_setup_cell_names_answers():
    # The setup cell's first lines name `python -m seqlab_instructor.notebook_files sync`.
    source = notebook_files.setup_cell_source("04", PIN)
    assert "python -m\n# seqlab_instructor.notebook_files sync" in source
    result = subprocess.run([sys.executable, "-m", "seqlab_instructor.notebook_files", "check"],
                            capture_output=True, text=True, cwd=config.REPO_ROOT, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    broken = subprocess.run([sys.executable, "-m", "seqlab_instructor.notebook_files", "tidy"],
                            capture_output=True, text=True, cwd=config.REPO_ROOT, timeout=120)
    assert broken.returncode == 2 and "invalid choice: 'tidy'" in broken.stderr


def test_the_readmes_badges_open_the_branch(tmp_path):
    readme = tmp_path / "README.md"
    link = "https://colab.research.google.com/github/seqlab-course/seqlab/blob/{}/notebooks/01.ipynb"
    readme.write_text(f"[badge]({link.format('v0.1.0')}) and [other](https://example.org/blob/v1/)")
    assert notebook_files.sync_readme(readme, write=False)  # check: differs, file unchanged
    assert "blob/v0.1.0/notebooks" in readme.read_text()
    notebook_files.sync_readme(readme)
    assert readme.read_text() == (f"[badge]({link.format('main')}) and "
                                  "[other](https://example.org/blob/v1/)")
    assert notebook_files.sync_readme(readme) == []
    assert notebook_files.sync_readme(config.REPO_ROOT / "README.md", write=False) == []


def _repo(tmp_path):
    """A git repository with a library (src/seqlab, data, pyproject.toml) and a notebook."""
    env = {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME": "a",
           "GIT_COMMITTER_EMAIL": "a@b", "PATH": os.environ["PATH"]}

    def git(*args):
        return subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True,
                              text=True, env=env).stdout.strip()

    (tmp_path / "src" / "seqlab").mkdir(parents=True)
    (tmp_path / "src" / "seqlab" / "layers.py").write_text("def review_input(): ...\n")
    (tmp_path / "pyproject.toml").write_text("[project]\n")
    (tmp_path / "notebooks").mkdir()
    _write_notebook(tmp_path / "notebooks" / "99_test.ipynb",
                    badge=notebook_files.colab_badge("notebooks/99_test.ipynb"))
    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "library")
    return git


def test_a_notebook_pins_the_last_commit_that_changed_the_library(tmp_path):
    git = _repo(tmp_path)
    path = tmp_path / "notebooks" / "99_test.ipynb"
    library = git("rev-parse", "HEAD")
    assert notebook_files.library_commit(tmp_path) == library
    notebook_files.sync_notebook(path, root=tmp_path, commit=library)
    git("commit", "-qam", "pin")  # a commit outside the library keeps the pin valid
    assert notebook_files.library_commit(tmp_path) == library
    assert notebook_files.sync_notebook(path, root=tmp_path, write=False) == []

    # A library change the pin lacks: check fails, and sync refuses until it is committed.
    (tmp_path / "src" / "seqlab" / "layers.py").write_text("def reviews_as_input(): ...\n")
    problems = notebook_files.sync_notebook(path, root=tmp_path, write=False)
    assert problems == [f"notebooks/99_test.ipynb: the library at its pin {library[:12]} differs "
                        "from this tree's (src/seqlab/layers.py)"]
    with pytest.raises(notebook_files.PinError, match="uncommitted changes.*src/seqlab/layers.py"):
        notebook_files.library_commit(tmp_path)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "new.csv").write_text("untracked data counts too\n")
    assert "data/new.csv" in notebook_files.library_changes(library, tmp_path)
    git("add", ".")
    git("commit", "-qm", "rename")
    renamed = git("rev-parse", "HEAD")
    assert notebook_files.sync_notebook(path, root=tmp_path) != []  # re-pinned
    assert notebook_files.pinned_commit(nbformat.read(path, as_version=4).cells[2].source) == renamed
    assert notebook_files.sync_notebook(path, root=tmp_path, write=False) == []
    assert notebook_files.library_changes("0" * 40, tmp_path) == [
        "commit 000000000000 is not in the history of HEAD"]
