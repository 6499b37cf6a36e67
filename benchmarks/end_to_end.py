"""Minutes a student's run takes: notebooks 01, 02, 03, 06, 07 and 08 run end to end, at full
or class size, on the real texts with stand-ins of the pretrained models — the record's source
for them.

    python -m benchmarks.end_to_end prepare /tmp/e2e --imdb ../shared/data/imdb \
        --shakespeare ../shared/data/tinyshakespeare.txt         # the data and stand-ins
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

The downloads cannot be reached here, so each is answered where the real one would be: IMDB's
labelled reviews and tiny Shakespeare are the **real** texts (``../shared/data/``, prepared as
TFDS's datasets offline; 06's unlabelled ``unsupervised`` split, which that copy lacks, is
stand-in text of its size), nnlm-en-dim50 and bert_tiny_en_uncased are **stand-ins** of the real
sizes (``benchmarks.stand_in_downloads`` says how each is made). ``run`` refuses IMDB's
notebooks on the stand-in reviews: their generated text did not take the real reviews' time
(notebook 03 at full size: 1.6× longer on the real ones, issue 51). Early stopping ends each
``fit`` where it ends on the real text, and the minutes count the epochs as they ran.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from benchmarks.full_mode_record import CLASS_LIMIT_MINUTES, read_record, record_entry  # noqa: E402
from benchmarks.stand_in_downloads import prepare  # noqa: E402
from benchmarks.stand_ins import NNLM_DIM, NNLM_ROWS  # noqa: E402
from seqlab import config  # noqa: E402

NOTEBOOKS = ("01", "02", "03", "06", "07", "08")
_IMDB = ("IMDB: the real reviews (train and test splits, 25,000 each, prepared as TFDS's "
         "imdb_reviews offline from ../shared/data/imdb)")
_IMDB_06 = _IMDB[:-1] + "; its unsupervised split, which that copy lacks, stand-in text of its size)"
_NNLM = f"nnlm-en-dim50: a module of its table size ({NNLM_ROWS:,} × {NNLM_DIM}, random values)"
_BERT = ("bert_tiny_en_uncased: its architecture from random weights, a 30,522-piece vocabulary "
         "learned from the stand-in text")
_SHAKESPEARE = ("tiny_shakespeare: the real text (karpathy/char-rnn's input.txt) prepared as "
                "TFDS's dataset offline, not a stand-in")
#: What each notebook reads (the record names them).
STAND_INS = {"01": (_IMDB, _NNLM), "02": (_IMDB, _NNLM), "03": (_IMDB,),
             "06": (_IMDB_06, _NNLM), "07": (_SHAKESPEARE,), "08": (_IMDB, _BERT)}
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


def real_reviews(stand_ins: Path) -> bool:
    """Whether ``stand_ins`` holds IMDB's real reviews (``prepare --imdb``)."""
    info = stand_ins / "tfds" / "imdb_reviews" / "plain_text" / "1.0.0" / "dataset_info.json"
    return info.is_file() and "IMDB's real" in json.loads(info.read_text())["description"]


def kernel_environment(stand_ins: Path, home: Path, backups: Path, log: Path) -> dict:
    """A notebook kernel's variables: the prepared downloads, ``home`` as ``SEQLAB_HOME``, the
    training runs' ``backups`` and the timing ``log``."""
    return {"TFDS_DATA_DIR": str(stand_ins / "tfds"), "TFHUB_CACHE_DIR": str(stand_ins / "tfhub"),
            "KAGGLEHUB_CACHE": str(stand_ins / "kagglehub"),
            "IPYTHONDIR": str(stand_ins / "ipython"), "SEQLAB_HOME": str(home),
            "SEQLAB_BACKUP_DIR": str(backups), "SEQLAB_TIMING_LOG": str(log)}


def make_home(stand_ins: Path) -> Path:
    """``stand_ins/home``, the notebooks' ``SEQLAB_HOME`` (their models/ and results, not ours)."""
    home = stand_ins / "home"
    if not home.is_dir():
        home.mkdir()
        for name in ("data", "notebooks", "pyproject.toml"):
            (home / name).symlink_to(config.REPO_ROOT / name)
        shutil.copytree(config.REPO_ROOT / "models", home / "models")
    return home


