"""Embedding-table updates, today's path against the new one, in one run (issue 28).

    python -m benchmarks.embedding_updates                     # both parts (about 6 min, 2 cores)
    python -m benchmarks.embedding_updates --only skipgram     # or: fine_tuning
    python -m benchmarks.embedding_updates --rounds 4 --skipgram-steps 100

Two parts, each at the full-size shapes of its notebook, with stand-ins of the real data
(``benchmarks.stand_ins``; the real data cannot be downloaded here):

**Notebook 06's skip-gram**: two 20,000 × 100 tables, 4,096 pairs per step, K = 4 negatives,
window 2, Adam 0.005; the corpus is ``--reviews`` stand-in reviews of IMDB's mean length (230
Zipf-distributed ids each, 914 pairs each: every word counted as in the vocabulary).

- *input pipeline*: today's ``tf.data`` pipeline (every pair an element: ``flat_map`` per text,
  a cache, a 100,000-pair shuffle buffer, ``batch``, then negatives per batch; kept here as
  :func:`per_pair_skipgram_dataset`) against ``seqlab.data.skipgram_dataset`` (all pairs
  shuffled at once, then a few vectorised operations per batch), pairs per second alone;
- *training step, same batches*: ``SkipGram`` with ``keras.optimizers.Adam`` (today) against
  ``seqlab.training.optimizers.FusedAdam`` (the new path), and, as the other candidates,
  ``LazyAdam`` and Keras's Adam compiled with XLA (``jit_compile=True``), from the same initial
  weights on the same batches (drawn once, held in memory); the loss on held-out batches after
  the same number of steps, and as the *noise* how far today's path lands from itself when it
  sees the same batches in another order;
- *pipeline + step*: both whole paths in ``fit``, pairs per second.

**Notebook 02's fine-tuning**: the case-study classifier on a TF-Hub module of nnlm-en-dim50's
table size (963,812 × 50, random values, ``benchmarks.stand_ins.nnlm_sized_module``), batches of
128 stand-in reviews of 230 words (generated reviews of one label joined, so the labels can be
learned), Adam 1e-4 as notebook 02 compiles it (today) against ``LazyAdam`` 1e-4 (what
``seqlab.training.compile_sentiment_classifier`` now gives a TF-Hub model), and ``FusedAdam``
as the other candidate. The dense layers
are first trained ``--frozen-steps`` steps with the table frozen (notebook 01's stage), then
every model starts from those weights; reviews per second, the loss on held-out batches after
the same number of steps, and the noise as above.

The paths are timed alternately, ``--rounds`` rounds of ``--*-steps`` steps each, so a change in
the machine's load reaches both; a rate is the batch size over the median step time (the
first step of each ``fit`` call, which includes starting the iterator, left out). The load
average is printed: on a shared machine the rates are too low, the ratios less affected.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from dataclasses import dataclass

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from benchmarks.recurrent import device_description  # noqa: E402
from benchmarks.stand_ins import IMDB_MEAN_WORDS, nnlm_sized_module  # noqa: E402
from seqlab import config  # noqa: E402
from seqlab.data import skipgram_dataset  # noqa: E402
from seqlab.data.corpus import sample_log_uniform  # noqa: E402
from seqlab.layers import HubTextEmbedding  # noqa: E402
from seqlab.lessons.nb01 import build_sentiment_classifier  # noqa: E402
from seqlab.lessons.nb06 import SkipGram  # noqa: E402
from seqlab.training import compile_sentiment_classifier  # noqa: E402
from seqlab.training.optimizers import FusedAdam, LazyAdam  # noqa: E402

WINDOW, NEGATIVES = 2, 4


@dataclass
class Row:
    """One compared path: its rate and, where trained, its held-out loss."""

    what: str
    rate: float
    loss: float | None = None


# ----------------------------------------------------------------------------- timing


class StepTimes(keras.callbacks.Callback):
    """Wall time between consecutive training batches of each ``fit`` call."""

    def __init__(self):
        super().__init__()
        self.seconds: list[float] = []
        self.last: float | None = None

    def on_train_begin(self, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:  # the first batch of a fit call starts the iterator too
            self.seconds.append(now - self.last)
        self.last = now


def rate(times: StepTimes, examples_per_step: int) -> float:
    return examples_per_step / statistics.median(times.seconds)


def batches_dataset(batches: list) -> tf.data.Dataset:
    """In-memory batches as a dataset of those batches (no per-example work)."""
    stacked = tf.nest.map_structure(lambda *parts: np.stack(parts), *batches)
    return tf.data.Dataset.from_tensor_slices(stacked)


# ------------------------------------------------------------------ 06: skip-gram


def stand_in_ids(reviews: int, vocab: int, words: int = IMDB_MEAN_WORDS, seed: int = 0):
    """Zipf-distributed ids of ``reviews`` stand-in reviews of IMDB's mean length."""
    ranks = np.random.default_rng(seed).zipf(1.1, (reviews, words)) + 1
    return tf.ragged.constant(np.minimum(ranks, vocab - 1).tolist(), tf.int64)


