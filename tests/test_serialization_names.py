"""The names saved ``.keras`` files give our classes and functions do not change.

A saved model names each custom object by its registered name (``"seqlab>MultiHeadAttention"``),
and ``keras.models.load_model`` finds it by that name. Moving a class to another module keeps
it; renaming a class or function would break every file saved before, so a renamed function
keeps its first registered name (``standardize_with_markers`` is ``"seqlab>standardize"``).
"""

from __future__ import annotations

import keras
import pytest

import seqlab.data.translation
import seqlab.layers
import seqlab.models
import seqlab.training

#: Registered name -> where the object lives now (the names are those of the released files).
REGISTERED = {
    "seqlab>BahdanauAttention": seqlab.layers.BahdanauAttention,
    "seqlab>GRUCell": seqlab.layers.GRUCell,
    "seqlab>HubTextEmbedding": seqlab.layers.HubTextEmbedding,
    "seqlab>LSTMCell": seqlab.layers.LSTMCell,
    "seqlab>LuongAttention": seqlab.layers.LuongAttention,
    "seqlab>MultiHeadAttention": seqlab.layers.MultiHeadAttention,
    "seqlab>PositionalEmbedding": seqlab.layers.PositionalEmbedding,
    "seqlab>PositionwiseFeedForward": seqlab.layers.PositionwiseFeedForward,
    "seqlab>RecurrentCell": seqlab.layers.RecurrentCell,
    "seqlab>SimpleRNNCell": seqlab.layers.SimpleRNNCell,
    "seqlab>TextFromCodepoints": seqlab.layers.TextFromCodepoints,
    "seqlab>TransformerDecoderLayer": seqlab.layers.TransformerDecoderLayer,
    "seqlab>TransformerEncoderLayer": seqlab.layers.TransformerEncoderLayer,
    "seqlab>MiniGPT": seqlab.models.MiniGPT,
    "seqlab>Seq2SeqDecoder": seqlab.models.Seq2SeqDecoder,
    "seqlab>Seq2SeqEncoder": seqlab.models.Seq2SeqEncoder,
    "seqlab>Seq2SeqTranslator": seqlab.models.Seq2SeqTranslator,
    "seqlab>SkipGram": seqlab.models.SkipGram,
    "seqlab>TransformerTranslator": seqlab.models.TransformerTranslator,
    "seqlab>MaskedAccuracy": seqlab.training.MaskedAccuracy,
    "seqlab>MaskedSparseCategoricalCrossentropy": seqlab.training.MaskedSparseCategoricalCrossentropy,
    "seqlab>SummedRowsAdam": seqlab.training.SummedRowsAdam,
    "seqlab>TransformerSchedule": seqlab.training.TransformerSchedule,
    "seqlab>standardize": seqlab.data.translation.standardize_with_markers,
}


@pytest.mark.parametrize("name", sorted(REGISTERED))
def test_registered_name_is_unchanged(name):
    assert keras.saving.get_registered_name(REGISTERED[name]) == name
    assert keras.saving.get_registered_object(name) is REGISTERED[name]
