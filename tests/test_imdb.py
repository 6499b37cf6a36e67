"""seqlab.data.load_imdb: the offline sample and the TFDS path (whose download must fail clearly here)."""

import socket

import numpy as np
import pytest
import tensorflow as tf

from seqlab.data import DownloadError, load_imdb
from seqlab.data.imdb import TFDS_SPLITS, read_sample_split


def _examples(dataset):
    texts, labels = [], []
    for text, label in dataset:
        texts += [t.decode("utf-8") for t in text.numpy()]
        labels += label.numpy().tolist()
    return texts, labels


def test_sample_splits_have_the_committed_sizes_dtypes_and_balance():
    splits = load_imdb("sample", batch_size=64)
    sizes = {}
    for name, dataset in splits._asdict().items():
        text_spec, label_spec = dataset.element_spec
        assert text_spec.dtype == tf.string and text_spec.shape.as_list() == [None]
        assert label_spec.dtype == tf.int64 and label_spec.shape.as_list() == [None]
        texts, labels = _examples(dataset)
        sizes[name] = len(texts)
        assert labels.count(1) == labels.count(0), name
    assert sizes == {"train": 700, "valid": 150, "test": 150}


def test_sample_batches_and_prefetches():
    train, _, _ = load_imdb("sample", batch_size=32)
    batch_sizes = [int(text.shape[0]) for text, _ in train]
    assert batch_sizes[:-1] == [32] * (len(batch_sizes) - 1) and sum(batch_sizes) == 700
    # prefetch is the last stage of the pipeline
    assert "Prefetch" in type(train).__name__


def test_training_order_is_seeded_and_reshuffled_each_epoch_but_evaluation_is_fixed():
    first = load_imdb("sample", seed=1)
    again = load_imdb("sample", seed=1)
    other = load_imdb("sample", seed=2)
    epoch_1 = _examples(first.train)[0]
    assert epoch_1 == _examples(again.train)[0]
    assert epoch_1 != _examples(other.train)[0]
    assert epoch_1 != _examples(first.train)[0]  # second epoch of the same pipeline
    assert sorted(epoch_1) == sorted(read_sample_split("train")[0])
    assert _examples(first.test) == _examples(other.test)
    assert _examples(first.valid)[0] == read_sample_split("valid")[0]


def test_unknown_source_lists_the_valid_ones():
    with pytest.raises(ValueError, match=r"'tfds', 'sample'"):
        load_imdb("kaggle")


def test_batch_size_must_be_positive():
    with pytest.raises(ValueError, match="batch_size"):
        load_imdb("sample", batch_size=0)


def test_missing_sample_file_says_how_to_regenerate(tmp_path):
    with pytest.raises(FileNotFoundError, match="seqlab_instructor.imdb_sample"):
        load_imdb("sample", data_dir=tmp_path)


def test_tfds_split_follows_the_case_study():
    assert TFDS_SPLITS == ("train[:70%]", "train[70%:]", "test")


def test_tfds_without_network_fails_fast_with_one_clear_error(tmp_path, monkeypatch):
    """An empty TFDS data_dir forces a download; offline that must fail at once and explain FAST mode."""

    def no_network(*args, **kwargs):
        raise socket.gaierror(-2, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    with pytest.raises(DownloadError) as caught:
        load_imdb("tfds", data_dir=tmp_path)
    message = str(caught.value)
    assert "imdb_reviews" in message and "SEQLAB_FAST=1" in message
    assert isinstance(caught.value, ConnectionError)
    assert isinstance(caught.value.__cause__, OSError)


def test_tfds_download_errors_become_the_same_clear_error(tmp_path, monkeypatch):
    """Failures inside TFDS's own download (after the name lookup) are translated too."""
    import requests
    import tensorflow_datasets as tfds

    monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: [])

    def refuse(self, *args, **kwargs):
        raise requests.exceptions.ConnectionError("Max retries exceeded with url: aclImdb_v1.tar.gz")

    monkeypatch.setattr(tfds.core.DatasetBuilder, "download_and_prepare", refuse)
    with pytest.raises(DownloadError, match="Max retries exceeded.*SEQLAB_FAST=1"):
        load_imdb("tfds", data_dir=tmp_path)


def test_labels_are_zero_or_one_and_texts_non_empty():
    texts, labels = read_sample_split("test")
    assert set(labels) == {0, 1}
    assert all(text.strip() for text in texts)
    assert np.mean([len(t.split()) for t in texts]) > 10
