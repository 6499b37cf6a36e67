"""Feedback a student can read: ``feedback/<student>.html``, their notebook with the verdicts.

Written by the grader, outside the sandbox, from its own :class:`~seqlab_instructor.homework.report.Grade`
(points, status, each check's message computed by :func:`~seqlab_instructor.homework.verdicts.judge`):
nothing the notebook prints decides what the page says about it. The page holds

- the points, the status and the grader's notes; a banner when the notebook did not run to
  the end (time limit, dead kernel, a cell that raised, an unreadable file);
- a table of every exercise's verdict, points and message (the words the student saw in Colab);
- the executed copy (``executed/<student>.ipynb``) rendered by nbconvert's HTML exporter, with
  each exercise's verdict in a box right under the exercise's cell, and a box where the run
  stopped or the cell that raised (the cell the status names).

Everything in the notebook is the student's, so untrusted: outputs keep only plain text and
PNG/JPEG/GIF images (HTML, SVG, JavaScript and widget outputs are dropped, said in their
place); nbconvert renders it (its template "basic": no scripts of its own); the whole result goes through
bleach with a short list of tags and attributes (no ``script``, no ``on*`` attributes, no
``style``, links only to http(s)/mailto/anchors, images only as ``data:image/png|jpeg|gif``),
which escapes the rest as visible text; and the page's Content-Security-Policy forbids every
script and every request. The grader's own boxes are added after that, from escaped text.
"""

from __future__ import annotations

import html
import re
import secrets
from pathlib import Path

from seqlab_instructor.cells import exercise_name
from seqlab_instructor.homework.collect import safe_name
from seqlab_instructor.homework.report import OK, TIMEOUT, Grade, points_text

#: The page may load nothing and run nothing: styles inline, images embedded.
CSP = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; "
       "form-action 'none'")
SAFE_MIMETYPES = ("text/plain", "image/png", "image/jpeg", "image/gif")
TAGS = {"a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "div", "dl", "dt", "em",
        "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "li", "ol", "p", "pre", "s",
        "span", "strong", "sub", "sup", "table", "tbody", "td", "th", "thead", "tr", "ul"}
