"""Similarity report: per exercise, the pairs of submissions whose solutions are unusually alike.

    python -m seqlab_instructor.homework similarity SUBMISSIONS_DIR [--notebook 04] [--out grades/]
                                              [--threshold 0.6]

Nothing is executed: each submission's exercise cells (the cells tagged ``exercise`` with the
label of :mod:`seqlab_instructor.cells`) are read as text, one file per (exercise, student).

1. **Clean** (:func:`clean`): the lines that are not the solution go: IPython magics,
   one-line imports and ``STUDENT_ID`` lines.
2. **Compare** with `copydetect <https://github.com/blingenf/copydetect>`_ (MOSS's winnowing,
   MIT licence): its filter tokenises with Pygments, drops whitespace and comments and turns
   every name into ``V``, function names into ``F`` and strings (docstrings too) into ``S``;
   then every run of ``noise`` filtered characters two solutions share counts, except runs
   also found in the student copy's own exercise cell (copydetect's boilerplate: the starter
   code every student got). A pair's similarity is the larger of the two shares of each
   solution covered by shared runs (a short solution copied into a longer one scores high).
   ``python -m benchmarks.similarity`` also measures the other modes of :func:`compare`
   (docs/similarity.md): the raw cell (``copydetect``: the same numbers on the benchmark,
   which has no imports to add), the cell rewritten by :func:`ast.unparse` without docstrings
   (``unparsed+copydetect``: the starter's discount fits less well, one independent pair
   flagged) and names of modules, attributes and methods kept (``names-kept``: independent
   solutions scored higher, 10 flagged).
3. **Report** the pairs at or above ``threshold`` in ``similarity/<assignment>.csv`` and
   ``.html`` (both solutions side by side, escaped). The threshold and the precision and
   recall it gave on generated copies are in ``docs/similarity.md``.

A flagged pair is a reason to look, not a finding: short exercises leave little room for
different code, and the report says how long each solution is.
"""

from __future__ import annotations

import ast
import csv
import html
import re
import tempfile
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

from seqlab_instructor.cells import EXERCISE_TAG, exercise_name, has_tag
from seqlab_instructor.homework.collect import Assignment, collect, load_assignments, safe_name

#: Pairs at or above this similarity are reported (chosen on ``python -m benchmarks.similarity``).
THRESHOLD = 0.6
#: How sources reach copydetect (:func:`compare`); chosen on ``python -m benchmarks.similarity``.
MODE = "cleaned+copydetect"
MODES = ("cleaned+copydetect", "unparsed+copydetect", "names-kept", "copydetect")
#: Shortest run of normalised characters two solutions must share to count (copydetect's k).
NOISE = 25
INSTALL_HINT = ("the similarity report needs copydetect: pip install 'copydetect>=0.5' "
                "(it is in requirements.txt)")
MAGIC = re.compile(r"^\s*[%!].*$", re.MULTILINE)
IMPORT = re.compile(r"^[ \t]*(import [\w., ]+|from [\w.]+ import [\w., ]+)[ \t]*(#.*)?$",
                    re.MULTILINE)
STUDENT_ID = re.compile(r"""^\s*STUDENT_ID\s*=.*$""", re.MULTILINE)
CSV_COLUMNS = ["exercise", "student_a", "student_b", "similarity", "share_a", "share_b",
               "shared_chars", "chars_a", "chars_b", "file_a", "file_b"]


@dataclass
class Pair:
    """Two submissions' solutions to one exercise and how much of each the other shares."""

    exercise: str
    student_a: str
    student_b: str
    share_a: float
    share_b: float
    shared_chars: int
    chars_a: int
    chars_b: int
    file_a: str = ""
    file_b: str = ""
    source_a: str = ""
    source_b: str = ""

    @property
    def similarity(self) -> float:
        return max(self.share_a, self.share_b)


