"""The results files notebooks hand to each other (``models/imdb_results.json``,
``models/nmt_results.json``): JSON with the ``"size"`` its numbers were measured at; an entry at
another size starts the file afresh."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from seqlab import config
from seqlab.sizes import check_size

#: The sentiment classifier's training stages (notebooks 01 and 02).
STAGES = ("frozen", "fine_tuned")


def results_path(kind: str) -> Path:
    """``models/{kind}_results.json``, e.g. ``results_path("imdb")``."""
    return config.MODELS_DIR / f"{kind}_results.json"


def read_results(kind: str) -> dict:
    """The content of ``models/{kind}_results.json``; ``{}`` if there is none."""
    path = results_path(kind)
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def record_result(kind: str, keys: Sequence[str], entry: Mapping, *, size: str) -> dict:
    """Store ``entry`` at ``results[keys[0]]...[keys[-1]]`` of a results file; return the file.

    Args:
        kind: ``"imdb"`` or ``"nmt"`` (the file ``models/{kind}_results.json``).
        keys: where the entry goes, e.g. ``("frozen",)`` or ``("models", "transformer")``.
        entry: a JSON-serialisable mapping (it replaces what was at that place).
        size: the notebook's ``SIZE``; another size's results in the file are dropped first.
    """
    check_size(size)
    path = results_path(kind)
    results = read_results(kind)
    if results.get("size") != size:
        results = {"size": size}
    place = results
    for key in keys[:-1]:
        place = place.setdefault(key, {})
    place[keys[-1]] = dict(entry)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return results


def read_imdb_results() -> dict:
    """The results notebooks 01/02 recorded in ``models/imdb_results.json`` (``{}`` if none yet)."""
    return read_results("imdb")


def write_imdb_result(stage: str, *, test_accuracy: float, trainable_params: int,
                      seconds_per_epoch: float, size: str, handle: str,
                      history: Mapping[str, Sequence[float]] | None = None) -> dict:
    """Record one stage (``"frozen"`` or ``"fine_tuned"``) in ``models/imdb_results.json``.

    Each stage holds ``test_accuracy``, ``trainable_params``, ``seconds_per_epoch``, ``handle``
    and, when given, the training ``history``. Returns the whole file's content.
    """
    if stage not in STAGES:
        raise ValueError(f"stage must be one of {STAGES}; got {stage!r}")
    entry = {"test_accuracy": float(test_accuracy), "trainable_params": int(trainable_params),
             "seconds_per_epoch": float(seconds_per_epoch), "handle": handle}
    if history is not None:
        entry["history"] = {key: [float(v) for v in values]
                            for key, values in getattr(history, "history", history).items()}
    return record_result("imdb", (stage,), entry, size=size)


def write_nmt_result(name: str, scores: Mapping[str, Mapping[str, float]], *, size: str,
                     details: Mapping | None = None) -> dict:
    """Record one model's test scores in ``models/nmt_results.json``; return the whole file.

    Args:
        name: e.g. ``"rnn-bahdanau"`` (notebook 04's best) or ``"transformer"`` (notebook 05).
        scores: per task (``"dates"``, ``"sample"``, ``"anki"``) a dict such as
            ``{"bleu": 31.2, "exact_match": 0.12}``, measured on that task's fixed test split.
        size: the notebook's ``SIZE``; another size's results in the file are dropped first.
        details: anything else worth keeping (configuration, training seconds).
    """
    entry = {"scores": {task: {k: float(v) for k, v in values.items()}
                        for task, values in scores.items()}}
    if details:
        entry["details"] = dict(details)
    return record_result("nmt", ("models", name), entry, size=size)
