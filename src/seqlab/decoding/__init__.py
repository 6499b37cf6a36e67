"""Turning a trained translator into translations: greedy decoding, beam search, ``translate``.

Translation only: sampling text from a language model (notebook 07) is :mod:`seqlab.sampling`.

Works with any model that is a :class:`Translator` (notebook 04's RNN translator,
:mod:`seqlab.lessons.nb04`, and the Transformer alike): :class:`Translator` states what the
decoders need of a model. Both decoders stop at ``[END]`` or after ``max_length`` generated
tokens, whichever comes first, so they always terminate. Output ids are ``(batch, T)`` with
``T <= max_length``, ``[START]`` left out, ``[END]`` kept, 0 after it. TensorFlow only
(``tf.while_loop``, ``tf.function``), like the ``tf.data`` pipelines and the SavedModel export.

The package's modules, in the order they build on each other: :mod:`~seqlab.decoding.protocol`
(the :class:`Translator` types), :mod:`~seqlab.decoding.greedy`, :mod:`~seqlab.decoding.beam`,
:mod:`~seqlab.decoding.texts` (:func:`translate`). Import the names from ``seqlab.decoding``.
"""

from __future__ import annotations

from seqlab.decoding.beam import beam_search
from seqlab.decoding.greedy import (
    compiled_for,
    encode_for_decoding,
    greedy_decode,
    greedy_decode_in_graph,
)
from seqlab.decoding.protocol import CachingTranslator, Translator
from seqlab.decoding.texts import Translations, translate

__all__ = [
    "CachingTranslator", "Translations", "Translator", "beam_search", "compiled_for",
    "encode_for_decoding", "greedy_decode", "greedy_decode_in_graph", "translate",
]
