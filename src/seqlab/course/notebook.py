"""What runs inside a notebook's kernel: the setup cell's ``RUN = setup(...)``, the Colab check."""

from __future__ import annotations

import importlib.metadata
import logging
import os
import re
import subprocess
import sys
import warnings
from dataclasses import dataclass
from typing import Any

import seqlab
from seqlab import config, sizes
from seqlab.course.tensorflow_startup import TENSORFLOW_LOG_LEVEL, hide_tensorflow_startup_lines

#: Notebooks whose models read raw text: Keras 3.10-3.15 starts ``fit`` under several replicas by
#: averaging the first batch, which fails for strings, so they train on one device.
RAW_TEXT_NOTEBOOKS = ("01", "02", "06")
MIXED_PRECISION_CHOICES = ("off", "float16", "bfloat16")
NOT_MEASURED = "not measured by this project"


def resolve_mixed_precision(requested: str | None) -> str:
    """``requested`` checked, or ``$SEQLAB_MIXED_PRECISION`` (default ``"off"``) when None.

    >>> resolve_mixed_precision("mixed_bfloat16")
    'bfloat16'
    """
    source = "mixed_precision"
    if requested is None:
        requested = os.environ.get("SEQLAB_MIXED_PRECISION", "off")
        source = "SEQLAB_MIXED_PRECISION"
    value = str(requested).strip().lower().removeprefix("mixed_")
    if value not in MIXED_PRECISION_CHOICES:
        raise ValueError(f"{source} must be one of {MIXED_PRECISION_CHOICES}; got {requested!r}.")
    return value


def choose_precision(devices: list[dict], mixed_precision: str | None = "off") -> tuple[str, str]:
    """The dtype policy asked for and why, ``(policy, reason)``; ``devices`` holds one
    ``tf.config.experimental.get_device_details`` dict per visible GPU.

    >>> choose_precision([], "off")[0], choose_precision([], "bfloat16")[0]
    ('float32', 'mixed_bfloat16')
    """
    mixed_precision = resolve_mixed_precision(mixed_precision)
    if mixed_precision == "off":
        return "float32", "off (opt-in: SEQLAB_MIXED_PRECISION=bfloat16 or float16)"
    where = (", ".join(sorted({d.get("device_name", "GPU") for d in devices})) if devices
             else "a CPU (slower there: for testing only)")
    return f"mixed_{mixed_precision}", f"requested on {where}; {NOT_MEASURED}"


def resolve_jit_compile(requested: bool | None) -> bool:
    """``requested``, or ``$SEQLAB_XLA`` (``1``/``true`` turns XLA on; default off) when None."""
    if requested is None:
        value = os.environ.get("SEQLAB_XLA", "0").strip().lower()
        if value not in ("0", "1", "true", "false", ""):
            raise ValueError(f"SEQLAB_XLA must be 1 or 0; got {value!r}.")
        return value in ("1", "true")
    if not isinstance(requested, bool):
        raise ValueError(f"jit_compile must be True, False or None; got {requested!r}.")
    return requested


@dataclass(frozen=True)
class RunSettings:
    """A run's settings, resolved once by :func:`setup` (the setup cell's ``RUN``); ``speed`` is
    the CPU's idle GFLOP/s or None, ``settings`` the notebook's numbers at this size or None."""

    fast: bool
    size: str
    replicas: int
    notebook: str | None
    colab: bool
    gpus: int
    tensorflow: str
    keras: str
    versions: dict
    dtype_policy: str
    jit_compile: bool
    reasons: dict
    fixed_shapes: bool = False
    speed: float | None = None
    settings: Any = None