def text_pairs(ids: tf.Tensor, window_size: int) -> tuple[tf.Tensor, tf.Tensor]:
    """All (centre, context) pairs of one text's ids ``(n,)``, ids 0 dropped: the old pipeline's.

    Args:
        ids: one text's token ids, int64 ``(n,)``; 0 is padding.
        window_size: context words on each side of a centre word.

    Example:
        >>> centres, contexts = text_pairs(tf.constant([5, 6, 7], tf.int64), 1)
        >>> sorted(zip(centres.numpy().tolist(), contexts.numpy().tolist()))
        [(5, 6), (6, 5), (6, 7), (7, 6)]
    """
    ids = tf.boolean_mask(ids, ids > 0)                 # (n,) without padding
    centres, contexts = [], []
    for offset in range(1, window_size + 1):
        left, right = ids[:-offset], ids[offset:]       # (n - offset,) each
        centres += [left, right]
        contexts += [right, left]
    return tf.concat(centres, 0), tf.concat(contexts, 0)


def per_pair_skipgram_dataset(sequences: tf.RaggedTensor, window_size: int, num_negatives: int,
                              vocab_size: int, batch_size: int, shuffle_buffer: int = 100_000,
                              seed: int = config.SEED, min_id: int = 2) -> tf.data.Dataset:
    """Notebook 06's pipeline before issue 28: one ``tf.data`` element per pair until ``batch``."""
    def pairs(ids):
        ids = tf.where(ids < min_id, tf.zeros_like(ids), ids)
        return tf.data.Dataset.from_tensor_slices(text_pairs(ids, window_size))

    def add_negatives(step, batch):
        centres, contexts = batch
        negatives = sample_log_uniform((tf.shape(centres)[0], num_negatives), vocab_size - min_id,
                                       seed=tf.stack([tf.cast(seed, tf.int64), step])) + min_id
        candidates = tf.concat([contexts[:, None], negatives], axis=1)       # (batch, 1 + K)
        labels = tf.concat([tf.ones_like(contexts[:, None], tf.float32),
                            tf.zeros_like(negatives, tf.float32)], axis=1)  # (batch, 1 + K)
        return (centres, candidates), labels

    all_pairs = tf.data.Dataset.from_tensor_slices(sequences).flat_map(pairs).cache()
    for _ in all_pairs.batch(1 << 16):  # fills the cache, as the old pipeline did
        pass
    return (all_pairs.shuffle(shuffle_buffer, seed=seed, reshuffle_each_iteration=True)
            .batch(batch_size, drop_remainder=True).enumerate()
            .map(add_negatives, num_parallel_calls=tf.data.AUTOTUNE)
            .prefetch(tf.data.AUTOTUNE))


def skipgram_model(vocab: int, dim: int, optimizer, jit_compile=False, weights=None) -> SkipGram:
    keras.utils.set_random_seed(config.SEED)
    model = SkipGram(vocab, dim)
    model.build()
    if weights is not None:
        model.set_weights(weights)
    model.compile(optimizer=optimizer, loss=keras.losses.BinaryCrossentropy(from_logits=True),
                  jit_compile=jit_compile)
    return model


