"""The course book: the executed notebooks, their student copies and ``docs/`` as one website.

    python -m seqlab_instructor.runner                                            # FAST runs -> runs/
    python -m seqlab_instructor.runner --notebooks assignments --output runs/assignments   # optional
    python -m seqlab_instructor.site [--runs runs/] [--out site/]                 # -> site/index.html

Built with Sphinx, myst-nb and sphinx-book-theme (``requirements.txt``): a sidebar with every
notebook in course order and its student copy nested under it, previous/next links, a table
of contents per page, a Colab badge per notebook and per student copy, and ``docs/`` plus
``benchmarks/README.md`` as the maintainers' part. Everything the pages load is in ``site/``
(MathJax included, from ``sphinx-mathjax-offline``), so the book reads offline, from disk or
from any static host (GitHub Pages).

Nothing is executed here (``nb_execution_mode = "off"``): each page is the notebook's run from
``runs/`` (left there by ``pytest`` or ``python -m seqlab_instructor.runner``), papermill's injected
parameters cell removed and stderr (TensorFlow's log lines) dropped. With no executed notebook
in ``runs/`` the build stops and says how to make them; ``--allow-unexecuted`` renders the
notebooks without outputs instead. A notebook missing from ``runs/`` is rendered unexecuted
with a warning on its page and on the console, never silently. Student copies come from
``runs/assignments/`` when executed there, otherwise from ``assignments/`` (expected: the
exercises are empty, the checks say what is missing).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

import nbformat

from seqlab import config
from seqlab_instructor.cells import INJECTED_PARAMETERS_TAG, REMOVE_CELL_TAG, add_tag, has_tag
from seqlab_instructor.notebook_files import BADGE_IMAGE, colab_badge, notebook_paths

STUDENT_RUNS = "assignments"  # runs/assignments/: executed student copies, if any
#: Maintainer pages, in the order the book lists them (those that exist are included).
DOC_PAGES = ("docs/instructors.md", "docs/gradescope.md", "docs/gradebooks.md", "docs/similarity.md",
             "docs/resuming.md", "docs/architecture.md", "docs/conventions.md", "docs/hardware.md",
             "docs/versions-and-ci.md", "benchmarks/README.md")

SPHINX_SETTINGS = {
    "project": "seqlab",
    "author": "the seqlab course authors",
    "html_title": "seqlab: sequence models on Keras 3",
    "extensions": ["myst_nb", "sphinx-mathjax-offline"],
    "html_theme": "sphinx_book_theme",
    "html_theme_options": {
        "home_page_in_toc": True,
        "show_toc_level": 2,
        "show_navbar_depth": 1,
        "use_download_button": True,
    },
    "html_static_path": ["_static"],
    "html_css_files": ["seqlab.css"],
    "html_copy_source": False,
    "html_show_sourcelink": False,
    # The notebooks are rendered as they ran; nothing is executed while building.
    "nb_execution_mode": "off",
    "nb_output_stderr": "remove",
    "nb_merge_streams": True,
    "myst_enable_extensions": ["dollarmath", "amsmath", "colon_fence"],
    "myst_heading_anchors": 3,
    "exclude_patterns": ["_build", "**.ipynb_checkpoints"],
    "suppress_warnings": ["mystnb.unknown_mime_type", "misc.highlighting_failure"],
}


#: Drawn here rather than loaded from colab.research.google.com, so the book works offline.
COLAB_BADGE_SVG = """<svg xmlns="http://www.w3.org/2000/svg" width="117" height="20" role="img"
 aria-label="Open in Colab"><rect width="117" height="20" rx="3" fill="#555"/>
<rect x="20" width="97" height="20" rx="3" fill="#e8710a"/><rect x="20" width="6" height="20"
 fill="#e8710a"/><circle cx="8" cy="10" r="4" fill="none" stroke="#f9ab00" stroke-width="2.5"/>
<circle cx="14" cy="10" r="4" fill="none" stroke="#e8710a" stroke-width="2.5"/>
<text x="68" y="14" fill="#fff" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11"
 text-anchor="middle">Open in Colab</text></svg>
"""
LOCAL_BADGE = "/images/open-in-colab.svg"  # MyST: "/" is the book's source folder
#: Room for the notebooks' 100-column code cells on a wide screen; wide figures shrink to fit.
BOOK_CSS = """.bd-page-width { max-width: 100rem; }
.bd-main .bd-content .bd-article-container { max-width: 64rem; }
div.cell_output img { max-width: 100%; height: auto; }
"""


class NoExecutedNotebooks(FileNotFoundError):
    """``runs/`` holds no executed notebook and unexecuted pages were not allowed."""


@dataclass
class Page:
    """One notebook page of the book: its document name and whether its outputs are a run's."""

    docname: str
    title: str
    executed: bool


def notebook_title(notebook) -> str:
    """The first Markdown heading of the notebook, without the ``#`` marks."""
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("#"):
                    return line.lstrip("#").strip()
    return ""


