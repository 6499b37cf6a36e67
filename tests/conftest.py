"""Test-wide settings, set before TensorFlow is imported: offline FAST mode, quiet TensorFlow
logs, and a non-interactive matplotlib backend. (The notebook lists live in test_notebooks.py.)"""

import os

# Before TensorFlow is imported anywhere: quiet logs, and never try a download in tests.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("SEQLAB_FAST", "1")
os.environ.setdefault("MPLBACKEND", "Agg")