def compare_skipgram(*, vocab=20_000, dim=100, batch=4096, reviews=1000, rounds=3, steps=100,
                     learning_rate=0.005, held_out=8) -> dict[str, list[Row]]:
    """Notebook 06's skip-gram: today's path and the new one, alternately (see the module doc)."""
    ids = stand_in_ids(reviews, vocab)
    today_data = per_pair_skipgram_dataset(ids, WINDOW, NEGATIVES, vocab, batch)
    new_data = skipgram_dataset(ids, WINDOW, NEGATIVES, vocab, batch_size=batch, seed=config.SEED)

    # 1. The input pipelines alone.
    pipelines = {"today: one element per pair": iter(today_data.repeat()),
                 "new: per batch": iter(new_data.repeat())}
    pipeline_seconds = {name: [] for name in pipelines}
    for _ in range(rounds):
        for name, iterator in pipelines.items():
            start = time.perf_counter()
            for _ in range(steps):
                next(iterator)
            pipeline_seconds[name].append((time.perf_counter() - start) / steps)
    pipeline_rows = [Row(name, batch / statistics.median(s)) for name, s in pipeline_seconds.items()]

    # 2. The training step on the same batches, from the same initial weights.
    drawn = [next(pipelines["new: per batch"]) for _ in range(rounds * steps + held_out)]
    train, test = drawn[:rounds * steps], batches_dataset(drawn[rounds * steps:])
    weights = skipgram_model(vocab, dim, "adam").get_weights()
    models = {
        "today: Adam": skipgram_model(vocab, dim, keras.optimizers.Adam(learning_rate), False,
                                      weights),
        "new: FusedAdam": skipgram_model(vocab, dim, FusedAdam(learning_rate), False, weights),
        "LazyAdam": skipgram_model(vocab, dim, LazyAdam(learning_rate), False, weights),
        "Adam with XLA (jit_compile=True)": skipgram_model(
            vocab, dim, keras.optimizers.Adam(learning_rate), True, weights),
    }
    noise = skipgram_model(vocab, dim, keras.optimizers.Adam(learning_rate), False, weights)
    other_order = [train[i] for i in np.random.default_rng(1).permutation(len(train))]
    timers = {name: StepTimes() for name in models}
    for r in range(rounds):
        chunk = batches_dataset(train[r * steps:(r + 1) * steps])
        for name, model in models.items():
            model.fit(chunk, epochs=1, verbose=0, callbacks=[timers[name]])
        noise.fit(batches_dataset(other_order[r * steps:(r + 1) * steps]), epochs=1, verbose=0)
    step_rows = [Row(name, rate(timers[name], batch), float(model.evaluate(test, verbose=0)))
                 for name, model in models.items()]
    step_rows.append(Row("today: Adam, the same batches in another order", float("nan"),
                         float(noise.evaluate(test, verbose=0))))

    # 3. Whole paths: pipeline + step in fit.
    paths = {"today: per-pair pipeline + Adam": (today_data, keras.optimizers.Adam(learning_rate)),
             "new: per-batch pipeline + FusedAdam": (new_data, FusedAdam(learning_rate))}
    fitted = {name: skipgram_model(vocab, dim, optimizer, False, weights)
              for name, (_, optimizer) in paths.items()}
    timers = {name: StepTimes() for name in paths}
    for _ in range(rounds):
        for name, (data, _) in paths.items():
            fitted[name].fit(data.repeat(), steps_per_epoch=steps, epochs=1, verbose=0,
                             callbacks=[timers[name]])
    fit_rows = [Row(name, rate(timers[name], batch), float(fitted[name].evaluate(test, verbose=0)))
                for name in paths]
    return {"input pipeline alone (pairs/s)": pipeline_rows,
            "training step, same batches (pairs/s)": step_rows,
            "pipeline + step in fit (pairs/s)": fit_rows}


# ---------------------------------------------------------------- 02: fine-tuning


