"""Notebook 07's models (seqlab.lessons.nb07: the character LSTM, stateful for truncated BPTT, and
MiniGPT), the tools of seqlab.models.language_model, and generation."""

from __future__ import annotations

import math

import keras
import numpy as np
import pytest
from layer_contract import assert_distinct_weights

from seqlab.lessons.nb06 import SkipGram
from seqlab.lessons.nb07 import MiniGPT, build_char_lstm
from seqlab.models.language_model import ResetStatesCallback, perplexity, reset_states
from seqlab.sampling import generate

VOCAB = 11


def with_batch_size(model, batch_size):
    """The same character LSTM rebuilt for another batch size, as notebook 07 does for generation."""
    embedding, lstm = model.get_layer("embedding"), model.get_layer("lstm")
    twin = build_char_lstm(embedding.input_dim, embedding.output_dim, lstm.units, batch_size)
    twin.set_weights(model.get_weights())
    return twin


def _ids(batch, length, seed=0):
    return np.random.default_rng(seed).integers(0, VOCAB, size=(batch, length)).astype("int32")


def test_lstm_shapes_and_stateful_carry_equals_one_long_pass():
    stateless = build_char_lstm(VOCAB, embedding_dim=4, units=8)
    ids = _ids(2, 12)
    whole = np.asarray(stateless(ids))
    assert whole.shape == (2, 12, VOCAB)
    stateful = with_batch_size(stateless, 2)
    assert stateful.get_layer("lstm").stateful
    reset_states(stateful)
    first = np.asarray(stateful(ids[:, :5]))
    second = np.asarray(stateful(ids[:, 5:]))          # carries the state of the first window
    np.testing.assert_allclose(np.concatenate([first, second], axis=1), whole, atol=1e-5)
    reset_states(stateful)
    np.testing.assert_allclose(np.asarray(stateful(ids[:, 5:])), whole[:, 5:] * 0 +
                               np.asarray(stateless(ids[:, 5:])), atol=1e-5)


def test_reset_callback_zeroes_the_state_between_passes():
    model = build_char_lstm(VOCAB, 4, 8, batch_size=2)
    model(_ids(2, 6))
    lstm = model.get_layer("lstm")
    assert np.abs(np.asarray(lstm.states[0])).sum() > 0
    callback = ResetStatesCallback()
    callback.set_model(model)
    callback.on_epoch_begin(0)
    assert np.abs(np.asarray(lstm.states[0])).sum() == 0


def test_lstm_save_and_load_round_trip(tmp_path):
    model = build_char_lstm(VOCAB, 4, 8)
    ids = _ids(3, 7)
    path = tmp_path / "lstm.keras"
    model.save(path)
    np.testing.assert_allclose(np.asarray(keras.models.load_model(path)(ids)), np.asarray(model(ids)),
                               atol=1e-6)


def _gpt(**kwargs):
    settings = dict(vocab_size=VOCAB, context_length=16, d_model=16, num_heads=2, dff=32,
                    num_layers=2, dropout=0.0)
    settings.update(kwargs)
    return MiniGPT(**settings)


def test_every_weight_starts_with_values_of_its_own():
    keras.utils.set_random_seed(0)
    for model in (_gpt(), build_char_lstm(VOCAB, 8, 16)):
        model(_ids(2, 5))  # builds every layer
        assert_distinct_weights(model.weights)


def test_minigpt_is_causal():
    model = _gpt()
    ids = _ids(2, 10)
    changed = ids.copy()
    changed[:, 6:] = (changed[:, 6:] + 3) % VOCAB
    before, after = np.asarray(model(ids)), np.asarray(model(changed))
    assert before.shape == (2, 10, VOCAB)
    np.testing.assert_allclose(before[:, :6], after[:, :6], atol=1e-5)
    assert np.abs(before[:, 6:] - after[:, 6:]).max() > 1e-4


