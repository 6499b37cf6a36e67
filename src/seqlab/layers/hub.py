"""``HubTextEmbedding``: a TF-Hub text-embedding SavedModel as a native Keras 3 layer.

``tensorflow_hub.KerasLayer`` is a tf_keras (Keras 2) layer: Keras 3 refuses it ("Only
instances of `keras.Layer` can be added to a Sequential model"). Keras 3's own
``keras.layers.TFSMLayer`` wraps a SavedModel, but copies its variables, so fine-tuning trains
copies the module never reads (and, in Keras 3.15, fails first with
"'Variable:0_momentum' is not a valid scope name"). This layer tracks the module's own
variables as its Keras weights, so ``summary()`` counts them, ``trainable`` freezes and
unfreezes them, the optimizer updates what the module computes with, and
``model.save`` / ``load_weights`` store them.
"""

from __future__ import annotations

import contextlib
import warnings
from pathlib import Path
from urllib.parse import urlparse

import keras
import tensorflow as tf

#: The case study's pretrained sentence embedding: 50 numbers per review, 48,190,600 weights.
NNLM_EN_DIM50 = "https://tfhub.dev/google/nnlm-en-dim50/2"

#: The handle of the project's offline stand-in for nnlm-en-dim50. It resolves on any machine to
#: the module :func:`seqlab.data.standin.build_standin_text_embedding` builds (on first use)
#: from the sample reviews. The builder is data code: this module imports it only when the
#: handle is used, so ``import seqlab.layers`` does not load ``seqlab.data``.
STANDIN_HANDLE = "seqlab:standin-text-embedding"

#: Hosts and path prefixes whose modules safe mode loads: Google's own TF-Hub / Kaggle models.
TRUSTED_PUBLISHERS = (
    ("tfhub.dev", "/google/"),
    ("www.kaggle.com", "/models/google/"),
    ("kaggle.com", "/models/google/"),
)

STANDIN_ADVICE = (
    "To work offline, use FAST mode (environment variable SEQLAB_FAST=1, or FAST = True in "
    f"the notebook's parameters cell): it uses HubTextEmbedding({STANDIN_HANDLE!r}), a small "
    "stand-in module this project builds locally from its sample reviews."
)


def is_trusted_handle(handle: str) -> bool:
    """True for the stand-in and for modules published by Google on tfhub.dev or Kaggle.

    These are the handles :meth:`HubTextEmbedding.from_config` loads in safe mode.
    """
    if handle == STANDIN_HANDLE:
        return True
    from seqlab.data.standin import standin_path

    parsed = urlparse(handle)
    if parsed.scheme in ("http", "https"):
        segments = parsed.path.split("/")
        return (parsed.scheme == "https" and ".." not in segments
                and any(parsed.netloc == host and parsed.path.startswith(prefix)
                        for host, prefix in TRUSTED_PUBLISHERS))
    try:
        return Path(handle).expanduser().resolve() == standin_path().resolve()
    except (OSError, RuntimeError):
        return False


#: The pip command that makes ``tensorflow_hub`` 0.16 importable: it imports ``pkg_resources``,
#: which setuptools 82 removed (tensorflow/hub#934) and which a fresh Python >= 3.12 venv lacks.
HUB_FIX = 'pip install "setuptools<82"'
#: The warning setuptools 67-81 gives when ``tensorflow_hub`` imports ``pkg_resources``
#: (a ``UserWarning`` from setuptools 80, a ``DeprecationWarning`` before).
_PKG_RESOURCES_WARNING = r"pkg_resources is deprecated as an API"


def import_tensorflow_hub():
    """``tensorflow_hub``, imported quietly, or one :class:`seqlab.data.download.BrokenInstallError`.

    Imported only when a URL handle is used: it imports tf_keras, which FAST mode never needs.
    Its ``from pkg_resources import parse_version`` prints setuptools' deprecation warning
    (setuptools 67-81) on every full-mode run; that one warning is silenced here, nothing else.
    Where ``pkg_resources`` is missing (setuptools >= 82, or none at all), the error names
    :data:`HUB_FIX`.
    """
    try:
        with warnings.catch_warnings():
            for category in (UserWarning, DeprecationWarning):
                warnings.filterwarnings("ignore", message=_PKG_RESOURCES_WARNING,
                                        category=category)
            import tensorflow_hub
    except ImportError as error:
        from seqlab.data.download import BrokenInstallError

        if "pkg_resources" in (error.name or "") or "pkg_resources" in str(error):
            problem = ("it imports pkg_resources, which this environment lacks (setuptools "
                       "82 removed it; a fresh Python >= 3.12 venv has no setuptools at all)")
            fix = HUB_FIX
        elif (error.name or "").split(".")[0] == "tf_keras":
            # tensorflow_hub needs tf_keras (Keras 2), whose release must match TensorFlow's.
            problem = "it imports tf_keras, which is missing"
            fix = f'pip install "tf-keras~={".".join(tf.__version__.split(".")[:2])}.0"'
        else:
            problem = f"importing it failed ({type(error).__name__}: {error})"
            fix = 'pip install "tensorflow-hub>=0.16.1" "setuptools<82"'
        raise BrokenInstallError("tensorflow_hub", problem, fix) from error
    return tensorflow_hub


