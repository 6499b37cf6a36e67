"""The one masking rule of every attention in seqlab (a softmax that ignores masked positions),
and the two masks of the Transformer: :func:`padding_mask` and :func:`causal_mask`.

Used by the RNN attentions (eq. 13, ``seqlab.layers.attention``) and by scaled dot-product and
multi-head attention (eq. 16, ``seqlab.layers.multi_head_attention``), so "how padding is
hidden" has a single answer that is right in float32, float16 and bfloat16:

* masked positions are *selected away* with ``where`` (never ``score + (1 - mask) * -1e9``,
  whose ``0 * -inf`` is NaN once ``-1e9`` overflows float16);
* the softmax runs in float32 whatever the scores' dtype (as ``keras.layers.Softmax`` does under
  a mixed policy), and the weights are cast back to the scores' dtype;
* a row with no unmasked position at all (a fully padded sequence) gets all-zero weights, not
  NaN and not a uniform spread over padding.

Mask names, the same in every layer and function of :mod:`seqlab.layers`, :mod:`seqlab.models`
and :mod:`seqlab.decoding` (keras-hub's convention; ``tests/test_mask_names.py`` checks them):

* ``padding_mask``: ``(batch, length)`` boolean, True at real tokens; ``encoder_padding_mask``
  in a decoder, for the source it attends to (keras-hub's ``TransformerDecoder`` name);
* ``attention_mask``: ``(batch, query_len, key_len)``, or anything broadcastable to the scores,
  True where a query may attend to a key; ``use_causal_mask`` a flag for :func:`causal_mask`;
* ``mask``: only Keras's own argument of a one-input layer's ``call``, the padding mask Keras
  passes on from ``Embedding(mask_zero=True)`` (it may also be given explicitly);
* ``<input>_mask`` (``values_mask``; ``query_mask``/``value_mask``/``key_mask`` of
  :class:`seqlab.layers.MultiHeadAttention`, as in ``keras.layers.MultiHeadAttention``): the
  slot where Keras itself passes the Keras mask of the call's argument ``<input>``.
"""

from __future__ import annotations

from keras import ops

#: The score given to masked positions inside the float32 softmax. ``exp(-1e9 - max)`` is
#: exactly 0 in float32, so masked positions receive no weight even before the final ``where``.
MASKED_SCORE = -1e9


def masked_softmax(scores, attention_mask=None, axis=-1):
    """Softmax of ``scores`` over ``axis`` with masked positions at exactly zero weight.

    Args:
        scores: attention scores of any float dtype, e.g. ``(batch, Tq, Tv)`` or
            ``(batch, heads, Tq, Tv)``.
        attention_mask: ``None`` or a boolean / 0-1 tensor broadcastable to ``scores``; true
            (1) marks a position that may be attended to.
        axis: the axis the weights sum to one over (the keys).

    Returns:
        Weights with the shape and dtype of ``scores``. Each row sums to 1 over its unmasked
        positions, or is all zeros when it has none.

    Example:
        >>> import numpy as np
        >>> w = masked_softmax(np.zeros((1, 3), "float16"), np.array([[True, True, False]]))
        >>> np.asarray(w).tolist()
        [[0.5, 0.5, 0.0]]
    """
    scores = ops.convert_to_tensor(scores)
    dtype = scores.dtype
    scores32 = ops.cast(scores, "float32")
    if attention_mask is None:
        return ops.cast(ops.softmax(scores32, axis=axis), dtype)
    keep = ops.broadcast_to(ops.cast(attention_mask, "bool"), ops.shape(scores32))
    weights = ops.softmax(ops.where(keep, scores32, MASKED_SCORE), axis=axis)
    weights = ops.where(keep, weights, 0.0)
    return ops.cast(weights, dtype)


def padding_mask(token_ids, padding_id=0):
    """``(B, S) -> (B, S)`` boolean, True on real tokens and False on padding.

    To use it as an attention mask over keys, give it to :class:`MultiHeadAttention` as
    ``value_mask`` (Keras's name there) or broadcast it yourself: ``mask[:, None, None, :]``
    is ``(B, 1, 1, S)``.

    Example:
        >>> import numpy as np
        >>> np.asarray(padding_mask(np.array([[3, 1, 0, 0]]))).tolist()
        [[True, True, False, False]]
    """
    return ops.not_equal(token_ids, padding_id)


def causal_mask(length, key_length=None, query_start=0):
    """The look-ahead mask, ``(T, S)`` boolean: query ``t`` may attend to keys ``<= t``.

    True on and below the diagonal. The slides draw its effect on the scores: −∞ above the
    diagonal, so after the softmax a token never sees the tokens after it.

    Args:
        length: ``T``, the number of queries.
        key_length: ``S``, the number of keys (defaults to ``length``: a square mask).
        query_start: position of the first query among the keys (0; a decoder that feeds one
            new token at a time against a cache of ``S`` keys passes the token's index).

    Example:
        >>> import numpy as np
        >>> np.asarray(causal_mask(3)).astype(int).tolist()
        [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
        >>> np.asarray(causal_mask(1, 4, query_start=2)).astype(int).tolist()
        [[1, 1, 1, 0]]
    """
    key_length = length if key_length is None else key_length
    rows = ops.expand_dims(ops.arange(length) + query_start, 1)  # (T, 1) query positions
    columns = ops.expand_dims(ops.arange(key_length), 0)  # (1, S) key positions
    return ops.greater_equal(rows, columns)  # (T, S)