def test_minigpt_returns_causal_attention_scores():
    model = _gpt()
    logits, scores = model(_ids(1, 7), return_attention_scores=True)
    assert len(scores) == 2 and tuple(scores[0].shape) == (1, 2, 7, 7)
    weights = np.asarray(scores[-1])
    assert np.all(np.triu(weights[0, 0], k=1) == 0)
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)


def test_minigpt_save_and_load_round_trip(tmp_path):
    model = _gpt(name="gpt")
    ids = _ids(2, 9)
    before = np.asarray(model(ids))
    path = tmp_path / "gpt.keras"
    model.save(path)
    loaded = keras.models.load_model(path)
    assert isinstance(loaded, MiniGPT) and loaded.get_config()["context_length"] == 16
    assert loaded.context_length == 16  # what generate() reads
    np.testing.assert_allclose(np.asarray(loaded(ids)), before, atol=1e-5)


def _greedy_rollout(model, prompt, steps, context=None):
    ids = list(prompt)
    for _ in range(steps):
        window = ids[-context:] if context else ids
        ids.append(int(np.argmax(np.asarray(model(np.array([window], "int32")))[0, -1])))
    return ids[len(prompt):]


def test_generation_at_temperature_zero_is_greedy_decoding():
    """Greedy decoding (notebooks 04/05) is the temperature -> 0 limit of sampling."""
    lstm = build_char_lstm(VOCAB, 4, 8)
    generator = with_batch_size(lstm, 1)
    prompt = [1, 2, 3]
    assert generate(generator, prompt, 8, temperature=0).tolist() == _greedy_rollout(lstm, prompt, 8)
    gpt = _gpt(context_length=5)
    assert generate(gpt, prompt, 8, temperature=0).tolist() == _greedy_rollout(gpt, prompt, 8, 5)


def test_sampling_is_seeded_and_in_range():
    generator = with_batch_size(build_char_lstm(VOCAB, 4, 8), 1)
    first = generate(generator, [1, 2], 30, temperature=1.5, seed=3)
    assert first.shape == (30,) and first.min() >= 0 and first.max() < VOCAB
    np.testing.assert_array_equal(first, generate(generator, [1, 2], 30, temperature=1.5, seed=3))
    assert set(generate(generator, [1, 2], 30, top_k=1, seed=4)) <= set(range(VOCAB))
    with pytest.raises(ValueError, match="prompt"):
        generate(generator, [], 3)
    with pytest.raises(ValueError, match="context_length"):
        generate(build_char_lstm(VOCAB, 4, 8), [1], 3)


def test_perplexity_of_a_uniform_guess_is_the_vocabulary_size():
    assert perplexity(math.log(VOCAB)) == pytest.approx(VOCAB)
    assert perplexity(0.0) == 1.0


@pytest.mark.parametrize("policy", ["mixed_float16", "mixed_bfloat16"])
def test_models_stay_finite_under_mixed_precision(policy):
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy(policy)
    try:
        gpt_logits = np.asarray(_gpt()(_ids(2, 9)), dtype="float32")
        lstm_logits = np.asarray(build_char_lstm(VOCAB, 4, 8)(_ids(2, 9)), dtype="float32")
        skipgram = np.asarray(SkipGram(12, 8)((np.array([1, 2]), np.array([[3, 4], [5, 6]]))),
                              dtype="float32")
    finally:
        keras.config.set_dtype_policy(previous)
    for logits in (gpt_logits, lstm_logits, skipgram):
        assert np.all(np.isfinite(logits))


def test_minigpt_passes_its_dtype_policy_to_every_sub_layer():
    """As TransformerTranslator does: MiniGPT(dtype="mixed_bfloat16") is mixed throughout, even
    when the global policy is float32 (before, only the model itself took the policy)."""
    model = _gpt(dtype="mixed_bfloat16")
    model(_ids(2, 9))
    sub_layers = [model.embedding, *model.blocks, model.logits]
    assert {layer.dtype_policy.name for layer in sub_layers} == {"mixed_bfloat16"}
    assert model.blocks[0].self_attention.dtype_policy.name == "mixed_bfloat16"
    assert keras.config.dtype_policy().name == "float32"
