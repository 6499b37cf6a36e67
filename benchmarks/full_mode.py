"""The record of full-mode and class-size training minutes on 2 CPU cores, the one measured
source of the times the README table and the title cells state; notebook 07's entries.

    python -m benchmarks.full_mode                 # measure 07, record, update README + title cells
    python -m benchmarks.full_mode --sync          # no measuring: README + title cells from the record

Each entry says how it was measured and the command that measures it again. Notebooks 01, 02,
03, 06 and 08 are run end to end by ``benchmarks.end_to_end`` on stand-ins of the real data's
size and lengths; 04 and 05 on the real Anki pairs (``benchmarks.nmt_full_mode``,
``seqlab_instructor.runner``). Notebook 07's batches are character ids, the same shapes whatever
the text, so its model is built as the notebook builds it (same builders, sizes, batch, windows,
optimiser) and each kind of batch (training step, validation batch) is timed here as the median
of ``--steps`` batches after a warm-up one, on **random ids of tiny_shakespeare's shape**, then
multiplied by the notebook's number of batches; its epochs are those early stopping ran on the
real text (``benchmarks.early_stopping``). Text generation is not included. The machine's load
average is recorded with each measurement: on a shared machine the times are too long, not too
short.

The record, ``benchmarks/results/full_mode.json``, holds ``full`` and ``class`` entries per
notebook; :func:`record_entry` (``benchmarks.full_mode_record``) merges one entry. ``--sync``
rewrites the README's columns and each title cell's run-time phrase from the record only,
through the templates of ``benchmarks.record_prose``.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

# record_entry and read_record are imported from here by other commands.
from benchmarks import early_stopping, lm_schedule  # noqa: E402
from benchmarks.full_mode_record import (  # noqa: E402, F401
    CLASS_LIMIT_MINUTES,
    RECORD,
    SIZES,
    print_record,
    read_record,
    record_entry,
)
from benchmarks.full_mode_timing import Part, cached, median_seconds  # noqa: E402
from benchmarks.notebooks import device  # noqa: E402
from benchmarks.record_prose import sync  # noqa: E402
from benchmarks.stand_ins import SHAKESPEARE_CHARS, SHAKESPEARE_VOCAB  # noqa: E402
from seqlab import config, sizes  # noqa: E402

MEASURED_NOTEBOOKS = ("07",)

#: Notebook 07's numbers from ``seqlab.sizes.SETTINGS`` at each size (the one home of the
#: sizes), with the constants of its cells that do not change with the size.
SETTINGS = {"07": {size: {"chars": SHAKESPEARE_CHARS, "steps": 100, "batch": 32,
                          **sizes.settings("07", size)} for size in SIZES}}


# ---------------------------------------------------------------------------- notebooks


def measure_07(s: dict, steps: int, size: str = "full") -> tuple[list[Part], str]:
    import keras
    import numpy as np

    from seqlab.lessons.nb07 import MiniGPT, build_char_lstm

    rng = np.random.default_rng(0)
    x = rng.integers(1, SHAKESPEARE_VOCAB, (s["batch"], s["steps"])).astype("int32")
    y = rng.integers(1, SHAKESPEARE_VOCAB, (s["batch"], s["steps"])).astype("int32")

    cut = int(s["chars"] * 0.9)                       # split_text(valid_fraction=0.1)
    train = ((cut - 1) // s["batch"]) // s["steps"]  # tbptt_dataset's windows
    valid = ((s["chars"] - cut - 1) // s["batch"]) // s["steps"]

    def lstm_times():
        keras.utils.set_random_seed(config.SEED)
        model = build_char_lstm(SHAKESPEARE_VOCAB, s["embedding"], s["lstm_units"],
                                batch_size=s["batch"])
        model.compile(optimizer=keras.optimizers.Adam(learning_rate=3e-3, clipnorm=1.0),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        return (median_seconds(lambda: model.train_on_batch(x, y), steps),
                median_seconds(lambda: model.test_on_batch(x, y), steps))

    def gpt_times():
        keras.utils.set_random_seed(config.SEED)
        gpt = MiniGPT(SHAKESPEARE_VOCAB, context_length=s["steps"], dropout=0.1, **s["gpt"])
        gpt.build()
        rate = lm_schedule.schedule(s["gpt_epochs"] * train)  # warm-up + cosine, as notebook 07
        gpt.compile(optimizer=keras.optimizers.Adam(learning_rate=rate),
                    loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                    jit_compile=False)  # the notebook's choice on a CPU (RUN.jit_compile)
        return (median_seconds(lambda: gpt.train_on_batch(x, y), steps),
                median_seconds(lambda: gpt.test_on_batch(x, y), steps))

    lstm_train, lstm_eval = cached(("lstm", s["batch"], s["steps"], s["embedding"], s["lstm_units"]),
                                   lstm_times)
    gpt_train, gpt_eval = cached(("gpt", s["batch"], s["steps"], tuple(s["gpt"].values())), gpt_times)
    # Early stopping's epochs on the real text where a run of the notebook measured them
    # (benchmarks.early_stopping); else the configured epochs, an upper bound.
    stopped = early_stopping.epochs_at("07", size) or {}
    lstm_epochs = stopped.get("lstm_epochs") or s["lstm_epochs"]   # None: not measured
    gpt_epochs = stopped.get("gpt_epochs") or s["gpt_epochs"]
    size_note = (f"LSTM {s['lstm_units']} units; GPT d{s['gpt']['d_model']} × "
                 f"{s['gpt']['num_layers']} layers")
    if stopped:
        measured = [(f"the {name} all {s[key]} (not stopped early)"
                     if stopped.get(key) == s[key] else
                     f"the {name} {stopped[key]} (early stopping, patience 2, of at most {s[key]})")
                    if stopped.get(key) else
                    f"the {name} its configured {s[key]} (an upper bound: not stopped in the "
                    f"{len(stopped['val_loss'][run])} epochs run)"
                    for name, run, key in (("LSTM", "lstm", "lstm_epochs"),
                                           ("mini-GPT", "gpt", "gpt_epochs"))]
        size_note = (f"{size_note}; epochs on the real text: {' and '.join(measured)} "
                     f"(benchmarks/results/early_stopping.json, measured {stopped['measured']} "
                     f"by {stopped['command']})")
    return [Part(f"LSTM training ({lstm_epochs} epochs × {train} batches)", lstm_train, steps,
                 lstm_epochs * train),
            Part(f"LSTM validation ({lstm_epochs} × {valid})", lstm_eval, steps,
                 lstm_epochs * valid),
            Part(f"mini-GPT training ({gpt_epochs} epochs × {train} batches)", gpt_train,
                 steps, gpt_epochs * train),
            Part(f"mini-GPT validation ({gpt_epochs} × {valid})", gpt_eval, steps,
                 gpt_epochs * valid)], (
        f"tiny_shakespeare stand-in: random ids over 66 characters, {s['chars']:,} characters, "
        f"windows ({s['batch']}, {s['steps']}); {size_note}; text generation not included")


MEASURE = {"07": measure_07}


# ------------------------------------------------------------------------------ measuring


def measure(number: str, size: str, steps: int) -> tuple[float, str]:
    """(minutes, how) of one notebook at one size, printing each part."""
    parts, stand_ins = MEASURE[number](SETTINGS[number][size], steps, size=size)
    minutes = sum(p.seconds for p in parts) / 60
    for p in parts:
        print(f"  {number} {size:<5} {p.what:<92} {p.median_seconds:8.3f} s × {p.count:>7,} = "
              f"{p.seconds / 60:6.1f} min")
    how = "; ".join(f"{p.what}: {p.statistic} {p.median_seconds:.3f} s of {p.timed} timed × {p.count:,}"
                    for p in parts)
    how = f"{how}; stand-ins of the real shapes: {stand_ins}"
    if "early stopping" not in stand_ins:
        how += "; early stopping: the configured epochs (an upper bound)"
    return minutes, how


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.full_mode", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="+", metavar="NN", choices=MEASURED_NOTEBOOKS,
                        help="measure only these notebooks and merge them into the record")
    parser.add_argument("--steps", type=int, default=20, help="timed batches per part (default 20)")
    parser.add_argument("--sync", action="store_true",
                        help="do not measure: rewrite README and title cells from the record")
    args = parser.parse_args(argv)
    if not args.sync:
        numbers = args.only or list(MEASURED_NOTEBOOKS)
        rows = []
        for number in numbers:
            for size in SIZES:
                load = os.getloadavg()[0]
                minutes, how = measure(number, size, args.steps)
                measured = f"{time.strftime('%Y-%m-%d %H:%M')}, load {load:.1f}"
                command = f"python -m benchmarks.full_mode --only {number}"
                rows.append((number, size, minutes, measured))
                if size == "class" and minutes > CLASS_LIMIT_MINUTES:
                    print(f"  notebook {number}: class size measured {minutes:.1f} min, over "
                          f"{CLASS_LIMIT_MINUTES} min: not recorded; make SETTINGS[{number!r}]"
                          "['class'] smaller")
                    continue
                record_entry(number, size, minutes, how, command, measured)
        print(f"\nTraining time on {device()} (load average of the last minute at the start of "
              "each measurement; stand-ins of the real data's shapes, see the module's docstring)")
        print(f"{'notebook':<9}{'size':<7}{'minutes':>8}  measured")
        for number, size, minutes, measured in rows:
            print(f"{number:<9}{size:<7}{minutes:8.1f}  {measured}")
        print(f"\nrecorded in {RECORD.relative_to(config.REPO_ROOT)}")
    print_record(read_record())
    for name in sync(read_record()):
        print("updated", name)
    from seqlab_instructor import record as recorded_minutes

    recorded_minutes.main([])  # the minutes the setup line prints: seqlab.recorded_minutes
    print("If title cells changed: python -m seqlab_instructor.homework build")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
