"""Notebook 06's skip-gram model and classifier (seqlab.lessons.nb06: save/load round trip, what
they compute) and the vector tools of seqlab.models.word2vec."""

from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf

from seqlab.data.corpus import skipgram_dataset
from seqlab.lessons.nb06 import SkipGram, build_word2vec_classifier
from seqlab.models.word2vec import analogy, analogy_rank, nearest_neighbours, pca_2d


def _inputs():
    return np.array([3, 4, 7]), np.array([[5, 6, 1], [8, 9, 2], [3, 3, 3]])


def test_logits_are_dot_products_of_the_two_tables():
    model = SkipGram(vocab_size=12, embedding_dim=5)
    centre, candidates = _inputs()
    logits = np.asarray(model((centre, candidates)))
    assert logits.shape == (3, 3)
    w = np.asarray(model.target_embedding.embeddings)
    u = np.asarray(model.context_embedding.embeddings)
    np.testing.assert_allclose(logits, np.einsum("bkd,bd->bk", u[candidates], w[centre]), atol=1e-6)
    np.testing.assert_array_equal(model.vectors, w)


def test_save_and_load_round_trip(tmp_path):
    model = SkipGram(vocab_size=12, embedding_dim=5, name="w2v")
    inputs = _inputs()
    before = np.asarray(model(inputs))
    path = tmp_path / "skipgram.keras"
    model.save(path)
    loaded = keras.models.load_model(path)
    assert isinstance(loaded, SkipGram) and loaded.get_config()["embedding_dim"] == 5
    np.testing.assert_allclose(np.asarray(loaded(inputs)), before, atol=1e-6)


def test_training_pulls_words_with_shared_contexts_together():
    """Two 'synonyms' that only ever appear between the same neighbours end up close."""
    rng = np.random.default_rng(0)
    sequences = []
    for _ in range(300):
        a = int(rng.choice([2, 3]))          # 2 and 3 share the contexts 4 _ 5
        b = int(rng.choice([6, 7]))          # 6 and 7 share the contexts 8 _ 9
        sequences += [[4, a, 5], [8, b, 9]]
    dataset = skipgram_dataset(sequences, window_size=1, num_negatives=3, vocab_size=10,
                               batch_size=64, seed=1)
    keras.utils.set_random_seed(1)
    model = SkipGram(vocab_size=10, embedding_dim=8)
    model.compile(keras.optimizers.Adam(0.05), keras.losses.BinaryCrossentropy(from_logits=True))
    model.fit(dataset, epochs=8, verbose=0)
    vocabulary = [str(i) for i in range(10)]
    assert nearest_neighbours(model.vectors, vocabulary, "2", k=1)[0][0] == "3"
    assert nearest_neighbours(model.vectors, vocabulary, "6", k=1)[0][0] == "7"


def test_neighbours_and_analogies_on_known_vectors():
    vocabulary = ["", "[UNK]", "king", "queen", "man", "woman", "apple"]
    vectors = np.array([[0, 0, 0], [0, 0, 0], [1, 1, 0], [1, -1, 0], [0, 1, 0.1], [0, -1, 0.1],
                        [0, 0, 1]], dtype=float)
    assert [w for w, _ in nearest_neighbours(vectors, vocabulary, "king", k=2)] == ["man", "queen"]
    assert analogy(vectors, vocabulary, "man", "woman", "king", k=1)[0][0] == "queen"
    assert analogy_rank(vectors, vocabulary, "man", "woman", "king", "queen") == 1
    assert analogy_rank(vectors, vocabulary, "man", "woman", "king", "apple") == 2
    with pytest.raises(KeyError, match="not in the vocabulary"):
        nearest_neighbours(vectors, vocabulary, "prince")


def test_pca_finds_the_direction_of_largest_spread():
    rng = np.random.default_rng(0)
    points = np.zeros((100, 5))
    points[:, 3] = rng.normal(size=100) * 10
    points[:, 1] = rng.normal(size=100)
    projected = pca_2d(points)
    assert projected.shape == (100, 2)
    assert abs(np.corrcoef(projected[:, 0], points[:, 3])[0, 1]) > 0.999
    assert abs(np.corrcoef(projected[:, 1], points[:, 1])[0, 1]) > 0.99


def test_classifier_uses_the_vectors_frozen_or_trainable():
    texts = ["a good film", "a bad film", "good good", "bad"]
    vectorizer = keras.layers.TextVectorization(output_mode="int")
    vectorizer.adapt(texts)
    vectors = np.random.default_rng(0).normal(size=(vectorizer.vocabulary_size(), 4))
    frozen = build_word2vec_classifier(vectorizer, vectors)
    assert frozen(tf.constant(texts)).shape == (4, 1)
    np.testing.assert_allclose(np.asarray(frozen.get_layer("word_vectors").embeddings), vectors,
                               atol=1e-6)
    assert frozen.get_layer("word_vectors").trainable is False
    trainable = build_word2vec_classifier(vectorizer, vectors, trainable=True)
    assert len(trainable.trainable_weights) == len(frozen.trainable_weights) + 1


def test_classifier_save_and_load_round_trip(tmp_path):
    texts = ["a good film", "a bad film"]
    vectorizer = keras.layers.TextVectorization(output_mode="int")
    vectorizer.adapt(texts)
    vectors = np.random.default_rng(1).normal(size=(vectorizer.vocabulary_size(), 4))
    model = build_word2vec_classifier(vectorizer, vectors, trainable=True)
    before = np.asarray(model(tf.constant(texts)))
    model.save(tmp_path / "classifier.keras")
    loaded = keras.models.load_model(tmp_path / "classifier.keras")
    np.testing.assert_allclose(np.asarray(loaded(tf.constant(texts))), before, atol=1e-6)
