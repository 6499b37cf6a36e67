"""``TextFromCodepoints``: reviews carried as Unicode code points, turned back into strings.

Under a strategy with several replicas, Keras 3.10-3.15 starts ``fit``, ``evaluate`` and
``predict`` by averaging the first distributed batch, which fails for strings; so raw text is
fed as code points (:func:`seqlab.distribute.text_as_codepoints`) and this layer turns them back.
"""

from __future__ import annotations

import keras
import tensorflow as tf


@keras.saving.register_keras_serializable(package="seqlab")
class TextFromCodepoints(keras.layers.Layer):
    """UTF-8 strings from a 0-padded matrix of Unicode code points (no weights).

    It undoes ``tf.strings.unicode_decode(reviews, "UTF-8").to_tensor()``; code point 0 is the
    padding, so a NUL character inside a review is dropped.

    Call arguments:
        inputs: ``(batch, characters)`` integer code points, 0-padded.

    Returns:
        ``(batch,)`` UTF-8 strings.

    Example:
        >>> to_text = TextFromCodepoints()
        >>> to_text(tf.constant([[104, 105, 0], [233, 116, 233]])).numpy().tolist()
        [b'hi', b'\\xc3\\xa9t\\xc3\\xa9']
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        # Strings cannot be XLA-compiled (nor can the TF-Hub module that reads them).
        self.supports_jit = False
        self.built = True

    def _check_input(self, dtype, shape) -> None:
        dtype = keras.backend.standardize_dtype(dtype)
        rank = None if shape is None else len(shape)
        if "int" not in dtype or rank not in (2, None):
            raise ValueError(
                f"{type(self).__name__} expects Unicode code points: an integer tensor of shape "
                "(batch, characters), 0-padded, as seqlab.distribute.text_as_codepoints makes "
                f"from a batch of strings; got dtype {dtype} and shape "
                f"{tuple(shape) if shape is not None else None}."
            )

    def compute_output_spec(self, inputs):
        self._check_input(inputs.dtype, inputs.shape)
        # (batch, characters) -> (batch,)
        return keras.KerasTensor(inputs.shape[:1], dtype="string")

    def call(self, inputs):
        inputs = tf.convert_to_tensor(inputs)
        self._check_input(inputs.dtype, None if inputs.shape.rank is None else inputs.shape.as_list())
        codes = tf.cast(inputs, tf.int32)                                    # (batch, characters)
        ragged = tf.RaggedTensor.from_tensor(codes, padding=0)              # (batch, None)
        return tf.strings.unicode_encode(ragged, "UTF-8")                   # (batch,)

    def get_config(self):
        return super().get_config()


def review_input(text_input: str = "auto") -> list:
    """The first layers of a model that reads raw reviews: strings, or code points under replicas.

    Args:
        text_input: ``"strings"``, a ``(batch,)`` string input; ``"codepoints"``, a
            ``(batch, characters)`` int32 input followed by :class:`TextFromCodepoints`
            (data through :func:`seqlab.distribute.text_as_codepoints`); ``"auto"``, code
            points when the current ``tf.distribute`` strategy has several replicas, strings
            otherwise.

    Returns:
        A list (an input tensor, then any layers) to unpack at the start of a
        ``keras.Sequential``.

    Example:
        >>> [type(layer).__name__ for layer in review_input("codepoints")]
        ['KerasTensor', 'TextFromCodepoints']
    """
    if text_input not in ("auto", "strings", "codepoints"):
        raise ValueError(f"text_input must be 'auto', 'strings' or 'codepoints'; got {text_input!r}")
    if text_input == "auto":
        several = tf.distribute.get_strategy().num_replicas_in_sync > 1
        text_input = "codepoints" if several else "strings"
    if text_input == "strings":
        return [keras.Input(shape=(), dtype="string", name="review")]
    return [keras.Input(shape=(None,), dtype="int32", name="review_codepoints"),
            TextFromCodepoints(name="text_from_codepoints")]
