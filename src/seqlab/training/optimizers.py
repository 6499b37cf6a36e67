"""Optimizers the course needs beyond Keras's own.

What Keras 3 (TensorFlow backend) does with an embedding table's gradient: the lookup's
gradient arrives as ``tf.IndexedSlices``, the rows of the table a batch used, by index (one row
per occurrence, so a word used twice comes twice). ``keras.optimizers.SGD`` without momentum
keeps it sparse (``ops.multiply`` keeps the slices, ``assign_sub`` becomes a
``scatter_sub``): only the used rows change. ``keras.optimizers.Adam`` squares the rows one by
one (``ops.square`` keeps them sparse), then ``ops.subtract(gradient, m)`` with the dense
moment densifies the gradient: every step reads and rewrites the whole table and both moment
tables, however few rows the batch used (``keras/optimizers/adam.py``,
``keras/backend/tensorflow/sparse.py``), in five or so separate passes over each table
(subtract, multiply, add, square, divide, each a TensorFlow kernel of its own).

Two cuts, measured by ``python -m benchmarks.embedding_updates`` (table in
``benchmarks/README.md``):

- :class:`LazyAdam` updates the used rows only: the choice for nnlm-en-dim50's 963,812-row
  table (notebook 02), where a batch uses a few thousand rows;
- :class:`FusedAdam` is Adam on the whole table, exactly, in one pass: TensorFlow's fused
  ``ResourceApplyAdam`` kernel, the one Keras 2's Adam used. The choice for the skip-gram's two
  20,000-row tables (notebook 06), which a batch of 4,096 pairs covers widely, and where lazy
  Adam's slower-moving rare words showed in the loss.

XLA (``jit_compile=True``) compiles the skip-gram with Keras's Adam (Keras 3.10 and 3.13), but
on the 2-core CPU measured its step was slower, not faster (0.79 times the pairs per second);
on a GPU Keras turns XLA on by itself (``jit_compile="auto"``).
"""

from __future__ import annotations

import warnings

import keras
import tensorflow as tf


def sum_rows_per_index(gradient: tf.IndexedSlices) -> tf.IndexedSlices:
    """The same gradient with one row per index: rows with the same index added up.

    ``gradient.values`` ``(n, ...)`` with indices ``(n,)`` becomes ``(unique, ...)`` with the
    unique indices (in order of first appearance), ``(unique,)``.
    """
    words, row_of = tf.unique(gradient.indices)                      # (unique,), (n,)
    rows = tf.math.unsorted_segment_sum(gradient.values, row_of, tf.shape(words)[0])
    return tf.IndexedSlices(rows, words, gradient.dense_shape)       # rows: (unique, ...)


@keras.saving.register_keras_serializable(package="seqlab")
class SummedRowsAdam(keras.optimizers.Adam):
    """Adam (Kingma & Ba, 2015) that adds up a sparse gradient's rows for the same word first.

    An embedding table's gradient arrives as ``tf.IndexedSlices``: rows of the table, by
    index. Keras's Adam squares those rows one by one (``ops.square`` keeps them sparse)
    before adding them into the second moment, so a word whose gradient comes in two rows
    gets ``g1² + g2²`` where the algorithm asks for ``(g1 + g2)²``. The TF-Hub module sums
    each batch's rows per word itself, so on one device the two agree; under a strategy with
    several replicas each replica sends its own row for a word and the all-reduce puts them
    side by side, so the fine-tuned embedding would drift from the one-device run. Summing
    rows with the same index before the update (nothing else changes) makes several replicas
    match one device (``tests/test_distribute.py``) and is exactly what Adam computes on the
    dense gradient.
    """

    def update_step(self, gradient, variable, learning_rate):
        if isinstance(gradient, tf.IndexedSlices):
            gradient = sum_rows_per_index(gradient)
        super().update_step(gradient, variable, learning_rate)


class _MomentsByVariable:
    """Adam's moment tables of each model variable, by the variable's ``ref()`` (not tracked:
    the optimizer tracks and saves the moments itself)."""

    def __init__(self):
        self.by_variable = {}


