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
    assert float(schedule(3999)) == pytest.approx((512 * 4000) ** -0.5, rel=1e-6)
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
    assert type(optimizer) is keras.optimizers.Adam
    schedule = keras.optimizers.schedules.deserialize(optimizer.get_config()["learning_rate"])
    assert isinstance(schedule, TransformerSchedule) and schedule.d_model == 512
    assert transformer_optimizer(64, clipnorm=1.0).clipnorm == 1.0
    clone = keras.optimizers.deserialize(keras.optimizers.serialize(optimizer))
    assert clone.beta_2 == 0.98
