"""seqlab.data.translation: standardisation, vectorisation, splits, datasets, the Anki download."""

from __future__ import annotations

import hashlib
import unicodedata
import zipfile

import keras
import numpy as np
import pytest
import tensorflow as tf

from seqlab.data import translation, translation_batches
from seqlab.data.download import DownloadError
from seqlab.data.translation import load_translation, read_pairs, resolve_anki_file
from seqlab.data.translation_text import (
    END,
    START,
    detokenize,
    standardize_reference,
    standardize_text,
    standardize_with_markers,
)

TRICKY = ["¿Qué hora es?", "Él ESTÁ, aquí! 3.3.2021", "naïve café—ok", "  spaces   everywhere ",
          "Año NUEVO: ¡FELIZ!", "don't stop-now", "ﬁne ½", "Übung macht den Meister.", ""]


def _standardize(texts):
    return [s.decode("utf-8") for s in standardize_with_markers(tf.constant(texts)).numpy()]


def test_standardize_spaces_punctuation_lowercases_and_adds_markers():
    assert _standardize(["¿Qué hora es?"]) == [f"{START} ¿ " + unicodedata.normalize(
        "NFKD", "qué") + f" hora es ? {END}"]


def test_standardize_is_nfkd_and_keeps_accents_decomposed():
    (text,) = _standardize(["Él está aquí"])
    assert text == unicodedata.normalize("NFKD", f"{START} él está aquí {END}")
    assert "\u0301" in text  # the combining acute accent survives


def test_standardize_drops_other_symbols_as_word_breaks():
    assert _standardize(["naïve café—ok"])[0].split()[1:-1] == [
        unicodedata.normalize("NFKD", w) for w in ("naïve", "café", "ok")]


def test_empty_text_standardizes_to_the_markers_only():
    assert _standardize([""]) == [f"{START} {END}"]


def test_python_twin_equals_tensorflow_standardisation_on_the_whole_sample():
    pairs = read_pairs(translation.config.DATA_DIR / translation.SAMPLE_FILE)
    texts = [t for pair in pairs for t in pair] + TRICKY
    got = _standardize(texts)
    expected = [" ".join([START, *standardize_text(t).split(), END]) for t in texts]
    assert got == expected


def test_detokenize_reattaches_punctuation_and_composes_accents():
    tokens = standardize_text("Hola, ¿qué tal? Bien!").split()
    assert detokenize([START, *tokens, END, ""]) == "hola, ¿qué tal? bien!"
    assert detokenize(["2021", "-", "03", "-", "03", END]) == "2021-03-03"
    assert standardize_reference("¿Dónde está la estación?") == "¿dónde está la estación?"


@pytest.fixture(scope="module")
def sample():
    return load_translation("sample", batch_size=16)


def test_sample_split_is_80_10_10_seeded_and_reproducible(sample):
    assert (len(sample.train_pairs), len(sample.valid_pairs), len(sample.test_pairs)) == (320, 40, 40)
    again = load_translation("sample", batch_size=16)
    assert again.test_pairs == sample.test_pairs
    other = load_translation("sample", batch_size=16, seed=7)
    assert other.test_pairs != sample.test_pairs
    everything = sample.train_pairs + sample.valid_pairs + sample.test_pairs
    assert len(set(everything)) == len(everything) == 400


def test_datasets_yield_teacher_forcing_batches(sample):
    (source, target_in), target_out = next(iter(sample.train))
    assert source.shape == (16, sample.info["source_length"]) and source.dtype == tf.int32
    assert target_in.shape == target_out.shape == (16, sample.info["target_length"])
    # Padded to the longest sentence of the corpus, which here is shorter than max_length.
    longest = max(len(standardize_text(e).split()) for e, _ in sample.train_pairs + sample.valid_pairs
                  + sample.test_pairs) + 2
    assert sample.info["source_length"] == longest < sample.max_length
    assert np.all(target_in.numpy()[:, 0] == sample.start_id)
    # target_out is target_in shifted left by one; it ends with [END] where target_in has none.
    np.testing.assert_array_equal(target_out.numpy()[:, :-1][target_in.numpy()[:, 1:] != 0],
                                  target_in.numpy()[:, 1:][target_in.numpy()[:, 1:] != 0])
    assert np.all((target_out.numpy() == sample.end_id).sum(axis=1) == 1)


