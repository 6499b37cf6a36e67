"""Full-mode and class-size training time of notebooks 01, 02, 03, 06, 07 and 08 on this CPU —
the one measured source of the full-mode times the README table and the title cells state.

    python -m benchmarks.full_mode                 # measure, record, update README + title cells
    python -m benchmarks.full_mode --only 01 07    # measure these notebooks, merge them in
    python -m benchmarks.full_mode --sync          # no measuring: README + title cells from the record

Full mode downloads IMDB, tiny_shakespeare, nnlm-en-dim50 and a keras-hub preset, which this
project's machines cannot reach. A training step's time depends on the shapes, not on the
values, so each notebook's full-mode model is built here as the notebook builds it (the same
seqlab builders, sizes, batch, sequence lengths, optimiser) and fed **stand-ins of the real
shapes**, each named as a stand-in in the output:

- IMDB reviews: reviews written by ``seqlab.data.synthetic_reviews``, joined and cut to
  :data:`IMDB_MEAN_WORDS` words each (the reviews' published mean length; the real reviews
  cannot be read here), in IMDB's split sizes: 17,500 training / 7,500 validation reviews
  (``train[:70%]`` / ``train[70%:]``), 25,000 test, 75,000 for word vectors (train +
  unsupervised); notebook 06's skip-gram pairs are counted as if every word were
  in its vocabulary (an upper bound);
- nnlm-en-dim50: a TF-Hub-format module of its real table size (963,812 × 50, random values)
  made like the FAST stand-in (``seqlab.data.standin.StandinTextEmbedding``);
- tiny_shakespeare: random ids over its 65 characters in its windows (1,115,394 characters,
  the last 10 % held out, as ``split_text`` cuts it);
- notebook 08's preset: ``benchmarks.bert``'s classifier of ``bert_tiny_en_uncased``'s
  architecture from random weights.

Each part (training, a validation pass, testing) is timed as the median of ``--steps`` batches
after one warm-up batch (a size that trains the same model reuses the same timings, so full and
class differ by their numbers of batches only) (``train_on_batch`` / ``test_on_batch``; notebook 06's skip-gram step
through the notebook's own ``tf.data`` pipeline in ``fit``), then multiplied by the notebook's
number of batches. Early stopping: the configured epochs are used, an upper bound. Downloads,
tokenizing, vectorizer fitting, sampling and plots are not included. The machine's load average
is recorded with each measurement: on a shared machine the times are too long, not too short.

The record, ``benchmarks/results/full_mode.json``, holds ``full`` and ``class`` entries per
notebook; :func:`record_entry` merges one entry (notebooks 04 and 05 are measured on the real
Anki corpus by other commands and added with it). ``--sync`` rewrites the README's columns
and each title cell's ``full mode ...: training about N min on 2 CPU cores, or about M min
with SIZE = "class"; on a GPU not measured ...`` phrase from the record only.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import nbformat  # noqa: E402

from benchmarks.notebooks import device, readme_table, table_line  # noqa: E402
from seqlab import config, sizes  # noqa: E402
from seqlab.notebook_files import notebook_paths  # noqa: E402

RECORD = config.REPO_ROOT / "benchmarks" / "results" / "full_mode.json"
README = config.REPO_ROOT / "README.md"
CLASS_COLUMN = "class size (2 CPU cores)"
FULL_COLUMN = "full mode (2 CPU cores)"
SIZES = ("full", "class")
#: The most minutes a class-size notebook may train on 2 CPU cores.
CLASS_LIMIT_MINUTES = 15
MEASURED_NOTEBOOKS = ("01", "02", "03", "06", "07", "08")
GPU_CLAUSE = "on a GPU not measured (no GPU was lent to this project)"
#: The title cell's full-mode phrase, which ``--sync`` rewrites (whitespace may wrap).
TITLE_PHRASE = re.compile(
    r"training\s+about\s+(\d+)\s+min\s+on\s+2\s+CPU\s+cores,\s+or\s+about\s+(\d+)\s+min\s+"
    r"with\s+SIZE\s+=\s+\"class\"")

#: What the title cells said before full mode was measured (notebook 04's still does).
UNMEASURED_SENTENCE = re.compile(
    r"\s+(?:is\s+)?sized\s+for\s+a\s+Colab\s+GPU;\s+its\s+time\s+is\s+not\s+measured\s+yet\s+on\s+a"
    r"\s+GPU\s+\([^)]*\)\.")

# Real data sizes (the splits the notebooks make of them)
IMDB_MEAN_WORDS = 230     # IMDB's mean review length in words (published; not measurable here)
IMDB_TRAIN, IMDB_VALID, IMDB_TEST = 17_500, 7_500, 25_000   # train[:70%], train[70%:], test
IMDB_CORPUS = 75_000      # train + unsupervised: notebook 06's word-vector corpus
NNLM_ROWS, NNLM_DIM = 963_812, 50
SHAKESPEARE_CHARS, SHAKESPEARE_VOCAB = 1_115_394, 66   # 65 characters + id 0 (unseen)

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


@dataclass
class Part:
    """One timed kind of batch and how many of them the notebook runs."""

    what: str
    median_seconds: float
    timed: int
    count: int

    @property
    def seconds(self) -> float:
        return self.median_seconds * self.count


def median_seconds(step: Callable[[], object], steps: int) -> float:
    """Median wall time of ``step()`` over ``steps`` calls after one warm-up call (tracing)."""
    step()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def batches(examples: int, batch: int) -> int:
    return math.ceil(examples / batch)


# ----------------------------------------------------------------------------- stand-ins


def imdb_length_reviews(count: int, words: int = IMDB_MEAN_WORDS, seed: int = 0) -> list[str]:
    """Stand-in reviews of IMDB's length: generated reviews joined and cut to ``words`` words."""
    from seqlab.data.synthetic_reviews import generate_reviews

    pool = " ".join(review.text for review in generate_reviews(max(200, count * 4), seed=seed)).split()
    reviews, start = [], 0
    for _ in range(count):
        if start + words > len(pool):
            start = 0
        reviews.append(" ".join(pool[start: start + words]))
        start += words
    return reviews


