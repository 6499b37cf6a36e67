"""The names saved ``.keras`` files give our classes and functions do not change.

A saved model names each custom object by its registered name (``"seqlab>MultiHeadAttention"``),
and ``keras.models.load_model`` finds it by that name. Moving a class to another module keeps
it; renaming a class or function would break every file saved before, so a renamed function
keeps its first registered name (``standardize_with_markers`` is ``"seqlab>standardize"``).
The layers' names are checked with the rest of the layer contract (tests/test_layer_contract.py);
the models, training objects and functions are checked here.
"""

from __future__ import annotations

import keras
import pytest

import seqlab.data.translation
import seqlab.models
import seqlab.training

#: Registered name -> where the object lives now (the names are those of the released files).
#: The layers' names: tests/test_layer_contract.py (REGISTERED).
REGISTERED = {
    "seqlab>MiniGPT": seqlab.models.MiniGPT,
    "seqlab>Seq2SeqDecoder": seqlab.models.Seq2SeqDecoder,
    "seqlab>Seq2SeqEncoder": seqlab.models.Seq2SeqEncoder,
    "seqlab>Seq2SeqTranslator": seqlab.models.Seq2SeqTranslator,
    "seqlab>SkipGram": seqlab.models.SkipGram,
    "seqlab>MaskedAccuracy": seqlab.training.MaskedAccuracy,
    "seqlab>MaskedSparseCategoricalCrossentropy": seqlab.training.MaskedSparseCategoricalCrossentropy,
    "seqlab>SummedRowsAdam": seqlab.training.SummedRowsAdam,
    "seqlab>LazyAdam": seqlab.training.LazyAdam,
    "seqlab>FusedAdam": seqlab.training.FusedAdam,
    "seqlab>TransformerSchedule": seqlab.training.TransformerSchedule,
    "seqlab>standardize": seqlab.data.translation.standardize_with_markers,
}


@pytest.mark.parametrize("name", sorted(REGISTERED))
def test_registered_name_is_unchanged(name):
    assert keras.saving.get_registered_name(REGISTERED[name]) == name
    assert keras.saving.get_registered_object(name) is REGISTERED[name]


def test_a_translator_saved_before_bahdanau_had_its_own_decoder_loads_as_luong_concat(tmp_path):
    """Until configuration version 2, ``attention="bahdanau"`` named Luong's decoder with the
    concat score; such a file (its config without ``config_version``) loads as ``luong-concat``,
    whose weights have the same layout, and computes what it computed."""
    import json
    import zipfile

    import numpy as np

    keras.utils.set_random_seed(0)
    model = seqlab.models.Seq2SeqTranslator(12, 10, embedding_dim=8, units=16,
                                            attention="luong-concat")
    source, target_in = np.array([[5, 6, 7, 0]]), np.array([[1, 4, 3]])
    expected = np.asarray(model((source, target_in)))
    model.save(tmp_path / "new.keras")
    old = tmp_path / "old.keras"
    with zipfile.ZipFile(tmp_path / "new.keras") as new, zipfile.ZipFile(old, "w") as out:
        for item in new.infolist():
            data = new.read(item.filename)
            if item.filename == "config.json":
                config = json.loads(data)
                assert config["config"].pop("config_version") == 2
                config["config"]["attention"] = "bahdanau"  # what the old version wrote
                data = json.dumps(config).encode()
            out.writestr(item, data)
    reloaded = keras.models.load_model(old)
    assert reloaded.attention_kind == "luong-concat" and reloaded.decoder.bahdanau is None
    np.testing.assert_allclose(reloaded((source, target_in)), expected, atol=1e-6)
    # A file of today says which decoder it holds.
    assert keras.models.load_model(tmp_path / "new.keras").attention_kind == "luong-concat"
