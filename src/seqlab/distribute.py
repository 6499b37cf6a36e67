"""The ``tf.distribute`` strategy for the runtime, which :func:`seqlab.course.notebook.setup`
makes current for the session (``$SEQLAB_STRATEGY``, default ``"auto"``)."""

from __future__ import annotations

import os

import tensorflow as tf

STRATEGY_CHOICES = ("auto", "default", "mirrored")
#: Logical devices the CPU is split into when ``"mirrored"`` is forced without a GPU.
CPU_REPLICAS = 2

_chosen: dict[str, tf.distribute.Strategy] = {}


class StrategyError(RuntimeError):
    """The requested strategy cannot be created in this process (one message says why)."""


def strategy_name(name: str | None = None) -> str:
    """``name`` checked, or ``$SEQLAB_STRATEGY`` (default ``"auto"``) when ``name`` is None."""
    if name is None:
        name = os.environ.get("SEQLAB_STRATEGY", "").strip() or "auto"
    name = str(name).strip().lower()
    if name not in STRATEGY_CHOICES:
        raise ValueError(f"strategy must be one of {STRATEGY_CHOICES} (or None: "
                         f"$SEQLAB_STRATEGY, else 'auto'); got {name!r}")
    return name


def choose_strategy(name: str | None = None, *, quiet: bool = False) -> tf.distribute.Strategy:
    """The ``tf.distribute`` strategy for this runtime, created once per process; call it before
    any TensorFlow operation when ``"mirrored"`` may split the CPU.

    Args:
        name: ``"auto"`` (several GPUs if present, else one device), ``"default"`` (one
            device), ``"mirrored"`` (all GPUs; without a GPU, the CPU split into
            :data:`CPU_REPLICAS` logical devices); ``None`` reads ``$SEQLAB_STRATEGY``, else
            ``"auto"``.
        quiet: do not print the one-line report (strategy, replicas, devices).

    Raises:
        ValueError: for an unknown name.
        StrategyError: ``"mirrored"`` on a CPU after TensorFlow has initialised its devices.
    """
    kind = name = strategy_name(name)
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
        return f"default strategy (one device), 1 replica on {'/gpu:0' if gpus else '/cpu:0'}"
    devices = ", ".join(device.replace("/job:localhost/replica:0/task:0", "")
                        .replace("/device:", "/").lower()
                        for device in strategy.extended.worker_devices)
    plural = "s" if replicas != 1 else ""
    return f"{type(strategy).__name__}, {replicas} replica{plural} on {devices}"


def _create(kind: str) -> tf.distribute.Strategy:
    if kind == "default":
        return tf.distribute.get_strategy()
    if tf.config.list_physical_devices("GPU"):
        return tf.distribute.MirroredStrategy()  # every visible GPU
    cpu = tf.config.list_physical_devices("CPU")[0]
    if len(tf.config.get_logical_device_configuration(cpu) or []) < 2:  # not split yet
        try:
            tf.config.set_logical_device_configuration(
                cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(CPU_REPLICAS)])
        except RuntimeError as error:
            raise StrategyError(
                f"'mirrored' on a machine without a GPU splits the CPU into {CPU_REPLICAS} "
                "logical devices, which TensorFlow allows only before it initialises its "
                "devices, and something already ran a TensorFlow operation in this process. "
                "Choose the strategy first: restart the kernel (or process) and call "
                "seqlab.distribute.choose_strategy('mirrored') before loading data or building "
                "models, or set SEQLAB_STRATEGY=mirrored.") from error
    splits = len(tf.config.get_logical_device_configuration(cpu))
    return tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(splits)])
