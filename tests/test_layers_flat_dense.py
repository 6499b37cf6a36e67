"""seqlab.layers.flat_dense: the speed path (a named sibling the Transformer blocks do not use)
computes what the plain layers compute.
Config round trip, save/load, mixed precision: tests/test_layer_contract.py."""

from __future__ import annotations

import keras
import numpy as np

from seqlab.layers import FastMultiHeadAttention, FlatDense, MultiHeadAttention

RNG = np.random.default_rng(5)


def test_flat_dense_equals_dense():
    x = RNG.normal(size=(2, 3, 4)).astype("float32")
    plain, flat = keras.layers.Dense(5, activation="relu"), FlatDense(5, activation="relu")
    plain(x), flat(x)
    flat.set_weights(plain.get_weights())
    np.testing.assert_allclose(flat(x), plain(x), atol=1e-6)
    assert FlatDense(5)(RNG.normal(size=(2, 3, 6, 4)).astype("float32")).shape == (2, 3, 6, 5)


def test_fast_multi_head_attention_equals_the_plain_layer():
    query = RNG.normal(size=(2, 3, 8)).astype("float32")
    value = RNG.normal(size=(2, 5, 8)).astype("float32")
    value_mask = np.array([[True] * 5, [True, True, False, False, False]])
    plain, fast = MultiHeadAttention(2, 4, value_dim=3), FastMultiHeadAttention(2, 4, value_dim=3)
    plain(query, value), fast(query, value)
    fast.set_weights(plain.get_weights())
    for kwargs in ({"value_mask": value_mask}, {"use_causal_mask": True}):
        ours, weights = fast(query, value, return_attention_scores=True, **kwargs)
        theirs, their_weights = plain(query, value, return_attention_scores=True, **kwargs)
        np.testing.assert_allclose(ours, theirs, atol=1e-5)
        np.testing.assert_allclose(weights, their_weights, atol=1e-6)
