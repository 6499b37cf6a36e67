"""Training batches grouped by length against batches padded to 20 tokens, notebooks 04 and 05.

    python -m benchmarks.bucketing                 # real Anki pairs if found, 80 steps per model and pipeline
    python -m benchmarks.bucketing --steps 400     # longer: the quality columns mean more
    python -m benchmarks.bucketing --source sample # offline, seconds (what the test runs)

``seqlab.data.load_translation`` pads every training batch of the Anki pairs to the longest
pair (20 tokens), while the pairs average 8-9 tokens: most positions are padding, and every one
goes through the encoder, the decoder and the 8,000-word output layer. With ``bucket=True``
(the default for ``"anki"``) the training batches are grouped by length instead and padded to
their bucket's width (:func:`seqlab.data.translation_batches.make_bucketed_dataset`). This benchmark
trains each model twice from the same initial weights, once on each pipeline, **alternately**
in the same process (``--chunk`` steps of one, then of the other, until each has ``--steps``),
so load from other jobs on the machine falls on both; both pipelines draw their batches from
the same training split, shuffled with the same seed.

The models are the class sizes of the notebooks: notebook 04's translator
(``build_rnn_translator``, embedding 64, GRU units 128, ``"luong-general"``, the LayerNorm before
the output layer, Adam 2e-3) and notebook 05's Transformer (``seqlab.lessons.nb05.TransformerTranslator``,
preset ``"small"``, the paper's schedule with 1,000 warm-up steps, label smoothing 0.1); batch
128, ``jit_compile=False`` (the notebooks' CPU setting).

Printed per model and pipeline:

- *real target tokens/s*: non-padding target tokens trained on, over the summed wall time of
  the training steps (each step timed from Keras's ``on_train_batch_begin`` to
  ``on_train_batch_end``, so waiting for the input pipeline counts), leaving out the first step
  of every ``fit`` call (the trace of the step and the refill of the shuffle buffer, which a
  real epoch pays once);
- *real %*: the share of the target positions that are real tokens;
- *val loss / val acc*: masked cross-entropy (with the model's label smoothing) and masked
  token accuracy on the first ``--valid-batches`` validation batches (padded, in order: the
  same batches for both) after the same number of steps;
- *traces*: how many times Keras traced the train step (``fit`` reads the lengths of a
  ``tf.data`` dataset as ``None`` from its ``element_spec``, so one trace serves every width;
  with ``jit_compile=True`` XLA would still compile once per batch shape, at most one per
  bucket width);
- the ratio of the tokens/s, bucketed over padded.
"""

from __future__ import annotations

import argparse
import contextlib
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
from keras import ops  # noqa: E402

from seqlab import config  # noqa: E402
from seqlab.data import load_translation  # noqa: E402
from seqlab.data.translation_batches import make_bucketed_dataset, vectorize_pairs  # noqa: E402
from seqlab.lessons.nb04 import build_rnn_translator  # noqa: E402
from seqlab.lessons.nb05 import TransformerTranslator  # noqa: E402
from seqlab.sizes import settings as size_settings  # noqa: E402
from seqlab.training import (  # noqa: E402
    MaskedAccuracy,
    MaskedSparseCategoricalCrossentropy,
    transformer_optimizer,
)

#: Where the measurement copy of the Anki pairs lives next to the repository (not in it).
SHARED_ANKI_ZIP = config.REPO_ROOT.parent / "shared" / "data" / "spa-eng.zip"
MODELS = ("rnn", "transformer")
PIPELINES = ("padded", "bucketed")


class TargetPositions(keras.metrics.Metric):
    """Running count of target positions in the batches seen: the real (non-zero) ones, or all.

    A metric, so ``fit`` reports it after every step without another pass over the data.
    """

    def __init__(self, real: bool = True, name: str | None = None, **kwargs):
        super().__init__(name=name or ("real_tokens" if real else "positions"), **kwargs)
        self.real = real
        self.total = self.add_variable(shape=(), initializer="zeros", name="total",
                                       dtype="float32")

    def update_state(self, y_true, y_pred, sample_weight=None):  # y_true: (B, T) ids
        counted = ops.not_equal(y_true, 0) if self.real else ops.ones_like(y_true)
        self.total.assign_add(ops.sum(ops.cast(counted, "float32")))

    def result(self):
        return self.total

    def get_config(self):
        return {**super().get_config(), "real": self.real}


