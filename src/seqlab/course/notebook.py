"""What runs inside a notebook's kernel: one-call setup, the Colab check, the GPU choices.

In a notebook (its generated setup cell, the first code cell)::

    import seqlab.course.notebook
    seqlab.course.notebook.setup()

The notebook *files* (that setup cell, the Colab badges, ``python -m seqlab.course.notebook sync`` and
``check``) are maintained by :mod:`seqlab.course.notebook_files`.
"""

from __future__ import annotations

import importlib.metadata
import logging
import os
import re
import subprocess
import sys
import warnings

from seqlab import config
from seqlab.course.tensorflow_startup import TENSORFLOW_LOG_LEVEL, hide_tensorflow_startup_lines

MIXED_PRECISION_CHOICES = ("auto", "off", "float16", "bfloat16")
JIT_COMPILE_CHOICES = ("auto", True, False)


def setup(seed: int = config.SEED, *, quiet: bool = False, mixed_precision: str | None = None,
          jit_compile: str | bool = "auto", strategy: str | None = None) -> dict:
    """Prepare a notebook session: seeds, plot style, strategy, dtype policy, XLA, and a report.

    Sets Python, NumPy and backend seeds with ``keras.utils.set_random_seed`` so a class sees the
    same curves as the instructor, picks a readable matplotlib style, and prints the TensorFlow
    and Keras versions and whether they lie inside the range CI tests
    (:data:`seqlab.config.TESTED_FLOOR` to :data:`seqlab.config.TESTED_NEWEST`), whether FAST
    mode is on, and whether a GPU is visible (with the Colab menu path to get one when it is not).

    TensorFlow is imported here, with its start-up lines held back
    (:func:`hide_tensorflow_startup_lines`; ``TF_CPP_MIN_LOG_LEVEL`` defaults to
    :data:`TENSORFLOW_LOG_LEVEL`), so a notebook opens without red stderr boxes.

    It picks the ``tf.distribute`` strategy (:func:`seqlab.distribute.choose_strategy`: a TPU,
    several GPUs, or one device) and, in the same place, on a GPU or TPU the Keras dtype policy
    (:func:`choose_precision`: ``mixed_bfloat16`` where the hardware computes in bfloat16 —
    TPUs, GPUs of compute capability 8.0 and up; ``mixed_float16`` on older tensor-core GPUs
    such as Colab's T4) and whether models should be compiled with XLA
    (:func:`choose_jit_compile`), printing each choice and why. On a CPU nothing changes.

    Args:
        seed: the seed for Python, NumPy and the backend.
        quiet: print nothing.
        mixed_precision: ``"auto"`` (the default), ``"off"`` (float32), ``"float16"`` or
            ``"bfloat16"`` (force that mixed policy, even on a CPU). ``None`` reads the
            environment variable ``SEQLAB_MIXED_PRECISION`` and falls back to ``"auto"``.
        jit_compile: ``"auto"`` (XLA on one GPU), ``True`` or ``False``; returned for
            ``model.compile(jit_compile=...)``.
        strategy: passed to :func:`seqlab.distribute.choose_strategy` (``"auto"``,
            ``"default"``, ``"mirrored"``, ``"tpu"``; ``None`` reads ``SEQLAB_STRATEGY``, else
            ``"auto"``). It must be chosen before TensorFlow initialises its devices, which is
            why the setup cell, the first cell, chooses it.

    Returns:
        A dict with ``tensorflow``, ``keras``, ``versions`` (``"tested"``, ``"below floor"`` or
        ``"newer than tested"`` per package), ``fast``, ``gpus``, ``colab``, ``strategy``,
        ``replicas``, ``dtype_policy`` and ``jit_compile`` (the choices) and ``reasons`` (why,
        one line each), so a notebook can pass ``jit_compile=info["jit_compile"]`` to
        ``compile`` and ``strategy=info["strategy"]`` to the builders.
    """
    # TensorFlow reads its log level once, when it loads: set it before the first import.
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", TENSORFLOW_LOG_LEVEL)
    with hide_tensorflow_startup_lines():
        import keras
        import tensorflow as tf

        from seqlab.distribute import choose_strategy, describe_strategy, is_tpu_strategy

        chosen_strategy = choose_strategy(strategy, quiet=True)   # initialises the devices
        gpus = tf.config.list_physical_devices("GPU")
        devices = [tf.config.experimental.get_device_details(gpu) for gpu in gpus]
        # The first time oneDNN meets a dtype it leaves to Eigen (anything but float32, bfloat16
        # and float16), TensorFlow logs an ERROR line, once per process and even on AVX-512
        # CPUs: "oneDNN supports DT_BOOL only on platforms with AVX-512. Falling back to ...".
        # Every masked Keras RNN transposes its boolean mask, so it would turn up mid-notebook;
        # meet it here instead, where the line is held back.
        tf.transpose(tf.zeros((1, 1), tf.bool))
    if os.environ["TF_CPP_MIN_LOG_LEVEL"] != "0":
        # In an interactive kernel TensorFlow's Python logger starts at INFO (in a script it is
        # WARNING), so saving a SavedModel prints "INFO:tensorflow:Assets written to ...".
        tf.get_logger().setLevel(logging.WARNING)
    import matplotlib
    import matplotlib.pyplot as plt

    mixed_precision = _resolve_mixed_precision(mixed_precision)
    if jit_compile not in JIT_COMPILE_CHOICES:
        raise ValueError(f"jit_compile must be one of {JIT_COMPILE_CHOICES}; got {jit_compile!r}.")
    keras.utils.set_random_seed(seed)
    # Keras 3 warns on every fit with a tf.data pipeline that `shuffle` is ignored (the pipeline
    # shuffles itself); in class that line only distracts.
    warnings.filterwarnings("ignore", message=r".*`shuffle=True` was passed.*")
    if "inline" not in matplotlib.get_backend().lower() and not _in_notebook():
        matplotlib.use("Agg")
    plt.rcParams.update(
        {
            "figure.figsize": (7, 4),
            "figure.dpi": 100,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "axes.spines.top": False,
            "axes.spines.right": False,
        }
    )
    tpu = is_tpu_strategy(chosen_strategy)
    replicas = chosen_strategy.num_replicas_in_sync
    policy, policy_reason = choose_precision(devices, mixed_precision, tpu=tpu)
    if policy is not None and policy != keras.config.dtype_policy().name:
        keras.config.set_dtype_policy(policy)
    use_xla, xla_reason = choose_jit_compile(devices, jit_compile, replicas=replicas, tpu=tpu)
    versions = {"tensorflow": tf.__version__, "keras": keras.__version__}
    info = {
        **versions,
        "versions": {name: version_status(name, version) for name, version in versions.items()},
        "fast": config.is_fast(),
        "gpus": len(gpus),
        "colab": in_colab(),
        "strategy": chosen_strategy,
        "replicas": replicas,
        "dtype_policy": keras.config.dtype_policy().name,
        "jit_compile": use_xla,
        "reasons": {"dtype_policy": policy_reason, "jit_compile": xla_reason},
    }
    if not quiet:
        print(
            f"TensorFlow {info['tensorflow']} | Keras {info['keras']} | "
            f"FAST mode {'ON (offline sample data, stand-in modules)' if info['fast'] else 'off (full data)'} | "
            f"GPUs: {info['gpus']}"
        )
        print(describe_versions(versions))
        if not gpus and not tpu:
            hint = (
                "Runtime > Change runtime type > GPU"
                if info["colab"]
                else "a CUDA-enabled TensorFlow build"
            )
            print(f"No GPU visible: FAST mode is fine on a CPU; for full runs use {hint}.")
        print(f"Strategy: {describe_strategy(chosen_strategy)}")
        print(f"dtype policy {info['dtype_policy']}: {policy_reason}")
        print(f"XLA (jit_compile={use_xla}): {xla_reason}")
    return info


