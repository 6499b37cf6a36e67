"""Full-mode training speed on the device at hand: every translator, float32 vs mixed precision,
with and without XLA, plus the sentiment model and greedy decoding -- one run, one table.

    python -m benchmarks.gpu                                  # full-mode sizes, synthetic data
    python -m benchmarks.gpu --corpus ../shared/data/spa-eng.zip   # the real Anki pairs
    python -m benchmarks.gpu --quick                          # tiny sizes: a CPU smoke run (< 1 min)

What it trains (issue 10.3), at notebook 04/05's full-mode sizes: the RNN translator with each
attention variant (``none``, ``bahdanau``, ``luong-dot``, ``luong-general``; embedding 128, units
256, Adam 2e-3) and the Transformer (preset ``"small"``, the paper's schedule with 1,000 warm-up
steps), vocabularies of 8,000 per language, sentences of at most 20 tokens, 128 sentences per
replica. Each model is timed under four settings: float32 or the mixed policy
:func:`mixed_policy` picks for the device (``mixed_bfloat16`` where the
device computes in bfloat16, ``mixed_float16`` on older GPUs; ``mixed_bfloat16`` on a CPU, to
exercise the path), each with and without XLA (``jit_compile``). It prints

- **target tokens/s**: real (non-padding) target tokens per second, from the *median* step time
  after the first ``--warmup`` steps (the traced ones);
- **s/epoch**: seconds one epoch of the full Anki corpus would take, 95,000 training pairs at
  that median step time (tracing excluded);
- **replicas**: the ``tf.distribute`` strategy's replica count (``--strategy``, default
  ``auto``: every GPU of the machine), printed when it is more than one;

then the sentiment classifier (notebook 01/02: the stand-in text embedding offline, since
nnlm-en-dim50 needs a download) with the embedding frozen and unfrozen, in examples/s, and greedy
decoding sentences/s of both translators (``benchmarks.decoding.measure_greedy_decoding``).

Data: with ``--corpus PATH`` (the Anki ``spa-eng.zip``, e.g. ``../shared/data/spa-eng.zip``; for
measuring only, never in tests) the real training pairs, vectorised as notebook 04 does;
otherwise synthetic pairs of the same shape (lengths drawn between 4 and 20 tokens).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import zipfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from benchmarks.full_mode_timing import StepTimer  # noqa: E402
from seqlab.distribute import choose_strategy  # noqa: E402
from seqlab.lessons.nb01 import build_sentiment_classifier  # noqa: E402
from seqlab.lessons.nb04 import build_rnn_translator  # noqa: E402
from seqlab.lessons.nb05 import TransformerTranslator  # noqa: E402
from seqlab.sizes import settings as size_settings  # noqa: E402
from seqlab.training import compile_sentiment_classifier, compile_translator, transformer_optimizer  # noqa: E402


def transformer_translator(vocab: int, preset: str) -> TransformerTranslator:
    """Notebook 05's translator, built: ``"small"`` its full size, ``"tiny"`` its FAST size."""
    size = {"small": "full", "tiny": "fast"}[preset]
    model = TransformerTranslator(vocab, vocab, **size_settings("05", size).model)
    model.build()
    return model


#: Notebook 04's and 05's full-mode sizes (their parameters cells; per replica).
FULL = {"vocab_size": 8000, "max_length": 20, "batch_size": 128, "embedding_dim": 128,
        "units": 256, "learning_rate": 2e-3, "preset": "small", "warmup_steps": 1000,
        "variants": ("none", "bahdanau", "luong-dot", "luong-general"), "steps": 30,
        "sentiment_batch": 128, "decode_sentences": 1000}
QUICK = {"vocab_size": 200, "max_length": 8, "batch_size": 16, "embedding_dim": 16,
         "units": 32, "learning_rate": 2e-3, "preset": "tiny", "warmup_steps": 100,
         "variants": ("bahdanau",), "steps": 2, "sentiment_batch": 16, "decode_sentences": 16}
ANKI_TRAINING_PAIRS = 95_000
START, END = 1, 2