class StepLog(keras.callbacks.Callback):
    """Seconds, real target tokens and target positions of every training step."""

    def __init__(self):
        super().__init__()
        self.steps = []  # (seconds, real tokens, positions, first step of its fit call)

    def on_train_begin(self, logs=None):
        self.previous = (0.0, 0.0)
        self.first = True

    def on_train_batch_begin(self, batch, logs=None):
        self.started = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        real, positions = float(logs["real_tokens"]), float(logs["positions"])
        seconds = time.perf_counter() - self.started
        self.steps.append((seconds, real - self.previous[0], positions - self.previous[1],
                           self.first))
        self.previous, self.first = (real, positions), False


def find_anki(anki_zip: Path | None) -> Path | None:
    """A private Keras cache folder holding ``datasets/spa-eng.zip`` (a temporary copy of
    ``anki_zip``), or None when there is no such file."""
    if anki_zip is None or not Path(anki_zip).is_file():
        return None
    cache = Path(tempfile.mkdtemp(prefix="bucketing_keras_"))
    (cache / "datasets").mkdir()
    shutil.copy(anki_zip, cache / "datasets" / "spa-eng.zip")
    return cache


def add_source_arguments(parser, choices=("auto", "anki", "sample")) -> None:
    """``--source`` and ``--anki-zip``, as every benchmark on the real Anki pairs takes them."""
    parser.add_argument("--source", choices=choices, default="auto",
                        help="auto: the real Anki pairs if --anki-zip exists, else the sample")
    parser.add_argument("--anki-zip", type=Path, default=SHARED_ANKI_ZIP,
                        help="spa-eng.zip to copy into a private Keras cache (default: %(default)s)")


@contextlib.contextmanager
def translation_source(parser, args):
    """``(source, cache_dir)`` for ``load_translation`` from ``--source``/``--anki-zip``: the
    real pairs in a private Keras cache (removed afterwards), else the offline sample."""
    cache, source = None, args.source
    if source in ("auto", "anki"):
        cache = find_anki(args.anki_zip)
        if cache is None and source == "anki":
            parser.error(f"no Anki zip at {args.anki_zip}")
        source = "anki" if cache is not None else "sample"
    try:
        yield source, cache
    finally:
        if cache is not None:
            shutil.rmtree(cache, ignore_errors=True)


def load_pipelines(source: str, batch_size: int, cache_dir: Path | None):
    """The data once, and its training split as both pipelines: ``(data, {name: dataset})``."""
    kwargs = {"num_examples": 7000} if source == "dates" else {}
    data = load_translation(source, max_length=20, batch_size=batch_size, vocab_size=8000,
                            cache_dir=cache_dir, bucket=False, **kwargs)
    # The same vectorizers and pairs, grouped by length: the pipeline bucket=True builds.
    sources, targets, _ = vectorize_pairs(data.train_pairs, data.source_vectorizer,
                                          data.target_vectorizer, data.max_length)
    bucketed = make_bucketed_dataset(sources, targets, batch_size,
                                     source_length=data.info["source_length"],
                                     target_length=data.info["target_length"] + 1,
                                     seed=config.SEED)
    return data, {"padded": data.train, "bucketed": bucketed}


def build_model(kind: str, data):
    """Notebook 04's or 05's class-size translator, compiled as ``compile_translator`` does."""
    if kind == "rnn":
        model = build_rnn_translator(data.source_vocab_size, data.target_vocab_size,
                                     embedding_dim=64, units=128, attention="luong-general",
                                     output_norm=True)
        optimizer, smoothing = keras.optimizers.Adam(2e-3), 0.0
    else:
        sizes = size_settings("05", "full").model
        model = TransformerTranslator(data.source_vocab_size, data.target_vocab_size, **sizes)
        optimizer, smoothing = transformer_optimizer(sizes["d_model"], 1000, scale=1.0), 0.1
    return compile_for_benchmark(model, optimizer, label_smoothing=smoothing)


def compile_for_benchmark(model, optimizer, *, label_smoothing: float = 0.0):
    """``compile_translator``'s loss and metric, with the two counters riding along."""
    model.compile(optimizer=optimizer,
                  loss=MaskedSparseCategoricalCrossentropy(label_smoothing=label_smoothing),
                  metrics=[MaskedAccuracy(), TargetPositions(True), TargetPositions(False)],
                  jit_compile=False)
    return model