# --------------------------------------------------------------------------------------------
# Versions: where the running TensorFlow/Keras fall against the range CI tests, and the Colab
# check that runs before anything is installed.
# --------------------------------------------------------------------------------------------

BELOW_FLOOR = "below floor"
TESTED = "tested"
NEWER = "newer than tested"


class UnsupportedRuntimeError(RuntimeError):
    """The runtime's TensorFlow (or Keras, after an upgrade that needs a restart) cannot be used."""


def parse_version(version: str) -> tuple[int, int, int]:
    """``"2.19.0"`` -> ``(2, 19, 0)``; suffixes such as ``rc1``, ``.dev…`` or ``+cpu`` are ignored."""
    match = re.match(r"\s*(\d+)\.(\d+)(?:\.(\d+))?", str(version))
    if not match:
        raise ValueError(f"Not a version number: {version!r} (expected e.g. '2.19.0').")
    return int(match[1]), int(match[2]), int(match[3] or 0)


def version_status(package: str, version: str) -> str:
    """``"tested"``, ``"below floor"`` or ``"newer than tested"`` for ``tensorflow`` / ``keras``.

    "newer than tested" compares major.minor with :data:`seqlab.config.TESTED_NEWEST`, so a
    patch release of the newest tested minor version still counts as tested.
    """
    current = parse_version(version)
    if current < parse_version(config.TESTED_FLOOR[package]):
        return BELOW_FLOOR
    if current[:2] > parse_version(config.TESTED_NEWEST[package])[:2]:
        return NEWER
    return TESTED


