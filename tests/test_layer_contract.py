"""Every custom layer of ``seqlab.layers`` keeps the layer contract (tests/layer_contract.py).

One row per layer (a layer used in two ways gets two rows): its factory, example inputs, and
what the contract needs to know about it. A check a layer cannot keep for a real reason is
listed in the row's ``not_applicable`` with the reason, and reported as skipped. What each
layer computes (the slide equations, equality with Keras's twins, masks as properties, caches)
is tested in ``tests/test_layers_<module>.py``.
"""

from __future__ import annotations

import keras
import numpy as np
import pytest
from layer_contract import (
    CHECKS,
    MIXED_POLICIES,
    KerasTwin,
    Padding,
    keeps_the_mask,
    no_output_mask,
    run_layer_contract,
)

import seqlab.layers
from seqlab.layers import (
    STANDIN_HANDLE,
    BahdanauAttention,
    BahdanauDecoder,
    CachedMultiHeadAttention,
    FastMultiHeadAttention,
    FlatDense,
    GRUCell,
    HubTextEmbedding,
    LSTMCell,
    LuongAttention,
    MultiHeadAttention,
    PositionalEmbedding,
    PositionwiseFeedForward,
    RealTokenDense,
    RecurrentCell,
    SimpleRNNCell,
    TransformerDecoderLayer,
)
from seqlab.lessons.nb05 import TransformerEncoderLayer

# ---- tolerances of the mixed-policy checks (from the mixed-precision tests they replace) -----

#: Machine epsilon of each compute dtype: float16 carries 10 mantissa bits, bfloat16 7.
EPS = {"mixed_float16": 2.0**-10, "mixed_bfloat16": 2.0**-7}


def rnn_attention_tolerance(policy, reference):
    """Rounding to float16/bfloat16 costs at most half an epsilon, relative. An attention
    output passes through about three such roundings (inputs, projections, context) whose
    errors add up, and the softmax runs in float32 (``masked_softmax``), so we allow ``4 * eps``
    of the float32 output's largest magnitude: 3.9e-3 (float16), 3.1e-2 (bfloat16) for
    unit-scale outputs; measured on these inputs: at most 1.6e-3 and 1.6e-2 (outputs of scale
    2.3)."""
    return 4 * EPS[policy] * max(float(np.abs(reference).max()), 1.0)


def transformer_tolerance(policy, reference):
    """A ``mixed_*`` layer rounds its inputs and every intermediate result to the compute
    dtype, whose unit roundoff is u = eps / 2 (2⁻¹¹ ≈ 4.9e-4 float16, 2⁻⁸ ≈ 3.9e-3 bfloat16).
    The outputs are O(1) (layer-normalised activations, scaled embeddings) and each passes
    through a few dozen rounded operations (projections, softmax inputs, residual sums,
    normalisation): first-order error analysis bounds the error by (number of rounded
    operations) × u × (output scale). We allow 40 u of the output's largest magnitude: 0.02
    in float16 and 0.16 in bfloat16 for unit-scale outputs. A masking bug (a padded key with
    weight, an overflowing −1e9, NaN) changes outputs by O(1) and fails."""
    return 40 * (EPS[policy] / 2) * max(1.0, float(np.abs(reference).max()))


def bahdanau_decoder_tolerance(policy, reference):
    """The decoder's output ``[h_t; c_t]`` comes from the attention (``4 * eps`` above) and a
    GRU step per target word, whose rounding errors carry over through the recurrence (4
    steps here). The absolute bounds of its former test are kept: 2e-2 ≈ 20 eps (float16) and
    1e-1 ≈ 13 eps (bfloat16), for outputs of magnitude about 2 (measured: at most 1.4e-3 and
    9.3e-3)."""
    return {"mixed_float16": 2e-2, "mixed_bfloat16": 1e-1}[policy]


def recurrent_cell_tolerance(policy, reference):
    """A cell step rounds its input, two matmuls and their sum, and 1-4 gate activations to
    the compute dtype (about 8 roundings, u = eps / 2 each); the state of step t carries the
    errors of the steps before it, damped by the gates (|h| < 1). Over 6 steps we allow
    ``16 * eps`` of the output's scale: 1.6e-2 (float16), 1.3e-1 (bfloat16) for |h| ≤ 1;
    measured: at most 1.4e-3 and 3.0e-2 (ReLU's outputs reach 4.4). A wrong weight or an
    ignored mask moves h by O(0.1)."""
    return 16 * EPS[policy] * max(1.0, float(np.abs(reference).max()))


