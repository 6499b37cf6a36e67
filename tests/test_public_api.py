"""No private Keras or TensorFlow API anywhere in the project (issue 9.4).

Students run these notebooks on whatever Keras/TensorFlow their Colab has (README "Tested
versions"); a private name can change in any release. The scan reads every Python file and
notebook code cell under ``src/``, ``tests/``, ``notebooks/``, ``assignments/`` and
``benchmarks/`` as Python tokens (comments and strings do not count, so prose may name what not
to do) and reports:

1. ``keras.src`` / ``tensorflow.python`` / ``tf.python`` (the private packages);
2. ``<x>._name`` for any receiver, ``self`` included, where ``_name`` is a private member of a
   Keras or TensorFlow base class seqlab builds on (read from the installed Keras at test time:
   ``Layer``, ``Model``, ``Optimizer``, ``Variable``, ...), or of a built Keras object the
   package works with (``MultiHeadAttention``'s ``_query_dense``, a compiled model's
   ``_compile_loss``, an optimizer's ``_momentums``): overriding or reading those is private
   API even from a subclass;
3. ``<x>._name`` on any receiver other than ``self``/``cls`` where ``_name`` is not defined
   anywhere in the scanned code (``def _name``, ``class _Name``, ``_name = ...``,
   ``self._name = ...``): a private name nobody here defines belongs to a library;
4. ``getattr``/``hasattr``/``setattr`` with such a name as a string.

Our own private names (``self._cache``, ``module._helper`` defined in seqlab) pass.
"""

from __future__ import annotations

import io
import json
import re
import tokenize
from functools import cache
from pathlib import Path

import pytest

from seqlab import config

FOLDERS = ("src", "tests", "notebooks", "assignments", "benchmarks")
PRIVATE_PACKAGES = {("keras", "src"), ("tensorflow", "python"), ("tf", "python")}
PRIVATE = re.compile(r"^_[A-Za-z0-9]\w*$")  # one leading underscore, not a dunder
#: Underscore names that are documented public API (``collections.namedtuple``'s methods).
PUBLIC_UNDERSCORE = {"_asdict", "_replace", "_fields", "_make", "_field_defaults"}
THIS_FILE = Path(__file__).resolve()

#: The one isolated, documented exception: ``seqlab.layers.hub._ModuleVariable`` makes a Keras
#: variable whose storage *is* the SavedModel's own ``tf.Variable``, by overriding
#: ``keras.Variable``'s initialisation hook (``_initialize``) and setting its ``_value``. Keras
#: has no public way to wrap an existing variable without copying it (``keras.layers.TFSMLayer``
#: copies, so ``fit`` would train copies the module never reads). What it buys: fine-tuning the
#: TF-Hub embedding works at all (tests/test_layers_hub.py checks that ``fit`` changes the module's own
#: values; notebook 02 depends on it). ``{(file, private name)}``.
ISOLATED_EXCEPTIONS = {("src/seqlab/layers/hub.py", "_value")}


# --------------------------------------------------------------------------------------------
# The scanner
# --------------------------------------------------------------------------------------------


def _tokens(source: str) -> list[tokenize.TokenInfo]:
    """Python tokens without comments; IPython lines (``!pip``, ``%time``) are blanked first."""
    lines = [("" if line.lstrip().startswith(("!", "%")) else line)
             for line in source.splitlines()]
    text = "\n".join(lines) + "\n"
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return []
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
    return [t for t in tokens if t.type not in skip]


def defined_private_names(sources: list[str]) -> set[str]:
    """Private names the scanned code defines itself."""
    names: set[str] = set()
    for source in sources:
        tokens = _tokens(source)
        for i, token in enumerate(tokens):
            if token.type != tokenize.NAME or not PRIVATE.match(token.string):
                continue
            before = tokens[i - 1].string if i else ""
            after = tokens[i + 1].string if i + 1 < len(tokens) else ""
            owner = tokens[i - 2].string if i >= 2 else ""
            if before in ("def", "class", "as", "import") or (
                before == "." and owner in ("self", "cls") and after in ("=", ":")
            ) or (before != "." and after in ("=", ":", ",") and token.start[1] == 0):
                names.add(token.string)
            elif before in ("(", ",") and after == "=":  # a private keyword of our own function
                names.add(token.string)
    return names


