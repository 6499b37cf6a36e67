"""The names saved ``.keras`` files give our classes and functions do not change.

A saved model names each custom object by its registered name (``"seqlab>MultiHeadAttention"``),
and ``keras.models.load_model`` finds it by that name. Moving a class to another module keeps
it; renaming a class or function would break every file saved before, so a renamed one
keeps its first registered name.
The layers' names are checked with the rest of the layer contract (tests/test_layer_contract.py);
the models, training objects and functions are checked here.
"""

from __future__ import annotations

import keras
import pytest

import seqlab.data.translation_text
import seqlab.lessons.nb04
import seqlab.lessons.nb06
import seqlab.lessons.nb07
import seqlab.models
import seqlab.training

#: Registered name -> where the object lives now (the names are those of the released files).
#: The layers' names: tests/test_layer_contract.py (REGISTERED).
REGISTERED = {
    "seqlab.nb07>MiniGPT": seqlab.lessons.nb07.MiniGPT,
    "seqlab.nb04>Encoder": seqlab.lessons.nb04.Encoder,
    "seqlab.nb04>Decoder": seqlab.lessons.nb04.Decoder,
    "seqlab.nb04>BahdanauTranslatorDecoder": seqlab.lessons.nb04.BahdanauTranslatorDecoder,
    "seqlab.nb04>Translator": seqlab.lessons.nb04.Translator,
    "seqlab.nb06>SkipGram": seqlab.lessons.nb06.SkipGram,
    "seqlab>MaskedAccuracy": seqlab.training.MaskedAccuracy,
    "seqlab>MaskedSparseCategoricalCrossentropy": seqlab.training.MaskedSparseCategoricalCrossentropy,
    "seqlab>LazyAdam": seqlab.training.LazyAdam,
    "seqlab>FusedAdam": seqlab.training.FusedAdam,
    "seqlab>TransformerSchedule": seqlab.training.TransformerSchedule,
    "seqlab>standardize_with_markers": seqlab.data.translation_text.standardize_with_markers,
}


@pytest.mark.parametrize("name", sorted(REGISTERED))
def test_registered_name_is_unchanged(name):
    assert keras.saving.get_registered_name(REGISTERED[name]) == name
    assert keras.saving.get_registered_object(name) is REGISTERED[name]
