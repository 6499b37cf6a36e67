"""Test-wide settings, set before TensorFlow is imported: offline FAST mode, quiet TensorFlow
logs, and a non-interactive matplotlib backend. (The notebook lists live in test_notebooks.py.)"""

import atexit
import os
import shutil
import tempfile

# Before TensorFlow is imported anywhere: quiet logs, and never try a download in tests.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("SEQLAB_FAST", "1")
os.environ.setdefault("MPLBACKEND", "Agg")
# Training runs' backups in a folder of this test session, never the checkout's models/backups
# (see _fresh_backup_folder; module-scoped fixtures run before it and use this one).
_SESSION_BACKUPS = tempfile.mkdtemp(prefix="seqlab-test-backups-")
atexit.register(shutil.rmtree, _SESSION_BACKUPS, ignore_errors=True)
os.environ["SEQLAB_BACKUP_DIR"] = _SESSION_BACKUPS


import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _fresh_backup_folder(tmp_path, monkeypatch):
    """Every test trains from scratch: its own empty ``SEQLAB_BACKUP_DIR`` (kernels started by
    the test inherit it). Without it, the finished runs that an earlier notebook run left in
    ``models/backups`` would be loaded by ``TrainingRun`` and every ``fit`` skipped, so a
    notebook test would pass without training (and a student copy would load the solution's
    weights). Tests of the folder choice itself unset it."""
    monkeypatch.setenv("SEQLAB_BACKUP_DIR", str(tmp_path / "seqlab-backups"))
