"""Every weight its own initial values: a Keras 3 initializer made without a seed draws the same
values at every call, so two weights given one instance would start equal (all LSTM gates
alike). Keras's layers clone the initializer for every weight; so do ours.
"""

from __future__ import annotations

import keras
from keras import ops


def clone_initializer(initializer):
    """A new instance of a random ``initializer`` (an instance, a name or a config) with a seed
    of its own, unless the original was seeded explicitly (then it draws the same values, as in
    Keras); one without a seed (a constant, the identity) as it is.

    Example:
        >>> shared = keras.initializers.GlorotUniform()
        >>> bool(ops.all(shared((3, 3)) == shared((3, 3))))  # one instance: the same values
        True
        >>> bool(ops.all(clone_initializer(shared)((3, 3)) == shared((3, 3))))
        False
    """
    initializer = keras.initializers.get(initializer)
    config = initializer.get_config()
    if "seed" not in config:
        return initializer
    return initializer.__class__.from_config(config)


def column_blocks(initializer, shape, blocks, dtype=None):
    """``blocks`` initializers, one per column block of a single draw of ``initializer`` at
    ``(*shape[:-1], blocks * shape[-1])``: what the gates of Keras's fused LSTM/GRU kernel
    ``(d, k·u)`` start with (Glorot counts ``fan_out = k·u``; an orthogonal ``(u, k·u)`` has
    orthonormal rows, not ``k`` orthogonal blocks).

    Args:
        initializer: an initializer (instance, name or config); a fresh clone of it draws.
        shape: the shape of one block, e.g. ``(d, u)``.
        blocks: the number of blocks ``k``.
        dtype: the dtype of the draw (e.g. the layer's ``variable_dtype``).

    Returns:
        A list of ``k`` callables ``(shape, dtype=None) -> tensor`` for ``add_weight``.

    Example:
        >>> first, second = column_blocks("glorot_uniform", (2, 3), blocks=2)
        >>> tuple(first((2, 3)).shape), bool(ops.all(first((2, 3)) == second((2, 3))))
        ((2, 3), False)
    """
    *rows, width = shape
    fused = clone_initializer(initializer)((*rows, blocks * width), dtype=dtype)  # (..., k·u)

    def block(index):
        def initial_values(shape, dtype=None):
            return ops.cast(fused[..., index * width:(index + 1) * width], dtype or fused.dtype)
        return initial_values

    return [block(index) for index in range(blocks)]
