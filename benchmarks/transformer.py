"""Training speed of the from-scratch Transformer translator against a Keras-MHA baseline.

    python -m benchmarks.transformer                 # the reference size, both models, one table
    python -m benchmarks.transformer --steps 20      # shorter
    python -m benchmarks.transformer --no-jit-rows   # only the jit_compile=True rows

Reference size (issue 5): 2 layers, d_model 128, 4 heads, dff 512, batch 64, source and target
length 20, vocabulary 8000 (both languages), dropout 0.1, the paper's Adam + warm-up schedule,
masked cross-entropy. The data are random token ids of full length (no padding), cached in
memory and prefetched, so the input pipeline costs nothing and every target position is a
real token: **target tokens/second = batch × 20 × steps / seconds**.

- ``seqlab``: :class:`seqlab.models.TransformerTranslator` — our layers, eq. 16 written out.
- ``keras-mha baseline``: the same architecture (post-norm encoder/decoder layers, same
  sizes, same embeddings, loss and optimiser) built from ``keras.layers.MultiHeadAttention``
  the way the public tutorials do (Keras masks propagated from the embedding, ``Add`` +
  ``LayerNormalization``, a ``Dense`` on rank-3 tensors).

Both run in the same process, one after the other, each timed after a warm-up that includes
tracing / XLA compilation. The table reports the device, the load average (other processes on
a shared machine slow everything down) and CPU seconds per step besides wall time.

What bounds the number on a CPU: one training step at this size is about 15 GFLOP (forward
≈ 3.9 MFLOP per target token — 2.0 of them in the 128 × 8000 output projection — and about
twice that backward). ``--flops`` measures the machine's float32 matmul throughput for
comparison.

Full-mode configuration (notebook 05 with ``FAST = False``; meant to finish in ≤ 15 minutes on
a Colab T4 GPU — an estimate, not measured here): Anki English→Spanish, vocabulary 8000 per
language, max length 20, the ``"small"`` preset (2 layers, d_model 128, 4 heads, dff 512,
dropout 0.1), batch 128, 10 epochs (~7,400 steps), ``TransformerSchedule(128, warmup_steps=
4000)``, label smoothing 0.1, ``jit_compile=True``.
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
from keras import ops  # noqa: E402

from seqlab.layers.transformer import positional_encoding  # noqa: E402
from seqlab.models.transformer import TransformerTranslator  # noqa: E402
from seqlab.training import MaskedSparseCategoricalCrossentropy  # noqa: E402
from seqlab.training.schedules import transformer_optimizer  # noqa: E402

REFERENCE = {"num_layers": 2, "d_model": 128, "num_heads": 4, "dff": 512, "dropout": 0.1,
             "batch_size": 64, "length": 20, "vocab_size": 8000}


# --------------------------------------------------------------------------------------------
# The baseline: the tutorial way, with keras.layers.MultiHeadAttention
# --------------------------------------------------------------------------------------------


class TutorialEmbedding(keras.layers.Layer):
    def __init__(self, vocab_size, d_model, **kwargs):
        super().__init__(**kwargs)
        self.d_model = d_model
        self.embedding = keras.layers.Embedding(vocab_size, d_model, mask_zero=True)

    def compute_mask(self, x, mask=None):
        return self.embedding.compute_mask(x, mask)

    def call(self, x):
        length = ops.shape(x)[1]
        x = self.embedding(x) * ops.sqrt(ops.cast(self.d_model, "float32"))
        return x + positional_encoding(length, self.d_model)[None]


class TutorialEncoderLayer(keras.layers.Layer):
    def __init__(self, d_model, num_heads, dff, dropout, **kwargs):
        super().__init__(**kwargs)
        self.attention = keras.layers.MultiHeadAttention(num_heads, d_model // num_heads)
        self.ffn = keras.Sequential([keras.layers.Dense(dff, activation="relu"),
                                     keras.layers.Dense(d_model), keras.layers.Dropout(dropout)])
        self.drop = keras.layers.Dropout(dropout)
        self.add1, self.add2 = keras.layers.Add(), keras.layers.Add()
        self.norm1 = keras.layers.LayerNormalization(epsilon=1e-6)
        self.norm2 = keras.layers.LayerNormalization(epsilon=1e-6)
        self.supports_masking = True

    def call(self, x, training=None):
        x = self.norm1(self.add1([x, self.drop(self.attention(x, x), training=training)]))
        return self.norm2(self.add2([x, self.ffn(x, training=training)]))


class TutorialDecoderLayer(keras.layers.Layer):
    def __init__(self, d_model, num_heads, dff, dropout, **kwargs):
        super().__init__(**kwargs)
        self.self_attention = keras.layers.MultiHeadAttention(num_heads, d_model // num_heads)
        self.cross_attention = keras.layers.MultiHeadAttention(num_heads, d_model // num_heads)
        self.ffn = keras.Sequential([keras.layers.Dense(dff, activation="relu"),
                                     keras.layers.Dense(d_model), keras.layers.Dropout(dropout)])
        self.drop1, self.drop2 = keras.layers.Dropout(dropout), keras.layers.Dropout(dropout)
        self.adds = [keras.layers.Add() for _ in range(3)]
        self.norms = [keras.layers.LayerNormalization(epsilon=1e-6) for _ in range(3)]

    def call(self, x, context, training=None):
        attended = self.self_attention(x, x, use_causal_mask=True)
        x = self.norms[0](self.adds[0]([x, self.drop1(attended, training=training)]))
        attended = self.cross_attention(x, context)
        x = self.norms[1](self.adds[1]([x, self.drop2(attended, training=training)]))
        return self.norms[2](self.adds[2]([x, self.ffn(x, training=training)]))


class KerasMHATranslator(keras.Model):
    """The baseline: same sizes and structure as ours, attention from ``keras.layers``."""

    def __init__(self, num_layers, d_model, num_heads, dff, source_vocab_size,
                 target_vocab_size, dropout, **kwargs):
        super().__init__(**kwargs)
        self.source_embedding = TutorialEmbedding(source_vocab_size, d_model)
        self.target_embedding = TutorialEmbedding(target_vocab_size, d_model)
        self.source_drop = keras.layers.Dropout(dropout)
        self.target_drop = keras.layers.Dropout(dropout)
        self.encoder_layers = [TutorialEncoderLayer(d_model, num_heads, dff, dropout)
                               for _ in range(num_layers)]
        self.decoder_layers = [TutorialDecoderLayer(d_model, num_heads, dff, dropout)
                               for _ in range(num_layers)]
        self.final = keras.layers.Dense(target_vocab_size)

    def call(self, inputs, training=None):
        source, target = inputs
        x = self.source_drop(self.source_embedding(source), training=training)
        for layer in self.encoder_layers:
            x = layer(x, training=training)
        y = self.target_drop(self.target_embedding(target), training=training)
        for layer in self.decoder_layers:
            y = layer(y, x, training=training)
        logits = self.final(y)
        try:  # the tutorial's trick: drop the Keras mask so the loss does its own masking
            del logits._keras_mask
        except AttributeError:
            pass
        return logits


# --------------------------------------------------------------------------------------------
# Measurement
# --------------------------------------------------------------------------------------------


def synthetic_dataset(batch_size, length, vocab_size, batches=32, seed=0):
    """Random full-length id sequences, cached and prefetched: an input pipeline that is free."""
    rng = np.random.default_rng(seed)
    n = batch_size * batches
    source = rng.integers(1, vocab_size, (n, length), dtype=np.int32)
    target = rng.integers(1, vocab_size, (n, length + 1), dtype=np.int32)
    dataset = tf.data.Dataset.from_tensor_slices(((source, target[:, :-1]), target[:, 1:]))
    return dataset.batch(batch_size, drop_remainder=True).cache().repeat().prefetch(
        tf.data.AUTOTUNE)


def build_model(kind, size=REFERENCE):
    args = {k: size[k] for k in ("num_layers", "d_model", "num_heads", "dff", "dropout")}
    vocab = size["vocab_size"]
    if kind == "seqlab":
        return TransformerTranslator(**args, source_vocab_size=vocab, target_vocab_size=vocab)
    return KerasMHATranslator(**args, source_vocab_size=vocab, target_vocab_size=vocab)


def measure(kind, jit_compile, steps, warmup_steps=3, size=REFERENCE, seed=0):
    """Seconds per training step (wall and CPU) after a warm-up; returns a result dict."""
    keras.utils.set_random_seed(seed)
    dataset = synthetic_dataset(size["batch_size"], size["length"], size["vocab_size"])
    model = build_model(kind, size)
    model.compile(optimizer=transformer_optimizer(size["d_model"]),
                  loss=MaskedSparseCategoricalCrossentropy(), jit_compile=jit_compile)
    start = time.perf_counter()
    model.fit(dataset, steps_per_epoch=warmup_steps, epochs=1, verbose=0)
    warmup = time.perf_counter() - start
    load_before = os.getloadavg()[0]
    wall, cpu = time.perf_counter(), time.process_time()
    history = model.fit(dataset, steps_per_epoch=steps, epochs=1, verbose=0)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    tokens = steps * size["batch_size"] * size["length"]
    return {
        "model": kind, "jit_compile": jit_compile, "steps": steps,
        "ms_per_step": 1000 * wall / steps, "cpu_ms_per_step": 1000 * cpu / steps,
        "tokens_per_second": tokens / wall, "warmup_seconds": warmup,
        "load_average": (load_before + os.getloadavg()[0]) / 2,
        "loss": float(history.history["loss"][-1]),
        "parameters": model.count_params(),
    }


def matmul_gflops(repeats=10):
    """float32 throughput of the output projection's matmul (1280 × 128 @ 128 × 8000)."""
    a = tf.random.normal((1280, 128))
    b = tf.random.normal((128, 8000))
    product = tf.function(lambda a, b: tf.matmul(a, b))
    product(a, b).numpy()
    start = time.perf_counter()
    for _ in range(repeats):
        result = product(a, b)
    result.numpy()
    seconds = (time.perf_counter() - start) / repeats
    return 2 * 1280 * 128 * 8000 / seconds / 1e9