def synthetic_pairs(count: int, length: int, vocab_size: int, seed: int = 0):
    """``((source, target_in), target_out)`` int32 arrays: 4 to ``length - 1`` words + [END]."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(min(4, length - 1), length, count)
    real = np.arange(length)[None, :] < lengths[:, None]
    source = np.where(real, rng.integers(3, vocab_size, (count, length)), 0).astype(np.int32)
    words = np.where(real, rng.integers(3, vocab_size, (count, length)), 0)
    target = np.concatenate([np.full((count, 1), START), words, np.zeros((count, 1), int)], axis=1)
    target[np.arange(count), lengths + 1] = END
    target = target.astype(np.int32)
    return (source, target[:, :-2]), target[:, 1:-1]


def corpus_pairs(path: str, length: int, vocab_size: int):
    """The Anki zip's training split, vectorised and padded as notebook 04 does."""
    from seqlab.data.translation import read_pairs, split_pairs
    from seqlab.data.translation_batches import make_vectorizer, pad_ids, vectorize_pairs

    with tempfile.TemporaryDirectory() as folder, zipfile.ZipFile(path) as archive:
        name = next(n for n in archive.namelist() if n.endswith("spa.txt"))
        pairs = read_pairs(archive.extract(name, folder))
    train = split_pairs(pairs)[0]
    source_vectorizer = make_vectorizer([s for s, _ in train], vocab_size)
    target_vectorizer = make_vectorizer([t for _, t in train], vocab_size)
    sources, targets, _ = vectorize_pairs(train, source_vectorizer, target_vectorizer, length)
    source, target = pad_ids(sources, length), pad_ids(targets, length + 1)
    return (source, target[:, :-1]), target[:, 1:]


def time_training(model, dataset, steps: int, warmup: int) -> float:
    """Median seconds per step over ``steps`` steps after ``warmup`` untimed ones."""
    timer = StepTimer()
    model.fit(dataset.take(steps + warmup), epochs=1, verbose=0, callbacks=[timer])
    return statistics.median(timer.seconds[warmup:])


def mixed_policy() -> str:
    """The mixed policy to measure here: ``mixed_bfloat16`` on GPUs of compute capability 8.0
    and up and on a CPU (to exercise the path), ``mixed_float16`` on older GPUs (float16 tensor
    cores only). A student turns one on with ``SEQLAB_MIXED_PRECISION``."""
    devices = [tf.config.experimental.get_device_details(g)
               for g in tf.config.list_physical_devices("GPU")]
    capabilities = [tuple(d["compute_capability"]) for d in devices
                    if d.get("compute_capability")]
    return ("mixed_float16" if capabilities and min(capabilities) < (8, 0)
            else "mixed_bfloat16")


def translator_rows(sizes, strategy, data, settings, steps, warmup):
    (source, target_in), target_out = data
    batch = sizes["batch_size"] * strategy.num_replicas_in_sync
    count = batch * (steps + warmup)
    index = np.arange(count) % len(source)
    dataset = tf.data.Dataset.from_tensor_slices(
        ((source[index], target_in[index]), target_out[index])).batch(batch, drop_remainder=True)
    tokens_per_batch = float((target_out[index] != 0).sum()) / (count / batch)
    vocab = sizes["vocab_size"]
    models = [(f"rnn {v}", v) for v in sizes["variants"]] + [(f"transformer {sizes['preset']}", None)]
    rows = []
    for name, variant in models:
        for policy, xla in settings:
            if sizes is QUICK and variant is not None and (policy, xla) != settings[0]:
                continue  # the smoke run times the RNN in one setting only (XLA compiles slowly)
            keras.config.set_dtype_policy(policy)
            keras.utils.set_random_seed(0)
            if variant is None:
                with strategy.scope():
                    model = transformer_translator(vocab, sizes["preset"])
                optimizer = transformer_optimizer(model.get_config()["d_model"],
                                                  sizes["warmup_steps"])
            else:
                with strategy.scope():
                    model = build_rnn_translator(vocab, vocab,
                                                 embedding_dim=sizes["embedding_dim"],
                                                 units=sizes["units"], attention=variant)
                optimizer = keras.optimizers.Adam(sizes["learning_rate"])
            compile_translator(model, optimizer, jit_compile=xla)
            seconds = time_training(model, dataset, steps, warmup)
            rows.append((name, policy, xla, tokens_per_batch / seconds,
                         ANKI_TRAINING_PAIRS / batch * seconds))
    keras.config.set_dtype_policy("float32")
    return rows


def sentiment_rows(sizes, steps, warmup):
    """One device: the model reads raw text, which Keras cannot split among replicas."""
    from seqlab.layers import STANDIN_HANDLE

    batch = sizes["sentiment_batch"]
    rng = np.random.default_rng(0)
    words = np.array("the a film movie plot actor good bad great awful boring fun slow".split())
    reviews = [" ".join(rng.choice(words, rng.integers(20, 200))) for _ in range(batch)]
    dataset = tf.data.Dataset.from_tensor_slices(
        (tf.constant(reviews), rng.integers(0, 2, batch).astype("float32"))).batch(batch).repeat()
    rows = []
    for trainable in (False, True):
        keras.utils.set_random_seed(0)
        model = build_sentiment_classifier(STANDIN_HANDLE, trainable=trainable)
        model.layers[0].trainable = trainable
        compile_sentiment_classifier(model)
        seconds = time_training(model, dataset, steps, warmup)
        rows.append(("unfrozen" if trainable else "frozen", batch / seconds))
    return rows