def setup(*, fast: bool | None = None, size: str | None = None, notebook: str | None = None,
          seed: int = config.SEED, quiet: bool = False, mixed_precision: str | None = None,
          jit_compile: bool | None = None) -> RunSettings:
    """Resolve a run's settings once; set the seeds, plot style, dtype policy, XLA and the
    strategy of ``$SEQLAB_STRATEGY``; print the versions and each choice that changes the run.

    Args:
        fast: FAST mode; ``None`` reads ``SEQLAB_FAST``, else off.
        size: ``"fast"``, ``"class"`` or ``"full"``; ``None``: ``SEQLAB_SIZE``, else chosen.
        notebook: the notebook's number (``"04"``), for its settings and the size's one line.
        seed: the seed for Python, NumPy and the backend.
        quiet: print nothing.
        mixed_precision: ``"off"``, ``"float16"`` or ``"bfloat16"``; ``None`` reads
            ``SEQLAB_MIXED_PRECISION``, else ``"off"``.
        jit_compile: XLA for ``compile``; ``None`` reads ``SEQLAB_XLA``.

    Returns:
        The resolved :class:`RunSettings`.

    Raises:
        ValueError: for a ``fast``, ``size`` or environment variable outside its choices.
    """
    if fast not in (None, True, False):  # a parameter typed "yes" must not start a long run
        raise ValueError(f"FAST must be True, False or None ($SEQLAB_FAST, else False); got "
                         f"{fast!r}.")
    fast = config.is_fast() if fast is None else bool(fast)
    os.environ["SEQLAB_FAST"] = "1" if fast else "0"
    if size is not None or os.environ.get("SEQLAB_SIZE"):
        sizes.choose(size, fast=fast, gpu=False)  # checked before anything loads (prints nothing)
    # TensorFlow reads its log level once, when it loads: set it before the first import.
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", TENSORFLOW_LOG_LEVEL)
    with hide_tensorflow_startup_lines():
        import keras
        import tensorflow as tf

        from seqlab.distribute import choose_strategy, describe_strategy

        chosen_strategy = choose_strategy(quiet=True)   # initialises the devices
        several = chosen_strategy.num_replicas_in_sync > 1
        one_device = several and notebook in RAW_TEXT_NOTEBOOKS
        tf.distribute.experimental_set_strategy(chosen_strategy if several and not one_device
                                                else None)
        chosen_strategy = tf.distribute.get_strategy()
        gpus = tf.config.list_physical_devices("GPU")
        devices = [tf.config.experimental.get_device_details(gpu) for gpu in gpus]
        # oneDNN logs an ERROR line the first time it meets a bool tensor (every masked RNN
        # transposes one): trigger it here, where the line is held back.
        tf.transpose(tf.zeros((1, 1), tf.bool))
    if os.environ["TF_CPP_MIN_LOG_LEVEL"] != "0":
        # In a kernel TensorFlow's logger starts at INFO ("Assets written to ...").
        tf.get_logger().setLevel(logging.WARNING)
    import matplotlib
    import matplotlib.pyplot as plt

    use_xla = resolve_jit_compile(jit_compile)
    keras.utils.set_random_seed(seed)
    # Keras warns on every fit with a tf.data pipeline that `shuffle` is ignored.
    warnings.filterwarnings("ignore", message=r".*`shuffle=True` was passed.*")
    if "inline" not in matplotlib.get_backend().lower() and "ipykernel" not in sys.modules:
        matplotlib.use("Agg")
    plt.rcParams.update({"figure.figsize": (7, 4), "figure.dpi": 100, "axes.grid": True,
                         "grid.alpha": 0.3, "axes.spines.top": False, "axes.spines.right": False})
    replicas = chosen_strategy.num_replicas_in_sync
    policy, policy_reason = choose_precision(devices, mixed_precision)
    keras.config.set_dtype_policy(policy)
    xla_reason = f"requested; {NOT_MEASURED}" if use_xla else "off (opt-in: SEQLAB_XLA=1)"
    xla_off_for_replicas = use_xla and replicas > 1  # XLA's steps fail under MirroredStrategy
    if xla_off_for_replicas:
        use_xla, xla_reason = False, "off under several replicas (XLA's steps fail there)"
    versions = {"tensorflow": tf.__version__, "keras": keras.__version__}
    colab = "google.colab" in sys.modules
    if not quiet:
        print(f"seqlab {seqlab.__version__} | TensorFlow {versions['tensorflow']} | Keras "
              f"{versions['keras']} | FAST mode "
              f"{'ON (offline sample data, stand-in modules)' if fast else 'off (full data)'} | "
              f"GPUs: {len(gpus)}")
        print(describe_versions(versions))
        if not gpus:
            hint = "Runtime > Change runtime type > GPU" if colab else "a CUDA TensorFlow build"
            print(f"No GPU visible: FAST mode is fine on a CPU; for full runs use {hint}.")
        if replicas > 1:
            print(f"Strategy: {describe_strategy(chosen_strategy)}")
        if one_device:
            print(f"Strategy: one device; notebook {notebook}'s model reads raw text, which "
                  "Keras cannot split among replicas (and it is small).")
        if keras.config.dtype_policy().name != "float32":
            print(f"dtype policy {keras.config.dtype_policy().name}: {policy_reason}")
        if use_xla or xla_off_for_replicas:
            print(f"XLA (jit_compile={use_xla}): {xla_reason}")
    size = sizes.choose(size, fast=fast, notebook=None if quiet else notebook, gpu=bool(gpus))
    known = notebook in sizes.SETTINGS
    reading = sizes.probe_speed() if known and size != "fast" and not gpus else None
    speed = None if reading is None else reading.idle_gflops
    if reading is not None and not quiet:
        if not reading.reliable:
            print(f"Speed probe: another process was busy (this one had {reading.cpu_share:.0%} "
                  f"of the CPU time), so its reading, {reading.gflops:.0f} GFLOP/s, is "
                  f"unreliable; planning at {speed:.0f} GFLOP/s, this runtime's speed with the "
                  "CPUs to itself.")
        print(sizes.describe_plan(notebook, size, speed))
    return RunSettings(
        fast=fast, size=size, replicas=replicas, notebook=notebook, colab=colab, gpus=len(gpus),
        tensorflow=versions["tensorflow"], keras=versions["keras"],
        versions={name: version_status(name, version) for name, version in versions.items()},
        dtype_policy=keras.config.dtype_policy().name, jit_compile=use_xla,
        reasons={"dtype_policy": policy_reason, "jit_compile": xla_reason},
        fixed_shapes=use_xla, speed=speed,
        settings=sizes.settings(notebook, size, speed) if known else None)


