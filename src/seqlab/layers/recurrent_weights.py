"""Copy the weights of Keras's fused recurrent layers into the cells of
:mod:`seqlab.layers.recurrent`: :func:`copy_keras_cell_weights`."""

from __future__ import annotations

import keras
import numpy as np
from keras import ops

from seqlab.layers.recurrent import GRUCell, LSTMCell, SimpleRNNCell

#: Our cell class -> (Keras cell class, our gates in the order of Keras's column blocks).
_KERAS_TWINS = {
    SimpleRNNCell: (keras.layers.SimpleRNNCell, ("",)),
    LSTMCell: (keras.layers.LSTMCell, ("i", "f", "g", "o")),
    GRUCell: (keras.layers.GRUCell, ("z", "r", "g")),
}


def copy_keras_cell_weights(source, target):
    """Copy trained weights from Keras's ``SimpleRNN``/``LSTM``/``GRU`` into our cell.

    Keras's fused ``kernel (d, k·u)``, ``recurrent_kernel (u, k·u)`` and ``bias (k·u,)`` are
    cut into one block per gate (LSTM ``[i | f | c | o]``, GRU ``[z | r | h]``; Keras's ``c``
    and ``h`` block is the slides' ``g``). ``LSTMCell(peephole=True)`` gets zero peepholes.

    Args:
        source: a built ``keras.layers.SimpleRNN``, ``LSTM`` or ``GRU(reset_after=False)``, its
            cell, or a ``keras.layers.Bidirectional`` of one.
        target: the matching :class:`SimpleRNNCell`, :class:`LSTMCell` or :class:`GRUCell`, a
            ``keras.layers.RNN`` of one, or a ``Bidirectional`` of such an ``RNN`` (when
            ``source`` is bidirectional). Built here if it is not built yet.

    Returns:
        ``target``.

    Raises:
        ValueError: if the layers do not match (kind of cell, sizes, activations), if
            ``source`` is not built, or if it is a GRU with ``reset_after=True``.
    """
    bidirectional = [isinstance(layer, keras.layers.Bidirectional) for layer in (source, target)]
    if any(bidirectional):
        if not all(bidirectional):
            raise ValueError("copy_keras_cell_weights: source and target must both be "
                             "Bidirectional, or neither.")
        copy_keras_cell_weights(source.forward_layer, target.forward_layer)
        copy_keras_cell_weights(source.backward_layer, target.backward_layer)
        return target

    ours, theirs = (getattr(layer, "cell", layer) for layer in (target, source))
    if type(ours) not in _KERAS_TWINS:
        raise ValueError(f"copy_keras_cell_weights: target must hold a seqlab SimpleRNNCell, "
                         f"LSTMCell or GRUCell; got {type(ours).__name__}.")
    keras_class, gates = _KERAS_TWINS[type(ours)]
    if not isinstance(theirs, keras_class):
        raise ValueError(f"copy_keras_cell_weights: {type(ours).__name__} takes its weights "
                         f"from a Keras {keras_class.__name__} (or its layer); got "
                         f"{type(theirs).__name__}.")
    if not theirs.built:
        raise ValueError("copy_keras_cell_weights: the Keras layer has no weights yet; call it "
                         "on a batch (or build it) first.")
    if getattr(theirs, "reset_after", False):
        raise ValueError(
            "copy_keras_cell_weights: this Keras GRU has reset_after=True (Keras's default), "
            "which applies the reset gate after W_hg: r * (h W_hg + b_hg). The slides' eq. (10) "
            "applies it before, W_hg (r * h): use keras.layers.GRU(units, reset_after=False)."
        )
    activations = {"activation": getattr(ours, "activation", keras.activations.tanh)}
    if not isinstance(ours, SimpleRNNCell):
        activations["recurrent_activation"] = keras.activations.sigmoid
    for attribute, activation in activations.items():
        theirs_name, ours_name = (keras.activations.serialize(a)
                                  for a in (getattr(theirs, attribute), activation))
        if theirs_name != ours_name:
            raise ValueError(f"copy_keras_cell_weights: the Keras layer's {attribute} is "
                             f"{theirs_name!r}, our {type(ours).__name__} uses {ours_name!r}.")
    input_dim, units = int(theirs.kernel.shape[0]), int(theirs.units)
    if ours.units != units:
        raise ValueError(f"copy_keras_cell_weights: Keras layer has {units} units, "
                         f"our cell {ours.units}.")
    if not ours.built:
        ours.build((None, input_dim))
    elif ours.input_dim != input_dim:
        raise ValueError(f"copy_keras_cell_weights: Keras layer takes {input_dim} input "
                         f"features, our cell {ours.input_dim}.")

    kernel = ops.convert_to_numpy(theirs.kernel)                     # (d, k*u)
    recurrent = ops.convert_to_numpy(theirs.recurrent_kernel)        # (u, k*u)
    bias = (ops.convert_to_numpy(theirs.bias) if theirs.bias is not None
            else np.zeros(kernel.shape[-1], kernel.dtype))           # (k*u,)
    for block, gate in enumerate(gates):
        columns = slice(block * units, (block + 1) * units)
        for name, values in zip(ours._gates[gate], (kernel, recurrent, bias), strict=True):
            getattr(ours, name).assign(values[..., columns])
    if getattr(ours, "peephole", False):
        for name in ("p_i", "p_f", "p_o"):
            getattr(ours, name).assign(np.zeros(units, kernel.dtype))
    return target
