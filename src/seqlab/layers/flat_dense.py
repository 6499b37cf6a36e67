"""``Dense`` through a 2-D view (:class:`FlatDense`: one ``MatMul`` on TensorFlow's CPU kernels,
not a batched product) and :class:`FastMultiHeadAttention` built on it: named siblings of the
plain layers (``benchmarks/fast_path.py`` compares them).
"""

from __future__ import annotations

import keras
from keras import ops

from seqlab.layers.multi_head_attention import MultiHeadAttention


@keras.saving.register_keras_serializable(package="seqlab")
class FlatDense(keras.layers.Dense):
    """``keras.layers.Dense`` applied to ``(..., d_in)`` through a 2-D ``(N, d_in)`` view.

    Args and call arguments: as ``keras.layers.Dense``; the same weights, the same outputs.

    Example:
        >>> import numpy as np
        >>> tuple(FlatDense(5)(np.zeros((2, 3, 4), "float32")).shape)
        (2, 3, 5)
    """

    def call(self, inputs, training=None):
        leading = ops.shape(inputs)[:-1]
        flat = super().call(ops.reshape(inputs, (-1, ops.shape(inputs)[-1])))  # (N, units)
        return ops.reshape(flat, (*leading, self.units))  # (..., units)


@keras.saving.register_keras_serializable(package="seqlab")
class FastMultiHeadAttention(MultiHeadAttention):
    """:class:`seqlab.layers.MultiHeadAttention` whose four projections are :class:`FlatDense`.

    Args, call arguments and returns: as :class:`seqlab.layers.MultiHeadAttention`.

    Example:
        >>> import numpy as np
        >>> x = np.zeros((1, 3, 8), "float32")
        >>> tuple(FastMultiHeadAttention(num_heads=2, key_dim=4)(x, x).shape)
        (1, 3, 8)
    """

    def _projection(self, units, name):
        return FlatDense(units, name=name, dtype=self.dtype_policy)
