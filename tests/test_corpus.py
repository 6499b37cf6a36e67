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
    pair_offsets,
    sample_log_uniform,
    skipgram_dataset,
    skipgram_pair_positions,
    subsample,
    subsampling_keep_probabilities,
    unigram_noise_probabilities,
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


@pytest.mark.parametrize("window", [1, 2, 3, 5])
def test_skipgram_pair_positions_are_the_pairs_of_each_text(window):
    rng = np.random.default_rng(window)
    texts = [rng.integers(0, 9, size=n).tolist() for n in (0, 1, 2, 7, 12)]   # 0, 1: dropped
    texts.append([*rng.integers(2, 50, size=17).tolist(), 0, 0, 0, 0])        # padding at the end
    tokens, pairs = skipgram_pair_positions(tf.ragged.constant(texts, tf.int64), window, min_id=2)
    offsets = pair_offsets(window)
    positions, kinds = pairs // (2 * window), pairs % (2 * window)
    got = sorted(zip(tokens[positions].tolist(), tokens[positions + offsets[kinds]].tolist(),
                     strict=True))
    expected = sorted(p for ids in texts
                      for p in _pairs_reference([i if i >= 2 else 0 for i in ids], window))
    assert got == expected and tokens.dtype == np.int32


def test_each_epoch_uses_every_pair_once_in_a_new_order_with_new_negatives():
    sequences = [[2, 3, 4, 5, 6, 7], [8, 9, 10, 11]]             # 2·(5 + 4) + 2·(3 + 2) = 28 pairs
    dataset = skipgram_dataset(sequences, window_size=2, num_negatives=3, vocab_size=40,
                               batch_size=7, seed=5)
    epochs = [[(c.numpy(), x.numpy()) for (c, x), _ in dataset] for _ in range(2)]
    expected = sorted(p for ids in sequences for p in _pairs_reference(ids, 2))
    for epoch in epochs:
        assert len(epoch) == int(dataset.cardinality()) == 4
        pairs = [(int(c), int(row[0])) for centres, rows in epoch for c, row in
                 zip(centres, rows, strict=True)]
        assert sorted(pairs) == expected
    first, second = (np.concatenate([x for _, x in epoch]) for epoch in epochs)
    assert not np.array_equal(first[:, 0], second[:, 0])     # another order
    assert not np.array_equal(first[:, 1:], second[:, 1:])   # other negatives


def test_skipgram_dataset_rejects_bad_settings():
    with pytest.raises(ValueError, match="num_negatives"):
        skipgram_dataset([[2, 3]], 1, 0, 10)
    with pytest.raises(ValueError, match="vocab_size"):
        skipgram_dataset([[2, 3]], 1, 2, 2)
    with pytest.raises(ValueError, match="window_size"):
        skipgram_dataset([[2, 3]], 0, 2, 10)


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


# ------------------------------------------------------------ the paper's noise and subsampling


def test_unigram_noise_is_the_three_quarter_power_renormalised():
    counts = np.array([800, 100, 10, 1])
    noise = unigram_noise_probabilities(counts)
    np.testing.assert_allclose(noise, counts ** 0.75 / np.sum(counts ** 0.75))
    unigram = counts / counts.sum()
    assert noise[0] < unigram[0] and noise[-1] > unigram[-1]  # flatter than the unigram law
    np.testing.assert_allclose(unigram_noise_probabilities(counts, power=1.0), unigram)
    np.testing.assert_allclose(unigram_noise_probabilities(counts, power=0.0), 0.25)


def test_subsampling_keeps_rare_words_and_thins_frequent_ones():
    counts = np.array([9000, 900, 90, 10])          # frequencies 0.9, 0.09, 0.009, 0.001
    keep = subsampling_keep_probabilities(counts, threshold=1e-3)
    np.testing.assert_allclose(keep, [np.sqrt(1e-3 / 0.9), np.sqrt(1e-3 / 0.09),
                                      np.sqrt(1e-3 / 0.009), 1.0])
    np.testing.assert_array_equal(subsampling_keep_probabilities(np.array([5, 0])), [np.sqrt(1e-5 / 1.0), 1.0])


def test_subsample_draws_once_per_token_with_the_given_probabilities():
    sequences = tf.ragged.constant([[2, 3] * 5000, [3, 4, 2]], tf.int64)
    kept = subsample(sequences, np.array([1.0, 1.0, 0.25, 1.0, 0.0]), seed=3)
    assert kept.shape[0] == 2
    values = kept.flat_values.numpy()
    assert 4 not in values and np.sum(values == 3) == 5001
    assert abs(np.sum(values == 2) / 5001 - 0.25) < 0.03
    np.testing.assert_array_equal(kept.flat_values, subsample(sequences, np.array(
        [1.0, 1.0, 0.25, 1.0, 0.0]), seed=3).flat_values)  # seeded


def test_skipgram_dataset_draws_negatives_from_given_probabilities_and_subsamples():
    rng = np.random.default_rng(0)
    sequences = [list(rng.integers(2, 12, size=60)) for _ in range(40)]
    noise = np.zeros(12)
    noise[[5, 9]] = [0.75, 0.25]
    dataset = skipgram_dataset(sequences, 2, 4, 12, batch_size=64, seed=1,
                               negative_probabilities=noise)
    negatives = np.concatenate([c[:, 1:].numpy().ravel() for (_, c), _ in dataset])
    assert set(np.unique(negatives)) == {5, 9}
    assert abs(np.mean(negatives == 5) - 0.75) < 0.05

    keep = np.ones(12)
    keep[7] = 0.0                                     # word 7 is always discarded
    thinned = skipgram_dataset(sequences, 2, 4, 12, batch_size=64, seed=1, keep_probabilities=keep)
    pairs = [(c.numpy(), x[:, 0].numpy()) for (c, x), _ in thinned]
    assert not any((7 in centres) or (7 in contexts) for centres, contexts in pairs)
    assert int(thinned.cardinality()) < int(skipgram_dataset(sequences, 2, 4, 12, batch_size=64,
                                                             seed=1).cardinality())
    with pytest.raises(ValueError, match="one per id"):
        skipgram_dataset(sequences, 2, 4, 12, negative_probabilities=noise[:5])
