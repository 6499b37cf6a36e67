"""BERT with keras-hub, for notebook 08: pre-train by masked language modelling, then fine-tune.

The same keras-hub classes serve both of the notebook's modes, so "train it yourself" and
"download it" are one switch:

    # FAST: a tiny BERT from scratch, on a WordPiece vocabulary learned from our own reviews
    masked_lm = masked_lm_from_scratch(vocabulary, sequence_length=64)
    # full: the published weights (bert_tiny_en_uncased: 4.4 M parameters, from Kaggle)
    masked_lm = masked_lm_from_preset("bert_tiny_en_uncased", sequence_length=256)

    masked_lm.fit(texts)                           # MLM: 15 % of tokens chosen, 80/10/10
    fill_masks(masked_lm, ["the plot is [MASK] ."])

Both are ``keras_hub.models.BertMaskedLM`` (a ``BertBackbone`` — embeddings and a stack of
``keras_hub.layers.TransformerEncoder`` — plus the MLM head) with a
``BertMaskedLMPreprocessor`` (the ``BertTokenizer`` and the 15 % / 80-10-10 masking). The
classification head on the ``[CLS]`` position's pooled output is assembled in notebook 08
itself (and shown equal there to ``keras_hub.models.BertTextClassifier``, the class
``benchmarks/bert.py`` times); :func:`untrained_copy` gives its from-scratch control.

keras-hub is imported inside the functions (:func:`seqlab.data.wordpiece.import_keras_hub`),
so ``import seqlab.models`` and notebooks 01-07 never need it.
"""

from __future__ import annotations

import math
import socket
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from seqlab.data.download import DownloadError
from seqlab.data.wordpiece import import_keras_hub

#: The preset notebook 08 loads in full mode: 2 layers, 128 wide, 4.4 M parameters.
DEFAULT_PRESET = "bert_tiny_en_uncased"
#: Where keras-hub's built-in presets (``kaggle://keras/bert/...``) download from.
KAGGLE_HOST = "www.kaggle.com"
HUGGING_FACE_HOST = "huggingface.co"
#: The slides' sizes (BERT-Base, GPT-1), for the notebook's comparison.
SLIDE_PARAMETER_COUNTS = {"BERT-Base": 110_000_000, "GPT": 117_000_000}
MASK_TOKEN = "[MASK]"

PRESET_ADVICE = (
    "To work offline, use FAST mode: set SEQLAB_FAST=1 (or FAST = True in the notebook's "
    "parameters cell), which pre-trains a tiny BERT on the project's own reviews instead of "
    "downloading one; or pass PRESET = a local preset directory (keras-hub's save_to_preset)."
)


def masked_lm_from_scratch(vocabulary: Sequence[str], *, sequence_length: int = 64,
                           hidden_dim: int = 64, num_layers: int = 2, num_heads: int = 2,
                           intermediate_dim: int = 128, dropout: float = 0.1,
                           mask_selection_rate: float = 0.15, mask_token_rate: float = 0.8,
                           random_token_rate: float = 0.1):
    """A randomly initialised ``keras_hub.models.BertMaskedLM`` with its preprocessor.

    Args:
        vocabulary: WordPiece tokens, ``[PAD]`` first
            (:func:`seqlab.data.wordpiece.build_wordpiece_vocabulary`).
        sequence_length: tokens per example, ``[CLS]`` and ``[SEP]`` included (longer texts
            are cut).
        hidden_dim, num_layers, num_heads, intermediate_dim, dropout: the ``BertBackbone``'s
            size (BERT-Base: 768, 12, 12, 3072).
        mask_selection_rate: share of the tokens chosen for prediction (BERT: 15 %).
        mask_token_rate, random_token_rate: of the chosen tokens, the share replaced by
            ``[MASK]`` (80 %) and by a random token (10 %); the rest (10 %) stay as they are.

    Returns:
        A ``BertMaskedLM`` whose ``fit`` takes raw strings (the preprocessor tokenizes and
        masks them afresh every epoch).
    """
    keras_hub = import_keras_hub()
    vocabulary = list(vocabulary)
    tokenizer = keras_hub.models.BertTokenizer(vocabulary=vocabulary, lowercase=True)
    backbone = keras_hub.models.BertBackbone(
        vocabulary_size=len(vocabulary), num_layers=num_layers, num_heads=num_heads,
        hidden_dim=hidden_dim, intermediate_dim=intermediate_dim, dropout=dropout,
        max_sequence_length=sequence_length)
    preprocessor = keras_hub.models.BertMaskedLMPreprocessor(
        tokenizer, sequence_length=sequence_length, mask_selection_rate=mask_selection_rate,
        mask_selection_length=mask_selection_length(sequence_length, mask_selection_rate),
        mask_token_rate=mask_token_rate, random_token_rate=random_token_rate)
    return keras_hub.models.BertMaskedLM(backbone, preprocessor=preprocessor)


