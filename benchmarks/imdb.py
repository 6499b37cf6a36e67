"""Training throughput of the case-study classifier, embedding frozen vs unfrozen.

    python -m benchmarks.imdb              # FAST: the stand-in module on the sample reviews
    python -m benchmarks.imdb --full       # nnlm-en-dim50 on IMDB (downloads; use a GPU)
    python -m benchmarks.imdb --full --steps 200 --epochs 2

One process, one model, the same batches: the classifier is first trained with its embedding
frozen (Adam 1e-3), then unfrozen and recompiled (Adam 1e-4), as in notebooks 01 and 02. For
each stage one warm-up epoch traces the training step, then ``--epochs`` epochs are timed
(no validation); the table gives training examples per second (median epoch), seconds per
epoch, trainable parameters, and the ratio frozen ÷ unfrozen (above 1: fine-tuning is that
many times slower per example). Unfrozen, every step also computes the embedding's gradient
and Adam updates its moments for the whole table: 16,500 numbers for the stand-in, 48 million
for nnlm-en-dim50.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402

from benchmarks.recurrent import device_description  # noqa: E402
from seqlab.data import load_imdb  # noqa: E402
from seqlab.layers import NNLM_EN_DIM50, STANDIN_HANDLE  # noqa: E402
from seqlab.lessons.nb01 import build_sentiment_classifier  # noqa: E402
from seqlab.training import compile_sentiment_classifier, count_parameters  # noqa: E402


def time_epochs(model: keras.Model, dataset, epochs: int, steps: int | None) -> list[float]:
    """Wall seconds of each of ``epochs`` training epochs, after one untimed warm-up epoch."""
    model.fit(dataset, epochs=1, steps_per_epoch=steps, verbose=0)
    seconds = []
    for _ in range(epochs):
        start = time.perf_counter()
        model.fit(dataset, epochs=1, steps_per_epoch=steps, verbose=0)
        seconds.append(time.perf_counter() - start)
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.imdb", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--full", action="store_true",
                        help="nnlm-en-dim50 and IMDB from TFDS instead of the stand-in and sample")
    parser.add_argument("--handle", help="another TF-Hub handle or SavedModel folder")
    parser.add_argument("--batch", type=int, default=None, help="default 32 (FAST), 128 (full)")
    parser.add_argument("--epochs", type=int, default=5, help="timed epochs per stage")
    parser.add_argument("--steps", type=int, default=None,
                        help="batches per epoch (default: the whole training split)")
    parser.add_argument("--repeat-data", type=int, default=4,
                        help="FAST only: repeat the 700 sample reviews this many times per "
                             "epoch, so an epoch lasts long enough to time")
    args = parser.parse_args(argv)

    batch = args.batch or (128 if args.full else 32)
    handle = args.handle or (NNLM_EN_DIM50 if args.full else STANDIN_HANDLE)
    train, _, _ = load_imdb("tfds" if args.full else "sample", batch_size=batch)
    if not args.full:
        train = train.repeat(args.repeat_data)
    examples = (args.steps * batch if args.steps
                else sum(int(texts.shape[0]) for texts, _ in train))

    keras.utils.set_random_seed(0)
    model = compile_sentiment_classifier(build_sentiment_classifier(handle), 1e-3)
    rows = []
    for stage in ("frozen", "unfrozen"):
        if stage == "unfrozen":
            model.layers[0].trainable = True
            compile_sentiment_classifier(model, 1e-4)
        seconds = statistics.median(time_epochs(model, train, args.epochs, args.steps))
        rows.append((stage, count_parameters(model)["trainable"], examples / seconds, seconds))

    print(f"IMDB classifier training throughput, frozen vs unfrozen embedding; device: "
          f"{device_description()}")
    print(f"embedding {handle} ({'full' if args.full else 'FAST'} mode), batch {batch}, "
          f"{examples:,} examples per epoch, median of {args.epochs} timed epochs after one "
          f"warm-up; Keras {keras.__version__}\n")
    header = f"{'embedding':<10} {'trainable params':>17} {'examples/s':>11} {'s/epoch':>8}"
    print(header)
    print("-" * len(header))
    for stage, params, rate, seconds in rows:
        print(f"{stage:<10} {params:>17,} {rate:>11,.0f} {seconds:>8.2f}")
    ratio = rows[0][2] / rows[1][2]
    print(f"\nratio frozen ÷ unfrozen examples/s: {ratio:.2f}x "
          f"(above 1: fine-tuning is that many times slower per example)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
