"""seqlab.layers.positional_embedding: the sinusoidal encoding of eq. 15 and the layer that
scales token embeddings and adds it. Config round trip, save/load, mixed precision and the mask contract: tests/test_layer_contract.py."""

from __future__ import annotations

import math

import keras
import numpy as np
import pytest

from seqlab.layers import positional_embedding


def reference_encoding(length, depth):
    """Eq. 15 written out one entry at a time."""
    table = np.zeros((length, depth))
    for p in range(length):
        for i in range(depth):
            if i % 2 == 0:
                table[p, i] = math.sin(p / 10000 ** (i / depth))
            else:
                table[p, i] = math.cos(p / 10000 ** ((i - 1) / depth))
    return table


def test_positional_encoding_known_values():
    pe = np.asarray(positional_embedding.positional_encoding(50, 16))
    assert pe.shape == (50, 16) and pe.dtype == np.float32
    np.testing.assert_allclose(pe[0], [0, 1] * 8, atol=1e-7)  # sin 0 = 0, cos 0 = 1
    np.testing.assert_allclose(pe[1, :2], [math.sin(1), math.cos(1)], rtol=1e-6)
    # dimension 4 and 5 share the frequency 1 / 10000^(4/16) = 1/10
    np.testing.assert_allclose(pe[5, 4:6], [math.sin(0.5), math.cos(0.5)], rtol=1e-5)
    np.testing.assert_allclose(pe[49, 14:16], [math.sin(49 / 10000 ** (14 / 16)),
                                               math.cos(49 / 10000 ** (14 / 16))], rtol=1e-5)


@pytest.mark.parametrize("length,depth", [(1, 2), (7, 5), (64, 128)])
def test_positional_encoding_matches_eq_15_everywhere(length, depth):
    np.testing.assert_allclose(positional_embedding.positional_encoding(length, depth),
                               reference_encoding(length, depth), atol=2e-5)


def test_positional_encoding_relative_shift_is_a_rotation():
    """PE[p + k] is PE[p] rotated pair by pair: the property that lets attention use offsets."""
    depth, k = 8, 3
    pe = np.asarray(positional_embedding.positional_encoding(20, depth), np.float64)
    for pair in range(depth // 2):
        w = 1 / 10000 ** (2 * pair / depth)
        rotation = np.array([[math.cos(k * w), -math.sin(k * w)], [math.sin(k * w), math.cos(k * w)]])
        np.testing.assert_allclose(pe[:-k, 2 * pair: 2 * pair + 2] @ rotation,
                                   pe[k:, 2 * pair: 2 * pair + 2], atol=1e-5)


def test_positional_embedding_scales_adds_and_masks():
    layer = positional_embedding.PositionalEmbedding(30, 8)
    ids = np.array([[4, 5, 6, 0, 0]])
    out = np.asarray(layer(ids))
    table = np.asarray(layer.embedding.embeddings)
    expected = table[ids[0]] * math.sqrt(8) + reference_encoding(5, 8)
    np.testing.assert_allclose(out[0], expected, atol=1e-5)
    np.testing.assert_array_equal(layer.compute_mask(ids), ids != 0)
    assert positional_embedding.PositionalEmbedding(30, 8, mask_zero=False).compute_mask(ids) is None


def test_positional_embedding_mask_reaches_the_next_layer():
    """A mask-aware layer after it (average pooling) skips the padded positions."""
    inputs = keras.Input((None,), dtype="int32")
    embedding = positional_embedding.PositionalEmbedding(30, 8)
    model = keras.Model(inputs, keras.layers.GlobalAveragePooling1D()(embedding(inputs)))
    ids = np.array([[4, 5, 6, 0, 0]])
    np.testing.assert_allclose(model(ids), np.asarray(embedding(ids))[:, :3].mean(1), atol=1e-5)


def test_positional_embedding_start_position_continues_the_encoding():
    layer = positional_embedding.PositionalEmbedding(30, 8)
    ids = np.array([[4, 5, 6, 7]])
    whole = np.asarray(layer(ids))
    np.testing.assert_allclose(layer(ids[:, 2:3], start_position=2)[:, 0], whole[:, 2], atol=1e-5)
