"""Does a student copy show the answer to one of its exercises?

A student copy gives an exercise away when a cell other than the exercise itself (above it,
where a student reads first, or below it)

- holds the solution's lines in its own source (the lesson wrote the answer out), or
- displays the source of a function that computes the answer: one the exercise lists in
  ``metadata.seqlab.same_as`` (``inspect.getsource(LuongAttention.score)`` above "implement
  the general score"), or any function whose source holds the solution's lines, or
- imports a function the exercise lists in ``same_as`` by name (``from seqlab.layers import
  scaled_dot_product_attention`` above "implement eq. (16)"): the answer one call away, or
- (when the copy was executed) prints any of these lines in its outputs.

:func:`answers_shown` reads the instructor notebook (for the solutions and ``same_as``) and the
student copy (for every other cell), and returns one sentence per giveaway. The build of the
student copies (``python -m seqlab_instructor.homework build``) refuses a copy that gives an answer away;
the notebook tests also run the audit on each executed copy's outputs.

Lines are compared after normalising white space; comments, docstrings, blank lines and short
lines ("return x", "else:") do not count, so two unrelated cells that share a trivial line are
no giveaway. A solution of a single significant line is given away by that line; a longer one
when half of its significant lines appear in one place.
"""

from __future__ import annotations

import ast
import html
import importlib
import inspect
import re
import textwrap
from collections.abc import Iterable

from seqlab_instructor.cells import EXERCISE_TAG, exercise_name, has_tag, same_as