class _AdamWithMomentLookup(SummedRowsAdam):
    """Keras's Adam that knows, from public API, which moment tables belong to which variable.

    Keras creates Adam's moments with the public :meth:`add_variable_from_reference`; this
    override notes each one against its model variable (and, under a ``tf.distribute``
    strategy, each replica's copy against the same replica's copy of the variable, which is
    what ``update_step`` receives).
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad=False, **kwargs):
        if amsgrad:
            raise ValueError(f"{type(self).__name__} does not support amsgrad=True; use "
                             "keras.optimizers.Adam.")
        super().__init__(learning_rate=learning_rate, beta_1=beta_1, beta_2=beta_2,
                         epsilon=epsilon, amsgrad=False, **kwargs)
        self.moments = _MomentsByVariable()

    def add_variable_from_reference(self, reference_variable, name=None, initializer="zeros"):
        """Keras's, plus a note of which model variable each moment table belongs to."""
        slot = super().add_variable_from_reference(reference_variable, name=name,
                                                   initializer=initializer)
        value = getattr(reference_variable, "value", reference_variable)
        local_copies = tf.distribute.get_strategy().experimental_local_results
        for copy, slot_copy in zip(local_copies(value), local_copies(slot.value), strict=True):
            self.moments.by_variable.setdefault(copy.ref(), {})[name] = slot_copy
        return slot

    def moments_of(self, variable):
        """``(m, v)``, the ``tf.Variable`` moment tables of ``variable``, or ``None``."""
        slots = self.moments.by_variable.get(variable.ref(), {})
        if "momentum" not in slots or "velocity" not in slots:
            warnings.warn(f"{type(self).__name__} could not find Adam's moments of "
                          f"{variable.name} (a Keras release that creates them another way?): "
                          "updating it as keras.optimizers.Adam does.", stacklevel=3)
            return None
        return slots["momentum"], slots["velocity"]

    def step_size(self, learning_rate, dtype):
        """Adam's ``α_t = η √(1 − β₂ᵗ) / (1 − β₁ᵗ)`` for this step."""
        step = tf.cast(self.iterations + 1, dtype)
        return (tf.cast(learning_rate, dtype) * tf.sqrt(1 - tf.pow(tf.cast(self.beta_2, dtype), step))
                / (1 - tf.pow(tf.cast(self.beta_1, dtype), step)))


