"""seqlab.layers.multi_head_attention: eq. 16 (scaled dot-product attention, also in float16 and
bfloat16), multi-head attention equal to Keras's, its cached sibling, the mask rules.
Config round trip, save/load, mixed precision and the mask contract: tests/test_layer_contract.py."""

from __future__ import annotations

import math

import keras
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from layer_contract import as_float32, assert_close_to_float32

from seqlab.layers import multi_head_attention

SETTINGS = settings(max_examples=12, deadline=None, derandomize=True)

RNG = np.random.default_rng(0)
X = RNG.normal(size=(3, 5, 16)).astype("float32")
CONTEXT = RNG.normal(size=(3, 6, 16)).astype("float32")
CONTEXT_MASK = np.array([[1, 1, 1, 1, 0, 0], [0] * 6, [1] * 6], bool)  # row 1: all padding



def test_attention_matches_eq_16():
    rng = np.random.default_rng(0)
    q, k, v = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 6))
    q, k, v = (x.astype("float32") for x in (q, k, v))
    output, weights = multi_head_attention.scaled_dot_product_attention(q, k, v)
    scores = q @ k.transpose(0, 2, 1) / math.sqrt(4)
    expected = np.exp(scores) / np.exp(scores).sum(-1, keepdims=True)
    np.testing.assert_allclose(weights, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(output, expected @ v, rtol=1e-5, atol=1e-5)


@SETTINGS
@given(st.integers(1, 6), st.integers(1, 7), st.data())
def test_attention_weights_sum_to_one_and_are_zero_at_masked_keys(t, s, data):
    keep = np.array(data.draw(st.lists(st.booleans(), min_size=s, max_size=s)))
    keep[data.draw(st.integers(0, s - 1))] = True  # at least one visible key
    rng = np.random.default_rng(t * 10 + s)
    q = rng.normal(size=(1, t, 4)).astype("float32")
    k = rng.normal(size=(1, s, 4)).astype("float32")
    v = rng.normal(size=(1, s, 3)).astype("float32")
    _, weights = multi_head_attention.scaled_dot_product_attention(q, k, v, attention_mask=keep[None, None, :])
    weights = np.asarray(weights)
    np.testing.assert_allclose(weights.sum(-1), 1.0, rtol=1e-5)
    assert np.all(weights[..., ~keep] == 0.0)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_masking_is_dtype_safe(dtype):
    q = keras.ops.ones((1, 2, 4), dtype=dtype)
    v = keras.ops.ones((1, 3, 4), dtype=dtype)
    mask = np.array([[[True, False, True]]])
    output, weights = multi_head_attention.scaled_dot_product_attention(q, v, v, attention_mask=mask)
    weights = np.asarray(keras.ops.cast(weights, "float32"))
    assert np.all(np.isfinite(weights)) and np.all(np.isfinite(np.asarray(
        keras.ops.cast(output, "float32"))))
    np.testing.assert_allclose(weights[..., 1], 0.0)
    np.testing.assert_allclose(weights.sum(-1), 1.0, rtol=1e-2)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_scaled_dot_product_attention_in_low_precision(dtype):
    q, k, v = (keras.ops.cast(a, dtype) for a in (X, CONTEXT, CONTEXT))
    output, weights = multi_head_attention.scaled_dot_product_attention(q, k, v, attention_mask=CONTEXT_MASK[:, None, :])
    assert output.dtype == dtype and weights.dtype == dtype
    weights = as_float32(weights)
    assert np.all(np.isfinite(weights)) and np.all(np.isfinite(as_float32(output)))
    assert np.all(weights[1] == 0)  # the fully padded row: zero weights, not NaN
    assert np.all(weights[0, :, 4:] == 0)
    np.testing.assert_allclose(weights[[0, 2]].sum(-1), 1.0, atol=1e-2)
    reference, _ = multi_head_attention.scaled_dot_product_attention(X, CONTEXT, CONTEXT,
                                                  attention_mask=CONTEXT_MASK[:, None, :])
    assert_close_to_float32(output, reference, "mixed_" + dtype)


# ----------------------------------------------------------------------------- multi-head


def _mha_pair(num_heads, key_dim, query, value, value_dim=None):
    ours = multi_head_attention.MultiHeadAttention(num_heads, key_dim, value_dim=value_dim)
    theirs = keras.layers.MultiHeadAttention(num_heads, key_dim, value_dim=value_dim)
    ours(query, value)
    theirs(query, value)
    return multi_head_attention.copy_keras_attention_weights(theirs, ours), theirs


@pytest.mark.parametrize("num_heads,key_dim,value_dim", [(1, 8, None), (4, 4, None), (2, 3, 5)])
def test_multi_head_attention_equals_keras(num_heads, key_dim, value_dim):
    rng = np.random.default_rng(1)
    query = rng.normal(size=(3, 5, 12)).astype("float32")
    value = rng.normal(size=(3, 7, 12)).astype("float32")
    value_mask = np.ones((3, 7), bool)
    value_mask[0, 4:] = False
    value_mask[2, 1:] = False
    ours, theirs = _mha_pair(num_heads, key_dim, query, value, value_dim)
    for kwargs in ({}, {"value_mask": value_mask}):
        mine, my_weights = ours(query, value, return_attention_scores=True, **kwargs)
        keras_out, keras_weights = theirs(query, value, return_attention_scores=True, **kwargs)
        np.testing.assert_allclose(mine, keras_out, atol=1e-5)
        np.testing.assert_allclose(my_weights, keras_weights, atol=1e-5)
    # self-attention with the causal mask and an explicit (B, T, S) attention mask
    attention_mask = rng.random((3, 5, 5)) > 0.3
    attention_mask[..., 0] = True
    for kwargs in ({"use_causal_mask": True}, {"attention_mask": attention_mask}):
        np.testing.assert_allclose(ours(query, query, **kwargs),
                                   theirs(query, query, **kwargs), atol=1e-5)


def test_multi_head_attention_returns_scores_and_keeps_no_state():
    layer = multi_head_attention.MultiHeadAttention(2, 4, name="mha")
    x = np.random.default_rng(2).normal(size=(1, 3, 8)).astype("float32")
    out, weights = layer(x, x, use_causal_mask=True, return_attention_scores=True)
    assert out.shape == (1, 3, 8) and weights.shape == (1, 2, 3, 3)
    assert np.all(np.asarray(weights)[0, :, 0, 1:] == 0)  # the first token sees only itself
    np.testing.assert_allclose(layer(x, x, use_causal_mask=True), out)  # same output alone
    assert not hasattr(layer, "last_attention_weights")


def test_cached_attention_step_by_step_equals_causal_self_attention():
    """Feeding one position at a time through the cache gives the causal full-sequence output."""
    rng = np.random.default_rng(7)
    layer = multi_head_attention.CachedMultiHeadAttention(2, 4)
    x = rng.normal(size=(2, 5, 8)).astype("float32")
    full, full_weights = layer(x, x, use_causal_mask=True, return_attention_scores=True)
    empty = np.zeros((2, 2, 5, 4), "float32")
    cache = (empty, empty)
    for t in range(5):
        step, weights, cache = layer(x[:, t: t + 1], x[:, t: t + 1], use_causal_mask=True,
                                     return_attention_scores=True, cache=cache,
                                     cache_update_index=t)
        np.testing.assert_allclose(step[:, 0], np.asarray(full)[:, t], atol=1e-5)
        np.testing.assert_allclose(weights[:, :, 0], np.asarray(full_weights)[:, :, t],
                                   atol=1e-6)
    keys, values = layer.project_key_value(x)
    np.testing.assert_allclose(cache[0], keys, atol=1e-6)
    np.testing.assert_allclose(cache[1], values, atol=1e-6)


def test_cached_cross_attention_with_a_precomputed_cache_equals_plain():
    """A memory projected once gives what the plain layer computes from the memory, with the
    same weights (loaded by name, or shared through ``sharing``)."""
    rng = np.random.default_rng(8)
    plain = multi_head_attention.MultiHeadAttention(2, 4, name="attention")
    query = rng.normal(size=(2, 3, 8)).astype("float32")
    memory = rng.normal(size=(2, 6, 8)).astype("float32")
    mask = np.array([[1, 1, 1, 1, 0, 0], [1] * 6], bool)
    expected = plain(query, memory, value_mask=mask)
    loaded = multi_head_attention.CachedMultiHeadAttention(2, 4, name="attention")
    loaded(query, memory)
    loaded.set_weights(plain.get_weights())
    shared = multi_head_attention.CachedMultiHeadAttention.sharing(plain)
    assert [id(w) for w in shared.weights] == [id(w) for w in plain.weights]
    for layer in (loaded, shared):
        np.testing.assert_allclose(layer(query, memory, value_mask=mask), expected, atol=1e-6)
        output, cache = layer(query, memory, value_mask=mask,
                              cache=layer.project_key_value(memory))
        np.testing.assert_allclose(output, expected, atol=1e-6)
        assert cache[0].shape == (2, 2, 6, 4)


def test_sharing_needs_a_built_layer():
    with pytest.raises(ValueError, match="Build 'mha' first"):
        multi_head_attention.CachedMultiHeadAttention.sharing(
            multi_head_attention.MultiHeadAttention(2, 4, name="mha"))


def test_combine_attention_masks_follows_keras_rules():
    query_mask = np.array([[True, False]])
    value_mask = np.array([[True, True, False]])
    mask = np.asarray(multi_head_attention.combine_attention_masks(query_mask, value_mask))
    np.testing.assert_array_equal(mask[0, 0], [[1, 1, 0], [0, 0, 0]])
    assert multi_head_attention.combine_attention_masks() is None
    causal = np.asarray(multi_head_attention.combine_attention_masks(use_causal_mask=True, query_length=2,
                                                  key_length=4, query_start=1))
    np.testing.assert_array_equal(causal[0, 0], [[1, 1, 0, 0], [1, 1, 1, 0]])


def test_copy_weights_refuses_different_heads():
    x = np.zeros((1, 2, 8), "float32")
    ours, theirs = multi_head_attention.MultiHeadAttention(2, 4), keras.layers.MultiHeadAttention(4, 2)
    ours(x, x)
    theirs(x, x)
    with pytest.raises(ValueError, match="Heads"):
        multi_head_attention.copy_keras_attention_weights(theirs, ours)
