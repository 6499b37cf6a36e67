"""seqlab.notebook: setup() and the generated setup cell / badge."""

import nbformat

from seqlab import config, notebook


def test_setup_reports_versions_and_seeds_everything(capsys):
    import keras
    import numpy as np

    info = notebook.setup(seed=7)
    first = np.random.rand(3)
    notebook.setup(seed=7, quiet=True)
    assert np.array_equal(first, np.random.rand(3))
    assert info["keras"] == keras.__version__ and info["keras"].startswith("3.")
    out = capsys.readouterr().out
    assert "TensorFlow" in out and "Keras 3." in out and "FAST mode" in out


def test_setup_cell_installs_on_colab_only_and_names_the_repo_once():
    source = notebook.setup_cell_source()
    assert source.count(config.REPOSITORY_URL) == 1
    assert '"google.colab" in sys.modules' in source
    # Colab keeps its own TensorFlow/Keras: the cell never installs them explicitly.
    code_lines = [line for line in source.lower().splitlines() if not line.startswith("#")]
    assert not [line for line in code_lines if "tensorflow" in line or "keras" in line]
    compile(source, "<setup cell>", "exec")


def test_badge_points_at_the_notebook_in_the_configured_repo():
    badge = notebook.colab_badge("notebooks/01_x.ipynb", url="https://github.com/a/b", ref="v1")
    assert badge.endswith("(https://colab.research.google.com/github/a/b/blob/v1/notebooks/01_x.ipynb)")


def _write_notebook(path, setup_source="placeholder", badge="badge: " + notebook.BADGE_IMAGE):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell(f"# 99 · Test\n{badge}"),
        nbformat.v4.new_code_cell(setup_source, metadata={"tags": ["setup"]}),
    ]
    nbformat.write(nb, path)


def test_sync_rewrites_a_drifted_setup_cell_and_badge(tmp_path, monkeypatch):
    folder = tmp_path / "notebooks"
    folder.mkdir()
    path = folder / "99_test.ipynb"
    _write_notebook(path)
    problems = notebook.sync_notebook(path, root=tmp_path, write=True)
    assert len(problems) == 2
    assert notebook.sync_notebook(path, root=tmp_path, write=False) == []
    synced = nbformat.read(path, as_version=4)
    assert synced.cells[1].source == notebook.setup_cell_source()
    assert notebook.colab_badge("notebooks/99_test.ipynb") in synced.cells[0].source


def test_sync_reports_a_missing_setup_cell(tmp_path):
    path = tmp_path / "99_test.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# title " + notebook.BADGE_IMAGE)]
    nbformat.write(nb, path)
    problems = notebook.sync_notebook(path, root=tmp_path, write=False)
    assert any("exactly one code cell tagged 'setup'" in p for p in problems)


def test_committed_notebooks_are_in_sync():
    assert notebook.main(["check"]) == 0
