"""Project-wide settings: the FAST flag, repository paths, seeds and the Colab source.

FAST mode (``SEQLAB_FAST=1``, or the ``FAST`` notebook parameter) runs every notebook offline on
small data shipped in ``data/`` and a stand-in TF-Hub module.
"""

from __future__ import annotations

import os
from pathlib import Path

#: Where the notebooks fetch seqlab from on Colab (each setup cell pins a commit); Colab badges
#: open the notebooks on this branch.
REPOSITORY_URL = "https://github.com/seqlab-course/seqlab"
REPOSITORY_BRANCH = "main"

#: The TensorFlow/Keras versions CI tests (docs "Versions and CI"): the floor, Colab's runtime
#: and the newest release.
TESTED_FLOOR = {"tensorflow": "2.19.0", "keras": "3.10.0"}
TESTED_COLAB = {"tensorflow": "2.20.0", "keras": "3.13.2"}
TESTED_NEWEST = {"tensorflow": "2.21", "keras": "3.15"}

#: Seed used by :func:`seqlab.course.notebook.setup` and by every data split in the package.
SEED = 42

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def _find_repo_root() -> Path:
    """The checkout that holds ``data/`` and ``models/`` (``SEQLAB_HOME`` overrides)."""
    override = os.environ.get("SEQLAB_HOME")
    if override:
        return Path(override).expanduser().resolve()
    for parent in Path(__file__).resolve().parents:
        if (parent / "data").is_dir() and (parent / "pyproject.toml").is_file():
            return parent
    # Installed without the checkout (e.g. a wheel): fall back to the working directory.
    return Path.cwd()


REPO_ROOT: Path = _find_repo_root()
DATA_DIR: Path = REPO_ROOT / "data"
MODELS_DIR: Path = REPO_ROOT / "models"
RUNS_DIR: Path = REPO_ROOT / "runs"


def is_fast(default: bool = False) -> bool:
    """True when ``SEQLAB_FAST`` asks for FAST (offline, small) mode.

    Raises:
        ValueError: if ``SEQLAB_FAST`` holds something other than a yes/no value.
    """
    raw = os.environ.get("SEQLAB_FAST")
    if raw is None:
        return default
    value = raw.strip().lower()
    if value not in _TRUE | _FALSE:
        raise ValueError(f"SEQLAB_FAST must be one of 1/0, true/false, yes/no, on/off; got {raw!r}.")
    return value in _TRUE


def models_dir() -> Path:
    """``models/``, created on first use (trained artifacts and the stand-in land here)."""
    MODELS_DIR.mkdir(parents=True, exist_ok=True)
    return MODELS_DIR
