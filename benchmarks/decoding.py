"""Greedy decoding speed: the RNN translator against the Transformer, with and without its cache.

    python -m benchmarks.decoding            # 1,000 sentences, full-mode sizes
    python -m benchmarks.decoding --quick    # 128 sentences, shorter outputs (a smoke run)

Issue 10.5: decoding 1,000 test sentences greedily took 15.2 s with the Transformer, whose
``decode_step`` recomputed the whole prefix at every step, against 2.9 s for the RNN translator.
The Transformer now keeps a key/value cache (``init_cache`` of notebook 05's ``TransformerTranslator``): each step
runs only the newest token through the decoder. This benchmark prints, in one run and on one
synthetic source batch, greedy sentences/s for

- ``rnn``: :class:`seqlab.lessons.nb04.Translator` (GRU, Bahdanau attention, notebook 04's
  full-mode sizes: embedding 128, units 256);
- ``transformer (cached)``: notebook 05's ``TransformerTranslator`` (``seqlab.lessons.nb05``) at full size
  (notebook 05's full mode), with the cache — what ``greedy_decode`` does by default;
- ``transformer (uncached)``: the same model with ``use_cache=False`` (the prefix recomputed);

with the ratio to the RNN row. Vocabularies are 8,000 words per language and sources 20 tokens,
as in full mode. The models are untrained, so the end id is set to one no model can produce:
every sentence is decoded for the full ``--max-length`` steps and all rows do the same work.
Each row reports the median of ``--repeats`` timed calls after one untimed call (which traces
the decoding loop). :func:`measure_greedy_decoding` is the measuring function
``benchmarks.gpu`` reuses.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from seqlab.decoding import greedy_decode  # noqa: E402
from seqlab.lessons.nb04 import build_rnn_translator  # noqa: E402
from seqlab.lessons.nb05 import TransformerTranslator  # noqa: E402
from seqlab.sizes import settings as size_settings  # noqa: E402

START_ID = 1


def synthetic_sources(count: int, length: int, vocab_size: int, seed: int = 0) -> np.ndarray:
    """``(count, length)`` int32 source ids: real tokens with a random amount of end padding."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(3, vocab_size, (count, length)).astype(np.int32)
    lengths = rng.integers(length // 2, length + 1, count)
    ids[np.arange(length)[None, :] >= lengths[:, None]] = 0
    return ids


def measure_greedy_decoding(model, source_ids, max_length: int, *, use_cache: bool = True,
                            repeats: int = 3, batch_size: int = 256) -> dict:
    """Greedy-decode ``source_ids`` with ``model`` in batches; return the speed.

    Decodes exactly ``max_length`` tokens per sentence (the end id is one the model cannot
    produce), once untimed (tracing) and then ``repeats`` timed times.

    Returns:
        ``{"sentences_per_second", "seconds", "sentences", "max_length"}`` — the median timed
        run's sentences per second and wall seconds.
    """
    never = 10**9  # no vocabulary has this id: no sentence stops early

    def decode_all():
        for first in range(0, len(source_ids), batch_size):
            greedy_decode(model, source_ids[first: first + batch_size], START_ID, never,
                          max_length, use_cache=use_cache)

    decode_all()  # the first call runs eagerly
    decode_all()  # the second traces the tf.while_loop: neither is timed
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        decode_all()
        seconds.append(time.perf_counter() - start)
    median = statistics.median(seconds)
    return {"sentences_per_second": len(source_ids) / median, "seconds": median,
            "sentences": len(source_ids), "max_length": max_length}


def build_models(vocab_size: int, quick: bool):
    keras.utils.set_random_seed(0)
    rnn = build_rnn_translator(vocab_size, vocab_size, embedding_dim=128, units=256,
                               attention="bahdanau")
    transformer = TransformerTranslator(vocab_size, vocab_size,
                                        **size_settings("05", "fast" if quick else "full").model)
    transformer.build()
    return rnn, transformer


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="128 sentences, 10 tokens, the 'tiny' Transformer (smoke run)")
    parser.add_argument("--sentences", type=int, default=None, help="default 1000 (quick: 128)")
    parser.add_argument("--max-length", type=int, default=None,
                        help="tokens decoded per sentence; default 20 (quick: 10)")
    parser.add_argument("--source-length", type=int, default=20)
    parser.add_argument("--vocab-size", type=int, default=8000)
    parser.add_argument("--repeats", type=int, default=None, help="timed runs; default 3 (quick: 1)")
    parser.add_argument("--batch-size", type=int, default=256)
    args = parser.parse_args(argv)
    sentences = args.sentences or (128 if args.quick else 1000)
    max_length = args.max_length or (10 if args.quick else 20)
    repeats = args.repeats or (1 if args.quick else 3)

    sources = synthetic_sources(sentences, args.source_length, args.vocab_size)
    rnn, transformer = build_models(args.vocab_size, args.quick)
    rows = [
        ("rnn (GRU + Bahdanau)", rnn, True),
        ("transformer (cached)", transformer, True),
        ("transformer (uncached)", transformer, False),
    ]
    gpu = tf.config.list_physical_devices("GPU")
    print(f"Greedy decoding speed — {'GPU: ' + gpu[0].name if gpu else 'CPU only'}; "
          f"{os.cpu_count()} CPU cores ({platform.processor() or platform.machine()}); "
          f"TensorFlow {tf.__version__}, Keras {keras.__version__}")
    print(f"{sentences} synthetic sources of {args.source_length} tokens, {max_length} tokens "
          f"decoded each, batch {args.batch_size}, vocabularies {args.vocab_size}, "
          f"median of {repeats}")
    print(f"{'model':26} {'sentences/s':>12} {'seconds':>9} {'vs rnn':>8}")
    baseline = None
    for name, model, use_cache in rows:
        result = measure_greedy_decoding(model, sources, max_length, use_cache=use_cache,
                                         repeats=repeats, batch_size=args.batch_size)
        speed = result["sentences_per_second"]
        baseline = baseline or speed
        print(f"{name:26} {speed:12.1f} {result['seconds']:9.2f} {speed / baseline:7.2f}x",
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
