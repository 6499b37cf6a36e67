"""The Transformer's layers: eq. 15 (seqlab.layers.positional_embedding), masks (masking), eq. 16
and multi-head attention (multi_head_attention), encoder/decoder layers (transformer_blocks)."""

from __future__ import annotations

import math

import keras
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqlab.layers import masking, multi_head_attention, positional_embedding, transformer_blocks

SETTINGS = settings(max_examples=12, deadline=None, derandomize=True)


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


# ----------------------------------------------------------------------------- eq. 15


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


# ----------------------------------------------------------------------------- masks, eq. 16


def test_causal_mask_is_lower_triangular():
    mask = np.asarray(masking.causal_mask(4))
    np.testing.assert_array_equal(mask, np.tril(np.ones((4, 4), bool)))
    assert np.asarray(masking.causal_mask(2, 3)).tolist() == [[True, False, False], [True, True, False]]


def test_padding_mask():
    np.testing.assert_array_equal(masking.padding_mask(np.array([[3, 1, 0, 0]])), [[1, 1, 0, 0]])
    np.testing.assert_array_equal(masking.padding_mask(np.array([[3, 9, 9]]), padding_id=9), [[1, 0, 0]])


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
    _, weights = multi_head_attention.scaled_dot_product_attention(q, k, v, mask=keep[None, None, :])
    weights = np.asarray(weights)
    np.testing.assert_allclose(weights.sum(-1), 1.0, rtol=1e-5)
    assert np.all(weights[..., ~keep] == 0.0)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_masking_is_dtype_safe(dtype):
    q = keras.ops.ones((1, 2, 4), dtype=dtype)
    v = keras.ops.ones((1, 3, 4), dtype=dtype)
    mask = np.array([[[True, False, True]]])
    output, weights = multi_head_attention.scaled_dot_product_attention(q, v, v, mask=mask)
    weights = np.asarray(keras.ops.cast(weights, "float32"))
    assert np.all(np.isfinite(weights)) and np.all(np.isfinite(np.asarray(
        keras.ops.cast(output, "float32"))))
    np.testing.assert_allclose(weights[..., 1], 0.0)
    np.testing.assert_allclose(weights.sum(-1), 1.0, rtol=1e-2)


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


def test_multi_head_attention_returns_scores_keeps_no_state_and_serialises():
    layer = multi_head_attention.MultiHeadAttention(2, 4, name="mha")
    x = np.random.default_rng(2).normal(size=(1, 3, 8)).astype("float32")
    out, weights = layer(x, x, use_causal_mask=True, return_attention_scores=True)
    assert out.shape == (1, 3, 8) and weights.shape == (1, 2, 3, 3)
    assert np.all(np.asarray(weights)[0, :, 0, 1:] == 0)  # the first token sees only itself
    np.testing.assert_allclose(layer(x, x, use_causal_mask=True), out)  # same output alone
    assert not hasattr(layer, "last_attention_weights")
    clone = multi_head_attention.MultiHeadAttention.from_config(layer.get_config())
    assert clone.get_config() == layer.get_config()


def test_multi_head_attention_cache_step_by_step_equals_causal_self_attention():
    """Feeding one position at a time through the cache gives the causal full-sequence output."""
    rng = np.random.default_rng(7)
    layer = multi_head_attention.MultiHeadAttention(2, 4)
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


def test_multi_head_attention_fixed_cache_equals_projecting_the_value():
    rng = np.random.default_rng(8)
    layer = multi_head_attention.MultiHeadAttention(2, 4)
    query = rng.normal(size=(2, 3, 8)).astype("float32")
    memory = rng.normal(size=(2, 6, 8)).astype("float32")
    mask = np.array([[1, 1, 1, 1, 0, 0], [1] * 6], bool)
    expected = layer(query, memory, value_mask=mask)
    output, cache = layer(query, memory, value_mask=mask, cache=layer.project_key_value(memory))
    np.testing.assert_allclose(output, expected, atol=1e-6)
    assert cache[0].shape == (2, 2, 6, 4)


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


# ----------------------------------------------------------------------------- layers


