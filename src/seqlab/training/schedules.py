"""The Transformer's learning-rate schedule and optimiser (Vaswani et al. 2017, section 5.3)."""

from __future__ import annotations

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="seqlab")
class TransformerSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """The paper's warm-up then inverse-square-root schedule.

    ``lrate = d_model^-0.5 · min(step_num^-0.5, step_num · warmup_steps^-1.5)``, with
    ``step_num`` = Keras's iteration + 1 (the paper counts from 1), so the peak,
    ``(d_model · warmup_steps)^-0.5``, is at iteration ``warmup_steps - 1``.

    Args:
        d_model: the model size (the rate scales as ``d_model^-0.5``).
        warmup_steps: length of the linear warm-up.
        scale: an extra constant factor (1.0 in the paper).
    """

    def __init__(self, d_model, warmup_steps=4000, scale=1.0):
        self.d_model = int(d_model)
        self.warmup_steps = int(warmup_steps)
        self.scale = float(scale)

    def __call__(self, step):
        step_num = ops.cast(step, "float32") + 1.0
        warmup = float(self.warmup_steps)
        rate = ops.minimum(ops.rsqrt(step_num), step_num * warmup**-1.5)
        return self.scale * float(self.d_model) ** -0.5 * rate

    def get_config(self):
        return {"d_model": self.d_model, "warmup_steps": self.warmup_steps, "scale": self.scale}


def transformer_optimizer(d_model, warmup_steps=4000, scale=1.0, **adam_kwargs):
    """``keras.optimizers.Adam(β₁=0.9, β₂=0.98, ε=1e-9)`` driven by :class:`TransformerSchedule`.

    Args:
        d_model, warmup_steps, scale: the schedule's (see :class:`TransformerSchedule`).
        adam_kwargs: passed to the optimizer (e.g. ``clipnorm``).
    """
    settings = {"beta_1": 0.9, "beta_2": 0.98, "epsilon": 1e-9, **adam_kwargs}
    return keras.optimizers.Adam(learning_rate=TransformerSchedule(d_model, warmup_steps, scale),
                                 **settings)
