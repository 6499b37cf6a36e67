"""Training speed and early BLEU of the RNN translators, every attention variant in one run
(notebook 04's translator, ``seqlab.lessons.nb04``; ``bahdanau`` is Bahdanau's decoder, a step loop in training; the
``luong-*`` variants run Keras's fused GRU/LSTM over the whole target first).

    python -m benchmarks.nmt                      # reference size, 150 steps per model
    python -m benchmarks.nmt --steps 40 --timed 10 --variants bahdanau   # a quick look

Reference size (issue 4): units 256, batch 64, source and target length 20, vocabularies of
8,000. Data are synthetic so the benchmark runs offline and every position is a real token: a
source of 20 token ids drawn from ``--active-words`` of the 8,000 and, as target, the same ids
through a fixed random permutation of the vocabulary (one target word per source word, in
order, so attention has a diagonal to find). The output layer still scores all 8,000 words, so
the speed is that of the reference size. BLEU after ``--steps`` steps is greedy decoding of 256
held-out sentences. Measured (2-core CPU, 150 steps): every variant was still at the unigram
stage (loss ~ ln 300, BLEU 0.0) -- learning a 20-position alignment from random tokens takes far
longer; the variants separate on notebook 04's dates task. "Target tokens/s" counts the 20 target tokens of every sentence
of a batch; it is computed from the *median* step time over ``--timed`` steps after the first
(traced) ones, because on a shared 2-core machine a few steps stall for other processes (the
mean-based figure is printed too).

The baseline, measured in the same run, is the public TensorFlow NMT tutorial's architecture
re-implemented for Keras 3 (its own code no longer runs there): a bidirectional GRU of 256
units per direction summed, a GRU decoder, one-head ``keras.layers.MultiHeadAttention``
cross-attention with Add + LayerNormalization, trained with the same masked loss.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from benchmarks.full_mode_timing import StepTimer  # noqa: E402
from seqlab.decoding import greedy_decode  # noqa: E402
from seqlab.evaluation import bleu  # noqa: E402
from seqlab.lessons.nb04 import build_rnn_translator  # noqa: E402
from seqlab.training import MaskedSparseCategoricalCrossentropy  # noqa: E402

ATTENTION_CHOICES = ("none", "bahdanau", "luong-dot", "luong-general", "luong-concat")
PAD, START, END, FIRST_WORD = 0, 1, 2, 3


class TutorialTranslator(keras.Model):
    """The TensorFlow tutorial's encoder-decoder, same sizes, for the baseline row."""

    def __init__(self, vocab_size: int, units: int):
        super().__init__()
        self.source_embedding = keras.layers.Embedding(vocab_size, units, mask_zero=True)
        self.encoder_rnn = keras.layers.Bidirectional(
            keras.layers.GRU(units, return_sequences=True), merge_mode="sum")
        self.target_embedding = keras.layers.Embedding(vocab_size, units, mask_zero=True)
        self.decoder_rnn = keras.layers.GRU(units, return_sequences=True)
        self.attention = keras.layers.MultiHeadAttention(num_heads=1, key_dim=units)
        self.add = keras.layers.Add()
        self.norm = keras.layers.LayerNormalization()
        self.output_layer = keras.layers.Dense(vocab_size)

    def call(self, inputs):
        source, target = inputs
        context = self.encoder_rnn(self.source_embedding(source))  # (batch, S, units)
        hidden = self.decoder_rnn(self.target_embedding(target))  # (batch, T, units)
        attended = self.attention(query=hidden, value=context)
        return self.output_layer(self.norm(self.add([hidden, attended])))


def synthetic_task(vocab_size: int, length: int, count: int, seed: int, active_words: int):
    """Source ids and targets: the mapped ids followed by [END] (teacher-forcing pairs)."""
    rng = np.random.default_rng(seed)
    words = np.arange(FIRST_WORD, vocab_size)
    mapping = np.zeros(vocab_size, np.int32)
    mapping[words] = rng.permutation(words)
    active = rng.choice(words, size=min(active_words, len(words)), replace=False)
    source = rng.choice(active, size=(count, length)).astype(np.int32)  # (count, length)
    mapped = mapping[source]
    target_in = np.concatenate([np.full((count, 1), START, np.int32), mapped[:, :-1]], axis=1)
    target_out = np.concatenate([mapped[:, :-1], np.full((count, 1), END, np.int32)], axis=1)
    return source, target_in, target_out


def build(variant: str, vocab_size: int, units: int, jit_compile):
    keras.utils.set_random_seed(0)
    if variant == "tutorial":
        model = TutorialTranslator(vocab_size, units)
    else:
        model = build_rnn_translator(vocab_size, vocab_size, embedding_dim=units, units=units,
                                     attention=variant)
    model.compile(optimizer=keras.optimizers.Adam(5e-3), loss=MaskedSparseCategoricalCrossentropy(),
                  jit_compile=jit_compile)
    return model


