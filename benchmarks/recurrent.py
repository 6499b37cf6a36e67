"""Throughput of Keras's fused recurrent layers against ``RNN(seqlab cell)``, same shapes.

    python -m benchmarks.recurrent                       # batch 64, 100 steps, 32 -> 64 units
    python -m benchmarks.recurrent --batch 32 --steps 200 --repeats 20

For each cell kind the two layers get the same weights (copied with
``seqlab.layers.copy_keras_cell_weights``, and checked to give the same outputs first), then
each is timed in the same process on the same batch: a training step (forward, backward,
Adam update, ``train_on_batch``) and a forward pass (``predict_on_batch``), after one warm-up
call that traces the graph. The two layers take turns over a few rounds and the best round
counts, so a machine busy with something else disturbs the ratio less. The table gives examples per second and their ratio, fused ÷
ours (above 1: ours is that many times slower). Our cells do one small matrix product per gate and symbol, the fused layers one per
weight matrix (and cuDNN on a GPU for ``LSTM`` and ``GRU(reset_after=True)``); ours are for
teaching, the notebooks train with the fused layers.

The GRU row compares with ``keras.layers.GRU(reset_after=False)``, the variant that computes
the slides' eq. (10); it cannot use cuDNN, so on a GPU the default ``reset_after=True`` GRU is
timed too, as a reference for what a real model would run.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402

from seqlab.layers import GRUCell, LSTMCell, SimpleRNNCell, copy_keras_cell_weights  # noqa: E402

KINDS = {
    "SimpleRNN": (keras.layers.SimpleRNN, SimpleRNNCell, {}),
    "LSTM": (keras.layers.LSTM, LSTMCell, {}),
    "GRU": (keras.layers.GRU, GRUCell, {"reset_after": False}),
}


def _model(recurrent_layer, steps: int, features: int) -> keras.Model:
    model = keras.Sequential([keras.Input((steps, features)), recurrent_layer,
                              keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse", jit_compile=False)
    return model


def _examples_per_second(run, batch: int, repeats: int) -> float:
    start = time.perf_counter()
    for _ in range(repeats):
        run()  # returns NumPy, so each call has finished when it returns
    return batch * repeats / (time.perf_counter() - start)


def measure(models: list[keras.Model], x, y, repeats: int, rounds: int) -> list[list[float]]:
    """[training examples/s, inference examples/s] of each model, best of ``rounds``.

    The models take turns within each round, so a busy machine slows them alike; the best
    round is the one least disturbed.
    """
    passes = [lambda m: m.train_on_batch(x, y), lambda m: m.predict_on_batch(x)]
    for model in models:  # warm-up: trace every function once
        for run in passes:
            run(model)
    best = [[0.0, 0.0] for _ in models]
    for _ in range(rounds):
        for rates, model in zip(best, models, strict=True):
            for index, run in enumerate(passes):
                rate = _examples_per_second(lambda m=model, r=run: r(m), len(x), repeats)
                rates[index] = max(rates[index], rate)
    return best


def device_description() -> str:
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    if gpus:
        details = tf.config.experimental.get_device_details(gpus[0])
        return f"GPU: {details.get('device_name', gpus[0].name)}"
    return (f"CPU: {platform.processor() or platform.machine()}, {os.cpu_count()} cores "
            f"visible, TensorFlow intra-op threads "
            f"{tf.config.threading.get_intra_op_parallelism_threads() or 'default'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.recurrent", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--features", type=int, default=32)
    parser.add_argument("--units", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--kinds", nargs="+", default=list(KINDS), choices=list(KINDS))
    args = parser.parse_args(argv)

    load = os.getloadavg()[0]  # other work on the machine skews every number below
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(args.batch, args.steps, args.features)).astype("float32")
    y = rng.normal(size=(args.batch, 1)).astype("float32")
    device = device_description()
    gpu = device.startswith("GPU")

    rows = []
    for kind in args.kinds:
        keras_class, our_class, keras_kwargs = KINDS[kind]
        theirs = _model(keras_class(args.units, **keras_kwargs), args.steps, args.features)
        ours = _model(keras.layers.RNN(our_class(args.units)), args.steps, args.features)
        copy_keras_cell_weights(theirs.layers[0], ours.layers[0])
        ours.layers[1].set_weights(theirs.layers[1].get_weights())
        difference = float(np.max(np.abs(theirs.predict_on_batch(x) - ours.predict_on_batch(x))))
        if difference > 1e-4:
            raise RuntimeError(f"{kind}: the two layers disagree by {difference:g}")
        label = f"{kind}" + ("(reset_after=False)" if kind == "GRU" else "")
        keras_rates, our_rates = measure([theirs, ours], x, y, args.repeats, args.rounds)
        rows.append((label, keras_rates, our_rates, difference))
        if kind == "GRU" and gpu:
            cudnn = _model(keras.layers.GRU(args.units), args.steps, args.features)
            rows.append(("GRU(reset_after=True)",
                         measure([cudnn], x, y, args.repeats, args.rounds)[0], None, None))

    print(f"Recurrent layer throughput, examples/second (higher is faster); device: {device}")
    print(f"shapes: batch {args.batch}, {args.steps} steps, {args.features} features -> "
          f"{args.units} units; best of {args.rounds} rounds of {args.repeats} batches, the "
          f"two layers taking turns, after one warm-up; Keras {keras.__version__}, backend "
          f"{keras.backend.backend()}, 1-minute load average at the "
          f"start {load:.1f}\n")
    print("ratio = fused ÷ ours: above 1, RNN(seqlab cell) is that many times slower; "
          "max |diff| = largest output difference with the same weights\n")
    header = (f"{'layer':<24} {'pass':<9} {'keras fused':>12} {'RNN(seqlab)':>12} "
              f"{'ratio':>12} {'max |diff|':>11}")
    print(header)
    print("-" * len(header))
    for label, keras_rates, our_rates, difference in rows:
        for index, name in enumerate(("train", "inference")):
            ours_text = f"{our_rates[index]:12.0f}" if our_rates else f"{'-':>12}"
            ratio = f"{keras_rates[index] / our_rates[index]:11.2f}x" if our_rates else f"{'-':>12}"
            diff = f"{difference:11.1e}" if difference is not None else f"{'-':>11}"
            print(f"{label:<24} {name:<9} {keras_rates[index]:12.0f} {ours_text} {ratio} {diff}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
