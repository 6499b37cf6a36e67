"""The decoder's output layer, computed at the real tokens only (:class:`RealTokenDense`): the
slides' output layer is time-distributed, and the masked loss ignores padded positions.
"""

from __future__ import annotations

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="seqlab")
class RealTokenDense(keras.layers.Dense):
    """``keras.layers.Dense`` that computes its outputs at the real positions of a batch only.

    At the real positions the output equals ``keras.layers.Dense``'s, so a loss masked to the
    real tokens gets the same value and gradients; padded positions get zeros.

    Args:
        units: the output size (the target vocabulary, for logits).
        skip_padding: compute only the positions that ``padding_mask`` marks real (default);
            False: every position, like ``Dense`` (for XLA and TPUs).
        **kwargs: ``keras.layers.Dense``'s arguments.

    Call arguments:
        inputs: ``(..., d)``; with ``padding_mask``, ``(B, T, d)``.
        padding_mask: ``(B, T)`` bool, True on real tokens; or None.

    Returns:
        ``(..., units)``, zeros at the padded positions.

    Example:
        >>> import numpy as np
        >>> layer = RealTokenDense(3)
        >>> x = np.ones((2, 4, 5), "float32")
        >>> mask = np.array([[True, True, False, False], [True, False, False, False]])
        >>> logits = np.asarray(layer(x, padding_mask=mask))
        >>> logits.shape, float(np.abs(logits[~mask]).max())
        ((2, 4, 3), 0.0)
    """

    def __init__(self, units, skip_padding: bool = True, **kwargs):
        super().__init__(units, **kwargs)
        self.skip_padding = bool(skip_padding)

    def call(self, inputs, padding_mask=None):
        shape = ops.shape(inputs)  # (..., d)
        rows = ops.reshape(inputs, (-1, shape[-1]))  # (N, d): a 2-D product is the fast one
        if padding_mask is None or not self.skip_padding:  # every position
            return ops.reshape(super().call(rows), (*shape[:-1], self.units))  # (..., units)
        real = ops.nonzero(ops.reshape(padding_mask, (-1,)))[0]  # (N,): the real rows
        outputs = super().call(ops.take(rows, real, axis=0))  # (N, units)
        everything = ops.scatter(ops.expand_dims(real, -1), outputs,
                                 (shape[0] * shape[1], self.units))  # (B·T, units), 0 on padding
        return ops.reshape(everything, (shape[0], shape[1], self.units))  # (B, T, units)

    def get_config(self):
        return {**super().get_config(), "skip_padding": self.skip_padding}
