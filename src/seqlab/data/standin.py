"""The offline **stand-in** for the nnlm-en-dim50 TF-Hub module, built by this project.

Learned from the sample's training reviews (PPMI reduced by a truncated SVD; Levy, Goldberg
and Dagan, 2015), with the real module's calling convention: split on spaces, OOV buckets,
"sqrtn" combination :math:`e(s) = \\frac{1}{\\sqrt{n}} \\sum_{i=1}^{n} E[t_i]`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import tensorflow as tf

from seqlab import config
from seqlab.data.imdb import read_sample_split

STANDIN_DIRNAME = "standin-text-embedding"
INFO_FILENAME = "seqlab_standin.json"
#: Bump when the module's computation or training changes, so cached copies are rebuilt.
FORMAT_VERSION = 3

EMBEDDING_DIM = 50
WINDOW = 2
MIN_COUNT = 2
NUM_OOV_BUCKETS = 8
# Context-distribution smoothing of PPMI (Levy, Goldberg and Dagan, 2015).
CONTEXT_SMOOTHING = 0.75


def standin_path() -> Path:
    """Where the stand-in module is cached: ``models/standin-text-embedding/``."""
    return config.MODELS_DIR / STANDIN_DIRNAME


def tokenize(sentences: tf.Tensor) -> tf.RaggedTensor:
    """``(batch,)`` strings -> ragged ``(batch, tokens)``, split on spaces only (as nnlm).

    Case, punctuation, tabs and line breaks stay in the tokens; runs of spaces make no empty ones.
    """
    tokens = tf.strings.split(sentences, sep=" ")  # (batch, tokens), "" between two spaces
    return tf.ragged.boolean_mask(tokens, tf.strings.length(tokens) > 0)


class StandinTextEmbedding(tf.Module):
    """The stand-in module: strings ``(batch,)`` -> float32 embeddings ``(batch, dim)``.

    Saved, it has the TF-Hub reusable-SavedModel interface: ``__call__`` on a 1-D string tensor,
    and ``variables`` / ``trainable_variables`` lists. ``embeddings`` has one row per
    ``vocabulary`` word, then one per OOV bucket.
    """

    # tf.Module computes `variables` and `trainable_variables` on the fly and SavedModel does
    # not store them; TF-Hub's convention wants them saved as attributes, so we set them.
    variables = trainable_variables = None

    def __init__(self, vocabulary: Sequence[str], embeddings: np.ndarray,
                 num_oov_buckets: int = NUM_OOV_BUCKETS):
        super().__init__(name="standin_text_embedding")
        self._table = tf.lookup.StaticVocabularyTable(
            tf.lookup.KeyValueTensorInitializer(
                tf.constant(list(vocabulary), tf.string),
                tf.range(len(vocabulary), dtype=tf.int64),
            ),
            num_oov_buckets,
        )
        self.embeddings = tf.Variable(embeddings.astype(np.float32), name="embeddings")
        self.variables = [self.embeddings]
        self.trainable_variables = [self.embeddings]
        self.regularization_losses = []

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def __call__(self, sentences):
        ids = self._table.lookup(tokenize(sentences)).to_sparse()  # (batch, tokens), sparse
        return tf.nn.safe_embedding_lookup_sparse(self.embeddings, ids, combiner="sqrtn")


def train_standin_embeddings(texts: Sequence[str], dim: int = EMBEDDING_DIM,
                             window: int = WINDOW, min_count: int = MIN_COUNT,
                             num_oov_buckets: int = NUM_OOV_BUCKETS
                             ) -> tuple[list[str], np.ndarray]:
    """Unsupervised word vectors from raw texts: PPMI of co-occurrences, then truncated SVD.

    Returns:
        ``(vocabulary, embeddings)``: the words seen at least ``min_count`` times (sorted),
        and a float32 matrix ``(len(vocabulary) + num_oov_buckets, dim)`` whose OOV rows are
        zero.
    """
    tokens = tokenize(tf.constant(list(texts), tf.string)).to_list()
    documents = [[t.decode("utf-8", "replace") for t in row] for row in tokens]
    counts = Counter(token for document in documents for token in document)
    vocabulary = sorted(token for token, count in counts.items() if count >= min_count)
    if len(vocabulary) < dim:
        raise ValueError(f"the corpus has only {len(vocabulary)} words seen {min_count}+ times; "
                         f"need at least dim={dim}")
    index = {token: i for i, token in enumerate(vocabulary)}
    size = len(vocabulary)

    cooccurrence = np.zeros((size, size))  # (words, context words)
    for document in documents:
        ids = [index[t] for t in document if t in index]
        for offset in range(1, window + 1):
            left, right = np.array(ids[:-offset], int), np.array(ids[offset:], int)
            np.add.at(cooccurrence, (left, right), 1.0)
            np.add.at(cooccurrence, (right, left), 1.0)

    total = cooccurrence.sum()
    word_probability = cooccurrence.sum(axis=1) / total                        # (words,)
    context_weight = cooccurrence.sum(axis=0) ** CONTEXT_SMOOTHING
    context_probability = context_weight / context_weight.sum()               # (contexts,)
    with np.errstate(divide="ignore", invalid="ignore"):
        pmi = np.log(cooccurrence / total / np.outer(word_probability, context_probability))
    ppmi = np.where(np.isfinite(pmi), np.maximum(pmi, 0.0), 0.0)

    left_vectors, singular_values, _ = np.linalg.svd(ppmi)
    vectors = left_vectors[:, :dim] * np.sqrt(singular_values[:dim])           # (words, dim)
    # SVD leaves each component's sign arbitrary: fix it so builds are identical everywhere.
    signs = np.sign(vectors[np.abs(vectors).argmax(axis=0), np.arange(dim)])
    vectors = vectors * signs
    # Remove the common direction (all words share it) so cosine similarity shows meaning.
    vectors = vectors - vectors.mean(axis=0)
    vectors = vectors / np.linalg.norm(vectors, axis=1).mean()                 # mean norm 1
    embeddings = np.concatenate([vectors, np.zeros((num_oov_buckets, dim))]).astype(np.float32)
    return vocabulary, embeddings


def read_standin_info(path: str | Path | None = None) -> dict:
    """The ``seqlab_standin.json`` next to a built stand-in (empty dict if there is none)."""
    info = Path(path or standin_path()) / INFO_FILENAME
    return json.loads(info.read_text(encoding="utf-8")) if info.is_file() else {}


def build_standin_text_embedding(path: str | Path | None = None, *,
                                 texts: Sequence[str] | None = None) -> Path:
    """Build (or reuse) the stand-in TF-Hub-format text-embedding SavedModel; return its folder.

    Args:
        path: target folder (default ``models/standin-text-embedding``).
        texts: the corpus to learn word vectors from (default: the sample's training reviews).
    """
    path = Path(path or standin_path())
    if texts is None:
        texts = read_sample_split("train")[0]
    settings = {"dim": EMBEDDING_DIM, "window": WINDOW, "min_count": MIN_COUNT,
                "num_oov_buckets": NUM_OOV_BUCKETS}
    digest = hashlib.sha256(json.dumps({"version": FORMAT_VERSION, **settings}).encode())
    for text in texts:
        digest.update(text.encode("utf-8") + b"\0")
    fingerprint = digest.hexdigest()
    if (read_standin_info(path).get("fingerprint") == fingerprint
            and (path / "saved_model.pb").is_file()):
        return path
    vocabulary, embeddings = train_standin_embeddings(texts, **settings)
    module = StandinTextEmbedding(vocabulary, embeddings, NUM_OOV_BUCKETS)
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.parent / f".{path.name}.building-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    tf.saved_model.save(module, str(staging))
    info = {"what": "seqlab stand-in for nnlm-en-dim50 (not the real pretrained module)",
            "fingerprint": fingerprint, "format_version": FORMAT_VERSION,
            "vocabulary_size": len(vocabulary), "documents": len(texts), **settings}
    (staging / INFO_FILENAME).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    shutil.rmtree(path, ignore_errors=True)
    staging.rename(path)
    print(f"Built the stand-in text-embedding module at {path}: {len(vocabulary)} words + "
          f"{NUM_OOV_BUCKETS} OOV buckets, dim {EMBEDDING_DIM}, learned from {len(texts)} reviews "
          "(a stand-in for nnlm-en-dim50, not the real pretrained model).")
    return path
