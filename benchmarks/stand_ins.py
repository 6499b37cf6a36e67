"""The real data's sizes, and stand-ins of what cannot be downloaded on this project's machines,
for ``benchmarks.end_to_end`` (its downloads: ``benchmarks.stand_in_downloads``) and
``benchmarks.bucketing_reviews``.

- IMDB review lengths: a log-normal with IMDB's median (174 words) and mean (230), the figures
  issue 28 cites (the real reviews cannot be read here) (:func:`imdb_review_lengths`);
- nnlm-en-dim50: a TF-Hub-format module of its real table size (963,812 × 50, random values)
  made like the FAST stand-in (``seqlab.data.standin.StandinTextEmbedding``)
  (:func:`nnlm_sized_module`);
- tiny_shakespeare: its length and its 65 characters (notebook 07's windows of ids).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

IMDB_MEAN_WORDS = 230     # IMDB's mean review length in words (published; not measurable here)
IMDB_MEDIAN_WORDS = 174   # and its median (the figure issue 28 cites; not measurable here)
NNLM_ROWS, NNLM_DIM = 963_812, 50
SHAKESPEARE_CHARS, SHAKESPEARE_VOCAB = 1_115_394, 66   # 65 characters + id 0 (unseen)


def imdb_review_lengths(count: int, seed: int = 0):
    """Review lengths in words from a log-normal with IMDB's median and mean (at least 10):
    the stand-in of the length distribution (the real reviews cannot be read here), as a NumPy
    array of ``count`` integers."""
    import numpy as np

    sigma = np.sqrt(2 * np.log(IMDB_MEAN_WORDS / IMDB_MEDIAN_WORDS))
    lengths = np.random.default_rng(seed).lognormal(np.log(IMDB_MEDIAN_WORDS), sigma, count)
    return np.maximum(10, np.round(lengths)).astype(int)


_NNLM_STAND_IN: dict[str, str] = {}


def nnlm_sized_module(words: list[str] = ()) -> str:
    """A TF-Hub-format text embedding with nnlm-en-dim50's table size (random values): a stand-in.

    Its vocabulary holds ``words`` (the stand-in text's, so that a batch touches as many rows
    as real reviews do in the real module), filled up with ``word0``, ``word1``, ..."""
    if "path" in _NNLM_STAND_IN:
        return _NNLM_STAND_IN["path"]
    import numpy as np
    import tensorflow as tf

    from seqlab.data.standin import NUM_OOV_BUCKETS, StandinTextEmbedding

    words = list(dict.fromkeys(words))
    vocabulary = words + [f"word{i}" for i in range(NNLM_ROWS - NUM_OOV_BUCKETS - len(words))]
    table = np.random.default_rng(0).normal(0, 0.1, (NNLM_ROWS, NNLM_DIM)).astype("float32")
    module = StandinTextEmbedding(vocabulary, table, NUM_OOV_BUCKETS)
    path = Path(tempfile.mkdtemp(prefix="nnlm_sized_stand_in_"))
    tf.saved_model.save(module, str(path))
    _NNLM_STAND_IN["path"] = str(path)
    return str(path)
