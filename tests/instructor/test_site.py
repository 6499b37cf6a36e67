"""seqlab_instructor.site: the course book (Sphinx + myst-nb) built from executed notebooks, offline."""

from __future__ import annotations

import base64
import re

import nbformat
import pytest

from seqlab_instructor.notebook_files import colab_badge
from seqlab_instructor.site import NoExecutedNotebooks, build_site, main, stage_book

PNG = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c63f8ffff3f0005fe02fea7d6a4b50000000049454e44ae426082"
)).decode()


def _notebook(title, *, executed, marker="hello from the run"):
    cells = [nbformat.v4.new_markdown_cell(f"# {title}\n\nThe recurrence $h_t = \\tanh(W x_t)$.")]
    cells.append(nbformat.v4.new_code_cell("FAST = False", metadata={"tags": ["parameters"]}))
    code = nbformat.v4.new_code_cell("print(MESSAGE)")  # the marker is in the outputs only
    if executed:
        # What papermill adds: the injected parameters cell, right after the parameters cell.
        cells.append(nbformat.v4.new_code_cell("# Parameters\nFAST = True  # injected",
                                               metadata={"tags": ["injected-parameters"]}))
        code.execution_count = 1
        code.outputs = [
            nbformat.v4.new_output("stream", name="stdout", text=marker + "\n"),
            nbformat.v4.new_output("stream", name="stderr", text="E0000 cuda_platform noise\n"),
            nbformat.v4.new_output("display_data", data={"image/png": PNG, "text/plain": "<Figure>"}),
        ]
    cells.append(code)
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Python 3"}
    return nb


def _course(tmp_path):
    folders = {name: tmp_path / name for name in ("notebooks", "assignments", "runs", "docs")}
    for folder in folders.values():
        folder.mkdir()
    (folders["runs"] / "assignments").mkdir()
    for name, title in [("02_second.ipynb", "02 · Second"), ("01_first.ipynb", "01 · First")]:
        nbformat.write(_notebook(title, executed=False), folders["notebooks"] / name)
        nbformat.write(_notebook(title, executed=False), folders["assignments"] / name)
    nbformat.write(_notebook("01 · First", executed=True), folders["runs"] / "01_first.ipynb")
    nbformat.write(_notebook("01 · First", executed=True, marker="the student copy ran"),
                   folders["runs"] / "assignments" / "01_first.ipynb")
    (folders["docs"] / "architecture.md").write_text("# How it is built\n\nText.\n")
    return folders


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    """One small book: 01 executed (and its student copy), 02 only as committed."""
    tmp_path = tmp_path_factory.mktemp("course")
    folders = _course(tmp_path)
    index = build_site(folders["runs"], tmp_path / "site", notebooks=folders["notebooks"],
                       assignments=folders["assignments"], root=tmp_path)
    return index.parent


def _text(html):
    return re.sub(r"<[^>]+>", "", html)


def _page(site, relative):
    return (site / relative).read_text(encoding="utf-8")


def test_index_lists_every_notebook_in_course_order_with_student_copies_and_docs(book):
    index = _page(book, "index.html")
    first, second = index.index('href="notebooks/01_first.html"'), index.index('href="notebooks/02_second.html"')
    assert first < second
    assert 'href="assignments/01_first.html"' in index and 'href="assignments/02_second.html"' in index
    assert 'href="docs/architecture.html"' in index and (book / "docs" / "architecture.html").is_file()
    assert not (book.parent / "jupyter_execute").exists()  # nothing written beside site/
    # One Colab link per notebook and per student copy, to the URLs the notebooks' badges use.
    for target in ("notebooks/01_first.ipynb", "assignments/01_first.ipynb",
                   "notebooks/02_second.ipynb", "assignments/02_second.ipynb"):
        url = colab_badge(target).rsplit("](", 1)[1].removesuffix(")")
        assert f'href="{url}"' in index, target


def test_an_executed_page_shows_outputs_and_plots_without_the_injected_cell_or_stderr(book):
    page = _page(book, "notebooks/01_first.html")
    assert "hello from the run" in page
    images = re.findall(r'<img[^>]+src="\.\./(_images/[^"]+\.png)"', page)
    assert images and all((book / image).is_file() for image in images)
    assert "FAST = True  # injected" not in page and "injected" not in page
    assert "FAST = False" in _text(page)  # the notebook's own parameters cell stays: it teaches
    assert "cuda_platform noise" not in page
    assert 'href="../assignments/01_first.html"' in page  # its student copy, beside it
    assert "Not executed" not in page


def test_navigation_math_and_everything_loaded_offline(book):
    page = _page(book, "notebooks/01_first.html")
    footer = page[page.index("prev-next-area"):][:3000]
    # Previous: the index; next: 01's student copy, nested under 01 in the sidebar.
    assert 'href="../index.html"' in footer and 'href="../assignments/01_first.html"' in footer
    assert re.search(r'class="[^"]*math[^"]*"', page) and r"\tanh" in page
    scripts = re.findall(r'<script[^>]+src="([^"]+)"', page)
    assert any(src.endswith("mathjax/tex-chtml.js") for src in scripts), scripts
    assert not [src for src in scripts if src.startswith(("http:", "https:", "//"))], scripts
    assert (book / "_static" / "mathjax" / "tex-chtml.js").is_file()


def test_student_copies_come_from_their_run_and_unexecuted_pages_say_so(book):
    assert "the student copy ran" in _page(book, "assignments/01_first.html")
    second = _page(book, "notebooks/02_second.html")
    assert "Not executed" in second and "hello from the run" not in second
    assert "student copy" in _page(book, "assignments/02_second.html")


def test_no_executed_notebook_stops_the_build_and_says_how_to_make_them(tmp_path, capsys):
    folders = _course(tmp_path)
    for run in folders["runs"].glob("*.ipynb"):
        run.unlink()
    with pytest.raises(NoExecutedNotebooks, match="python -m seqlab_instructor.runner"):
        stage_book(tmp_path / "source", folders["runs"], notebooks=folders["notebooks"],
                   assignments=folders["assignments"], root=tmp_path)
    pages = stage_book(tmp_path / "source", folders["runs"], notebooks=folders["notebooks"],
                       assignments=folders["assignments"], root=tmp_path, allow_unexecuted=True)
    assert [page.executed for page, _ in pages] == [False, False]
    assert "no run" in capsys.readouterr().err


def test_command_line_reports_missing_runs_and_an_empty_notebook_folder(tmp_path, monkeypatch,
                                                                       capsys):
    monkeypatch.setattr("seqlab_instructor.site.config.REPO_ROOT", tmp_path)
    (tmp_path / "notebooks").mkdir()
    assert main(["--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "site")]) == 2
    assert "No notebooks" in capsys.readouterr().err
    nbformat.write(_notebook("01 · First", executed=False), tmp_path / "notebooks" / "01_first.ipynb")
    assert main(["--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "site")]) == 2
    assert "No executed notebook" in capsys.readouterr().err