def test_vectorization_round_trip_gives_back_the_standardized_tokens(sample):
    vocabulary = np.array(sample.source_vectorizer.get_vocabulary())
    (source, _), _ = next(iter(sample.test))
    for row, (english, _) in zip(source.numpy(), sample.test_pairs, strict=False):
        tokens = list(vocabulary[row[row != 0]])
        expected = [START, *standardize_text(english).split(), END]
        assert [t if t != "[UNK]" else None for t in tokens] == [
            t if t in vocabulary else None for t in expected]


def test_vocab_size_caps_the_vocabulary():
    data = load_translation("sample", vocab_size=50)
    assert data.source_vocab_size == data.target_vocab_size == 50


def test_direction_spa_eng_swaps_the_languages(sample):
    reverse = load_translation("sample", direction="spa-eng", batch_size=16)
    assert reverse.test_pairs == [(s, e) for e, s in sample.test_pairs]
    assert "¿" in reverse.source_vectorizer.get_vocabulary()


def test_pairs_longer_than_max_length_are_dropped_not_cut():
    data = load_translation("sample", max_length=6)
    assert data.info["dropped"] > 0
    assert all(len(standardize_text(s).split()) + 2 <= 6 for s, _ in data.test_pairs)


@pytest.mark.parametrize("kwargs", [{"source": "wikipedia"}, {"direction": "eng-fra"},
                                    {"max_length": 1}])
def test_bad_arguments_are_refused(kwargs):
    with pytest.raises(ValueError):
        load_translation(**{"source": "sample", **kwargs})


# ---- the Anki download, offline -----------------------------------------------------------


def _make_zip(folder, lines):
    archive = folder / "spa-eng.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr("spa-eng/spa.txt", "\n".join(lines) + "\n")
        handle.writestr("spa-eng/_about.txt", "test archive")
    return archive


LINES = ["Go.\tVe.", "Thank you.\tGracias.\tCC-BY attribution", "Hello!\t¡Hola!", "broken line"]


def test_resolve_handles_keras_36_extraction_folder_and_old_archive_path(tmp_path):
    extracted = tmp_path / "spa-eng_extracted" / "spa-eng"
    extracted.mkdir(parents=True)
    (extracted / "spa.txt").write_text("a\tb\n", encoding="utf-8")
    assert resolve_anki_file(tmp_path / "spa-eng_extracted") == extracted / "spa.txt"
    old = tmp_path / "old"
    (old / "spa-eng").mkdir(parents=True)
    (old / "spa-eng" / "spa.txt").write_text("a\tb\n", encoding="utf-8")
    (old / "spa-eng.zip").write_bytes(b"")
    assert resolve_anki_file(old / "spa-eng.zip") == old / "spa-eng" / "spa.txt"
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError):
        resolve_anki_file(empty)


def test_download_anki_from_a_local_zip_with_keras_get_file(tmp_path):
    archive = _make_zip(tmp_path, LINES)
    text_digest = hashlib.sha256(("\n".join(LINES) + "\n").encode()).hexdigest()
    path = translation.download_anki(origin=archive.as_uri(), cache_dir=tmp_path / "cache",
                                     text_sha256=text_digest)
    assert path.name == "spa.txt" and path.parent.name == "spa-eng"
    assert read_pairs(path) == [("Go.", "Ve."), ("Thank you.", "Gracias."), ("Hello!", "¡Hola!")]


def test_an_extracted_file_that_is_not_the_known_anki_text_is_refused(tmp_path):
    # A fake archive stands in for a changed or truncated download: its spa.txt cannot have
    # the real file's sha256, which is the default check.
    archive = _make_zip(tmp_path, LINES)
    with pytest.raises(DownloadError, match="is not the known file") as refused:
        translation.download_anki(origin=archive.as_uri(), cache_dir=tmp_path / "cache")
    message = str(refused.value)
    assert translation.ANKI_TEXT_SHA256 in message
    assert "4 lines, expected 118,964" in message and "SEQLAB_FAST=1" in message
    # load_pairs goes through the same check: the file is never read into pairs.
    with pytest.raises(DownloadError, match="is not the known file"):
        translation.load_pairs("anki", cache_dir=tmp_path / "cache")


