"""TensorFlow's start-up lines, held back so a notebook opens without red stderr boxes."""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile

#: ``TF_CPP_MIN_LOG_LEVEL`` that :func:`setup` sets unless it is set already (1: no INFO lines).
TENSORFLOW_LOG_LEVEL = "1"

#: What TensorFlow's C++ libraries write to file descriptor 2 while loading on a machine that is
#: fine, some before they read ``TF_CPP_MIN_LOG_LEVEL``.
STARTUP_NOISE = re.compile(
    r"WARNING: All log messages before absl::InitializeLog\(\) is called are written to STDERR"
    r"|\] oneDNN custom operations are on\."
    r"|\] Could not find cuda drivers on your machine, GPU will not be used\."
    r"|\] This TensorFlow binary is optimized to use available CPU instructions"
    r"|^To enable the following instructions: .* rebuild TensorFlow with the appropriate compiler"
    r"|\] Unable to register cu(?:FFT|DNN|BLAS) factory: Attempting to register factory for plugin"
    r"|\] computation placer already registered\."
    r"|TF-TRT Warning: Could not find TensorRT"
    r"|\] oneDNN supports DT_\w+ only on platforms with AVX-512\. Falling back to the default"
)
#: Where no NVIDIA device exists, a CUDA build of TensorFlow failing to initialise CUDA is
#: expected too; on a machine with one, that line is the diagnostic a student needs.
NO_GPU_NOISE = re.compile(r"\] failed call to cuInit: ")


def is_startup_noise(line: str, *, nvidia_device: bool | None = None) -> bool:
    """True for a line TensorFlow prints while loading on a healthy machine; ``nvidia_device``
    defaults to whether ``/dev/nvidiactl`` exists."""
    if STARTUP_NOISE.search(line):
        return True
    if nvidia_device is None:
        nvidia_device = os.path.exists("/dev/nvidiactl")
    return not nvidia_device and bool(NO_GPU_NOISE.search(line))


@contextlib.contextmanager
def hide_tensorflow_startup_lines():
    """Hold back what C++ writes to stderr inside the block; when it ends (or raises), pass on
    all but the noise. With ``TF_CPP_MIN_LOG_LEVEL=0`` nothing is held back."""
    if os.environ.get("TF_CPP_MIN_LOG_LEVEL") == "0":
        yield
        return
    saved = os.dup(2)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    with tempfile.TemporaryFile() as held:
        os.dup2(held.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            held.seek(0)
            lines = held.read().decode("utf-8", "replace").splitlines(keepends=True)
            kept = "".join(line for line in lines if not is_startup_noise(line))
            if kept:
                os.write(2, kept.encode("utf-8"))
