"""``HubTextEmbedding``: a TF-Hub text-embedding SavedModel as a native Keras 3 layer.

Unlike ``keras.layers.TFSMLayer``, which copies a SavedModel's variables (so fine-tuning would
train copies the module never reads), this layer's weights are the module's own variables.
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
#: The project's offline stand-in for nnlm-en-dim50, built on first use by
#: :func:`seqlab.data.standin.build_standin_text_embedding`.
STANDIN_HANDLE = "seqlab:standin-text-embedding"
#: Hosts and path prefixes whose modules safe mode loads: Google's own TF-Hub / Kaggle models.
TRUSTED_PUBLISHERS = (("tfhub.dev", "/google/"), ("www.kaggle.com", "/models/google/"),
                      ("kaggle.com", "/models/google/"))

STANDIN_ADVICE = (
    "To work offline, use FAST mode (environment variable SEQLAB_FAST=1, or FAST = True in "
    f"the notebook's parameters cell): it uses HubTextEmbedding({STANDIN_HANDLE!r}), a small "
    "stand-in module this project builds locally from its sample reviews.")


def _local_path(handle: str) -> Path | None:
    """The resolved folder a handle names, or None for a URL or a path that does not resolve."""
    if urlparse(handle).scheme:
        return None
    try:
        return Path(handle).expanduser().resolve()
    except (OSError, RuntimeError):
        return None


def is_trusted_handle(handle: str) -> bool:
    """True for the stand-in and for modules published by Google on tfhub.dev or Kaggle: the
    handles :meth:`HubTextEmbedding.from_config` loads in safe mode."""
    if handle == STANDIN_HANDLE:
        return True
    from seqlab.data.standin import standin_path

    parsed = urlparse(handle)
    if parsed.scheme in ("http", "https"):
        return (parsed.scheme == "https" and ".." not in parsed.path.split("/")
                and any(parsed.netloc == host and parsed.path.startswith(prefix)
                        for host, prefix in TRUSTED_PUBLISHERS))
    path = _local_path(handle)
    return path is not None and path == standin_path().resolve()


def import_tensorflow_hub():
    """``tensorflow_hub`` without setuptools' ``pkg_resources`` warning, or one
    :class:`seqlab.data.download.BrokenInstallError` naming the pip command that fixes it."""
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="pkg_resources is deprecated as an API")
            import tensorflow_hub
    except ImportError as error:
        from seqlab.data.download import BrokenInstallError

        if "pkg_resources" in (error.name or "") or "pkg_resources" in str(error):
            problem = ("it imports pkg_resources, which this environment lacks (setuptools "
                       "82 removed it; a fresh Python >= 3.12 venv has no setuptools at all)")
            fix = 'pip install "setuptools<82"'
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
        seqlab.data.DownloadError: a URL module could not be downloaded.
        seqlab.data.download.BrokenInstallError: ``tensorflow_hub`` cannot be imported.
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
            "of a TF2 SavedModel.")
    return str(path)


class _ModuleVariable(keras.Variable):
    """A Keras variable whose storage *is* the module's ``tf.Variable`` (no copy).

    The project's one use of private Keras API (``_initialize``, ``_value``; see
    tests/test_public_api.py): Keras has no public way to wrap a variable without copying it.
    """

    def __init__(self, variable: tf.Variable, *, trainable: bool):
        self._module_variable = variable
        # Keras variable names may not contain "/" or ":" ("embeddings/part_0:0").
        name = variable.name.removesuffix(":0").replace("/", "_").replace(":", "_")
        super().__init__(initializer=lambda shape, dtype=None: None, shape=tuple(variable.shape),
                         dtype=variable.dtype.name, trainable=trainable, name=name)

    def _initialize(self, value):
        del value  # nothing to copy: adopt the module's variable
        self._value = self._module_variable


def _no_sharing_message() -> str:
    from seqlab import config

    return (
        f"This Keras ({keras.__version__}) no longer lets HubTextEmbedding share the TF-Hub "
        "module's variables (it relies on keras.Variable's initialisation hook), so the module "
        "can be used frozen but not fine-tuned. Use Keras "
        f"{config.TESTED_FLOOR['keras']} to {config.TESTED_NEWEST['keras']}.x to fine-tune it.")


def share_module_variables(module, trainable_ids=frozenset()) -> list | None:
    """Keras variables that share the module's storage, or ``None`` where this Keras lacks the
    initialisation hook :class:`_ModuleVariable` relies on (checked, not assumed)."""
    variables = list(module.variables)
    try:
        weights = [_ModuleVariable(v, trainable=id(v) in trainable_ids) for v in variables]
    except (TypeError, ValueError, AttributeError, NotImplementedError):
        return None
    shared = all(w.value is v for w, v in zip(weights, variables, strict=True))
    return weights if shared else None


@keras.saving.register_keras_serializable(package="seqlab")
class HubTextEmbedding(keras.layers.Layer):
    """A TF-Hub text-embedding module (nnlm-en-dim50 or the stand-in) as a Keras 3 layer.

    Computes ``module(strings)``: for nnlm-en-dim50, the "sqrtn" combination of the review's
    tokens' 50-dimensional vectors, :math:`e(s) = \\frac{1}{\\sqrt{n}} \\sum_{i=1}^{n} E[t_i]`
    (tokens split on spaces; empty strings embed to zeros).

    Args:
        handle: a TF-Hub URL (default :data:`NNLM_EN_DIM50`), :data:`STANDIN_HANDLE`, or the
            folder of a TF2 SavedModel mapping a 1-D string tensor to ``(batch, dim)`` floats.
        trainable: whether fitting may change the module's weights (default ``False``); set
            ``layer.trainable = True`` and recompile to fine-tune.

    Loading from a file runs the SavedModel's graph, so :meth:`from_config` refuses any handle
    that is not trusted (:func:`is_trusted_handle`) or vouched for (:func:`trusted_handles`),
    whatever ``safe_mode`` says: Keras has no public way to ask which mode a load runs in.

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
        self.supports_jit = False  # XLA cannot compile the module's string and hash-table ops
        self._module = tf.saved_model.load(resolve_handle(self.handle))
        if not callable(self._module) or getattr(self._module, "variables", None) is None:
            raise ValueError(f"{self.handle} is not a TF-Hub text-embedding SavedModel: it needs "
                             "a __call__ on a batch of strings and a `variables` list.")
        trainable_ids = {id(v) for v in getattr(self._module, "trainable_variables", [])}
        # The module's variables become the layer's weights, trainable by the module's own flag.
        shared = share_module_variables(self._module, trainable_ids)
        self.shares_module_variables = shared is not None  # False: frozen use only
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
        # Traced, not run: a strategy's mirrored variables cannot be read outside a replica.
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
        dtype = keras.backend.standardize_dtype(dtype)
        if dtype != "string" or (shape is not None and len(shape) != 1):
            raise ValueError(
                f"{type(self).__name__} expects a batch of strings: a string tensor of shape "
                "(batch,), e.g. keras.Input(shape=(), dtype=\"string\") in a model or "
                "tf.constant([\"a review\", \"another review\"]) when calling it; got dtype "
                f"{dtype} and shape {None if shape is None else tuple(shape)}.")

    def compute_output_spec(self, inputs):
        self._check_input(inputs.dtype, inputs.shape)
        return keras.KerasTensor((inputs.shape[0], self.output_dim), dtype="float32")

    def call(self, inputs):
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
                "with model.load_weights('....weights.h5'). Only if you made this file yourself: "
                "with seqlab.layers.trusted_handles(handle): keras.models.load_model(path).")
        return cls(**config)


#: Handles that code vouches for while a :func:`trusted_handles` block runs.
_vouched: list[str] = []


@contextlib.contextmanager
def trusted_handles(*handles: str):
    """Let :meth:`HubTextEmbedding.from_config` load these handles while the block runs, for
    files you made yourself: ``with trusted_handles("/my/module"): load_model(...)``."""
    added = [str(handle) for handle in handles]
    _vouched.extend(added)
    try:
        yield
    finally:
        for handle in added:
            _vouched.remove(handle)


def _vouched_for(handle: str) -> bool:
    path = _local_path(handle)
    return handle in _vouched or (path is not None and path in map(_local_path, _vouched))
