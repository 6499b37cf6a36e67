"""Notebooks 03 and 08: review batches grouped by length against batches padded to the cut.

    python -m benchmarks.bucketing_reviews               # 03: 60 timed steps per pipeline (~5 min)
    python -m benchmarks.bucketing_reviews --steps 200   # longer: the quality columns mean more
    python -m benchmarks.bucketing_reviews --notebook 08 # 08's BERT classifier, word pieces cut at 256
    python -m benchmarks.bucketing_reviews --quick       # seconds (what the test runs)

Notebook 03 used to pad every review to 300 words (``TextVectorization(output_sequence_length=
300)``); its deep bidirectional LSTM takes a step per position, a masked one included. Now its
training batches are grouped by length (:func:`seqlab.data.bucket_by_length`) and padded to
their own longest review. This benchmark trains notebook 03's full-size model
(``build_recurrent_classifier``: embedding 32, two bidirectional LSTM layers of 64 units per
direction, Adam 1e-3, batch 128) twice from the same initial weights, once on each pipeline,
**alternately** in the same process (``--chunk`` steps of one, then of the other), so load
from other jobs falls on both; both pipelines cut the same training reviews.

The real IMDB reviews cannot be downloaded here, so the reviews are a **stand-in of their
lengths**: reviews written by ``seqlab.data.synthetic_reviews``, joined (same label) and cut to
lengths drawn from a log-normal distribution with IMDB's mean of about 230 words and median of
about 174 (the figures the project's issue 28 cites; the real distribution could not be read
here), then cut at 300 as the notebook cuts them. Bucketing saves in proportion to the padding
it removes, so the ratio printed depends on that assumed distribution; the printed *real %*
says how much of the padded batches was real.

Printed per pipeline: reviews/s and real tokens/s (over the summed step times, the first step
of every ``fit`` call left out: the trace and the shuffle buffer's refill, paid once per real
epoch), the share of real positions, and validation loss/accuracy on the same padded reviews
after the same number of steps (the generated reviews are learnable, so the two should agree
within noise); then the ratio of reviews/s, bucketed over padded.

``--notebook 08`` does the same for notebook 08's full-mode fine-tuning: a classifier of
``bert_tiny_en_uncased``'s architecture from random weights (:mod:`benchmarks.bert`; the preset
cannot be downloaded here, and a step's time depends on the architecture, not the weights),
Adam 5e-5, batch 32, the reviews turned into word pieces by keras-hub's
``BertTextClassifierPreprocessor`` at sequence length 256 and grouped by its ``padding_mask``,
as the notebook does. The word-piece vocabulary is learned from the stand-in reviews
(:func:`seqlab.data.build_wordpiece_vocabulary`, as FAST mode learns one), so nearly every
word is one piece, punctuation apart; the real uncased vocabulary splits more words of real
reviews into several pieces, so more of them reach the cut of 256 and grouping saves less than
printed here: for notebook 08 the printed ratio is an upper bound. From random weights at
BERT's fine-tuning rate, the quality columns say little after a few dozen steps; they show
that both pipelines train the same model from the same start.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from benchmarks.bucketing import machine  # noqa: E402
from benchmarks.stand_ins import IMDB_MEAN_WORDS, IMDB_MEDIAN_WORDS, imdb_review_lengths  # noqa: E402
from seqlab import config, sizes  # noqa: E402
from seqlab.data import bucket_by_length  # noqa: E402
from seqlab.data.length_buckets import sequence_lengths  # noqa: E402
from seqlab.data.synthetic_reviews import generate_reviews  # noqa: E402
from seqlab.lessons.nb03 import build_recurrent_classifier  # noqa: E402
from seqlab.training import compile_sentiment_classifier  # noqa: E402

CUT = 300                                        # notebook 03's full-mode SEQUENCE_LENGTH
BERT_CUT = sizes.settings("08", "full").sequence  # notebook 08's full-mode SEQUENCE_LENGTH
PIPELINES = ("padded", "bucketed")


def stand_in_reviews(count: int, seed: int = 0) -> tuple[list[str], np.ndarray]:
    """``count`` reviews of :func:`benchmarks.stand_ins.imdb_review_lengths`, each from generated reviews of one label."""
    generated = generate_reviews(max(200, count // 4), seed=seed + 1)
    words = {label: [r.text.split() for r in generated if r.label == label] for label in (0, 1)}
    rng = np.random.default_rng(seed)
    texts, labels = [], rng.integers(0, 2, count)
    for length, label in zip(imdb_review_lengths(count, seed), labels, strict=True):
        pool, chosen = words[int(label)], []
        while len(chosen) < length:
            chosen += pool[rng.integers(len(pool))]
        texts.append(" ".join(chosen[:length]))
    return texts, labels.astype("float32")


class StepLog(keras.callbacks.Callback):
    """Seconds of every training step and whether it was the first of its ``fit`` call."""

    def __init__(self):
        super().__init__()
        self.steps: list[tuple[float, bool]] = []

    def on_train_begin(self, logs=None):
        self.first = True

    def on_train_batch_begin(self, batch, logs=None):
        self.started = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        self.steps.append((time.perf_counter() - self.started, self.first))
        self.first = False


def take_counting(iterator, steps: int, counts: list):
    """The next ``steps`` batches of ``iterator``, appending each one's (reviews, real tokens,
    positions) to ``counts`` as it is trained on."""
    for _ in range(steps):
        ids, labels = next(iterator)
        width = tf.nest.flatten(ids)[0]                              # (batch, length)
        counts.append((int(width.shape[0]), int(tf.reduce_sum(sequence_lengths(ids))),
                       int(tf.size(width))))
        yield ids, labels


def lstm_setup(args, texts, labels):
    """Notebook 03: ``TextVectorization`` cut at 300 words; its recurrent classifier."""
    vectorizer = keras.layers.TextVectorization(max_tokens=20_000, output_sequence_length=CUT)
    vectorizer.adapt(texts[: args.train])
    ids = vectorizer(texts).numpy()                                    # (reviews, 300)
    train = tf.data.Dataset.from_tensor_slices((ids[: args.train], labels[: args.train]))
    valid = tf.data.Dataset.from_tensor_slices((ids[args.train:], labels[args.train:]))

    def build():
        model = build_recurrent_classifier(vectorizer.vocabulary_size(), args.units,
                                           embedding_dim=32)
        compile_sentiment_classifier(model, 1e-3)
        return model

    return train, valid, build


def bert_setup(args, texts, labels):
    """Notebook 08: word pieces cut at ``args.cut`` by keras-hub's classifier preprocessor; a
    classifier of ``bert_tiny_en_uncased``'s architecture from random weights."""
    from benchmarks import bert as bert_benchmark
    from seqlab.data import build_wordpiece_vocabulary, import_keras_hub

    keras_hub = import_keras_hub()
    vocabulary = build_wordpiece_vocabulary(texts[: args.train], bert_benchmark.BERT_TINY["vocabulary_size"])
    preprocessor = keras_hub.models.BertTextClassifierPreprocessor(
        keras_hub.models.BertTokenizer(vocabulary=vocabulary), sequence_length=args.cut)
    labels = labels.astype("int32")

    def pieces(split):  # {"token_ids", "segment_ids", "padding_mask"}: (reviews, cut) each
        data = tf.data.Dataset.from_tensor_slices((texts[split], labels[split])).batch(256)
        return data.map(preprocessor, num_parallel_calls=tf.data.AUTOTUNE).unbatch()

    def build():
        return bert_benchmark.build_classifier(keras_hub)[0]

    return pieces(slice(None, args.train)), pieces(slice(args.train, None)), build