def decoding_rows(sizes):
    try:
        from benchmarks.decoding import measure_greedy_decoding, synthetic_sources
    except ImportError:  # pragma: no cover - the decoding benchmark is optional
        return []
    vocab = sizes["vocab_size"]
    sources = synthetic_sources(sizes["decode_sentences"], sizes["max_length"], vocab)
    keras.utils.set_random_seed(0)
    rnn = build_rnn_translator(vocab, vocab, embedding_dim=sizes["embedding_dim"],
                               units=sizes["units"], attention="bahdanau")
    transformer = transformer_translator(vocab, sizes["preset"])
    return [(name, measure_greedy_decoding(model, sources, sizes["max_length"], repeats=1 if
                                           sizes is QUICK else 3)["sentences_per_second"])
            for name, model in (("rnn bahdanau", rnn), (f"transformer {sizes['preset']}", transformer))]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one RNN variant (CI smoke)")
    parser.add_argument("--corpus", help="the Anki spa-eng.zip (default: synthetic pairs)")
    parser.add_argument("--strategy", default="auto", help="auto, default or mirrored")
    parser.add_argument("--steps", type=int, help="timed steps per setting")
    parser.add_argument("--warmup", type=int, default=None, help="untimed first steps")
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    strategy = choose_strategy(args.strategy)
    replicas = strategy.num_replicas_in_sync
    steps = args.steps or sizes["steps"]
    warmup = args.warmup if args.warmup is not None else (1 if args.quick else 3)
    if args.corpus:
        data = corpus_pairs(args.corpus, sizes["max_length"], sizes["vocab_size"])
        data_label = f"{args.corpus} ({len(data[1]):,} training pairs)"
    else:
        data = synthetic_pairs(4096 if not args.quick else 256, sizes["max_length"], sizes["vocab_size"])
        data_label = "synthetic pairs of the same shape"
    mixed = mixed_policy()
    # Quick: two of the four settings keep the smoke run short; every code path still runs.
    settings = ([("float32", False), (mixed, True)] if args.quick else
                [("float32", False), ("float32", True), (mixed, False), (mixed, True)])
    if replicas > 1:
        # XLA-compiled steps read every replica's variables from one device and fail under
        # MirroredStrategy (setup() turns XLA off there too): time each policy without it.
        settings = list(dict.fromkeys((policy, False) for policy, _ in settings))
        print("XLA: off under several replicas (as seqlab.course.notebook.setup chooses)")
    gpus = tf.config.list_physical_devices("GPU")
    device = (tf.config.experimental.get_device_details(gpus[0]).get("device_name", "GPU")
              if gpus else f"CPU ({platform.processor() or platform.machine()}, {os.cpu_count()} cores)")
    print(f"device: {device}; TensorFlow {tf.__version__}, Keras {keras.__version__}; "
          f"{'quick (tiny sizes)' if args.quick else 'full-mode sizes'}; data: {data_label}")
    print(f"batch {sizes['batch_size']} per replica × {replicas} = "
          f"{sizes['batch_size'] * replicas}; vocab {sizes['vocab_size']:,}; "
          f"length {sizes['max_length']}; median of {steps} steps after {warmup}")
    replica_column = replicas > 1
    header = f"{'model':24} {'policy':15} {'XLA':>5} {'target tokens/s':>16} {'s/epoch (95k)':>14}"
    print("\n" + header + (f" {'replicas':>8}" if replica_column else ""))
    for name, policy, xla, rate, epoch in translator_rows(sizes, strategy, data, settings, steps, warmup):
        print(f"{name:24} {policy:15} {str(xla):>5} {rate:16,.0f} {epoch:14,.1f}"
              + (f" {replicas:8}" if replica_column else ""))
    print(f"\n{'sentiment, one device (stand-in)':32} {'examples/s':>11}")
    for name, rate in sentiment_rows(sizes, steps, warmup):
        print(f"{'embedding ' + name:32} {rate:11,.0f}")
    rows = decoding_rows(sizes)
    if rows:
        print(f"\n{'greedy decoding (one device)':32} {'sentences/s':>11}")
        for name, rate in rows:
            print(f"{name:32} {rate:11,.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