def resolve_handle(handle: str) -> str:
    """The local SavedModel folder for a handle: the stand-in, a URL (downloaded), or a path.

    Raises:
        seqlab.data.DownloadError: a URL module could not be downloaded (with FAST-mode advice).
        seqlab.data.download.BrokenInstallError: ``tensorflow_hub`` cannot be imported here
            (names the pip command that fixes it, see :func:`import_tensorflow_hub`).
        FileNotFoundError: a local path holds no SavedModel.
    """
    if handle == STANDIN_HANDLE:
        from seqlab.data.standin import build_standin_text_embedding

        return str(build_standin_text_embedding())
    if urlparse(handle).scheme in ("http", "https"):
        tensorflow_hub = import_tensorflow_hub()
        try:
            return tensorflow_hub.resolve(handle)
        except (OSError, tf.errors.OpError) as error:
            from seqlab.data.download import DownloadError

            raise DownloadError(f"the TF-Hub module {handle}", error, STANDIN_ADVICE) from error
    path = Path(handle).expanduser()
    if not (path / "saved_model.pb").is_file():
        raise FileNotFoundError(
            f"No SavedModel at {path} (expected {path / 'saved_model.pb'}). Pass a TF-Hub URL "
            f"such as {NNLM_EN_DIM50!r}, the stand-in handle {STANDIN_HANDLE!r}, or the folder "
            "of a TF2 SavedModel."
        )
    return str(path)


def _safe_variable_name(variable: tf.Variable) -> str:
    # Keras variable names may not contain "/", and optimizers build slot names from them,
    # so "embeddings/part_0:0" must become "embeddings_part_0".
    name = variable.name.removesuffix(":0")
    return name.replace("/", "_").replace(":", "_")


class _ModuleVariable(keras.Variable):
    """A Keras variable whose storage *is* an existing ``tf.Variable`` of the module (no copy).

    Keras creates a fresh ``tf.Variable`` from any initial value it is given (that is why
    ``TFSMLayer``'s weights are copies); here the backend's initialisation hook is overridden
    to adopt the module's variable instead, so reads, gradients, optimizer updates,
    ``assign`` and ``load_weights`` all act on the variable the module computes with.

    This is the project's one use of private Keras API (the ``_initialize`` hook and
    ``_value``; documented in tests/test_public_api.py): Keras has no public way to wrap a
    variable without copying it, and without it the embedding cannot be fine-tuned at all.
    :func:`share_module_variables` checks that the hook worked; where a Keras release changes
    it, :class:`HubTextEmbedding` falls back to public API only (frozen use).
    """

    def __init__(self, variable: tf.Variable, *, trainable: bool):
        self._module_variable = variable
        super().__init__(initializer=_never_called, shape=tuple(variable.shape),
                         dtype=variable.dtype.name, trainable=trainable,
                         name=_safe_variable_name(variable))

    def _initialize(self, value):
        del value  # nothing to copy: adopt the module's variable
        self._value = self._module_variable


def _never_called(shape, dtype=None):
    return None


def _no_sharing_message() -> str:
    from seqlab import config

    return _NO_SHARING.format(version=keras.__version__, floor=config.TESTED_FLOOR["keras"],
                              newest=config.TESTED_NEWEST["keras"])


def share_module_variables(module, trainable_ids=frozenset()) -> list | None:
    """Keras variables that share the module's storage, or ``None`` where this Keras lacks the
    initialisation hook :class:`_ModuleVariable` relies on (checked, not assumed)."""
    variables = list(module.variables)
    try:
        weights = [_ModuleVariable(v, trainable=id(v) in trainable_ids) for v in variables]
    except (TypeError, ValueError, AttributeError, NotImplementedError):
        return None
    if any(w.value is not v for w, v in zip(weights, variables, strict=True)):
        return None
    return weights