def mask_selection_length(sequence_length: int, mask_selection_rate: float = 0.15) -> int:
    """Room for the chosen positions of one example: twice the expected count, at least 4.

    Example:
        >>> mask_selection_length(64)
        20
    """
    return max(4, math.ceil(2 * mask_selection_rate * sequence_length))


def is_local_preset(preset: str | Path) -> bool:
    """True when ``preset`` is a directory on disk (what ``save_to_preset`` writes)."""
    return Path(str(preset)).expanduser().is_dir()


def preset_host(preset: str) -> str | None:
    """The server a preset downloads from (``None`` for a local directory)."""
    if is_local_preset(preset):
        return None
    return HUGGING_FACE_HOST if str(preset).startswith("hf://") else KAGGLE_HOST


def masked_lm_from_preset(preset: str | Path = DEFAULT_PRESET, *,
                          sequence_length: int | None = None):
    """``keras_hub.models.BertMaskedLM.from_preset(preset)``, or one :class:`DownloadError`.

    Args:
        preset: a keras-hub preset name (``"bert_tiny_en_uncased"``, ``"bert_small_en_uncased"``,
            ``"bert_base_en_uncased"``, ...), a ``kaggle://`` / ``hf://`` handle, or a local
            directory written by ``save_to_preset`` (loaded without any network).
        sequence_length: tokens per example for the preprocessor (default: the preset's).

    Returns:
        The ``BertMaskedLM`` with the preset's backbone weights and tokenizer. (Its MLM head
        comes from the preset too when the preset ships task weights; otherwise keras-hub
        initialises the head — one Dense + LayerNorm before the tied output embedding — at
        random.)

    Raises:
        DownloadError: the preset could not be downloaded (offline, server down); the message
            says how to continue with FAST mode.
        ValueError: ``preset`` is neither a known preset, a handle, nor an existing directory.
    """
    keras_hub = import_keras_hub()
    name = str(preset)
    local = is_local_preset(name)
    known = name in keras_hub.models.BertMaskedLM.presets or "://" in name
    if not local and not known:
        raise ValueError(
            f"Unknown BERT preset {name!r}: expected a keras-hub preset name (e.g. "
            f"{', '.join(sorted(keras_hub.models.BertMaskedLM.presets)[:4])}, ...), a "
            "kaggle:// or hf:// handle, or an existing local preset directory.")
    try:
        if not local:
            socket.getaddrinfo(preset_host(name), 443)  # offline: fail in milliseconds
        masked_lm = keras_hub.models.BertMaskedLM.from_preset(
            str(Path(name).expanduser()) if local else name)
    except OSError as error:  # socket.gaierror, requests' ConnectionError, missing files
        raise DownloadError(f"the BERT preset {name!r} with keras-hub", error,
                            advice=PRESET_ADVICE) from error
    if sequence_length is not None:
        masked_lm.preprocessor.sequence_length = int(sequence_length)
    return masked_lm


def untrained_copy(backbone):
    """A new ``BertBackbone`` of the same architecture, randomly initialised (from its config)."""
    return type(backbone).from_config(backbone.get_config())


def encode_with_masks(tokenizer, sentence: str, sequence_length: int) -> dict[str, np.ndarray]:
    """The backbone's inputs for one sentence whose blanks are written ``[MASK]``.

    The text between the blanks is tokenized as usual; each ``[MASK]`` becomes the mask token
    id. Returns ``token_ids``, ``segment_ids``, ``padding_mask`` (each ``(1, sequence_length)``)
    and ``mask_positions`` ``(1, number of blanks)``.

    Raises:
        ValueError: when the sentence has no ``[MASK]`` or is too long.
    """
    parts = sentence.split(MASK_TOKEN)
    if len(parts) < 2:
        raise ValueError(f"Write each blank as {MASK_TOKEN}; {sentence!r} has none.")
    ids = [tokenizer.cls_token_id]
    positions = []
    for i, part in enumerate(parts):
        if part.strip():
            ids += [int(t) for t in np.asarray(tokenizer(part))]
        if i < len(parts) - 1:
            positions.append(len(ids))
            ids.append(tokenizer.mask_token_id)
    ids.append(tokenizer.sep_token_id)
    if len(ids) > sequence_length:
        raise ValueError(f"{sentence!r} is {len(ids)} tokens long; the model reads at most "
                         f"{sequence_length}.")
    token_ids = np.full((1, sequence_length), tokenizer.pad_token_id, "int32")
    token_ids[0, :len(ids)] = ids
    return {"token_ids": token_ids,
            "segment_ids": np.zeros_like(token_ids),
            "padding_mask": (token_ids != tokenizer.pad_token_id).astype("int32"),
            "mask_positions": np.asarray([positions], "int32")}


