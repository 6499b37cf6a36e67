"""Notebook 08's masked LM and classifier (seqlab.lessons.nb08, from its #@save cells),
seqlab.models.bert (presets, fill-ins) and seqlab.data.wordpiece; the full-mode loader on an
offline preset directory (notebook 08's checks: test_checks_bert.py)."""

from __future__ import annotations

import socket
import subprocess
import sys

import numpy as np
import pytest

keras_hub = pytest.importorskip(
    "keras_hub", reason="notebook 08 needs keras-hub (requirements.txt declares keras-hub>=0.25.1)")

import keras  # noqa: E402

from seqlab.data import DownloadError  # noqa: E402
from seqlab.data.wordpiece import (  # noqa: E402
    SPECIAL_TOKENS,
    build_wordpiece_vocabulary,
    split_into_pieces,
)
from seqlab.lessons import nb08  # noqa: E402
from seqlab.lessons.nb05 import TransformerEncoderLayer  # noqa: E402
from seqlab.models import bert  # noqa: E402

TEXTS = [
    "the plot is dull and the acting is awful .",
    "the plot is clever and the acting is superb .",
    "i watched it twice for this review .",
    "the costumes are tedious but the music is lovely .",
] * 20


@pytest.fixture(scope="module")
def vocabulary():
    return build_wordpiece_vocabulary(TEXTS, 60)


@pytest.fixture(scope="module")
def masked_lm(vocabulary):
    keras.utils.set_random_seed(0)
    return nb08.masked_lm_from_scratch(vocabulary, sequence_length=16, hidden_dim=16,
                                       num_layers=1, num_heads=2, intermediate_dim=32)


# ------------------------------------------------------------------------------ WordPiece


def test_vocabulary_starts_with_the_special_tokens_and_keeps_frequent_words(vocabulary):
    assert tuple(vocabulary[:len(SPECIAL_TOKENS)]) == SPECIAL_TOKENS
    assert len(vocabulary) <= 60
    for word in ("the", "plot", "acting"):
        assert word in vocabulary
    assert len(set(vocabulary)) == len(vocabulary)


def test_an_unseen_word_is_split_into_pieces_that_spell_it(vocabulary):
    pieces = split_into_pieces(vocabulary, ["plots"])["plots"]
    assert len(pieces) > 1 and all(p.startswith("##") for p in pieces[1:])
    assert "".join(p.removeprefix("##") for p in pieces) == "plots"


@pytest.mark.parametrize("texts, size", [([], 50), (["a b c"], 5), ([b"bytes"], 50)])
def test_bad_vocabulary_arguments_raise_one_clear_error(texts, size):
    with pytest.raises(ValueError, match="texts|vocabulary_size"):
        build_wordpiece_vocabulary(texts, size)


