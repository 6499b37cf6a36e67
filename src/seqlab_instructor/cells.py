"""Every cell-tag and cell-metadata name of the course notebooks, and their one reader.

The notebooks' cells are marked by tags (``metadata.tags``) and by ``metadata.seqlab`` entries;
every course tool that writes or reads them (:mod:`~seqlab_instructor.notebook_files`,
:mod:`~seqlab_instructor.runner`, :mod:`~seqlab_instructor.homework`, :mod:`~seqlab_instructor.site`) takes
the names from here.

Every notebook: its first code cell, tagged ``parameters`` (papermill injects a run's values
after it), holds the run's settings as plain literals; the cell after it, tagged ``setup``, is
generated (:mod:`~seqlab_instructor.notebook_files`). The runner appends cells tagged ``epilogue``
(the grader's recording); papermill tags the cell it injects ``injected-parameters``, which the
course book tags ``remove-cell`` (myst-nb renders it not at all).

Homework: instructor notebooks mark each exercise cell ``exercise`` (with
``metadata.seqlab.exercise``, its label, and optionally ``metadata.seqlab.points``,
``metadata.seqlab.kind`` and ``metadata.seqlab.same_as``) and the check cell after it ``check``;
student copies add ``raises-exception`` to both so a copy runs top to bottom unsolved.

A question answered in words is a markdown cell tagged ``written`` (with
``metadata.seqlab.question``, its label, and ``metadata.seqlab.points``) right after the
markdown cell that asks it. In the instructor's notebook it holds the model answer and the
rubric inside a ``### BEGIN SOLUTION`` / ``### END SOLUTION`` region; the student copy keeps
only a placeholder, and the student writes the answer in that cell.
"""

from __future__ import annotations

#: The first code cell: the run's settings, plain literals (papermill's tag).
PARAMETERS_TAG = "parameters"
#: The generated setup cell, right after the parameters cell.
SETUP_TAG = "setup"
#: The cell papermill injects after the parameters cell with a run's values.
INJECTED_PARAMETERS_TAG = "injected-parameters"
#: Cells :func:`seqlab_instructor.runner.run_notebook` appends after the notebook's own.
EPILOGUE_TAG = "epilogue"
#: myst-nb's tag for a cell that is not rendered at all.
REMOVE_CELL_TAG = "remove-cell"
EXERCISE_TAG = "exercise"
CHECK_TAG = "check"
ALLOWED_ERROR_TAG = "raises-exception"
WRITTEN_TAG = "written"
#: ``metadata.seqlab.kind`` of an exercise: change the lesson and measure, or write a piece.
EXPERIMENT = "experiment"
IMPLEMENT = "implement"
EXERCISE_KINDS = (EXPERIMENT, IMPLEMENT)
#: Cell- and notebook-level metadata key: ``{"exercise": label, "points": n}`` on exercise
#: cells, ``{"assignment": name, "version": hash}`` on a student copy.
METADATA_KEY = "seqlab"


def tags(cell) -> list[str]:
    """The cell's tags (a new empty list if it has none; the cell is not changed)."""
    return list(cell.get("metadata", {}).get("tags", []) or [])


def has_tag(cell, tag: str) -> bool:
    return tag in tags(cell)


def add_tag(cell, tag: str) -> None:
    """Add ``tag`` to the cell's ``metadata.tags`` (once)."""
    cell_tags = cell.setdefault("metadata", {}).setdefault("tags", [])
    if tag not in cell_tags:
        cell_tags.append(tag)


def seqlab_metadata(cell) -> dict:
    """The cell's ``metadata.seqlab`` entry (empty dict if none)."""
    entry = cell.get("metadata", {}).get(METADATA_KEY, {})
    return entry if isinstance(entry, dict) else {}


def exercise_name(cell) -> str | None:
    """The ``metadata.seqlab.exercise`` label of an exercise cell (e.g. "Exercise 2: …")."""
    return seqlab_metadata(cell).get("exercise")


def question_name(cell) -> str | None:
    """The ``metadata.seqlab.question`` label of a written-answer cell (e.g. "Question 1: …")."""
    return seqlab_metadata(cell).get("question")


def same_as(cell) -> list[str]:
    """Dotted names of package functions that compute an exercise's answer (may be empty).

    ``metadata.seqlab.same_as`` of an exercise cell, e.g.
    ``["seqlab.layers.LuongAttention.score"]``: a student copy must never show their source
    before the exercise (:mod:`seqlab_instructor.homework.giveaways`).
    """
    names = seqlab_metadata(cell).get("same_as", [])
    return [str(name) for name in names] if isinstance(names, list) else []
