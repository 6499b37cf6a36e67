"""What to do with word vectors (notebook 06): cosine neighbours, analogies and a 2-D projection.

``vectors`` is a ``(vocab_size, d)`` array, row ``i`` the vector of word ``vocabulary[i]``.
"""

from __future__ import annotations

import numpy as np


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


def _best(cosines, vocabulary, excluded, k, skip):
    cosines[:skip] = -np.inf
    cosines[excluded] = -np.inf
    return [(vocabulary[j], float(cosines[j])) for j in np.argsort(-cosines)[:k]]


def nearest_neighbours(vectors, vocabulary, word: str, k: int = 5, skip: int = 2):
    """The ``k`` words whose vectors have the largest cosine with ``word``'s, as (word, cosine).

    ``skip`` leaves out the first ids (TextVectorization's padding ``''`` and ``[UNK]``).
    """
    unit = normalize_rows(vectors)
    i = _index(vocabulary, word)
    return _best(unit @ unit[i], vocabulary, [i], k, skip)


def analogy(vectors, vocabulary, a: str, b: str, c: str, k: int = 5, skip: int = 2):
    """``a`` is to ``b`` as ``c`` is to … : the ``k`` words nearest ``v_b − v_a + v_c``, as (word, cosine).

    The three question words are excluded from the answers, as in Mikolov et al.'s evaluation.
    """
    unit = normalize_rows(vectors)
    ia, ib, ic = (_index(vocabulary, w) for w in (a, b, c))
    target = normalize_rows(unit[ib] - unit[ia] + unit[ic])
    return _best(unit @ target, vocabulary, [ia, ib, ic], k, skip)


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