def test_importing_the_package_does_not_import_keras_hub():
    code = ("import seqlab, seqlab.data, seqlab.models, seqlab.layers, seqlab.course.checks, sys; "
            "print('keras_hub' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip().splitlines()[-1] == "False"


# ------------------------------------------------------------------------------ masked LM


def test_preprocessor_chooses_15_percent_with_the_80_10_10_split(masked_lm):
    preprocessor = masked_lm.preprocessor
    assert (preprocessor.mask_selection_rate, preprocessor.mask_token_rate,
            preprocessor.random_token_rate) == (0.15, 0.8, 0.1)
    # Long sequences, so keras-hub 0.25/0.26's rounding up (tensorflow-text chooses
    # ceil(15 % of n) per sequence) and newer versions' per-token draws agree within noise.
    tokenizer = preprocessor.tokenizer
    long = keras_hub.models.BertMaskedLMPreprocessor(tokenizer, sequence_length=64,
                                                     mask_selection_length=30)
    texts = np.array([" ".join(TEXTS[i:i + 5]) for i in range(0, len(TEXTS), 5)] * 10)
    x, y, weights = long(texts)
    weights = np.asarray(weights)
    selectable = np.array([min(len(ids), 64 - 2) for ids in tokenizer(texts)])
    share = weights.sum() / selectable.sum()
    # ~8,000 selectable tokens: 0.15 has sd ~0.004; ceil adds up to 1/n ~ 0.02 per sequence
    assert 0.13 < share < 0.18, share
    tokens = np.asarray(x["token_ids"])
    positions = np.asarray(x["mask_positions"])
    at_positions = np.take_along_axis(tokens, positions, 1)[weights > 0]
    mask_share = np.mean(at_positions == tokenizer.mask_token_id)
    assert 0.75 < mask_share < 0.85, mask_share  # ~1,300 chosen tokens: 0.8 ± 4 sd (sd ~0.011)


def test_encode_with_masks_puts_the_mask_id_at_each_blank(masked_lm):
    tokenizer = masked_lm.preprocessor.tokenizer
    inputs = bert.encode_with_masks(tokenizer, "the [MASK] is [MASK] .", 16)
    tokens = inputs["token_ids"][0]
    assert tokens[0] == tokenizer.cls_token_id
    assert list(tokens[inputs["mask_positions"][0]]) == [tokenizer.mask_token_id] * 2
    assert inputs["padding_mask"][0].sum() == list(tokens).index(tokenizer.sep_token_id) + 1
    with pytest.raises(ValueError, match=r"\[MASK\]"):
        bert.encode_with_masks(tokenizer, "no blank here", 16)
    with pytest.raises(ValueError, match="at most 16"):
        bert.encode_with_masks(tokenizer, "the plot " * 10 + "[MASK]", 16)


def test_fill_masks_returns_top_k_tokens_in_decreasing_probability(masked_lm):
    [[blank]] = bert.fill_masks(masked_lm, ["the plot is [MASK] ."], top_k=4)
    tokens, probabilities = zip(*blank, strict=True)
    assert len(set(tokens)) == 4
    assert list(probabilities) == sorted(probabilities, reverse=True)
    assert 0 < sum(probabilities) <= 1 + 1e-6


def test_a_few_mlm_steps_lower_the_loss_on_the_training_text(vocabulary):
    keras.utils.set_random_seed(1)
    model = nb08.masked_lm_from_scratch(vocabulary, sequence_length=16, hidden_dim=16,
                                        num_layers=1, num_heads=2, intermediate_dim=32,
                                        dropout=0.0)
    model.compile(optimizer=keras.optimizers.Adam(1e-2), weighted_metrics=["accuracy"])
    history = model.fit(np.array(TEXTS), batch_size=16, epochs=6, verbose=0)
    assert history.history["loss"][-1] < 0.8 * history.history["loss"][0]


def test_untrained_copy_has_the_architecture_but_not_the_weights(masked_lm):
    copy = nb08.untrained_copy(masked_lm.backbone)
    assert copy.get_config() == masked_lm.backbone.get_config()
    assert copy.count_params() == masked_lm.backbone.count_params()
    assert not np.allclose(np.asarray(copy.token_embedding.embeddings),
                           np.asarray(masked_lm.backbone.token_embedding.embeddings))


def test_copy_of_has_the_weights_and_changes_apart(masked_lm):
    twin = nb08.copy_of(masked_lm.backbone)
    for ours, theirs in zip(twin.weights, masked_lm.backbone.weights, strict=True):
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    twin.token_embedding.embeddings.assign(twin.token_embedding.embeddings * 0)
    assert np.abs(np.asarray(masked_lm.backbone.token_embedding.embeddings)).max() > 0


def test_mask_selection_length_leaves_room_for_twice_the_expected_count():
    assert nb08.mask_selection_length(64) == 20
    assert nb08.mask_selection_length(8) == 4


def test_a_head_assembled_as_in_notebook_08_equals_keras_hubs_text_classifier(masked_lm):
    """Notebook 08 assembles the classification head itself (nb08.assemble_classifier);
    keras-hub's BertTextClassifier packs the same steps. With the same weights the two agree."""
    backbone = nb08.untrained_copy(masked_lm.backbone)
    ours = nb08.assemble_classifier(backbone)
    theirs = keras_hub.models.BertTextClassifier(backbone, num_classes=2, preprocessor=None)
    assert ours.count_params() == theirs.count_params()
    theirs.get_layer("logits").set_weights(ours.get_layer("logits").get_weights())
    preprocessor = keras_hub.models.BertTextClassifierPreprocessor(
        masked_lm.preprocessor.tokenizer, sequence_length=16)
    batch = preprocessor(np.array(TEXTS[:3]))
    expected = np.asarray(theirs(batch, training=False))
    assert expected.shape == (3, 2) and np.abs(expected).max() > 0
    np.testing.assert_allclose(np.asarray(ours(batch, training=False)), expected, atol=1e-6)


def test_the_assembled_classifier_round_trips_through_a_keras_file(masked_lm, tmp_path):
    classifier = nb08.assemble_classifier(nb08.untrained_copy(masked_lm.backbone))
    batch = keras_hub.models.BertTextClassifierPreprocessor(
        masked_lm.preprocessor.tokenizer, sequence_length=16)(np.array(TEXTS[:3]))
    expected = np.asarray(classifier(batch, training=False))
    assert expected.shape == (3, 2)
    classifier.save(tmp_path / "classifier.keras")
    loaded = keras.saving.load_model(tmp_path / "classifier.keras")
    np.testing.assert_allclose(np.asarray(loaded(batch, training=False)), expected, atol=1e-6)


def test_padding_does_not_change_the_assembled_classifiers_logits(masked_lm):
    classifier = nb08.assemble_classifier(nb08.untrained_copy(masked_lm.backbone))
    short, long = (keras_hub.models.BertTextClassifierPreprocessor(
        masked_lm.preprocessor.tokenizer, sequence_length=n)(np.array(TEXTS[:2])) for n in (12, 16))
    np.testing.assert_allclose(np.asarray(classifier(short, training=False)),
                               np.asarray(classifier(long, training=False)), atol=1e-5)


# ------------------------------------------------------------- full mode: presets, offline


def test_full_mode_loader_reads_a_local_preset_directory(masked_lm, tmp_path):
    masked_lm.save_to_preset(str(tmp_path / "tiny"))
    loaded = bert.masked_lm_from_preset(tmp_path / "tiny", sequence_length=12)
    assert isinstance(loaded, keras_hub.models.BertMaskedLM)
    assert loaded.preprocessor.sequence_length == 12
    assert loaded.preprocessor.tokenizer.get_vocabulary() == \
        masked_lm.preprocessor.tokenizer.get_vocabulary()
    for ours, theirs in zip(loaded.backbone.weights, masked_lm.backbone.weights, strict=True):
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    sentence = ["the plot is [MASK] ."]
    assert bert.fill_masks(loaded, sentence)[0][0][0][0] == bert.fill_masks(masked_lm, sentence)[0][0][0][0]


def test_an_offline_preset_download_raises_one_error_with_the_fast_mode_advice(monkeypatch):
    looked_up = []

    def offline(host, *args, **kwargs):
        looked_up.append(host)
        raise socket.gaierror(-3, "Temporary failure in name resolution")

    monkeypatch.setattr(socket, "getaddrinfo", offline)
    with pytest.raises(DownloadError, match="SEQLAB_FAST=1") as error:
        bert.masked_lm_from_preset("bert_tiny_en_uncased")
    assert "bert_tiny_en_uncased" in str(error.value)
    assert looked_up == [bert.KAGGLE_HOST]


def test_an_unknown_preset_name_is_refused_without_any_download():
    with pytest.raises(ValueError, match="Unknown BERT preset"):
        bert.masked_lm_from_preset("bert_tinny_en_uncased")


# ------------------------------------------------------- keras-hub's layer = notebook 05's


def _encoder_pair(activation="relu"):
    x = np.random.default_rng(0).normal(size=(2, 6, 16)).astype("float32")
    padding = np.array([[1] * 6, [1] * 4 + [0] * 2], "int32")
    theirs = keras_hub.layers.TransformerEncoder(intermediate_dim=24, num_heads=4,
                                                 activation=activation, layer_norm_epsilon=1e-6)
    ours = TransformerEncoderLayer(16, 4, 24, dropout=0.0)  # epsilon 1e-6
    theirs(x, padding_mask=padding)
    ours(x, mask=padding.astype(bool))
    bert.copy_encoder_weights(theirs, ours)
    real = padding.astype(bool)
    return (np.asarray(theirs(x, padding_mask=padding))[real],
            np.asarray(ours(x, mask=padding.astype(bool)))[real])


def test_keras_hub_transformer_encoder_computes_notebook_05s_layer():
    theirs, ours = _encoder_pair()
    # float32 with another summation order: differences of a few ulps of values of size ~1
    np.testing.assert_allclose(theirs, ours, atol=1e-5)


def test_with_berts_gelu_the_layers_differ():
    theirs, ours = _encoder_pair(activation="gelu")
    assert np.abs(theirs - ours).max() > 1e-3


def test_copy_encoder_weights_refuses_other_layers():
    dense = keras.layers.Dense(3)
    dense.build((None, 4))
    ours = TransformerEncoderLayer(16, 4, 24)
    ours.build((None, 6, 16))
    with pytest.raises(ValueError, match="TransformerEncoder"):
        bert.copy_encoder_weights(dense, ours)