def scan_source(source: str, *, library_private: set[str], ours: set[str]) -> list[str]:
    """Every private Keras/TensorFlow access in ``source``, as ``"line N: what"``."""
    tokens = _tokens(source)
    hits = []
    for i, token in enumerate(tokens):
        line = token.start[0]
        if token.type == tokenize.NAME and i + 2 < len(tokens) and tokens[i + 1].string == ".":
            if (token.string, tokens[i + 2].string) in PRIVATE_PACKAGES:
                hits.append(f"line {line}: {token.string}.{tokens[i + 2].string}")
                continue
        if token.string == "." and i + 1 < len(tokens) and i >= 1:
            name = tokens[i + 1].string
            if (tokens[i + 1].type != tokenize.NAME or not PRIVATE.match(name)
                    or name in PUBLIC_UNDERSCORE):
                continue
            receiver = tokens[i - 1].string
            if i >= 2 and tokens[i - 2].string == ".":
                receiver = "<attribute>"  # a.b._name: "b" is an attribute, not self
            if name in library_private:
                hits.append(f"line {line}: {receiver}.{name} (private in Keras/TensorFlow)")
            elif receiver not in ("self", "cls") and name not in ours:
                hits.append(f"line {line}: {receiver}.{name} (private name not defined here)")
        if (token.type == tokenize.NAME and token.string in ("getattr", "hasattr", "setattr")
                and i + 1 < len(tokens) and tokens[i + 1].string == "("):
            depth = 0
            for j in range(i + 1, len(tokens)):
                inner = tokens[j]
                depth += inner.string == "("
                depth -= inner.string == ")"
                # only a whole argument names an attribute (not the suffix in name + "_pairs")
                whole = (depth == 1 and tokens[j - 1].string == ","
                         and j + 1 < len(tokens) and tokens[j + 1].string in (",", ")"))
                if inner.type == tokenize.STRING and whole:
                    name = inner.string.strip("\"'")
                    if PRIVATE.match(name) and (name in library_private or name not in ours):
                        hits.append(f"line {line}: {token.string}(..., {inner.string})")
                if depth == 0:
                    break
    return hits


def _sources() -> dict[str, str]:
    """``{"path[:cell N]": python source}`` for every scanned file and notebook code cell."""
    sources = {}
    root = config.REPO_ROOT
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*.py")):
            if path.resolve() != THIS_FILE and ".ipynb_checkpoints" not in path.parts:
                sources[path.relative_to(root).as_posix()] = path.read_text(encoding="utf-8")
        for path in sorted((root / folder).rglob("*.ipynb")):
            if ".ipynb_checkpoints" in path.parts:
                continue
            cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
            for number, cell in enumerate(cells):
                if cell["cell_type"] == "code":
                    source = cell["source"]
                    source = "".join(source) if isinstance(source, list) else source
                    sources[f"{path.relative_to(root).as_posix()}:cell {number}"] = source
    return sources


def _private_members(obj) -> set[str]:
    names = {n for n in dir(obj) if PRIVATE.match(n)}
    names |= {n for n in getattr(obj, "__dict__", {}) if PRIVATE.match(n)}
    return names