_NNLM_STAND_IN: dict[str, str] = {}


def nnlm_sized_module() -> str:
    """A TF-Hub-format text embedding with nnlm-en-dim50's table size (random values): a stand-in."""
    if "path" in _NNLM_STAND_IN:
        return _NNLM_STAND_IN["path"]
    import numpy as np
    import tensorflow as tf

    from seqlab.data.standin import NUM_OOV_BUCKETS, StandinTextEmbedding

    words = sorted({w.lower() for review in imdb_length_reviews(200) for w in review.split()})
    vocabulary = words + [f"word{i}" for i in range(NNLM_ROWS - NUM_OOV_BUCKETS - len(words))]
    table = np.random.default_rng(0).normal(0, 0.1, (NNLM_ROWS, NNLM_DIM)).astype("float32")
    module = StandinTextEmbedding(vocabulary, table, NUM_OOV_BUCKETS)
    path = Path(tempfile.mkdtemp(prefix="nnlm_sized_stand_in_"))
    tf.saved_model.save(module, str(path))
    _NNLM_STAND_IN["path"] = str(path)
    return str(path)


def review_batch(batch: int):
    import numpy as np
    import tensorflow as tf

    texts = tf.constant(imdb_length_reviews(batch))
    labels = np.random.default_rng(0).integers(0, 2, (batch, 1)).astype("float32")
    return texts, labels


# -------------------------------------------------------------------- shared measurements


def hub_classifier_parts(batch: int, steps: int) -> dict[str, float]:
    """Seconds per batch of notebook 01's classifier on the nnlm-sized stand-in module."""
    import keras

    from seqlab.layers import HubTextEmbedding
    from seqlab.models import build_sentiment_classifier
    from seqlab.training import compile_sentiment_classifier

    texts, labels = review_batch(batch)
    keras.utils.set_random_seed(config.SEED)
    model = build_sentiment_classifier(HubTextEmbedding(nnlm_sized_module(), trainable=False))
    compile_sentiment_classifier(model, 1e-3)
    frozen = median_seconds(lambda: model.train_on_batch(texts, labels), steps)
    evaluate = median_seconds(lambda: model.test_on_batch(texts, labels), steps)
    model.layers[0].trainable = True
    compile_sentiment_classifier(model, 1e-4)
    unfrozen = median_seconds(lambda: model.train_on_batch(texts, labels), steps)
    return {"frozen": frozen, "evaluate": evaluate, "unfrozen": unfrozen}


