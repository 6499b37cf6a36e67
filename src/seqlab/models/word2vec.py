"""Word2vec: skip-gram with negative sampling as a Keras model, and what to do with its vectors.

Slides 001, "Skip-Gram (SG)" and "Word2vec last words": a centre word ``c`` is looked up in one
table (``W``, the vectors we keep, ``v_c``), each candidate context word ``o`` in a second
table (``U``, ``u_o``); their dot product ``u_o·v_c`` scores the pair. Instead of a softmax over
the whole vocabulary, negative sampling turns the task into ``1 + K`` binary decisions: the
true context should score high, ``K`` words drawn at random low,

    loss = −log σ(u_o·v_c) − Σ_k log σ(−u_k·v_c),

which is binary cross-entropy on the logits ``u·v_c`` with labels ``1, 0, …, 0``.
"""

from __future__ import annotations

import keras
import numpy as np
from keras import ops


@keras.saving.register_keras_serializable(package="seqlab")
class SkipGram(keras.Model):
    """Skip-gram with negative sampling: two embedding tables and a dot product.

    Args:
        vocab_size: number of word ids (id 0 padding, as ``TextVectorization`` makes them).
        embedding_dim: length of each word vector (``N`` in the slides).
        **kwargs: passed to ``keras.Model`` (``name``, ``dtype``).

    Call arguments:
        inputs: ``(centre, candidates)``: ``centre`` ``(batch,)`` ids, ``candidates``
            ``(batch, 1 + K)`` ids (as :func:`seqlab.data.corpus.skipgram_dataset` yields them).

    Returns:
        Logits ``(batch, 1 + K)``: ``u_candidate · v_centre``. ``sigmoid`` of a logit is the
        model's probability that the candidate really appeared near the centre word; train with
        ``keras.losses.BinaryCrossentropy(from_logits=True)``. With Adam, prefer
        :class:`seqlab.training.optimizers.FusedAdam`: Adam's update in one pass over each table
        instead of Keras's several (about twice the pairs per second on 2 CPU cores at full
        size, the same loss; ``python -m benchmarks.embedding_updates``).

    Example:
        >>> model = SkipGram(vocab_size=50, embedding_dim=8)
        >>> model((np.array([3, 4]), np.array([[5, 6, 7], [8, 9, 10]]))).shape
        TensorShape([2, 3])
    """

    def __init__(self, vocab_size, embedding_dim, **kwargs):
        super().__init__(**kwargs)
        if vocab_size < 2 or embedding_dim < 1:
            raise ValueError(f"SkipGram needs vocab_size >= 2 and embedding_dim >= 1; got "
                             f"{vocab_size} and {embedding_dim}.")
        self.vocab_size = int(vocab_size)
        self.embedding_dim = int(embedding_dim)
        # W: the centre ("input") vectors we keep; U: the context ("output") vectors.
        self.target_embedding = keras.layers.Embedding(vocab_size, embedding_dim, name="w2v_embedding")
        self.context_embedding = keras.layers.Embedding(vocab_size, embedding_dim, name="w2v_context")

    def build(self, input_shape=None):
        self.target_embedding.build((None,))
        self.context_embedding.build((None, None))
        self.built = True

    def call(self, inputs):
        centre, candidates = inputs
        v = self.target_embedding(centre)                # (batch, d)
        u = self.context_embedding(candidates)           # (batch, 1 + K, d)
        return ops.sum(u * v[:, None, :], axis=-1)       # (batch, 1 + K): u_o · v_c

    @property
    def vectors(self) -> np.ndarray:
        """The learned word vectors, ``(vocab_size, embedding_dim)`` (the centre table ``W``)."""
        return np.asarray(self.target_embedding.embeddings)

    def get_config(self):
        config = super().get_config()
        config.update(vocab_size=self.vocab_size, embedding_dim=self.embedding_dim)
        return config


# ------------------------------------------------------------------------------ using the vectors


def normalize_rows(vectors) -> np.ndarray:
    """Each row scaled to unit length (zero rows stay zero), so dot products are cosines."""
    vectors = np.asarray(vectors, dtype="float64")
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)


def _index(vocabulary, word):
    try:
        return list(vocabulary).index(word)
    except ValueError:
        raise KeyError(f"{word!r} is not in the vocabulary ({len(vocabulary)} words).") from None


