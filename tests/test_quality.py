"""The guard against presenting nonsense (seqlab.evaluation.diagnose_translations) and the
plumbing of benchmarks.quality on the offline dates task (never the Anki corpus)."""

from __future__ import annotations

import sys

import pytest

from seqlab import config
from seqlab.data.dates import generate_date_pairs
from seqlab.evaluation import bleu, diagnose_translations

REFERENCES = [iso for _, iso in generate_date_pairs(200, seed=3)]


def well_trained(references):
    """What a FAST-mode model that reached ~99% writes: all right but two, which are near misses."""
    outputs = list(references)
    outputs[0] = outputs[0][:-1] + ("1" if outputs[0][-1] != "1" else "2")
    outputs[1] = outputs[1][:-1] + ("1" if outputs[1][-1] != "1" else "2")
    return outputs


def test_well_trained_outputs_pass():
    outputs = well_trained(REFERENCES)
    assert bleu(outputs, REFERENCES) > 90
    assert diagnose_translations(outputs, REFERENCES) is None
    spanish = ["fue un buen día.", "tom no está aquí.", "¿dónde está la estación?", "me gusta leer."]
    assert diagnose_translations(spanish * 5, spanish * 5) is None


@pytest.mark.parametrize("outputs, reason", [
    (["¿¿¿¿¿¿¿¿¿¿tom."] * 200, "repeat one token"),                 # the Bahdanau
    (["de de de de la la"] * 100 + ["2001-01-01"] * 100, "repeat one token"),
    (["2001-01-01"] * 200, "differ from each other"),               # collapsed to one output
    ([""] * 200, "empty"),
])
def test_nonsense_is_named(outputs, reason):
    message = diagnose_translations(outputs, REFERENCES, epochs=4)
    assert message is not None and reason in message
    assert message.startswith("this model is undertrained") and "EPOCHS=8" in message


def test_low_bleu_alone_fires_and_the_floor_is_a_parameter():
    # Varied, non-repeating, but wrong: right format, wrong dates.
    wrong = [iso for _, iso in generate_date_pairs(200, seed=99)]
    score = bleu(wrong, REFERENCES)
    message = diagnose_translations(wrong, REFERENCES, bleu_score=score, bleu_floor=score + 1)
    assert message is not None and "BLEU" in message
    assert diagnose_translations(wrong, REFERENCES, bleu_score=score, bleu_floor=0.0) is None


def test_bad_input_is_one_clear_error():
    with pytest.raises(ValueError, match="pair up"):
        diagnose_translations(["a"], ["a", "b"])
    with pytest.raises(TypeError, match="lists of sentences"):
        diagnose_translations("a", "a")


def test_quality_benchmark_plumbing_on_dates(capsys):
    sys.path.insert(0, str(config.REPO_ROOT))  # benchmarks/ is a package at the repository root
    from benchmarks import quality

    rows = quality.benchmark(["--corpus", "dates", "--pairs", "600", "--steps", "4",
                              "--epochs", "2", "--test", "20", "--beam-test", "2",
                              "--units", "16", "--embedding-dim", "8", "--batch-size", "32",
                              "--valid-batches", "1", "--models", "none", "bahdanau"])
    assert [row["model"] for row in rows] == ["none", "bahdanau"]
    for row in rows:
        assert len(row["val_acc"]) == 2 and all(0 <= a <= 1 for a in row["val_acc"])
        assert 0 <= row["greedy"] <= 100 and 0 <= row["beam"] <= 100
        assert row["note"].startswith("this model is undertrained")  # 4 steps learn nothing
    table = capsys.readouterr().out
    assert "val@2" in table and "val@4" in table and "greedy" in table


@pytest.mark.parametrize("attention", ["none", "bahdanau"])
def test_output_norm_option(tmp_path, attention):
    import keras
    import numpy as np

    from seqlab.lessons.nb04 import build_rnn_translator

    keras.utils.set_random_seed(0)
    source = np.array([[5, 6, 7, 0], [4, 3, 0, 0]])
    target_in = np.array([[1, 4, 3], [1, 5, 0]])
    plain = build_rnn_translator(12, 10, embedding_dim=8, units=16, attention=attention)
    model = build_rnn_translator(12, 10, embedding_dim=8, units=16, attention=attention,
                                 output_norm=True)
    assert model.count_params() == plain.count_params() + 2 * 16  # LayerNorm's gamma and beta
    assert model.get_config()["output_norm"] and not plain.get_config()["output_norm"]
    # What reaches the output layer has mean 0 and standard deviation 1 per position.
    hidden = np.random.default_rng(0).normal(0.0, 0.5, size=(2, 3, 16)).astype("float32")
    normalised = np.asarray(model.decoder.norm(hidden))
    np.testing.assert_allclose(normalised.mean(-1), 0.0, atol=1e-5)
    np.testing.assert_allclose(normalised.std(-1), 1.0, atol=1e-2)
    # Decoding step by step gives the teacher-forced logits (the norm is on both paths).
    logits = np.asarray(model((source, target_in)))
    state = model.encode(source)
    for t in range(target_in.shape[1]):
        step_logits, state, _ = model.decode_step(target_in[:, : t + 1], state)
        np.testing.assert_allclose(np.asarray(step_logits)[0], logits[0, t], atol=1e-5)
    # Save/load round trip keeps the option and the weights.
    path = tmp_path / "model.keras"
    model.save(path)
    loaded = keras.saving.load_model(path)
    assert loaded.get_config()["output_norm"]
    np.testing.assert_allclose(np.asarray(loaded((source, target_in))), logits, atol=1e-6)