IMAGE = re.compile(r"data:image/(png|jpeg|gif);base64,[A-Za-z0-9+/=\s]*\Z")
STATUS_WORDS = {
    TIMEOUT: "Your notebook did not finish: it reached the time limit",
    "kernel died": "Your notebook did not finish: its kernel died (out of memory, or it exited)",
    "error": "A cell of your notebook raised an error",
    "invalid": "Your file could not be read as a notebook",
    "unmatched": "Your file is not a copy of this assignment",
}
STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 60em; padding: 0 1em; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f6f6f6; padding: .5em; }
.jp-InputArea pre, .input_area pre { background: #eef2f7; }
.jp-Cell, .cell { margin: .6em 0; }
.jp-InputPrompt, .jp-OutputPrompt, .prompt { display: none; }
table { border-collapse: collapse; } td, th { border: 1px solid #ccc; padding: .3em .6em; }
.seqlab-banner { background: #fde2e1; border: 2px solid #c62828; padding: .8em; }
.seqlab-box { border-left: 6px solid; padding: .4em .8em; margin: .4em 0 1.2em; }
.seqlab-pass { border-color: #2e7d32; background: #e8f5e9; }
.seqlab-fail { border-color: #c62828; background: #fdecea; }
.seqlab-stop { border-color: #ef6c00; background: #fff3e0; }
"""


def _attribute_allowed(tag: str, name: str, value: str) -> bool:
    if name == "class":
        return "seqlab" not in value  # the grader's boxes cannot be imitated
    if tag == "a" and name == "href":
        return value.startswith(("http://", "https://", "mailto:", "#"))
    if tag == "a" and name == "title":
        return True
    if tag == "img":
        return (name == "src" and bool(IMAGE.match(value))) or name in ("alt", "width", "height")
    return name == "id" and tag in {"h1", "h2", "h3", "h4", "h5", "h6"}


def clean(fragment: str) -> str:
    """Student HTML made inert: unknown tags escaped as text, unsafe attributes dropped."""
    import bleach

    return bleach.Cleaner(tags=TAGS, attributes=_attribute_allowed,
                          protocols={"http", "https", "mailto", "data"}, strip=False,
                          strip_comments=True).clean(fragment)


def _safe_outputs(notebook) -> None:
    """Keep plain text and bitmap images of each output; say where anything else was."""
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            if output.get("output_type") not in ("display_data", "execute_result"):
                continue
            data = output.get("data", {})
            dropped = sorted(key for key in data if key not in SAFE_MIMETYPES)
            for key in dropped:
                del data[key]
            if dropped and "text/plain" not in data:
                data["text/plain"] = f"[output of type {', '.join(dropped)} not shown]"
        if cell.get("attachments"):
            cell.attachments = {}
    notebook.metadata.pop("widgets", None)


def _box(kind: str, title: str, message: str) -> str:
    return (f"<div class='seqlab-box seqlab-{kind}'><strong>{html.escape(title)}</strong>"
            + (f"<pre>{html.escape(message)}</pre>" if message else "") + "</div>")


def _verdict_box(result) -> str:
    return _box("pass" if result.passed else "fail",
                f"{'✓' if result.passed else '✗'} {result.name}: "
                f"{points_text(result.points)} / {points_text(result.max_points)} points",
                result.message)


def _stopped_at(grade: Grade) -> tuple[int, bool] | None:
    """``(cell index, before it?)`` of the cell the status names (time limit, error, kernel)."""
    match = re.search(r"(before|in|raised .*?) ?cell (\d+)|cell (\d+) raised", grade.reason)
    if grade.status == OK or not match:
        return None
    if match.group(3):
        return int(match.group(3)), False
    return int(match.group(2)), match.group(1) == "before"


def render_notebook(notebook, grade: Grade) -> tuple[str, list]:
    """The executed notebook as safe HTML with the grader's boxes; and the results not placed."""
    import nbformat

    notebook = nbformat.from_dict(nbformat.reads(nbformat.writes(notebook), as_version=4))
    _safe_outputs(notebook)
    nonce = secrets.token_hex(8)
    boxes: dict[str, str] = {}
    stop = _stopped_at(grade)
    unplaced = list(grade.results)
    new_cells = []

    def marker(box: str):
        key = f"SEQLABBOX{nonce}N{len(boxes)}"
        boxes[key] = box
        return nbformat.v4.new_markdown_cell(key)

    for index, cell in enumerate(notebook.cells):
        after = []
        if stop and stop[0] == index:
            box = _box("stop", "The run stopped before this cell: it and the cells after it "
                       "did not run" if stop[1] else "Here: " + STATUS_WORDS.get(
                           grade.status, grade.status).replace(" of your notebook", ""),
                       grade.reason)
            (new_cells if stop[1] else after).append(marker(box))
        label = exercise_name(cell) if cell.cell_type == "code" else None
        for result in [r for r in unplaced if r.name == label]:
            after.append(marker(_verdict_box(result)))
            unplaced.remove(result)
        new_cells += [cell, *after]
    notebook.cells = new_cells
    try:
        from nbconvert import HTMLExporter

        body, _ = HTMLExporter(template_name="basic",
                               exclude_anchor_links=True).from_notebook_node(notebook)
    except Exception:  # noqa: BLE001 - no nbconvert (it comes with nbgrader), or it failed
        body = "\n".join(f"<pre>{html.escape(c.source)}</pre>" for c in notebook.cells)
    body = clean(body)
    for key, box in boxes.items():
        body = re.sub(rf"<p>\s*{key}\s*</p>|{key}", lambda _m, box=box: box, body)
    return body, unplaced


def write_feedback_html(grade: Grade, out_dir: Path) -> Path:
    """``feedback/<student>.html``: the verdicts, and the student's notebook with them."""
    import nbformat

    esc = html.escape
    folder = Path(out_dir) / "feedback"
    folder.mkdir(parents=True, exist_ok=True)
    title = f"{grade.assignment or 'Unknown assignment'}: feedback for {grade.student}"
    parts = [f"<h1>{esc(title)}</h1>",
             f"<p>File <code>{esc(grade.file)}</code>. Points: <strong>"
             f"{points_text(grade.total)} / {points_text(grade.max_points)}</strong>. "
             f"Status: {esc(grade.status)}{esc(f' ({grade.reason})' if grade.reason else '')}.</p>"]
    if grade.status != OK:
        words = STATUS_WORDS.get(grade.status, f"Status: {grade.status}")
        parts.append(f"<div class='seqlab-banner'><strong>{esc(words)}.</strong> "
                     f"{esc(grade.reason)}<br>Exercises after that point earn no points; the "
                     "verdicts below say what the grader found.</div>")
    if grade.notes:
        parts.append("<ul>" + "".join(f"<li>Note: {esc(note)}</li>" for note in grade.notes)
                     + "</ul>")
    parts.append("<h2>Verdicts</h2><table><tr><th>exercise</th><th>points</th><th>check</th></tr>"
                 + "".join(f"<tr><td>{esc(r.name)}</td><td>{points_text(r.points)} / "
                           f"{points_text(r.max_points)}</td><td><pre>{esc(r.message)}</pre></td>"
                           "</tr>" for r in grade.results) + "</table>")
    for question, answer in grade.written.items():
        parts.append(f"<h3>{esc(question)}: graded by your instructor</h3>"
                     f"<pre>{esc(answer) if answer else '(no answer)'}</pre>")
    body, unplaced = None, []
    if grade.executed is not None and Path(grade.executed).is_file():
        try:
            body, unplaced = render_notebook(nbformat.read(grade.executed, as_version=4), grade)
        except Exception as error:  # noqa: BLE001 - a page that cannot render never stops grading
            body = (f"<p>Your notebook could not be shown here ({esc(type(error).__name__)}); "
                    "the verdicts above are complete.</p>")
    if body is None:
        parts.append("<h2>Your notebook</h2><p>No executed copy: the notebook was not run.</p>")
    else:
        if unplaced:
            parts.append("<h2>Exercises not found in your notebook</h2>"
                         + "".join(_verdict_box(r) for r in unplaced))
        parts.append("<h2>Your notebook as it ran</h2>" + body)
    page = (f"<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>\n"
            f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">\n"
            f"<title>{esc(title)}</title><style>{STYLE}</style></head>\n<body>\n"
            + "\n".join(parts) + "\n</body></html>\n")
    path = folder / f"{safe_name(grade.student)}.html"
    path.write_text(page, encoding="utf-8")
    return path
