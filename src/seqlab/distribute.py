"""Training past one device: the ``tf.distribute`` strategy for the runtime, and the batch-size
and learning-rate rules that go with it.

A notebook's ``BATCH_SIZE`` is the batch of one replica; the global batch is ``BATCH_SIZE ×
replicas``. Adam's rate follows the global batch by the square-root rule (Malladi et al., 2022,
"On the SDEs and Scaling Rules for Adaptive Gradient Algorithms"; Krizhevsky, 2014): the linear
rule of Goyal et al. (2017) is derived for SGD and makes notebook 04's RNN diverge at 8
replicas. The Transformer's warm-up is counted in examples, not steps.
"""

from __future__ import annotations

import math
import os

import tensorflow as tf

STRATEGY_CHOICES = ("auto", "default", "mirrored")
ENVIRONMENT_VARIABLE = "SEQLAB_STRATEGY"
#: Logical devices the CPU is split into when ``"mirrored"`` is forced without a GPU.
CPU_REPLICAS = 2

_chosen: dict[str, tf.distribute.Strategy] = {}


class StrategyError(RuntimeError):
    """The requested strategy cannot be created in this process (one message says why)."""


def strategy_name(name: str | None = None) -> str:
    """``name`` checked, or ``$SEQLAB_STRATEGY`` (default ``"auto"``) when ``name`` is None."""
    if name is None:
        name = os.environ.get(ENVIRONMENT_VARIABLE, "").strip() or "auto"
    name = str(name).strip().lower()
    if name not in STRATEGY_CHOICES:
        raise ValueError(f"strategy must be one of {STRATEGY_CHOICES} (or None: "
                         f"${ENVIRONMENT_VARIABLE}, else 'auto'); got {name!r}")
    return name


def choose_strategy(name: str | None = None, *, quiet: bool = False) -> tf.distribute.Strategy:
    """The ``tf.distribute`` strategy for this runtime, created once per process.

    Call it before anything runs a TensorFlow operation when ``"mirrored"`` may split the CPU
    (logical devices are fixed when TensorFlow initialises them).

    Args:
        name: ``"auto"`` (several GPUs if present, else one device), ``"default"`` (one
            device), ``"mirrored"`` (all GPUs; without a GPU, the CPU split into
            :data:`CPU_REPLICAS` logical devices); ``None`` reads
            ``$SEQLAB_STRATEGY``, else ``"auto"``.
        quiet: do not print the one-line report (strategy, replicas, devices).

    Returns:
        The strategy; asking again for the same one returns the same object.

    Raises:
        ValueError: for an unknown name.
        StrategyError: ``"mirrored"`` on a CPU after TensorFlow has initialised its devices.
    """
    name = strategy_name(name)
    kind = name
    if name == "auto":
        kind = "mirrored" if len(tf.config.list_physical_devices("GPU")) > 1 else "default"
    if kind not in _chosen:
        _chosen[kind] = _create(kind)
    strategy = _chosen[kind]
    if not quiet:
        print(f"Strategy: {describe_strategy(strategy)}"
              + (f" (asked for {name!r})" if name != kind else ""))
    return strategy


def describe_strategy(strategy: tf.distribute.Strategy) -> str:
    """``"MirroredStrategy, 2 replicas on /cpu:0, /cpu:1"`` and the like."""
    replicas = strategy.num_replicas_in_sync
    if strategy is tf.distribute.get_strategy() and not tf.distribute.has_strategy():
        gpus = tf.config.list_physical_devices("GPU")
        return (f"default strategy (one device), 1 replica on "
                f"{'/gpu:0' if gpus else '/cpu:0'}")
    devices = ", ".join(_short(d) for d in strategy.extended.worker_devices)
    return f"{type(strategy).__name__}, {replicas} replica{'s' if replicas != 1 else ''} on {devices}"


def global_batch_size(per_replica_batch_size: int, strategy: tf.distribute.Strategy | None = None) -> int:
    """``per_replica_batch_size × replicas``: the batch size ``tf.data`` must produce."""
    if int(per_replica_batch_size) < 1:
        raise ValueError(f"per_replica_batch_size must be a positive integer; got {per_replica_batch_size}")
    replicas = (strategy or tf.distribute.get_strategy()).num_replicas_in_sync
    return int(per_replica_batch_size) * replicas


def scale_learning_rate(learning_rate: float, global_batch_size: int, tuned_batch_size: int) -> float:
    """Adam's learning rate for a global batch other than the one it was tuned for.

    ``learning_rate × sqrt(global_batch_size / tuned_batch_size)``: the square-root rule (see
    the module docstring).
    """
    _check_batch_sizes(global_batch_size, tuned_batch_size)
    return float(learning_rate) * math.sqrt(global_batch_size / tuned_batch_size)


