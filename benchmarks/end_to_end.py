"""Minutes a student's run takes: notebooks 01, 02, 03, 06, 07 and 08 run end to end, at full
or class size, on stand-ins of the real downloads' size and lengths (07 on the real text) — the
record's source for them.

    python -m benchmarks.end_to_end prepare /tmp/e2e \
        --shakespeare ../shared/data/tinyshakespeare.txt         # the stand-ins (about 3 min)
        [--imdb ../shared/data/imdb]     # imdb_reviews' train and test splits: the real reviews
    python -m benchmarks.end_to_end run 01 02 03 --stand-ins /tmp/e2e --size full --record
    python -m benchmarks.end_to_end sync       # no measuring: README + title cells from the record

The notebook itself runs (``seqlab_instructor.runner``, a fresh kernel, ``FAST = False``): its
``tf.data`` pipeline from text, ``fit`` with its validation and callbacks, testing, exercises.
Nothing is timed per batch; an IPython start-up file times every top-level ``Model.fit``,
``evaluate`` and ``predict`` call (``fit``'s own validation inside it) and their ``*_on_batch``
forms (an exercise check's), the end of each epoch,
and each ``bucket_by_length`` call (it reads its split once, vectorizing or tokenizing it, before
``fit``). The minutes recorded are the sum of those calls: what the notebook spends in Keras,
its input pipeline included. The whole run, kernel start to last cell, is printed beside them.

The downloads cannot be reached here, so each is answered where the real one would be, by a
**stand-in** named as one (IMDB's split sizes and lengths in generated text, nnlm-en-dim50's
table size, bert_tiny_en_uncased's architecture; tiny Shakespeare is the real text, and with
``--imdb`` so are IMDB's labelled reviews): ``prepare`` writes them (``benchmarks.stand_in_downloads`` says how each is made).

Early stopping: a stand-in text does not stop where the real one stops. Notebook 03 is run with
``EPOCHS`` set to the epochs early stopping ran on the real reviews
(``benchmarks/results/early_stopping.json``); any other ``fit`` that stopped early is counted at
its configured epochs (each missing epoch at the mean of its later epochs): an upper bound.
Notebook 07 reads the real text, so its fits are counted as they ran.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from benchmarks import early_stopping  # noqa: E402
from benchmarks.full_mode_record import CLASS_LIMIT_MINUTES, read_record, record_entry  # noqa: E402
from benchmarks.stand_in_downloads import prepare  # noqa: E402
from benchmarks.stand_ins import (  # noqa: E402
    IMDB_MEAN_WORDS,
    IMDB_MEDIAN_WORDS,
    NNLM_DIM,
    NNLM_ROWS,
)
from seqlab import config  # noqa: E402

NOTEBOOKS = ("01", "02", "03", "06", "07", "08")
_IMDB = (f"IMDB: its split sizes in generated words of Zipf frequencies, review lengths from a "
         f"log-normal with median {IMDB_MEDIAN_WORDS} and mean {IMDB_MEAN_WORDS} words")
_NNLM = f"nnlm-en-dim50: a module of its table size ({NNLM_ROWS:,} × {NNLM_DIM}, random values)"
_BERT = ("bert_tiny_en_uncased: its architecture from random weights, a 30,522-piece vocabulary "
         "learned from the stand-in text")
_SHAKESPEARE = ("tiny_shakespeare: the real text (karpathy/char-rnn's input.txt) prepared as "
                "TFDS's dataset offline, not a stand-in")
#: What each notebook reads (the record names them).
STAND_INS = {"01": (_IMDB, _NNLM), "02": (_IMDB, _NNLM), "03": (_IMDB,), "06": (_IMDB, _NNLM),
             "07": (_SHAKESPEARE,), "08": (_IMDB, _BERT)}
#: Notebooks run on the real data: their early stopping counts as it ran.
REAL_DATA = ("07",)
TIMING_LOG = "keras_calls.jsonl"

# Runs in the notebook's kernel before its first cell (IPython start-up file).
STARTUP = '''"""benchmarks.end_to_end: time Keras's top-level calls; answer the preset host's lookup."""
import json, os, socket, time
import keras

_seqlab_log = os.environ["SEQLAB_TIMING_LOG"]
_seqlab_depth = [0]
_seqlab_lookup = socket.getaddrinfo


def _seqlab_getaddrinfo(host, port, *args, **kwargs):
    if host == "www.kaggle.com":  # the preset is in kagglehub's cache; nothing connects
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("192.0.2.1", port))]
    return _seqlab_lookup(host, port, *args, **kwargs)


socket.getaddrinfo = _seqlab_getaddrinfo


class _SeqlabEpochClock(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.start, self.ends = time.perf_counter(), []

    def on_epoch_end(self, epoch, logs=None):
        self.ends.append(time.perf_counter() - self.start)

    def on_train_end(self, logs=None):  # the last callback: after the others' on_train_end
        self.train_end = time.perf_counter() - self.start


def _seqlab_timed(name, method):
    def timed(self, *args, **kwargs):
        clock = None
        if name == "fit" and _seqlab_depth[0] == 0:
            clock = _SeqlabEpochClock()
            kwargs["callbacks"] = [*(kwargs.get("callbacks") or []), clock]
        _seqlab_depth[0] += 1
        start = time.perf_counter()
        try:
            return method(self, *args, **kwargs)
        finally:
            _seqlab_depth[0] -= 1
            if _seqlab_depth[0] == 0:
                entry = {"call": name, "model": self.name, "seconds": time.perf_counter() - start,
                         "epochs": kwargs.get("epochs", 1) if name == "fit" else None,
                         "epoch_ends": clock.ends if clock else None,
                         "train_end": getattr(clock, "train_end", None)}
                with open(_seqlab_log, "a", encoding="utf-8") as log:
                    log.write(json.dumps(entry) + "\\n")
    return timed


for _seqlab_name in ("fit", "evaluate", "predict", "train_on_batch", "test_on_batch",
                     "predict_on_batch"):
    setattr(keras.Model, _seqlab_name,
            _seqlab_timed(_seqlab_name, getattr(keras.Model, _seqlab_name)))

import seqlab.data as _seqlab_data  # noqa: E402
_seqlab_group = _seqlab_data.bucket_by_length


def _seqlab_timed_group(*args, **kwargs):  # reads the split once: its first pass, outside fit
    start = time.perf_counter()
    try:
        return _seqlab_group(*args, **kwargs)
    finally:
        with open(_seqlab_log, "a", encoding="utf-8") as log:
            log.write(json.dumps({"call": "bucket_by_length", "model": "input pipeline",
                                  "seconds": time.perf_counter() - start, "epochs": None,
                                  "epoch_ends": None}) + "\\n")


_seqlab_data.bucket_by_length = _seqlab_timed_group
'''


# ------------------------------------------------------------------------------ running


def counted_seconds(calls: list[dict]) -> tuple[float, list[str]]:
    """Seconds of the logged calls, a ``fit`` that stopped early counted at its configured
    epochs; with a note for each such ``fit``."""
    import numpy as np

    total, notes = 0.0, []
    for call in calls:
        total += call["seconds"]
        ends, epochs = call.get("epoch_ends"), call.get("epochs")
        if call["call"] == "fit" and ends and epochs and len(ends) < epochs:
            durations = list(np.diff([0.0, *ends]))
            each = statistics.fmean(durations[1:] or durations)
            total += (epochs - len(ends)) * each
            notes.append(f"{call['model']} stopped after {len(ends)} of {epochs} epochs, counted "
                         f"at {epochs} ({each:.0f} s per missing epoch)")
    return total, notes


def notebook_parameters(number: str, size: str) -> tuple[dict, dict | None]:
    """The notebook's papermill parameters at ``size``, and the early-stopping entry they follow:
    notebook 03 trains the epochs early stopping ran on the real reviews, at most its own."""
    from seqlab import sizes

    parameters = {"SIZE": size}
    stopped = early_stopping.epochs_at("03", size) if number == "03" else None
    if stopped and stopped["epochs"] < sizes.settings("03", size).epochs:
        parameters["EPOCHS"] = stopped["epochs"]
        return parameters, stopped
    return parameters, None


def run(number: str, size: str, stand_ins: Path, home: Path, output: Path) -> dict:
    """Run notebook ``number`` at ``size`` on the stand-ins; return its timings."""
    from seqlab_instructor.runner import run_notebook

    log = output / f"{number}-{size}-{TIMING_LOG}"
    log.unlink(missing_ok=True)
    parameters, stopped = notebook_parameters(number, size)
    startup = stand_ins / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True, exist_ok=True)
    (startup / "00-seqlab-timing.py").write_text(STARTUP, encoding="utf-8")
    backups = Path(tempfile.mkdtemp(prefix=f"e2e-backups-{number}-"))  # never a finished run
    env = {"TFDS_DATA_DIR": str(stand_ins / "tfds"), "TFHUB_CACHE_DIR": str(stand_ins / "tfhub"),
           "KAGGLEHUB_CACHE": str(stand_ins / "kagglehub"), "IPYTHONDIR": str(stand_ins / "ipython"),
           "SEQLAB_HOME": str(home), "SEQLAB_BACKUP_DIR": str(backups),
           "SEQLAB_TIMING_LOG": str(log)}
    notebook = next((config.REPO_ROOT / "notebooks").glob(f"{number}_*.ipynb"))
    load = os.getloadavg()[0]
    started = time.strftime("%Y-%m-%d %H:%M")
    result = run_notebook(notebook, output, fast=False, parameters=parameters, timeout=None,
                          cwd=home / "notebooks", env=env)
    shutil.rmtree(backups, ignore_errors=True)
    calls = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    if number in REAL_DATA:
        seconds, notes = sum(call["seconds"] for call in calls), []
    else:
        seconds, notes = counted_seconds(calls)
    return {"number": number, "size": size, "calls": calls, "seconds": seconds, "notes": notes,
            "notebook_seconds": result.seconds, "parameters": parameters, "stopped": stopped,
            "measured": f"{started}, load {load:.1f} at the start"}


def how(timing: dict, old: dict | None) -> str:
    """The record's ``how`` of one end-to-end run, the old figure beside it."""
    fits = [c for c in timing["calls"] if c["call"] == "fit"]
    other = sum(c["seconds"] for c in timing["calls"] if c["call"] not in ("fit", "bucket_by_length"))
    grouping = sum(c["seconds"] for c in timing["calls"] if c["call"] == "bucket_by_length")
    parts = "; ".join(
        f"fit {c['model']}: {c['seconds']:.0f} s ({len(c['epoch_ends'] or [])} epoch"
        f"{'' if len(c['epoch_ends'] or []) == 1 else 's'}"
        f"{', first ' + format(c['epoch_ends'][0], '.0f') + ' s' if c['epoch_ends'] else ''})"
        for c in fits)
    parameters = " ".join(f"-p {name} {value}" for name, value in timing["parameters"].items())
    data = "the real data" if timing["number"] in REAL_DATA else "stand-ins of the real downloads"
    text = (f"notebook {timing['number']} run end to end at SIZE = '{timing['size']}' "
            f"(seqlab_instructor.runner, {parameters}) on {data} (benchmarks.end_to_end): "
            f"{'; '.join(STAND_INS[timing['number']])}. Keras's "
            f"top-level calls, input pipeline, validation and callbacks included, took "
            f"{timing['seconds']:.0f} s "
            f"({parts}; evaluate and predict, per batch too, {other:.0f} s"
            + (f"; the first pass over each split grouped by length, bucket_by_length, "
               f"{grouping:.0f} s" if grouping else "")
            + f"); the whole notebook {timing['notebook_seconds'] / 60:.1f} min from kernel start")
    if timing["notes"]:
        text += "; " + "; ".join(timing["notes"]) + " (an upper bound)"
    if timing["stopped"]:
        text += (f"; EPOCHS = {timing['stopped']['epochs']}, where early stopping ended the run "
                 f"on the real reviews ({timing['stopped']['command']})")
    former = former_figure(old)
    if former:
        text += (f"; the former figure, batches of token ids timed and multiplied: "
                 f"{former[0]:g} min ({former[1]}); end to end is "
                 f"{timing['seconds'] / 60 / former[0]:.1f}× that")
    return text