# ---- example inputs --------------------------------------------------------------------------

rng = np.random.default_rng(10)
#: The RNN attentions: row 3 is all padding (an empty source): its weights and context are 0.
QUERY = rng.normal(size=(4, 3, 16)).astype("float32")  # (batch, Tq, d)
VALUES = rng.normal(size=(4, 7, 16)).astype("float32")  # (batch, Tv, d)
MASK = np.arange(7)[None, :] < np.array([[7], [4], [1], [0]])

#: The recurrent cells: right-padded lengths 1..6, one sequence per length.
SEQUENCES = rng.normal(size=(5, 6, 3)).astype("float32")  # (batch, time, features)
SEQUENCE_MASK = np.arange(6)[None, :] < (1 + np.arange(5) % 6)[:, None]

#: Bahdanau's decoder: embedded targets, encoder outputs, the initial state.
TARGETS = rng.normal(size=(3, 4, 6)).astype("float32")  # (batch, T, embedding)
ENCODED = rng.normal(size=(3, 5, 10)).astype("float32")  # (batch, Tv, value)
ENCODED_MASK = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 0, 0, 0]], bool)
STATE = [rng.normal(size=(3, 8)).astype("float32") for _ in range(2)]  # (batch, units) each

#: The Transformer layers: row 1 of the context is all padding.
X = rng.normal(size=(3, 5, 16)).astype("float32")  # (batch, T, d)
CONTEXT = rng.normal(size=(3, 6, 16)).astype("float32")  # (batch, S, d)
CONTEXT_MASK = np.array([[1, 1, 1, 1, 0, 0], [0] * 6, [1] * 6], bool)
X_MASK = np.array([[1, 1, 1, 0, 0], [0] * 5, [1] * 5], bool)
IDS = np.array([[4, 5, 6, 0, 0], [0] * 5, [7, 8, 9, 10, 11]], "int32")

REVIEWS = np.array([b"A wonderful, moving film.", "Ça m'a plu ☺".encode(), b"", b"dull"],
                   dtype=object)


# ---- facts that hold in every dtype policy ---------------------------------------------------


def empty_source_gets_zero_weights_and_context(outputs):
    context, weights = (np.asarray(keras.ops.cast(o, "float32")) for o in outputs)
    assert np.all(weights[3] == 0.0) and np.all(context[3] == 0.0)  # not NaN or 1/7


def padded_sources_get_zero_weight(outputs):
    weights = np.asarray(keras.ops.cast(outputs[1], "float32"))  # (batch, T, Tv)
    assert np.all(weights[np.broadcast_to(~ENCODED_MASK[:, None, :], weights.shape)] == 0.0)


def padded_context_row_gets_zero_weight(outputs):
    scores = outputs[1]["cross_attention"] if isinstance(outputs[1], dict) else outputs[1]
    assert np.all(np.asarray(keras.ops.cast(scores, "float32"))[1] == 0)


def bidirectional_rnn(cell):
    return keras.layers.Bidirectional(keras.layers.RNN(cell, return_sequences=True))


# ---- the Keras twins the initial weights are compared with (the keras_twin check) ------------

#: Sizes of the twins: 4,096 entries or more per weight and seed (layer_contract.TWIN_SEEDS), so
#: that a wrong scale is dozens of standard errors away (layer_contract.STANDARD_ERRORS).
D, U, HEADS = 64, 64, 4


def built(layer, *shapes):
    layer.build(*shapes)
    return layer


def values(weight):
    return keras.ops.convert_to_numpy(weight)


def cell_twin(cell, keras_cell, gates, state="h"):
    """Our cell's ``W_x<k>``, ``W_<state><k>``, ``b_<k>`` next to block ``k`` (in Keras's order)
    of the Keras cell's fused ``kernel (d, k·u)``, ``recurrent_kernel (u, k·u)``, ``bias``."""
    def pairs(ours, theirs):
        fused = [values(w) for w in (theirs.kernel, theirs.recurrent_kernel, theirs.bias)]
        result = {}
        for block, gate in enumerate(gates):
            names = (f"W_x{gate}", f"W_{state}{gate}", f"b_{gate}" if gate else "b")
            for name, weight in zip(names, fused, strict=True):
                result[name] = (values(getattr(ours, name)),
                                weight[..., block * U:(block + 1) * U])
        return result
    return KerasTwin(lambda: built(cell(), (None, D)), lambda: built(keras_cell(), (None, D)),
                     pairs)