_CACHE: dict = {}


def cached(key, compute):
    if key not in _CACHE:
        _CACHE[key] = compute()
    return _CACHE[key]


HUB_STAND_IN = (f"IMDB stand-in: generated reviews of {IMDB_MEAN_WORDS} words; nnlm-en-dim50 "
                f"stand-in: a module of its table size ({NNLM_ROWS:,} × {NNLM_DIM}, random values)")


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


def measure_03(s: dict, steps: int) -> tuple[list[Part], str]:
    import keras
    import numpy as np

    from seqlab.layers import GRUCell
    from seqlab.models import build_recurrent_classifier
    from seqlab.training import compile_sentiment_classifier

    def times():
        rng = np.random.default_rng(0)
        ids = np.zeros((s["batch"], s["sequence"]), "int64")  # IMDB's mean length, padded
        ids[:, :IMDB_MEAN_WORDS] = rng.integers(2, s["max_tokens"], (s["batch"], IMDB_MEAN_WORDS))
        labels = rng.integers(0, 2, (s["batch"], 1)).astype("float32")
        keras.utils.set_random_seed(config.SEED)
        model = build_recurrent_classifier(s["max_tokens"], s["units"], embedding_dim=32,
                                           sequence_length=s["sequence"])
        compile_sentiment_classifier(model, 1e-3)
        train_s = median_seconds(lambda: model.train_on_batch(ids, labels), steps)
        eval_s = median_seconds(lambda: model.test_on_batch(ids, labels), steps)

        adding = keras.Sequential([keras.Input((s["adding_steps"], 2)),
                                   keras.layers.RNN(GRUCell(16)),
                                   keras.layers.Dense(1, activation="sigmoid")])
        adding.compile(optimizer=keras.optimizers.Adam(1e-2), loss="binary_crossentropy")
        x = rng.uniform(size=(64, s["adding_steps"], 2)).astype("float32")
        y = rng.integers(0, 2, (64, 1)).astype("float32")
        return train_s, eval_s, median_seconds(lambda: adding.train_on_batch(x, y), steps)

    train_s, eval_s, adding_s = cached(
        ("bilstm", s["batch"], s["units"], s["sequence"], s["max_tokens"], s["adding_steps"]), times)

    train, valid, test = (batches(n, s["batch"]) for n in (IMDB_TRAIN, IMDB_VALID, IMDB_TEST))
    adding_batches = batches(s["adding_examples"], 64)
    return [Part(f"training, deep bidirectional LSTM ({s['epochs']} epochs × {train} batches)",
                 train_s, steps, s["epochs"] * train),
            Part(f"validation ({s['epochs']} × {valid} batches)", eval_s, steps, s["epochs"] * valid),
            Part(f"testing ({test} batches)", eval_s, steps, test),
            Part(f"Exercise 3: two GRUs on the adding task (2 × {s['adding_epochs']} epochs × "
                 f"{adding_batches} batches)", adding_s, steps,
                 2 * s["adding_epochs"] * adding_batches)], (
        f"IMDB stand-in: random token ids, {IMDB_MEAN_WORDS} per review, padded to "
        f"{s['sequence']}")


def measure_06(s: dict, steps: int) -> tuple[list[Part], str]:
    import keras
    import numpy as np
    import tensorflow as tf

    from seqlab.data import skipgram_dataset
    from seqlab.models import SkipGram, build_word2vec_classifier
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


