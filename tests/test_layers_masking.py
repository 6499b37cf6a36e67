"""seqlab.layers.masking: the causal and padding masks, and ``masked_softmax`` (the one
masking rule) in float32, float16 and bfloat16, with padding as a property (hypothesis)."""

from __future__ import annotations

import keras
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqlab.layers import masking
from seqlab.layers.masking import masked_softmax

#: Machine epsilon of each dtype (float16: 10 mantissa bits, bfloat16: 7).
EPS = {"float32": 2.0**-23, "float16": 2.0**-10, "bfloat16": 2.0**-7}

rng = np.random.default_rng(10)
#: Row 3 is all padding (an empty source): its weights must be 0, not NaN.
MASK = np.arange(7)[None, :] < np.array([[7], [4], [1], [0]])


def as_float32(tensor):
    return np.asarray(keras.ops.cast(tensor, "float32"))


def assert_close(got, want, dtype, factor):
    got, want = as_float32(got), np.asarray(want, "float32")
    tolerance = factor * EPS[dtype] * max(float(np.abs(want).max()), 1.0)
    np.testing.assert_allclose(got, want, rtol=0, atol=tolerance)


def test_causal_mask_is_lower_triangular():
    mask = np.asarray(masking.causal_mask(4))
    np.testing.assert_array_equal(mask, np.tril(np.ones((4, 4), bool)))
    assert np.asarray(masking.causal_mask(2, 3)).tolist() == [[True, False, False], [True, True, False]]


def test_padding_mask():
    np.testing.assert_array_equal(masking.padding_mask(np.array([[3, 1, 0, 0]])), [[1, 1, 0, 0]])
    np.testing.assert_array_equal(masking.padding_mask(np.array([[3, 9, 9]]), padding_id=9), [[1, 0, 0]])


def test_a_row_with_no_real_position_gets_zero_weights_not_nan():
    weights = np.asarray(masked_softmax(np.zeros((1, 2, 3), "float32"), np.zeros((1, 1, 3), bool)))
    assert np.all(weights == 0.0)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_masked_softmax_in_every_dtype(dtype):
    scores = keras.ops.cast(rng.normal(scale=3.0, size=(4, 3, 7)), dtype)
    weights = masked_softmax(scores, MASK[:, None, :])  # (batch, Tq, Tv)
    assert weights.dtype == scores.dtype
    weights = as_float32(weights)
    assert np.isfinite(weights).all()
    assert np.all(weights[~np.broadcast_to(MASK[:, None, :], weights.shape)] == 0.0)
    np.testing.assert_allclose(weights[:3].sum(-1), 1.0, atol=4 * EPS[dtype])
    assert np.all(weights[3] == 0.0)  # fully padded row: zeros, not NaN or 1/7
    # float16 has no room for the -1e9 of a penalty: the where-select must not need it.
    big = keras.ops.cast(np.full((1, 3), 60000.0), dtype)
    assert np.isfinite(as_float32(masked_softmax(big, np.array([[True, False, True]])))).all()


def test_masked_softmax_without_mask_is_softmax():
    scores = rng.normal(size=(2, 5)).astype("float32")
    expected = np.exp(scores) / np.exp(scores).sum(-1, keepdims=True)
    np.testing.assert_allclose(masked_softmax(scores), expected, atol=1e-6)


@settings(max_examples=25, deadline=None)
@given(lengths=st.lists(st.integers(0, 5), min_size=1, max_size=4), extra=st.integers(1, 4),
       dtype=st.sampled_from(["float32", "float16", "bfloat16"]))
def test_appending_padding_leaves_real_positions_unchanged(lengths, extra, dtype):
    scores = rng.normal(scale=2.0, size=(len(lengths), 5)).astype("float32")
    mask = np.arange(5)[None, :] < np.array(lengths)[:, None]
    padded_scores = np.concatenate([scores, rng.normal(size=(len(lengths), extra))], 1)
    padded_mask = np.concatenate([mask, np.zeros((len(lengths), extra), bool)], 1)
    weights = as_float32(masked_softmax(keras.ops.cast(scores, dtype), mask))
    padded = as_float32(masked_softmax(keras.ops.cast(padded_scores, dtype), padded_mask))
    # Not bit-equal: the two softmaxes reduce rows of different lengths, so a vectorised CPU
    # kernel may sum them in another order (measured: 1 float32 ulp, 7.45e-09, on one CPU), and
    # casting back to float16/bfloat16 can then flip the last bit of that dtype. Weights lie in
    # [0, 1], so 2 units in the last place of the compute dtype bound both effects; a padding
    # leak would move a weight by about padded_weight/(1 + padded_weight), far above that.
    assert_close(padded[:, :5], weights, dtype, 2)
    assert np.all(padded[:, 5:] == 0.0)  # a where-select, exact by construction
