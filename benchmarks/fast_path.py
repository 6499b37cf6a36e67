"""Does the fast path earn its place? Training speed of notebook 05's ``TransformerTranslator``
built with the plain layers it shows (``seqlab.layers.MultiHeadAttention``, ``keras.layers.Dense``
in the feed-forward block) against the same model built with ``FastMultiHeadAttention`` and
``FlatDense`` (2-D matmul views), same process, the models taking turns round by round.

    python -m benchmarks.fast_path                # 4 rounds of 10 steps, with and without XLA
    python -m benchmarks.fast_path --rounds 2

Size, data and optimiser: ``benchmarks.transformer``'s reference (2 layers, d_model 128, batch
64, lengths 20, vocabulary 8000). Result: ``benchmarks/README.md``, "The fast path beside the
plain layers".
"""

from __future__ import annotations

import argparse
import contextlib
import os
import time

import keras
import numpy as np

from benchmarks import transformer as reference
from seqlab.layers import FastMultiHeadAttention, FlatDense, MultiHeadAttention
from seqlab.layers import transformer_blocks as blocks

VARIANTS = {"plain": (MultiHeadAttention, keras.layers.Dense),
            "fast path": (FastMultiHeadAttention, FlatDense)}


@contextlib.contextmanager
def built_with(variant):
    """Models built inside use ``variant``'s attention and feed-forward Dense."""
    attention, dense = VARIANTS[variant]
    saved = blocks.attention_sublayer, blocks.PositionwiseFeedForward.__init__

    def attention_sublayer(layer, name):
        return attention(layer.num_heads, blocks.head_size(layer.d_model, layer.num_heads),
                         name=name, dtype=layer.dtype_policy)

    def feed_forward_init(self, d_model, dff, **kwargs):
        keras.layers.Layer.__init__(self, **kwargs)
        self.d_model, self.dff = int(d_model), int(dff)
        self.inner_dense = dense(self.dff, activation="relu", name="inner",
                                 dtype=self.dtype_policy)
        self.outer_dense = dense(self.d_model, name="outer", dtype=self.dtype_policy)

    blocks.attention_sublayer, blocks.PositionwiseFeedForward.__init__ = (attention_sublayer,
                                                                          feed_forward_init)
    try:
        yield
    finally:
        blocks.attention_sublayer, blocks.PositionwiseFeedForward.__init__ = saved


def measure(jit_compile, steps, rounds, size=reference.REFERENCE):
    """Per variant: wall and CPU milliseconds per step of each round."""
    data = reference.synthetic_dataset(size["batch_size"], size["length"], size["vocab_size"])
    models, results = {}, {}
    for variant in VARIANTS:
        with built_with(variant):
            models[variant] = reference.compiled_model("seqlab", jit_compile, size)
        models[variant].fit(data, steps_per_epoch=3, epochs=1, verbose=0)  # warm-up, tracing
        results[variant] = {"wall": [], "cpu": []}
    for _ in range(rounds):
        for variant, model in models.items():
            wall, cpu = time.perf_counter(), time.process_time()
            model.fit(data, steps_per_epoch=steps, epochs=1, verbose=0)
            results[variant]["wall"].append(1000 * (time.perf_counter() - wall) / steps)
            results[variant]["cpu"].append(1000 * (time.process_time() - cpu) / steps)
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=10, help="timed steps per round")
    parser.add_argument("--rounds", type=int, default=4, help="timed rounds per variant")
    args = parser.parse_args(argv)
    print(f"{'variant':<10} {'jit':>5} {'best ms/step':>12} {'median':>7} {'CPU ms/step':>11} "
          f"{'load':>5}")
    for jit_compile in (False, True):
        for variant, result in measure(jit_compile, args.steps, args.rounds).items():
            print(f"{variant:<10} {str(jit_compile):>5} {min(result['wall']):12.0f} "
                  f"{np.median(result['wall']):7.0f} {np.median(result['cpu']):11.0f} "
                  f"{os.getloadavg()[0]:5.1f}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
