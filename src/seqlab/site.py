"""Static HTML of the executed notebooks, to read without running anything.

    python -m seqlab.runner                                            # FAST runs -> runs/
    python -m seqlab.runner --notebooks assignments --output runs/assignments   # optional
    python -m seqlab.site [--runs runs/] [--out site/]                 # -> site/index.html

The index lists the notebooks in course order (``notebooks/NN_*.ipynb``) and links, for each,
the executed instructor notebook (outputs and plots included, rendered by nbconvert's
``HTMLExporter``; images are embedded, so ``site/`` is self-contained) and its student copy:
executed if ``runs/assignments/`` holds a run of it, otherwise the unexecuted copy from
``assignments/``, and the index says which. A notebook without a run in ``runs/`` is rendered
unexecuted and marked so, never silently.
"""

from __future__ import annotations

import argparse
import html
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import nbformat

from seqlab import config
from seqlab.notebook_files import notebook_paths

STUDENT_RUNS = "assignments"  # runs/assignments/: executed student copies, if any


@dataclass
class Page:
    """One rendered notebook: where its HTML is (relative to the site) and whether it ran."""

    href: str
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


def render(notebook_path: Path, html_path: Path) -> bool:
    """Render one notebook to a self-contained HTML page; return whether it was executed."""
    from nbconvert import HTMLExporter
    from nbformat.warnings import MissingIDFieldWarning

    with warnings.catch_warnings():  # papermill's injected-parameters cell has no id
        warnings.simplefilter("ignore", MissingIDFieldWarning)
        notebook = nbformat.read(notebook_path, as_version=4)
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(notebook)
    html_path.parent.mkdir(parents=True, exist_ok=True)
    html_path.write_text(body, encoding="utf-8")
    return is_executed(notebook)


def _render_first(candidates: list[Path], html_path: Path, site: Path) -> Page | None:
    for candidate in candidates:
        if candidate.is_file():
            return Page(html_path.relative_to(site).as_posix(), render(candidate, html_path))
    return None


def _link(page: Page | None, label: str, missing: str) -> str:
    if page is None:
        return html.escape(missing)
    label = f"executed {label}" if page.executed else label
    note = "" if page.executed else " <em>(not executed)</em>"
    return f'<a href="{html.escape(page.href)}">{html.escape(label)}</a>{note}'


def build_site(runs: Path | None = None, out: Path | None = None, *,
               notebooks: Path | None = None, assignments: Path | None = None) -> Path:
    """Render every notebook of ``notebooks`` (its run from ``runs`` when there is one) and its
    student copy into ``out``; write ``out/index.html`` and return its path."""
    runs = Path(runs or config.RUNS_DIR)
    out = Path(out or config.REPO_ROOT / "site")
    notebooks = Path(notebooks or config.REPO_ROOT / "notebooks")
    assignments = Path(assignments or config.REPO_ROOT / "assignments")
    paths = notebook_paths(notebooks)
    if not paths:
        raise FileNotFoundError(f"No notebooks (*.ipynb) in {notebooks}")
    rows = []
    for path in paths:
        instructor = _render_first([runs / path.name, path],
                                   out / "notebooks" / f"{path.stem}.html", out)
        student = _render_first([runs / STUDENT_RUNS / path.name, assignments / path.name],
                                out / "assignments" / f"{path.stem}.html", out)
        title = notebook_title(nbformat.read(path, as_version=4)) or path.stem
        rows.append(
            f"<tr><td>{html.escape(path.name[:2])}</td><td>{html.escape(title)}</td>"
            f"<td>{_link(instructor, 'notebook', '-')}</td>"
            f"<td>{_link(student, 'student copy', 'no student copy in assignments/')}</td></tr>"
        )
    index = out / "index.html"
    index.write_text(INDEX_TEMPLATE.format(rows="\n".join(rows)), encoding="utf-8")
    return index


INDEX_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>seqlab notebooks, executed</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; }}
table {{ border-collapse: collapse; width: 100%; }}
td, th {{ border-bottom: 1px solid #ddd; padding: 0.5rem; text-align: left; vertical-align: top; }}
</style>
</head>
<body>
<h1>seqlab: sequence models on Keras 3</h1>
<p>The course notebooks as executed in FAST mode (offline sample data, small models, a
stand-in for the pretrained TF-Hub module), with their outputs and plots, and the student
copies. A page marked <em>not executed</em> shows the notebook without outputs.</p>
<table>
<tr><th>#</th><th>notebook</th><th>instructor</th><th>student copy</th></tr>
{rows}
</table>
</body>
</html>
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m seqlab.site", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=Path, default=config.RUNS_DIR,
                        help="executed notebooks (default runs/)")
    parser.add_argument("--out", type=Path, default=config.REPO_ROOT / "site",
                        help="where the HTML goes (default site/)")
    args = parser.parse_args(argv)
    try:
        index = build_site(args.runs, args.out)
    except FileNotFoundError as error:
        print(error, file=sys.stderr)
        return 2
    print(f"wrote {index}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
