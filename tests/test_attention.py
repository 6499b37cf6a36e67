"""seqlab.layers.attention: shapes, masks, equality with Keras's layers, save/load."""

from __future__ import annotations

import keras
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqlab.layers import BahdanauAttention, LuongAttention, masked_softmax

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
    context, weights = layer(QUERY, VALUES, mask=MASK)
    assert context.shape == (3, 4, 6) and weights.shape == (3, 4, 5)
    context, weights = layer(QUERY[:, 0], VALUES, mask=MASK)
    assert context.shape == (3, 6) and weights.shape == (3, 5)
    np.testing.assert_allclose(layer.last_attention_weights, weights)


@pytest.mark.parametrize("kind", KINDS)
def test_masked_positions_get_exactly_zero_and_the_rest_sums_to_one(kind):
    _, weights = make(kind)(QUERY, VALUES, mask=MASK)
    weights = np.asarray(weights)
    assert np.all(weights[~np.broadcast_to(MASK[:, None, :], weights.shape)] == 0.0)
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-6)
    np.testing.assert_allclose(weights[2, :, 0], 1.0, atol=1e-6)  # one real position


@pytest.mark.parametrize("kind", KINDS)
def test_single_step_equals_the_matching_row_of_all_steps(kind):
    layer = make(kind)
    context_all, weights_all = layer(QUERY, VALUES, mask=MASK)
    for t in range(QUERY.shape[1]):
        context, weights = layer(QUERY[:, t], VALUES, mask=MASK)
        np.testing.assert_allclose(context, np.asarray(context_all)[:, t], atol=1e-6)
        np.testing.assert_allclose(weights, np.asarray(weights_all)[:, t], atol=1e-6)


def test_a_row_with_no_real_position_gets_zero_weights_not_nan():
    weights = np.asarray(masked_softmax(np.zeros((1, 2, 3), "float32"), np.zeros((1, 1, 3), bool)))
    assert np.all(weights == 0.0)


def test_values_keras_mask_is_used_when_no_mask_is_given():
    embedding = keras.layers.Embedding(10, 6, mask_zero=True)
    values = embedding(np.array([[3, 4, 0, 0]]))
    _, weights = LuongAttention("dot")(QUERY[:1], values)
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
    context, weights = layer(query, values, mask=mask)
    padded_context, padded_weights = layer(query, padded_values, mask=padded_mask)
    np.testing.assert_allclose(padded_context, context, atol=1e-5)
    np.testing.assert_allclose(np.asarray(padded_weights)[..., :5], weights, atol=1e-6)
    assert np.all(np.asarray(padded_weights)[..., 5:] == 0.0)


# ---- where Keras computes the same thing ---------------------------------------------------
# Keras takes masks as [query_mask, value_mask]; a None query mask keeps every query row.


def test_luong_dot_equals_keras_attention():
    ours, _ = LuongAttention("dot")(QUERY, VALUES, mask=MASK)
    theirs = keras.layers.Attention()([QUERY, VALUES], mask=[None, MASK])
    np.testing.assert_allclose(ours, theirs, atol=1e-5)


def test_luong_general_equals_keras_attention_with_keys_projected_by_w():
    layer = LuongAttention("general")
    ours, _ = layer(QUERY, VALUES, mask=MASK)
    keys = layer.value_projection(VALUES)  # W y
    theirs = keras.layers.Attention()([QUERY, VALUES, keys], mask=[None, MASK])
    np.testing.assert_allclose(ours, theirs, atol=1e-5)


def test_bahdanau_equals_keras_additive_attention_after_projecting_query_and_keys():
    layer = BahdanauAttention(8)
    ours, _ = layer(QUERY, VALUES, mask=MASK)
    keras_layer = keras.layers.AdditiveAttention(use_scale=True)
    projected_query = layer.query_projection(QUERY)  # W_q h
    keys = layer.value_projection(VALUES)  # W_v y
    keras_layer([projected_query, VALUES, keys], mask=[None, MASK])
    keras_layer.scale.assign(np.asarray(layer.v.kernel)[:, 0])  # v
    theirs = keras_layer([projected_query, VALUES, keys], mask=[None, MASK])
    np.testing.assert_allclose(ours, theirs, atol=1e-5)


def test_bahdanau_is_not_keras_additive_attention_on_raw_inputs():
    ours, _ = BahdanauAttention(6)(QUERY, VALUES, mask=MASK)
    theirs = keras.layers.AdditiveAttention()([QUERY, VALUES], mask=[None, MASK])
    assert not np.allclose(ours, theirs, atol=1e-3)


# ---- configuration and saving --------------------------------------------------------------


def test_bad_configurations_are_refused():
    with pytest.raises(ValueError, match="score must be"):
        LuongAttention("cosine")
    with pytest.raises(ValueError, match="same size"):
        LuongAttention("dot")(QUERY, VALUES[..., :4])
    context, _ = LuongAttention("general")(QUERY, VALUES[..., :4])  # general maps sizes
    assert context.shape == (3, 4, 4)


@pytest.mark.parametrize("kind", KINDS)
def test_save_and_load_round_trip(kind, tmp_path):
    query = keras.Input((4, 6))
    values = keras.Input((5, 6))
    mask = keras.Input((5,), dtype="bool")
    context, weights = make(kind)(query, values, mask=mask)
    model = keras.Model([query, values, mask], [context, weights])
    expected = model.predict([QUERY, VALUES, MASK], verbose=0)
    model.save(tmp_path / "attention.keras")
    reloaded = keras.models.load_model(tmp_path / "attention.keras")
    for got, want in zip(reloaded.predict([QUERY, VALUES, MASK], verbose=0), expected, strict=True):
        np.testing.assert_allclose(got, want, atol=1e-6)
    config = make(kind).get_config()
    assert type(make(kind)).from_config(config).get_config() == config
