"""Raw sentences in, readable translations out: :func:`translate` and its :class:`Translations`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import tensorflow as tf

from seqlab.data.translation_text import END, START, detokenize, standardize_text
from seqlab.decoding.beam import beam_search
from seqlab.decoding.greedy import greedy_decode
from seqlab.decoding.protocol import Translator

__all__ = ["Translations", "translate"]


@dataclass
class Translations:
    """What :func:`translate` returns; index ``i`` belongs to input sentence ``i``.

    ``attention[i]`` is ``(len(target_tokens[i]), len(source_tokens[i]))`` for
    :func:`seqlab.plotting.plot_attention` (``None`` for a model without attention).
    """

    texts: list[str]
    source_tokens: list[list[str]]
    target_tokens: list[list[str]]
    attention: list[np.ndarray | None]
    scores: list[float] | None = None

    def __len__(self) -> int:
        return len(self.texts)

    def __getitem__(self, index: int) -> str:
        return self.texts[index]


def _readable(token: str) -> str:
    return detokenize([str(token)]) or str(token)


def translate(model: Translator, texts: str | Sequence[str], source_vectorizer,
              target_vectorizer, *, method: str = "greedy", beam_width: int = 4,
              max_length: int = 40, length_penalty: float = 0.6,
              batch_size: int = 256) -> Translations:
    """Raw sentences in, readable translations (and their attention) out.

    Raises:
        ValueError: for a sentence empty after standardisation or an unknown ``method``.
    """
    if isinstance(texts, str):
        texts = [texts]
    texts = list(texts)
    if method not in ("greedy", "beam"):
        raise ValueError(f"method must be 'greedy' or 'beam'; got {method!r}")
    for index, text in enumerate(texts):
        if not standardize_text(text):
            raise ValueError(f"Sentence {index} ({text!r}) is empty after standardisation: "
                             "nothing to translate.")
    vocabulary = np.array(target_vectorizer.get_vocabulary())
    source_vocabulary = np.array(source_vectorizer.get_vocabulary())
    start_id, end_id = (int(np.flatnonzero(vocabulary == token)[0]) for token in (START, END))
    result = Translations([], [], [], [], [] if method == "beam" else None)
    for first in range(0, len(texts), batch_size):
        chunk = texts[first: first + batch_size]
        ids = source_vectorizer(tf.constant(chunk))
        ids = ids.to_tensor().numpy() if isinstance(ids, tf.RaggedTensor) else np.asarray(ids)
        if method == "greedy":
            tokens, attention = greedy_decode(model, ids, start_id, end_id, max_length)
        else:
            tokens, attention, scores = beam_search(model, ids, start_id, end_id, max_length,
                                                    beam_width, length_penalty)
            result.scores.extend(float(s) for s in scores)
        for row in range(len(chunk)):
            source_tokens = [_readable(t) for t in source_vocabulary[ids[row][ids[row] != 0]]]
            generated = tokens[row]
            ends = np.flatnonzero(generated == end_id)
            length = ends[0] + 1 if ends.size else int((generated != 0).sum())
            words = [str(w) for w in vocabulary[generated[:length]]]
            result.texts.append(detokenize(words))
            result.source_tokens.append(source_tokens)
            result.target_tokens.append([_readable(w) for w in words])
            result.attention.append(None if attention is None
                                    else attention[row, :length, : len(source_tokens)])
    return result
