"""When early stopping stops notebooks 03's and 07's full-size training on the real data: measured
by running the notebook, recorded as data (``benchmarks.end_to_end`` runs both on the real texts,
where early stopping ends each run itself).

Notebook 03's entry comes from issue 40's run of the notebook at full size on the real IMDB
reviews (TFDS's split, TF 2.21), five epochs without early stopping: its validation losses are
recorded, and ``epochs`` is where the notebook's ``EarlyStopping(patience=2)`` would have ended
that run (lowest loss after epoch 1, so after epoch 3). TFDS's IMDB cannot be prepared offline
here; where it can, ``record RUNS --notebook 03`` records a run of the notebook itself.

Notebook 07 trains its character LSTM and its mini-GPT "at most ``LSTM_EPOCHS`` / ``GPT_EPOCHS``"
(20 at full size) with ``EarlyStopping(patience=PATIENCE, restore_best_weights=True)``. How many
epochs that is depends on the text; the measurement is a run of the notebook itself on the real
text:

    # 1. TFDS's tiny_shakespeare prepared offline from the very file its builder downloads
    #    (karpathy/char-rnn's input.txt; ../shared/data/tinyshakespeare.txt), in a private folder
    python -m benchmarks.early_stopping prepare ../shared/data/tinyshakespeare.txt /tmp/tfds
    # 2. the notebook at full size, reading it from there (TFDS_DATA_DIR), its runs backed up
    TFDS_DATA_DIR=/tmp/tfds SEQLAB_BACKUP_DIR=/tmp/runs-07 \\
        python -m seqlab_instructor.runner 07 --full -p SIZE full --output /tmp/out-07
    # 3. the epochs each training ran, from the runs' histories, into the record
    python -m benchmarks.early_stopping record /tmp/runs-07 --size full

Step 1 uses TFDS's documented manual-download folder (``DownloadConfig(manual_dir=...)``): the
builder finds ``input.txt`` there, checks it against its registered size and checksum, and
prepares the dataset as it would after a download, so the notebook's own loading code
(``load_char_corpus("tfds")``) runs unchanged. The text is not copied into the repository.

The record, ``benchmarks/results/early_stopping.json``: ``{"07": {"full": {"lstm_epochs",
"gpt_epochs", "val_loss", "best_val_loss", "measured", "command"}}}``. A run still in progress
(no ``finished.json``) is refused, since its epoch count would be too small, unless
``--partial`` records it as not measured (``null``), with the losses of its epochs so far.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from pathlib import Path

from seqlab import config

RECORD = config.REPO_ROOT / "benchmarks" / "results" / "early_stopping.json"
#: The notebooks' training runs (``TrainingRun`` names without the size) and the settings key
#: of ``seqlab.sizes`` whose epochs each one may run at most.
RUNS = {"03": {"bilstm": "epochs"}, "07": {"lstm": "lstm_epochs", "gpt": "gpt_epochs"}}
COMMAND = {"03": "python -m seqlab_instructor.runner 03 --full -p SIZE {size} on the real reviews",
           "07": "python -m seqlab_instructor.runner 07 --full -p SIZE {size} on the real text "
                 "(TFDS_DATA_DIR prepared by python -m benchmarks.early_stopping prepare)"}
#: What TFDS's tiny_shakespeare builder downloads: karpathy/char-rnn's input.txt.
SHAKESPEARE_FILE = "input.txt"


def prepare_tiny_shakespeare(text: Path, data_dir: Path) -> Path:
    """TFDS's ``tiny_shakespeare`` prepared in ``data_dir`` from ``text`` (the file its builder
    would download), through TFDS's manual-download folder; returns ``data_dir``.

    Raises:
        FileNotFoundError: if ``text`` is not a file.
    """
    import tensorflow_datasets as tfds

    text, data_dir = Path(text), Path(data_dir)
    if not text.is_file():
        raise FileNotFoundError(f"no text at {text}: pass the path of tiny Shakespeare's "
                                f"input.txt (for example ../shared/data/tinyshakespeare.txt)")
    manual = data_dir / "downloads" / "manual"  # TFDS's default manual folder, named anyway
    manual.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(text, manual / SHAKESPEARE_FILE)
    builder = tfds.builder("tiny_shakespeare", data_dir=str(data_dir))
    builder.download_and_prepare(
        download_config=tfds.download.DownloadConfig(manual_dir=str(manual)))
    return data_dir


def stopped_epochs(runs_folder: Path, notebook: str = "07", size: str = "full", *,
                   partial: bool = False) -> dict:
    """The epochs each of ``notebook``'s trainings ran before early stopping ended it, read from
    the histories of its finished ``TrainingRun`` folders in ``runs_folder``.

    With ``partial=True`` a run that did not finish (stopped by hand) is recorded as not
    measured (``None``: its configured epochs are the upper bound) with the
    validation losses of the epochs it did run, so the record says how far it got.

    Returns:
        ``{"lstm_epochs": 7, "gpt_epochs": 9, "val_loss": {"lstm": [...], "gpt": [...]},
        "best_val_loss": {"lstm": ..., "gpt": ...}}``.

    Raises:
        ValueError: if a run's folder is missing or holds no epochs, or (without ``partial``)
            a run is unfinished.
    """
    from seqlab.training.resume import FINISHED_FILE, HISTORY_FILE

    found, losses, best = {}, {}, {}
    for run, key in RUNS[notebook].items():
        folder = Path(runs_folder) / f"{notebook}-{run}-{size}"
        finished = (folder / FINISHED_FILE).is_file()
        if not finished and not partial:
            raise ValueError(f"{folder} holds no finished run ({FINISHED_FILE} missing): run "
                             f"notebook {notebook} at SIZE {size!r} to the end first")
        history = folder / HISTORY_FILE
        records = json.loads(history.read_text(encoding="utf-8")) if history.is_file() else []
        if not records:
            raise ValueError(f"{history} holds no epochs")
        found[key] = len(records) if finished else None
        losses[run] = [round(r["logs"]["val_loss"], 4) for r in records]
        best[run] = min(losses[run])
    return {**found, "val_loss": losses, "best_val_loss": best}


def read_record(path: Path = RECORD) -> dict:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def record(runs_folder: Path, notebook: str = "07", size: str = "full",
           path: Path = RECORD, *, partial: bool = False) -> dict:
    """Merge :func:`stopped_epochs` of ``runs_folder`` into the record; return the entry."""
    entry = {**stopped_epochs(runs_folder, notebook, size, partial=partial),
             "measured": time.strftime("%Y-%m-%d"),
             "command": COMMAND[notebook].format(size=size)}
    data = read_record(path)
    data.setdefault(notebook, {})[size] = entry
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return entry


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.early_stopping", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    prepare = commands.add_parser("prepare", help="prepare TFDS's tiny_shakespeare offline")
    prepare.add_argument("text", type=Path, help="tiny Shakespeare's input.txt")
    prepare.add_argument("data_dir", type=Path, help="the TFDS data folder to prepare it in")
    store = commands.add_parser("record", help="record the epochs of a finished run")
    store.add_argument("runs", type=Path, help="the run's SEQLAB_BACKUP_DIR")
    store.add_argument("--size", default="full", choices=("class", "full"))
    store.add_argument("--notebook", default="07", choices=sorted(RUNS))
    store.add_argument("--partial", action="store_true",
                       help="record an unfinished run as not measured, with its epochs so far")
    args = parser.parse_args(argv)
    if args.command == "prepare":
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        folder = prepare_tiny_shakespeare(args.text, args.data_dir)
        print(f"tiny_shakespeare prepared in {folder}: run the notebook with TFDS_DATA_DIR={folder}")
        return 0
    entry = record(args.runs, args.notebook, args.size, partial=args.partial)
    print(f"notebook {args.notebook} at size {args.size}: {entry}\nrecorded in "
          f"{RECORD.relative_to(config.REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