def batch_and_rate(per_replica_batch_size: int | None, learning_rate: float, tuned_batch_size: int,
                   strategy: tf.distribute.Strategy | None = None) -> tuple[int, float]:
    """The global batch and Adam's rate for it: a notebook's batch setting under ``strategy``.

    Args:
        per_replica_batch_size: the batch per replica; None: ``tuned_batch_size``.
        learning_rate: the rate tuned for a global batch of ``tuned_batch_size``.
        tuned_batch_size: that batch.
        strategy: None: the current strategy.

    Returns:
        ``(global batch, rate)``: :func:`global_batch_size` and :func:`scale_learning_rate`.

    Example:
        >>> batch_and_rate(None, 2e-3, 128)
        (128, 0.002)
    """
    batch = global_batch_size(per_replica_batch_size or tuned_batch_size, strategy)
    return batch, scale_learning_rate(learning_rate, batch, tuned_batch_size)


def scale_warmup_steps(warmup_steps: int, global_batch_size: int, tuned_batch_size: int) -> int:
    """Warm-up over the same number of examples: ``warmup_steps × tuned / global`` (at least 1)."""
    _check_batch_sizes(global_batch_size, tuned_batch_size)
    return max(1, round(int(warmup_steps) * tuned_batch_size / global_batch_size))


def text_as_codepoints(data):
    """Batches of raw text as 0-padded ``int32`` Unicode code points, for several replicas.

    Keras 3.10-3.15 starts ``fit``/``evaluate``/``predict`` under several replicas by averaging
    the first distributed batch, which fails for strings; a classifier built under such a
    strategy reads code points (:class:`seqlab.layers.text.TextFromCodepoints` first).

    ``data``: a batched ``tf.data.Dataset`` of ``reviews`` or ``(reviews, labels[, weights])``,
    ``reviews`` a ``(batch,)`` string tensor, or such a tensor or list of strings itself. Each
    batch becomes ``(batch, longest review in characters)``; invalid UTF-8 becomes U+FFFD.
    """
    def encode(texts):
        texts = tf.convert_to_tensor(texts)
        if texts.dtype != tf.string or texts.shape.rank != 1:
            raise ValueError("text_as_codepoints expects batches of strings of shape (batch,) "
                             f"(a batched dataset of reviews); got {texts.dtype.name} of shape "
                             f"{texts.shape}. Batch the dataset first.")
        codes = tf.strings.unicode_decode(texts, "UTF-8", errors="replace")
        return codes.to_tensor()                         # (batch, characters), 0-padded

    if not isinstance(data, tf.data.Dataset):
        return encode(data)
    spec = data.element_spec
    if isinstance(spec, tuple):
        return data.map(lambda x, *rest: (encode(x), *rest), num_parallel_calls=tf.data.AUTOTUNE)
    return data.map(encode, num_parallel_calls=tf.data.AUTOTUNE)


def _check_batch_sizes(*sizes) -> None:
    if any(int(size) < 1 for size in sizes):
        raise ValueError(f"batch sizes must be positive integers; got {sizes}")


def _short(device: str) -> str:
    return device.replace("/job:localhost/replica:0/task:0", "").replace("/device:", "/").lower()


def _create(kind: str) -> tf.distribute.Strategy:
    if kind == "default":
        return tf.distribute.get_strategy()
    if tf.config.list_physical_devices("GPU"):
        return tf.distribute.MirroredStrategy()  # every visible GPU
    return tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(_split_cpu())])


def _split_cpu() -> int:
    """Split the CPU into :data:`CPU_REPLICAS` logical devices (or keep an earlier split)."""
    cpu = tf.config.list_physical_devices("CPU")[0]
    existing = tf.config.get_logical_device_configuration(cpu) or []
    if len(existing) >= 2:
        return len(existing)
    try:
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(CPU_REPLICAS)])
    except RuntimeError as error:
        raise StrategyError(
            f"'mirrored' on a machine without a GPU splits the CPU into {CPU_REPLICAS} logical "
            "devices, which TensorFlow allows only before it initialises its devices, and "
            "something already ran a TensorFlow operation in this process. Choose the strategy "
            "first: restart the kernel (or process) and call "
            "seqlab.distribute.choose_strategy('mirrored') before loading data or building "
            f"models, or set {ENVIRONMENT_VARIABLE}=mirrored.") from error
    return CPU_REPLICAS
