"""The one masking rule of every attention in seqlab, :func:`masked_softmax`, and the
Transformer's :func:`padding_mask` and :func:`causal_mask`.

Masked positions are selected away with ``where`` (``score + (1 - mask) * -1e9`` is NaN once
``-1e9`` overflows float16), the softmax runs in float32, and a fully masked row gets zeros.

Mask names (keras-hub's; ``tests/test_mask_names.py`` checks every public signature):
``padding_mask`` ``(batch, length)``, True at real tokens (``encoder_padding_mask`` for a
decoder's source); ``attention_mask``, broadcastable to the scores, True where a query may
attend to a key; ``mask`` only as Keras's own argument of a one-input layer; ``<input>_mask``
(``values_mask``, ``query_mask``, ``value_mask``, ``key_mask``) where Keras passes the Keras
mask of the argument ``<input>``.
"""

from __future__ import annotations

from keras import ops


def masked_softmax(scores, attention_mask=None, axis=-1):
    """Softmax of ``scores`` over ``axis`` with masked positions at exactly zero weight.

    Args:
        scores: attention scores of any float dtype, e.g. ``(batch, Tq, Tv)``.
        attention_mask: ``None`` or a boolean / 0-1 tensor broadcastable to ``scores``, true
            where a position may be attended to.
        axis: the axis the weights sum to one over (the keys).

    Returns:
        Weights with the shape and dtype of ``scores``; a row with no unmasked position is 0.

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
    weights = ops.softmax(ops.where(keep, scores32, -1e9), axis=axis)  # exp(-1e9 - max) is 0
    weights = ops.where(keep, weights, 0.0)
    return ops.cast(weights, dtype)


def padding_mask(token_ids, padding_id=0):
    """``(B, S) -> (B, S)`` boolean, True on real tokens and False on padding.

    Example:
        >>> import numpy as np
        >>> np.asarray(padding_mask(np.array([[3, 1, 0, 0]]))).tolist()
        [[True, True, False, False]]
    """
    return ops.not_equal(token_ids, padding_id)


def causal_mask(length, key_length=None, query_start=0):
    """The look-ahead mask, ``(T, S)`` boolean: query ``t`` may attend to keys ``<= t``.

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