#: Before Keras 3.15, Keras's MultiHeadAttention computed Glorot's fans of its (d, H, dk)
#: kernels as if they were convolution kernels (fan_in d·H, fan_out d·dk); Keras 3.15 counts the
#: einsum's axes (keras-team/keras#22789): fan_in d, fan_out H·dk, what a Dense (d, H·dk)
#: kernel, ours, counts. On an older Keras the twin is what 3.15 draws: four Dense kernels.
KERAS_COUNTS_EINSUM_FANS = "input_axes" in keras.initializers.GlorotUniform().get_config()
PROJECTIONS = ("query_dense", "key_dense", "value_dense", "output_dense")


def attention_twin(attention):
    shape = (None, 10, D)

    def theirs():
        if KERAS_COUNTS_EINSUM_FANS:
            layer = built(keras.layers.MultiHeadAttention(HEADS, D // HEADS), shape, shape)
            return [getattr(layer, name) for name in PROJECTIONS]
        return [built(keras.layers.Dense(D), shape) for _ in PROJECTIONS]

    def pairs(ours, twins):
        return {f"{name}.{kind}": (values(getattr(getattr(ours, name), kind)),
                                   values(getattr(twin, kind)).reshape(
                                       getattr(getattr(ours, name), kind).shape))
                for name, twin in zip(PROJECTIONS, twins, strict=True)
                for kind in ("kernel", "bias")}

    return KerasTwin(lambda: built(attention(HEADS, D // HEADS), shape, shape), theirs, pairs)


def dense_twin(ours, names, sizes, build_shape):
    """A Dense-like layer (``names=[None]``) or one made of Dense-like sublayers ``names``, of
    ``(inputs, units)`` each in ``sizes``, next to ``keras.layers.Dense`` layers of those sizes."""
    def theirs():
        return [built(keras.layers.Dense(units), (None, inputs)) for inputs, units in sizes]

    def pairs(layer, twins):
        dense = [layer if name is None else getattr(layer, name) for name in names]
        return {f"{name or 'dense'}.{kind}": (values(getattr(ours, kind)),
                                              values(getattr(twin, kind)))
                for name, ours, twin in zip(names, dense, twins, strict=True)
                for kind in ("kernel", "bias")}

    return KerasTwin(lambda: built(ours(), build_shape), theirs, pairs)


def bahdanau_twin():
    """``W_query``, ``W_value``: the Dense projections Keras's docs put before its
    ``AdditiveAttention``; ``v``: that layer's ``scale`` (``v^T tanh(...)``)."""
    units = 256

    def theirs():
        return {"W_query": built(keras.layers.Dense(units, use_bias=False), (None, D)),
                "W_value": built(keras.layers.Dense(units, use_bias=False), (None, D)),
                "v": built(keras.layers.AdditiveAttention(), [(None, 3, units), (None, 10, units)])}

    def pairs(ours, twin):
        return {"W_query": (values(ours.query_projection.kernel), values(twin["W_query"].kernel)),
                "W_value": (values(ours.value_projection.kernel), values(twin["W_value"].kernel)),
                "v": (values(ours.v), values(twin["v"].scale))}

    return KerasTwin(lambda: built(BahdanauAttention(units), (None, D), (None, 10, D)), theirs,
                     pairs)


def luong_general_twin():
    """``W``: the Dense projection of the keys before Keras's ``Attention`` (dot score)."""
    return KerasTwin(
        lambda: built(LuongAttention("general"), (None, D), (None, 10, D)),
        lambda: built(keras.layers.Dense(D, use_bias=False), (None, D)),
        lambda ours, twin: {"W": (values(ours.value_projection.kernel), values(twin.kernel))})


def embedding_twin():
    return KerasTwin(lambda: built(PositionalEmbedding(1000, D), (None, 10)),
                     lambda: built(keras.layers.Embedding(1000, D), (None, 10)),
                     lambda ours, twin: {"embeddings": (values(ours.embedding.embeddings),
                                                        values(twin.embeddings))})


NO_WEIGHTS = "it has no weights to initialise"
COMPOSED = "made of layers compared with their Keras twins elsewhere ({}); Keras has no twin of it"

NO_CALL = "an abstract base class: subclasses implement call (tested as their own rows)"
RNN_ATTENTION = {
    "inputs": (QUERY, VALUES),
    "call_kwargs": {"padding_mask": MASK, "return_attention_scores": True},
    "expected_output_shape": (4, 3, 16), "mixed_tolerance": rnn_attention_tolerance,
    "expect": empty_source_gets_zero_weights_and_context,
    "paddings": [Padding(1, "padding_mask")], "output_mask": no_output_mask,
}
CELL = {
    "inputs": (SEQUENCES,), "call_kwargs": {"mask": SEQUENCE_MASK}, "wrap": bidirectional_rnn,
    "expected_output_shape": (5, 6, 8), "mixed_tolerance": recurrent_cell_tolerance,
    "paddings": [Padding(0, "mask", output_axis=1)], "output_mask": keeps_the_mask,
}
TRANSFORMER = {"mixed_tolerance": transformer_tolerance}

#: id -> (the layer's factory, run_layer_contract's keyword arguments).
LAYERS = {
    "BahdanauAttention": (lambda: BahdanauAttention(16), {
        **RNN_ATTENTION, "keras_twin": bahdanau_twin()}),
    "LuongAttention-dot": (lambda: LuongAttention("dot"), {
        **RNN_ATTENTION, "not_applicable": {"keras_twin": NO_WEIGHTS}}),
    "LuongAttention-general": (lambda: LuongAttention("general"), {
        **RNN_ATTENTION, "keras_twin": luong_general_twin()}),
    "BahdanauDecoder-gru": (lambda: BahdanauDecoder(8, rnn="gru"), {
        "inputs": (TARGETS, ENCODED, STATE[:1]),
        "call_kwargs": {"encoder_padding_mask": ENCODED_MASK, "return_attention_scores": True},
        "expected_output_shape": (3, 4, 18), "mixed_tolerance": bahdanau_decoder_tolerance,
        "expect": padded_sources_get_zero_weight,
        # Padded source positions change nothing; padded target steps carry the state over.
        "paddings": [Padding(1, "encoder_padding_mask"),
                     Padding(0, "padding_mask", output_axis=1)],
        "output_mask": no_output_mask,
        "not_applicable": {"keras_twin": COMPOSED.format("BahdanauAttention's row; its cell "
                                                         "is Keras's own GRUCell")}}),
    "BahdanauDecoder-lstm": (lambda: BahdanauDecoder(8, attention_units=12, rnn="lstm",
                                                     dropout=0.25), {
        "inputs": (TARGETS, ENCODED, STATE), "call_kwargs": {"encoder_padding_mask": ENCODED_MASK},
        "expected_output_shape": (3, 4, 18), "mixed_tolerance": bahdanau_decoder_tolerance,
        "paddings": [Padding(1, "encoder_padding_mask")], "output_mask": no_output_mask,
        "not_applicable": {"keras_twin": COMPOSED.format("BahdanauAttention's row; its cell "
                                                         "is Keras's own LSTMCell")}}),
    "RecurrentCell": (lambda: RecurrentCell(4), {
        "inputs": None, "not_applicable": {check: NO_CALL for check in CHECKS
                                           if check not in ("config", "registered_name")}}),
    "SimpleRNNCell": (lambda: SimpleRNNCell(4), {
        **CELL, "keras_twin": cell_twin(lambda: SimpleRNNCell(U),
                                        lambda: keras.layers.SimpleRNNCell(U), [""], "y")}),
    "SimpleRNNCell-relu": (lambda: SimpleRNNCell(4, activation="relu"), {
        **CELL, "not_applicable": {"keras_twin": "the activation does not enter the initial "
                                                 "weights: the SimpleRNNCell row compares them"}}),
    "LSTMCell": (lambda: LSTMCell(4), {
        **CELL, "keras_twin": cell_twin(lambda: LSTMCell(U), lambda: keras.layers.LSTMCell(U),
                                        LSTMCell.GATES)}),
    "LSTMCell-peephole": (lambda: LSTMCell(4, peephole=True, unit_forget_bias=False), {
        **CELL, "keras_twin": cell_twin(  # the peepholes have no twin: distinct_kernels only
            lambda: LSTMCell(U, peephole=True, unit_forget_bias=False),
            lambda: keras.layers.LSTMCell(U, unit_forget_bias=False), LSTMCell.GATES)}),
    "GRUCell": (lambda: GRUCell(4), {
        **CELL, "keras_twin": cell_twin(
            lambda: GRUCell(U), lambda: keras.layers.GRUCell(U, reset_after=False),
            GRUCell.GATES)}),
    "MultiHeadAttention-cross": (lambda: MultiHeadAttention(4, 4), {
        **TRANSFORMER, "inputs": (X, CONTEXT),
        "call_kwargs": {"value_mask": CONTEXT_MASK, "return_attention_scores": True},
        "expected_output_shape": (3, 5, 16), "expect": padded_context_row_gets_zero_weight,
        "paddings": [Padding(1, "value_mask")], "output_mask": keeps_the_mask,
        "keras_twin": attention_twin(MultiHeadAttention)}),
    "MultiHeadAttention-causal-self": (lambda: MultiHeadAttention(2, 8, value_dim=4), {
        **TRANSFORMER, "inputs": (X, X),
        "call_kwargs": {"use_causal_mask": True, "query_mask": X_MASK},
        "expected_output_shape": (3, 5, 16),
        "paddings": [Padding(0, "query_mask", output_axis=1)], "output_mask": keeps_the_mask,
        "not_applicable": {"keras_twin": "the MultiHeadAttention-cross row compares the same "
                                         "class's initial weights with Keras's"}}),
    "CachedMultiHeadAttention-causal-self": (lambda: CachedMultiHeadAttention(2, 8, value_dim=4), {
        **TRANSFORMER, "inputs": (X, X),
        "call_kwargs": {"use_causal_mask": True, "query_mask": X_MASK},
        "expected_output_shape": (3, 5, 16),
        "paddings": [Padding(0, "query_mask", output_axis=1)], "output_mask": keeps_the_mask,
        "keras_twin": attention_twin(CachedMultiHeadAttention)}),
    "FastMultiHeadAttention-causal-self": (lambda: FastMultiHeadAttention(2, 8, value_dim=4), {
        **TRANSFORMER, "inputs": (X, X),
        "call_kwargs": {"use_causal_mask": True, "query_mask": X_MASK},
        "expected_output_shape": (3, 5, 16),
        "paddings": [Padding(0, "query_mask", output_axis=1)], "output_mask": keeps_the_mask,
        "keras_twin": attention_twin(FastMultiHeadAttention)}),
    "FlatDense": (lambda: FlatDense(7), {
        **TRANSFORMER, "inputs": (X,), "expected_output_shape": (3, 5, 7),
        "not_applicable": {"mask": "a Dense: position-wise, it takes no mask"},
        "keras_twin": dense_twin(lambda: FlatDense(U), [None], [(D, U)], (None, D))}),
    "PositionalEmbedding": (lambda: PositionalEmbedding(30, 16), {
        **TRANSFORMER, "inputs": (IDS,), "expected_output_shape": (3, 5, 16),
        "paddings": [Padding(0, None, value=0, output_axis=1)],
        "output_mask": lambda ids, mask: ids != 0, "keras_twin": embedding_twin()}),
    "PositionwiseFeedForward": (lambda: PositionwiseFeedForward(16, 32), {
        **TRANSFORMER, "inputs": (X,), "expected_output_shape": (3, 5, 16),
        "not_applicable": {"mask": "position-wise and used only inside the encoder/decoder "
                                   "layers, which handle padding: it takes no mask"},
        "keras_twin": dense_twin(lambda: PositionwiseFeedForward(D, 4 * D),
                                 ["inner_dense", "outer_dense"], [(D, 4 * D), (4 * D, D)],
                                 (None, 10, D))}),
    "TransformerEncoderLayer": (lambda: TransformerEncoderLayer(16, 4, 32), {
        **TRANSFORMER, "inputs": (CONTEXT,),
        "call_kwargs": {"mask": CONTEXT_MASK, "return_attention_scores": True},
        "expected_output_shape": (3, 6, 16), "expect": padded_context_row_gets_zero_weight,
        "paddings": [Padding(0, "mask", output_axis=1)], "output_mask": keeps_the_mask,
        "not_applicable": {"keras_twin": COMPOSED.format(
            "the MultiHeadAttention and PositionwiseFeedForward rows; its normalisations are "
            "Keras's own")}}),
    "TransformerDecoderLayer": (lambda: TransformerDecoderLayer(16, 4, 32), {
        **TRANSFORMER, "inputs": (X, CONTEXT),
        "call_kwargs": {"encoder_padding_mask": CONTEXT_MASK, "return_attention_scores": True},
        "expected_output_shape": (3, 5, 16), "expect": padded_context_row_gets_zero_weight,
        # Padded context changes nothing; later target steps cannot reach earlier ones.
        "paddings": [Padding(1, "encoder_padding_mask"), Padding(0, None, output_axis=1)],
        "output_mask": no_output_mask,
        "not_applicable": {"keras_twin": COMPOSED.format(
            "the MultiHeadAttention and PositionwiseFeedForward rows; its normalisations are "
            "Keras's own")}}),
    "RealTokenDense": (lambda: RealTokenDense(7), {
        **TRANSFORMER, "inputs": (X,), "call_kwargs": {"padding_mask": X_MASK},
        "expected_output_shape": (3, 5, 7),
        # a Dense: a Keras mask on its input passes on to its output
        "paddings": [Padding(0, "padding_mask", output_axis=1)], "output_mask": keeps_the_mask,
        "keras_twin": dense_twin(lambda: RealTokenDense(U), [None], [(D, U)], (None, D))}),
    "HubTextEmbedding": (lambda: HubTextEmbedding(STANDIN_HANDLE), {
        "inputs": (REVIEWS,), "expected_output_shape": (4, 50),
        "not_applicable": {
            **dict.fromkeys(MIXED_POLICIES, "the TF-Hub module's SavedModel graph computes in "
                            "float32, as the layer documents; the classifier around it under "
                            "mixed policies is tested in test_mixed_precision.py"),
            "mask": "its input is one string per example: no time axis to pad or mask",
            "keras_twin": "its weights are the TF-Hub module's own, loaded, never drawn"}}),
}


def test_the_table_has_a_row_for_every_layer_class_in_seqlab_layers():
    """... and for notebook 05's encoder layer, which notebooks 07 and 08 reuse."""
    classes = {getattr(seqlab.layers, name) for name in seqlab.layers.__all__}
    layer_classes = {c for c in classes if isinstance(c, type) and issubclass(c, keras.layers.Layer)}
    covered = {type(factory()) for factory, _ in LAYERS.values()}
    assert covered == layer_classes | {TransformerEncoderLayer}


#: The names saved files know the layers by (those of the released files): a renamed class
#: keeps its first name, or every file saved before stops loading.
REGISTERED = {
    BahdanauAttention: "seqlab>BahdanauAttention", BahdanauDecoder: "seqlab>BahdanauDecoder",
    CachedMultiHeadAttention: "seqlab>CachedMultiHeadAttention",
    FastMultiHeadAttention: "seqlab>FastMultiHeadAttention", FlatDense: "seqlab>FlatDense",
    GRUCell: "seqlab>GRUCell", HubTextEmbedding: "seqlab>HubTextEmbedding",
    LSTMCell: "seqlab>LSTMCell", LuongAttention: "seqlab>LuongAttention",
    MultiHeadAttention: "seqlab>MultiHeadAttention",
    PositionalEmbedding: "seqlab>PositionalEmbedding",
    PositionwiseFeedForward: "seqlab>PositionwiseFeedForward",
    RealTokenDense: "seqlab>RealTokenDense",
    RecurrentCell: "seqlab>RecurrentCell", SimpleRNNCell: "seqlab>SimpleRNNCell",
    TransformerDecoderLayer: "seqlab>TransformerDecoderLayer",
    TransformerEncoderLayer: "seqlab.nb05>TransformerEncoderLayer",
}


@pytest.mark.parametrize("check", CHECKS)
@pytest.mark.parametrize("name", list(LAYERS))
def test_layer_contract(name, check, tmp_path):
    factory, case = LAYERS[name]
    case = dict(case)
    reason = case.get("not_applicable", {}).get(check)
    if reason:
        pytest.skip(f"not applicable to {name}: {reason}")
    run_layer_contract(factory, case.pop("inputs"), tmp_path=tmp_path,
                       registered_name=REGISTERED[type(factory())], checks=[check], **case)
