"""The decoding protocol: what the decoders of :mod:`seqlab.decoding` need of a translation
model, as :class:`typing.Protocol` types (notebook 04's and notebook 05's translators satisfy them).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["CachingTranslator", "Translator"]


@runtime_checkable
class Translator(Protocol):
    """What :func:`greedy_decode`, :func:`beam_search`, :func:`translate` and the SavedModel
    export (:mod:`seqlab.export`) need of a translation model: the decoding protocol.

    :class:`seqlab.lessons.nb04.Translator` and :class:`seqlab.lessons.nb05.TransformerTranslator`
    both satisfy it (``isinstance(model, Translator)``; ``tests/test_decoding.py`` checks it).

    * ``encode(source_ids) -> state``: ``source_ids`` ``(batch, S)`` int32, 0 = padding;
      ``state`` a nested structure (dicts/lists) of tensors whose first axis is the batch.
      Beam search repeats and reorders the state along that axis (``tf.gather``), which is why
      every tensor in it must be batch-major.
    * ``decode_step(target_prefix_ids, state) -> (logits, new_state, attention)``:
      ``target_prefix_ids`` ``(batch, t)`` int32 starting with ``[START]``; ``logits``
      ``(batch, target_vocab)`` for token ``t + 1``; ``new_state`` with the same structure and
      the same shapes as ``state``; ``attention`` ``(batch, S)``, the weights over the source
      in its original order, or ``None``. ``t`` is not known when the step is traced
      (``None``), so ``decode_step`` must not need it as a Python number. A model may use only
      the prefix's last token (the RNN: its history is in the state) or all of it.

    A model that also has ``init_cache`` is a :class:`CachingTranslator`.
    """

    def encode(self, source_ids):
        """``(batch, S)`` source ids -> the batch-major decoding state."""
        ...

    def decode_step(self, target_prefix_ids, state):
        """``(batch, t)`` prefix and state -> ``(logits (batch, V), new_state, attention)``."""
        ...


@runtime_checkable
class CachingTranslator(Translator, Protocol):
    """A :class:`Translator` with a key/value cache (the Transformer): the optional part of
    the decoding protocol.

    * ``init_cache(state, max_length) -> state``: the state plus a cache of fixed shapes for up
      to ``max_length`` decoding steps (batch-major, like the rest of the state), so that
      ``decode_step`` runs only the newest token through the model: the same tokens, less work.
      The decoders call it unless ``use_cache=False`` (:func:`encode_for_decoding`).
    """

    def init_cache(self, state, max_length):
        """``state`` -> ``state`` with room for ``max_length`` steps of keys and values."""
        ...
