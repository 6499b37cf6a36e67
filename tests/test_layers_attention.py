"""seqlab.layers.attention: shapes, masks, equality with a NumPy computation of eqs. (12)-(14)
and with Keras's layers, and the decoding-loop shape that crashed TF 2.19. Configuration,
save/load, mixed precision and the mask contract: tests/test_layer_contract.py."""

from __future__ import annotations

import keras
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqlab.layers import BahdanauAttention, LuongAttention

#: Keras before 3.11 (the floor, 3.10, included) does not broadcast a ``(batch, Tv)`` value mask
#: over the queries in ``keras.layers.Attention`` / ``AdditiveAttention`` (``Incompatible shapes:
#: [3,4,5] vs. [3,5]``; 3.11 added the ``expand_dims``). The NumPy twins below test our layers on
#: every version; only the comparisons with Keras's layers are skipped there.
KERAS_VERSION = tuple(int(part) for part in keras.__version__.split(".")[:2])
keras_masks_values = pytest.mark.skipif(
    KERAS_VERSION < (3, 11),
    reason=f"Keras {keras.__version__} < 3.11: keras.layers.Attention's (batch, Tv) value mask "
           "does not broadcast over the queries (a Keras bug, fixed in 3.11)")

rng = np.random.default_rng(0)
QUERY = rng.normal(size=(3, 4, 6)).astype("float32")   # (batch, Tq, d)
VALUES = rng.normal(size=(3, 5, 6)).astype("float32")  # (batch, Tv, d)
MASK = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 0, 0, 0]], bool)


def make(kind):
    return {"bahdanau": lambda: BahdanauAttention(8), "dot": lambda: LuongAttention("dot"),
            "general": lambda: LuongAttention("general")}[kind]()


KINDS = ["bahdanau", "dot", "general"]


@pytest.mark.parametrize("kind", KINDS)
def test_shapes_for_all_steps_and_for_one_step(kind):
    layer = make(kind)
    context, weights = layer(QUERY, VALUES, padding_mask=MASK, return_attention_scores=True)
    assert context.shape == (3, 4, 6) and weights.shape == (3, 4, 5)
    context, weights = layer(QUERY[:, 0], VALUES, padding_mask=MASK, return_attention_scores=True)
    assert context.shape == (3, 6) and weights.shape == (3, 5)
    # Without the flag only the context comes back, and the layer keeps nothing from the call.
    np.testing.assert_allclose(layer(QUERY[:, 0], VALUES, padding_mask=MASK), context)
    assert not any("weights" in name and "attention" in name for name in vars(layer))


@pytest.mark.parametrize("kind", KINDS)
def test_masked_positions_get_exactly_zero_and_the_rest_sums_to_one(kind):
    _, weights = make(kind)(QUERY, VALUES, padding_mask=MASK, return_attention_scores=True)
    weights = np.asarray(weights)
    assert np.all(weights[~np.broadcast_to(MASK[:, None, :], weights.shape)] == 0.0)
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-6)
    np.testing.assert_allclose(weights[2, :, 0], 1.0, atol=1e-6)  # one real position


@pytest.mark.parametrize("kind", KINDS)
def test_single_step_equals_the_matching_row_of_all_steps(kind):
    layer = make(kind)
    context_all, weights_all = layer(QUERY, VALUES, padding_mask=MASK, return_attention_scores=True)
    for t in range(QUERY.shape[1]):
        context, weights = layer(QUERY[:, t], VALUES, padding_mask=MASK, return_attention_scores=True)
        np.testing.assert_allclose(context, np.asarray(context_all)[:, t], atol=1e-6)
        np.testing.assert_allclose(weights, np.asarray(weights_all)[:, t], atol=1e-6)


def test_values_keras_mask_is_used_when_no_mask_is_given():
    embedding = keras.layers.Embedding(10, 6, mask_zero=True)
    values = embedding(np.array([[3, 4, 0, 0]]))
    _, weights = LuongAttention("dot")(QUERY[:1], values, return_attention_scores=True)
    assert np.all(np.asarray(weights)[..., 2:] == 0.0)


@settings(max_examples=15, deadline=None)
@given(lengths=st.lists(st.integers(1, 5), min_size=1, max_size=3), extra=st.integers(1, 4),
       kind=st.sampled_from(KINDS))
def test_appending_padding_changes_nothing(lengths, extra, kind):
    batch = len(lengths)
    values = rng.normal(size=(batch, 5, 6)).astype("float32")
    query = rng.normal(size=(batch, 2, 6)).astype("float32")
    mask = np.arange(5)[None, :] < np.array(lengths)[:, None]
    padded_values = np.concatenate([values, rng.normal(size=(batch, extra, 6)).astype("float32")], 1)
    padded_mask = np.concatenate([mask, np.zeros((batch, extra), bool)], 1)
    layer = make(kind)
    context, weights = layer(query, values, padding_mask=mask, return_attention_scores=True)
    padded_context, padded_weights = layer(query, padded_values, padding_mask=padded_mask,
                                           return_attention_scores=True)
    np.testing.assert_allclose(padded_context, context, atol=1e-5)
    np.testing.assert_allclose(np.asarray(padded_weights)[..., :5], weights, atol=1e-6)
    assert np.all(np.asarray(padded_weights)[..., 5:] == 0.0)


