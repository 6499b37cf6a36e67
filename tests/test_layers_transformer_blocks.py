"""seqlab.layers.transformer_blocks and notebook 05's encoder layer: the encoder and decoder layers (shapes, returned attention,
sublayer names, decoding through the key/value cache with notebook 05's step, also under mixed
policies, causality and padding as properties). Config round trip, save/load, mixed precision and the mask contract: tests/test_layer_contract.py."""

from __future__ import annotations

import inspect

import keras
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from layer_contract import UNIT_ROUNDOFF, as_float32, assert_close_to_float32, dtype_policy

from seqlab.layers import CachedMultiHeadAttention, transformer_blocks
from seqlab.lessons.nb05 import TransformerEncoderLayer, decoder_layer_step

SETTINGS = settings(max_examples=12, deadline=None, derandomize=True)


def test_encoder_and_decoder_layer_shapes_and_returned_attention():
    x = np.random.default_rng(3).normal(size=(2, 6, 16)).astype("float32")
    y = np.random.default_rng(4).normal(size=(2, 4, 16)).astype("float32")
    encoder = TransformerEncoderLayer(16, 4, 32, dropout=0.1)
    decoder = transformer_blocks.TransformerDecoderLayer(16, 4, 32, dropout=0.1)
    context_mask = np.array([[1, 1, 1, 1, 0, 0], [1] * 6], bool)
    memory, self_scores = encoder(x, mask=context_mask, return_attention_scores=True)
    out, scores = decoder(y, memory, encoder_padding_mask=context_mask, return_attention_scores=True)
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
    np.testing.assert_allclose(decoder(y, memory, encoder_padding_mask=context_mask), out)
    # Keras's slot for the context's Keras mask gives the same numbers
    np.testing.assert_allclose(decoder(y, memory, context_mask=context_mask), out)
    # LayerNormalization after each sub-layer: every position has mean 0, std 1 (gamma=1, beta=0)
    np.testing.assert_allclose(np.asarray(out).mean(-1), 0.0, atol=1e-5)
    for layer in (encoder, decoder):
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


def cached_steps(layer, x, context, context_mask):
    """Notebook 05's ``decoder_layer_step`` over ``x`` one position at a time, with the key/value
    cache; yields each position's output ``(B, d)`` and cross-attention weights ``(B, H, S)``."""
    empty = keras.ops.zeros((x.shape[0], layer.num_heads, x.shape[1], layer.d_model // layer.num_heads),
                            layer.compute_dtype)
    cross = CachedMultiHeadAttention.sharing(layer.cross_attention).project_key_value(context)
    cache = {"self_attention": (empty, empty), "cross_attention": cross}
    for t in range(x.shape[1]):
        step, scores, keys_values = decoder_layer_step(layer, x[:, t: t + 1], context,
                                                       context_mask, cache, t)
        cache = {**cache, "self_attention": keys_values}
        yield step[:, 0], scores[:, :, 0]


def test_decoder_call_has_no_cache_and_the_cached_steps_equal_the_full_causal_pass():
    """The call a lesson shows is the plain computation; decoding one position at a time through
    CachedMultiHeadAttention views of the same layer gives the full pass."""
    assert not [name for name in inspect.signature(
        transformer_blocks.TransformerDecoderLayer.call).parameters if "cache" in name]
    rng = np.random.default_rng(9)
    layer = transformer_blocks.TransformerDecoderLayer(8, 2, 16, dropout=0.0)
    y = rng.normal(size=(2, 5, 8)).astype("float32")
    context = rng.normal(size=(2, 3, 8)).astype("float32")
    context_mask = np.array([[1, 1, 0], [1, 1, 1]], bool)
    full, full_scores = layer(y, context, encoder_padding_mask=context_mask, return_attention_scores=True)
    for t, (step, scores) in enumerate(cached_steps(layer, y, context, context_mask)):
        np.testing.assert_allclose(step, np.asarray(full)[:, t], atol=1e-5)
        np.testing.assert_allclose(scores, np.asarray(full_scores["cross_attention"])[:, :, t],
                                   atol=1e-5)


def test_heads_must_divide_d_model():
    with pytest.raises(ValueError, match="multiple"):
        TransformerEncoderLayer(10, 3, 16)
    with pytest.raises(ValueError, match="divisible"):
        transformer_blocks.TransformerDecoderLayer(10, 3, 16)


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
        _ENCODER.append(TransformerEncoderLayer(8, 2, 16, dropout=0.0))
    return _ENCODER[0]


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


# ---- the decoder's cached steps under mixed policies ----------------------------------------


RNG = np.random.default_rng(0)
X = RNG.normal(size=(3, 5, 16)).astype("float32")
CONTEXT = RNG.normal(size=(3, 6, 16)).astype("float32")
CONTEXT_MASK = np.array([[1, 1, 1, 1, 0, 0], [0] * 6, [1] * 6], bool)  # row 1: all padding


@pytest.fixture(params=list(UNIT_ROUNDOFF))
def policy(request):
    with dtype_policy(request.param):
        yield request.param


def test_decoder_layer_cached_steps_under_mixed_policies(policy):
    """The step-by-step path with the key/value cache, in the low-precision dtype, gives the
    float32 full pass (the full pass under both policies is in the layer contract)."""
    reference = transformer_blocks.TransformerDecoderLayer(16, 4, 32, dropout=0.0, dtype="float32")
    mixed = transformer_blocks.TransformerDecoderLayer(16, 4, 32, dropout=0.0)
    reference(X, CONTEXT), mixed(X, CONTEXT)
    mixed.set_weights(reference.get_weights())
    assert mixed.compute_dtype != "float32"
    expected = reference(X, CONTEXT, encoder_padding_mask=CONTEXT_MASK)
    dtype = keras.config.dtype_policy().compute_dtype
    steps = cached_steps(mixed, keras.ops.cast(X, dtype), CONTEXT, CONTEXT_MASK)
    for t, (step, _) in enumerate(steps):
        assert step.dtype == dtype
        assert_close_to_float32(step, as_float32(expected)[:, t], policy)
