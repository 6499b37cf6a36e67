"""Notebook 05's Transformer with its output layer on the real target tokens only, against the
output layer on every position, on the same padded batches of the real Anki pairs.

    python -m benchmarks.real_token_logits                  # real Anki pairs if found, 80 steps each
    python -m benchmarks.real_token_logits --steps 200      # longer
    python -m benchmarks.real_token_logits --source sample  # offline, seconds (what the test runs)

Notebook 05 trains its full size on batches padded to the longest pair (grouping them by length
cost this Transformer about 2 BLEU: benchmarks/README.md), so 59 % of the target positions are
padding, and each one went through the 8,000-word output layer, about half of the model's
arithmetic. ``seqlab.layers.RealTokenDense`` computes that layer at the real positions only
(zeros elsewhere, which the masked loss ignores): the loss and the gradients are those of the
full layer (``tests/test_layers_output.py``, ``tests/test_models_transformer.py``), so the
training is the same and only its time changes.

This benchmark builds notebook 05's full-size Transformer (preset ``"small"``, the paper's
schedule with 1,000 warm-up steps, label smoothing 0.1, batch 128, ``jit_compile=False``) twice
with the same initial weights, ``skip_padding=False`` (every position, as before) and ``True``,
and trains them **alternately** (``--chunk`` steps of one, then of the other) on the same
padded batches in the same order. Printed per model: real target tokens per second (the first
step of each ``fit`` call left out), the median step time, and the validation loss and masked
accuracy on the first ``--valid-batches`` validation batches after the same steps; then the
ratio of tokens per second. The two validation columns should agree to float rounding: the
same gradients, summed in another order.
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

import keras
import numpy as np

from benchmarks.bucketing import (
    SHARED_ANKI_ZIP,
    StepLog,
    compile_for_benchmark,
    count_traces,
    find_anki,
    machine,
)
from seqlab import config
from seqlab.data import load_translation
from seqlab.models import build_transformer_translator
from seqlab.training import transformer_optimizer

VARIANTS = {"every position": False, "real tokens only": True}


def build(data, skip_padding: bool):
    model = build_transformer_translator(data.source_vocab_size, data.target_vocab_size,
                                         preset="small", skip_padding=skip_padding)
    return compile_for_benchmark(model, transformer_optimizer(model.d_model, 1000, scale=1.0),
                                 label_smoothing=0.1)


def measure(data, args) -> dict:
    keras.utils.set_random_seed(config.SEED)
    models = {name: build(data, skip) for name, skip in VARIANTS.items()}
    first, second = models.values()
    second.set_weights(first.get_weights())
    logs = {name: StepLog() for name in VARIANTS}
    traces = {name: count_traces(model) for name, model in models.items()}
    # The same padded training batches, in the same order, for both: each chunk is drawn once.
    iterator = iter(data.train.repeat())
    done = 0
    while done < args.steps:
        chunk = min(args.chunk, args.steps - done)
        batches = [next(iterator) for _ in range(chunk)]
        for name, model in models.items():
            model.fit(_as_dataset(batches), epochs=1, verbose=0, callbacks=[logs[name]])
        done += chunk
        print(f"{done}/{args.steps} steps per variant", flush=True)
    valid = data.valid.take(args.valid_batches)
    rows = {}
    for name, model in models.items():
        steps = np.array(logs[name].steps, dtype=float)  # (steps, 4)
        timed = steps[steps[:, 3] == 0]
        scores = model.evaluate(valid, verbose=0, return_dict=True)
        rows[name] = {"steps": len(steps),
                      "tokens_per_second": timed[:, 1].sum() / timed[:, 0].sum(),
                      "ms_per_step": 1000 * float(np.median(timed[:, 0])),
                      "real_share": steps[:, 1].sum() / steps[:, 2].sum(),
                      "val_loss": scores["loss"], "val_accuracy": scores["masked_accuracy"],
                      "traces": traces[name][0]}
    return rows


def _as_dataset(batches):
    """The batches taken from the variant's own iterator, as one short dataset for ``fit``."""
    import tensorflow as tf

    def generate():
        yield from batches

    first = batches[0]
    signature = tf.nest.map_structure(
        lambda t: tf.TensorSpec((None,) * len(t.shape), t.dtype), first)
    return tf.data.Dataset.from_generator(generate, output_signature=signature).apply(
        tf.data.experimental.assert_cardinality(len(batches)))


def format_table(rows: dict, header: str) -> str:
    lines = [header, "", "| output layer | steps | real target tokens/s | ms/step (median) | "
             "real % of target positions | val loss | val acc | traces |",
             "|---|---|---|---|---|---|---|---|"]
    for name, row in rows.items():
        lines.append(f"| {name} | {row['steps']} | {row['tokens_per_second']:,.0f} | "
                     f"{row['ms_per_step']:.0f} | {100 * row['real_share']:.0f} % | "
                     f"{row['val_loss']:.4f} | {row['val_accuracy']:.4f} | {row['traces']} |")
    old, new = (rows[name]["tokens_per_second"] for name in VARIANTS)
    lines.append(f"| **ratio** real tokens only / every position | | **{new / old:.2f}×** | "
                 "| | | | |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.real_token_logits",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", choices=("auto", "anki", "sample"), default="auto",
                        help="auto: the real Anki pairs if --anki-zip exists, else the sample")
    parser.add_argument("--anki-zip", type=Path, default=SHARED_ANKI_ZIP,
                        help="spa-eng.zip to copy into a private Keras cache (default: %(default)s)")
    parser.add_argument("--steps", type=int, default=80, help="training steps per variant")
    parser.add_argument("--chunk", type=int, default=20, help="steps before switching variant")
    parser.add_argument("--valid-batches", type=int, default=20)
    args = parser.parse_args(argv)
    cache, source = None, args.source
    if source in ("auto", "anki"):
        cache = find_anki(args.anki_zip)
        if cache is None and source == "anki":
            parser.error(f"no Anki zip at {args.anki_zip}")
        source = "anki" if cache is not None else "sample"
    try:
        started = time.perf_counter()
        data = load_translation(source, max_length=20, batch_size=128, vocab_size=8000,
                                cache_dir=cache, bucket=False)
        print(data.summary(), f"(loaded in {time.perf_counter() - started:.0f} s)", flush=True)
        rows = measure(data, args)
        print(format_table(rows, f"`python -m benchmarks.real_token_logits --steps {args.steps} "
                                 f"--chunk {args.chunk}` on '{source}' "
                                 f"({len(data.train_pairs):,} training pairs), batch 128, padded "
                                 f"batches; {machine()}"))
    finally:
        if cache is not None:
            shutil.rmtree(cache, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
