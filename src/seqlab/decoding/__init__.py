"""Turning a trained translator into translations: greedy decoding, beam search, ``translate``.

Output ids are ``(batch, T)``, ``[START]`` left out, ``[END]`` kept, 0 after it.
"""

from __future__ import annotations

from seqlab.decoding.beam import beam_search
from seqlab.decoding.greedy import greedy_decode
from seqlab.decoding.protocol import CachingTranslator, Translator
from seqlab.decoding.texts import Translations, translate

__all__ = [
    "CachingTranslator", "Translations", "Translator", "beam_search", "greedy_decode", "translate",
]
