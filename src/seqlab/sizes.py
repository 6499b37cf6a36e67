"""The size a notebook trains at, chosen once, and how long the record says it takes.

Three sizes: ``"fast"`` (FAST mode: offline data that ships with the repository, tiny models,
about a minute), ``"class"`` (the real data, at most 15 minutes of training on 2 CPU cores,
Colab's free runtime) and ``"full"`` (the notebook's full-size models). A notebook's ``SIZE``
parameter wins; else ``$SEQLAB_SIZE``; else FAST mode means ``"fast"``, and otherwise the
hardware decides: a runtime with a GPU trains the full size, one without trains the class size
and says so in one line, with how to choose the full size. The minutes each size takes come
from one record, ``benchmarks/results/full_mode.json`` (written by ``python -m
benchmarks.full_mode``); no GPU time has been measured, and the line says that too.

>>> choose("class", fast=False)
'class'
>>> choose(None, fast=True)
'fast'
"""

from __future__ import annotations

import json
import os
from functools import cache

from seqlab import config

#: The sizes, smallest first.
SIZES = ("fast", "class", "full")
#: The record of full-mode and class-size training minutes on 2 CPU cores.
RECORD = config.REPO_ROOT / "benchmarks" / "results" / "full_mode.json"
_NAMES = {"class": "the class size", "full": "the full size"}


def has_gpu() -> bool:
    """True when TensorFlow sees a GPU on this runtime."""
    import tensorflow as tf

    return bool(tf.config.list_physical_devices("GPU"))


@cache
def _record() -> dict:
    try:
        return json.loads(RECORD.read_text(encoding="utf-8")).get("notebooks", {})
    except (OSError, ValueError):  # a copy without benchmarks/: the times are just unknown
        return {}


def expected_minutes(notebook: str, size: str) -> float | None:
    """Minutes of training the record gives notebook ``"04"`` at ``size`` on 2 CPU cores.

    ``None`` when the record has no such entry (FAST mode is not in it).
    """
    entry = _record().get(str(notebook), {}).get(size, {})
    minutes = entry.get("minutes")
    return float(minutes) if minutes is not None else None


def _cpu_time(notebook: str | None, size: str) -> str:
    minutes = expected_minutes(notebook, size) if notebook else None
    return ("its time is not recorded" if minutes is None
            else f"about {minutes:.0f} min of training on 2 CPU cores")


def describe(notebook: str | None, size: str, gpu: bool) -> str:
    """The one line a notebook prints about the size it trains at and how long that takes."""
    if size == "fast":
        return "FAST mode: offline data and tiny models, about a minute."
    gpu_time = "on a GPU not measured (no GPU was lent to this project), " if gpu else ""
    return f"Training at {_NAMES[size]}: {gpu_time}{_cpu_time(notebook, size)}."


def choose(value: str | None = None, *, fast: bool | None = None, notebook: str | None = None,
           gpu: bool | None = None) -> str:
    """The size this run trains at: ``"fast"``, ``"class"`` or ``"full"``.

    ``value`` (a notebook's ``SIZE`` parameter) wins; else ``$SEQLAB_SIZE``; else ``"fast"`` in
    FAST mode (``fast``, or ``$SEQLAB_FAST``); else ``"full"`` on a runtime with a GPU and
    ``"class"`` without one. With ``notebook`` (e.g. ``"04"``) outside FAST mode it prints one
    line: the size, why it was chosen when the hardware chose it, and the record's minutes.

    Args:
        gpu: whether a GPU is present; ``None`` asks TensorFlow (tests pass it).

    Raises:
        ValueError: for anything but the three sizes, naming them (a typo must not start a
            long run), or for ``"class"``/``"full"`` asked for in FAST mode.
    """
    fast = config.is_fast() if fast is None else bool(fast)
    raw = value if value is not None else os.environ.get("SEQLAB_SIZE")
    if raw is None:
        if fast:
            return "fast"
        gpu = has_gpu() if gpu is None else bool(gpu)
        chosen = "full" if gpu else "class"
        if notebook is not None:
            if gpu:
                print("A GPU is here, so the full size: on a GPU its time is not measured (no GPU"
                      f" was lent to this project); {_cpu_time(notebook, 'full')}.")
            else:
                print(f"No GPU on this runtime, so the class size ({_cpu_time(notebook, 'class')}"
                      f'); SIZE = "full" in the parameters cell trains the full size '
                      f"({_cpu_time(notebook, 'full')}).")
        return chosen
    chosen = str(raw).strip().lower()
    if chosen not in SIZES:
        raise ValueError(f"SIZE (or SEQLAB_SIZE) must be one of {', '.join(map(repr, SIZES))}; "
                         f"got {raw!r}.")
    if fast and chosen != "fast":
        raise ValueError(f"SIZE = {chosen!r} trains on the real data, but FAST mode is on: set "
                         "FAST = False (or SEQLAB_FAST=0) as well.")
    if not fast and chosen == "fast":
        raise ValueError("SIZE = 'fast' needs FAST mode: set FAST = True (or SEQLAB_FAST=1).")
    if notebook is not None and chosen != "fast":
        print(describe(notebook, chosen, has_gpu() if gpu is None else bool(gpu)))
    return chosen
