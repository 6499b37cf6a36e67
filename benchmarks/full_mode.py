"""Full-mode and class-size training time of notebooks 01, 02, 03, 06, 07 and 08 on this CPU —
the one measured source of the full-mode times the README table and the title cells state.

    python -m benchmarks.full_mode                 # measure, record, update README + title cells
    python -m benchmarks.full_mode --only 01 07    # measure these notebooks, merge them in
    python -m benchmarks.full_mode --sync          # no measuring: README + title cells from the record

Full mode downloads IMDB, tiny_shakespeare, nnlm-en-dim50 and a keras-hub preset, which this
project's machines cannot reach. A training step's time depends on the shapes, not on the
values, so each notebook's full-mode model is built here as the notebook builds it (the same
seqlab builders, sizes, batch, sequence lengths, optimiser) and fed **stand-ins of the real
shapes** (``benchmarks.stand_ins`` lists them), each named as a stand-in in the output.

Each part (training, a validation pass, testing) is timed as the median of ``--steps`` batches
after one warm-up batch (``train_on_batch`` / ``test_on_batch``; notebook 03's training batches,
grouped by length and so of different widths: the mean of ``2 × --steps`` of them in an epoch's
order, after three warm-up batches; notebook 06's skip-gram step through the notebook's own ``tf.data`` pipeline in ``fit``), then multiplied by the notebook's
number of batches; a size that trains the same model reuses the same timings, so full and class
differ by their numbers of batches only. Early stopping: the configured epochs are used, an
upper bound, except where a run of the notebook on the real data measured where it stops
(notebooks 03 and 07, ``benchmarks.early_stopping``). Downloads, tokenizing, vectorizer fitting, sampling and plots are not included.
The machine's load average is recorded with each measurement: on a shared machine the times
are too long, not too short.

The record, ``benchmarks/results/full_mode.json``, holds ``full`` and ``class`` entries per
notebook; :func:`record_entry` (``benchmarks.full_mode_record``) merges one entry (notebooks 04
and 05 are measured on the real Anki corpus by other commands and added with it). ``--sync``
rewrites the README's columns and each title cell's run-time phrase from the record only,
through the templates of ``benchmarks.record_prose``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

# record_entry, read_record and the stand-ins are imported from here by other commands.
from benchmarks import early_stopping, lm_schedule  # noqa: E402
from benchmarks.full_mode_record import (  # noqa: E402, F401
    CLASS_LIMIT_MINUTES,
    RECORD,
    SIZES,
    print_record,
    read_record,
    record_entry,
)
from benchmarks.full_mode_timing import (  # noqa: E402
    Part,
    batches,
    cached,
    hub_classifier_parts,
    mean_seconds,
    median_seconds,
)
from benchmarks.notebooks import device  # noqa: E402
from benchmarks.record_prose import sync  # noqa: E402
from benchmarks.stand_ins import (  # noqa: E402, F401
    HUB_STAND_IN,
    IMDB_CORPUS,
    IMDB_MEAN_WORDS,
    IMDB_MEDIAN_WORDS,
    IMDB_TEST,
    IMDB_TRAIN,
    IMDB_VALID,
    SHAKESPEARE_CHARS,
    SHAKESPEARE_VOCAB,
    imdb_grouped_batches,
    nnlm_sized_module,
    review_batch,
)
from seqlab import config, sizes  # noqa: E402

MEASURED_NOTEBOOKS = ("01", "02", "03", "06", "07", "08")

#: The numbers each notebook takes from ``seqlab.sizes.SETTINGS`` at each size (the one home of
#: the sizes), with the constants of its cells that do not change with the size. 01 and 02
#: train within the class limit at full size: their class size is their full size.
def _sized(number: str, **constants) -> dict:
    return {size: {**constants, **sizes.settings(number, size)} for size in SIZES}


SETTINGS = {
    "01": {"full": sizes.settings("01", "full")},
    "02": {"full": sizes.settings("02", "full")},
    "03": _sized("03", batch=128, units=64, sequence=300, max_tokens=20_000, adding_epochs=10,
                 adding_examples=10_000, adding_steps=50),
    "06": _sized("06", dim=100, vocab=20_000, pairs_batch=4096, batch=128),
    "07": _sized("07", chars=SHAKESPEARE_CHARS, steps=100, batch=32),
    "08": _sized("08", batch=32),
}
for _size in SIZES:  # None: every review of the corpus
    SETTINGS["06"][_size]["reviews"] = SETTINGS["06"][_size]["reviews"] or IMDB_CORPUS


# ---------------------------------------------------------------------------- notebooks


def measure_01(s: dict, steps: int) -> tuple[list[Part], str]:
    t = cached(("hub", s["batch"]), lambda: hub_classifier_parts(s["batch"], steps))
    train, valid, test = (batches(n, s["batch"]) for n in (IMDB_TRAIN, IMDB_VALID, IMDB_TEST))
    return [Part(f"training, frozen embedding ({s['epochs']} epochs × {train} batches)",
                 t["frozen"], steps, s["epochs"] * train),
            Part(f"validation ({s['epochs']} × {valid} batches)", t["evaluate"], steps,
                 s["epochs"] * valid),
            Part(f"testing: evaluate + predict ({2} × {test} batches)", t["evaluate"], steps,
                 2 * test)], HUB_STAND_IN


def measure_02(s: dict, steps: int) -> tuple[list[Part], str]:
    t = cached(("hub", s["batch"]), lambda: hub_classifier_parts(s["batch"], steps))
    train, valid, test = (batches(n, s["batch"]) for n in (IMDB_TRAIN, IMDB_VALID, IMDB_TEST))
    epochs = s["fine_tuning_epochs"] + 2 * s["exercise_epochs"]
    return [Part(f"training, embedding unfrozen: fine-tuning {s['fine_tuning_epochs']} + "
                 f"Exercise 2's 2 × {s['exercise_epochs']} epochs, × {train} batches",
                 t["unfrozen"], steps, epochs * train),
            Part(f"validation ({epochs} × {valid} batches)", t["evaluate"], steps, epochs * valid),
            Part(f"testing, frozen and fine-tuned (2 × {test} batches)", t["evaluate"], steps,
                 2 * test)], HUB_STAND_IN + "; notebook 01's frozen weights loaded, not retrained"


def measure_03(s: dict, steps: int, size: str = "full") -> tuple[list[Part], str]:
    import keras
    import numpy as np

    from seqlab.layers import GRUCell
    from seqlab.lessons.nb03 import build_recurrent_classifier
    from seqlab.training import compile_sentiment_classifier

    def times():
        rng = np.random.default_rng(0)
        ids = np.zeros((s["batch"], s["sequence"]), "int64")  # IMDB's mean length, padded
        ids[:, :IMDB_MEAN_WORDS] = rng.integers(2, s["max_tokens"], (s["batch"], IMDB_MEAN_WORDS))
        labels = rng.integers(0, 2, (s["batch"], 1)).astype("float32")
        keras.utils.set_random_seed(config.SEED)
        model = build_recurrent_classifier(s["max_tokens"], s["units"], embedding_dim=32)
        compile_sentiment_classifier(model, 1e-3)
        grouped = imdb_grouped_batches(IMDB_TRAIN, s["batch"], s["sequence"], s["max_tokens"])
        for x, y in grouped[:3]:  # warm-up: the first traces of a sequence axis of None
            model.train_on_batch(x, y)
        train_s = mean_seconds([lambda x=x, y=y: model.train_on_batch(x, y)
                                for x, y in grouped[3: 3 + 2 * steps]])
        widths = [x.shape[1] for x, _ in grouped[3: 3 + 2 * steps]]
        # validation and testing: padded to the cut, as the notebook's valid_ids and test_ids
        eval_s = median_seconds(lambda: model.test_on_batch(ids, labels), steps)

        adding = keras.Sequential([keras.Input((s["adding_steps"], 2)),
                                   keras.layers.RNN(GRUCell(16)),
                                   keras.layers.Dense(1, activation="sigmoid")])
        adding.compile(optimizer=keras.optimizers.Adam(1e-2), loss="binary_crossentropy")
        x = rng.uniform(size=(64, s["adding_steps"], 2)).astype("float32")
        y = rng.integers(0, 2, (64, 1)).astype("float32")
        return (train_s, widths, eval_s,
                median_seconds(lambda: adding.train_on_batch(x, y), steps))

    train_s, widths, eval_s, adding_s = cached(
        ("bilstm", s["batch"], s["units"], s["sequence"], s["max_tokens"], s["adding_steps"]), times)

    train, valid, test = (batches(n, s["batch"]) for n in (IMDB_TRAIN, IMDB_VALID, IMDB_TEST))
    adding_batches = batches(s["adding_examples"], 64)
    # Early stopping's epochs on the real reviews where recorded (benchmarks.early_stopping)
    stopped = early_stopping.epochs_at("03", size)
    epochs = min(stopped["epochs"], s["epochs"]) if stopped else s["epochs"]
    stopping = (f"; early stopping: {epochs} of at most {s['epochs']} epochs, as on the real "
                f"reviews (benchmarks/results/early_stopping.json: {stopped['command']})"
                if stopped else "")
    return [Part(f"training, deep bidirectional LSTM, batches grouped by length ({epochs} "
                 f"epochs × {train} batches; mean of {len(widths)} grouped batches of widths "
                 f"{min(widths)}–{max(widths)}, mean {sum(widths) / len(widths):.0f})",
                 train_s, len(widths), epochs * train, statistic="mean"),
            Part(f"validation ({epochs} × {valid} batches)", eval_s, steps, epochs * valid),
            Part(f"testing ({test} batches)", eval_s, steps, test),
            Part(f"Exercise 3: two GRUs on the adding task (2 × {s['adding_epochs']} epochs × "
                 f"{adding_batches} batches)", adding_s, steps,
                 2 * s["adding_epochs"] * adding_batches)], (
        f"IMDB stand-in: random token ids; training: lengths from a log-normal with IMDB's "
        f"median {IMDB_MEDIAN_WORDS} and mean {IMDB_MEAN_WORDS} words, cut at {s['sequence']}, "
        f"grouped by seqlab.data.bucket_by_length as the notebook groups them; validation and "
        f"testing: {IMDB_MEAN_WORDS} per review, padded to {s['sequence']}{stopping}")



def measure_06(s: dict, steps: int) -> tuple[list[Part], str]:
    import keras
    import numpy as np
    import tensorflow as tf

    from seqlab.data import skipgram_dataset
    from seqlab.lessons.nb06 import SkipGram, build_word2vec_classifier
    from seqlab.training import FusedAdam, compile_sentiment_classifier

    def skipgram_step() -> float:
        rng = np.random.default_rng(0)
        # Zipf-like ids of the stand-in reviews, 1,000 reviews of IMDB's mean length
        ranks = np.minimum(rng.zipf(1.1, (1000, IMDB_MEAN_WORDS)) + 1, s["vocab"] - 1)
        dataset = skipgram_dataset(tf.ragged.constant(ranks.tolist(), tf.int64), 2, 4, s["vocab"],
                                   batch_size=s["pairs_batch"], seed=config.SEED).repeat()
        keras.utils.set_random_seed(config.SEED)
        word2vec = SkipGram(s["vocab"], s["dim"])
        word2vec.compile(optimizer=FusedAdam(learning_rate=0.005),  # as notebook 06
                         loss=keras.losses.BinaryCrossentropy(from_logits=True),
                         metrics=[keras.metrics.BinaryAccuracy(threshold=0.0, name="accuracy")])
        ends = []
        timer = keras.callbacks.LambdaCallback(
            on_train_batch_end=lambda batch, logs: ends.append(time.perf_counter()))
        word2vec.fit(dataset, steps_per_epoch=steps + 2, epochs=1, verbose=0, callbacks=[timer])
        return statistics.median(np.diff(ends[1:]))  # pipeline + step, the first batch left out

    def classifier_steps() -> dict[str, float]:
        texts, labels = review_batch(s["batch"])
        vectorizer = keras.layers.TextVectorization(max_tokens=s["vocab"], output_mode="int")
        words = sorted({w for text in texts.numpy() for w in text.decode().lower().split()})
        vectorizer.set_vocabulary(words + [f"word{i}" for i in range(s["vocab"] - 2 - len(words))])
        vectors = np.random.default_rng(0).normal(0, 0.1, (s["vocab"], s["dim"]))
        out = {}
        for name, trainable in [("word vectors frozen", False), ("word vectors trained", True)]:
            model = build_word2vec_classifier(vectorizer, vectors, trainable=trainable)
            compile_sentiment_classifier(model, 1e-3)
            out[name] = median_seconds(lambda m=model: m.train_on_batch(texts, labels), steps)
            out[f"{name}, evaluate"] = median_seconds(lambda m=model: m.test_on_batch(texts, labels),
                                                      steps)
        return out

    pairs_per_review = 2 * sum(IMDB_MEAN_WORDS - offset for offset in (1, 2))  # window 2
    pair_batches = (s["reviews"] * pairs_per_review) // s["pairs_batch"]
    skip_s = cached(("skipgram", s["vocab"], s["dim"], s["pairs_batch"]), skipgram_step)
    w2v = cached(("w2v", s["vocab"], s["dim"], s["batch"]), classifier_steps)
    hub = cached(("hub", s["batch"]), lambda: hub_classifier_parts(s["batch"], steps))
    train, valid, test = (batches(n, s["batch"]) for n in (IMDB_TRAIN, IMDB_VALID, IMDB_TEST))
    e = s["classifier_epochs"]
    return [Part(f"skip-gram ({s['epochs']} epochs × {pair_batches:,} batches of "
                 f"{s['pairs_batch']} pairs from {s['reviews']:,} reviews)", skip_s, steps,
                 s["epochs"] * pair_batches),
            Part(f"classifier, skip-gram vectors frozen ({e} epochs × {train} batches)",
                 w2v["word vectors frozen"], steps, e * train),
            Part(f"classifiers, vectors fine-tuned and from scratch (2 × {e} × {train})",
                 w2v["word vectors trained"], steps, 2 * e * train),
            Part(f"classifier, nnlm-en-dim50 frozen ({e} × {train})", hub["frozen"], steps, e * train),
            Part(f"classifier, nnlm-en-dim50 fine-tuned ({e} × {train})", hub["unfrozen"], steps,
                 e * train),
            Part(f"validation and testing, word-vector classifiers (3 × ({e} × {valid} + {test}))",
                 w2v["word vectors frozen, evaluate"], steps, 3 * (e * valid + test)),
            Part(f"validation and testing, nnlm-en-dim50 classifiers (2 × ({e} × {valid} + {test}))",
                 hub["evaluate"], steps, 2 * (e * valid + test))], (
        f"IMDB stand-in: {IMDB_MEAN_WORDS}-word generated reviews (skip-gram: Zipf-distributed "
        f"ids, {pairs_per_review} pairs per review); " + HUB_STAND_IN.split("; ")[1])


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


def measure_08(s: dict, steps: int) -> tuple[list[Part], str]:
    import keras

    from benchmarks import bert as bert_benchmark
    from seqlab.data import import_keras_hub

    def times():
        keras_hub = import_keras_hub()
        keras.utils.set_random_seed(0)
        classifier, _ = bert_benchmark.build_classifier(keras_hub)
        return bert_benchmark.time_steps(classifier, s["sequence"], s["batch"], steps)

    train_s, predict_s = cached(("bert", s["sequence"], s["batch"]), times)
    train, valid, test = (batches(n, s["batch"]) for n in (IMDB_TRAIN, IMDB_VALID, IMDB_TEST))
    e = s["fine_tune_epochs"]
    return [Part(f"fine-tuning, random weights and preset (2 × {e} epochs × {train} batches)",
                 train_s, steps, 2 * e * train),
            Part(f"validation (2 × {e} × {valid} batches)", predict_s, steps, 2 * e * valid),
            Part(f"testing (2 × {test} batches)", predict_s, steps, 2 * test)], (
        f"bert_tiny_en_uncased stand-in: its architecture from random weights "
        f"(benchmarks.bert), token ids ({s['batch']}, {s['sequence']}); IMDB split sizes; "
        "notebook 01/02's rows read from their results, not retrained")


MEASURE = {"01": measure_01, "02": measure_02, "03": measure_03, "06": measure_06,
           "07": measure_07, "08": measure_08}


# ------------------------------------------------------------------------------ measuring


def measure(number: str, size: str, steps: int) -> tuple[float, str]:
    """(minutes, how) of one notebook at one size, printing each part."""
    settings = SETTINGS[number].get(size)
    reused = settings is None
    arguments = {"size": size} if number in ("03", "07") else {}  # early stopping's epochs
    parts, stand_ins = MEASURE[number](settings or SETTINGS[number]["full"], steps, **arguments)
    minutes = sum(p.seconds for p in parts) / 60
    for p in parts:
        print(f"  {number} {size:<5} {p.what:<92} {p.median_seconds:8.3f} s × {p.count:>7,} = "
              f"{p.seconds / 60:6.1f} min")
    how = "; ".join(f"{p.what}: {p.statistic} {p.median_seconds:.3f} s of {p.timed} timed × {p.count:,}"
                    for p in parts)
    how = f"{how}; stand-ins of the real shapes: {stand_ins}"
    if "early stopping" not in stand_ins:
        how += "; early stopping: the configured epochs (an upper bound)"
    if reused:
        how = f"class size = full size (training already ≤ {CLASS_LIMIT_MINUTES} min); {how}"
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