def test_encoder_and_decoder_layer_shapes_and_returned_attention():
    x = np.random.default_rng(3).normal(size=(2, 6, 16)).astype("float32")
    y = np.random.default_rng(4).normal(size=(2, 4, 16)).astype("float32")
    encoder = transformer_blocks.TransformerEncoderLayer(16, 4, 32, dropout=0.1)
    decoder = transformer_blocks.TransformerDecoderLayer(16, 4, 32, dropout=0.1)
    context_mask = np.array([[1, 1, 1, 1, 0, 0], [1] * 6], bool)
    memory, self_scores = encoder(x, mask=context_mask, return_attention_scores=True)
    out, scores = decoder(y, memory, context_mask=context_mask, return_attention_scores=True)
    assert memory.shape == (2, 6, 16) and out.shape == (2, 4, 16)
    assert self_scores.shape == (2, 4, 6, 6)
    assert np.all(np.asarray(self_scores)[0, ..., 4:] == 0)
    cross = np.asarray(scores["cross_attention"])
    assert cross.shape == (2, 4, 4, 6)
    assert np.all(cross[0, ..., 4:] == 0)
    np.testing.assert_allclose(cross.sum(-1), 1.0, rtol=1e-5)
    assert scores["self_attention"].shape == (2, 4, 4, 4)
    # without the flag: the output alone, the same numbers (dropout is off outside training)
    np.testing.assert_allclose(encoder(x, mask=context_mask), memory)
    np.testing.assert_allclose(decoder(y, memory, context_mask=context_mask), out)
    # LayerNormalization after each sub-layer: every position has mean 0, std 1 (gamma=1, beta=0)
    np.testing.assert_allclose(np.asarray(out).mean(-1), 0.0, atol=1e-5)
    for layer in (encoder, decoder):
        clone = type(layer).from_config(layer.get_config())
        assert clone.get_config() == layer.get_config()
        assert not hasattr(layer, "last_attention_weights")


def test_encoder_layer_with_the_causal_mask_is_a_gpt_block():
    rng = np.random.default_rng(11)
    layer = _shared_encoder()
    x = rng.normal(size=(1, 5, 8)).astype("float32")
    output, scores = layer(x, use_causal_mask=True, return_attention_scores=True)
    assert np.all(np.triu(np.asarray(scores)[0, 0], k=1) == 0)
    changed = x.copy()
    changed[:, 3:] = rng.normal(size=(1, 2, 8))
    np.testing.assert_allclose(layer(changed, use_causal_mask=True)[:, :3], output[:, :3],
                               atol=1e-5)


def test_layers_name_their_sublayers():
    decoder = transformer_blocks.TransformerDecoderLayer(8, 2, 16)
    decoder(np.zeros((1, 2, 8), "float32"), np.zeros((1, 3, 8), "float32"))
    paths = {weight.path.split("/", 1)[1] for weight in decoder.weights}
    for name in ("masked_self_attention/query/kernel", "cross_attention/attention_output/bias",
                 "self_attention_norm/gamma", "cross_attention_norm/gamma",
                 "feed_forward_norm/beta", "feed_forward/inner/kernel", "feed_forward/outer/bias"):
        assert name in paths, sorted(paths)


def test_decoder_layer_with_caches_equals_the_full_causal_pass():
    rng = np.random.default_rng(9)
    layer = transformer_blocks.TransformerDecoderLayer(8, 2, 16, dropout=0.0)
    y = rng.normal(size=(2, 5, 8)).astype("float32")
    context = rng.normal(size=(2, 3, 8)).astype("float32")
    context_mask = np.array([[1, 1, 0], [1, 1, 1]], bool)
    full, full_scores = layer(y, context, context_mask=context_mask, return_attention_scores=True)
    empty = np.zeros((2, 2, 5, 4), "float32")
    self_cache = (empty, empty)
    cross_cache = layer.cross_attention.project_key_value(context)
    for t in range(5):
        step, scores, self_cache = layer(
            y[:, t: t + 1], context, context_mask=context_mask, return_attention_scores=True,
            self_attention_cache=self_cache, self_attention_cache_update_index=t,
            cross_attention_cache=cross_cache)
        np.testing.assert_allclose(step[:, 0], np.asarray(full)[:, t], atol=1e-5)
        np.testing.assert_allclose(scores["cross_attention"][:, :, 0],
                                   np.asarray(full_scores["cross_attention"])[:, :, t], atol=1e-5)


