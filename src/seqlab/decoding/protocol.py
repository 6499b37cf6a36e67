"""What the decoders of :mod:`seqlab.decoding` need of a translation model (protocols)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["CachingTranslator", "Translator"]


@runtime_checkable
class Translator(Protocol):
    """What the decoders and the SavedModel export need of a translation model (notebook 04's
    and notebook 05's translators satisfy it).

    * ``encode(source_ids) -> state``: ``source_ids`` ``(batch, S)`` int32, 0 = padding;
      ``state`` a nested structure of batch-major tensors (beam search reorders that axis).
    * ``decode_step(target_prefix_ids, state) -> (logits, new_state, attention)``:
      ``target_prefix_ids`` ``(batch, t)`` int32 starting with ``[START]``; ``logits``
      ``(batch, target_vocab)`` for token ``t + 1``; ``new_state`` with the same structure and
      the same shapes as ``state``; ``attention`` ``(batch, S)``, the weights over the source
      in its original order, or ``None``. ``t`` is not known when the step is traced, so
      ``decode_step`` must not need it as a Python number.
    """

    def encode(self, source_ids): ...

    def decode_step(self, target_prefix_ids, state): ...


@runtime_checkable
class CachingTranslator(Translator, Protocol):
    """A :class:`Translator` with a key/value cache (the Transformer).

    * ``init_cache(state, max_length) -> state``: the state plus a batch-major cache of fixed
      shapes for up to ``max_length`` steps, so ``decode_step`` runs only the newest token.
    """

    def init_cache(self, state, max_length): ...