SETUPS = {"03": lstm_setup, "08": bert_setup}


def run(args) -> dict:
    texts, labels = stand_in_reviews(args.train + args.valid)
    train, valid, build = SETUPS[args.notebook](args, np.asarray(texts, dtype=object), labels)
    padded = train.shuffle(args.train, seed=config.SEED).batch(args.batch).cache()
    pipelines = {"padded": padded.repeat(),
                 "bucketed": bucket_by_length(padded, args.batch, seed=config.SEED).repeat()}
    valid = valid.batch(args.batch).cache()

    models, logs = {}, {}
    keras.utils.set_random_seed(config.SEED)
    first = build()
    for name in PIPELINES:
        models[name] = build()
        models[name].set_weights(first.get_weights())                  # same start
        logs[name] = StepLog()
    iterators = {name: iter(pipelines[name]) for name in PIPELINES}   # same stream across chunks
    counts = {name: [] for name in PIPELINES}
    done = 0
    while done < args.steps:
        chunk = min(args.chunk, args.steps - done)
        for name in PIPELINES:
            batches = tf.data.Dataset.from_generator(
                lambda name=name, chunk=chunk: take_counting(iterators[name], chunk, counts[name]),
                output_signature=pipelines[name].element_spec)
            models[name].fit(batches, epochs=1, steps_per_epoch=chunk, verbose=0,
                             callbacks=[logs[name]])
        done += chunk

    results = {}
    for name in PIPELINES:
        timed = logs[name].steps
        kept = [i for i, (_, first_of_fit) in enumerate(timed) if not first_of_fit]
        seconds = sum(timed[i][0] for i in kept)
        reviews, real = (sum(counts[name][i][k] for i in kept) for k in (0, 1))
        positions = sum(c[2] for c in counts[name])
        real_share = sum(c[1] for c in counts[name]) / positions
        loss, accuracy = models[name].evaluate(valid, verbose=0)
        results[name] = {"reviews_s": reviews / seconds, "tokens_s": real / seconds,
                         "real": real_share, "val_loss": loss, "val_acc": accuracy,
                         "steps": len(timed)}
    return results