@pytest.mark.parametrize("make", [
    lambda: transformer_blocks.TransformerEncoderLayer(8, 2, 16, name="layer"),
    lambda: transformer_blocks.PositionwiseFeedForward(8, 16, name="layer"),
    lambda: positional_embedding.PositionalEmbedding(30, 8, name="layer"),
])
def test_layers_save_and_reload(tmp_path, make):
    inputs = (keras.Input((None,), dtype="int32") if isinstance(make(), positional_embedding.PositionalEmbedding)
              else keras.Input((None, 8)))
    model = keras.Model(inputs, make()(inputs))
    data = (np.array([[3, 4, 0]]) if isinstance(model.layers[-1], positional_embedding.PositionalEmbedding)
            else np.random.default_rng(10).normal(size=(2, 3, 8)).astype("float32"))
    path = tmp_path / "layer.keras"
    model.save(path)
    restored = keras.models.load_model(path)
    assert type(restored.layers[-1]) is type(model.layers[-1])
    np.testing.assert_allclose(restored(data), model(data), atol=1e-6)


def test_positional_embedding_start_position_continues_the_encoding():
    layer = positional_embedding.PositionalEmbedding(30, 8)
    ids = np.array([[4, 5, 6, 7]])
    whole = np.asarray(layer(ids))
    np.testing.assert_allclose(layer(ids[:, 2:3], start_position=2)[:, 0], whole[:, 2], atol=1e-5)


def test_heads_must_divide_d_model():
    with pytest.raises(ValueError, match="divisible"):
        transformer_blocks.TransformerEncoderLayer(10, 3, 16)


@SETTINGS
@given(st.integers(1, 5), st.integers(0, 2**31 - 1))
def test_decoder_layer_is_causal(t, seed):
    """The output at positions <= t does not change when the inputs after t change."""
    rng = np.random.default_rng(seed)
    layer = _shared_decoder()
    y = rng.normal(size=(1, 6, 8)).astype("float32")
    changed = y.copy()
    changed[:, t + 1:] = rng.normal(size=changed[:, t + 1:].shape)
    context = rng.normal(size=(1, 3, 8)).astype("float32")
    before, after = np.asarray(layer(y, context)), np.asarray(layer(changed, context))
    np.testing.assert_allclose(before[:, : t + 1], after[:, : t + 1], atol=1e-5)


_DECODER = []


def _shared_decoder():
    if not _DECODER:
        _DECODER.append(transformer_blocks.TransformerDecoderLayer(8, 2, 16, dropout=0.0))
    return _DECODER[0]


@SETTINGS
@given(st.integers(1, 6), st.integers(1, 4))
def test_encoder_layer_is_padding_invariant(length, extra):
    """Appending padding (masked) changes nothing at the real positions."""
    rng = np.random.default_rng(length)
    layer = _shared_encoder()
    x = rng.normal(size=(1, length, 8)).astype("float32")
    padded = np.concatenate([x, rng.normal(size=(1, extra, 8)).astype("float32")], axis=1)
    mask = np.arange(length + extra)[None] < length
    short = np.asarray(layer(x, mask=np.ones((1, length), bool)))
    long = np.asarray(layer(padded, mask=mask))
    np.testing.assert_allclose(short, long[:, :length], atol=1e-5)


_ENCODER = []


def _shared_encoder():
    if not _ENCODER:
        _ENCODER.append(transformer_blocks.TransformerEncoderLayer(8, 2, 16, dropout=0.0))
    return _ENCODER[0]


def test_dense_2d_equals_dense():
    layer = keras.layers.Dense(5)
    x = np.random.default_rng(5).normal(size=(2, 3, 4)).astype("float32")
    np.testing.assert_allclose(multi_head_attention.dense_2d(layer, x), layer(x), atol=1e-6)


def test_decoder_layer_without_the_causal_mask_sees_later_positions():
    """``use_causal_mask=False`` (notebook 05's Exercise 2) lets position t see t + 1."""
    keras.utils.set_random_seed(0)
    layer = transformer_blocks.TransformerDecoderLayer(8, 2, 16, dropout=0.0)
    rng = np.random.default_rng(0)
    x, context = rng.normal(size=(2, 4, 8)).astype("float32"), rng.normal(size=(2, 3, 8)).astype("float32")
    changed = x.copy()
    changed[:, -1] += 1.0
    for causal in (True, False):
        before = np.asarray(layer(x, context, use_causal_mask=causal))[:, :-1]
        after = np.asarray(layer(changed, context, use_causal_mask=causal))[:, :-1]
        assert np.allclose(before, after, atol=1e-6) == causal