def nearest_neighbours(vectors, vocabulary, word: str, k: int = 5, skip: int = 2):
    """The ``k`` words whose vectors have the largest cosine with ``word``'s, as (word, cosine).

    ``skip`` leaves out the first ids (TextVectorization's padding ``''`` and ``[UNK]``).
    """
    unit = normalize_rows(vectors)
    i = _index(vocabulary, word)
    cosines = unit @ unit[i]
    cosines[:skip] = -np.inf
    cosines[i] = -np.inf
    best = np.argsort(-cosines)[:k]
    return [(vocabulary[j], float(cosines[j])) for j in best]


def analogy(vectors, vocabulary, a: str, b: str, c: str, k: int = 5, skip: int = 2):
    """``a`` is to ``b`` as ``c`` is to … : the words nearest ``v_b − v_a + v_c`` (cosine).

    The three question words are excluded from the answers, as in Mikolov et al.'s evaluation.
    Returns the ``k`` best as (word, cosine).
    """
    unit = normalize_rows(vectors)
    ia, ib, ic = (_index(vocabulary, w) for w in (a, b, c))
    target = normalize_rows(unit[ib] - unit[ia] + unit[ic])
    cosines = unit @ target
    cosines[:skip] = -np.inf
    cosines[[ia, ib, ic]] = -np.inf
    best = np.argsort(-cosines)[:k]
    return [(vocabulary[j], float(cosines[j])) for j in best]


def analogy_rank(vectors, vocabulary, a: str, b: str, c: str, expected: str, skip: int = 2) -> int:
    """Rank (1 = best) of ``expected`` among the answers of :func:`analogy`."""
    answers = analogy(vectors, vocabulary, a, b, c, k=len(vocabulary), skip=skip)
    return 1 + [word for word, _ in answers].index(expected)


def pca_2d(vectors) -> np.ndarray:
    """Project rows onto their two principal components (centred, by SVD): ``(n, 2)``."""
    x = np.asarray(vectors, dtype="float64")
    x = x - x.mean(axis=0)
    _, _, vt = np.linalg.svd(x, full_matrices=False)
    return x @ vt[:2].T


def build_word2vec_classifier(vectorizer, vectors, *, trainable: bool = False,
                              hidden_units: int = 128, name: str = "word2vec_classifier"):
    """Notebook 01's classifier with learned word vectors in place of the TF-Hub module.

    Raw strings → ``vectorizer`` (a fitted ``keras.layers.TextVectorization`` whose vocabulary
    the vectors follow) → ``Embedding`` initialised with ``vectors`` (frozen unless
    ``trainable``) → the average of the review's word vectors (padding masked out) →
    ``Dense(hidden_units, relu)`` → ``Dense(1, sigmoid)``. Compile it with
    :func:`seqlab.training.compile_sentiment_classifier`.

    Args:
        vectorizer: the fitted ``TextVectorization`` layer (``output_mode="int"``).
        vectors: ``(vocab_size, d)`` array, row ``i`` the vector of the vectorizer's word ``i``.
        trainable: whether the word vectors are fine-tuned.
        hidden_units: units of the hidden layer (128 as in the case study).
        name: the model's name.

    Returns:
        An uncompiled ``keras.Sequential`` from strings ``(batch,)`` to ``P(positive)`` ``(batch, 1)``.
    """
    vectors = np.asarray(vectors, dtype="float32")
    if vectors.shape[0] != vectorizer.vocabulary_size():
        raise ValueError(f"vectors has {vectors.shape[0]} rows but the vectorizer knows "
                         f"{vectorizer.vocabulary_size()} words; they must follow one vocabulary.")
    return keras.Sequential([
        keras.Input(shape=(), dtype="string", name="review"),
        vectorizer,                                                           # (batch, T) ids
        keras.layers.Embedding(vectors.shape[0], vectors.shape[1], mask_zero=True,
                               embeddings_initializer=keras.initializers.Constant(vectors),
                               trainable=trainable, name="word_vectors"),    # (batch, T, d)
        keras.layers.GlobalAveragePooling1D(name="average"),                 # (batch, d)
        keras.layers.Dense(hidden_units, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),                         # P(positive)
    ], name=name)