def run(number: str, size: str, stand_ins: Path, home: Path, output: Path) -> dict:
    """Run notebook ``number`` at ``size`` on the stand-ins; return its timings."""
    from seqlab_instructor.runner import run_notebook

    if number != "07" and not real_reviews(stand_ins):
        raise SystemExit(f"notebook {number} is measured on IMDB's real reviews: prepare the "
                         "folder with --imdb ../shared/data/imdb")
    log = output / f"{number}-{size}-{TIMING_LOG}"
    log.unlink(missing_ok=True)
    parameters = {"SIZE": size}
    startup = stand_ins / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True, exist_ok=True)
    (startup / "00-seqlab-timing.py").write_text(STARTUP, encoding="utf-8")
    backups = Path(tempfile.mkdtemp(prefix=f"e2e-backups-{number}-"))  # never a finished run
    env = kernel_environment(stand_ins, home, backups, log)
    notebook = next((config.REPO_ROOT / "notebooks").glob(f"{number}_*.ipynb"))
    load = os.getloadavg()[0]
    started = time.strftime("%Y-%m-%d %H:%M")
    result = run_notebook(notebook, output, fast=False, parameters=parameters, timeout=None,
                          cwd=home / "notebooks", env=env)
    shutil.rmtree(backups, ignore_errors=True)
    calls = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    return {"number": number, "size": size, "calls": calls,
            "seconds": sum(call["seconds"] for call in calls),
            "notebook_seconds": result.seconds, "parameters": parameters,
            "measured": f"{started}, load {load:.1f} at the start"}


def how(timing: dict, old: dict | None) -> str:
    """The record's ``how`` of one end-to-end run, the stand-in text's figure beside it."""
    fits = [c for c in timing["calls"] if c["call"] == "fit"]
    other = sum(c["seconds"] for c in timing["calls"] if c["call"] not in ("fit", "bucket_by_length"))
    grouping = sum(c["seconds"] for c in timing["calls"] if c["call"] == "bucket_by_length")
    parts = "; ".join(
        f"fit {c['model']}: {c['seconds']:.0f} s ({len(c['epoch_ends'] or [])} of "
        f"{c['epochs']} epochs{', first ' + format(c['epoch_ends'][0], '.0f') + ' s' if c['epoch_ends'] else ''})"
        for c in fits)
    parameters = " ".join(f"-p {name} {value}" for name, value in timing["parameters"].items())
    text = (f"notebook {timing['number']} run end to end at SIZE = '{timing['size']}' "
            f"(seqlab_instructor.runner, {parameters}), each download answered offline "
            f"(benchmarks.end_to_end): {'; '.join(STAND_INS[timing['number']])}. Keras's "
            f"top-level calls, input pipeline, validation and callbacks included, took "
            f"{timing['seconds']:.0f} s "
            f"({parts}; evaluate and predict, per batch too, {other:.0f} s"
            + (f"; the first pass over each split grouped by length, bucket_by_length, "
               f"{grouping:.0f} s" if grouping else "")
            + f"); the whole notebook {timing['notebook_seconds'] / 60:.1f} min from kernel start")
    former = stand_in_figure(old)
    if former:
        text += (f"; on the stand-in text (generated words, IMDB's lengths) it was "
                 f"{former[0]:g} min ({former[1]}): the real reviews take "
                 f"{timing['seconds'] / 60 / former[0]:.1f}× that")
    return text


def stand_in_figure(old: dict | None) -> tuple[float, str] | None:
    """The minutes ``old`` measured on the stand-in text, or the stand-in figure ``old`` names;
    ``(minutes, measured)``."""
    if not old:
        return None
    if "generated words of Zipf frequencies" in old.get("how", ""):
        return float(old["minutes"]), old["measured"]
    named = re.search(r"on the stand-in text \(generated words, IMDB's lengths\) it was "
                      r"([\d.]+) min \(([^)]*)\)", old.get("how", ""))
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
    home = make_home(args.stand_ins)
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
            text = " --shakespeare TEXT" if number == "07" else " --imdb ../shared/data/imdb"
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