def describe_versions(versions: dict) -> str:
    """One line: each package's version against the tested range."""
    parts = []
    for name in ("tensorflow", "keras"):
        status = version_status(name, versions[name])
        label = {"tensorflow": "TensorFlow", "keras": "Keras"}[name]
        tested = f"{config.TESTED_FLOOR[name]} to {config.TESTED_NEWEST[name]}.x"
        if parse_version(versions[name]) == parse_version(config.TESTED_COLAB[name]):
            tested += ", the version Colab's runtime ships"
        parts.append(f"{label} {versions[name]} is {status} ({tested})")
    line = "Versions: " + "; ".join(parts) + "."
    if any(version_status(n, versions[n]) == BELOW_FLOOR for n in ("tensorflow", "keras")):
        line += (f" Below the floor seqlab is known to fail: install keras>={config.TESTED_FLOOR['keras']}"
                 f" and tensorflow>={config.TESTED_FLOOR['tensorflow']}.")
    return line


def installed_versions() -> dict:
    """Installed TensorFlow and Keras versions, read without importing them (None if absent)."""
    versions = {}
    for name in ("tensorflow", "keras"):
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def prepare_colab(checkout: str = "seqlab", *, versions: dict | None = None,
                  run=subprocess.run, imported: set | None = None) -> list[str]:
    """Make a Colab runtime fit for seqlab, never reinstalling TensorFlow. Called by the setup cell.

    1. TensorFlow missing or below :data:`seqlab.config.TESTED_FLOOR`: stop with one message
       saying what to do (TensorFlow belongs to the runtime; reinstalling it silently can break
       the GPU build).
    2. Keras below the floor: upgrade Keras alone (``pip install "keras>=3.10"``: pure Python,
       a few MB). If Keras (or TensorFlow, which imports it) was already imported, the old one
       stays loaded until the runtime restarts, so stop and say so.
    3. Install seqlab from ``checkout`` (once), with the running TensorFlow pinned so pip can
       never replace it.

    Args:
        checkout: the folder the setup cell cloned the repository into.
        versions: ``{"tensorflow": ..., "keras": ...}`` (default: :func:`installed_versions`).
        run: the subprocess runner (tests pass a recorder).
        imported: names of already imported modules (default: ``sys.modules``).

    Returns:
        The pip commands it ran.

    Raises:
        UnsupportedRuntimeError: with the one message a student needs.
    """
    versions = dict(versions or installed_versions())
    imported = set(sys.modules) if imported is None else imported
    floor = config.TESTED_FLOOR
    commands: list[list[str]] = []
    tf_version = versions.get("tensorflow")
    if tf_version is None:
        raise UnsupportedRuntimeError(
            "This runtime has no TensorFlow. Colab's TPU runtimes no longer ship TensorFlow, and "
            "seqlab is not tested on TPUs: choose Runtime > Change runtime type > CPU or T4 GPU "
            "and run this cell again (docs/hardware.md, 'TPU')."
        )
    if version_status("tensorflow", tf_version) == BELOW_FLOOR:
        raise UnsupportedRuntimeError(
            f"This runtime has TensorFlow {tf_version}; seqlab needs TensorFlow "
            f">= {floor['tensorflow']} (tested {floor['tensorflow']} to "
            f"{config.TESTED_NEWEST['tensorflow']}). The notebook does not reinstall TensorFlow "
            "for you: pick a newer runtime (Runtime > Change runtime type > Runtime version: "
            "Latest) and run this cell again; or, at your own risk, run "
            f"!pip install \"tensorflow>={floor['tensorflow']}\" \"keras>={floor['keras']}\", "
            "then Runtime > Restart session and run this cell again."
        )
    keras_version = versions.get("keras")
    if keras_version is None or version_status("keras", keras_version) == BELOW_FLOOR:
        command = [sys.executable, "-m", "pip", "install", "-q", f"keras>={floor['keras']}"]
        run(command, check=True)
        commands.append(command)
        if imported & {"keras", "tensorflow"}:
            raise UnsupportedRuntimeError(
                f"Keras {keras_version} was below the tested floor {floor['keras']} and has been "
                "upgraded (TensorFlow untouched), but the old Keras is already loaded in this "
                "runtime: Runtime > Restart session, then run this cell again."
            )
        print(f"Keras {keras_version} was below the tested floor {floor['keras']}: upgraded Keras "
              "alone (TensorFlow untouched).")
    try:
        importlib.metadata.version("seqlab")
    except importlib.metadata.PackageNotFoundError:
        command = [sys.executable, "-m", "pip", "install", "-q", "-e", checkout,
                   f"tensorflow=={tf_version}"]
        run(command, check=True)
        commands.append(command)
    return [" ".join(c) for c in commands]


