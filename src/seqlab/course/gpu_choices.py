"""GPU choices of :func:`seqlab.course.notebook.setup`: the dtype policy and XLA, and why."""

from __future__ import annotations

import os

MIXED_PRECISION_CHOICES = ("auto", "off", "float16", "bfloat16")
JIT_COMPILE_CHOICES = ("auto", True, False)


def resolve_mixed_precision(requested: str | None) -> str:
    """``requested`` checked, or ``$SEQLAB_MIXED_PRECISION`` (default ``"auto"``) when None."""
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


def choose_precision(devices: list[dict], mixed_precision: str = "auto") -> tuple[str | None, str]:
    """The dtype policy for these GPUs, and why.

    ``auto`` picks ``mixed_bfloat16`` on compute capability 8.0 and up, ``mixed_float16`` on 7.x
    (float16 tensor cores only), and float32 below 7.0 and on a CPU.

    Args:
        devices: one dict per visible GPU, as ``tf.config.experimental.get_device_details``
            returns (``device_name``, ``compute_capability``); empty on a CPU.
        mixed_precision: ``"auto"``, ``"off"``, ``"float16"`` or ``"bfloat16"``.

    Returns:
        ``(policy, reason)``: ``policy`` is the name to pass to ``keras.config.set_dtype_policy``,
        or ``None`` to leave the current policy alone (auto on a CPU).
    """
    mixed_precision = resolve_mixed_precision(mixed_precision)
    if mixed_precision == "off":
        return "float32", "mixed precision turned off (mixed_precision='off')"
    if mixed_precision in ("float16", "bfloat16"):
        where = (_describe_gpus(devices) if devices
                 else "a CPU (slower there: for testing only)")
        return f"mixed_{mixed_precision}", f"requested (mixed_precision={mixed_precision!r}) on {where}"
    if not devices:
        return None, "no GPU, so nothing changes (mixed precision pays off only on a GPU)"
    capabilities = [tuple(d["compute_capability"]) for d in devices if d.get("compute_capability")]
    capability = min(capabilities) if capabilities else None
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
                       replicas: int = 1) -> tuple[bool, str]:
    """Whether to compile models with XLA (``model.compile(jit_compile=...)``), and why.

    ``auto`` is True on one GPU only: False under several replicas (Keras does not XLA-compile
    under ``tf.distribute``) and on a CPU.
    """
    if jit_compile not in JIT_COMPILE_CHOICES:
        raise ValueError(f"jit_compile must be one of {JIT_COMPILE_CHOICES}; got {jit_compile!r}.")
    if jit_compile is True or jit_compile is False:
        return jit_compile, f"requested (jit_compile={jit_compile})"
    if replicas > 1:
        return False, f"{replicas} replicas: Keras does not XLA-compile under tf.distribute"
    if devices:
        return True, f"on {_describe_gpus(devices)} XLA fuses small ops into fewer GPU kernels"
    return False, "on a CPU, XLA's compile time costs more than it saves in short runs"
