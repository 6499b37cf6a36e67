"""How long notebook 08's full mode needs: fine-tuning a ``bert_tiny_en_uncased``-shaped classifier.

    python -m benchmarks.bert            # full-mode sizes: sequence 256, batch 32, 20 timed steps
    python -m benchmarks.bert --quick    # sequence 64, 3 timed steps (a smoke run)

Full mode downloads the preset from Kaggle, which this project's machines cannot reach. The time
a step takes depends on the architecture, not on the weights, so this builds the same
architecture from random weights: ``keras_hub.models.BertBackbone`` with the preset's published
sizes (checked against the parameter count keras-hub lists for the preset) under notebook 08's
own head (``seqlab.lessons.nb08.assemble_classifier``), compiled as notebook 08 compiles the
pretrained network (the learning rate does not change a step's time). It times training steps on random token ids of the notebook's full-mode sequence
length and batch, then prints seconds per step and what that makes for notebook 08's full
fine-tuning (IMDB's 25,000 training reviews split 70/30 as in notebook 01: 17,500 reviews per
epoch and 7,500 for validation, ``FINE_TUNE_EPOCHS`` = 2) and for one pass over the 25,000 test
reviews. The preset's
masked-LM fill-ins are not timed (a few sentences).
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402

from seqlab.data import import_keras_hub  # noqa: E402

#: ``bert_tiny_en_uncased`` as keras-hub publishes it (its parameter count is checked below).
BERT_TINY = {"vocabulary_size": 30522, "num_layers": 2, "num_heads": 2, "hidden_dim": 128,
             "intermediate_dim": 512, "max_sequence_length": 512}
TRAIN_REVIEWS = 17_500   # 70 % of IMDB's 25,000 training reviews (notebook 01's split)
VALID_REVIEWS = 7_500    # the other 30 %: one validation pass per epoch
TEST_REVIEWS = 25_000
EPOCHS = 2               # notebook 08's FINE_TUNE_EPOCHS in full mode


def build_classifier(keras_hub):
    from seqlab.lessons import nb08  # imports keras-hub: after import_keras_hub's clear message

    backbone = keras_hub.models.BertBackbone(**BERT_TINY)
    published = keras_hub.models.BertBackbone.presets["bert_tiny_en_uncased"]["metadata"]["params"]
    if backbone.count_params() != published:
        raise SystemExit(f"the stand-in architecture has {backbone.count_params():,} parameters, "
                         f"the preset {published:,}: BERT_TINY no longer matches it")
    classifier = nb08.assemble_classifier(backbone)   # notebook 08's head on [CLS]
    classifier.compile(optimizer=keras.optimizers.Adam(5e-5),
                       loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                       metrics=["accuracy"])
    return classifier, published


def time_steps(classifier, sequence_length: int, batch_size: int, steps: int) -> tuple[float, float]:
    """Median seconds of one training step and of one prediction batch (after a warm-up)."""
    rng = np.random.default_rng(0)
    inputs = {"token_ids": rng.integers(1000, 30000, (batch_size, sequence_length)).astype("int32"),
              "segment_ids": np.zeros((batch_size, sequence_length), "int32"),
              "padding_mask": np.ones((batch_size, sequence_length), "bool")}
    labels = rng.integers(0, 2, (batch_size,))
    classifier.train_on_batch(inputs, labels)     # traces the step
    train = []
    for _ in range(steps):
        start = time.perf_counter()
        classifier.train_on_batch(inputs, labels)
        train.append(time.perf_counter() - start)
    classifier.predict_on_batch(inputs)
    predict = []
    for _ in range(max(3, steps // 4)):
        start = time.perf_counter()
        classifier.predict_on_batch(inputs)
        predict.append(time.perf_counter() - start)
    return statistics.median(train), statistics.median(predict)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="sequence 64, 3 timed steps")
    parser.add_argument("--sequence-length", type=int, default=None,
                        help="tokens per review (notebook 08's full mode: 256)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--steps", type=int, default=None, help="timed training steps")
    args = parser.parse_args(argv)
    sequence_length = args.sequence_length or (64 if args.quick else 256)
    steps = args.steps or (3 if args.quick else 20)
    keras_hub = import_keras_hub()
    keras.utils.set_random_seed(0)
    classifier, parameters = build_classifier(keras_hub)
    step, batch = time_steps(classifier, sequence_length, args.batch_size, steps)
    steps_per_epoch = math.ceil(TRAIN_REVIEWS / args.batch_size)
    test_batches = math.ceil(TEST_REVIEWS / args.batch_size)
    valid_batches = math.ceil(VALID_REVIEWS / args.batch_size)
    print(f"device: CPU ({platform.machine()}, {os.cpu_count()} cores); keras-hub "
          f"{keras_hub.__version__}, Keras {keras.__version__}; bert_tiny_en_uncased's architecture "
          f"({parameters:,} parameters) from random weights; sequence {sequence_length}, batch "
          f"{args.batch_size}; median of {steps} steps after one")
    print()
    print(f"{'what':<44}{'seconds':>10}")
    print(f"{'one training step':<44}{step:>10.3f}")
    print(f"{'one prediction batch':<44}{batch:>10.3f}")
    print(f"{f'one epoch ({steps_per_epoch} steps, 17,500 reviews)':<44}{step * steps_per_epoch:>10.0f}")
    print(f"{'validation pass (7,500 reviews)':<44}{batch * valid_batches:>10.0f}")
    print(f"{f'full fine-tuning ({EPOCHS} epochs)':<44}{EPOCHS * step * steps_per_epoch:>10.0f}")
    print(f"{'testing (25,000 reviews)':<44}{batch * test_batches:>10.0f}")
    total = EPOCHS * (step * steps_per_epoch + batch * valid_batches) + batch * test_batches
    print(f"\nnotebook 08 full mode, fine-tuning with validation, then testing: about "
          f"{total / 60:.0f} min on this CPU (the downloads and tokenizing not included)")


if __name__ == "__main__":
    main()
