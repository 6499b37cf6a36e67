"""Stand-ins of the real data's shapes for ``benchmarks.full_mode`` (and
``benchmarks.embedding_updates``): the real IMDB reviews, nnlm-en-dim50 and tiny_shakespeare
cannot be downloaded on this project's machines, and a training step's time depends on the
shapes, not on the values. The real sizes are here too, with the splits the notebooks make.

- IMDB reviews: reviews written by ``seqlab.data.synthetic_reviews``, joined and cut to
  :data:`IMDB_MEAN_WORDS` words each (the reviews' published mean length; the real reviews
  cannot be read here), in IMDB's split sizes: 17,500 training / 7,500 validation reviews
  (``train[:70%]`` / ``train[70%:]``), 25,000 test, 75,000 for word vectors (train +
  unsupervised); notebook 06's skip-gram pairs are counted as if every word were
  in its vocabulary (an upper bound); where batches are grouped by length (notebook 03's
  training), random ids of lengths drawn from a log-normal with IMDB's median (174 words) and
  mean (230) (:func:`imdb_review_lengths`, :func:`imdb_grouped_batches`);
- nnlm-en-dim50: a TF-Hub-format module of its real table size (963,812 × 50, random values)
  made like the FAST stand-in (``seqlab.data.standin.StandinTextEmbedding``);
- tiny_shakespeare: random ids over its 65 characters in its windows (1,115,394 characters,
  the last 10 % held out, as ``split_text`` cuts it);
- notebook 08's preset: ``benchmarks.bert``'s classifier of ``bert_tiny_en_uncased``'s
  architecture from random weights.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

# Real data sizes (the splits the notebooks make of them)
IMDB_MEAN_WORDS = 230     # IMDB's mean review length in words (published; not measurable here)
IMDB_MEDIAN_WORDS = 174   # and its median (the figure issue 28 cites; not measurable here)
IMDB_TRAIN, IMDB_VALID, IMDB_TEST = 17_500, 7_500, 25_000   # train[:70%], train[70%:], test
IMDB_CORPUS = 75_000      # train + unsupervised: notebook 06's word-vector corpus
NNLM_ROWS, NNLM_DIM = 963_812, 50
SHAKESPEARE_CHARS, SHAKESPEARE_VOCAB = 1_115_394, 66   # 65 characters + id 0 (unseen)


def imdb_length_reviews(count: int, words: int = IMDB_MEAN_WORDS, seed: int = 0) -> list[str]:
    """Stand-in reviews of IMDB's length: generated reviews joined and cut to ``words`` words."""
    from seqlab.data.synthetic_reviews import generate_reviews

    pool = " ".join(review.text for review in generate_reviews(max(200, count * 4), seed=seed)).split()
    reviews, start = [], 0
    for _ in range(count):
        if start + words > len(pool):
            start = 0
        reviews.append(" ".join(pool[start: start + words]))
        start += words
    return reviews


def imdb_review_lengths(count: int, seed: int = 0):
    """Review lengths in words from a log-normal with IMDB's median and mean (at least 10):
    the stand-in of the length distribution (the real reviews cannot be read here), as a NumPy
    array of ``count`` integers."""
    import numpy as np

    sigma = np.sqrt(2 * np.log(IMDB_MEAN_WORDS / IMDB_MEDIAN_WORDS))
    lengths = np.random.default_rng(seed).lognormal(np.log(IMDB_MEDIAN_WORDS), sigma, count)
    return np.maximum(10, np.round(lengths)).astype(int)


def imdb_grouped_batches(count: int, batch: int, cut: int, max_tokens: int, seed: int = 0) -> list:
    """One epoch of ``(ids, labels)`` training batches as ``seqlab.data.bucket_by_length`` groups
    them (notebooks 03 and 08), in the order the epoch gives them: ``count`` stand-in reviews of
    :func:`imdb_review_lengths` cut at ``cut``, random ids below ``max_tokens``."""
    import numpy as np
    import tensorflow as tf

    from seqlab.data import bucket_by_length

    rng = np.random.default_rng(seed)
    lengths = np.minimum(imdb_review_lengths(count, seed), cut)
    ids = np.zeros((count, cut), "int64")
    for row, length in enumerate(lengths):
        ids[row, :length] = rng.integers(2, max_tokens, length)
    labels = rng.integers(0, 2, (count, 1)).astype("float32")
    padded = tf.data.Dataset.from_tensor_slices((ids, labels)).batch(batch)
    return [(x.numpy(), y.numpy()) for x, y in bucket_by_length(padded, batch)]


_NNLM_STAND_IN: dict[str, str] = {}


def nnlm_sized_module() -> str:
    """A TF-Hub-format text embedding with nnlm-en-dim50's table size (random values): a stand-in."""
    if "path" in _NNLM_STAND_IN:
        return _NNLM_STAND_IN["path"]
    import numpy as np
    import tensorflow as tf

    from seqlab.data.standin import NUM_OOV_BUCKETS, StandinTextEmbedding

    words = sorted({w.lower() for review in imdb_length_reviews(200) for w in review.split()})
    vocabulary = words + [f"word{i}" for i in range(NNLM_ROWS - NUM_OOV_BUCKETS - len(words))]
    table = np.random.default_rng(0).normal(0, 0.1, (NNLM_ROWS, NNLM_DIM)).astype("float32")
    module = StandinTextEmbedding(vocabulary, table, NUM_OOV_BUCKETS)
    path = Path(tempfile.mkdtemp(prefix="nnlm_sized_stand_in_"))
    tf.saved_model.save(module, str(path))
    _NNLM_STAND_IN["path"] = str(path)
    return str(path)


def review_batch(batch: int):
    import numpy as np
    import tensorflow as tf

    texts = tf.constant(imdb_length_reviews(batch))
    labels = np.random.default_rng(0).integers(0, 2, (batch, 1)).astype("float32")
    return texts, labels


HUB_STAND_IN = (f"IMDB stand-in: generated reviews of {IMDB_MEAN_WORDS} words; nnlm-en-dim50 "
                f"stand-in: a module of its table size ({NNLM_ROWS:,} × {NNLM_DIM}, random values)")