def former_figure(old: dict | None) -> tuple[float, str] | None:
    """The per-batch figure an entry had before it was measured end to end: ``old``'s own, or
    the one ``old`` already names if it was an end-to-end run; ``(minutes, measured)``."""
    if not old:
        return None
    if "run end to end" not in old.get("how", ""):
        return float(old["minutes"]), old["measured"]
    named = re.search(r"the former figure, batches of token ids timed and multiplied: "
                      r"([\d.]+) min \(([^)]*)\)", old["how"])
    return (float(named[1]), named[2]) if named else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.end_to_end", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("prepare", help="write the stand-ins into a folder")
    make.add_argument("folder", type=Path)
    make.add_argument("--shakespeare", type=Path,
                      help="tiny Shakespeare's text (input.txt): prepare tiny_shakespeare too")
    make.add_argument("--imdb", type=Path, help="a folder of IMDB's real train.tsv.gz and "
                      "test.tsv.gz (e.g. ../shared/data/imdb): imdb_reviews from them")
    timed = commands.add_parser("run", help="run notebooks end to end and time them")
    timed.add_argument("numbers", nargs="+", choices=NOTEBOOKS)
    timed.add_argument("--stand-ins", type=Path, required=True, help="the prepared folder")
    timed.add_argument("--size", choices=("full", "class"), default="full")
    timed.add_argument("--record", action="store_true", help="write the minutes into the record")
    commands.add_parser("sync", help="rewrite the README's table, the title cells and "
                                     "seqlab.recorded_minutes from the record")
    args = parser.parse_args(argv)
    if args.command == "prepare":
        print("stand-ins prepared in", prepare(args.folder, args.shakespeare, args.imdb))
        return 0
    if args.command == "sync":
        sync_prose()
        return 0
    home = args.stand_ins / "home"  # SEQLAB_HOME: the notebooks' models/ and results, not ours
    if not home.is_dir():
        home.mkdir()
        for name in ("data", "notebooks", "pyproject.toml"):
            (home / name).symlink_to(config.REPO_ROOT / name)
        shutil.copytree(config.REPO_ROOT / "models", home / "models")
    output = args.stand_ins / "runs"
    output.mkdir(exist_ok=True)
    for number in args.numbers:
        timing = run(number, args.size, args.stand_ins, home, output)
        (output / f"{number}-{args.size}.json").write_text(json.dumps(timing, indent=2))
        old = read_record()["notebooks"].get(number, {}).get(args.size)
        minutes = timing["seconds"] / 60
        print(f"notebook {number} {args.size}: {minutes:.1f} min in Keras's calls "
              f"(was {old['minutes'] if old else '–'}), whole notebook "
              f"{timing['notebook_seconds'] / 60:.1f} min")
        for call in timing["calls"]:
            print(f"    {call['call']:<8} {call['model']:<32} {call['seconds']:8.1f} s")
        if args.record:
            text = " --shakespeare TEXT" if number in REAL_DATA else ""
            command = (f"python -m benchmarks.end_to_end prepare DIR{text}, then python -m "
                       f"benchmarks.end_to_end run {number} --stand-ins DIR --size {args.size}")
            sizes_to_record = [args.size]
            if number in ("01", "02"):  # their class size is their full size
                sizes_to_record = ["full", "class"]
            for size in sizes_to_record:
                if size == "class" and minutes > CLASS_LIMIT_MINUTES:
                    print(f"  class size {minutes:.1f} min: over {CLASS_LIMIT_MINUTES}, not recorded")
                    continue
                entry_how = how(timing, read_record()["notebooks"].get(number, {}).get(size))
                if size != args.size:
                    entry_how = f"class size = full size (training already ≤ " \
                                f"{CLASS_LIMIT_MINUTES} min); {entry_how}"
                record_entry(number, size, minutes, entry_how, command, timing["measured"])
    if args.record:
        sync_prose()
    return 0


def sync_prose() -> None:
    """The README's table, the title cells and ``seqlab.recorded_minutes`` from the record."""
    from benchmarks.full_mode_record import print_record
    from benchmarks.record_prose import sync
    from seqlab_instructor import record as recorded_minutes

    print_record(read_record())
    for name in sync(read_record()):
        print("updated", name)
    recorded_minutes.main([])
    print("If title cells changed: python -m seqlab_instructor.homework build")


if __name__ == "__main__":
    raise SystemExit(main())