def measure(variant, args, train, test):
    model = build(variant, args.vocab, args.units, args.jit)
    untimed = args.steps - args.timed
    start = time.perf_counter()
    model.fit(train, steps_per_epoch=untimed, epochs=1, verbose=0)
    first = time.perf_counter() - start
    timer = StepTimer()
    start = time.perf_counter()
    model.fit(train, steps_per_epoch=args.timed, epochs=1, verbose=0, callbacks=[timer])
    seconds = time.perf_counter() - start
    tokens_per_step = args.batch * args.length
    tokens_per_second = tokens_per_step / float(np.median(timer.seconds))
    score = float("nan")
    if variant != "tutorial":  # the baseline has no decoding protocol
        source, _, target_out = test
        tokens, _ = greedy_decode(model, source, START, END, args.length)
        def as_text(rows):
            return [" ".join(str(t) for t in row[: list(row).index(END) if END in row else len(row)])
                    for row in rows]
        score = bleu(as_text(tokens), as_text(target_out))
    return {"variant": variant, "tokens_per_second": tokens_per_second,
            "mean_tokens_per_second": args.timed * tokens_per_step / seconds,
            "ms_per_step": 1000 * float(np.median(timer.seconds)), "first_steps_s": first,
            "parameters": model.count_params(), "bleu": score}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.nmt", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--units", type=int, default=256)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--length", type=int, default=20)
    parser.add_argument("--vocab", type=int, default=8000)
    parser.add_argument("--steps", type=int, default=200, help="training steps per model")
    parser.add_argument("--timed", type=int, default=30, help="last steps timed for speed")
    parser.add_argument("--active-words", type=int, default=300,
                        help="distinct source words the synthetic task uses")
    parser.add_argument("--jit", choices=["auto", "on", "off"], default="off",
                        help="jit_compile (off by default: XLA was slower for GRUs on CPU)")
    parser.add_argument("--variants", nargs="*", default=[*ATTENTION_CHOICES, "tutorial"],
                        choices=[*ATTENTION_CHOICES, "tutorial"])
    args = parser.parse_args(argv)
    args.jit = {"auto": "auto", "on": True, "off": False}[args.jit]
    if not 0 < args.timed < args.steps:
        parser.error("--timed must be between 0 and --steps")

    source, target_in, target_out = synthetic_task(args.vocab, args.length,
                                                   args.batch * 64 + 256, seed=1,
                                                   active_words=args.active_words)
    train = (tf.data.Dataset.from_tensor_slices(
        ((source[:-256], target_in[:-256]), target_out[:-256]))
        .shuffle(4096, seed=0).batch(args.batch, drop_remainder=True).repeat()
        .prefetch(tf.data.AUTOTUNE))
    test = (source[-256:], target_in[-256:], target_out[-256:])

    device = tf.config.list_physical_devices("GPU")
    print(f"TensorFlow {tf.__version__}, Keras {keras.__version__}; "
          f"{'GPU: ' + device[0].name if device else 'CPU only'}; {os.cpu_count()} CPU cores "
          f"({platform.processor() or platform.machine()}); jit_compile={args.jit}")
    print(f"units {args.units}, batch {args.batch}, length {args.length}, vocabulary "
          f"{args.vocab}; {args.steps} steps per model, the last {args.timed} timed\n")
    rows = []
    for variant in args.variants:
        rows.append(measure(variant, args, train, test))
        row = rows[-1]
        print(f"  measured {variant}: {row['tokens_per_second']:.0f} tokens/s", flush=True)
    baseline = next((r["tokens_per_second"] for r in rows if r["variant"] == "tutorial"), None)
    print(f"\n{'model':15} {'tokens/s':>9} {'(mean)':>7} {'ms/step':>8} {'vs tutorial':>11} "
          f"{'parameters':>11} {'first steps s':>13} {f'BLEU@{args.steps}':>9}")
    for r in rows:
        ratio = f"{r['tokens_per_second'] / baseline:.2f}x" if baseline else "-"
        print(f"{r['variant']:15} {r['tokens_per_second']:9.0f} {r['mean_tokens_per_second']:7.0f} "
              f"{r['ms_per_step']:8.0f} {ratio:>11} {r['parameters']:11,} "
              f"{r['first_steps_s']:13.1f} {r['bleu']:9.1f}")
    print("\ntokens/s from the median step time; (mean) from the total time of the timed steps."
          "\nThe tutorial row has no BLEU: its model has no decoding loop here.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
