"""seqlab.layers.initializers: a clone draws values of its own; column blocks are one draw."""

from __future__ import annotations

import keras
import numpy as np
import pytest

from seqlab.layers.initializers import clone_initializer, column_blocks


@pytest.mark.parametrize("initializer", ["glorot_uniform", "orthogonal", "random_normal"])
def test_a_clone_draws_other_values_than_the_original(initializer):
    original = keras.initializers.get(initializer)
    np.testing.assert_array_equal(original((4, 5)), original((4, 5)))  # why clones are needed
    clone = clone_initializer(original)
    assert type(clone) is type(original)
    assert not np.array_equal(clone((4, 5)), original((4, 5)))


def test_a_seeded_initializer_keeps_its_seed_and_one_without_seed_its_values():
    seeded = keras.initializers.GlorotUniform(seed=7)
    np.testing.assert_array_equal(clone_initializer(seeded)((3, 3)), seeded((3, 3)))
    np.testing.assert_array_equal(clone_initializer(keras.initializers.Constant(2.0))((2,)),
                                  [2.0, 2.0])
    # Keras 3.13's Identity has no get_config of its own: a clone from its config loses the gain.
    np.testing.assert_array_equal(clone_initializer(keras.initializers.Identity(0.5))((2, 2)),
                                  0.5 * np.eye(2))


def test_column_blocks_are_the_blocks_of_one_draw():
    keras.utils.set_random_seed(0)
    blocks = column_blocks("orthogonal", (6, 6), blocks=4)
    fused = np.concatenate([np.asarray(block((6, 6))) for block in blocks], axis=-1)  # (6, 24)
    # One orthogonal (6, 24) has orthonormal rows; four independent (6, 6) would have rows of
    # norm 2 after concatenation.
    np.testing.assert_allclose(fused @ fused.T, np.eye(6), atol=1e-5)
    assert all(not np.array_equal(fused[:, :6], fused[:, 6 * k:6 * (k + 1)]) for k in (1, 2, 3))


def test_column_blocks_of_a_vector_and_the_dtype():
    first, second = column_blocks("ones", (3,), blocks=2, dtype="float32")
    assert tuple(first((3,)).shape) == (3,)
    np.testing.assert_array_equal(second((3,), dtype="float16"), np.ones(3))
    assert keras.backend.standardize_dtype(second((3,), dtype="float16").dtype) == "float16"
