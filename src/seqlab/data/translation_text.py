"""Standardisation of translation text: what the vectorizers see, and back to readable text.

>>> standardize_reference("¿Dónde está?")
'¿dónde está?'
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

import keras
import tensorflow as tf

START = "[START]"
END = "[END]"

_PUNCTUATION = ".?!,¿¡-"
_KEPT = "a-z0-9 '" + re.escape(_PUNCTUATION)
_NFKD_TABLE: tf.lookup.StaticHashTable | None = None


def nfkd_table() -> tf.lookup.StaticHashTable:
    """Character -> NFKD decomposition for every BMP character that decomposes (TensorFlow has
    no normalisation op); made once, outside any graph, so tf.data and SavedModels capture it."""
    global _NFKD_TABLE
    if _NFKD_TABLE is None:
        with tf.init_scope():
            chars = [chr(code) for code in range(0x10000)
                     if not (0xD800 <= code <= 0xDFFF or 0xAC00 <= code <= 0xD7A3)]
            table = {char: unicodedata.normalize("NFKD", char) for char in chars}
            table = {char: decomposed for char, decomposed in table.items() if decomposed != char}
            _NFKD_TABLE = tf.lookup.StaticHashTable(
                tf.lookup.KeyValueTensorInitializer(list(table), list(table.values())),
                default_value="")
    return _NFKD_TABLE


def unicode_nfkd(text: tf.Tensor) -> tf.Tensor:
    """NFKD-normalise a string tensor of any shape (see :func:`nfkd_table`)."""
    chars = tf.strings.unicode_split(text, "UTF-8")  # (..., chars) ragged
    decomposed = tf.ragged.map_flat_values(nfkd_table().lookup, chars)  # "": no decomposition
    chars = tf.ragged.map_flat_values(lambda c, d: tf.where(d == "", c, d), chars, decomposed)
    return tf.strings.reduce_join(chars, axis=-1)


@keras.saving.register_keras_serializable(package="seqlab")
def standardize_with_markers(text: tf.Tensor) -> tf.Tensor:
    """``"¿Qué hora es?"`` -> ``"[START] ¿ que\u0301 hora es ? [END]"``.

    NFKD, lower case, only ``a-z``, digits, accents, apostrophes and ``. ? ! , ¿ ¡ -`` kept.
    """
    text = unicode_nfkd(text)
    text = tf.strings.lower(text, encoding="utf-8")
    text = tf.strings.regex_replace(text, rf"[^{_KEPT}\p{{Mn}}]", " ")
    text = tf.strings.regex_replace(text, rf"([{re.escape(_PUNCTUATION)}])", r" \1 ")
    text = tf.strings.join([START, text, END], separator=" ")
    return tf.strings.regex_replace(text, r"\s+", " ")


def standardize_text(text: str) -> str:
    """Plain-Python :func:`standardize_with_markers` without the markers (for length checks).

    ``"¿Qué hora es?"`` -> ``"¿ que\u0301 hora es ?"``.
    """
    text = unicodedata.normalize("NFKD", text).lower()
    kept = re.compile(rf"[{_KEPT}]")
    text = "".join(ch if kept.match(ch) or unicodedata.category(ch) == "Mn" else " " for ch in text)
    text = re.sub(rf"([{re.escape(_PUNCTUATION)}])", r" \1 ", text)
    return re.sub(r"\s+", " ", text).strip()


#: Tokens a translation never shows: the markers, padding and the out-of-vocabulary token.
HIDDEN_TOKENS = (START, END, "", "[UNK]")
#: How :func:`detokenize` (and :func:`seqlab.export.detokenize_tensor`) re-attach punctuation.
DETOKENIZE_RULES = (
    (r" ([.?!,])", r"\1"),  # "hola ," -> "hola,"
    (r"([¿¡]) ", r"\1"),    # "¿ que" -> "¿que"
    (r" ?- ?", "-"),        # "2021 - 03" -> "2021-03"
)


def detokenize(tokens: Sequence[str]) -> str:
    """Tokens -> readable text: markers and padding dropped, accents re-composed, punctuation attached.

    ``"hola , ¿ que\u0301 tal ?"`` -> ``"hola, ¿qué tal?"``.
    """
    text = " ".join(t for t in tokens if t not in HIDDEN_TOKENS)
    for pattern, replacement in DETOKENIZE_RULES:
        text = re.sub(pattern, replacement, text)
    return unicodedata.normalize("NFC", text)


def standardize_reference(text: str) -> str:
    """A reference sentence in the form translations come out in, for BLEU and exact match."""
    return detokenize(standardize_text(text).split())
