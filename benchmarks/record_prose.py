"""The full-mode record written as prose: the README table's two columns and the title cells'
run-time phrase, each filled from the record (``benchmarks/results/full_mode.json``) through one
template.

Every phrase is one :class:`Template`: a ``str.format`` string filled from the record, and the
regular expression that finds what it wrote, derived from the same string (its words literally,
any run of whitespace where it has a space, since title cells wrap lines; each field as a named
group). So the sentence is written in one place, and what ``--sync`` looks for is that sentence.
README cells are found by the table's header, which names their columns, not by expression.

    python -m benchmarks.end_to_end sync     # rewrite README + title cells from the record

>>> phrase = TITLE_PHRASE.fill(full_minutes=82, class_minutes=13, speed=190)
>>> print(phrase)
training about 82 min on 2 CPU cores, or about 13 min with SIZE = "class", on the record's CPU (speed probe 190 GFLOP/s; the setup cell prints the minutes at yours)
>>> TITLE_PHRASE.pattern.findall(phrase.replace(" on ", "\\non "))  # a wrapped line
[('82', '13', '190')]
"""

from __future__ import annotations

import math
import re
import string
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from benchmarks.full_mode_record import complete
from benchmarks.notebooks import readme_table, table_line
from seqlab import config, sizes
from seqlab_instructor.notebook_files import notebook_paths

README = config.REPO_ROOT / "README.md"
CLASS_COLUMN = "class size (2 CPU cores)"
FULL_COLUMN = "full mode (2 CPU cores)"


@dataclass(frozen=True)
class Template:
    """One phrase of prose: ``text`` with ``{field}`` slots, and what each field's value looks
    like (a regular expression) so that :attr:`pattern` finds the phrase it wrote."""

    text: str
    fields: dict[str, str] = field(default_factory=dict)

    def fill(self, **values) -> str:
        """The phrase with the ``values`` in its fields."""
        return self.text.format(**values)

    @property
    def pattern(self) -> re.Pattern[str]:
        """The phrase as a regular expression: words literal, whitespace any run of whitespace,
        each field a named group of its expression."""
        parts = []
        for literal, name, _, _ in string.Formatter().parse(self.text):
            parts.append(r"\s+".join(re.escape(word) for word in re.split(r"\s+", literal)))
            if name is not None:
                parts.append(f"(?P<{name}>{self.fields[name]})")
        return re.compile("".join(parts))


#: The title cell's full-mode phrase, which ``--sync`` rewrites.
TITLE_PHRASE = Template(
    'training about {full_minutes} min on 2 CPU cores, or about {class_minutes} min with '
    'SIZE = "class", on the record\'s CPU (speed probe {speed} GFLOP/s; the setup cell prints '
    'the minutes at yours)', {"full_minutes": r"\d+", "class_minutes": r"\d+", "speed": r"\d+"})
GPU_CLAUSE = "on a GPU not measured"
#: What the title phrase and the GPU clause replace the first time a notebook is measured.
FIRST_MEASURED = Template(": {phrase}; {gpu_clause}.")
#: The sentence title cells carried before full mode was measured ("... is sized for a Colab
#: GPU; its time is not measured yet on a GPU (...).", the "is" optional).
UNMEASURED = Template("sized for a Colab GPU; its time is not measured yet on a GPU ({why}).",
                      {"why": r"[^)]*"})
UNMEASURED_SENTENCE = re.compile(r"\s+(?:is\s+)?" + UNMEASURED.pattern.pattern)
#: A README cell of either column.
README_CELL = Template("{minutes} min", {"minutes": r"\d+"})


def displayed_minutes(minutes: float) -> int:
    """The rounding rule for every displayed full-mode time: whole minutes, halves up, at least 1."""
    return max(1, math.floor(minutes + 0.5))


def title_phrase(entry: dict) -> str:
    """:data:`TITLE_PHRASE` of a notebook's record entry (``{"full": ..., "class": ...}``)."""
    return TITLE_PHRASE.fill(full_minutes=displayed_minutes(entry["full"]["minutes"]),
                             class_minutes=displayed_minutes(entry["class"]["minutes"]),
                             speed=round(sizes.RECORD_SPEED))


def readme_cells(entry: dict) -> tuple[str, str]:
    """The README's (class-size, full-mode) cells of a notebook's record entry."""
    return tuple(README_CELL.fill(minutes=displayed_minutes(entry[size]["minutes"]))
                 for size in ("class", "full"))


def title_times(path: Path) -> list[tuple[int, int]]:
    """Every (full, class) minutes pair the notebook's title cell states."""
    title = nbformat.read(path, as_version=4).cells[0].source
    return [(int(match["full_minutes"]), int(match["class_minutes"]))
            for match in TITLE_PHRASE.pattern.finditer(title)]


def readme_times(text: str) -> dict[str, tuple[str, str]]:
    """Notebook number -> (class-size cell, full-mode cell) of the README table."""
    _, rows, (class_column, full_column) = readme_table(text, CLASS_COLUMN, FULL_COLUMN)
    return {cells[0]: (cells[class_column], cells[full_column]) for _, cells in rows}


def sync_readme(entries: dict[str, dict], readme: Path = README) -> list[str]:
    """Rewrite the README's two columns of the notebooks in ``entries``; return the rows changed."""
    changed = []
    lines, rows, (class_column, full_column) = readme_table(readme.read_text(encoding="utf-8"),
                                                            CLASS_COLUMN, FULL_COLUMN)
    for j, cells in rows:
        if cells[0] in entries:
            wanted = readme_cells(entries[cells[0]])
            if (cells[class_column], cells[full_column]) != wanted:
                cells[class_column], cells[full_column] = wanted
                lines[j] = table_line(cells)
                changed.append(f"README.md row {cells[0]}")
    if changed:
        readme.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return changed


def synced_title(title: str, entry: dict, name: str) -> str:
    """``title`` with its :data:`TITLE_PHRASE` stating ``entry``; the first time, the
    :data:`UNMEASURED` sentence replaced by :data:`FIRST_MEASURED`.

    Raises:
        ValueError: if the title has neither (``name`` says which notebook).
    """
    phrase = title_phrase(entry)
    pattern = TITLE_PHRASE.pattern
    if pattern.search(title):
        return pattern.sub(lambda match: phrase, title)
    new = UNMEASURED_SENTENCE.sub(
        lambda match: FIRST_MEASURED.fill(phrase=phrase, gpu_clause=GPU_CLAUSE), title)
    if new == title:
        raise ValueError(f"{name}'s title cell has no full-mode phrase to rewrite: put "
                         f"'{phrase}' into its run-time paragraph, then sync again")
    return new


def sync(record: dict, notebooks: list[Path] | None = None, readme: Path = README) -> list[str]:
    """Rewrite the README's two columns and the title cells' phrase from ``record``.

    Notebooks without both entries are left as they are. Returns what changed.
    """
    entries = complete(record)
    changed = sync_readme(entries, readme)
    for path in notebooks if notebooks is not None else notebook_paths():
        number = path.name[:2]
        if number not in entries:
            continue
        nb = nbformat.read(path, as_version=4)
        title = nb.cells[0].source
        new = synced_title(title, entries[number], path.name)
        if new != title:
            nb.cells[0].source = new
            nbformat.write(nb, path)
            changed.append(path.name)
    return changed