def exercise_sources(notebook) -> dict[str, str]:
    """``{exercise label: source}`` of a notebook's exercise cells (a label twice: joined)."""
    found: dict[str, str] = {}
    for cell in notebook.cells if notebook is not None else []:
        label = exercise_name(cell)
        if cell.cell_type == "code" and label and has_tag(cell, EXERCISE_TAG):
            found[label] = f"{found[label]}\n\n{cell.source}" if label in found else cell.source
    return found


class _Names(ast.NodeTransformer):
    """Drops docstrings, blanks strings, renames the names the code binds itself."""

    def __init__(self, bound: set[str], rename: bool = True):
        self.bound, self.rename = bound, rename

    def _body(self, node):
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
        return node

    def visit_FunctionDef(self, node):
        node.name = "v" if self.rename else node.name
        return self.generic_visit(self._body(node))

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        node.name = "v" if self.rename else node.name
        return self.generic_visit(self._body(node))

    def visit_Module(self, node):
        return self.generic_visit(self._body(node))

    def visit_Import(self, node):
        return None  # imports are not the solution (the setup cell has them anyway)

    visit_ImportFrom = visit_Import

    def visit_Name(self, node):
        if self.rename and node.id in self.bound:
            node.id = "v"
        return node

    def visit_arg(self, node):
        node.arg, node.annotation = ("v" if self.rename else node.arg), None
        return node

    def visit_Constant(self, node):
        return ast.Constant("S") if self.rename and isinstance(node.value, str) else node


def _bound_names(tree: ast.AST) -> set[str]:
    bound = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound


def clean(source: str) -> str:
    """The cell without the lines that are not the solution: magics, imports, ``STUDENT_ID``."""
    source = STUDENT_ID.sub("", MAGIC.sub("", source))
    return IMPORT.sub("", source)


def normalise(source: str, rename: bool = True) -> str:
    """The cell's code with names, comments, docstrings, strings and formatting made uniform.

    With ``rename=False`` only magics, imports, ``STUDENT_ID``, comments and docstrings go and
    the code is written back by :func:`ast.unparse` (copydetect's filter does the rest).
    """
    source = STUDENT_ID.sub("", MAGIC.sub("", source))
    try:
        tree = ast.parse(source)
    except SyntaxError:
        # Not Python as written (a half-finished cell): compare its lines without comments.
        return "\n".join(line.split("#")[0].strip() for line in source.splitlines()
                         if line.split("#")[0].strip())
    tree = ast.fix_missing_locations(_Names(_bound_names(tree), rename).visit(tree))
    return _compact(ast.unparse(tree)) if rename else ast.unparse(tree)


def _compact(code: str) -> str:
    """Tokens without the spaces between them (one space only between two words), one
    statement a line, indentation as ``{`` / ``}``: a k-gram of characters spans more code."""
    import io
    import tokenize

    out, previous = [], None
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        kind, text = token.type, token.string
        if kind == tokenize.INDENT:
            text = "{"
        elif kind == tokenize.DEDENT:
            text = "}"
        elif kind in (tokenize.NEWLINE, tokenize.NL):
            text = "\n"
        elif kind in (tokenize.ENDMARKER, tokenize.COMMENT):
            continue
        words = (tokenize.NAME, tokenize.NUMBER)
        if kind in words and previous in words:
            out.append(" ")
        out.append(text)
        previous = kind
    return "".join(out).strip()


def _copydetect():
    try:
        from copydetect import CopyDetector
    except ImportError as error:
        raise ImportError(INSTALL_HINT) from error
    return CopyDetector