def format_table(results: dict) -> str:
    lines = [f"{'pipeline':<10}{'steps':>6}{'reviews/s':>11}{'real tokens/s':>15}{'real %':>8}"
             f"{'val loss':>10}{'val acc':>9}", "-" * 69]
    for name, r in results.items():
        lines.append(f"{name:<10}{r['steps']:>6}{r['reviews_s']:>11.1f}{r['tokens_s']:>15,.0f}"
                     f"{100 * r['real']:>7.0f}%{r['val_loss']:>10.3f}{r['val_acc']:>9.3f}")
    ratio = results["bucketed"]["reviews_s"] / results["padded"]["reviews_s"]
    lines.append(f"bucketed / padded reviews per second: {ratio:.2f}x")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bucketing_reviews",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notebook", choices=sorted(SETUPS), default="03",
                        help="03: the recurrent classifier, words cut at 300; 08: the BERT "
                             "classifier, word pieces cut at 256")
    parser.add_argument("--steps", type=int, default=60, help="training steps per pipeline")
    parser.add_argument("--chunk", type=int, default=20, help="steps before switching pipeline")
    parser.add_argument("--train", type=int, default=17_500, help="training reviews (IMDB's)")
    parser.add_argument("--valid", type=int, default=1_000, help="validation reviews")
    parser.add_argument("--batch", type=int, help="reviews per batch; default: 128 (03), 32 (08)")
    parser.add_argument("--units", type=int, default=64, help="03's LSTM units per direction")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, seconds")
    args = parser.parse_args(argv)
    args.batch = args.batch or (32 if args.notebook == "08" else 128)
    args.cut = BERT_CUT if args.notebook == "08" else CUT
    if args.quick:
        args.steps, args.chunk, args.train, args.valid, args.batch, args.units = 4, 2, 300, 64, 16, 8
        args.cut = 160 if args.notebook == "08" else args.cut
    load = os.getloadavg()[0]
    print(f"{machine()}; load average {load:.1f} at the start")
    model = ("notebook 08's BERT classifier (bert_tiny_en_uncased's architecture, random "
             "weights), word pieces" if args.notebook == "08"
             else f"notebook 03's classifier, units {args.units}, words")
    print(f"{model} cut at {args.cut}, batch {args.batch}, {args.train:,} stand-in reviews "
          f"(log-normal lengths, mean {IMDB_MEAN_WORDS}, median {IMDB_MEDIAN_WORDS} words); "
          f"{args.steps} steps per pipeline, alternating every {args.chunk}")
    print(format_table(run(args)))
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