#: Lines shorter than this (after normalising) are too generic to give anything away.
MIN_LINE_LENGTH = 14
#: Fraction of a solution's significant lines that, found in one place, give it away.
SHARE = 0.5
#: Fraction of a ``same_as`` function's lines that make a displayed text that function: its
#: signature and plumbing lines may be shared with a sibling that is no answer (two attention
#: scores both start ``if keys is None: keys = self.project_values(values)``).
TWIN_SHARE = 0.8
SOLUTION_REGION = re.compile(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", re.DOTALL)
TAG = re.compile(r"<[^>]+>")


def normalise(line: str) -> str:
    """One line with its comment dropped and its white space collapsed."""
    code = line.split("#", 1)[0] if not line.lstrip().startswith(("'", '"')) else line
    return " ".join(code.split())


def significant_lines(source: str) -> list[str]:
    """The normalised lines of ``source`` that could identify it (docstrings left out)."""
    lines = source.splitlines()
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        tree = None
    docstring_lines: set[int] = set()
    if tree is not None:
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            if (isinstance(body, list) and body and isinstance(body[0], ast.Expr)
                    and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                docstring_lines.update(range(body[0].lineno - 1, body[0].end_lineno))
    found = []
    for number, line in enumerate(lines):
        if number in docstring_lines or "### " in line:
            continue
        text = normalise(line)
        if len(text) >= MIN_LINE_LENGTH:
            found.append(text)
    return found


def solution_source(cell) -> str:
    """The text between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` of an exercise cell."""
    return "".join(SOLUTION_REGION.findall(cell.source + "\n"))


def gives_away(answer_lines: list[str], text: str, share: float = SHARE) -> bool:
    """Whether ``text`` holds at least ``share`` of ``answer_lines`` (at least one line)."""
    if not answer_lines:
        return False
    present = set(normalise(line) for line in text.splitlines())
    found = sum(line in present for line in answer_lines)
    return found >= max(1, int(len(answer_lines) * share + 0.999))


def import_object(dotted: str):
    """``seqlab.layers.LuongAttention.score`` -> the object (module prefix, then attributes)."""
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for attribute in parts[split:]:
            if not hasattr(target, attribute):
                raise ImportError(f"cannot import {dotted!r}: no {attribute!r} in "
                                  f"{getattr(target, '__name__', target)!r} "
                                  "(metadata.seqlab.same_as)")
            target = getattr(target, attribute)
        return target
    raise ImportError(f"cannot import {dotted!r} (metadata.seqlab.same_as)")


def source_of(target) -> str:
    try:
        return inspect.getsource(target)
    except (TypeError, OSError):
        return ""


def python_source(source: str) -> str:
    """A code cell's source without IPython's own lines (``%magic``, ``!shell``, ``x?``)."""
    return "\n".join(line for line in source.splitlines()
                     if not line.strip().startswith(("%", "!")) and not line.strip().endswith("?"))


def _displayed_expressions(source: str) -> list[str]:
    """The expressions whose source a cell displays: ``getsource(X)``, ``X??``, ``%psource X``."""
    found = []
    for line in source.splitlines():
        stripped = line.strip()
        if stripped.startswith(("%psource", "%pfile")):
            found.append(stripped.split(None, 1)[1] if " " in stripped else "")
        elif stripped.endswith("??"):
            found.append(stripped.rstrip("?").strip())
    try:
        tree = ast.parse(python_source(source))
    except SyntaxError:
        return found
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(
                node.func, "id", "")
            if name in ("getsource", "getsourcelines", "psource"):
                found.append(ast.unparse(node.args[0]))
    return found


def _imports(cells: Iterable) -> list[ast.stmt]:
    statements = []
    for cell in cells:
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(python_source(cell.source))
        except SyntaxError:
            continue
        statements += [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    return statements


def _imported_twins(source: str, twins: list) -> list[str]:
    """The names a cell's imports bind to one of ``twins`` (``from m import f``, ``as g`` too).

    A function that computes an exercise's answer, imported into the student's namespace
    under its own name or another, is the answer one call away.
    """
    try:
        tree = ast.parse(python_source(source))
    except SyntaxError:
        return []
    # Only the twins' own packages are imported to resolve names (never a notebook's others).
    packages = {getattr(twin, "__module__", "").split(".")[0] for twin in twins} - {""}
    found = []
    for node in ast.walk(tree):
        if (not isinstance(node, ast.ImportFrom) or not node.module
                or node.module.split(".")[0] not in packages):
            continue
        for alias in node.names:
            bound = alias.asname or alias.name
            if any(_resolve(bound, [node]) is twin for twin in twins):
                found.append(bound if bound == alias.name else f"{alias.name} as {bound}")
    return found


def _resolve(expression: str, imports: list[ast.stmt]):
    """The object a displayed expression names, from the notebook's own imports (or None)."""
    names = expression.split(".")
    if not all(name.isidentifier() for name in names):
        return None
    for statement in imports:
        for alias in statement.names:
            bound = alias.asname or alias.name.split(".")[0]
            if bound != names[0]:
                continue
            try:
                if isinstance(statement, ast.ImportFrom):
                    base = import_object(f"{statement.module}.{alias.name}")
                else:
                    base = importlib.import_module(alias.name if alias.asname else bound)
                for attribute in names[1:]:
                    base = getattr(base, attribute)
                return base
            except (ImportError, AttributeError):
                return None
    return None


def output_text(cell) -> str:
    """Everything a code cell's outputs show as text (HTML tags stripped)."""
    parts = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            parts.append(output.get("text", ""))
        for kind, value in (output.get("data") or {}).items():
            if kind in ("text/plain", "text/markdown", "text/x-python"):
                parts.append(value if isinstance(value, str) else "".join(value))
            elif kind == "text/html":
                value = value if isinstance(value, str) else "".join(value)
                parts.append(html.unescape(TAG.sub("", value)))
    return "\n".join(parts)


def answers_shown(instructor, student, executed=None) -> list[str]:
    """Every place where ``student`` shows an exercise's answer outside the exercise's cell.

    Args:
        instructor: the instructor notebook (``nbformat`` node): solutions and ``same_as``.
        student: its student copy; every cell but the exercise's own is searched.
        executed: the student copy as it ran (optional); its outputs are searched too.

    Returns:
        One sentence per giveaway, naming the exercise, the cell and what it shows; empty when
        nothing is given away.

    Raises:
        ImportError: if an exercise's ``same_as`` names something that does not exist.
    """
    solutions = {exercise_name(c): c for c in instructor.cells if has_tag(c, EXERCISE_TAG)}
    shown = []
    cells = executed.cells if executed is not None else student.cells
    positions = {exercise_name(c): i for i, c in enumerate(cells) if has_tag(c, EXERCISE_TAG)}
    imports = _imports(cells)
    for name, solved in solutions.items():
        if name not in positions:
            continue
        position = positions[name]
        others = [(i, c) for i, c in enumerate(cells) if i != position]
        answers = [("its solution", significant_lines(solution_source(solved)), SHARE)]
        twins = [import_object(dotted) for dotted in same_as(solved)]
        answers += [(f"the source of {dotted}", significant_lines(source_of(twin)), TWIN_SHARE)
                    for dotted, twin in zip(same_as(solved), twins, strict=True)]
        for index, cell in others:
            where = f"{name}: cell {index}"
            if cell.cell_type == "code" and gives_away(answers[0][1], cell.source):
                shown.append(f"{where} holds the solution's lines in its source")
            if cell.cell_type == "markdown" and gives_away(answers[0][1], cell.source):
                shown.append(f"{where} (markdown) holds the solution's lines")
            if cell.cell_type != "code":
                continue
            for bound in _imported_twins(cell.source, twins):
                shown.append(f"{where} imports {bound}, which computes the answer")
            for expression in _displayed_expressions(cell.source):
                target = _resolve(expression, imports)
                if target is None:
                    continue
                displayed = significant_lines(source_of(target))
                if any(target is twin for twin in twins) or any(
                        gives_away(lines, "\n".join(displayed), share)
                        for _, lines, share in answers):
                    shown.append(f"{where} displays the source of {expression}, which is "
                                 "the answer")
            text = output_text(cell)
            for what, lines, share in answers:
                if text and gives_away(lines, text, share):
                    shown.append(f"{where} prints {what}")
    return sorted(set(shown))
