"""Translation quality on the real corpus: notebook 04's RNN variants (``ATTENTION_CHOICES``:
no attention, Bahdanau's decoder, Luong's decoder with the dot, general and concat scores) and
notebook 05's Transformer, trained for the same number of steps, in one table.

    python -m benchmarks.quality --quick                 # reduced size, a few minutes on a CPU
    python -m benchmarks.quality                         # the notebooks' full-mode configuration
    python -m benchmarks.quality --steps 400 --pairs 12000 --models none bahdanau tutorial
    python -m benchmarks.quality --quick --rnn lr=5e-3 warmup=100 clipnorm=1.0

Offline: the Anki English-Spanish pairs come from ``--corpus`` (default
``../shared/data/spa-eng.zip``, the measurement copy; never used by tests), which is copied into
a private Keras cache so that :func:`seqlab.data.load_translation` reads it exactly as a
notebook does (same pairs, same 80/10/10 split, same vectorisation). ``--corpus sample`` or
``--corpus dates`` use the package's offline data instead (the smoke test does).

Each model is built and compiled as the notebooks do in full mode: notebook 04's
translator (``seqlab.lessons.nb04``; embedding 128, units 256, batch 128, ``Adam(2e-3)``, ``output_norm=True``,
max length 20)
and notebook 05's full-size Transformer (warm-up 1,000, label smoothing 0.1; the paper's
4,000 is compared in benchmarks/README.md).
``--steps`` steps are cut into ``--epochs`` equal parts; after each part the masked token
accuracy on (at most ``--valid-batches`` batches of) the validation split is printed. At the
end the test split's first ``--test`` sentences are decoded greedily and with beam search
(width 4) and scored with sacrebleu (:func:`seqlab.evaluation.bleu`).

``tutorial`` adds the public TensorFlow NMT tutorial's architecture (``benchmarks.nmt``'s
``TutorialTranslator``; no decoding loop, so validation accuracy only) as a baseline.
``--rnn KEY=VALUE`` changes the RNN training recipe for experiments (see ``RNN_RECIPE``):
``lr``, ``warmup`` (linear warm-up steps), ``clipnorm``, ``combine_init``
(``"glorot"``: Keras's default for the ``tanh(W_c [h; c])`` layer; ``"identity"``: that layer
starts as ``tanh(h)``, i.e. the model starts as the one without attention), and, as a
``output_norm=1``: the translator's ``output_norm=True`` (a ``LayerNormalization`` before the
output layer, as the tutorial's decoder has). The ``bahdanau`` model is Bahdanau's order with
the concat score (:class:`seqlab.layers.BahdanauDecoder`). The earlier diagnostics ``dropout``
and ``feed_context`` (the ``luong-*`` scores in Bahdanau's order) went with the package's second
copy of the translator; their results stay in benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from seqlab import config  # noqa: E402
from seqlab.data import load_translation, standardize_reference  # noqa: E402
from seqlab.decoding import translate  # noqa: E402
from seqlab.evaluation import bleu, diagnose_translations  # noqa: E402
from seqlab.lessons.nb04 import build_rnn_translator  # noqa: E402
from seqlab.lessons.nb05 import TransformerTranslator  # noqa: E402
from seqlab.sizes import settings as size_settings  # noqa: E402
from seqlab.training import compile_translator, transformer_optimizer  # noqa: E402

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "data" / "spa-eng.zip"
ATTENTION_CHOICES = ("none", "bahdanau", "luong-dot", "luong-general", "luong-concat")
MODELS = (*ATTENTION_CHOICES, "transformer")

# Notebook 04's full mode (parameters cell and its constants).
RNN_FULL = {"embedding_dim": 128, "units": 256, "batch_size": 128}
# The RNN training recipe: notebook 04's full mode is Adam(2e-3) and output_norm=True
# (OUTPUT_NORM); ``--rnn output_norm=0`` gives the slides' model without the LayerNorm.
RNN_RECIPE = {"lr": 2e-3, "warmup": 0, "clipnorm": 0.0, "combine_init": "glorot",
              "output_norm": 1.0}
# Notebook 05's full mode.
TRANSFORMER_FULL = {"size": "full", "warmup": 1000, "lr_scale": 1.0, "label_smoothing": 0.1}
MAX_LENGTH, VOCAB_SIZE = 20, 8000

# --quick: what a shared 2-core CPU trains in a few minutes per model.
QUICK = {"pairs": 10_000, "steps": 300, "epochs": 3, "test": 200, "beam_test": 50,
         "embedding_dim": 64, "units": 128, "batch_size": 64, "warmup_transformer": 300}


@keras.saving.register_keras_serializable(package="seqlab_benchmarks")
class WarmupThenConstant(keras.optimizers.schedules.LearningRateSchedule):
    """Linear warm-up to ``rate`` over ``warmup`` steps, then constant (an experiment knob)."""

    def __init__(self, rate: float, warmup: int):
        self.rate, self.warmup = float(rate), int(warmup)

    def __call__(self, step):
        step = keras.ops.cast(step, "float32") + 1.0
        return self.rate * keras.ops.minimum(1.0, step / float(self.warmup))

    def get_config(self):
        return {"rate": self.rate, "warmup": self.warmup}


def parse_recipe(items) -> dict:
    recipe = dict(RNN_RECIPE)
    for item in items or ():
        key, _, value = item.partition("=")
        if key not in recipe or not value:
            raise SystemExit(f"--rnn expects KEY=VALUE with KEY one of {sorted(recipe)}; got {item!r}")
        recipe[key] = value if key == "combine_init" else type(recipe[key])(float(value))
    if recipe["combine_init"] not in ("glorot", "identity"):
        raise SystemExit("--rnn combine_init must be 'glorot' or 'identity'")
    return recipe


def load_corpus(corpus: str, pairs: int | None, batch_size: int, bucket: bool | None = None):
    """``load_translation`` on the Anki zip at ``corpus`` (or ``"sample"``/``"dates"``);
    ``bucket``: its training batches grouped by length (None: its default, yes for Anki)."""
    if corpus in ("sample", "dates"):
        return load_translation(corpus, max_length=MAX_LENGTH, batch_size=batch_size,
                                vocab_size=VOCAB_SIZE, num_examples=pairs)
    path = Path(corpus)
    if not path.is_file():
        raise SystemExit(f"--corpus: no file {path} (expected the Anki spa-eng.zip)")
    cache = Path(tempfile.gettempdir()) / "seqlab-quality-cache"
    (cache / "datasets").mkdir(parents=True, exist_ok=True)
    target = cache / "datasets" / "spa-eng.zip"
    if not target.exists():
        shutil.copyfile(path, target)
    return load_translation("anki", max_length=MAX_LENGTH, batch_size=batch_size,
                            vocab_size=VOCAB_SIZE, num_examples=pairs, cache_dir=cache,
                            bucket=bucket)


def random_training_subset(data, count: int, seed: int = config.SEED):
    """Train on ``count`` pairs drawn at random from the whole training split (vocabularies,
    validation and test splits unchanged). ``--pairs`` takes the corpus's *first* pairs, and
    the Anki file is sorted by length: its first 30,000 English sentences have at most 7 words."""
    from seqlab.data.translation_batches import make_dataset, pad_ids, vectorize_pairs

    rng = np.random.default_rng(seed)
    pairs = [data.train_pairs[i] for i in sorted(rng.choice(len(data.train_pairs), count,
                                                             replace=False))]
    sources, targets, _ = vectorize_pairs(pairs, data.source_vectorizer, data.target_vectorizer,
                                          MAX_LENGTH)
    data.train = make_dataset(pad_ids(sources, data.info["source_length"]),
                              pad_ids(targets, data.info["target_length"] + 1),
                              data.batch_size, shuffle=True, seed=seed)
    data.train_pairs = pairs
    return data


def set_identity_combine(model) -> None:
    """Start ``tanh(W_c [h; c])`` as ``tanh(h)``: identity on the ``h`` half, zeros elsewhere."""
    combine = model.decoder.combine
    if combine is None:
        return
    units = model.get_config()["units"]
    kernel = np.zeros((2 * units, units), "float32")
    kernel[:units] = np.eye(units, dtype="float32")
    combine.kernel.assign(kernel)


def build_model(name: str, data, sizes: dict, recipe: dict, transformer: dict):
    keras.utils.set_random_seed(config.SEED)
    if name == "transformer":
        model = TransformerTranslator(data.source_vocab_size, data.target_vocab_size,
                                      **size_settings("05", transformer["size"]).model,
                                      skip_padding=transformer.get("skip_padding", False))
        model.build()
        optimizer = transformer_optimizer(model.get_config()["d_model"], transformer["warmup"],
                                          scale=transformer["lr_scale"])
        return compile_translator(model, optimizer, jit_compile=False,
                                  label_smoothing=transformer["label_smoothing"],
                                  tokens_per_batch=transformer.get("tokens_per_batch"))
    if name == "tutorial":
        from benchmarks.nmt import TutorialTranslator

        model = TutorialTranslator(max(data.source_vocab_size, data.target_vocab_size),
                                   sizes["units"])
    else:
        model = build_rnn_translator(data.source_vocab_size, data.target_vocab_size,
                                     embedding_dim=sizes["embedding_dim"], units=sizes["units"],
                                     attention=name, output_norm=bool(recipe["output_norm"]))
        if recipe["combine_init"] == "identity":
            set_identity_combine(model)
    rate = (WarmupThenConstant(recipe["lr"], recipe["warmup"]) if recipe["warmup"] > 0
            else recipe["lr"])
    options = {"clipnorm": recipe["clipnorm"]} if recipe["clipnorm"] > 0 else {}
    return compile_translator(model, keras.optimizers.Adam(rate, **options), jit_compile=False)


def run_one(name: str, data, args, sizes, recipe, transformer) -> dict:
    model = build_model(name, data, sizes, recipe, transformer)
    per_epoch = max(1, args.steps // args.epochs)
    valid = data.valid.take(args.valid_batches)
    start = time.perf_counter()

    def progress(epoch, logs):  # one line per part, so a long run shows where it is
        print(f"    {name} part {epoch + 1}/{args.epochs}: val acc "
              f"{logs.get('val_masked_accuracy', float('nan')):.3f}, "
              f"{time.perf_counter() - start:.0f} s", flush=True)

    history = model.fit(data.train.repeat(), steps_per_epoch=per_epoch, epochs=args.epochs,
                        validation_data=valid, verbose=0, shuffle=False,
                        callbacks=[keras.callbacks.LambdaCallback(on_epoch_end=progress)])
    seconds = time.perf_counter() - start
    row = {"model": name, "val_acc": history.history["val_masked_accuracy"],
           "train_acc": history.history["masked_accuracy"][-1],
           "steps": per_epoch * args.epochs, "seconds": seconds,
           "greedy": float("nan"), "beam": float("nan"), "note": ""}
    if name == "tutorial":
        return row  # no decoding protocol: validation accuracy only
    pairs = data.test_pairs[: args.test]
    sources = [source for source, _ in pairs]
    references = [standardize_reference(target) for _, target in pairs]
    greedy = translate(model, sources, data.source_vectorizer, data.target_vectorizer,
                       max_length=2 * MAX_LENGTH)
    row["greedy"] = bleu(greedy.texts, references)
    beam_count = min(args.beam_test, len(sources))
    if beam_count:
        beam = translate(model, sources[:beam_count], data.source_vectorizer,
                         data.target_vectorizer, method="beam", beam_width=4,
                         max_length=2 * MAX_LENGTH)
        row["beam"] = bleu(beam.texts, references[:beam_count])
    row["note"] = diagnose_translations(greedy.texts, references, bleu_score=row["greedy"]) or ""
    row["example"] = f"{sources[0]!r} -> {greedy.texts[0]!r}"
    return row


def format_table(rows, args) -> str:
    epochs = max(len(r["val_acc"]) for r in rows)
    head = " ".join(f"{'val@' + str(round((i + 1) * args.steps / epochs)):>8}" for i in range(epochs))
    beam_label = f"beam@{args.beam_test}"
    lines = [f"{'model':14} {head} {'greedy':>7} {beam_label:>8} {'train s':>8}  note",
             "-" * (44 + 9 * epochs)]
    for r in rows:
        accs = " ".join(f"{a:8.3f}" for a in r["val_acc"])
        lines.append(f"{r['model']:14} {accs} {r['greedy']:7.1f} {r['beam']:8.1f} "
                     f"{r['seconds']:8.0f}  {r['note'][:60]}")
    return "\n".join(lines)


def benchmark(argv=None) -> list[dict]:
    """Parse ``argv`` like the command line, train and score every model, print the table;
    return the rows (``model``, ``val_acc`` per part, ``greedy``, ``beam``, ``seconds``, ``note``)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.quality", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="reduced size for a CPU")
    parser.add_argument("--corpus", default=str(DEFAULT_CORPUS),
                        help="the Anki spa-eng.zip, or 'sample'/'dates' (offline package data)")
    parser.add_argument("--pairs", type=int, help="first N pairs of the corpus (default: all)")
    parser.add_argument("--steps", type=int, help="training steps per model")
    parser.add_argument("--epochs", type=int, help="validation points (steps cut into parts)")
    parser.add_argument("--test", type=int, help="test sentences for greedy BLEU")
    parser.add_argument("--beam-test", type=int, help="test sentences for beam BLEU")
    parser.add_argument("--valid-batches", type=int, default=20)
    parser.add_argument("--random-subset", type=int, metavar="N",
                        help="load the whole corpus, train on N random pairs of its training "
                             "split (--pairs takes the first, shortest, pairs)")
    parser.add_argument("--units", type=int)
    parser.add_argument("--embedding-dim", type=int)
    parser.add_argument("--batch-size", type=int)
    parser.add_argument("--transformer-warmup", type=int)
    parser.add_argument("--padded", action="store_true",
                        help="training batches padded to the longest pair, not grouped by length "
                             "(the pipeline before issue 28)")
    parser.add_argument("--token-weighted", action="store_true",
                        help="Transformer loss divided by the training split's mean real tokens "
                             "per batch instead of each batch's own (every token the same weight "
                             "when batches are grouped by length)")
    parser.add_argument("--skip-padding", action="store_true",
                        help="the Transformer's output layer at the real target tokens only "
                             "(RealTokenDense: the same loss and gradients, less work)")
    parser.add_argument("--models", nargs="*", default=list(MODELS),
                        choices=[*MODELS, "tutorial"])
    parser.add_argument("--rnn", nargs="*", metavar="KEY=VALUE",
                        help=f"RNN recipe changes; defaults {RNN_RECIPE}")
    args = parser.parse_args(argv)
    quick = QUICK if args.quick else {}
    args.pairs = args.pairs or quick.get("pairs")
    args.epochs = args.epochs or quick.get("epochs", 10)
    args.test = args.test if args.test is not None else quick.get("test", 1000)
    args.beam_test = args.beam_test if args.beam_test is not None else quick.get("beam_test", 200)
    sizes = {key: getattr(args, key) or quick.get(key, RNN_FULL[key]) for key in RNN_FULL}
    recipe = parse_recipe(args.rnn)
    transformer = dict(TRANSFORMER_FULL)
    if args.skip_padding:
        transformer["skip_padding"] = True
    transformer["warmup"] = (args.transformer_warmup or quick.get("warmup_transformer")
                             or transformer["warmup"])

    if args.random_subset:
        data = random_training_subset(load_corpus(args.corpus, None, sizes["batch_size"]),
                                      args.random_subset)
    else:
        data = load_corpus(args.corpus, args.pairs, sizes["batch_size"],
                           bucket=False if args.padded else None)
    steps_per_epoch = int(data.train.cardinality())
    if args.token_weighted:  # one pass over the training batches: their mean real target tokens
        real = sum(int(tf.math.count_nonzero(target)) for _, target in data.train)
        transformer["tokens_per_batch"] = real / steps_per_epoch
    args.steps = args.steps or quick.get("steps") or 10 * steps_per_epoch
    device = tf.config.list_physical_devices("GPU")
    print(f"TensorFlow {tf.__version__}, Keras {keras.__version__}; "
          f"{'GPU: ' + device[0].name if device else 'CPU only'}; {os.cpu_count()} CPU cores "
          f"({platform.processor() or platform.machine()})")
    print(data.summary())
    print(f"{args.steps} steps per model ({args.steps / steps_per_epoch:.2f} passes over the "
          f"training split), validation on {args.valid_batches} batches after each of "
          f"{args.epochs} parts; BLEU on the first {args.test} test sentences (greedy) and "
          f"{args.beam_test} (beam 4)")
    print(f"RNN: {sizes}, recipe {recipe}; Transformer: {transformer}\n", flush=True)
    rows = []
    for name in args.models:
        rows.append(run_one(name, data, args, sizes, recipe, transformer))
        r = rows[-1]
        print(f"  {name}: val acc {[round(a, 3) for a in r['val_acc']]} (train "
              f"{r['train_acc']:.3f} in the last part), greedy BLEU "
              f"{r['greedy']:.1f}, beam {r['beam']:.1f}, {r['seconds']:.0f} s  "
              f"{r.get('example', '')}", flush=True)
    print()
    print(format_table(rows, args))
    return rows


def main(argv=None) -> int:
    benchmark(argv)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