# ---- eqs. (12)-(14) by hand, with NumPy ------------------------------------------------------


def numpy_attention(scores, values, mask):
    """Eqs. (13)-(14): softmax over the real source positions, then the weighted sum."""
    scores = np.where(mask[:, None, :], scores, -np.inf)  # (batch, Tq, Tv)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    return np.einsum("bqv,bvd->bqd", weights, values), weights


def numpy_scores(layer, query, values):
    """Eq. (12) from the layer's weights."""
    if isinstance(layer, BahdanauAttention):
        query = query @ np.asarray(layer.query_projection.kernel)  # (batch, Tq, units)
        keys = values @ np.asarray(layer.value_projection.kernel)  # (batch, Tv, units)
        return np.tanh(query[:, :, None] + keys[:, None]) @ np.asarray(layer.v)  # (batch, Tq, Tv)
    if layer.value_projection is not None:
        values = values @ np.asarray(layer.value_projection.kernel)  # W y
    return np.einsum("bqd,bvd->bqv", query, values)


@pytest.mark.parametrize("kind", KINDS)
def test_equals_the_equations_computed_with_numpy(kind):
    layer = make(kind)
    context, weights = layer(QUERY, VALUES, padding_mask=MASK, return_attention_scores=True)
    expected_context, expected_weights = numpy_attention(numpy_scores(layer, QUERY, VALUES),
                                                         VALUES, MASK)
    np.testing.assert_allclose(weights, expected_weights, atol=1e-6)
    np.testing.assert_allclose(context, expected_context, atol=1e-5)


@pytest.mark.parametrize("kind", KINDS)
def test_the_decoding_loop_shape_that_crashed_tensorflow_2_19(kind):
    """One decoder step over a batch of 32 sources of 12 tokens with 16 units: Bahdanau's old
    ``Dense(1)`` on ``(32, 1, 12, 16)`` segfaulted TF 2.19's oneDNN matmul (issue 9)."""
    query = rng.normal(size=(32, 16)).astype("float32")
    values = rng.normal(size=(32, 12, 16)).astype("float32")
    mask = np.arange(12)[None, :] < rng.integers(1, 13, size=(32, 1))
    layer = BahdanauAttention(16) if kind == "bahdanau" else make(kind)
    context, weights = layer(query, values, padding_mask=mask, return_attention_scores=True)
    _, expected_weights = numpy_attention(numpy_scores(layer, query[:, None], values), values, mask)
    np.testing.assert_allclose(weights, expected_weights[:, 0], atol=1e-6)
    assert context.shape == (32, 16)


# ---- where Keras computes the same thing ---------------------------------------------------
# Keras takes masks as [query_mask, value_mask]; a None query mask keeps every query row.


@keras_masks_values
def test_luong_dot_equals_keras_attention():
    ours = LuongAttention("dot")(QUERY, VALUES, padding_mask=MASK)
    theirs = keras.layers.Attention()([QUERY, VALUES], mask=[None, MASK])
    np.testing.assert_allclose(ours, theirs, atol=1e-5)


@keras_masks_values
def test_luong_general_equals_keras_attention_with_keys_projected_by_w():
    layer = LuongAttention("general")
    ours = layer(QUERY, VALUES, padding_mask=MASK)
    keys = layer.value_projection(VALUES)  # W y
    theirs = keras.layers.Attention()([QUERY, VALUES, keys], mask=[None, MASK])
    np.testing.assert_allclose(ours, theirs, atol=1e-5)


@keras_masks_values
def test_bahdanau_equals_keras_additive_attention_after_projecting_query_and_keys():
    layer = BahdanauAttention(8)
    ours = layer(QUERY, VALUES, padding_mask=MASK)
    keras_layer = keras.layers.AdditiveAttention(use_scale=True)
    projected_query = layer.query_projection(QUERY)  # W_q h
    keys = layer.value_projection(VALUES)  # W_v y
    keras_layer([projected_query, VALUES, keys], mask=[None, MASK])
    keras_layer.scale.assign(np.asarray(layer.v))  # v
    theirs = keras_layer([projected_query, VALUES, keys], mask=[None, MASK])
    np.testing.assert_allclose(ours, theirs, atol=1e-5)


@keras_masks_values
def test_bahdanau_is_not_keras_additive_attention_on_raw_inputs():
    ours = BahdanauAttention(6)(QUERY, VALUES, padding_mask=MASK)
    theirs = keras.layers.AdditiveAttention()([QUERY, VALUES], mask=[None, MASK])
    assert not np.allclose(ours, theirs, atol=1e-3)


# ---- configuration -----------------------------------------------------------------------


def test_bad_configurations_are_refused():
    with pytest.raises(ValueError, match="score must be"):
        LuongAttention("cosine")
    with pytest.raises(ValueError, match="same size"):
        LuongAttention("dot")(QUERY, VALUES[..., :4])
    context = LuongAttention("general")(QUERY, VALUES[..., :4])  # general maps sizes
    assert context.shape == (3, 4, 4)
