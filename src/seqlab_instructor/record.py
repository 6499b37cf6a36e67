"""The minutes the setup line prints, the record's speed and the class plans' seconds, written
from the record into ``seqlab.recorded_minutes``.

The record of training times, ``benchmarks/results/full_mode.json`` (written by ``python -m
benchmarks.end_to_end``), belongs to the course tools; the student-facing package reads no
repository file. This command copies each notebook's minutes per size into a small generated
module of the package, and ``tests/test_record.py`` fails when the two differ.

    python -m seqlab_instructor.record           # write src/seqlab/recorded_minutes.py
    python -m seqlab_instructor.record --check   # exit 1 when it differs from the record

Example:
    >>> minutes({"notebooks": {"04": {"class": {"minutes": 10.7}, "full": {"minutes": 71.6}}}})
    {'04': {'class': 10.7, 'full': 71.6}}
"""

from __future__ import annotations

import argparse
import json
import sys

from seqlab import config

RECORD = config.REPO_ROOT / "benchmarks" / "results" / "full_mode.json"
MODULE = config.REPO_ROOT / "src" / "seqlab" / "recorded_minutes.py"


def minutes(record: dict) -> dict[str, dict[str, float]]:
    """``{notebook: {size: minutes}}`` of a record, the entries without minutes left out."""
    return {notebook: {size: float(entry["minutes"]) for size, entry in sorted(sizes.items())
                       if entry.get("minutes") is not None}
            for notebook, sizes in sorted(record.get("notebooks", {}).items())}


def plan_seconds(record: dict) -> dict[str, list[float]]:
    """``{notebook: [seconds of each class-size configuration, largest first]}`` of a record.

    >>> plan_seconds({"class_plans": {"04": [{"seconds": 643.9}, {"seconds": 369.0}]}})
    {'04': [643.9, 369.0]}
    """
    return {notebook: [float(option["seconds"]) for option in options]
            for notebook, options in sorted(record.get("class_plans", {}).items())}


def module_text(record: dict) -> str:
    """The source of ``seqlab.recorded_minutes`` for ``record``."""
    rows = "".join(f"    {notebook!r}: {sizes!r},\n" for notebook, sizes in minutes(record).items())
    plans = "".join(f"    {notebook!r}: {seconds!r},\n"
                    for notebook, seconds in plan_seconds(record).items())
    speed = record.get("speed_probe", {}).get("gflops")
    return (f'"""Generated from ``benchmarks/results/full_mode.json`` by '
            f'``python -m seqlab_instructor.record``:\ndo not edit.\n\n'
            f'Minutes of training per notebook and size, measured on {record.get("device", "?")};'
            f'\nthe speed probe\'s reading there (GFLOP/s); the seconds of training of each\n'
            f'class-size configuration of notebooks 04 and 05, largest first.\n"""\n\n'
            f'MINUTES = {{\n{rows}}}\n\nRECORD_SPEED = {speed!r}\n\n'
            f'PLAN_SECONDS = {{\n{plans}}}\n')


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m seqlab_instructor.record",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the module is stale")
    args = parser.parse_args(argv)
    text = module_text(json.loads(RECORD.read_text(encoding="utf-8")))
    current = MODULE.read_text(encoding="utf-8") if MODULE.exists() else ""
    if args.check:
        if current != text:
            print(f"{MODULE} differs from {RECORD}: run python -m seqlab_instructor.record")
            return 1
        return 0
    if current != text:
        MODULE.write_text(text, encoding="utf-8")
        print(f"wrote {MODULE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
