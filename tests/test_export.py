"""seqlab.export and .keras: a reloaded translator translates exactly as the original."""

from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf

from seqlab.data import load_translation
from seqlab.data.translation_text import END, START, detokenize
from seqlab.decoding import translate
from seqlab.export import detokenize_tensor, export_translator, translate_with_export
from seqlab.lessons.nb04 import build_rnn_translator
from seqlab.training import MaskedSparseCategoricalCrossentropy


@pytest.fixture(scope="module")
def trained():
    data = load_translation("sample", batch_size=64, max_length=16)
    keras.utils.set_random_seed(5)
    model = build_rnn_translator(data.source_vocab_size, data.target_vocab_size, embedding_dim=16,
                                 units=32, attention="luong-general")
    model.compile(optimizer=keras.optimizers.Adam(0.02), loss=MaskedSparseCategoricalCrossentropy())
    model.fit(data.train, epochs=3, verbose=0)
    return model, data


def test_keras_file_and_saved_model_translate_like_the_original(trained, tmp_path):
    model, data = trained
    texts = [english for english, _ in data.test_pairs[:12]] + ["I am hungry."]
    expected = translate(model, texts, data.source_vectorizer, data.target_vectorizer,
                         max_length=10)
    assert any(expected.texts), "the model should say something after training"

    model.save(tmp_path / "nmt.keras")
    reloaded = keras.models.load_model(tmp_path / "nmt.keras")
    again = translate(reloaded, texts, data.source_vectorizer, data.target_vectorizer,
                      max_length=10)
    assert again.texts == expected.texts
    for a, b in zip(again.attention, expected.attention, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-5)

    export_translator(model, data.source_vectorizer, data.target_vectorizer,
                      tmp_path / "nmt_export", max_length=10)
    exported = tf.saved_model.load(str(tmp_path / "nmt_export"))
    assert translate_with_export(exported, texts) == expected.texts
    output = exported.signatures["serving_default"](texts=tf.constant(texts[:2]))
    assert output["tokens"].shape[0] == 2 and output["attention"].shape[0] == 2


def test_detokenize_in_tensorflow_equals_the_python_rules():
    sentences = [
        [START, "hola", ",", "¿", "que\u0301", "tal", "?", END],
        ["2021", "-", "03", "-", "03", END, "", ""],
        ["[UNK]", "es", "¡", "bueno", "!", "", "", ""],
        ["", "", "", "", "", "", "", ""],
    ]
    texts = detokenize_tensor(tf.constant(sentences)).numpy()
    ours = [text.decode("utf-8") for text in texts]
    # TensorFlow has no NFC op: compare with the Python version before its NFC step.
    assert ours == [detokenize(words).replace("é", "e\u0301") for words in sentences]
    assert ours[1] == "2021-03-03" and ours[3] == ""