@keras.saving.register_keras_serializable(package="seqlab")
class LazyAdam(_AdamWithMomentLookup):
    """Adam that updates only the rows of an embedding table that the batch used ("lazy" Adam).

    For a dense gradient this is Keras's Adam. For a sparse one (``tf.IndexedSlices``, the
    gradient of an embedding lookup) the rows of the same word are first added up (as
    :class:`SummedRowsAdam` does), then Adam's update runs on the used rows only:

        m[i] ← β₁ m[i] + (1 − β₁) g[i],    v[i] ← β₂ v[i] + (1 − β₂) g[i]²,
        θ[i] ← θ[i] − α_t m[i] / (√v[i] + ε),    α_t = η √(1 − β₂ᵗ) / (1 − β₁ᵗ),

    for each used row ``i``, with ``t`` the optimizer's step count; the other rows of ``θ``,
    ``m`` and ``v`` are left as they are. This is the update of TF Addons' ``LazyAdam``
    (``tfa.optimizers.LazyAdam``, which tf.keras users took for large embeddings; TF Addons is
    no longer maintained and has no Keras 3 version) and of PyTorch's
    ``torch.optim.SparseAdam``, written here for Keras 3.

    Why: Keras's Adam turns an embedding's sparse gradient into a dense one (see the module's
    docstring), so fine-tuning nnlm-en-dim50 (963,812 × 50) reads and rewrites 48 million
    weights and both moment tables on every step, although a batch of 128 reviews uses a few
    thousand rows. Here a step costs what the used rows cost.

    What changes: dense Adam also moves a row on the steps that do not use it (its ``m``
    decays by β₁ a step but is not zero), about ten more steps' worth after each use; lazy
    Adam does not, so a rarely used row moves less. Rows used on every step, and every dense
    weight, get exactly Adam's update. Fine-tuning the nnlm-sized table at notebook 02's rate
    (1e-4), the loss after the same steps matched Adam's to four digits; on the skip-gram,
    where most of the 20,000 words are rare and the rate is 0.005, it was measurably higher
    than Adam's: use :class:`FusedAdam` there.

    Not with ``amsgrad=True``. Use it without ``jit_compile`` (``tf.unique`` has dynamic
    shapes). Works under a ``tf.distribute`` strategy (each replica's copy of the table is
    updated in place, ``tests/test_distribute.py``).

    Args:
        learning_rate, beta_1, beta_2, epsilon, **kwargs: as ``keras.optimizers.Adam``.

    Example:
        >>> import numpy as np
        >>> model = keras.Sequential([keras.Input((3,), dtype="int32"),
        ...                           keras.layers.Embedding(1000, 4),   # (batch, 3, 4)
        ...                           keras.layers.GlobalAveragePooling1D(), keras.layers.Dense(1)])
        >>> model.compile(optimizer=LazyAdam(learning_rate=0.1), loss="mse")
        >>> table = model.layers[0].embeddings.numpy()
        >>> _ = model.fit(np.array([[1, 2, 3]]), np.ones((1, 1)), verbose=0)
        >>> np.flatnonzero((model.layers[0].embeddings.numpy() != table).any(axis=1)).tolist()
        [1, 2, 3]
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad=False, name="lazy_adam", **kwargs):
        super().__init__(learning_rate=learning_rate, beta_1=beta_1, beta_2=beta_2,
                         epsilon=epsilon, amsgrad=amsgrad, name=name, **kwargs)

    def update_step(self, gradient, variable, learning_rate):
        moments = self.moments_of(variable) if isinstance(gradient, tf.IndexedSlices) else None
        if moments is None:
            return super().update_step(gradient, variable, learning_rate)
        m, v = moments
        dtype = variable.dtype
        gradient = sum_rows_per_index(gradient)
        words = gradient.indices                                        # (used,)
        rows = tf.cast(gradient.values, dtype)                          # (used, ...)
        beta_1, beta_2 = tf.cast(self.beta_1, dtype), tf.cast(self.beta_2, dtype)
        m_rows = beta_1 * tf.gather(m, words) + (1 - beta_1) * rows        # (used, ...)
        v_rows = beta_2 * tf.gather(v, words) + (1 - beta_2) * tf.square(rows)
        m.scatter_update(tf.IndexedSlices(m_rows, words))
        v.scatter_update(tf.IndexedSlices(v_rows, words))
        step = self.step_size(learning_rate, dtype) * m_rows / (
            tf.sqrt(v_rows) + tf.cast(self.epsilon, dtype))
        variable.scatter_sub(tf.IndexedSlices(step, words))
        return None


@keras.saving.register_keras_serializable(package="seqlab")
class FusedAdam(_AdamWithMomentLookup):
    """Adam on every weight, each variable updated in one pass by TensorFlow's fused kernel.

    The same update as Keras's Adam (and, for a sparse gradient, as :class:`SummedRowsAdam`:
    rows of the same word added up, as Adam on the dense gradient asks), computed by
    ``tf.raw_ops.ResourceApplyAdam``: one multi-threaded kernel that reads ``θ``, ``m``, ``v``
    and the gradient once and writes them once, where Keras 3's Adam, written with
    ``keras.ops`` for every backend, makes several passes with a temporary table each. Keras 2's
    ``tf.keras.optimizers.Adam`` used this kernel. Nothing is approximated: the results equal
    Keras's Adam's up to float32 rounding (``tests/test_optimizers.py``).

    Why: notebook 06's skip-gram trains two 20,000 × 100 tables with Adam; a batch of 4,096
    pairs uses a wide part of them, so the whole-table update is most of the step. Lazy Adam
    would cut the same time but moves rare words less (see :class:`LazyAdam`); this keeps
    Adam's loss curve. TensorFlow only (the project's optimizers are; a Keras 3 model on
    another backend would use ``keras.optimizers.Adam``).

    Not with ``amsgrad=True``. Runs with or without ``jit_compile`` (XLA compiles the kernel).

    Args:
        learning_rate, beta_1, beta_2, epsilon, **kwargs: as ``keras.optimizers.Adam``.

    Example:
        >>> import numpy as np
        >>> from seqlab.lessons.nb06 import SkipGram
        >>> word2vec = SkipGram(vocab_size=50, embedding_dim=8)
        >>> word2vec.compile(optimizer=FusedAdam(learning_rate=0.005),
        ...                  loss=keras.losses.BinaryCrossentropy(from_logits=True))
        >>> centre, candidates = np.array([3, 4]), np.array([[5, 6, 7], [8, 9, 10]])
        >>> labels = np.array([[1.0, 0, 0], [1.0, 0, 0]])
        >>> round(float(word2vec.train_on_batch((centre, candidates), labels)), 2)
        0.69
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad=False, name="fused_adam", **kwargs):
        super().__init__(learning_rate=learning_rate, beta_1=beta_1, beta_2=beta_2,
                         epsilon=epsilon, amsgrad=amsgrad, name=name, **kwargs)

    def update_step(self, gradient, variable, learning_rate):
        moments = self.moments_of(variable)
        if moments is None:
            return super().update_step(gradient, variable, learning_rate)
        m, v = moments
        dtype = variable.dtype
        step = tf.cast(self.iterations + 1, dtype)
        beta_1, beta_2 = tf.cast(self.beta_1, dtype), tf.cast(self.beta_2, dtype)
        # An IndexedSlices becomes dense by adding up the rows of each index.
        gradient = tf.cast(tf.convert_to_tensor(gradient), dtype)
        tf.raw_ops.ResourceApplyAdam(
            var=variable.handle, m=m.handle, v=v.handle, beta1_power=tf.pow(beta_1, step),
            beta2_power=tf.pow(beta_2, step), lr=tf.cast(learning_rate, dtype), beta1=beta_1,
            beta2=beta_2, epsilon=tf.cast(self.epsilon, dtype), grad=gradient)
        return None
