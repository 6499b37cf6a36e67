"""The ``Example:`` sections of every module in ``seqlab.layers`` and ``seqlab.models`` run and
print what they say (``doctest``), so a docstring example cannot silently go stale."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import keras
import pytest

import seqlab.layers
import seqlab.models

MODULES = sorted(
    info.name
    for package in (seqlab.layers, seqlab.models)
    for info in pkgutil.iter_modules(package.__path__, package.__name__ + ".")
)
OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def test_every_module_is_collected():
    assert {"seqlab.layers.attention", "seqlab.layers.masking", "seqlab.models.word2vec"} <= set(
        MODULES)


@pytest.fixture(scope="module", autouse=True)
def _standin_built():
    """The stand-in module prints one line when it is first built, which no example expects: a
    clean clone builds it here, before any example runs."""
    from seqlab.layers import STANDIN_HANDLE, HubTextEmbedding

    HubTextEmbedding(STANDIN_HANDLE)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_pass(name):
    module = importlib.import_module(name)
    examples = sum(len(test.examples) for test in doctest.DocTestFinder().find(module))
    if not examples:
        pytest.skip(f"{name} has no docstring examples")
    keras.utils.set_random_seed(0)
    policy = keras.config.dtype_policy()
    try:
        # report=False: the failures are printed (and shown by pytest) instead of summarised.
        result = doctest.testmod(module, optionflags=OPTIONS, report=False)
    finally:
        keras.config.set_dtype_policy(policy)
    assert result.attempted == examples > 0
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed"
