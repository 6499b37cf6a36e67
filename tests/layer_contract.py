"""The layer contract every custom layer of ``seqlab.layers`` keeps, checked by one helper.

keras-hub tests each of its layers with one ``run_layer_test``; this is our version of the
idea (our own code): :func:`run_layer_contract` takes a factory for one layer and example
inputs and checks, by name (:data:`CHECKS`):

- ``config``: ``get_config`` -> ``from_config`` gives the same config, and the clone with the
  original's weights computes the same outputs (of the expected shape);
- ``registered_name``: the class is registered as serializable under the name saved ``.keras``
  files know it by (``"seqlab>..."``), and that name finds the class again;
- ``save_load``: inside a functional model (a symbolic call), ``model.save`` to ``.keras`` and
  ``keras.models.load_model`` give back the same class, config and outputs;
- ``mixed_float16`` / ``mixed_bfloat16``: under that global dtype policy the variables are
  float32, the float outputs have the compute dtype, are finite and agree with a float32 twin
  holding the same weights within the tolerance the case gives; one training step's gradients
  (sum of squared outputs) are finite and not all zero;
- ``mask``: appending padding (masked) to an input leaves the outputs at the real positions
  unchanged, and the output carries the mask the case says (Keras sets it to
  ``layer.compute_mask(first_input, first_input_mask)`` where ``layer.supports_masking``);
- ``distinct_kernels``: after build, no two weights that start random start equal (an unseeded
  Keras initializer instance shared by two weights draws the same values twice);
- ``keras_twin``: each weight's initial values are distributed as those of the matching weight
  (or block of a fused weight) of the layer's Keras twin: means and standard deviations agree
  within :func:`assert_same_distribution`'s bound, over :data:`TWIN_SEEDS`.

A case that cannot keep one check for a real reason names it in ``not_applicable`` with the
reason; :func:`run_layer_contract` refuses to run it and the table's test reports it skipped.
Public Keras API only, none newer than Keras 3.10 (the floor CI runs).
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import keras
import numpy as np
import tensorflow as tf

CHECKS = ("config", "registered_name", "save_load", "mixed_float16", "mixed_bfloat16", "mask",
          "distinct_kernels", "keras_twin")
MIXED_POLICIES = ("mixed_float16", "mixed_bfloat16")

#: Two calls of the same layer, or of a clone holding the same weights, on the same inputs run
#: the same kernels: on one CPU their outputs agree to the last bit, but a threaded reduction
#: may sum in another order, so we allow about ten float32 ulps of an O(1) output (the
#: save/load tests of every layer file used this bound).
SAME_WEIGHTS_ATOL = 1e-6

#: Appending padding changes the lengths of the rows a softmax or a matmul reduces, so a
#: vectorised CPU kernel may sum them in another order (measured: 1 float32 ulp on one CPU);
#: outputs are O(1)-O(10), so 1e-5 (the padding tests of the layer files used it) covers a
#: few ulps, while a padded position that leaks moves an output by O(0.1) or more.
PADDING_ATOL = 1e-5


@dataclasses.dataclass(frozen=True)
class Padding:
    """How padding is appended to one input of a layer for the ``mask`` check.

    Attributes:
        input: index of the positional input that gets ``extra`` more steps on axis 1.
        argument: the call argument holding that input's ``(batch, T)`` padding mask (it gets
            ``extra`` False columns); ``None`` where the layer needs no mask for it (a padding
            id it masks itself, or a causal layer whose later steps cannot reach earlier ones).
        value: what the appended steps hold: ``None`` for random numbers (garbage that a
            leak would show), or a padding id such as 0.
        output_axis: the axis of the first output that grows with the padding (its first ``T``
            entries are compared), or ``None`` where the output's shape does not depend on it.
    """

    input: int
    argument: str | None
    value: float | None = None
    output_axis: int | None = None


@dataclasses.dataclass(frozen=True)
class KerasTwin:
    """The Keras layer whose fresh weights ours must match in distribution (``keras_twin``).

    Attributes:
        ours: makes our layer, built, at sizes large enough for the statistics (thousands of
            entries per weight: :func:`assert_same_distribution`).
        theirs: makes the Keras twin of the same sizes, built (a layer, or the Keras layers
            ours is made of).
        pairs: ``(ours, theirs) -> {name: (our values, the twin's values)}``: each of our
            weights next to the weight, or block of a fused weight, of the twin it stands for.
    """

    ours: Callable[[], keras.layers.Layer]
    theirs: Callable[[], Any]
    pairs: Callable[[Any, Any], Mapping[str, tuple[Any, Any]]]


def no_output_mask(first_input, first_mask):
    """The layer consumes masks: its output carries none."""
    return None


def keeps_the_mask(first_input, first_mask):
    """The output keeps the first input's mask (position-wise layers, self-attention)."""
    return first_mask


@contextlib.contextmanager
def dtype_policy(name: str):
    """Sets the global dtype policy inside the block and always restores the previous one."""
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy(name)
    try:
        yield keras.config.dtype_policy()
    finally:
        keras.config.set_dtype_policy(previous)


def as_float32(x) -> np.ndarray:
    return np.asarray(keras.ops.cast(x, "float32"))


#: Unit roundoff of the mixed policies' compute dtypes (float16: 11 significand bits,
#: bfloat16: 8).
UNIT_ROUNDOFF = {"mixed_float16": 2.0**-11, "mixed_bfloat16": 2.0**-8}


def assert_close_to_float32(mixed, reference, policy: str, ulps: float = 40):
    """``mixed`` (computed under ``policy``) is finite and within ``ulps`` unit roundoffs of the
    output's scale of the float32 ``reference`` (40 u: the bound test_layer_contract.py
    justifies for the Transformer's layers, ``transformer_tolerance``)."""
    mixed, reference = as_float32(mixed), as_float32(reference)
    assert np.all(np.isfinite(mixed)), "non-finite output under " + policy
    scale = max(1.0, float(np.abs(reference).max()))
    np.testing.assert_allclose(mixed, reference, atol=ulps * UNIT_ROUNDOFF[policy] * scale, rtol=0)


def _is_text(x) -> bool:
    return np.asarray(x).dtype.kind in "OSU"


def _is_float(x) -> bool:
    return not _is_text(x) and "float" in keras.backend.standardize_dtype(x.dtype)


def _call(layer, inputs, call_kwargs):
    return layer(*inputs, **call_kwargs)


def _flat(outputs) -> list:
    return keras.tree.flatten(outputs)


def assert_same_outputs(got, want, atol=SAME_WEIGHTS_ATOL):
    got, want = _flat(got), _flat(want)
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        if _is_text(b):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
        else:
            np.testing.assert_allclose(as_float32(a), as_float32(b), atol=atol, rtol=0)


def _built(factory, wrap, inputs, call_kwargs):
    """A new layer, the object that is called (the layer or its wrapper), and its outputs."""
    layer = factory()
    called = wrap(layer) if wrap else layer
    return layer, called, _call(called, inputs, call_kwargs)


# ---- the checks ------------------------------------------------------------------------------


def check_config(factory, inputs, call_kwargs, wrap, expected_output_shape):
    keras.utils.set_random_seed(0)
    if inputs is None:  # a layer that is never called itself (an abstract base class)
        layer = factory()
        config = layer.get_config()
        assert type(layer).from_config(config).get_config() == config
        return
    layer, called, outputs = _built(factory, wrap, inputs, call_kwargs)
    if expected_output_shape is not None:
        assert tuple(_flat(outputs)[0].shape) == tuple(expected_output_shape)
    config = layer.get_config()
    clone = type(layer).from_config(config)
    assert clone.get_config() == config
    called_clone = wrap(clone) if wrap else clone
    _call(called_clone, inputs, call_kwargs)  # builds it
    called_clone.set_weights(called.get_weights())
    assert_same_outputs(_call(called_clone, inputs, call_kwargs), outputs)


def check_registered_name(factory, registered_name):
    cls = type(factory())
    assert registered_name is not None, "the table must spell out the saved name"
    assert keras.saving.get_registered_name(cls) == registered_name
    assert keras.saving.get_registered_object(registered_name) is cls


def _symbolic(x):
    x = np.asarray(x) if not isinstance(x, np.ndarray) else x
    dtype = "string" if _is_text(x) else x.dtype.name
    return keras.Input(shape=x.shape[1:], dtype=dtype)


def _layers_within(model):
    """The model's layers and the layers wrapped in them (an RNN's cell, a Bidirectional's
    forward and backward layers), depth first."""
    pending = list(model.layers)
    while pending:
        layer = pending.pop(0)
        yield layer
        pending += [getattr(layer, name) for name in ("cell", "forward_layer", "backward_layer")
                    if getattr(layer, name, None) is not None]


def check_save_load(factory, inputs, call_kwargs, wrap, tmp_path: Path):
    keras.utils.set_random_seed(0)
    layer = factory()
    called = wrap(layer) if wrap else layer
    is_array = lambda x: isinstance(x, np.ndarray | tf.Tensor)  # noqa: E731
    tensor_kwargs = {k: v for k, v in call_kwargs.items() if is_array(v)}
    symbolic_inputs = keras.tree.map_structure(_symbolic, list(inputs))
    symbolic_kwargs = {k: _symbolic(v) for k, v in tensor_kwargs.items()}
    outputs = called(*symbolic_inputs, **{**call_kwargs, **symbolic_kwargs})
    model = keras.Model([*_flat(symbolic_inputs), *symbolic_kwargs.values()], outputs)
    data = [*_flat(list(inputs)), *tensor_kwargs.values()]
    expected = model(data)
    path = tmp_path / "layer_contract.keras"
    model.save(path)
    restored = keras.models.load_model(path)
    assert_same_outputs(restored(data), expected)
    found = [sub for sub in _layers_within(restored) if type(sub) is type(layer)]
    assert found, f"no {type(layer).__name__} in the reloaded model"
    assert found[0].get_config() == layer.get_config()


def check_mixed_policy(policy, factory, inputs, call_kwargs, wrap, tolerance, expect):
    with dtype_policy("float32"):
        keras.utils.set_random_seed(0)
        _, reference, reference_outputs = _built(factory, wrap, inputs, call_kwargs)
        weights = reference.get_weights()
    if expect is not None:
        expect(reference_outputs)
    with dtype_policy(policy) as forced:
        layer, called, _ = _built(factory, wrap, inputs, call_kwargs)
        called.set_weights(weights)
        assert all(v.dtype == "float32" for v in called.weights)
        flat = _flat(list(inputs))
        converted = [tf.convert_to_tensor(x) if _is_float(x) else x for x in flat]
        watched = [x for x, original in zip(converted, flat, strict=True) if _is_float(original)]
        with tf.GradientTape() as tape:
            for x in watched:
                tape.watch(x)
            outputs = _call(called, keras.tree.pack_sequence_as(list(inputs), converted),
                            call_kwargs)
            floats = [o for o in _flat(outputs) if _is_float(o)]
            loss = sum(tf.reduce_sum(tf.square(tf.cast(o, "float32"))) for o in floats)
        gradients = tape.gradient(loss, [*watched, *called.trainable_variables])
    compute_dtype = forced.compute_dtype
    for got, want in zip(_flat(outputs), _flat(reference_outputs), strict=True):
        if not _is_float(want):
            continue
        assert keras.backend.standardize_dtype(got.dtype) == compute_dtype
        got, want = as_float32(got), as_float32(want)
        assert np.isfinite(got).all(), f"non-finite output under {policy}"
        atol = tolerance(policy, want)
        np.testing.assert_allclose(got, want, atol=atol, rtol=0)
    if expect is not None:
        expect(outputs)
    assert gradients and all(g is not None for g in gradients)
    # Embedding gradients come as IndexedSlices: made dense before the check.
    gradients = [as_float32(tf.convert_to_tensor(g)) for g in gradients]
    assert all(np.isfinite(g).all() for g in gradients)
    assert any(np.any(g != 0) for g in gradients)
    # Every float input reaches the outputs (a cast that cut the graph would give zeros).
    assert all(np.any(g != 0) for g in gradients[: len(watched)])


def _pad(x, padding: Padding, extra: int, rng):
    x = np.asarray(x)
    shape = list(x.shape)
    shape[1] = extra
    if padding.value is None:
        steps = rng.normal(scale=10.0, size=shape)
    else:
        steps = np.full(shape, padding.value)
    return np.concatenate([x, steps.astype(x.dtype)], axis=1)


def check_mask(factory, inputs, call_kwargs, wrap, paddings, output_mask, extra=3):
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    _, called, outputs = _built(factory, wrap, inputs, call_kwargs)
    for padding in paddings:
        padded_inputs = list(inputs)
        padded_inputs[padding.input] = _pad(inputs[padding.input], padding, extra, rng)
        padded_kwargs = dict(call_kwargs)
        if padding.argument is not None:
            given = call_kwargs.get(padding.argument)
            shape = np.asarray(inputs[padding.input]).shape[:2]
            mask = np.ones(shape, bool) if given is None else np.asarray(given, bool)
            padded_kwargs[padding.argument] = np.concatenate(
                [mask, np.zeros((mask.shape[0], extra), bool)], axis=1)
        first, padded_first = _flat(outputs)[0], _flat(_call(called, padded_inputs,
                                                              padded_kwargs))[0]
        if padding.output_axis is not None:
            length = np.asarray(inputs[padding.input]).shape[1]
            padded_first = np.take(np.asarray(padded_first), np.arange(length),
                                   axis=padding.output_axis)
        assert_same_outputs(padded_first, first, atol=PADDING_ATOL)
    # The mask the output carries (what the next layer of a model sees).
    first_input = np.asarray(inputs[0])
    lengths = 1 + np.arange(first_input.shape[0]) % first_input.shape[1]
    first_mask = np.arange(first_input.shape[1])[None, :] < lengths[:, None]  # (batch, T)
    # Keras sets the output's mask from compute_mask only for a layer that supports masking.
    got = called.compute_mask(first_input, first_mask) if called.supports_masking else None
    want = output_mask(first_input, first_mask)
    if want is None:
        assert got is None, "the output should carry no mask"
    else:
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def _starts_random(values: np.ndarray) -> bool:
    return np.unique(values).size > 2


def assert_distinct_weights(weights) -> None:
    """No two of ``weights`` (variables) that start random hold the same values; those of at
    most two values (zero biases, Keras's LSTM bias of zeros and ones, a normalisation's scale,
    an identity) may."""
    values = [(w.path, as_float32(w)) for w in weights]
    random = [(path, v) for path, v in values if _starts_random(v)]
    for (path_a, a), (path_b, b) in itertools.combinations(random, 2):
        assert a.shape != b.shape or not np.array_equal(a, b), (
            f"{path_a} and {path_b} start with the same values: a shared initializer instance?")


def check_distinct_kernels(factory, inputs, call_kwargs, wrap):
    keras.utils.set_random_seed(0)
    _, called, _ = _built(factory, wrap, inputs, call_kwargs)
    assert_distinct_weights(called.weights)


#: The seeds the ``keras_twin`` check draws both layers with (keras.utils.set_random_seed).
TWIN_SEEDS = (0, 1, 2)

#: Standard errors a statistic of :func:`assert_same_distribution` may be off by. Two estimates
#: from the same distribution differ by more than 6 standard errors of their difference with
#: probability about 2e-9 (normal approximation), so the check means the same on every CPU and
#: TensorFlow build, whatever the random bits. A wrong scale is dozens of standard errors away
#: at n ≥ 4,000: a Glorot limit computed for (d, u) instead of Keras's fused (d, 4u) is 58 %
#: larger (d = u), an orthogonal (u, u) instead of a block of an orthogonal (u, 4u) twice as
#: large.
STANDARD_ERRORS = 6


def assert_same_distribution(name, ours, theirs):
    """The mean and the standard deviation of ``ours`` and ``theirs`` (pooled entries) agree.

    For ``n`` independent entries of standard deviation ``σ`` the sample mean has standard
    error ``σ / √n`` and the sample standard deviation ``σ √((κ − 1) / 4n)``, with ``κ`` the
    kurtosis: ``σ / √(2n)`` for a normal distribution, less for the lighter-tailed uniform
    (``κ = 1.8``), no more for an orthogonal matrix (nearly normal entries whose squares add up
    to exactly 1 along each row).
    Their differences between two independent samples have standard errors ``√2`` times those;
    we allow :data:`STANDARD_ERRORS` of them, with ``σ`` the twin's. Constant weights (``σ =
    0``) must agree exactly.
    """
    ours, theirs = (np.concatenate([np.ravel(as_float32(v)).astype("float64") for v in values])
                    for values in (ours, theirs))
    assert ours.size == theirs.size, f"{name}: {ours.size} entries, the twin's {theirs.size}"
    sigma, n = theirs.std(), theirs.size
    mean_bound = STANDARD_ERRORS * sigma * np.sqrt(2.0 / n) + 1e-7
    std_bound = STANDARD_ERRORS * sigma * np.sqrt(1.0 / n) + 1e-7
    assert abs(ours.mean() - theirs.mean()) <= mean_bound, (
        f"{name}: mean {ours.mean():.4g}, the twin's {theirs.mean():.4g} (bound {mean_bound:.2g})")
    assert abs(ours.std() - sigma) <= std_bound, (
        f"{name}: standard deviation {ours.std():.4g}, the twin's {sigma:.4g} "
        f"(bound {std_bound:.2g})")


def check_keras_twin(twin: KerasTwin):
    samples: dict[str, tuple[list, list]] = {}
    for seed in TWIN_SEEDS:
        keras.utils.set_random_seed(seed)
        ours = twin.ours()
        assert_distinct_weights(ours.weights)
        for name, (mine, theirs) in twin.pairs(ours, twin.theirs()).items():
            assert tuple(np.shape(mine)) == tuple(np.shape(theirs)), name
            samples.setdefault(name, ([], []))
            samples[name][0].append(mine)
            samples[name][1].append(theirs)
    assert samples, "the twin pairs no weights"
    for name, (mine, theirs) in samples.items():
        assert_same_distribution(name, mine, theirs)


# ---- the one entry point ---------------------------------------------------------------------


def run_layer_contract(
    layer_factory: Callable[[], keras.layers.Layer],
    inputs: Sequence[Any],
    *,
    tmp_path: Path,
    call_kwargs: Mapping[str, Any] | None = None,
    registered_name: str | None = None,
    expected_output_shape: Sequence[int | None] | None = None,
    wrap: Callable[[keras.layers.Layer], keras.layers.Layer] | None = None,
    mixed_tolerance: Callable[[str, np.ndarray], float] | None = None,
    expect: Callable[[Any], None] | None = None,
    paddings: Sequence[Padding] = (),
    output_mask: Callable[[Any, Any], Any] = no_output_mask,
    not_applicable: Mapping[str, str] | None = None,
    keras_twin: KerasTwin | None = None,
    checks: Sequence[str] = CHECKS,
) -> None:
    """Checks the layer contract (see the module doc) for the layer ``layer_factory()`` makes.

    Args:
        layer_factory: makes a new, unbuilt layer (called again for every twin and clone).
        inputs: the positional inputs of one call (NumPy arrays, or lists of them).
        tmp_path: a folder for the saved model.
        call_kwargs: further call arguments (masks as arrays, flags).
        registered_name: the name saved files know the class by, spelled out.
        expected_output_shape: the first output's shape on ``inputs``.
        wrap: for a layer that is used inside another one (a cell inside
            ``keras.layers.RNN``): makes the called object from the layer.
        mixed_tolerance: ``(policy, float32_output) -> atol`` for the mixed-policy checks.
        expect: asserts facts that must hold in every dtype policy on one call's outputs
            (e.g. exact zeros at padded positions).
        paddings: how padding is appended to the inputs for the ``mask`` check.
        output_mask: ``(first_input, first_input_mask) -> `` the mask the output must carry.
        not_applicable: check name -> why this layer cannot keep it.
        keras_twin: the Keras layer its initial weights must match in distribution.
        checks: the checks to run (all by default).
    """
    call_kwargs = dict(call_kwargs or {})
    not_applicable = dict(not_applicable or {})
    unknown = set(checks) - set(CHECKS)
    assert not unknown, f"unknown checks {unknown}"
    for check in checks:
        if check in not_applicable:
            raise ValueError(f"{check} is marked not applicable: {not_applicable[check]}")
        if check == "config":
            check_config(layer_factory, inputs, call_kwargs, wrap, expected_output_shape)
        elif check == "registered_name":
            check_registered_name(layer_factory, registered_name)
        elif check == "save_load":
            check_save_load(layer_factory, inputs, call_kwargs, wrap, tmp_path)
        elif check in MIXED_POLICIES:
            assert mixed_tolerance is not None, "a mixed-policy check needs a justified tolerance"
            check_mixed_policy(check, layer_factory, inputs, call_kwargs, wrap, mixed_tolerance,
                               expect)
        elif check == "mask":
            assert paddings, "a mask check needs at least one Padding"
            check_mask(layer_factory, inputs, call_kwargs, wrap, paddings, output_mask)
        elif check == "distinct_kernels":
            check_distinct_kernels(layer_factory, inputs, call_kwargs, wrap)
        elif check == "keras_twin":
            assert keras_twin is not None, "a keras_twin check needs the twin"
            check_keras_twin(keras_twin)