_NO_SHARING = (
    "This Keras ({version}) no longer lets HubTextEmbedding share the TF-Hub module's "
    "variables (it relies on keras.Variable's initialisation hook, the project's one use of "
    "private Keras API), so the module can be used frozen but not fine-tuned. Use Keras "
    "{floor} to {newest}.x (the tested range) to fine-tune it."
)


@keras.saving.register_keras_serializable(package="seqlab")
class HubTextEmbedding(keras.layers.Layer):
    """A TF-Hub text-embedding module (nnlm-en-dim50 or the stand-in) as a Keras 3 layer.

    Computes ``module(strings)``: for nnlm-en-dim50, each review becomes the "sqrtn"
    combination of its tokens' 50-dimensional vectors,
    :math:`e(s) = \\frac{1}{\\sqrt{n}} \\sum_{i=1}^{n} E[t_i]`, where the tokens are the text
    split on spaces, case and punctuation kept (the module's card: "The module preprocesses its
    input by splitting on spaces"), and unknown tokens share hash buckets.

    Args:
        handle: a TF-Hub URL (default :data:`NNLM_EN_DIM50`, downloaded and cached by
            ``tensorflow_hub`` on first use), the stand-in handle
            ``"seqlab:standin-text-embedding"`` (built locally from the sample reviews, see
            :mod:`seqlab.data.standin`), or the folder of a TF2 SavedModel whose
            ``__call__`` maps a 1-D string tensor to ``(batch, dim)`` floats.
        trainable: whether fitting may change the module's weights. ``False`` (the default)
            freezes them, as in the case study's first stage; set ``layer.trainable = True``
            and recompile to fine-tune.

    Input: a batch of strings, shape ``(batch,)`` and dtype ``string`` (in a model,
    ``keras.Input(shape=(), dtype="string")``). Empty strings embed to zeros; any UTF-8
    text is accepted. Output: ``(batch, dim)`` float32, ``dim = 50`` for nnlm-en-dim50.

    Weights: the module's own variables (for nnlm-en-dim50, one 963,812 x 50 table, 48,190,600
    parameters), shared rather than copied.

    Saving and safe mode: the config stores the handle, and the weights go into ``.keras`` and
    ``.weights.h5`` files, so ``model.save("x.keras")`` then ``keras.models.load_model`` returns
    the fine-tuned model. Loading this layer from a file means loading the SavedModel its
    handle names, which runs that SavedModel's TensorFlow graph: the kind of code Keras's safe
    mode (on by default in ``load_model``) exists to keep out of files you did not make. So
    :meth:`from_config` only accepts trusted handles (:func:`is_trusted_handle`: Google's
    modules on tfhub.dev and kaggle.com, and this project's stand-in), plus handles your own
    code vouches for with :func:`trusted_handles`, and refuses any other with a
    ``ValueError``. It does so whatever ``safe_mode`` says: Keras has no public way to ask
    which mode a load runs in, and a rule that holds in every mode needs none. The notebooks
    never depend on it: they rebuild the model in code with the handle they chose and call
    ``model.load_weights(...)``, which restores numbers only.

    Call arguments:
        inputs: ``(batch,)`` strings.

    Returns:
        ``(batch, dim)`` float32 sentence embeddings.

    Example:
        >>> embed = HubTextEmbedding(STANDIN_HANDLE)  # the offline stand-in, not nnlm-en-dim50
        >>> embed(tf.constant(["a wonderful film", ""])).shape  # "" embeds to zeros
        TensorShape([2, 50])
        >>> embed.trainable, len(embed.trainable_weights)
        (False, 0)
    """

    def __init__(self, handle: str = NNLM_EN_DIM50, trainable: bool = False, **kwargs):
        super().__init__(trainable=trainable, **kwargs)
        self.handle = str(handle)
        # XLA cannot compile the string and hash-table ops inside the module. (Keras's input
        # conversion casts floats only, so strings reach `call` untouched.)
        self.supports_jit = False
        self._module = tf.saved_model.load(resolve_handle(self.handle))
        if not callable(self._module) or getattr(self._module, "variables", None) is None:
            raise ValueError(
                f"{self.handle} is not a TF-Hub text-embedding SavedModel: it needs a "
                "__call__ on a batch of strings and a `variables` list."
            )
        trainable_ids = {id(v) for v in getattr(self._module, "trainable_variables", [])}
        # Keras tracks variables assigned to a layer attribute (in order): these become the
        # layer's weights, filed as trainable or not by the module's own flag, so that
        # `layer.trainable = True` later unfreezes exactly the module's trainable variables.
        shared = share_module_variables(self._module, trainable_ids)
        #: False where this Keras lacks the hook: then the layer holds no Keras weights (the
        #: module computes with its own), works frozen, and refuses to be unfrozen.
        self.shares_module_variables = shared is not None
        if shared is None:
            if self.trainable:
                raise RuntimeError(_no_sharing_message())
            warnings.warn(_no_sharing_message(), stacklevel=2)
        self._module_weights = shared or []
        if not self.trainable:
            for weight in self._module_weights:
                weight.trainable = False
        self.output_dim = self._find_output_dim()
        self.built = True

    def _find_output_dim(self) -> int:
        # Tracing, not running: under a tf.distribute strategy's scope the module's mirrored
        # variables cannot be read outside a replica.
        signature = tf.TensorSpec([None], tf.string)
        output = self._module.__call__.get_concrete_function(signature).structured_outputs
        shape = getattr(output, "shape", None)
        if shape is None or shape.rank not in (2, None):
            raise ValueError(f"{self.handle} maps a batch of strings to {output!r}; a text "
                             "embedding must return one tensor of shape (batch, dim).")
        if shape.rank == 2 and shape[-1] is not None:
            return int(shape[-1])
        return int(self._module(tf.constant([""])).shape[-1])  # size known only when run

    @property
    def trainable(self):
        return keras.layers.Layer.trainable.fget(self)

    @trainable.setter
    def trainable(self, value):
        if value and not getattr(self, "shares_module_variables", True):
            raise RuntimeError(_no_sharing_message())
        keras.layers.Layer.trainable.fset(self, value)

    @property
    def module(self):
        """The loaded SavedModel object (call it on a 1-D string tensor)."""
        return self._module

    def _check_input(self, dtype, shape) -> None:
        rank = None if shape is None else len(shape)
        if keras.backend.standardize_dtype(dtype) != "string" or rank not in (1, None):
            raise ValueError(
                f"{type(self).__name__} expects a batch of strings: a string tensor of shape "
                "(batch,), e.g. keras.Input(shape=(), dtype=\"string\") in a model or "
                "tf.constant([\"a review\", \"another review\"]) when calling it; got dtype "
                f"{keras.backend.standardize_dtype(dtype)} and shape {tuple(shape) if shape is not None else None}."
            )

    def compute_output_spec(self, inputs):
        self._check_input(inputs.dtype, inputs.shape)
        return keras.KerasTensor((inputs.shape[0], self.output_dim), dtype="float32")

    def call(self, inputs):
        if not isinstance(inputs, (tf.Tensor, tf.Variable)):
            inputs = tf.convert_to_tensor(inputs)
        shape = None if inputs.shape.rank is None else inputs.shape.as_list()
        self._check_input(inputs.dtype, shape)
        return self._module(inputs)

    def get_config(self):
        return {**super().get_config(), "handle": self.handle}

    @classmethod
    def from_config(cls, config):
        """Rebuild from a config, refusing untrusted handles (see the class doc)."""
        handle = config.get("handle", NNLM_EN_DIM50)
        if not (is_trusted_handle(handle) or _vouched_for(handle)):
            raise ValueError(
                f"Refusing to load HubTextEmbedding(handle={handle!r}) from a saved file: "
                "loading a SavedModel runs its TensorFlow graph, so (like Keras's safe mode) "
                "only Google's TF-Hub modules and this project's stand-in load from files. "
                "Rebuild the model in code with the handle you trust and restore the numbers "
                "with model.load_weights('....weights.h5'). Only if you made this file "
                "yourself: with seqlab.layers.trusted_handles(handle): "
                "keras.models.load_model(path)."
            )
        return cls(**config)


#: Handles that code vouches for while a :func:`trusted_handles` block runs.
_vouched: list[str] = []


@contextlib.contextmanager
def trusted_handles(*handles: str):
    """Let :meth:`HubTextEmbedding.from_config` load these handles while the block runs.

    For files you made yourself, whose module is neither Google's nor the stand-in::

        with seqlab.layers.trusted_handles("/my/module"):
            model = keras.models.load_model("mine.keras")

    The trust lives in your code, never in the file being loaded.
    """
    added = [str(handle) for handle in handles]
    _vouched.extend(added)
    try:
        yield
    finally:
        for handle in added:
            _vouched.remove(handle)


def _vouched_for(handle: str) -> bool:
    if handle in _vouched:
        return True
    if urlparse(handle).scheme:
        return False
    try:
        target = Path(handle).expanduser().resolve()
        return any(not urlparse(v).scheme and Path(v).expanduser().resolve() == target
                   for v in _vouched)
    except (OSError, RuntimeError):
        return False
