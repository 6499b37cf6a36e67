"""The one reader of notebook-cell tags and ``metadata.seqlab`` entries used by homework.

Instructor notebooks mark each exercise cell ``exercise`` (with ``metadata.seqlab.exercise``,
its label, and optionally ``metadata.seqlab.points``, ``metadata.seqlab.kind`` and
``metadata.seqlab.same_as``) and the check cell after it ``check``; student copies add
``raises-exception`` to both so a copy runs top to bottom unsolved.

A question answered in words is a markdown cell tagged ``written`` (with
``metadata.seqlab.question``, its label, and ``metadata.seqlab.points``) right after the
markdown cell that asks it. In the instructor's notebook it holds the model answer and the
rubric inside a ``### BEGIN SOLUTION`` / ``### END SOLUTION`` region; the student copy keeps
only a placeholder, and the student writes the answer in that cell.
"""

from __future__ import annotations

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
    before the exercise (:mod:`seqlab.homework.giveaways`).
    """
    names = seqlab_metadata(cell).get("same_as", [])
    return [str(name) for name in names] if isinstance(names, list) else []
