"""Notebook 04's full-mode training time on the real Anki pairs, timed per batch, then
multiplied by the notebook's number of batches (the other notebooks are run end to end:
``benchmarks.end_to_end``).

    python -m benchmarks.nmt_full_mode                 # the real Anki pairs if found
    python -m benchmarks.nmt_full_mode --record        # ... and merge the result into the record
    python -m benchmarks.nmt_full_mode --source sample --steps 2   # offline, seconds (the test)

Notebook 04's full size trains four translators (``none``, ``bahdanau``, ``luong-dot``,
``luong-general``: embedding 128, GRU units 256, the LayerNorm before the output layer, Adam
2e-3, batch 128) for ``EPOCHS`` epochs each on the Anki pairs, whose training batches
``load_translation("anki")`` groups by length, and validates each on the whole validation split
after every epoch. For each variant the package's translator (the notebook asserts that its own
assembly computes the same logits) is compiled as the notebook compiles it on a CPU
(``jit_compile=False``), warmed up on three batches, and then timed on ``2 × --steps`` training
batches in an epoch's order (their **mean**: grouped batches differ in width, and the mean is
what sums to an epoch) and on ``--steps`` validation batches (the median). Minutes = mean ×
batches per epoch × epochs + median × validation batches × epochs, summed over the variants.
Decoding the test split, beam search and plots are not included.

This replaces the old record of notebook 04, which timed padded batches end to end under
another TensorFlow/Keras (``benchmarks.quality``, TF 2.21 / Keras 3.15): it measures the
notebook as it trains now, on the versions it is run with.
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import tensorflow as tf  # noqa: E402

from benchmarks.bucketing import add_source_arguments, machine, translation_source  # noqa: E402
from benchmarks.full_mode_record import record_entry  # noqa: E402
from benchmarks.full_mode_timing import Part, mean_seconds, median_seconds  # noqa: E402
from seqlab import config, sizes  # noqa: E402
from seqlab.data import load_translation  # noqa: E402
from seqlab.lessons.nb04 import build_rnn_translator  # noqa: E402
from seqlab.training import compile_translator  # noqa: E402

VARIANTS = ("none", "bahdanau", "luong-dot", "luong-general")   # notebook 04's VARIANTS
COMMAND = "python -m benchmarks.nmt_full_mode --record"


def count(dataset) -> int:
    """Batches in one pass (a grouped dataset may not know its length)."""
    known = int(dataset.cardinality())
    return known if known >= 0 else sum(1 for _ in dataset)


def measure(data, steps: int, epochs: int, size: str = "full") -> list[Part]:
    at_size = sizes.settings("04", size)
    train_batches, valid_batches = count(data.train), count(data.valid)
    valid_batch = next(iter(data.valid))
    parts = []
    for variant in VARIANTS:
        keras.utils.set_random_seed(config.SEED)
        model = build_rnn_translator(data.source_vocab_size, data.target_vocab_size,
                                     embedding_dim=at_size.embedding_dim,
                                     units=at_size.units, attention=variant, output_norm=True)
        compile_translator(model, keras.optimizers.Adam(2e-3), jit_compile=False)
        epoch = iter(data.train.repeat())                 # an epoch's order (the sample: more)
        for x, y in itertools.islice(epoch, 3):           # the trace, and the shuffle buffer
            model.train_on_batch(x, y)
        timed = list(itertools.islice(epoch, 2 * steps))
        train = mean_seconds([lambda m=model, x=x, y=y: m.train_on_batch(x, y) for x, y in timed])
        valid = median_seconds(lambda m=model: m.test_on_batch(*valid_batch), steps)
        widths = sorted(int(y.shape[1]) for _, y in timed)            # target positions
        parts += [Part(f"{variant}: training ({epochs} epochs × {train_batches} batches grouped "
                       f"by length; mean of {len(timed)}, target widths {widths[0]}–{widths[-1]})",
                       train, len(timed), epochs * train_batches, statistic="mean"),
                  Part(f"{variant}: validation ({epochs} × {valid_batches} batches)", valid,
                       steps, epochs * valid_batches)]
        print(f"  {parts[-2].what}: {train:.3f} s; validation {valid:.3f} s", flush=True)
    return parts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.nmt_full_mode", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_source_arguments(parser)
    parser.add_argument("--steps", type=int, default=20,
                        help="timed validation batches (2 × as many training batches)")
    parser.add_argument("--record", action="store_true",
                        help="merge the result into benchmarks/results/full_mode.json")
    args = parser.parse_args(argv)
    epochs = sizes.settings("04", "full").epochs
    with translation_source(parser, args) as (source, cache):
        if args.record and source != "anki":
            parser.error("--record needs the real Anki pairs (--anki-zip)")
        data = load_translation(source, max_length=20, batch_size=128, vocab_size=8000,
                                cache_dir=cache)
        print(data.summary(), flush=True)
        load = os.getloadavg()[0]
        started = time.perf_counter()
        parts = measure(data, args.steps, epochs)
    minutes = sum(p.seconds for p in parts) / 60
    print(f"\nnotebook 04, full size, on '{source}': {minutes:.1f} min of training and validation "
          f"({(time.perf_counter() - started) / 60:.1f} min to measure); {machine()}")
    for p in parts:
        print(f"  {p.what:<100} {p.median_seconds:7.3f} s × {p.count:>6,} = {p.seconds / 60:5.1f} min")
    if args.record:
        how = "; ".join(f"{p.what}: {p.statistic} {p.median_seconds:.3f} s of {p.timed} timed × "
                        f"{p.count:,}" for p in parts)
        how += (f"; the real Anki pairs ({len(data.train_pairs):,} training pairs); the package's "
                "translator of each variant, as notebook 04 compiles it on a CPU (no XLA); "
                f"TensorFlow {tf.__version__} / Keras {keras.__version__}; "
                "decoding the test split not included; early stopping: none (the configured "
                "epochs)")
        now = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
        record_entry("04", "full", round(minutes, 1), how, COMMAND, f"{now}, load {load:.1f}")
        print("recorded in benchmarks/results/full_mode.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
