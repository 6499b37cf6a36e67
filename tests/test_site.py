"""seqlab.site: executed notebooks rendered to static HTML, with an index in course order."""

from __future__ import annotations

import base64

import nbformat

from seqlab.site import build_site, main

PNG = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c63f8ffff3f0005fe02fea7d6a4b50000000049454e44ae426082"
)).decode()


def _notebook(title, *, executed):
    code = nbformat.v4.new_code_cell("print('hello from the run')")
    if executed:
        code.execution_count = 1
        code.outputs = [
            nbformat.v4.new_output("stream", name="stdout", text="hello from the run\n"),
            nbformat.v4.new_output("display_data", data={"image/png": PNG, "text/plain": "<Figure>"}),
        ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(f"# {title}\n\nText."), code])
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Python 3"}
    return nb


def _course(tmp_path):
    folders = {name: tmp_path / name for name in ("notebooks", "assignments", "runs")}
    for folder in folders.values():
        folder.mkdir()
    for name, title in [("02_second.ipynb", "02 · Second"), ("01_first.ipynb", "01 · First")]:
        nbformat.write(_notebook(title, executed=False), folders["notebooks"] / name)
        nbformat.write(_notebook(title + " (student copy)", executed=False),
                       folders["assignments"] / name)
    nbformat.write(_notebook("01 · First", executed=True), folders["runs"] / "01_first.ipynb")
    return folders


def test_index_in_course_order_links_executed_pages_with_their_plots(tmp_path):
    folders = _course(tmp_path)
    index = build_site(folders["runs"], tmp_path / "site", notebooks=folders["notebooks"],
                       assignments=folders["assignments"])
    text = index.read_text(encoding="utf-8")
    assert text.index("01 · First") < text.index("02 · Second")
    assert 'href="notebooks/01_first.html"' in text and 'href="assignments/01_first.html"' in text
    executed = (tmp_path / "site" / "notebooks" / "01_first.html").read_text(encoding="utf-8")
    assert "hello from the run" in executed and f"data:image/png;base64,{PNG}" in executed
    # No run of 02 and no executed student copies: rendered without outputs, and said so.
    row_02 = text[text.index("02 · Second"):].split("</tr>")[0]
    assert row_02.count("(not executed)") == 2
    row_01 = text[text.index("01 · First"):].split("</tr>")[0]
    assert row_01.count("(not executed)") == 1  # only the student copy
    assert (tmp_path / "site" / "assignments" / "02_second.html").is_file()


def test_an_executed_student_copy_is_used_when_the_runner_made_one(tmp_path):
    folders = _course(tmp_path)
    (folders["runs"] / "assignments").mkdir()
    nbformat.write(_notebook("01 · First (student copy)", executed=True),
                   folders["runs"] / "assignments" / "01_first.ipynb")
    index = build_site(folders["runs"], tmp_path / "site", notebooks=folders["notebooks"],
                       assignments=folders["assignments"])
    row_01 = index.read_text(encoding="utf-8").split("01 · First")[1].split("</tr>")[0]
    assert "(not executed)" not in row_01


def test_command_line_reports_an_empty_notebook_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("seqlab.site.config.REPO_ROOT", tmp_path)
    assert main(["--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "site")]) == 2
    assert "No notebooks" in capsys.readouterr().err