def count_traces(model) -> list[int]:
    """Wrap ``model.train_step`` so that every trace of it adds one to the returned counter."""
    counter = [0]
    step = model.train_step

    def counted_train_step(data):
        counter[0] += 1  # Python runs here only while TensorFlow traces the step
        return step(data)

    model.train_step = counted_train_step
    return counter


def measure(kind: str, data, pipelines: dict, args) -> dict:
    """Train one model per pipeline from the same weights, alternately; time and score them."""
    keras.utils.set_random_seed(config.SEED)
    models = {name: build_model(kind, data) for name in PIPELINES}
    weights = models["padded"].get_weights()
    models["bucketed"].set_weights(weights)
    logs = {name: StepLog() for name in PIPELINES}
    traces = {name: count_traces(model) for name, model in models.items()}
    # One repeated dataset per pipeline: each fit call starts a fresh pass (a new shuffle).
    repeated = {name: pipelines[name].repeat() for name in PIPELINES}
    done = 0
    while done < args.steps:
        chunk = min(args.chunk, args.steps - done)
        for name in PIPELINES:
            models[name].fit(repeated[name], steps_per_epoch=chunk, epochs=1,
                             verbose=0, callbacks=[logs[name]])
        done += chunk
        print(f"{kind}: {done}/{args.steps} steps per pipeline", flush=True)
    valid = data.valid.take(args.valid_batches)
    rows = {}
    for name in PIPELINES:
        steps = np.array(logs[name].steps, dtype=float)  # (steps, 4)
        timed = steps[steps[:, 3] == 0]
        scores = models[name].evaluate(valid, verbose=0, return_dict=True)
        rows[name] = {
            "steps": len(steps), "timed_steps": len(timed),
            "tokens_per_second": timed[:, 1].sum() / timed[:, 0].sum(),
            "ms_per_step": 1000 * float(np.median(timed[:, 0])),
            "real_share": steps[:, 1].sum() / steps[:, 2].sum(),
            "val_loss": scores["loss"], "val_accuracy": scores["masked_accuracy"],
            "traces": traces[name][0],
        }
    return rows


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    gpus = len(tf.config.list_physical_devices("GPU"))
    return (f"{cpu}, {os.cpu_count()} cores, {gpus} GPU(s), load average {load}; "
            f"TensorFlow {tf.__version__}, Keras {keras.__version__}")


def format_table(results: dict, header: str) -> str:
    lines = [header, "",
             "| model | pipeline | steps | real target tokens/s | ms/step (median) | real % of "
             "target positions | val loss | val acc | traces |",
             "|---|---|---|---|---|---|---|---|---|"]
    for kind, rows in results.items():
        for name in PIPELINES:
            row = rows[name]
            lines.append(
                f"| {kind} | {name} | {row['steps']} | {row['tokens_per_second']:,.0f} | "
                f"{row['ms_per_step']:.0f} | {100 * row['real_share']:.0f} % | "
                f"{row['val_loss']:.3f} | {row['val_accuracy']:.3f} | {row['traces']} |")
        ratio = rows["bucketed"]["tokens_per_second"] / rows["padded"]["tokens_per_second"]
        lines.append(f"| {kind} | **ratio** bucketed / padded | | **{ratio:.2f}×** | | | | | |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bucketing", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_source_arguments(parser, ("auto", "anki", "sample", "dates"))
    parser.add_argument("--steps", type=int, default=80, help="training steps per model and pipeline")
    parser.add_argument("--chunk", type=int, default=20, help="steps before switching pipeline")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--valid-batches", type=int, default=20,
                        help="validation batches scored after training")
    parser.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    args = parser.parse_args(argv)

    with translation_source(parser, args) as (source, cache):
        started = time.perf_counter()
        data, pipelines = load_pipelines(source, args.batch_size, cache)
        print(data.summary(), f"(loaded in {time.perf_counter() - started:.0f} s)", flush=True)
        results = {}
        for kind in args.models:
            results[kind] = measure(kind, data, pipelines, args)
            print(f"{kind}: done", flush=True)
        header = (f"`python -m benchmarks.bucketing --steps {args.steps} --chunk {args.chunk}` on "
                  f"'{source}' ({len(data.train_pairs):,} training pairs), batch {args.batch_size}, "
                  f"{args.valid_batches} validation batches; {machine()}")
        print(format_table(results, header))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
