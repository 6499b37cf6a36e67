"""Turning a trained translator into translations: greedy decoding, beam search, ``translate``.

Both decoders work with any :class:`Translator` and stop at ``[END]`` or after ``max_length``
tokens; output ids are ``(batch, T)``, ``[START]`` left out, ``[END]`` kept, 0 after it.
TensorFlow only. Sampling from a language model is :mod:`seqlab.sampling`.
"""

from __future__ import annotations

from seqlab.decoding.beam import beam_search
from seqlab.decoding.greedy import greedy_decode
from seqlab.decoding.protocol import CachingTranslator, Translator
from seqlab.decoding.texts import Translations, translate

__all__ = [
    "CachingTranslator", "Translations", "Translator", "beam_search", "greedy_decode", "translate",
]
