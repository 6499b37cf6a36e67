"""The one reader of notebook-cell tags and ``metadata.seqlab`` entries used by homework.

Instructor notebooks mark each exercise cell ``exercise`` (with ``metadata.seqlab.exercise``,
its label, and optionally ``metadata.seqlab.points``) and the check cell after it ``check``;
student copies add ``raises-exception`` to both so a copy runs top to bottom unsolved.
"""

from __future__ import annotations

EXERCISE_TAG = "exercise"
CHECK_TAG = "check"
ALLOWED_ERROR_TAG = "raises-exception"
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