def measure_07(s: dict, steps: int) -> tuple[list[Part], str]:
    import keras
    import numpy as np

    from seqlab.models import MiniGPT, build_char_lstm

    rng = np.random.default_rng(0)
    x = rng.integers(1, SHAKESPEARE_VOCAB, (s["batch"], s["steps"])).astype("int32")
    y = rng.integers(1, SHAKESPEARE_VOCAB, (s["batch"], s["steps"])).astype("int32")

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
        gpt.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-3),
                    loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                    jit_compile=True)
        return (median_seconds(lambda: gpt.train_on_batch(x, y), steps),
                median_seconds(lambda: gpt.test_on_batch(x, y), steps))

    lstm_train, lstm_eval = cached(("lstm", s["batch"], s["steps"], s["embedding"], s["lstm_units"]),
                                   lstm_times)
    gpt_train, gpt_eval = cached(("gpt", s["batch"], s["steps"], tuple(s["gpt"].values())), gpt_times)
    cut = int(s["chars"] * 0.9)                       # split_text(valid_fraction=0.1)
    train = ((cut - 1) // s["batch"]) // s["steps"]  # tbptt_dataset's windows
    valid = ((s["chars"] - cut - 1) // s["batch"]) // s["steps"]
    size = (f"LSTM {s['lstm_units']} units; GPT d{s['gpt']['d_model']} × "
            f"{s['gpt']['num_layers']} layers")
    return [Part(f"LSTM training ({s['lstm_epochs']} epochs × {train} batches)", lstm_train, steps,
                 s["lstm_epochs"] * train),
            Part(f"LSTM validation ({s['lstm_epochs']} × {valid})", lstm_eval, steps,
                 s["lstm_epochs"] * valid),
            Part(f"mini-GPT training, XLA ({s['gpt_epochs']} epochs × {train} batches)", gpt_train,
                 steps, s["gpt_epochs"] * train),
            Part(f"mini-GPT validation ({s['gpt_epochs']} × {valid})", gpt_eval, steps,
                 s["gpt_epochs"] * valid)], (
        f"tiny_shakespeare stand-in: random ids over 66 characters, {s['chars']:,} characters, "
        f"windows ({s['batch']}, {s['steps']}); {size}; text generation not included")


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


# ----------------------------------------------------------------------------- the record


def read_record(path: Path = RECORD) -> dict:
    """``{"what", "device", "notebooks": {"01": {"full": {...}, "class": {...}}, ...}}``."""
    if not path.is_file():
        return {"what": WHAT, "device": device(), "notebooks": {}}
    return json.loads(path.read_text(encoding="utf-8"))


WHAT = ("Training time in minutes of each notebook's full mode and class size (SIZE = \"class\") "
        "on 2 CPU cores, with how it was measured and the command that measures it again")


def record_entry(number: str, size: str, minutes: float, how: str, command: str, measured: str,
                 path: Path = RECORD) -> dict:
    """Merge one measured entry into the record and write it; return the record.

    Args:
        number: the notebook's two digits, e.g. ``"04"``.
        size: ``"full"`` or ``"class"``.
        minutes: training minutes on 2 CPU cores (plus evaluation where ``how`` says so).
        how: what was timed and how the minutes follow from it (stand-ins named).
        command: the command that measures it again.
        measured: date and load, e.g. ``"2026-11-24, load 2.3"``.

    Raises:
        ValueError: for a malformed number, an unknown size, non-positive minutes, empty
            texts, or a class size over :data:`CLASS_LIMIT_MINUTES`.
    """
    if not re.fullmatch(r"\d\d", str(number)):
        raise ValueError(f"number must be a notebook's two digits such as '04'; got {number!r}")
    if size not in SIZES:
        raise ValueError(f"size must be one of {SIZES}; got {size!r}")
    if not minutes > 0:
        raise ValueError(f"minutes must be positive; got {minutes!r}")
    if size == "class" and minutes > CLASS_LIMIT_MINUTES:
        raise ValueError(f"a class size must train in at most {CLASS_LIMIT_MINUTES} min; "
                         f"notebook {number} measured {minutes:.1f} min: choose a smaller class size")
    for name, text in (("how", how), ("command", command), ("measured", measured)):
        if not str(text).strip():
            raise ValueError(f"{name} must say something")
    record = read_record(path)
    entry = {"minutes": round(float(minutes), 1), "how": how, "command": command,
             "measured": measured}
    record.setdefault("notebooks", {}).setdefault(str(number), {})[size] = entry
    record["notebooks"] = dict(sorted(record["notebooks"].items()))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return record


def displayed_minutes(minutes: float) -> int:
    """The rounding rule for every displayed full-mode time: whole minutes, halves up, at least 1."""
    return max(1, math.floor(minutes + 0.5))


# ------------------------------------------------------------------- README and title cells


def title_phrase(entry: dict) -> str:
    return (f"training about {displayed_minutes(entry['full']['minutes'])} min on 2 CPU cores, or "
            f"about {displayed_minutes(entry['class']['minutes'])} min with SIZE = \"class\"")


def title_times(path: Path) -> list[tuple[int, int]]:
    """Every (full, class) minutes pair the notebook's title cell states."""
    title = nbformat.read(path, as_version=4).cells[0].source
    return [(int(a), int(b)) for a, b in TITLE_PHRASE.findall(title)]


def readme_times(text: str) -> dict[str, tuple[str, str]]:
    """Notebook number -> (class-size cell, full-mode cell) of the README table."""
    _, rows, (class_column, full_column) = readme_table(text, CLASS_COLUMN, FULL_COLUMN)
    return {cells[0]: (cells[class_column], cells[full_column]) for _, cells in rows}


def readme_cells(entry: dict) -> tuple[str, str]:
    return (f"{displayed_minutes(entry['class']['minutes'])} min",
            f"{displayed_minutes(entry['full']['minutes'])} min")


def complete(record: dict) -> dict[str, dict]:
    """The notebooks whose record has both a full and a class entry."""
    return {n: e for n, e in record.get("notebooks", {}).items() if all(s in e for s in SIZES)}


def sync(record: dict, notebooks: list[Path] | None = None, readme: Path = README) -> list[str]:
    """Rewrite the README's two columns and the title cells' phrase from ``record``.

    Notebooks without both entries are left as they are. Returns what changed.
    """
    entries = complete(record)
    changed = []
    lines, rows, (class_column, full_column) = readme_table(readme.read_text(encoding="utf-8"),
                                                            CLASS_COLUMN, FULL_COLUMN)
    for j, cells in rows:
        if cells[0] in entries:
            wanted = readme_cells(entries[cells[0]])
            if (cells[class_column], cells[full_column]) != wanted:
                cells[class_column], cells[full_column] = wanted
                lines[j] = table_line(cells)
                changed.append(f"README.md row {cells[0]}")
    if changed:
        readme.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for path in notebooks if notebooks is not None else notebook_paths():
        number = path.name[:2]
        if number not in entries:
            continue
        nb = nbformat.read(path, as_version=4)
        title = nb.cells[0].source
        new = TITLE_PHRASE.sub(lambda m, e=entries[number]: title_phrase(e), title)
        if not TITLE_PHRASE.search(title):  # the first time: replace the "not measured" sentence
            new = UNMEASURED_SENTENCE.sub(
                lambda m, e=entries[number]: f": {title_phrase(e)}; {GPU_CLAUSE}.", title)
            if new == title:
                raise ValueError(f"{path.name}'s title cell has no full-mode phrase to rewrite: "
                                 f"put '{title_phrase(entries[number])}' into its run-time "
                                 "paragraph, then sync again")
        if new != title:
            nb.cells[0].source = new
            nbformat.write(nb, path)
            changed.append(path.name)
    return changed


# ------------------------------------------------------------------------------ measuring


def measure(number: str, size: str, steps: int) -> tuple[float, str]:
    """(minutes, how) of one notebook at one size, printing each part."""
    settings = SETTINGS[number].get(size)
    reused = settings is None
    parts, stand_ins = MEASURE[number](settings or SETTINGS[number]["full"], steps)
    minutes = sum(p.seconds for p in parts) / 60
    for p in parts:
        print(f"  {number} {size:<5} {p.what:<92} {p.median_seconds:8.3f} s × {p.count:>7,} = "
              f"{p.seconds / 60:6.1f} min")
    how = "; ".join(f"{p.what}: median {p.median_seconds:.3f} s of {p.timed} timed × {p.count:,}"
                    for p in parts)
    how = (f"{how}; stand-ins of the real shapes: {stand_ins}; early stopping: the configured "
           "epochs (an upper bound)")
    if reused:
        how = f"class size = full size (training already ≤ {CLASS_LIMIT_MINUTES} min); {how}"
    return minutes, how


def print_record(record: dict) -> None:
    """The whole record as one table: minutes per notebook and size, with date and load."""
    print(f"\nbenchmarks/results/full_mode.json ({record.get('device', '?')}): training minutes")
    print(f"{'notebook':<9}{'full':>7}{'class':>7}  measured (full; class)")
    for number, entry in record.get("notebooks", {}).items():
        cells = [f"{entry[s]['minutes']:7.1f}" if s in entry else f"{'–':>7}" for s in SIZES]
        when = "; ".join(entry[s]["measured"] for s in SIZES if s in entry)
        print(f"{number:<9}{cells[0]}{cells[1]}  {when}")


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
    print("If title cells changed: python -m seqlab.homework build")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
