"""The results files notebooks hand to each other: one reader, one writer, one mode rule.

Notebooks 01/02 record each training stage of the sentiment classifier in
``models/imdb_results.json`` (notebook 03 compares with it); notebook 04 records its
translators in ``models/nmt_results.json`` (notebook 05 compares with it). Both files are a
JSON object with the ``"mode"`` (``"FAST"`` or ``"full"``) its numbers were measured in, and
entries below it::

    {"mode": "FAST", "frozen": {...}, "fine_tuned": {...}}                    # imdb
    {"mode": "FAST", "models": {"rnn-bahdanau": {...}, "transformer": {...}}}  # nmt

Writing an entry in the other mode starts the file afresh, so a file never compares a FAST
number with a full one. The domain functions (:func:`seqlab.models.write_imdb_result`,
:func:`seqlab.evaluation.write_nmt_result`) build their entries and store them here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from seqlab import config


def results_path(kind: str) -> Path:
    """``models/{kind}_results.json``, e.g. ``results_path("imdb")``."""
    return config.MODELS_DIR / f"{kind}_results.json"


def read_results(kind: str, path: str | Path | None = None) -> dict:
    """The content of a results file (``path`` or ``models/{kind}_results.json``); ``{}`` if none."""
    path = Path(path or results_path(kind))
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def record_result(kind: str, keys: Sequence[str], entry: Mapping, *, mode: str,
                  path: str | Path | None = None) -> dict:
    """Store ``entry`` at ``results[keys[0]]...[keys[-1]]`` of a results file; return the file.

    Args:
        kind: ``"imdb"`` or ``"nmt"`` (the file ``models/{kind}_results.json``).
        keys: where the entry goes, e.g. ``("frozen",)`` or ``("models", "transformer")``.
        entry: a JSON-serialisable mapping (it replaces what was at that place).
        mode: ``"FAST"`` or ``"full"``. If the file holds the other mode's results they are
            dropped first.
        path: another file (tests).
    """
    if mode not in ("FAST", "full"):
        raise ValueError(f"mode must be 'FAST' or 'full'; got {mode!r}")
    if not keys:
        raise ValueError("keys must name where the entry goes, e.g. ('frozen',)")
    path = Path(path or results_path(kind))
    results = read_results(kind, path)
    if results.get("mode") != mode:
        results = {"mode": mode}
    place = results
    for key in keys[:-1]:
        place = place.setdefault(key, {})
    place[keys[-1]] = dict(entry)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return results
