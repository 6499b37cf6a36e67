"""Two Adams for embedding tables: :class:`LazyAdam` updates the used rows only,
:class:`FusedAdam` is exactly Adam in TensorFlow's fused kernel."""

from __future__ import annotations

import types
import warnings

import keras
import tensorflow as tf


def sum_rows_per_index(gradient: tf.IndexedSlices) -> tf.IndexedSlices:
    """The same gradient with the rows of each index added up: ``(n, ...)`` -> ``(unique, ...)``."""
    words, row_of = tf.unique(gradient.indices)                      # (unique,), (n,)
    rows = tf.math.unsorted_segment_sum(gradient.values, row_of, tf.shape(words)[0])
    return tf.IndexedSlices(rows, words, gradient.dense_shape)       # rows: (unique, ...)


class _AdamWithMomentLookup(keras.optimizers.Adam):
    """Keras's Adam that notes which moment tables belong to which variable (and replica)."""

    def __init__(self, amsgrad=False, **kwargs):
        if amsgrad:
            raise ValueError(f"{type(self).__name__} does not support amsgrad=True; use "
                             "keras.optimizers.Adam.")
        super().__init__(amsgrad=False, **kwargs)
        # Not a dict: Keras would track its variables as the optimizer's own a second time.
        self.moments = types.SimpleNamespace(by_variable={})

    def add_variable_from_reference(self, reference_variable, name=None, initializer="zeros"):
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

    def update_step(self, gradient, variable, learning_rate):
        # Rows of the same index added up first, so several replicas match one device.
        if isinstance(gradient, tf.IndexedSlices):
            gradient = sum_rows_per_index(gradient)
        super().update_step(gradient, variable, learning_rate)


@keras.saving.register_keras_serializable(package="seqlab")
class LazyAdam(_AdamWithMomentLookup):
    """Adam that updates only the rows of an embedding table that the batch used ("lazy" Adam).

    For a dense gradient this is Keras's Adam. For an embedding lookup's ``tf.IndexedSlices``
    Adam's update runs on the used rows only:

        m[i] ← β₁ m[i] + (1 − β₁) g[i],    v[i] ← β₂ v[i] + (1 − β₂) g[i]²,
        θ[i] ← θ[i] − α_t m[i] / (√v[i] + ε),    α_t = η √(1 − β₂ᵗ) / (1 − β₁ᵗ),

    for each used row ``i``. Not with ``amsgrad=True`` nor ``jit_compile``. Its arguments are
    ``keras.optimizers.Adam``'s.

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

    def __init__(self, learning_rate=0.001, name="lazy_adam", **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)

    def update_step(self, gradient, variable, learning_rate):
        moments = self.moments_of(variable) if isinstance(gradient, tf.IndexedSlices) else None
        if moments is None:
            return super().update_step(gradient, variable, learning_rate)
        m, v = moments
        dtype = variable.dtype
        gradient = sum_rows_per_index(gradient)
        words = gradient.indices                                        # (used,)
        rows = tf.cast(gradient.values, dtype)                          # (used, ...)
        step = tf.cast(self.iterations + 1, dtype)
        beta_1, beta_2 = tf.cast(self.beta_1, dtype), tf.cast(self.beta_2, dtype)
        m_rows = beta_1 * tf.gather(m, words) + (1 - beta_1) * rows        # (used, ...)
        v_rows = beta_2 * tf.gather(v, words) + (1 - beta_2) * tf.square(rows)
        m.scatter_update(tf.IndexedSlices(m_rows, words))
        v.scatter_update(tf.IndexedSlices(v_rows, words))
        alpha = tf.cast(learning_rate, dtype) * tf.sqrt(1 - beta_2**step) / (1 - beta_1**step)
        update = alpha * m_rows / (tf.sqrt(v_rows) + tf.cast(self.epsilon, dtype))
        variable.scatter_sub(tf.IndexedSlices(update, words))
        return None


@keras.saving.register_keras_serializable(package="seqlab")
class FusedAdam(_AdamWithMomentLookup):
    """Keras's Adam computed by ``tf.raw_ops.ResourceApplyAdam``, one pass per variable.

    TensorFlow only; not with ``amsgrad=True``. Its arguments are ``keras.optimizers.Adam``'s.

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

    def __init__(self, learning_rate=0.001, name="fused_adam", **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)

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
