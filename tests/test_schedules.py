"""seqlab.training.schedules: the paper's learning-rate schedule and Adam settings."""

from __future__ import annotations

import keras
import numpy as np
import pytest

from seqlab.training import TransformerSchedule, transformer_optimizer


def paper(step_num, d_model, warmup):
    return d_model ** -0.5 * min(step_num ** -0.5, step_num * warmup ** -1.5)


@pytest.mark.parametrize("d_model,warmup", [(512, 4000), (128, 100)])
def test_schedule_is_the_paper_formula(d_model, warmup):
    schedule = TransformerSchedule(d_model, warmup)
    for iteration in (0, 1, warmup // 2, warmup - 1, warmup, 3 * warmup, 100_000):
        # Keras iteration i is the paper's step_num i + 1
        assert float(schedule(iteration)) == pytest.approx(paper(iteration + 1, d_model, warmup),
                                                           rel=1e-5)


def test_schedule_rises_peaks_and_decays():
    schedule = TransformerSchedule(512, 4000)
    rates = np.array([float(schedule(s)) for s in range(0, 20_000, 50)])
    peak = int(np.argmax(rates))
    assert np.all(np.diff(rates[: peak + 1]) > 0) and np.all(np.diff(rates[peak:]) < 0)
    assert float(schedule(3999)) == pytest.approx(schedule.peak_learning_rate, rel=1e-6)
    assert schedule.peak_learning_rate == pytest.approx((512 * 4000) ** -0.5)
    assert float(TransformerSchedule(512, 4000, scale=2.0)(10)) == pytest.approx(
        2 * float(schedule(10)))


def test_schedule_serialises():
    schedule = TransformerSchedule(256, 1000, scale=0.5)
    config = keras.optimizers.schedules.serialize(schedule)
    clone = keras.optimizers.schedules.deserialize(config)
    assert isinstance(clone, TransformerSchedule) and clone.get_config() == schedule.get_config()


def test_optimizer_has_the_paper_settings():
    optimizer = transformer_optimizer(512)
    assert (optimizer.beta_1, optimizer.beta_2, optimizer.epsilon) == (0.9, 0.98, 1e-9)
    assert isinstance(optimizer.learning_rate_schedule if hasattr(
        optimizer, "learning_rate_schedule") else optimizer._learning_rate, TransformerSchedule)
    assert transformer_optimizer(64, clipnorm=1.0).clipnorm == 1.0
    clone = keras.optimizers.deserialize(keras.optimizers.serialize(optimizer))
    assert clone.beta_2 == 0.98


@pytest.mark.parametrize("embedding", [False, True])
def test_fused_adam_gives_keras_adam_numbers(embedding):
    from seqlab.training import FusedAdam

    weights = []
    for optimizer in (FusedAdam, keras.optimizers.Adam):
        keras.utils.set_random_seed(0)
        rng = np.random.default_rng(0)
        if embedding:  # sparse gradients for the embedding rows, dense for the rest
            layers = [keras.Input((3,), dtype="int32"), keras.layers.Embedding(10, 4),
                      keras.layers.Flatten(), keras.layers.Dense(1)]
            x = rng.integers(0, 10, (8, 3))
        else:
            layers = [keras.Input((3,)), keras.layers.Dense(2), keras.layers.Dense(1)]
            x = rng.normal(size=(8, 3))
        model = keras.Sequential(layers)
        model.compile(optimizer(TransformerSchedule(4, 3), beta_2=0.98, epsilon=1e-9), "mse",
                      jit_compile=False)
        model.fit(x, np.ones((8, 1)), epochs=3, batch_size=4, verbose=0)
        weights.append([np.asarray(w) for w in model.weights])
    for fused, plain in zip(*weights, strict=True):
        np.testing.assert_allclose(fused, plain, atol=1e-5)
    assert isinstance(transformer_optimizer(8), FusedAdam)
    assert type(transformer_optimizer(8, fused=False)) is keras.optimizers.Adam