# --------------------------------------------------------------------------------------------
# GPU choices: dtype policy and XLA. Pure functions of the device details, so they are tested
# with fake devices on a CPU.
# --------------------------------------------------------------------------------------------


def _resolve_mixed_precision(requested: str | None) -> str:
    source = "mixed_precision"
    if requested is None:
        requested = os.environ.get("SEQLAB_MIXED_PRECISION", "auto")
        source = "SEQLAB_MIXED_PRECISION"
    value = str(requested).strip().lower().removeprefix("mixed_")
    if value not in MIXED_PRECISION_CHOICES:
        raise ValueError(f"{source} must be one of {MIXED_PRECISION_CHOICES}; got {requested!r}.")
    return value


def _describe_gpus(devices: list[dict]) -> str:
    names = sorted({d.get("device_name", "GPU") for d in devices})
    return ", ".join(names)


def _compute_capability(devices: list[dict]):
    capabilities = [tuple(d["compute_capability"]) for d in devices if d.get("compute_capability")]
    return min(capabilities) if capabilities else None


def choose_precision(devices: list[dict], mixed_precision: str = "auto", *,
                     tpu: bool = False) -> tuple[str | None, str]:
    """The dtype policy for these GPUs (or a TPU), and why.

    Args:
        devices: one dict per visible GPU, as ``tf.config.experimental.get_device_details``
            returns (``device_name``, ``compute_capability``); empty on a CPU.
        mixed_precision: ``"auto"``, ``"off"``, ``"float16"`` or ``"bfloat16"``.
        tpu: the strategy runs on a TPU (its matrix units compute in bfloat16).

    Returns:
        ``(policy, reason)``: ``policy`` is the name to pass to ``keras.config.set_dtype_policy``,
        or ``None`` to leave the current policy alone (auto on a CPU).

    ``auto`` picks ``mixed_bfloat16`` on compute capability 8.0 and up (A100, L4, H100: bfloat16
    tensor cores, float32's range, no loss scaling), ``mixed_float16`` on 7.x (V100, T4: float16
    tensor cores only; Keras adds loss scaling on ``compile``), and float32 below 7.0 (no tensor
    cores, so half precision saves memory but little time) and on a CPU; ``mixed_bfloat16``
    on a TPU.
    """
    mixed_precision = _resolve_mixed_precision(mixed_precision)
    if mixed_precision == "off":
        return "float32", "mixed precision turned off (mixed_precision='off')"
    if mixed_precision in ("float16", "bfloat16"):
        where = ("a TPU" if tpu else _describe_gpus(devices) if devices
                 else "a CPU (slower there: for testing only)")
        return f"mixed_{mixed_precision}", f"requested (mixed_precision={mixed_precision!r}) on {where}"
    if tpu:
        return "mixed_bfloat16", "a TPU's matrix units compute in bfloat16"
    if not devices:
        return None, "no GPU, so nothing changes (mixed precision pays off only on a GPU)"
    capability = _compute_capability(devices)
    name = _describe_gpus(devices)
    if capability is None:
        return None, f"{name}: compute capability unknown, so float32 (set mixed_precision to choose)"
    cc = f"{capability[0]}.{capability[1]}"
    if capability >= (8, 0):
        return "mixed_bfloat16", (f"{name} (compute capability {cc}) computes in bfloat16 "
                                  "(same range as float32, no loss scaling needed)")
    if capability >= (7, 0):
        return "mixed_float16", (f"{name} (compute capability {cc}) has float16 tensor cores but "
                                 "no bfloat16; Keras scales the loss on compile")
    return None, (f"{name} (compute capability {cc}) has no tensor cores: float32 "
                  "(mixed precision would save memory, not time)")