BELOW_FLOOR = "below floor"
TESTED = "tested"
NEWER = "newer than tested"


class UnsupportedRuntimeError(RuntimeError):
    """The runtime's TensorFlow (or Keras, after an upgrade that needs a restart) cannot be used."""


def parse_version(version: str) -> tuple[int, int, int]:
    """``"2.19.0"`` -> ``(2, 19, 0)``; suffixes such as ``rc1``, ``.dev…`` or ``+cpu`` ignored."""
    match = re.match(r"\s*(\d+)\.(\d+)(?:\.(\d+))?", str(version))
    if not match:
        raise ValueError(f"Not a version number: {version!r} (expected e.g. '2.19.0').")
    return int(match[1]), int(match[2]), int(match[3] or 0)


def version_status(package: str, version: str) -> str:
    """``"tested"``, ``"below floor"`` or ``"newer than tested"`` for ``tensorflow`` / ``keras``
    (a patch release of :data:`seqlab.config.TESTED_NEWEST`'s minor version is tested)."""
    current = parse_version(version)
    if current < parse_version(config.TESTED_FLOOR[package]):
        return BELOW_FLOOR
    if current[:2] > parse_version(config.TESTED_NEWEST[package])[:2]:
        return NEWER
    return TESTED


def describe_versions(versions: dict) -> str:
    """One line: each package's version against the tested range."""
    parts = []
    for name, label in (("tensorflow", "TensorFlow"), ("keras", "Keras")):
        status = version_status(name, versions[name])
        tested = f"{config.TESTED_FLOOR[name]} to {config.TESTED_NEWEST[name]}.x"
        if parse_version(versions[name]) == parse_version(config.TESTED_COLAB[name]):
            tested += ", the version Colab's runtime ships"
        parts.append(f"{label} {versions[name]} is {status} ({tested})")
    line = "Versions: " + "; ".join(parts) + "."
    if any(version_status(n, versions[n]) == BELOW_FLOOR for n in ("tensorflow", "keras")):
        floor = config.TESTED_FLOOR
        line += (f" Below the floor seqlab is known to fail: install keras>={floor['keras']} and "
                 f"tensorflow>={floor['tensorflow']}.")
    return line