def compare(sources: dict[str, str], starter: str = "", *, noise: int | None = None,
            exercise: str = "", mode: str | None = None) -> list[Pair]:
    """Every pair of ``{student: solution source}``, scored by copydetect.

    ``starter`` (the student copy's exercise cell) is copydetect's boilerplate: k-grams found
    in it never count. With ``normalised=False`` the sources go to copydetect as they are,
    with its own filter (every name to ``V``) on: the benchmark's other column.
    """
    import contextlib
    import io
    import logging

    detector_class = _copydetect()
    noise = noise or NOISE
    mode = mode or MODE
    prepare = {"names-kept": normalise, "copydetect": lambda text: text,
               "cleaned+copydetect": clean, "unparsed+copydetect":
               lambda text: normalise(text, rename=False)}[mode]
    with tempfile.TemporaryDirectory(prefix="seqlab-similarity-") as folder:
        folder = Path(folder)
        (folder / "solutions").mkdir()
        (folder / "starter").mkdir()
        (folder / "starter" / "starter.py").write_text(prepare(starter) + "\n", encoding="utf-8")
        files = {}
        for index, (student, source) in enumerate(sorted(sources.items())):
            path = folder / "solutions" / f"{index:04d}_{safe_name(student)}.py"
            path.write_text(prepare(source) + "\n", encoding="utf-8")
            files[str(path)] = student
        if len(files) < 2:
            return []
        detector = detector_class(
            test_dirs=[str(folder / "solutions")], boilerplate_dirs=[str(folder / "starter")],
            extensions=["py"], noise_t=noise, guarantee_t=noise, display_t=0.0,
            disable_filtering=mode == "names-kept", autoopen=False, silent=True,
            out_file=str(folder / "report.html"))
        previous = logging.getLogger().level
        logging.getLogger().setLevel(logging.ERROR)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                detector.run()
        finally:
            logging.getLogger().setLevel(previous)
        rows = {path: i for i, path in enumerate(detector.test_files)}
        columns = {path: j for j, path in enumerate(detector.ref_files)}
        pairs = []
        for path_a, path_b in combinations(sorted(files), 2):
            i, j = rows[path_a], columns[path_b]
            share_a, share_b = (float(x) for x in detector.similarity_matrix[i, j])
            data_a, data_b = detector.file_data[path_a], detector.file_data[path_b]
            pairs.append(Pair(
                exercise, files[path_a], files[path_b],
                share_a if share_a == share_a and share_a > 0 else 0.0,  # NaN: all starter code
                share_b if share_b == share_b and share_b > 0 else 0.0,
                max(0, int(detector.token_overlap_matrix[i, j])),
                len(data_a.filtered_code), len(data_b.filtered_code),
                source_a=sources[files[path_a]], source_b=sources[files[path_b]]))
    return pairs


def _solved(source: str, starter: str) -> bool:
    return normalise(source) != normalise(starter)


def assignment_pairs(assignment: Assignment, submissions: list, *,
                     noise: int | None = None) -> list[Pair]:
    """Every pair of solutions to each exercise of one assignment (unsolved cells left out)."""
    import nbformat

    from seqlab_instructor.homework.student_copies import make_student_copy

    starter = exercise_sources(make_student_copy(
        nbformat.read(assignment.path, as_version=4), f"notebooks/{assignment.path.name}",
        f"assignments/{assignment.path.name}"))
    pairs = []
    for exercise in assignment.exercises:
        template = starter.get(exercise.name, "")
        sources, files = {}, {}
        for submission in submissions:
            source = exercise_sources(submission.notebook).get(exercise.name)
            if source is not None and _solved(source, template):
                sources[submission.student], files[submission.student] = source, \
                    submission.path.name
        for pair in compare(sources, template, noise=noise, exercise=exercise.name):
            pair.file_a, pair.file_b = files[pair.student_a], files[pair.student_b]
            pairs.append(pair)
    return pairs