def labelled_reviews(count: int, words: int = IMDB_MEAN_WORDS, seed: int = 0):
    """``count`` stand-in reviews of ``words`` words, each made of generated reviews of one label
    joined (so the label can be learned), and their labels ``(count, 1)`` float32."""
    from seqlab.data.synthetic_reviews import generate_reviews

    pools = {0: [], 1: []}
    for review in generate_reviews(max(400, count * words // 40), seed=seed):
        pools[review.label] += review.text.split()
    labels = np.random.default_rng(seed).integers(0, 2, count)
    texts, cursor = [], {0: 0, 1: 0}
    for label in labels:
        pool, start = pools[int(label)], cursor[int(label)]
        if start + words > len(pool):
            start = 0
        texts.append(" ".join(pool[start:start + words]))
        cursor[int(label)] = start + words
    return np.array(texts, dtype=object), labels.astype("float32")[:, None]


def hub_model(module: str, optimizer, weights) -> keras.Model:
    """The case-study classifier on ``module``, unfrozen, with ``weights``, compiled."""
    model = build_sentiment_classifier(HubTextEmbedding(module, trainable=True))
    model.set_weights(weights)
    if optimizer == "compile_sentiment_classifier":
        return compile_sentiment_classifier(model, 1e-4)
    model.compile(optimizer=optimizer, loss="binary_crossentropy", metrics=["accuracy"])
    return model


def compare_fine_tuning(module: str | None = None, *, batch=128, rounds=3, steps=20,
                        frozen_steps=100, held_out=8) -> dict[str, list[Row]]:
    """Notebook 02's fine-tuning step: Keras's Adam against LazyAdam (see the module doc)."""
    texts, labels = labelled_reviews(batch * (rounds * steps + frozen_steps + held_out))
    module = module or nnlm_sized_module(sorted({w.lower() for t in texts for w in t.split()}))

    def batches(first, count):
        return [(texts[i * batch:(i + 1) * batch], labels[i * batch:(i + 1) * batch])
                for i in range(first, first + count)]

    def dataset(parts):
        return tf.data.Dataset.from_tensor_slices(
            (np.concatenate([t for t, _ in parts]).astype(str),
             np.concatenate([y for _, y in parts]))).batch(batch)

    # Notebook 01's stage: the table frozen, the dense layers trained; every model starts here.
    keras.utils.set_random_seed(config.SEED)
    frozen = build_sentiment_classifier(HubTextEmbedding(module, trainable=False))
    compile_sentiment_classifier(frozen, 1e-3)
    frozen.fit(dataset(batches(0, frozen_steps)), epochs=1, verbose=0)
    weights = frozen.get_weights()
    del frozen
    train = batches(frozen_steps, rounds * steps)
    test = dataset(batches(frozen_steps + rounds * steps, held_out))

    models = {"today: Adam (notebook 02's compile)": hub_model(module, keras.optimizers.Adam(1e-4),
                                                               weights),
              "new: LazyAdam (compile_sentiment_classifier)": hub_model(
                  module, "compile_sentiment_classifier", weights),
              "FusedAdam": hub_model(module, FusedAdam(1e-4), weights)}
    noise = hub_model(module, keras.optimizers.Adam(1e-4), weights)
    other_order = [train[i] for i in np.random.default_rng(1).permutation(len(train))]
    timers = {name: StepTimes() for name in models}
    for r in range(rounds):
        for name, model in models.items():
            model.fit(dataset(train[r * steps:(r + 1) * steps]), epochs=1, verbose=0,
                      callbacks=[timers[name]])
        noise.fit(dataset(other_order[r * steps:(r + 1) * steps]), epochs=1, verbose=0)
    rows = [Row(name, rate(timers[name], batch), float(model.evaluate(test, verbose=0)[0]))
            for name, model in models.items()]
    rows.append(Row("today: Adam, the same batches in another order", float("nan"),
                    float(noise.evaluate(test, verbose=0)[0])))
    start_loss = float(hub_model(module, keras.optimizers.Adam(1e-4), weights)
                       .evaluate(test, verbose=0)[0])
    rows.append(Row("(the starting point: frozen-stage weights)", float("nan"), start_loss))
    return {"fine-tuning step, same batches (reviews/s)": rows}


# ---------------------------------------------------------------------------- table


def print_table(title: str, results: dict[str, list[Row]], steps: int) -> None:
    print(f"\n{title}")
    header = f"{'':<62} {'rate':>9} {'× today':>8} {f'loss after {steps} steps':>22}"
    print(header)
    print("-" * len(header))
    for part, rows in results.items():
        print(part)
        baseline = rows[0].rate
        for row in rows:
            rate_text = "" if np.isnan(row.rate) else f"{row.rate:,.0f}"
            ratio = "" if np.isnan(row.rate) else f"{row.rate / baseline:.2f}×"
            loss = "" if row.loss is None else f"{row.loss:.4f}"
            print(f"  {row.what:<60} {rate_text:>9} {ratio:>8} {loss:>22}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.embedding_updates",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=("skipgram", "fine_tuning"))
    parser.add_argument("--rounds", type=int, default=3, help="alternations of the paths")
    parser.add_argument("--skipgram-steps", type=int, default=100, help="skip-gram steps a round")
    parser.add_argument("--fine-tuning-steps", type=int, default=20,
                        help="fine-tuning steps a round")
    parser.add_argument("--reviews", type=int, default=1000, help="skip-gram stand-in reviews")
    args = parser.parse_args(argv)

    load = os.getloadavg()
    print(f"Embedding-table updates, today's path vs the new one; {device_description()}; "
          f"TensorFlow {tf.__version__}, Keras {keras.__version__}; load average at start "
          f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (1 / 5 / 15 min)")
    if args.only in (None, "skipgram"):
        results = compare_skipgram(reviews=args.reviews, rounds=args.rounds,
                                   steps=args.skipgram_steps)
        print_table(f"Notebook 06 skip-gram: 2 × 20,000 × 100 tables, 4,096 pairs a step, K = "
                    f"{NEGATIVES}, window {WINDOW}, Adam 0.005; stand-in corpus: {args.reviews:,} "
                    f"reviews of {IMDB_MEAN_WORDS} Zipf-distributed ids; {args.rounds} rounds × "
                    f"{args.skipgram_steps} steps per path", results,
                    args.rounds * args.skipgram_steps)
    if args.only in (None, "fine_tuning"):
        results = compare_fine_tuning(rounds=args.rounds, steps=args.fine_tuning_steps)
        print_table(f"Notebook 02 fine-tuning: nnlm-sized stand-in module (963,812 × 50, random "
                    f"values), batches of 128 stand-in reviews of {IMDB_MEAN_WORDS} words, lr "
                    f"1e-4; {args.rounds} rounds × {args.fine_tuning_steps} steps per path",
                    results, args.rounds * args.fine_tuning_steps)
    load = os.getloadavg()
    print(f"\nload average at the end {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
