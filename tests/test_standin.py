"""seqlab.data.standin: the stand-in for nnlm-en-dim50, a TF-Hub-format module learned from the
sample reviews."""

import json

import keras
import numpy as np
import pytest
import tensorflow as tf

from seqlab.data import load_imdb, standin
from seqlab.data.imdb import read_sample_split
from seqlab.data.standin import (
    INFO_FILENAME,
    build_standin_text_embedding,
    read_standin_info,
    train_standin_embeddings,
)
from seqlab.data.synthetic_reviews import NEGATIVE_ADJECTIVES, POSITIVE_ADJECTIVES
from seqlab.layers import HubTextEmbedding


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return build_standin_text_embedding(tmp_path_factory.mktemp("standin") / "module")


@pytest.fixture(scope="module")
def module(built):
    return tf.saved_model.load(str(built))


def _unit(module, words):
    vectors = module(tf.constant(words)).numpy()
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_has_the_tf_hub_text_embedding_interface(built, module):
    vectors = module(tf.constant(["a great film", "a dull film", ""]))
    assert vectors.shape == (3, 50) and vectors.dtype == tf.float32
    assert len(module.variables) == 1 and len(module.trainable_variables) == 1
    assert module.trainable_variables[0] is module.variables[0]
    info = read_standin_info(built)
    assert info["documents"] == 700 and 200 < info["vocabulary_size"] < 1000


def test_combines_token_vectors_with_sqrtn_like_nnlm(module):
    great, dull = module(tf.constant(["great", "dull"])).numpy()
    np.testing.assert_allclose(module(tf.constant(["great great"])).numpy()[0],
                               np.sqrt(2.0) * great, rtol=1e-5)
    np.testing.assert_allclose(module(tf.constant(["great  dull"])).numpy()[0],
                               (great + dull) / np.sqrt(2.0), rtol=1e-5)
    np.testing.assert_array_equal(module(tf.constant(["", "   "])).numpy(), 0.0)


def test_splits_on_spaces_only_keeping_case_and_punctuation_like_nnlm(module):
    """nnlm-en-dim50's card: "preprocesses its input by splitting on spaces" -- nothing else."""
    vocabulary, _ = train_standin_embeddings(read_sample_split("train")[0])
    assert {"awful", "Awful.", "A", "a"} <= set(vocabulary)  # case and punctuation kept
    assert {"WONDERFUL", "film!!!", "great,dull"}.isdisjoint(vocabulary)
    tokens = standin.tokenize(tf.constant(["A wonderful  film.", "a WONDERFUL film!!!"]))
    assert tokens.to_list() == [[b"A", b"wonderful", b"film."], [b"a", b"WONDERFUL", b"film!!!"]]
    # Spaces only: a tab or a line break stays inside its token, as "splitting on spaces" says.
    assert standin.tokenize(tf.constant(["good\tfilm bad\nplot"])).to_list() == [
        [b"good\tfilm", b"bad\nplot"]]
    rows = module(tf.constant(["awful", "Awful.", "A wonderful film.", "a WONDERFUL film!!!"]))
    rows = rows.numpy()
    assert not np.allclose(rows[0], rows[1])  # two tokens, two rows
    assert not np.allclose(rows[2], rows[3])  # not lower-cased, punctuation not removed
    # A token glued by punctuation is one unknown token, not two known words.
    great, dull = module(tf.constant(["great", "dull"])).numpy()
    assert not np.allclose(module(tf.constant(["great,dull"])).numpy()[0],
                           (great + dull) / np.sqrt(2.0))


def test_unknown_words_fall_into_out_of_vocabulary_buckets(module):
    table = module.variables[0]
    vocabulary, _ = train_standin_embeddings(read_sample_split("train")[0])
    assert table.shape == (len(vocabulary) + standin.NUM_OOV_BUCKETS, 50)
    # OOV rows start at zero (nothing learned about unseen words); fine-tuning can move them.
    np.testing.assert_array_equal(table.numpy()[len(vocabulary):], 0.0)
    np.testing.assert_array_equal(module(tf.constant(["zyxwvut"])).numpy(), 0.0)


