"""Where an epoch of notebook 03's full-size training goes: its input pipeline against the model's
steps, and what each pipeline change saves, measured in one run.

    python -m benchmarks.end_to_end prepare /tmp/e2e                # the stand-in reviews, once
    python -m benchmarks.imdb_epoch --stand-ins /tmp/e2e            # about 6 min
    python -m benchmarks.imdb_epoch --stand-ins /tmp/e2e --reviews 2000   # a smaller share

The reviews are ``benchmarks.end_to_end``'s stand-in of IMDB (TFDS's records in
``TFDS_DATA_DIR``: made-up words, IMDB's split sizes and length distribution), read by the
notebook's own ``load_imdb("tfds")``, vectorized by the notebook's ``TextVectorization``
(20,000 words, cut at 300) and trained by its model (``build_recurrent_classifier``, 64 units,
batch 128, Adam 1e-3).

Measured in one process, one after the other:

- **pipeline alone**: one epoch of training batches and one validation pass read and thrown
  away, with the notebook's ``.cache()`` and without it (vectorized again every epoch);
- **fit**: two epochs of ``fit`` with validation, as the notebook calls it, each epoch timed
  (the first one traces the training and validation steps);
- **steps alone**: the second epoch's batches, read into memory first, through
  ``train_on_batch`` and ``test_on_batch`` (after warm-up batches that trace them): the
  model's own share;
- **validation padded or grouped**: ``evaluate`` on the validation reviews padded to 300 (the
  notebook's ``valid_ids`` before issue 41) and grouped by length like the training batches
  (the notebook now), alternately, three times each; the ratio of the medians is what grouping
  the evaluation batches saves.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.imdb_epoch", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stand-ins", type=os.path.abspath, required=True,
                        help="the folder benchmarks.end_to_end prepare wrote")
    parser.add_argument("--reviews", type=int, default=None,
                        help="training and validation reviews to use (default: all)")
    args = parser.parse_args(argv)

    import keras
    import numpy as np
    import tensorflow as tf

    from benchmarks.notebooks import device
    from seqlab import config, sizes
    from seqlab.data import bucket_by_length, load_imdb
    from seqlab.lessons.nb03 import build_recurrent_classifier
    from seqlab.training import compile_sentiment_classifier

    s = sizes.settings("03", "full")
    batch = s.batch
    train, valid, _ = load_imdb("tfds", batch_size=batch, data_dir=f"{args.stand_ins}/tfds")
    if args.reviews:
        train, valid = (split.take(-(-args.reviews // batch)) for split in (train, valid))
    start = time.perf_counter()
    vectorizer = keras.layers.TextVectorization(max_tokens=s.max_tokens,
                                                output_sequence_length=s.sequence_length)
    vectorizer.adapt(train.map(lambda text, label: text))
    adapt_seconds = time.perf_counter() - start

    def vectorize(dataset, cache=True):
        dataset = dataset.map(lambda text, label: (vectorizer(text), label),
                              num_parallel_calls=tf.data.AUTOTUNE)
        return (dataset.cache() if cache else dataset).prefetch(tf.data.AUTOTUNE)

    keras.utils.set_random_seed(config.SEED)
    model = build_recurrent_classifier(s.max_tokens, s.units, embedding_dim=32)

    def seconds(work):
        start = time.perf_counter()
        work()
        return time.perf_counter() - start

    def read(dataset):
        for _ in dataset:
            pass

    print(f"{device()}, TensorFlow {tf.__version__}, Keras {keras.__version__}; stand-in reviews "
          f"from {args.stand_ins}; load {os.getloadavg()[0]:.1f} at the start")
    print(f"TextVectorization.adapt on the training split: {adapt_seconds:.1f} s\n")
    train_ids = bucket_by_length(vectorize(train), batch)   # the notebook's cell
    valid_ids = vectorize(valid)
    grouped_valid = bucket_by_length(vectorize(valid), batch)
    first_pass = seconds(lambda: read(valid_ids))            # bucket_by_length read train
    pipeline = seconds(lambda: (read(train_ids), read(valid_ids)))
    uncached = seconds(lambda: (read(bucket_by_length(vectorize(train, False), batch)),
                                read(vectorize(valid, False))))

    ends = []
    clock = keras.callbacks.LambdaCallback(
        on_epoch_end=lambda epoch, logs: ends.append(time.perf_counter()))
    compile_sentiment_classifier(model, 1e-3)
    begin = time.perf_counter()
    model.fit(train_ids, validation_data=valid_ids, epochs=2, verbose=0, callbacks=[clock])
    epochs = np.diff([begin, *ends])

    batches = list(train_ids.as_numpy_iterator())
    valid_batches = list(valid_ids.as_numpy_iterator())
    for x, y in batches[:3]:  # the traces of new widths (fit traces once, for any width)
        model.train_on_batch(x, y)
    for x, y in valid_batches[:2]:
        model.test_on_batch(x, y)
    steps = seconds(lambda: [model.train_on_batch(x, y) for x, y in batches]) + \
        seconds(lambda: [model.test_on_batch(x, y) for x, y in valid_batches])

    model.evaluate(grouped_valid, verbose=0)  # traces, fills its cache
    evaluations = {"padded to 300": [], "grouped by length": []}
    for _ in range(3):
        for name, dataset in (("padded to 300", valid_ids), ("grouped by length", grouped_valid)):
            evaluations[name].append(seconds(lambda d=dataset: model.evaluate(d, verbose=0)))
    widths = {name: np.mean([x.shape[1] for x, _ in dataset.as_numpy_iterator()])
              for name, dataset in (("padded to 300", valid_ids), ("grouped by length",
                                                                    grouped_valid))}

    steady = epochs[-1]
    print(f"{'one epoch of notebook 03 at full size':<58}{'seconds':>9}{'of fit':>8}")
    for what, value in [
            ("fit, epoch 1 (tracing the steps included)", epochs[0]),
            ("fit, epoch 2", steady),
            (f"steps alone ({len(batches)} training + {len(valid_batches)} validation batches)",
             steps),
            ("input pipeline alone, cached (the notebook)", pipeline),
            ("input pipeline alone, not cached (vectorized again)", uncached),
            ("first validation pass (vectorizing, filling the cache)", first_pass)]:
        print(f"{what:<58}{value:9.1f}{100 * value / steady:7.0f}%")
    print(f"\ninput pipeline's share of an epoch: {100 * pipeline / steady:.1f} % (alone; in "
          f"fit it overlaps the steps); fit beyond the steps: {steady - steps:.1f} s "
          f"({100 * (1 - steps / steady):.0f} %: Keras's loop, callbacks, and noise)\n")
    print(f"{'validation pass (7,500 reviews)':<34}{'mean width':>11}{'seconds (3 runs)':>30}")
    for name, times in evaluations.items():
        print(f"{name:<34}{widths[name]:11.0f}{'  '.join(f'{t:8.1f}' for t in times):>30}")
    ratio = np.median(evaluations["padded to 300"]) / np.median(evaluations["grouped by length"])
    print(f"grouped is {ratio:.2f}× as fast as padded (medians of 3 each, run alternately)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
