"""seqlab.data.corpus: the unlabelled review corpus and the skip-gram tf.data pipeline."""

from __future__ import annotations

import socket

import numpy as np
import pytest
import tensorflow as tf

from seqlab.data import DownloadError
from seqlab.data.corpus import (
    cbow_examples,
    load_review_corpus,
    log_uniform_probabilities,
    sample_log_uniform,
    skipgram_dataset,
    skipgram_pairs,
)
from seqlab.data.imdb import read_sample_split


def test_generated_corpus_is_seeded_and_not_the_labelled_sample():
    texts = load_review_corpus("sample", num_reviews=200)
    assert len(texts) == 200 and all(isinstance(t, str) and t for t in texts)
    assert texts == load_review_corpus("sample", num_reviews=200)
    assert texts != load_review_corpus("sample", num_reviews=200, seed=1)
    labelled, _ = read_sample_split("test")
    assert not set(texts) & set(labelled)


@pytest.mark.parametrize("kwargs, message", [({"source": "imdb"}, "Unknown corpus source"),
                                              ({"source": "sample", "num_reviews": 0}, "positive")])
def test_bad_arguments_get_one_clear_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        load_review_corpus(**kwargs)


def test_tfds_offline_raises_download_error_naming_fast_mode(tmp_path, monkeypatch):
    def no_network(*args, **kwargs):
        raise socket.gaierror(-2, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    with pytest.raises(DownloadError, match="imdb_reviews.*SEQLAB_FAST=1"):
        load_review_corpus("tfds", data_dir=tmp_path)


def _pairs_reference(ids, window):
    ids = [i for i in ids if i > 0]
    return sorted((ids[i], ids[j]) for i in range(len(ids))
                  for j in range(max(0, i - window), min(len(ids), i + window + 1)) if j != i)


@pytest.mark.parametrize("window", [1, 2, 5])
def test_skipgram_pairs_equal_the_window_definition(window):
    rng = np.random.default_rng(window)
    ids = np.concatenate([rng.integers(1, 50, size=17), np.zeros(4, int)])  # padding at the end
    centres, contexts = skipgram_pairs(ids, window)
    got = sorted(zip(centres.numpy().tolist(), contexts.numpy().tolist(), strict=True))
    assert got == _pairs_reference(ids.tolist(), window)


def test_skipgram_pairs_reject_bad_input():
    with pytest.raises(ValueError, match="window_size"):
        skipgram_pairs([1, 2, 3], 0)
    with pytest.raises(ValueError, match="1-D"):
        skipgram_pairs([[1, 2], [3, 4]], 1)


def test_log_uniform_draws_follow_tf_random_log_uniform_candidate_sampler():
    """Our vectorised draw has the law of TF's sampler (its expected counts, unique=False)."""
    vocab = 50
    draws = sample_log_uniform((200_000,), vocab, seed=(1, 2)).numpy()
    assert draws.min() >= 0 and draws.max() < vocab
    frequencies = np.bincount(draws, minlength=vocab) / draws.size
    true_classes = tf.constant([[0]], tf.int64)
    _, _, sampled_expected = tf.random.log_uniform_candidate_sampler(
        true_classes, num_true=1, num_sampled=vocab, unique=False, range_max=vocab, seed=0)
    # sampled_expected_count = num_sampled * P(candidate); ours for the same ids:
    sampled, _, expected = tf.random.log_uniform_candidate_sampler(
        true_classes, 1, 1000, unique=False, range_max=vocab, seed=0)
    tf_probabilities = expected.numpy() / 1000
    np.testing.assert_allclose(log_uniform_probabilities(vocab)[sampled.numpy()], tf_probabilities,
                               rtol=1e-5)
    np.testing.assert_allclose(frequencies, log_uniform_probabilities(vocab), atol=3e-3)
    assert sampled_expected.shape == (vocab,)


def test_skipgram_dataset_batches_positive_pairs_then_negatives():
    sequences = [[2, 3, 4, 5, 0, 0], [6, 7, 1, 8, 9, 0], [2, 9, 3, 8, 4, 7]]
    vocab = 12
    dataset = skipgram_dataset(sequences, window_size=2, num_negatives=3, vocab_size=vocab,
                               batch_size=4, seed=7)
    true_pairs = set()
    for ids in sequences:
        kept = [i if i >= 2 else 0 for i in ids]
        true_pairs |= set(_pairs_reference(kept, 2))
    batches = list(dataset)
    assert batches and len(batches) == int(dataset.cardinality())
    for (centre, candidates), labels in batches:
        assert centre.shape == (4,) and candidates.shape == (4, 4) and labels.shape == (4, 4)
        np.testing.assert_array_equal(labels.numpy(), [[1, 0, 0, 0]] * 4)
        for c, row in zip(centre.numpy(), candidates.numpy(), strict=True):
            assert (int(c), int(row[0])) in true_pairs
            assert all(2 <= n < vocab for n in row[1:])
    # the unknown-word id 1 never becomes a centre or a context
    assert all(1 not in (int(c), int(r[0])) for (cs, rs), _ in batches for c, r in zip(cs, rs, strict=True))
    again = list(skipgram_dataset(sequences, 2, 3, vocab, batch_size=4, seed=7))
    np.testing.assert_array_equal(batches[0][0][1].numpy(), again[0][0][1].numpy())


def test_skipgram_dataset_reads_the_texts_once_however_it_is_iterated():
    # The pairs are cached. A look at the first batch used to leave the cache half-written, so
    # TensorFlow threw it away (warning "did not fully read the dataset being cached") and every
    # later pass recomputed the pairs from the texts.
    reads = []

    def count(ids):
        reads.append(1)
        return ids

    texts = tf.data.Dataset.from_tensor_slices(np.arange(2, 402, dtype="int64").reshape(40, 10))
    texts = texts.map(lambda ids: tf.ensure_shape(tf.py_function(count, [ids], tf.int64), [10]))
    dataset = skipgram_dataset(texts, window_size=2, num_negatives=2, vocab_size=500,
                               batch_size=8, shuffle_buffer=16)
    next(iter(dataset))
    for _ in range(2):
        assert sum(1 for _ in dataset) == 40 * 34 // 8   # 34 pairs per text of 10 ids, window 2
    assert len(reads) == 40, f"the 40 texts were read {len(reads)} times"


def test_skipgram_dataset_rejects_bad_settings():
    with pytest.raises(ValueError, match="num_negatives"):
        skipgram_dataset([[2, 3]], 1, 0, 10)
    with pytest.raises(ValueError, match="vocab_size"):
        skipgram_dataset([[2, 3]], 1, 2, 2)


def test_cbow_examples_hold_the_window_around_each_word():
    contexts, centres = cbow_examples([5, 6, 7, 0], window_size=1)
    np.testing.assert_array_equal(centres, [5, 6, 7])
    np.testing.assert_array_equal(contexts, [[0, 6], [5, 7], [6, 0]])


def test_vectorize_ragged_drops_the_padding_and_feeds_the_pipeline():
    import keras

    from seqlab.data.corpus import vectorize_ragged

    texts = ["a b c d", "b c", "d a a", "c"]
    vectorizer = keras.layers.TextVectorization(output_mode="int")
    vectorizer.adapt(texts)
    ids = vectorize_ragged(vectorizer, texts, batch_size=3)
    assert ids.shape[0] == 4 and ids.row_lengths().numpy().tolist() == [4, 2, 3, 1]
    np.testing.assert_array_equal(ids[1].numpy(), vectorizer(["b c"]).numpy()[0, :2])
    dataset = skipgram_dataset(ids, window_size=1, num_negatives=2, vocab_size=6, batch_size=2)
    assert len(list(dataset)) == int(dataset.cardinality()) == (2 * 3 + 2 * 1 + 2 * 2) // 2