def choose_jit_compile(devices: list[dict], jit_compile: str | bool = "auto", *,
                       replicas: int = 1, tpu: bool = False) -> tuple[bool, str]:
    """Whether to compile models with XLA (``model.compile(jit_compile=...)``), and why.

    ``auto`` is True on one GPU (XLA fuses the many small element-wise ops of attention and
    layer norm into few kernels), False under a strategy with several replicas (Keras's own
    ``"auto"`` turns XLA off under ``tf.distribute``; a TPU compiles with XLA anyway) and False
    on a CPU (compiling costs more time than a FAST run gains). Layers that XLA cannot compile
    (``HubTextEmbedding``'s string ops) make Keras fall back to ``jit_compile=False`` for that
    model, with a warning.
    """
    if jit_compile not in JIT_COMPILE_CHOICES:
        raise ValueError(f"jit_compile must be one of {JIT_COMPILE_CHOICES}; got {jit_compile!r}.")
    if jit_compile is True or jit_compile is False:
        return jit_compile, f"requested (jit_compile={jit_compile})"
    if tpu:
        return False, "a TPU compiles every step with XLA already; nothing to add"
    if replicas > 1:
        return False, f"{replicas} replicas: Keras does not XLA-compile under tf.distribute"
    if devices:
        return True, f"on {_describe_gpus(devices)} XLA fuses small ops into fewer GPU kernels"
    return False, "on a CPU, XLA's compile time costs more than it saves in short runs"


def in_colab() -> bool:
    """True inside Google Colab."""
    return "google.colab" in sys.modules


def _in_notebook() -> bool:
    return "ipykernel" in sys.modules


if __name__ == "__main__":  # pragma: no cover
    # `python -m seqlab.course.notebook sync|check`, the command the setup cell's first line names.
    from seqlab.course.notebook_files import main

    raise SystemExit(main())