def fill_masks(masked_lm, sentences: Sequence[str], top_k: int = 3) -> list[list[list[tuple[str, float]]]]:
    """The ``top_k`` most likely tokens (with probabilities) for every ``[MASK]`` of each sentence.

    Returns one list per sentence, one list per blank, of ``(token, probability)`` pairs.

    Example (``masked_lm`` from :func:`masked_lm_from_scratch` or :func:`masked_lm_from_preset`)::

        fill_masks(masked_lm, ["the acting is [MASK] ."])   # [[[('superb', 0.31), ...]]]
    """
    tokenizer = masked_lm.preprocessor.tokenizer
    length = masked_lm.preprocessor.sequence_length
    results = []
    for sentence in sentences:
        inputs = encode_with_masks(tokenizer, sentence, length)
        logits = np.asarray(masked_lm(inputs, training=False), "float64")[0]  # (blanks, V)
        probabilities = np.exp(logits - logits.max(-1, keepdims=True))
        probabilities /= probabilities.sum(-1, keepdims=True)
        blanks = []
        for row in probabilities:
            best = np.argsort(-row)[:top_k]
            blanks.append([(tokenizer.id_to_token(int(i)), float(row[i])) for i in best])
        results.append(blanks)
    return results


# ------------------------------------------------------------- keras-hub vs notebook 05's layer

#: keras-hub ``TransformerEncoder`` weight -> :class:`seqlab.layers.TransformerEncoderLayer`
#: weight, by the last two parts of each variable's path.
ENCODER_WEIGHT_NAMES = {
    "query/kernel": "query/kernel", "query/bias": "query/bias",
    "key/kernel": "key/kernel", "key/bias": "key/bias",
    "value/kernel": "value/kernel", "value/bias": "value/bias",
    "attention_output/kernel": "attention_output/kernel",
    "attention_output/bias": "attention_output/bias",
    "self_attention_layer_norm/gamma": "self_attention_norm/gamma",
    "self_attention_layer_norm/beta": "self_attention_norm/beta",
    "feedforward_intermediate_dense/kernel": "inner/kernel",
    "feedforward_intermediate_dense/bias": "inner/bias",
    "feedforward_output_dense/kernel": "outer/kernel",
    "feedforward_output_dense/bias": "outer/bias",
    "feedforward_layer_norm/gamma": "feed_forward_norm/gamma",
    "feedforward_layer_norm/beta": "feed_forward_norm/beta",
}


def _short_path(variable) -> str:
    return "/".join(variable.path.split("/")[-2:])


def copy_encoder_weights(source, target):
    """Copy a built keras-hub ``TransformerEncoder``'s weights into a built
    :class:`seqlab.layers.TransformerEncoderLayer` (notebook 05's), so the two compute the same.

    Both are post-norm encoder layers, ``x = LN(x + MHA(x)); x = LN(x + FFN(x))``. keras-hub's
    attention is ``keras.layers.MultiHeadAttention`` (per-head kernel axes ``(d, H, dk)``), ours
    keeps all heads side by side ``(d, H·dk)``: a C-order reshape maps one onto the other (see
    :func:`seqlab.layers.copy_keras_mha_weights`). Weights are matched by their public
    ``Variable.path`` names (:data:`ENCODER_WEIGHT_NAMES`).

    The layers compute the same only if they are configured alike: keras-hub's with
    ``activation="relu"`` (BERT itself uses GELU), the same ``layer_norm_epsilon``, and no
    dropout at inference.

    Returns:
        ``target``.

    Raises:
        ValueError: when a weight has no counterpart or the sizes differ.
    """
    theirs = {_short_path(v): v for v in source.weights}
    ours = {_short_path(v): v for v in target.weights}
    if set(theirs) != set(ENCODER_WEIGHT_NAMES) or set(ours) != set(ENCODER_WEIGHT_NAMES.values()):
        raise ValueError(
            "copy_encoder_weights expects a built keras_hub.layers.TransformerEncoder and a "
            f"built seqlab TransformerEncoderLayer; got weights {sorted(theirs)} and {sorted(ours)}.")
    for their_name, our_name in ENCODER_WEIGHT_NAMES.items():
        value = np.asarray(theirs[their_name])
        variable = ours[our_name]
        if value.size != int(np.prod(variable.shape)):
            raise ValueError(f"{their_name} has {value.size} numbers, {our_name} "
                             f"{int(np.prod(variable.shape))}: are the sizes the same?")
        variable.assign(value.reshape(tuple(variable.shape)))
    return target


def count_all_parameters(model) -> int:
    """How many numbers all weights of a model or layer hold, trainable or not, as one ``int``
    (``count_params`` of a built one). :func:`seqlab.training.count_parameters` instead splits a
    classifier's count into trainable and non-trainable."""
    return int(sum(int(np.prod(w.shape)) for w in model.weights))
