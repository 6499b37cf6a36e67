"""The lesson modules: the cells a notebook marks ``#@save``, written into ``seqlab.lessons``.

A notebook is the one source of the model it teaches (d2l's way). A code cell whose first line
is ``#@save`` is exported: the cells of ``notebooks/04_*.ipynb`` marked so become
``src/seqlab/lessons/nb04.py``, in order, without the mark. A later notebook, a benchmark, a test,
a check or the grader imports that module (``from seqlab.lessons.nb04 import Translator``), never a
second copy. An exported cell holds only imports, definitions and constants: it takes what it
needs as arguments (ruff's undefined-name check on ``src/`` catches a notebook global), and
a statement that computes something at the top level is refused here. A class too long for one
cell continues in later cells as functions decorated ``@add_to_class(TheClass)``
(:func:`seqlab.lessons.add_to_class`, d2l's way): the generated module has them as methods
inside the class, so it never patches a class after defining it.

    python -m seqlab_instructor.lessons           # write every notebook's module
    python -m seqlab_instructor.lessons --check   # exit 1 and name the modules that differ

Example:
    >>> from seqlab import config
    >>> path = module_path(config.REPO_ROOT / "notebooks" / "04_neural_machine_translation.ipynb")
    >>> path.name
    'nb04.py'
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

from seqlab import config

MARK = "#@save"
LESSONS_DIR = config.REPO_ROOT / "src" / "seqlab" / "lessons"
NOTEBOOKS_DIR = config.REPO_ROOT / "notebooks"
#: What an exported cell may hold at its top level: no statement that runs the lesson.
ALLOWED = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
           ast.Assign, ast.AnnAssign)


class ExportError(ValueError):
    """A ``#@save`` cell that cannot be a module's source."""


def saved_cells(notebook: Path) -> list[str]:
    """The source of each ``#@save`` code cell of ``notebook``, in order, without the mark."""
    cells = json.loads(Path(notebook).read_text(encoding="utf-8"))["cells"]
    sources = []
    for index, cell in enumerate(cells):
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        first, _, rest = source.partition("\n")
        if cell["cell_type"] != "code" or first.strip() != MARK:
            continue
        rest = rest.strip("\n")
        try:
            tree = ast.parse(rest)
        except SyntaxError as error:
            raise ExportError(f"{Path(notebook).name}, cell {index}: {error}") from error
        for node in tree.body:
            if not isinstance(node, ALLOWED):
                raise ExportError(
                    f"{Path(notebook).name}, cell {index}, line {node.lineno}: a #@save cell holds "
                    f"only imports, definitions and constants, not {type(node).__name__}")
        sources.append(rest)
    return sources


def module_path(notebook: Path) -> Path:
    """``notebooks/04_x.ipynb`` -> ``src/seqlab/lessons/nb04.py``."""
    return LESSONS_DIR / f"nb{Path(notebook).name[:2]}.py"


def fold_methods(cells: list[str]) -> list[str]:
    """``cells`` with every function decorated ``@add_to_class(C)`` moved, undecorated, to the
    end of the body of class ``C`` (defined in an earlier cell), and the decorator's import
    dropped; a cell left empty goes.

    Raises:
        ExportError: for a class that no earlier cell defines.
    """
    cells = list(cells)
    for index in range(len(cells)):
        tree = ast.parse(cells[index])
        lines = cells[index].splitlines()
        folded = []
        for node in tree.body:
            target = _added_to(node)
            if target is None:
                continue
            start = min(d.lineno for d in node.decorator_list)
            method = lines[node.lineno - 1:node.end_lineno]
            decorators = [line for line in lines[start - 1:node.lineno - 1]
                          if "add_to_class" not in line]
            owner = next((i for i in range(index) if _defines(cells[i], target)), None)
            if owner is None:
                raise ExportError(f"@add_to_class({target}) before any #@save cell defines "
                                  f"class {target}")
            cells[owner] = _append_to_class(cells[owner], target, [*decorators, *method])
            folded.append((start, node.end_lineno))
        folded += [(node.lineno, node.end_lineno) for node in tree.body  # the decorator's import
                   if isinstance(node, ast.ImportFrom) and node.module == "seqlab.lessons"
                   and [alias.name for alias in node.names] == ["add_to_class"]]
        for start, end in sorted(folded, reverse=True):
            del lines[start - 1:end]
        cells[index] = "\n".join(lines).strip("\n")
    return [cell for cell in cells if cell]


def _added_to(node) -> str | None:
    """``C`` for a function decorated ``@add_to_class(C)``, else None."""
    if not isinstance(node, ast.FunctionDef):
        return None
    for decorator in node.decorator_list:
        if (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Name)
                and decorator.func.id == "add_to_class" and len(decorator.args) == 1
                and isinstance(decorator.args[0], ast.Name)):
            return decorator.args[0].id
    return None


def _defines(source: str, name: str) -> bool:
    return any(isinstance(node, ast.ClassDef) and node.name == name
               for node in ast.parse(source).body)


def _append_to_class(source: str, name: str, method: list[str]) -> str:
    """``source`` with ``method`` (its lines) indented into the end of class ``name``."""
    node = next(node for node in ast.parse(source).body
                if isinstance(node, ast.ClassDef) and node.name == name)
    lines = source.splitlines()
    indented = ["", *(("    " + line) if line.strip() else "" for line in method)]
    return "\n".join([*lines[:node.end_lineno], *indented, *lines[node.end_lineno:]])


def module_text(notebook: Path) -> str:
    """The module generated from ``notebook``'s ``#@save`` cells ('' if it has none)."""
    cells = fold_methods(saved_cells(notebook))
    if not cells:
        return ""
    name = Path(notebook).name
    header = (f'"""Generated from notebooks/{name} (its #@save cells) by\n'
              f'``python -m seqlab_instructor.lessons``: edit the notebook, not this file."""\n')
    return header + "\n\n" + "\n\n\n".join(cells) + "\n"


def notebooks() -> list[Path]:
    return sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))


def stale_modules() -> list[Path]:
    """The lesson modules that differ from their notebooks' cells (or should not exist)."""
    stale = []
    expected = {}
    for notebook in notebooks():
        text = module_text(notebook)
        if text:
            expected[module_path(notebook)] = text
    for path, text in expected.items():
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            stale.append(path)
    stale += [path for path in sorted(LESSONS_DIR.glob("nb*.py")) if path not in expected]
    return stale


def write_modules() -> list[Path]:
    """Write every notebook's lesson module; remove those of notebooks without ``#@save`` cells."""
    written = []
    for path in stale_modules():
        notebook = next((nb for nb in notebooks() if module_path(nb) == path), None)
        text = module_text(notebook) if notebook else ""
        if text:
            path.write_text(text, encoding="utf-8")
        else:
            path.unlink()
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m seqlab_instructor.lessons",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if a lesson module differs from its notebook")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_modules()
        for path in stale:
            print(f"{path.relative_to(config.REPO_ROOT)} differs from its notebook's #@save cells:"
                  " run python -m seqlab_instructor.lessons")
        return 1 if stale else 0
    for path in write_modules():
        print(f"wrote {path.relative_to(config.REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
