"""The decoder's output layer, computed at the real tokens only (:class:`RealTokenDense`).

The slides' Transformer ends in "an output (dense) layer using Softmax as the activation
function", and "all of the above components are time-distributed, so that each word is treated
independently of all the others" (main deck, "Transformer: Other Components"). So the logits of
one position never depend on another position, and a padded position's logits are thrown away
by the masked loss. With a target vocabulary of 8,000 words the output layer is about half of a
small translator's arithmetic, and in a batch padded to its longest sentence more than half of
the positions can be padding: computing them changes no result, only the time.
"""

from __future__ import annotations

import keras
from keras import ops

_PACKAGE = "seqlab"


@keras.saving.register_keras_serializable(package=_PACKAGE)
class RealTokenDense(keras.layers.Dense):
    """``keras.layers.Dense`` that computes its outputs at the real positions of a batch only.

    ``layer(x, padding_mask=mask)`` with ``x`` of shape ``(B, T, d)`` and ``mask`` ``(B, T)``
    (True on real tokens) gathers the real positions into one ``(N, d)`` matrix, applies the
    dense layer to those ``N`` rows (a 2-D matrix product: on TensorFlow's CPU kernels also
    faster than the broadcast product a rank-3 input gets), and scatters the ``(N, units)``
    result back into ``(B, T, units)``, with zeros at the padded positions. At the real
    positions the output equals ``keras.layers.Dense`` with the same weights; a loss masked
    to the real tokens (``MaskedSparseCategoricalCrossentropy``) therefore gives the same
    value and the same gradients, and only the padded positions' work is left out. Without a
    mask, or with ``skip_padding=False``, it is ``Dense`` on every position (through the same
    2-D view).

    The number of real positions changes from batch to batch, so the gathered matrix has no
    fixed shape: XLA (``jit_compile=True``) and TPUs need fixed shapes, so build the layer
    with ``skip_padding=False`` there (it then computes every position, as ``Dense`` does).

    Args:
        units: the output size (the target vocabulary, for logits).
        skip_padding: compute only the positions that ``padding_mask`` marks real (default);
            False: every position, like ``Dense`` (for XLA and TPUs).
        **kwargs: ``keras.layers.Dense``'s arguments.

    Call arguments:
        inputs: ``(..., d)``; with ``padding_mask``, ``(B, T, d)``.
        padding_mask: ``(B, T)`` bool, True on real tokens; or None.

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