def test_failed_download_raises_one_error_that_says_how_to_work_offline(tmp_path):
    with pytest.raises(DownloadError, match="SEQLAB_FAST=1") as raised:
        translation.download_anki(origin=(tmp_path / "missing.zip").as_uri(),
                                  cache_dir=tmp_path / "cache")
    assert "source='sample'" in str(raised.value)


def test_load_translation_anki_uses_the_downloaded_file(tmp_path, monkeypatch):
    lines = [f"I see {n} birds.\tVeo {n} pájaros." for n in range(40)]
    extracted = resolve_anki_file  # keep the real resolver in the loop
    archive = _make_zip(tmp_path, lines)

    def fake_download(**kwargs):
        (tmp_path / "cache").mkdir(exist_ok=True)
        downloaded = keras.utils.get_file("spa-eng.zip", origin=archive.as_uri(), extract=True,
                                          cache_dir=str(tmp_path / "cache"))
        return extracted(downloaded)

    monkeypatch.setattr(translation, "download_anki", fake_download)
    data = load_translation("anki", batch_size=4)
    assert len(data.train_pairs) == 32 and len(data.test_pairs) == 4
    assert data.test_pairs[0][1].startswith("Veo")
    # The real corpus's training batches are grouped by length by default.
    assert data.info["bucket_widths"] is not None
    assert int(data.train.cardinality()) == 8
    assert all(y.shape[0] == 4 for _, y in data.train)


@pytest.mark.parametrize("vocab_size", [2, 4, 0, 8.5])
def test_a_vocabulary_too_small_for_the_special_tokens_is_one_clear_error(vocab_size):
    with pytest.raises(ValueError, match=r"vocab_size must be an integer of at least 5 \(padding"):
        load_translation("sample", vocab_size=vocab_size)


def test_the_smallest_vocabulary_still_loads():
    data = load_translation("sample", vocab_size=5)
    assert data.source_vocab_size == data.target_vocab_size == 5


# ---- training batches grouped by length ----------------------------------------------------


def test_bucket_widths_step_by_two_up_to_the_longest_pair():
    assert translation_batches.bucket_widths(20) == [6, 8, 10, 12, 14, 16, 18, 20]
    assert translation_batches.bucket_widths(11) == [6, 8, 10, 11]
    assert translation_batches.bucket_widths(5) == [5]


def test_buckets_too_small_for_a_batch_merge_into_wider_ones():
    lengths = np.array([5] * 3 + [7] * 4 + [9] * 2 + [12] * 1)  # buckets 6, 8, 10, 12
    assert translation_batches.fitted_bucket_widths(lengths, 3, longest=12) == [6, 8, 12]
    # The one pair of 12 fills no batch: the bucket of 10 widens to hold it.
    assert translation_batches.fitted_bucket_widths(lengths, 2, longest=12) == [6, 8, 12]
    assert translation_batches.fitted_bucket_widths(lengths, 4, longest=12) == [12]
    assert translation_batches.fitted_bucket_widths(lengths, 100, longest=12) == [12]


@pytest.fixture(scope="module")
def bucketed():
    return load_translation("sample", batch_size=16, bucket=True)


def _rows(source, target_in, target_out):
    """Each row as its real tokens: (source ids, target ids with [START] and [END])."""
    rows = []
    for s, t_in, t_out in zip(source, target_in, target_out, strict=True):
        target = [int(t_in[0]), *t_out[t_out != 0].tolist()]
        rows.append((tuple(s[s != 0].tolist()), tuple(target)))
    return rows


def _epoch(dataset):
    shapes, rows = [], []
    for (source, target_in), target_out in dataset:
        shapes.append((source.shape, target_in.shape, target_out.shape))
        rows += _rows(source.numpy(), target_in.numpy(), target_out.numpy())
    return shapes, rows


