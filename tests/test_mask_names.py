"""One name per kind of mask in the public layers and functions (issue 29; the convention is
written down in ``seqlab.layers.masking``'s docstring, after keras-hub's).

A parameter holds a mask when it is called ``mask`` or ends in ``_mask``. Allowed:

* ``padding_mask`` ``(batch, length)``, True at real tokens, and ``encoder_padding_mask`` (a
  decoder's mask of the source it attends to, keras-hub's ``TransformerDecoder`` name);
* ``attention_mask`` ``(batch, query_len, key_len)`` or broadcastable to the scores, and the
  flag ``use_causal_mask`` (Keras's and keras-hub's name);
* ``mask`` only in a Keras layer's own methods (``call``, ``compute_mask``,
  ``compute_output_spec``), where it is the mask Keras propagates from
  ``Embedding(mask_zero=True)``;
* ``<argument>_mask`` in a layer's ``call`` (and its ``compute_output_spec``) when
  ``<argument>`` is another parameter of that method: the slot where Keras itself passes that
  argument's Keras mask, so its name is Keras's (``MultiHeadAttention``'s ``query_mask``,
  ``value_mask``, ``key_mask`` as in ``keras.layers.MultiHeadAttention``; the RNN attentions'
  ``values_mask``);
* :func:`seqlab.layers.multi_head_attention.combine_attention_masks` takes
  ``MultiHeadAttention.call``'s mask arguments under their names, to forward them.
"""

from __future__ import annotations

import importlib
import inspect

import keras
import pytest

MODULES = ("seqlab.layers", "seqlab.models", "seqlab.decoding")
STANDARD = {"padding_mask", "encoder_padding_mask", "attention_mask", "use_causal_mask"}
KERAS_METHODS = {"call", "compute_mask", "compute_output_spec"}
#: qualified name -> the mask parameters it may have besides STANDARD, and why.
FORWARDERS = {
    "seqlab.layers.multi_head_attention.combine_attention_masks":
        {"query_mask", "value_mask", "key_mask"},  # MultiHeadAttention.call's, forwarded
}

def _public_callables():
    """``(qualified name, function, owning class or None)`` for every public function and
    every public method (and ``call``) of every public class of the three modules."""
    seen = set()
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if inspect.isclass(obj):
                for attr, function in inspect.getmembers(obj, inspect.isfunction):
                    if attr.startswith("_") and attr != "__init__":
                        continue
                    if not function.__module__.startswith("seqlab"):
                        continue  # inherited from Keras: Keras's names
                    key = f"{function.__module__}.{function.__qualname__}"
                    if key not in seen:
                        seen.add(key)
                        yield key, function, obj
            elif inspect.isfunction(obj):
                key = f"{obj.__module__}.{obj.__qualname__}"
                if key not in seen:
                    seen.add(key)
                    yield key, obj, None


def _mask_parameters(function):
    return [name for name in inspect.signature(function).parameters
            if name == "mask" or name.endswith("_mask")]


def _allowed(key, function, owner, name):
    if name in STANDARD | FORWARDERS.get(key, set()):
        return True
    method = function.__name__
    is_layer_method = (owner is not None and issubclass(owner, keras.layers.Layer)
                       and method in KERAS_METHODS)
    if not is_layer_method:
        return False
    if name == "mask":
        return True
    # Keras's <argument>_mask slot: the mask of another argument of the same call.
    return name[: -len("_mask")] in inspect.signature(function).parameters


CALLABLES = list(_public_callables())


def test_the_walk_finds_the_layers_with_masks():
    names = {key.rsplit(".", 2)[-2] + "." + key.rsplit(".", 1)[-1] for key, _, _ in CALLABLES}
    assert {"TransformerDecoderLayer.call", "BahdanauDecoder.call", "_SourceAttention.call",
            "MultiHeadAttention.call"} <= names


@pytest.mark.parametrize("key,function,owner", CALLABLES, ids=[key for key, _, _ in CALLABLES])
def test_mask_parameters_have_standard_names(key, function, owner):
    wrong = [name for name in _mask_parameters(function)
             if not _allowed(key, function, owner, name)]
    assert not wrong, (
        f"{key} has mask parameter(s) {wrong}: call a (batch, length) mask of real tokens "
        "'padding_mask' ('encoder_padding_mask' for a decoder's source), a (batch, T, S) one "
        "'attention_mask'; 'mask' only for the mask Keras propagates into a layer's call "
        "(see tests/test_mask_names.py)")


def test_the_rule_refuses_the_old_names():
    class Layer(keras.layers.Layer):
        def call(self, x, context, context_mask=None, source_mask=None, mask=None):
            return x

    def function(scores, mask=None, values_mask=None):
        return scores

    def bad(name, function, owner):
        return [p for p in _mask_parameters(function) if not _allowed(name, function, owner, p)]

    # context_mask is Keras's slot for `context` here; source_mask names no argument.
    assert bad("test.Layer.call", Layer.call, Layer) == ["source_mask"]
    assert bad("test.function", function, None) == ["mask", "values_mask"]