def installed_version(name: str) -> str | None:
    """The installed version of package ``name``, read without importing it (None if absent)."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def prepare_colab(checkout: str = "seqlab", *, commit: str | None = None,
                  versions: dict | None = None, run=subprocess.run,
                  imported: set | None = None) -> None:
    """Make a Colab runtime fit for seqlab: upgrade a Keras below the floor, install seqlab from
    ``checkout`` once, never reinstall TensorFlow.

    Args:
        checkout: the folder the setup cell fetched the repository into.
        commit: the commit the notebook was built with (its setup cell's pin).
        versions: ``{"tensorflow": ..., "keras": ...}`` (default: the installed ones).
        run: the subprocess runner (tests pass a recorder).
        imported: names of already imported modules (default: ``sys.modules``).

    Raises:
        UnsupportedRuntimeError: with the one message a student needs.
    """
    if commit is not None:
        held = checkout_commit(checkout)
        if held != commit:
            raise UnsupportedRuntimeError(
                f"This runtime's {checkout}/ folder holds {held or 'no seqlab commit'}, but this "
                f"notebook was built with seqlab's commit {commit[:12]}. Runtime > Disconnect "
                "and delete runtime, then run this notebook again: it fetches its own commit "
                "into a fresh runtime.")
    versions = versions or {name: installed_version(name) for name in ("tensorflow", "keras")}
    imported = set(sys.modules) if imported is None else imported
    floor = config.TESTED_FLOOR

    def pip_install(*requirements: str, what: str) -> None:
        command = [sys.executable, "-m", "pip", "install", "-q", *requirements]
        done = run(command, capture_output=True, text=True)
        if done.returncode:
            said = (done.stdout + done.stderr).strip()[-3000:]
            raise UnsupportedRuntimeError(
                f"pip could not install {what}; it said:\n{said}\nCheck the connection and run "
                "this cell again; if it fails again, Runtime > Disconnect and delete runtime, "
                "then run the notebook again.")

    tf_version = versions.get("tensorflow")
    if tf_version is None:
        raise UnsupportedRuntimeError(
            "This runtime has no TensorFlow. Colab's TPU runtimes no longer ship TensorFlow, and "
            "seqlab is not tested on TPUs: choose Runtime > Change runtime type > CPU or T4 GPU "
            "and run this cell again (docs/hardware.md, 'TPU').")
    if version_status("tensorflow", tf_version) == BELOW_FLOOR:
        raise UnsupportedRuntimeError(
            f"This runtime has TensorFlow {tf_version}; seqlab needs TensorFlow "
            f">= {floor['tensorflow']} (tested {floor['tensorflow']} to "
            f"{config.TESTED_NEWEST['tensorflow']}). The notebook does not reinstall TensorFlow "
            "for you: pick a newer runtime (Runtime > Change runtime type > Runtime version: "
            "Latest) and run this cell again; or, at your own risk, run "
            f"!pip install \"tensorflow>={floor['tensorflow']}\" \"keras>={floor['keras']}\", "
            "then Runtime > Restart session and run this cell again.")
    keras_version = versions.get("keras")
    if keras_version is None or version_status("keras", keras_version) == BELOW_FLOOR:
        pip_install(f"keras>={floor['keras']}", what="Keras")
        if imported & {"keras", "tensorflow"}:
            raise UnsupportedRuntimeError(
                f"Keras {keras_version} was below the tested floor {floor['keras']} and has been "
                "upgraded (TensorFlow untouched), but the old Keras is already loaded in this "
                "runtime: Runtime > Restart session, then run this cell again.")
        print(f"Keras {keras_version} was below the tested floor {floor['keras']}: upgraded Keras "
              "alone (TensorFlow untouched).")
    if installed_version("seqlab") is None:
        pip_install("-e", checkout, f"tensorflow=={tf_version}", what="seqlab's needs")


def checkout_commit(checkout: str) -> str | None:
    """The commit a checkout's detached HEAD holds (as the setup cell leaves it), else None."""
    try:
        head = open(os.path.join(checkout, ".git", "HEAD"), encoding="ascii").read().strip()
    except OSError:
        return None
    return head if re.fullmatch(r"[0-9a-f]{40}", head) else None