def device_description():
    gpus = tf.config.list_physical_devices("GPU")
    if gpus:
        details = tf.config.experimental.get_device_details(gpus[0])
        return f"GPU: {details.get('device_name', gpus[0].name)}"
    return f"CPU: {platform.processor() or platform.machine()}, {os.cpu_count()} cores"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=30, help="timed steps per row")
    parser.add_argument("--no-jit-rows", action="store_true",
                        help="skip the jit_compile=False rows")
    parser.add_argument("--flops", action="store_true",
                        help="also measure the matmul throughput of this machine")
    args = parser.parse_args(argv)

    settings = [True] if args.no_jit_rows else [True, False]
    rows = [measure(kind, jit, args.steps) for jit in settings
            for kind in ("seqlab", "keras-mha baseline")]
    size = REFERENCE
    print(f"Transformer training speed — device: {device_description()}; TensorFlow "
          f"{tf.__version__}, Keras {keras.__version__}")
    print(f"size: {size['num_layers']} layers, d_model {size['d_model']}, {size['num_heads']} "
          f"heads, dff {size['dff']}, batch {size['batch_size']}, lengths {size['length']}, "
          f"vocabulary {size['vocab_size']}; {args.steps} timed steps per row\n")
    header = (f"{'model':<20} {'jit':>5} {'ms/step':>8} {'CPU ms':>7} {'tokens/s':>9} "
              f"{'vs baseline':>11} {'load':>5} {'params':>10}")
    print(header)
    print("-" * len(header))
    for row in rows:
        baseline = next(r for r in rows if r["model"] != "seqlab"
                        and r["jit_compile"] == row["jit_compile"])
        ratio = row["tokens_per_second"] / baseline["tokens_per_second"]
        print(f"{row['model']:<20} {str(row['jit_compile']):>5} {row['ms_per_step']:8.0f} "
              f"{row['cpu_ms_per_step']:7.0f} {row['tokens_per_second']:9,.0f} {ratio:10.2f}x "
              f"{row['load_average']:5.1f} {row['parameters']:10,}")
    if args.flops:
        print(f"\nmatmul throughput (1280×128 @ 128×8000, float32): {matmul_gflops():.1f} GFLOP/s "
              "— one training step at this size is ≈ 15 GFLOP")
    print("\nload: 1-minute load average during the row (above the core count = shared CPU).")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