def write_csv(pairs: list[Pair], path: Path) -> Path:
    with Path(path).open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(CSV_COLUMNS)
        for p in pairs:
            writer.writerow([p.exercise, p.student_a, p.student_b, f"{p.similarity:.3f}",
                             f"{p.share_a:.3f}", f"{p.share_b:.3f}", p.shared_chars, p.chars_a,
                             p.chars_b, p.file_a, p.file_b])
    return Path(path)


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em; max-width: 80em; }}
table.pairs td, table.pairs th {{ border-bottom: 1px solid #ccc; padding: .2em .6em; text-align: left; }}
.side {{ display: flex; gap: 1em; }} .side > div {{ flex: 1; min-width: 0; }}
pre {{ background: #f6f6f6; padding: .6em; overflow-x: auto; font-size: 85%; }}
</style></head><body>
<h1>{title}</h1>
<p>Pairs of submissions whose solutions share at least {threshold:.0%} of their normalised code
(names, comments, docstrings, strings and formatting ignored; the student copy's starter code
discounted). A flagged pair is a reason to look, not a finding: short exercises leave little
room for different code. {counts}</p>
{body}
</body></html>
"""


def write_html(pairs: list[Pair], path: Path, title: str, threshold: float,
               counts: str = "") -> Path:
    """The flagged pairs per exercise, with both solutions side by side (escaped)."""
    esc = html.escape
    parts = []
    for exercise in dict.fromkeys(p.exercise for p in pairs):
        rows = [p for p in pairs if p.exercise == exercise]
        parts.append(f"<h2>{esc(exercise)}</h2>")
        parts.append("<table class='pairs'><tr><th>similarity</th><th>student A</th>"
                     "<th>student B</th><th>shared / length (normalised characters)</th></tr>")
        parts += [f"<tr><td>{p.similarity:.0%}</td><td>{esc(p.student_a)}</td>"
                  f"<td>{esc(p.student_b)}</td><td>{p.shared_chars} / {p.chars_a}, "
                  f"{p.chars_b}</td></tr>" for p in rows]
        parts.append("</table>")
        for p in rows:
            parts.append(
                f"<h3>{esc(p.student_a)} and {esc(p.student_b)}: {p.similarity:.0%}</h3>"
                f"<div class='side'><div><b>{esc(p.student_a)}</b> (<code>{esc(p.file_a)}</code>)"
                f"<pre>{esc(p.source_a)}</pre></div><div><b>{esc(p.student_b)}</b> "
                f"(<code>{esc(p.file_b)}</code>)<pre>{esc(p.source_b)}</pre></div></div>")
    body = "\n".join(parts) or "<p>No pair of solutions reaches the threshold.</p>"
    Path(path).write_text(PAGE.format(title=esc(title), threshold=threshold, counts=esc(counts),
                                      body=body), encoding="utf-8")
    return Path(path)


def similarity_report(submissions_dir: Path, out_dir: Path = Path("grades"), *,
                      notebook: str | None = None, notebooks_dir: Path | None = None,
                      threshold: float = THRESHOLD, noise: int = NOISE, log=print) -> list[Path]:
    """Write ``similarity/<assignment>.csv`` and ``.html`` under ``out_dir``; return their paths.

    Raises:
        ValueError: if ``notebook`` matches no instructor notebook, or several.
        ImportError: if copydetect is not installed (the message says how to install it).
    """
    _copydetect()
    assignments = load_assignments(notebooks_dir)
    if notebook is not None:
        names = [name for name in assignments if name.startswith(notebook)]
        if len(names) != 1:
            raise ValueError(f"--notebook {notebook!r} matches {names or 'no notebook'}; "
                             f"expected one of {sorted(assignments)}.")
        assignments = {names[0]: assignments[names[0]]}
    out_dir = Path(out_dir)
    submissions, _ = collect(submissions_dir, assignments, exclude=out_dir.resolve())
    folder = out_dir / "similarity"
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, assignment in sorted(assignments.items()):
        mine = [s for s in submissions if s.assignment == name and s.problem is None]
        if not mine:
            continue
        pairs = assignment_pairs(assignment, mine, noise=noise)
        flagged = sorted((p for p in pairs if p.similarity >= threshold),
                         key=lambda p: (p.exercise, -p.similarity))
        counts = f"{len(mine)} submissions, {len(pairs)} pairs compared, {len(flagged)} flagged."
        written += [write_csv(flagged, folder / f"{name}.csv"),
                    write_html(flagged, folder / f"{name}.html", f"{name}: similar solutions",
                               threshold, counts)]
        log(f"{name}: {counts} -> {folder / name}.csv / .html")
    if not written:
        log(f"no submission of {', '.join(sorted(assignments))} found in {submissions_dir}")
    return written
