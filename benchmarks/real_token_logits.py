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
full layer (``tests/test_layers_output.py``, ``tests/test_lessons_nb05.py``), so the
training is the same and only its time changes.

This benchmark builds notebook 05's full-size Transformer (preset ``"small"``, the paper's
schedule with 1,000 warm-up steps, label smoothing 0.1, batch 128, ``jit_compile=False``) three
times with the same initial weights, differing only in how the output layer is applied: as
notebook 05 applied it before (a ``Dense`` on the rank-3 ``(B, T, d)``, a broadcast matrix
product), as the package's ``TransformerTranslator`` did (one 2-D product over every position,
``seqlab.layers.FlatDense``), and at the real tokens only (``skip_padding=True``, notebook 05 now). They train
in turn on the same padded batches of the real Anki pairs (``--chunk`` batches drawn once, then
``train_on_batch`` on each by every variant, each step timed). Printed per variant: the median
step time, real target tokens per second at that median, and the validation loss and masked
accuracy on the first ``--valid-batches`` validation batches after the same steps (equal to
float rounding: the same gradients, summed in another order); then the ratios of step times.
"""

from __future__ import annotations

import argparse
import time

import keras
import numpy as np

from benchmarks.bucketing import add_source_arguments, machine, translation_source
from benchmarks.in_turn import train_in_turn
from seqlab import config
from seqlab.data import load_translation
from seqlab.lessons.nb05 import TransformerTranslator
from seqlab.sizes import settings as size_settings
from seqlab.training import compile_translator, transformer_optimizer

#: name -> how the output layer is applied: notebook 05's former rank-3 ``Dense`` on
#: ``(B, T, d)``, the package's 2-D view of every position (``FlatDense``), the real tokens only.
VARIANTS = ("rank-3 Dense (notebook 05 before)", "2-D Dense, every position",
            "real tokens only")


class Rank3Dense(keras.layers.Dense):
    """The output layer applied to ``(B, T, d)`` directly, as notebook 05's
    ``keras.layers.Dense(vocab_size)(x)`` was (a broadcast matrix product on TensorFlow)."""

    def call(self, inputs, padding_mask=None):
        return super().call(inputs)


def build(data, variant: str):
    sizes = size_settings("05", "full").model
    model = TransformerTranslator(data.source_vocab_size, data.target_vocab_size, **sizes,
                                  skip_padding=variant == VARIANTS[2])
    if variant == VARIANTS[0]:  # before any weight exists: the same kernel, applied at rank 3
        model.decoder.logits = Rank3Dense(data.target_vocab_size, name="logits")
    model.build()
    return compile_translator(model, transformer_optimizer(sizes["d_model"], 1000, scale=1.0),
                              label_smoothing=0.1, jit_compile=False)


def measure(data, args) -> dict:
    keras.utils.set_random_seed(config.SEED)
    models = {name: build(data, name) for name in VARIANTS}
    weights = models[VARIANTS[0]].get_weights()
    for model in models.values():
        model.set_weights(weights)                                    # the same start
    # The same padded training batches, in the same order, for every variant: each chunk is
    # drawn once, then every variant trains on it (train_on_batch, each step timed), in turn.
    iterator = iter(data.train.repeat())
    for model in models.values():                                     # trace outside the timing
        warm = next(iter(data.train))
        model.test_on_batch(*warm)
    real = positions = 0
    done, times = 0, {}
    for done, chunk in train_in_turn(models, iterator, args.steps, args.chunk, times):
        for _, y in chunk:
            real, positions = real + int(np.count_nonzero(y)), positions + int(np.size(y))
        print(f"{done}/{args.steps} steps per variant", flush=True)
    valid = data.valid.take(args.valid_batches)
    rows = {}
    for name, model in models.items():
        scores = model.evaluate(valid, verbose=0, return_dict=True)
        seconds = float(np.median(times[name]))
        rows[name] = {"steps": done, "seconds": seconds,
                      "tokens_per_second": real / done / seconds,
                      "real_share": real / positions,
                      "val_loss": scores["loss"], "val_accuracy": scores["masked_accuracy"]}
    return rows


def format_table(rows: dict, header: str) -> str:
    lines = [header, "", "| output layer | steps | ms/step (median) | real target tokens/s | "
             "real % of target positions | val loss | val acc |", "|---|---|---|---|---|---|---|"]
    for name, row in rows.items():
        lines.append(f"| {name} | {row['steps']} | {1000 * row['seconds']:.0f} | "
                     f"{row['tokens_per_second']:,.0f} | {100 * row['real_share']:.0f} % | "
                     f"{row['val_loss']:.4f} | {row['val_accuracy']:.4f} |")
    new = rows[VARIANTS[2]]["seconds"]
    for name in VARIANTS[:2]:
        lines.append(f"| **ratio** real tokens only / {name} | | **{rows[name]['seconds'] / new:.2f}×** "
                     "| | | | |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.real_token_logits",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_source_arguments(parser)
    parser.add_argument("--steps", type=int, default=60, help="training steps per variant")
    parser.add_argument("--chunk", type=int, default=20, help="steps before switching variant")
    parser.add_argument("--valid-batches", type=int, default=20)
    args = parser.parse_args(argv)
    with translation_source(parser, args) as (source, cache):
        started = time.perf_counter()
        data = load_translation(source, max_length=20, batch_size=128, vocab_size=8000,
                                cache_dir=cache, bucket=False)
        print(data.summary(), f"(loaded in {time.perf_counter() - started:.0f} s)", flush=True)
        rows = measure(data, args)
        print(format_table(rows, f"`python -m benchmarks.real_token_logits --steps {args.steps} "
                                 f"--chunk {args.chunk}` on '{source}' "
                                 f"({len(data.train_pairs):,} training pairs), batch 128, padded "
                                 f"batches; {machine()}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
