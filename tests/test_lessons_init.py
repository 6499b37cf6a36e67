"""seqlab.lessons: ConfigFromArguments and add_to_class, what lesson classes are built with."""

import keras
import numpy as np

from seqlab.lessons import ConfigFromArguments


class Affine(ConfigFromArguments, keras.layers.Layer):
    def __init__(self, units, scale=1.0, **kwargs):
        super().__init__(**kwargs)
        self.dense = keras.layers.Dense(units)
        self.scale = scale

    def call(self, x):
        return self.scale * self.dense(x)


class ShiftedAffine(Affine):
    def __init__(self, units, shift, **kwargs):
        super().__init__(units, scale=2.0, **kwargs)
        self.shift = shift

    def call(self, x):
        return super().call(x) + self.shift


def test_the_config_holds_the_arguments_with_defaults_and_keras_own_entries():
    config = Affine(3, name="affine", dtype="float64").get_config()
    assert (config["units"], config["scale"], config["name"]) == (3, 1.0, "affine")
    assert "kwargs" not in config and "self" not in config
    clone = Affine.from_config(config)
    assert (clone.scale, clone.dtype_policy.name) == (1.0, "float64")


def test_a_subclass_records_its_own_arguments_and_round_trips():
    layer = ShiftedAffine(4, shift=0.5)
    config = layer.get_config()
    assert {k: config[k] for k in ("units", "shift")} == {"units": 4, "shift": 0.5}
    assert "scale" not in config  # the subclass's own signature, not its parent's
    x = np.ones((2, 3), "float32")
    clone = ShiftedAffine.from_config(config)
    expected, _ = layer(x), clone(x)  # both built
    clone.set_weights(layer.get_weights())
    np.testing.assert_allclose(clone(x), expected)