def test_bucketed_batches_are_full_padded_to_a_bucket_width_and_teacher_forcing(bucketed):
    widths = bucketed.info["bucket_widths"]
    assert set(widths) <= set(translation_batches.bucket_widths(
        max(bucketed.info["source_length"], bucketed.info["target_length"]))) and len(widths) > 1
    shapes, rows = _epoch(bucketed.train)
    # Each bucket leaves out fewer than a batch of pairs per epoch.
    assert len(shapes) == int(bucketed.train.cardinality())
    assert len(bucketed.train_pairs) // 16 - len(widths) < len(shapes) <= len(bucketed.train_pairs) // 16
    for source_shape, in_shape, out_shape in shapes:
        assert source_shape[0] == in_shape[0] == out_shape[0] == 16
        assert in_shape == out_shape and in_shape[1] <= bucketed.info["target_length"]
        width = min(w for w in widths if w >= source_shape[1])
        assert source_shape[1] == min(width, bucketed.info["source_length"])
        assert in_shape[1] == min(width, bucketed.info["target_length"])
    assert len({shape for shape, _, _ in shapes}) > 1  # really grouped: several widths
    for (source, target_in), target_out in bucketed.train.take(3):
        source, target_in, target_out = (t.numpy() for t in (source, target_in, target_out))
        assert np.all(target_in[:, 0] == bucketed.start_id)
        assert np.all((target_out == bucketed.end_id).sum(axis=1) == 1)
        # No batch is padded beyond its bucket: its longest pair needs more than the next
        # narrower width.
        longest = max(int((source != 0).sum(1).max()), int((target_out != 0).sum(1).max()))
        narrower = [w for w in widths if w < source.shape[1]]
        assert not narrower or longest > narrower[-1]


def test_a_bucketed_epoch_draws_each_pair_at_most_once_from_the_same_pairs_as_padded(sample,
                                                                                     bucketed):
    _, padded_rows = _epoch(sample.train)
    _, rows = _epoch(bucketed.train)
    everything = set(_epoch(load_translation("sample", batch_size=1, bucket=False).train)[1])
    assert len(everything) == len(bucketed.train_pairs)
    assert set(rows) <= everything and len(set(rows)) == len(rows) > len(padded_rows) * 0.75
    # Grouping by length costs nothing in variety: each epoch is a new draw and order.
    _, again = _epoch(bucketed.train)
    assert again != rows


def test_bucketed_batches_hold_fewer_padding_positions(sample, bucketed):
    def real_share(dataset):
        labels = [target_out.numpy() for _, target_out in dataset]
        return sum((y != 0).sum() for y in labels) / sum(y.size for y in labels)

    assert real_share(bucketed.train) > real_share(sample.train) + 0.05


def test_bucketing_is_seeded_and_leaves_validation_and_test_alone(sample, bucketed):
    # First epochs of two fresh loads (the fixture's has been iterated before).
    first, again = (load_translation("sample", batch_size=16, bucket=True) for _ in range(2))
    assert _epoch(again.train) == _epoch(first.train)
    for name in ("valid", "test"):
        for (ours, theirs) in zip(getattr(bucketed, name), getattr(sample, name), strict=True):
            for a, b in zip(tf.nest.flatten(ours), tf.nest.flatten(theirs), strict=True):
                np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_only_the_real_corpus_is_bucketed_by_default(sample):
    assert sample.info["bucket_widths"] is None
    with pytest.raises(ValueError, match="do not fill one batch"):
        load_translation("sample", batch_size=512, bucket=True)


@pytest.mark.parametrize("kind", ["rnn", "transformer"])
def test_a_bucketed_batch_has_the_loss_of_the_same_batch_padded_to_full_length(kind, bucketed):
    from seqlab import sizes
    from seqlab.lessons.nb04 import build_rnn_translator
    from seqlab.lessons.nb05 import TransformerTranslator
    from seqlab.training import MaskedSparseCategoricalCrossentropy

    keras.utils.set_random_seed(0)
    if kind == "rnn":
        model = build_rnn_translator(bucketed.source_vocab_size, bucketed.target_vocab_size,
                                     embedding_dim=8, units=8, attention="luong-general",
                                     output_norm=True)
    else:
        model = TransformerTranslator(bucketed.source_vocab_size, bucketed.target_vocab_size,
                                      **sizes.settings("05", "fast").model)
    loss = MaskedSparseCategoricalCrossentropy()
    narrow = next(s for s in bucketed.train if s[0][0].shape[1] < bucketed.info["source_length"])
    (source, target_in), target_out = narrow

    def pad(ids, length):
        return np.pad(ids.numpy(), ((0, 0), (0, length - ids.shape[1])))

    full_source = pad(source, bucketed.info["source_length"])
    full_in = pad(target_in, bucketed.info["target_length"])
    full_out = pad(target_out, bucketed.info["target_length"])
    np.testing.assert_allclose(float(loss(target_out, model((source, target_in)))),
                               float(loss(full_out, model((full_source, full_in)))), rtol=1e-5)
