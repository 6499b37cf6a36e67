"""seqlab.data.corpus_chars: the generated play, the character vocabulary, truncated-BPTT batches."""

from __future__ import annotations

import re
import socket

import numpy as np
import pytest

from seqlab.data import DownloadError
from seqlab.data.corpus_chars import (
    CAST,
    CharVocabulary,
    generate_play,
    load_char_corpus,
    split_text,
    tbptt_dataset,
)


def test_the_play_is_seeded_and_has_the_tiny_shakespeare_layout():
    text = generate_play(5000)
    assert text == generate_play(5000) and text != generate_play(5000, seed=1)
    assert len(text) >= 5000
    speeches = [s for s in text.split("\n\n") if s]
    speakers = [s.split(":\n")[0] for s in speeches]
    assert set(speakers) <= set(CAST)
    assert all(a != b for a, b in zip(speakers, speakers[1:], strict=False)), "no one speaks twice in a row"
    assert all(re.fullmatch(r"[A-Z]+:\n(.+\n)*.+[.!]", s) for s in speeches)


def test_vocabulary_round_trip_and_unknown_characters():
    vocab = CharVocabulary.from_text("hello")
    assert len(vocab) == 5  # unknown + e h l o
    assert vocab.decode(vocab.encode("hello")) == "hello"
    assert vocab.encode("hex").tolist()[-1] == 0


def test_split_keeps_the_end_for_validation():
    train, valid = split_text("abcdefghij", 0.2)
    assert (train, valid) == ("abcdefgh", "ij")
    with pytest.raises(ValueError):
        split_text("abc", 1.5)


def test_tbptt_batches_continue_each_stream_and_targets_are_shifted():
    ids = np.arange(1, 1001)
    batches = list(tbptt_dataset(ids, batch_size=4, steps=10))
    assert len(batches) == (999 // 4) // 10
    for x, y in batches:
        assert x.shape == (4, 10) and y.shape == (4, 10)
        np.testing.assert_array_equal(y.numpy(), x.numpy() + 1)   # next id
    for first, second in zip(batches, batches[1:], strict=False):
        np.testing.assert_array_equal(second[0].numpy()[:, 0], first[0].numpy()[:, -1] + 1)


def test_tbptt_rejects_too_little_text():
    with pytest.raises(ValueError, match="too few"):
        tbptt_dataset(np.arange(20), batch_size=4, steps=10)


def test_tfds_offline_raises_download_error_naming_fast_mode(tmp_path, monkeypatch):
    def no_network(*args, **kwargs):
        raise socket.gaierror(-2, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    with pytest.raises(DownloadError, match="tiny_shakespeare.*SEQLAB_FAST=1"):
        load_char_corpus("tfds", data_dir=tmp_path)
    with pytest.raises(ValueError, match="Unknown text source"):
        load_char_corpus("books")
