"""Recurrent cells written from the slide equations (1)–(11), one time step each.

``cell(x_t, states) -> (y_t, new_states)``, ``x_t`` ``(batch, features)``; ``keras.layers.RNN``
runs a cell over ``(batch, time, features)``. One weight per slide symbol (``cell.W_xf`` is
eq. (3)'s ``W_xf``), stored ``(d, u)`` for row vectors: the transpose of the slides' ``W_x``.
"""

from __future__ import annotations

import keras
from keras import ops

from seqlab.layers.initializers import clone_initializer, column_blocks


@keras.saving.register_keras_serializable(package="seqlab")
class RecurrentCell(keras.layers.Layer):
    """What every cell here shares: ``units``, input checks, and per-gate weights.

    A gate ``k`` is a fully connected layer on ``x(t)`` and the previous state: its net input
    is ``x(t) W_xk + h(t-1) W_hk + b_k`` (:meth:`net_input`); :meth:`add_gates` creates
    their weights. Subclasses write ``call`` (and set ``state_size`` if not ``units``).

    Args:
        units: size of the state ``h(t)`` (and of the output), a positive integer.
        kernel_initializer: initializer of the input weights ``W_x…``.
        recurrent_initializer: initializer of the recurrent weights ``W_h…``.
        bias_initializer: initializer of the biases ``b_…``.
    """

    def __init__(self, units: int, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros", **kwargs):
        super().__init__(**kwargs)
        if isinstance(units, bool) or not isinstance(units, int) or units <= 0:
            raise ValueError(f"units must be a positive integer; got {units!r}.")
        self.units = units
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.recurrent_initializer = keras.initializers.get(recurrent_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.state_size = self.output_size = units
        self.input_dim: int | None = None

    def build(self, input_shape):
        input_shape = tuple(input_shape)
        if len(input_shape) != 2:
            raise ValueError(
                f"{type(self).__name__} computes one time step: inputs of rank 2, (batch, "
                f"features); got {input_shape}. Run it over (batch, time, features) with "
                "keras.layers.RNN(cell); a (batch, features) tensor needs a time axis, x[:, None]."
            )
        if input_shape[-1] is None:
            raise ValueError(f"{type(self).__name__} needs the number of input features; got "
                             f"{input_shape}. Give the last axis a size: keras.Input((None, 8)).")
        self.input_dim = int(input_shape[-1])

    def add_gates(self, *gates: str, state: str = "h", bias_initializers=None) -> None:
        """Create ``W_x<k> (d, u)``, ``W_<state><k> (u, u)`` and ``b_<k> (u,)`` as attributes
        for every gate ``k`` (``gate=""``, ``state="y"``: eq. (1)'s ``W_x``, ``W_y``, ``b``).

        The gates start as the column blocks, in the order given, of one draw of Keras's fused
        kernels ``(d, k·u)``, ``(u, k·u)`` and bias ``(k·u,)`` (LSTM ``i, f, g, o``, GRU
        ``z, r, g``). ``bias_initializers`` maps a gate to its own bias initializer. Call it in
        ``build``, after ``super().build(input_shape)``.
        """
        if self.input_dim is None:
            raise RuntimeError("add_gates needs the input size: call it in build(), after "
                               "super().build(input_shape).")
        shapes = ((self.input_dim, self.units), (self.units, self.units), (self.units,))
        initializers = (self.kernel_initializer, self.recurrent_initializer,
                        self.bias_initializer)
        blocks = [column_blocks(initializer, shape, len(gates), self.variable_dtype)
                  for initializer, shape in zip(initializers, shapes, strict=True)]
        bias_initializers = bias_initializers or {}
        for index, gate in enumerate(gates):
            names = (f"W_x{gate}", f"W_{state}{gate}", f"b_{gate}" if gate else "b")
            starts = [kind[index] for kind in blocks]  # this gate's block of each draw
            if gate in bias_initializers:
                starts[2] = clone_initializer(bias_initializers[gate])
            for name, shape, initializer in zip(names, shapes, starts, strict=True):
                setattr(self, name, self.add_weight(shape=shape, initializer=initializer,
                                                    name=name))
            self._gates = {**getattr(self, "_gates", {}), gate: names}

    def net_input(self, gate: str, x, state):
        """``x W_x<gate> + state W_h<gate> + b_<gate>``: ``(batch, d), (batch, u) -> (batch, u)``."""
        input_weights, recurrent_weights, bias = (getattr(self, n) for n in self._gates[gate])
        return ops.matmul(x, input_weights) + ops.matmul(state, recurrent_weights) + bias

    def check_step_input(self, inputs):
        """A ValueError saying what to do when a step input is not ``(batch, d)``."""
        shape = tuple(inputs.shape)
        if len(shape) != 2 or (shape[-1] is not None and shape[-1] != self.input_dim):
            raise ValueError(
                f"{type(self).__name__} was built for steps of shape (batch, {self.input_dim}) "
                f"and got {shape}. Pass sequences (batch, time, {self.input_dim}) to "
                "keras.layers.RNN(cell), or call the cell on one step x[:, t, :]."
            )

    def get_config(self):
        names = ("kernel_initializer", "recurrent_initializer", "bias_initializer")
        return {**super().get_config(), "units": self.units,
                **{name: keras.initializers.serialize(getattr(self, name)) for name in names}}


@keras.saving.register_keras_serializable(package="seqlab")
class SimpleRNNCell(RecurrentCell):
    r"""The recurrent layer of eq. (1): a memory cell whose state is its output.

    .. math:: \mathbf{y}_{(t)} = f(\mathbf{W}_x \mathbf{x}_{(t)}^\top
              + \mathbf{W}_y \mathbf{y}_{(t-1)}^\top + \mathbf{b})

    Args:
        units: number of recurrent perceptrons ``u``.
        activation: ``f`` (default ``"tanh"``, as Keras's ``SimpleRNN``).

    Weights: ``W_x (d, u)``, ``W_y (u, u)``, ``b (u,)``.

    Call arguments:
        inputs: ``x(t)``, ``(batch, d)``: one time step (``keras.layers.RNN`` loops over time).
        states: ``[y(t-1)]``, ``(batch, u)``.

    Returns:
        ``(y(t), [y(t)])``, the output and the new state, ``(batch, u)`` each.

    Example:
        >>> import numpy as np
        >>> rnn = keras.layers.RNN(SimpleRNNCell(4), return_sequences=True)
        >>> rnn(np.ones((2, 7, 3), "float32")).shape  # (batch, time, units)
        TensorShape([2, 7, 4])
    """

    def __init__(self, units: int, activation="tanh", **kwargs):
        super().__init__(units, **kwargs)
        self.activation = keras.activations.get(activation)

    def build(self, input_shape):
        super().build(input_shape)
        self.add_gates("", state="y")

    def call(self, inputs, states):
        self.check_step_input(inputs)
        y_previous = states[0]                                   # (batch, u)
        y = self.activation(self.net_input("", inputs, y_previous))   # eq. (1)
        return y, [y]

    def get_config(self):
        return {**super().get_config(),
                "activation": keras.activations.serialize(self.activation)}


@keras.saving.register_keras_serializable(package="seqlab")
class LSTMCell(RecurrentCell):
    r"""The LSTM cell of eqs. (2)–(7), optionally with peephole connections.

    .. math::
        \mathbf{i}_{(t)} &= \sigma(\mathbf{W}_{xi}\mathbf{x}_{(t)} + \mathbf{W}_{hi}\mathbf{h}_{(t-1)} + \mathbf{b}_i) \quad (2)\\
        \mathbf{f}_{(t)} &= \sigma(\mathbf{W}_{xf}\mathbf{x}_{(t)} + \mathbf{W}_{hf}\mathbf{h}_{(t-1)} + \mathbf{b}_f) \quad (3)\\
        \mathbf{o}_{(t)} &= \sigma(\mathbf{W}_{xo}\mathbf{x}_{(t)} + \mathbf{W}_{ho}\mathbf{h}_{(t-1)} + \mathbf{b}_o) \quad (4)\\
        \mathbf{g}_{(t)} &= \tanh(\mathbf{W}_{xg}\mathbf{x}_{(t)} + \mathbf{W}_{hg}\mathbf{h}_{(t-1)} + \mathbf{b}_g) \quad (5)\\
        \mathbf{c}_{(t)} &= \mathbf{f}_{(t)} \otimes \mathbf{c}_{(t-1)} + \mathbf{i}_{(t)} \otimes \mathbf{g}_{(t)} \quad (6)\\
        \mathbf{y}_{(t)} = \mathbf{h}_{(t)} &= \mathbf{o}_{(t)} \otimes \tanh(\mathbf{c}_{(t)}) \quad (7)

    With ``peephole=True`` (Gers & Schmidhuber, 2000), eqs. (2), (3), (4) add ``p_i ⊙ c(t-1)``,
    ``p_f ⊙ c(t-1)`` and ``p_o ⊙ c(t)``, each ``p`` a ``(u,)`` vector.

    Args:
        units: size ``u`` of both states ``h(t)`` and ``c(t)``.
        peephole: add the peephole connections.
        unit_forget_bias: start ``b_f`` at one so the cell remembers by default (as Keras).

    Call arguments:
        inputs: ``x(t)``, ``(batch, d)``.
        states: ``[h(t-1), c(t-1)]``, ``(batch, u)`` each.

    Returns:
        ``(h(t), [h(t), c(t)])``, each ``(batch, u)``.

    Example:
        >>> import numpy as np
        >>> lstm = keras.layers.RNN(LSTMCell(4, peephole=True), return_state=True)
        >>> h, h_again, c = lstm(np.ones((2, 7, 3), "float32"))  # last output, then the states
        >>> h.shape, c.shape
        (TensorShape([2, 4]), TensorShape([2, 4]))
    """

    GATES = ("i", "f", "g", "o")

    def __init__(self, units: int, peephole: bool = False, unit_forget_bias: bool = True,
                 **kwargs):
        super().__init__(units, **kwargs)
        self.peephole = bool(peephole)
        self.unit_forget_bias = bool(unit_forget_bias)
        self.state_size = [units, units]  # h and c

    def build(self, input_shape):
        super().build(input_shape)
        self.add_gates(*self.GATES, bias_initializers={"f": "ones"} if self.unit_forget_bias
                       else None)
        if self.peephole:
            for name in ("p_i", "p_f", "p_o"):
                setattr(self, name, self.add_weight(
                    shape=(self.units,), initializer=clone_initializer(self.kernel_initializer),
                    name=name))

    def call(self, inputs, states):
        self.check_step_input(inputs)
        h_previous, c_previous = states                              # (batch, u) each
        i = self.net_input("i", inputs, h_previous)
        f = self.net_input("f", inputs, h_previous)
        o = self.net_input("o", inputs, h_previous)
        if self.peephole:
            i = i + self.p_i * c_previous
            f = f + self.p_f * c_previous
        i = ops.sigmoid(i)                                           # eq. (2)
        f = ops.sigmoid(f)                                           # eq. (3)
        g = ops.tanh(self.net_input("g", inputs, h_previous))        # eq. (5)
        c = f * c_previous + i * g                                   # eq. (6)
        if self.peephole:
            o = o + self.p_o * c
        o = ops.sigmoid(o)                                           # eq. (4)
        h = o * ops.tanh(c)                                          # eq. (7)
        return h, [h, c]

    def get_config(self):
        return {**super().get_config(), "peephole": self.peephole,
                "unit_forget_bias": self.unit_forget_bias}


@keras.saving.register_keras_serializable(package="seqlab")
class GRUCell(RecurrentCell):
    r"""The GRU cell of eqs. (8)–(11), exactly as on the slides.

    .. math::
        \mathbf{z}_{(t)} &= \sigma(\mathbf{W}_{xz}\mathbf{x}_{(t)} + \mathbf{W}_{hz}\mathbf{h}_{(t-1)} + \mathbf{b}_z) \quad (8)\\
        \mathbf{r}_{(t)} &= \sigma(\mathbf{W}_{xr}\mathbf{x}_{(t)} + \mathbf{W}_{hr}\mathbf{h}_{(t-1)} + \mathbf{b}_r) \quad (9)\\
        \mathbf{g}_{(t)} &= \tanh(\mathbf{W}_{xg}\mathbf{x}_{(t)} + \mathbf{W}_{hg}(\mathbf{r}_{(t)} \otimes \mathbf{h}_{(t-1)}) + \mathbf{b}_g) \quad (10)\\
        \mathbf{y}_{(t)} = \mathbf{h}_{(t)} &= \mathbf{z}_{(t)} \otimes \mathbf{h}_{(t-1)} + (1 - \mathbf{z}_{(t)}) \otimes \mathbf{g}_{(t)} \quad (11)

    The reset gate acts on ``h(t-1)`` before ``W_hg``, as Keras's ``GRU(reset_after=False)``;
    ``z`` keeps the old state (Keras's convention too).

    Args:
        units: size ``u`` of the state ``h(t)``.

    Call arguments:
        inputs: ``x(t)``, ``(batch, d)``.
        states: ``[h(t-1)]``, ``(batch, u)``.

    Returns:
        ``(h(t), [h(t)])``, ``(batch, u)`` each.

    Example:
        >>> import numpy as np
        >>> gru = keras.layers.Bidirectional(keras.layers.RNN(GRUCell(4)))
        >>> gru(np.ones((2, 7, 3), "float32")).shape  # forward and backward states side by side
        TensorShape([2, 8])
    """

    GATES = ("z", "r", "g")

    def build(self, input_shape):
        super().build(input_shape)
        self.add_gates(*self.GATES)

    def call(self, inputs, states):
        self.check_step_input(inputs)
        h_previous = states[0]                                       # (batch, u)
        z = ops.sigmoid(self.net_input("z", inputs, h_previous))     # eq. (8)
        r = ops.sigmoid(self.net_input("r", inputs, h_previous))     # eq. (9)
        g = ops.tanh(self.net_input("g", inputs, r * h_previous))    # eq. (10)
        h = z * h_previous + (1.0 - z) * g                           # eq. (11)
        return h, [h]