def is_executed(notebook) -> bool:
    """True when at least one code cell carries an execution count or outputs."""
    return any(cell.get("execution_count") or cell.get("outputs")
               for cell in notebook.cells if cell.cell_type == "code")


def _read(path: Path):
    from nbformat.warnings import MissingIDFieldWarning

    with warnings.catch_warnings():  # papermill's injected-parameters cell has no id
        warnings.simplefilter("ignore", MissingIDFieldWarning)
        notebook = nbformat.read(path, as_version=4)
    nbformat.validator.normalize(notebook)
    return notebook


def _retitle(notebook, suffix: str) -> None:
    """Append ``suffix`` to the first heading, so the sidebar tells the two copies apart."""
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            lines = cell.source.splitlines()
            for i, line in enumerate(lines):
                if line.startswith("#"):
                    lines[i] = line + suffix
                    cell.source = "\n".join(lines)
                    return


def offline_badges(markdown: str) -> str:
    """The same Colab links, with the badge image served by the book instead of by Colab."""
    return markdown.replace(BADGE_IMAGE, LOCAL_BADGE)


def _insert_after_title(notebook, markdown: str) -> None:
    index = 1 if notebook.cells and notebook.cells[0].cell_type == "markdown" else 0
    notebook.cells.insert(index, nbformat.v4.new_markdown_cell(markdown))


def stage_notebook(source: Path, target: Path, *, links: str, executed_warning: str | None,
                   retitle: str = "", toctree: list[str] | None = None) -> bool:
    """Copy one notebook into the book's source folder, ready for myst-nb; return whether it
    was executed. Papermill's injected parameters cell is tagged ``remove-cell``; ``links``
    (Markdown) goes under the title, with ``executed_warning`` as a warning box when the
    notebook has no outputs; ``toctree`` lists documents nested under this page."""
    notebook = _read(source)
    executed = is_executed(notebook)
    for cell in notebook.cells:
        if has_tag(cell, INJECTED_PARAMETERS_TAG):
            add_tag(cell, REMOVE_CELL_TAG)
    if retitle:
        _retitle(notebook, retitle)
    note = links
    if not executed and executed_warning:
        note += f"\n\n```{{warning}}\n{executed_warning}\n```"
    if toctree:
        note += "\n\n```{toctree}\n:hidden:\n\n" + "\n".join(toctree) + "\n```"
    _insert_after_title(notebook, note)
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            cell.source = offline_badges(cell.source)
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, target)
    return executed


def _index(pages: list[tuple[Page, Page | None]], docs: list[str]) -> str:
    rows = []
    for page, student in pages:
        number = Path(page.docname).name[:2]
        solution = f"[{page.title}]({page.docname}.ipynb)"
        copy = f"[student copy]({student.docname}.ipynb)" if student else "–"
        badges = colab_badge(page.docname + ".ipynb")
        student_badge = colab_badge(student.docname + ".ipynb") if student else "–"
        executed = "" if page.executed else " *(not executed)*"
        rows.append(f"| {number} | {solution}{executed} | {badges} | {copy} | {student_badge} |")
    toctree_notebooks = "\n".join(page.docname for page, _ in pages)
    toctree_docs = "\n".join(docs)
    docs_part = (f"\n```{{toctree}}\n:caption: For instructors and maintainers\n:maxdepth: 1\n\n"
                 f"{toctree_docs}\n```\n" if docs else "")
    return f"""# Overview

Course notebooks on recurrent networks, attention and the Transformer, shown as they last ran,
with their outputs and plots (CI runs them in FAST mode: offline sample data, small models).
Each notebook has a student copy beside it: the exercises without their solutions.

To run one yourself, open it in Colab. There it starts in full mode (real data, downloads,
models of a useful size: use a GPU runtime); to get the quick offline FAST run instead, set
`FAST = True` in its parameters cell, or run `%env SEQLAB_FAST=1` in a cell before the others.

| # | notebook (with solutions) | Colab | student copy | Colab |
|---|---|---|---|---|
{chr(10).join(rows)}

```{{toctree}}
:caption: Notebooks
:maxdepth: 2
:hidden:

{toctree_notebooks}
```
{docs_part}"""


