"""seqlab_instructor.notebook_files: the generated setup cell and badges, and the sync/check
command."""

import subprocess
import sys

import nbformat

from seqlab import config
from seqlab_instructor import notebook_files


def test_setup_cell_installs_on_colab_only_and_names_the_repo_once():
    source = notebook_files.setup_cell_source("04")
    assert source.count(config.REPOSITORY_URL) == 1
    assert '"google.colab" in sys.modules' in source
    # Colab keeps its own TensorFlow/Keras: the cell never installs them explicitly.
    code_lines = [line for line in source.lower().splitlines() if not line.startswith("#")]
    assert not [line for line in code_lines if "tensorflow" in line or "keras" in line]
    compile(source, "<setup cell>", "exec")


def test_badge_points_at_the_notebook_in_the_configured_repo():
    badge = notebook_files.colab_badge("notebooks/01_x.ipynb", url="https://github.com/a/b", ref="v1")
    assert badge.endswith("(https://colab.research.google.com/github/a/b/blob/v1/notebooks/01_x.ipynb)")


def _write_notebook(path, setup_source="placeholder", badge="badge: " + notebook_files.BADGE_IMAGE):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell(f"# 99 · Test\n{badge}"),
        nbformat.v4.new_code_cell("FAST = None\nSIZE = None\nSTRATEGY = None",
                                  metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell(setup_source, metadata={"tags": ["setup"]}),
    ]
    nbformat.write(nb, path)


def test_sync_rewrites_a_drifted_setup_cell_and_badge(tmp_path, monkeypatch):
    folder = tmp_path / "notebooks"
    folder.mkdir()
    path = folder / "99_test.ipynb"
    _write_notebook(path)
    problems = notebook_files.sync_notebook(path, root=tmp_path, write=True)
    assert len(problems) == 2
    assert notebook_files.sync_notebook(path, root=tmp_path, write=False) == []
    synced = nbformat.read(path, as_version=4)
    assert synced.cells[2].source == notebook_files.setup_cell_source("99")
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
    source = notebook_files.setup_cell_source("04")
    assert source.index("prepare_colab") > source.index("git")
    assert "pip" not in source  # every install goes through prepare_colab
    assert source.rstrip().endswith('RUN = seqlab.course.notebook.setup(fast=FAST, size=SIZE, '
                                    'strategy=STRATEGY, notebook="04")')


def test_setup_cells_differ_only_in_the_notebook_number():
    first, second = (notebook_files.setup_cell_source(n).splitlines() for n in ("01", "08"))
    assert [(a, b) for a, b in zip(first, second, strict=True) if a != b] == [
        (first[-1], first[-1].replace('"01"', '"08"'))]
    assert notebook_files.notebook_number(config.REPO_ROOT / "notebooks" / "04_x.ipynb") == "04"


def test_the_sync_command_the_setup_cell_names_answers():
    # The setup cell's first lines name `python -m seqlab_instructor.notebook_files sync`.
    source = notebook_files.setup_cell_source("04")
    assert "python -m\n# seqlab_instructor.notebook_files sync" in source
    result = subprocess.run([sys.executable, "-m", "seqlab_instructor.notebook_files", "check"],
                            capture_output=True, text=True, cwd=config.REPO_ROOT, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    broken = subprocess.run([sys.executable, "-m", "seqlab_instructor.notebook_files", "tidy"],
                            capture_output=True, text=True, cwd=config.REPO_ROOT, timeout=120)
    assert broken.returncode == 2 and "invalid choice: 'tidy'" in broken.stderr


def test_the_readmes_badges_open_the_release(tmp_path):
    readme = tmp_path / "README.md"
    link = "https://colab.research.google.com/github/seqlab-course/seqlab/blob/{}/notebooks/01.ipynb"
    readme.write_text(f"[badge]({link.format('main')}) and [other](https://example.org/blob/main/)")
    assert notebook_files.sync_readme(readme, write=False)  # check: differs, file unchanged
    assert "blob/main/notebooks" in readme.read_text()
    notebook_files.sync_readme(readme)
    assert readme.read_text() == (f"[badge]({link.format(config.REPOSITORY_REF)}) and "
                                  "[other](https://example.org/blob/main/)")
    assert notebook_files.sync_readme(readme) == []
    assert notebook_files.sync_readme(config.REPO_ROOT / "README.md", write=False) == []