def test_words_used_alike_are_closer_than_unrelated_ones(module):
    vocabulary = set(train_standin_embeddings(read_sample_split("train")[0])[0])

    def known(words):  # lower-case words that the sample also uses bare (no punctuation)
        return [word for word in words if word in vocabulary]

    positive = _unit(module, known(POSITIVE_ADJECTIVES))
    negative = _unit(module, known(NEGATIVE_ADJECTIVES))
    unrelated = _unit(module, known(["sister", "rainy", "cinema", "novel", "heist", "desert",
                                     "farmer"]))

    def mean_off_diagonal(a):
        similarity = a @ a.T
        return similarity[np.triu_indices(len(a), 1)].mean()

    same_polarity = (mean_off_diagonal(positive) + mean_off_diagonal(negative)) / 2
    opposite_polarity = (positive @ negative.T).mean()
    adjective_to_unrelated = (np.vstack([positive, negative]) @ unrelated.T).mean()
    # A small margin: with punctuation kept, "awful" and "awful." split a word's counts.
    assert same_polarity > opposite_polarity + 0.02
    assert opposite_polarity > adjective_to_unrelated + 0.1
    great, wonderful, sister = _unit(module, ["great", "wonderful", "sister"])
    assert great @ wonderful > great @ sister + 0.2


def test_builds_are_deterministic(tmp_path, built):
    again = build_standin_text_embedding(tmp_path / "again")
    first, second = tf.saved_model.load(str(built)), tf.saved_model.load(str(again))
    np.testing.assert_array_equal(first.variables[0].numpy(), second.variables[0].numpy())
    assert read_standin_info(built)["fingerprint"] == read_standin_info(again)["fingerprint"]


def test_cached_copy_is_reused_and_rebuilt_when_stale_or_missing(tmp_path, monkeypatch, capsys):
    path = tmp_path / "module"
    texts = read_sample_split("train")[0][:300]
    build_standin_text_embedding(path, texts=texts)
    assert "stand-in" in capsys.readouterr().out
    stamp = (path / "saved_model.pb").stat().st_mtime_ns

    build_standin_text_embedding(path, texts=texts)  # up to date: nothing to do
    assert capsys.readouterr().out == ""
    assert (path / "saved_model.pb").stat().st_mtime_ns == stamp

    build_standin_text_embedding(path, texts=texts[:-1])  # the corpus changed
    assert "Built the stand-in" in capsys.readouterr().out

    monkeypatch.setattr(standin, "FORMAT_VERSION", standin.FORMAT_VERSION + 1)
    build_standin_text_embedding(path, texts=texts[:-1])  # the code changed
    assert "Built the stand-in" in capsys.readouterr().out
    info = json.loads((path / INFO_FILENAME).read_text())
    assert info["format_version"] == standin.FORMAT_VERSION
    assert "stand-in" in info["what"]

    (path / "saved_model.pb").unlink()  # damaged cache
    build_standin_text_embedding(path, texts=texts[:-1])
    assert (path / "saved_model.pb").is_file()
    assert not list(tmp_path.glob(".module.building-*")), "staging folder left behind"


def test_refuses_a_corpus_too_small_for_the_dimension():
    with pytest.raises(ValueError, match="dim=50"):
        train_standin_embeddings(["a tiny corpus", "a tiny corpus"])


def test_a_frozen_classifier_on_the_stand_in_beats_chance(built):
    keras.utils.set_random_seed(0)
    train, valid, _ = load_imdb("sample", batch_size=32)
    model = keras.Sequential([
        keras.Input(shape=(), dtype="string"),
        HubTextEmbedding(str(built), trainable=False),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),
    ])
    model.compile(keras.optimizers.Adam(1e-3), loss="binary_crossentropy", metrics=["accuracy"])
    model.fit(train, epochs=5, verbose=0)
    _, accuracy = model.evaluate(valid, verbose=0)
    assert accuracy > 0.62, accuracy  # 150 balanced reviews: chance is 0.5 (+-0.04)
