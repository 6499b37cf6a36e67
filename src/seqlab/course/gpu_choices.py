"""Mixed precision and XLA for :func:`seqlab.course.notebook.setup`: both off unless asked for
(``SEQLAB_MIXED_PRECISION``, ``SEQLAB_XLA`` or ``setup``'s arguments), never measured here."""

from __future__ import annotations

import os

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
    """The dtype policy asked for, and why.

    Args:
        devices: one ``tf.config.experimental.get_device_details`` dict per visible GPU.
        mixed_precision: ``"off"``, ``"float16"`` or ``"bfloat16"``; ``None`` reads
            ``SEQLAB_MIXED_PRECISION``.

    Returns:
        ``(policy, reason)``: the name to pass to ``keras.config.set_dtype_policy``.

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
    """``requested``, or ``$SEQLAB_XLA`` (``1``/``true`` turns XLA on; default off) when None.

    >>> resolve_jit_compile(None) in (True, False)
    True
    """
    if requested is None:
        value = os.environ.get("SEQLAB_XLA", "0").strip().lower()
        if value not in ("0", "1", "true", "false", ""):
            raise ValueError(f"SEQLAB_XLA must be 1 or 0; got {value!r}.")
        return value in ("1", "true")
    if requested is not True and requested is not False:
        raise ValueError(f"jit_compile must be True, False or None; got {requested!r}.")
    return requested
