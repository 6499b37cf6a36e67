"""The record of full-mode and class-size training minutes, ``benchmarks/results/full_mode.json``:
reading it, and merging one measured entry into it (:func:`record_entry`).

``{"what", "device", "notebooks": {"01": {"full": {...}, "class": {...}}, ...}}``, each entry
``{"minutes", "how", "command", "measured"}``. ``benchmarks.end_to_end`` measures notebooks
01-03 and 06-08; 04 and 05 are measured on the real Anki corpus by other commands and added with
:func:`record_entry`. ``benchmarks.record_prose`` writes the record into the README and the
title cells.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from benchmarks.notebooks import device
from seqlab import config

RECORD = config.REPO_ROOT / "benchmarks" / "results" / "full_mode.json"
SIZES = ("full", "class")
#: The most minutes a class-size notebook may train on 2 CPU cores.
CLASS_LIMIT_MINUTES = 15
WHAT = ("Training time in minutes of each notebook's full mode and class size (SIZE = \"class\") "
        "on 2 CPU cores, with how it was measured and the command that measures it again")


def read_record(path: Path = RECORD) -> dict:
    """``{"what", "device", "notebooks": {"01": {"full": {...}, "class": {...}}, ...}}``."""
    if not path.is_file():
        return {"what": WHAT, "device": device(), "notebooks": {}}
    return json.loads(path.read_text(encoding="utf-8"))


def record_entry(number: str, size: str, minutes: float, how: str, command: str, measured: str,
                 path: Path = RECORD) -> dict:
    """Merge one measured entry into the record and write it; return the record.

    Args:
        number: the notebook's two digits, e.g. ``"04"``.
        size: ``"full"`` or ``"class"``.
        minutes: training minutes on 2 CPU cores (plus evaluation where ``how`` says so).
        how: what was timed and how the minutes follow from it (stand-ins named).
        command: the command that measures it again.
        measured: date and load, e.g. ``"2026-11-24, load 2.3"``.

    Raises:
        ValueError: for a malformed number, an unknown size, non-positive minutes, empty
            texts, or a class size over :data:`CLASS_LIMIT_MINUTES`.
    """
    if not re.fullmatch(r"\d\d", str(number)):
        raise ValueError(f"number must be a notebook's two digits such as '04'; got {number!r}")
    if size not in SIZES:
        raise ValueError(f"size must be one of {SIZES}; got {size!r}")
    if not minutes > 0:
        raise ValueError(f"minutes must be positive; got {minutes!r}")
    if size == "class" and minutes > CLASS_LIMIT_MINUTES:
        raise ValueError(f"a class size must train in at most {CLASS_LIMIT_MINUTES} min; "
                         f"notebook {number} measured {minutes:.1f} min: choose a smaller class size")
    for name, text in (("how", how), ("command", command), ("measured", measured)):
        if not str(text).strip():
            raise ValueError(f"{name} must say something")
    record = read_record(path)
    entry = {"minutes": round(float(minutes), 1), "how": how, "command": command,
             "measured": measured}
    record.setdefault("notebooks", {}).setdefault(str(number), {})[size] = entry
    record["notebooks"] = dict(sorted(record["notebooks"].items()))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return record


def complete(record: dict) -> dict[str, dict]:
    """The notebooks whose record has both a full and a class entry."""
    return {n: e for n, e in record.get("notebooks", {}).items() if all(s in e for s in SIZES)}


def print_record(record: dict) -> None:
    """The whole record as one table: minutes per notebook and size, with date and load."""
    print(f"\nbenchmarks/results/full_mode.json ({record.get('device', '?')}): training minutes")
    print(f"{'notebook':<9}{'full':>7}{'class':>7}  measured (full; class)")
    for number, entry in record.get("notebooks", {}).items():
        cells = [f"{entry[s]['minutes']:7.1f}" if s in entry else f"{'–':>7}" for s in SIZES]
        when = "; ".join(entry[s]["measured"] for s in SIZES if s in entry)
        print(f"{number:<9}{cells[0]}{cells[1]}  {when}")
