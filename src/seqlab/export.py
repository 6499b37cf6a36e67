"""Ship a trained :class:`seqlab.decoding.Translator` as one TensorFlow SavedModel: vectorizers,
network and greedy decoding in one graph (reloading needs no seqlab)."""

from __future__ import annotations

import os
import unicodedata

import tensorflow as tf

from seqlab.data.translation_text import DETOKENIZE_RULES, END, HIDDEN_TOKENS, START, nfkd_table
from seqlab.decoding.greedy import greedy_decode_in_graph


class ExportedTranslator(tf.Module):
    """A ``tf.Module`` whose ``translate(texts)`` (a ``tf.string`` batch) returns a dict:

    * ``"text"``: ``(batch,)`` translations, punctuation re-attached; accents stay decomposed
      (NFKD: TensorFlow has no NFC op), ``unicodedata.normalize("NFC", ...)`` composes them;
    * ``"tokens"``: ``(batch, T)`` target ids (0 after ``[END]``);
    * ``"attention"``: ``(batch, T, S)`` weights (zeros for a model without attention).
    """

    def __init__(self, model, source_vectorizer, target_vectorizer, max_length: int = 40):
        super().__init__()
        self.model = model
        self.source_vectorizer = source_vectorizer
        # standardize_with_markers() captures this table; keeping a reference saves it too.
        self.nfkd_table = nfkd_table()
        vocabulary = [str(token) for token in target_vectorizer.get_vocabulary()]
        self.target_vocabulary = tf.constant(vocabulary)
        self.start_id = vocabulary.index(START)
        self.end_id = vocabulary.index(END)
        self.max_length = max_length

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="texts")],
                 autograph=False)
    def translate(self, texts):
        source_ids = self.source_vectorizer(texts)
        if isinstance(source_ids, tf.RaggedTensor):
            source_ids = source_ids.to_tensor()
        tokens, attention = greedy_decode_in_graph(self.model, source_ids, self.start_id,
                                                self.end_id, self.max_length)
        if attention is None:
            attention = tf.zeros(tf.concat([tf.shape(tokens), tf.shape(source_ids)[1:]], 0))
        words = tf.gather(self.target_vocabulary, tokens)  # (batch, T)
        return {"text": detokenize_tensor(words), "tokens": tokens, "attention": attention}


def detokenize_tensor(words: tf.Tensor) -> tf.Tensor:
    """:func:`seqlab.data.translation_text.detokenize` in TensorFlow ops, NFC aside:
    ``(batch, T)`` words -> ``(batch,)`` texts."""
    hidden = tf.reduce_any(tf.equal(words[..., None], HIDDEN_TOKENS), axis=-1)  # (batch, T)
    text = tf.strings.reduce_join(tf.where(hidden, "", words), axis=-1, separator=" ")
    # Hidden words leave runs of separators behind; Python's version never joins them.
    text = tf.strings.strip(tf.strings.regex_replace(text, r" +", " "))
    for pattern, replacement in DETOKENIZE_RULES:
        text = tf.strings.regex_replace(text, pattern, replacement)
    return text


def export_translator(model, source_vectorizer, target_vectorizer, path: str | os.PathLike, *,
                      max_length: int = 40) -> ExportedTranslator:
    """Save ``model`` with its vocabularies and greedy decoding as a SavedModel at ``path``."""
    module = ExportedTranslator(model, source_vectorizer, target_vectorizer, max_length)
    tf.saved_model.save(module, os.fspath(path), signatures={"serving_default": module.translate})
    return module


def translate_with_export(exported, texts) -> list[str]:
    """Call a (re)loaded export on Python strings; return readable (NFC) strings."""
    if isinstance(texts, str):
        texts = [texts]
    output = exported.translate(tf.constant(list(texts)))["text"].numpy()
    return [unicodedata.normalize("NFC", text.decode("utf-8")) for text in output]