@cache
def library_private_names() -> frozenset[str]:
    """Private members of the Keras/TensorFlow classes and objects seqlab builds on."""
    import keras
    import numpy as np
    import tensorflow as tf

    classes = [
        keras.layers.Layer, keras.Model, keras.Sequential, keras.Variable, keras.Operation,
        keras.optimizers.Optimizer, keras.optimizers.Adam, keras.losses.Loss,
        keras.metrics.Metric, keras.callbacks.Callback,
        keras.optimizers.schedules.LearningRateSchedule, keras.layers.RNN,
        keras.layers.MultiHeadAttention, keras.layers.TextVectorization, tf.Module, tf.Variable,
    ]
    names: set[str] = set()
    for cls in classes:
        names |= _private_members(cls)
    # Attributes Keras sets on instances (not visible on the classes).
    attention = keras.layers.MultiHeadAttention(num_heads=2, key_dim=4)
    x = np.zeros((1, 3, 8), "float32")
    attention(x, x)
    inputs = keras.Input((3,))
    model = keras.Model(inputs, keras.layers.Dense(2)(inputs))
    model.compile(keras.optimizers.Adam(), loss="mse", metrics=["mae"])
    model.fit(np.zeros((2, 3)), np.zeros((2, 2)), verbose=0)
    for obj in (attention, model, model.optimizer, model.layers[-1], model.layers[-1].kernel,
                keras.layers.LSTM(2), keras.losses.MeanSquaredError()):
        names |= _private_members(obj)
    return frozenset(names)


# --------------------------------------------------------------------------------------------
# The scanner can fail: a known-bad snippet is caught, a known-good one is not.
# --------------------------------------------------------------------------------------------

BAD = '''
from keras.src.saving.serialization_lib import in_safe_mode
import tensorflow.python.ops
model._compile_loss(y, y_pred)
for sublayer in layer._flatten_layers():
    pass
m = optimizer._momentums[0]
w = mha._query_dense.kernel
self._track_variable(v)
q = getattr(mha, "_query_dense")
x = tf.python.framework
'''

GOOD = '''
"""Docstrings may say keras.src or layer._query_dense: strings are not code."""
# so may comments: model._compile_loss
class Mine(keras.layers.Layer):
    def __init__(self):
        self._cache = {}

    def call(self, x):
        self._cache.clear()
        y = self.attention.query_dense(x)
        return helpers._local_rule(y), x.__class__, self._helper()

    def _helper(self):
        return getattr(self, "_cache"), getattr(self, kind + "_rows")
'''


def test_the_scanner_catches_each_kind_of_private_access():
    library = library_private_names()
    assert {"_compile_loss", "_flatten_layers", "_momentums", "_query_dense",
            "_track_variable"} <= library
    ours = defined_private_names([GOOD]) | {"_local_rule"}
    hits = scan_source(BAD, library_private=set(library), ours=ours)
    for expected in ("line 2: keras.src", "line 3: tensorflow.python", "line 4: model._compile_loss",
                     "line 5: layer._flatten_layers", "line 7: optimizer._momentums",
                     "line 8: mha._query_dense", "line 9: self._track_variable",
                     "line 10: getattr", "line 11: tf.python"):
        assert any(hit.startswith(expected) for hit in hits), (expected, hits)
    assert scan_source(GOOD, library_private=set(library), ours=ours) == []


def test_a_private_name_nobody_here_defines_is_flagged_on_any_receiver():
    hits = scan_source("result = thing._secret()\n", library_private=set(), ours=set())
    assert hits == ["line 1: thing._secret (private name not defined here)"]
    assert scan_source("result = thing._secret()\n", library_private=set(),
                       ours={"_secret"}) == []


# --------------------------------------------------------------------------------------------
# The project
# --------------------------------------------------------------------------------------------


def test_no_private_keras_or_tensorflow_api_in_the_project():
    sources = _sources()
    assert any(key.startswith("src/seqlab/") for key in sources)
    assert any(key.startswith("notebooks/") for key in sources)
    ours = defined_private_names(list(sources.values()))
    library = set(library_private_names())
    hits = [f"{where}: {hit}" for where, source in sources.items()
            for hit in scan_source(source, library_private=library, ours=ours)
            if not any(where == path and f".{name} " in hit
                       for path, name in ISOLATED_EXCEPTIONS)]
    if hits:
        pytest.fail("Private Keras/TensorFlow API (use the public API; README 'Tested "
                    "versions'):\n" + "\n".join(hits))