def _stage_docs(root: Path, source: Path) -> list[str]:
    """Copy the maintainer pages (and images next to them) into the book; return docnames."""
    names = []
    for relative in DOC_PAGES:
        page = root / relative
        if page.is_file():
            (source / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(page, source / relative)
            names.append(relative.removesuffix(".md"))
    images = root / "docs" / "images"
    if images.is_dir():
        shutil.copytree(images, source / "docs" / "images", dirs_exist_ok=True)
    return names


def stage_book(source: Path, runs: Path, *, notebooks: Path, assignments: Path,
               root: Path, allow_unexecuted: bool = False) -> list[tuple[Page, Page | None]]:
    """Write the book's source (notebooks, student copies, docs, ``index.md``) into ``source``."""
    paths = notebook_paths(notebooks)
    if not paths:
        raise FileNotFoundError(f"No notebooks (*.ipynb) in {notebooks}")
    runs_present = [p for p in paths if (runs / p.name).is_file() and is_executed(_read(runs / p.name))]
    if not runs_present and not allow_unexecuted:
        raise NoExecutedNotebooks(
            f"No executed notebook in {runs}: run them first (`python -m seqlab_instructor.runner`, or "
            "`pytest`, which leaves its runs there), or pass --allow-unexecuted to build the "
            "book from the notebooks without outputs.")
    pages = []
    for path in paths:
        run = runs / path.name
        doc = f"notebooks/{path.stem}"
        student_source = next((c for c in (runs / STUDENT_RUNS / path.name, assignments / path.name)
                               if c.is_file()), None)
        student_doc = f"assignments/{path.stem}" if student_source else None
        links = ("**Student copy** (exercises without solutions): "
                 f"[read it](../{student_doc}.ipynb) · "
                 f"{colab_badge(student_doc + '.ipynb')}" if student_doc else
                 "*No student copy in `assignments/` for this notebook.*")
        executed = stage_notebook(
            run if run.is_file() else path, source / f"{doc}.ipynb", links=links,
            executed_warning=("Not executed: no run of this notebook in `runs/`, so this "
                              "page shows it without outputs. Run `python -m seqlab_instructor.runner` "
                              "and rebuild the book."),
            toctree=[f"../{student_doc}"] if student_doc else None)
        if not executed:
            print(f"warning: {path.name} has no run in {runs}; rendered without outputs",
                  file=sys.stderr)
        title = notebook_title(_read(path)) or path.stem
        page = Page(doc, title, executed)
        student = None
        if student_source is not None:
            student_executed = stage_notebook(
                student_source, source / f"{student_doc}.ipynb",
                links=(f"**Solutions**: [the notebook](../{doc}.ipynb) · "
                       f"{colab_badge(doc + '.ipynb')}"),
                executed_warning=None, retitle=" — student copy")
            student = Page(student_doc, f"{title} — student copy", student_executed)
        pages.append((page, student))
    docs = _stage_docs(root, source)
    (source / "index.md").write_text(offline_badges(_index(pages, docs)), encoding="utf-8")
    (source / LOCAL_BADGE.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
    (source / LOCAL_BADGE.lstrip("/")).write_text(COLAB_BADGE_SVG, encoding="utf-8")
    (source / "_static").mkdir(exist_ok=True)
    (source / "_static" / "seqlab.css").write_text(BOOK_CSS, encoding="utf-8")
    (source / "conf.py").write_text(
        "# Written by seqlab_instructor.site; edit SPHINX_SETTINGS there.\n"
        + "".join(f"{key} = {value!r}\n" for key, value in SPHINX_SETTINGS.items()),
        encoding="utf-8")
    return pages


def build_site(runs: Path | None = None, out: Path | None = None, *,
               notebooks: Path | None = None, assignments: Path | None = None,
               root: Path | None = None, allow_unexecuted: bool = False,
               quiet: bool = True) -> Path:
    """Build the book into ``out`` (default ``site/``) and return the path of its index page."""
    from sphinx.application import Sphinx

    root = Path(root or config.REPO_ROOT)
    runs = Path(runs or config.RUNS_DIR)
    out = Path(out or root / "site")
    notebooks = Path(notebooks or root / "notebooks")
    assignments = Path(assignments or root / "assignments")
    with tempfile.TemporaryDirectory(prefix="seqlab-book-") as scratch:
        source = Path(scratch) / "source"
        stage_book(source, runs, notebooks=notebooks, assignments=assignments, root=root,
                   allow_unexecuted=allow_unexecuted)
        # Built inside the scratch folder: myst-nb writes beside the output folder too.
        html = Path(scratch) / "html"
        with warnings.catch_warnings():  # extensions' use of APIs Sphinx will remove: not ours
            warnings.simplefilter("ignore", PendingDeprecationWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            app = Sphinx(str(source), str(source), str(html), str(Path(scratch) / "doctrees"),
                         "html", status=None if quiet else sys.stdout, warning=sys.stderr,
                         freshenv=True)
            app.build()
        if app.statuscode:
            raise RuntimeError(f"Sphinx failed with status {app.statuscode}")
        if out.exists():
            shutil.rmtree(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(html, out)
    return out / "index.html"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m seqlab_instructor.site", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=Path, default=config.RUNS_DIR,
                        help="executed notebooks (default runs/)")
    parser.add_argument("--out", type=Path, default=config.REPO_ROOT / "site",
                        help="where the HTML goes (default site/)")
    parser.add_argument("--allow-unexecuted", action="store_true",
                        help="build even when runs/ holds no executed notebook")
    parser.add_argument("--verbose", action="store_true", help="show Sphinx's progress")
    args = parser.parse_args(argv)
    try:
        index = build_site(args.runs, args.out, allow_unexecuted=args.allow_unexecuted,
                           quiet=not args.verbose)
    except FileNotFoundError as error:
        print(error, file=sys.stderr)
        return 2
    print(f"wrote {index}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
