"""keras-hub's BERT presets for notebook 08: loading one (with one clear offline error) and
reading its masked LM's guesses. keras-hub is imported inside the functions only.
"""

from __future__ import annotations

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
MASK_TOKEN = "[MASK]"
PRESET_ADVICE = (
    "To work offline, use FAST mode: set SEQLAB_FAST=1 (or FAST = True in the notebook's "
    "parameters cell), which pre-trains a tiny BERT on the project's own reviews instead of "
    "downloading one; or pass PRESET = a local preset directory (keras-hub's save_to_preset).")


def masked_lm_from_preset(preset: str | Path = DEFAULT_PRESET, *,
                          sequence_length: int | None = None):
    """``keras_hub.models.BertMaskedLM.from_preset(preset)``, or one :class:`DownloadError`.

    Args:
        preset: a keras-hub preset name (``"bert_tiny_en_uncased"``, ...), a ``kaggle://`` /
            ``hf://`` handle, or a local directory written by ``save_to_preset``.
        sequence_length: tokens per example for the preprocessor (default: the preset's).

    Returns:
        The ``BertMaskedLM`` with the preset's backbone weights and tokenizer; its MLM head is
        random unless the preset ships one (:func:`preset_has_head`).

    Raises:
        DownloadError: the preset could not be downloaded; the message says how to continue
            with FAST mode.
        ValueError: ``preset`` is neither a known preset, a handle, nor an existing directory.
    """
    keras_hub = import_keras_hub()
    name = str(preset)
    local = Path(name).expanduser().is_dir()  # what save_to_preset writes
    known = name in keras_hub.models.BertMaskedLM.presets or "://" in name
    if not local and not known:
        raise ValueError(
            f"Unknown BERT preset {name!r}: expected a keras-hub preset name (e.g. "
            f"{', '.join(sorted(keras_hub.models.BertMaskedLM.presets)[:4])}, ...), a "
            "kaggle:// or hf:// handle, or an existing local preset directory.")
    try:
        if not local:  # offline: fail in milliseconds
            socket.getaddrinfo("huggingface.co" if name.startswith("hf://") else KAGGLE_HOST, 443)
        masked_lm = keras_hub.models.BertMaskedLM.from_preset(
            str(Path(name).expanduser()) if local else name)
    except OSError as error:  # socket.gaierror, requests' ConnectionError, missing files
        raise DownloadError(f"the BERT preset {name!r} with keras-hub", error,
                            advice=PRESET_ADVICE) from error
    if sequence_length is not None:
        masked_lm.preprocessor.sequence_length = int(sequence_length)
    return masked_lm


def preset_has_head(preset: str | Path, masked_lm) -> bool:
    """True when ``masked_lm`` (loaded from ``preset``) got its MLM head from the preset's files.

    Loads the preset again: weights read from files are equal in two loads, a random head is not.
    """
    again = masked_lm_from_preset(preset).masked_lm_head.get_weights()
    return all(np.array_equal(a, b) for a, b in
               zip(masked_lm.masked_lm_head.get_weights(), again, strict=True))


def encode_with_masks(tokenizer, sentence: str, sequence_length: int) -> dict[str, np.ndarray]:
    """The backbone's inputs for one sentence whose blanks are written ``[MASK]``.

    Returns ``token_ids``, ``segment_ids``, ``padding_mask`` (each ``(1, sequence_length)``)
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
    """The ``top_k`` most likely ``(token, probability)`` pairs for every ``[MASK]`` of each sentence.

    Example (``masked_lm`` from :func:`masked_lm_from_preset` or notebook 08's own)::

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
        results.append([[(tokenizer.id_to_token(int(i)), float(row[i]))
                         for i in np.argsort(-row)[:top_k]] for row in probabilities])
    return results


# ------------------------------------------------------------- keras-hub vs notebook 05's layer

#: keras-hub ``TransformerEncoder`` sublayer -> notebook 05's ``TransformerEncoderLayer`` one,
#: where the names differ (each weight is matched by its path's last two parts).
ENCODER_SUBLAYER_NAMES = {
    "self_attention_layer_norm": "self_attention_norm",
    "feedforward_intermediate_dense": "inner",
    "feedforward_output_dense": "outer",
    "feedforward_layer_norm": "feed_forward_norm",
}


def _short_path(variable, renames=None) -> str:
    layer, weight = variable.path.split("/")[-2:]
    return f"{(renames or {}).get(layer, layer)}/{weight}"


def copy_encoder_weights(source, target):
    """Copy a built keras-hub ``TransformerEncoder``'s weights into a built
    :class:`seqlab.lessons.nb05.TransformerEncoderLayer` and return it. The two compute the
    same when configured alike: keras-hub's with ``activation="relu"``, the same
    ``layer_norm_epsilon``, and no dropout.

    Raises:
        ValueError: when a weight has no counterpart or the sizes differ.
    """
    theirs = {_short_path(v, ENCODER_SUBLAYER_NAMES): v for v in source.weights}
    ours = {_short_path(v): v for v in target.weights}
    if set(theirs) != set(ours):
        raise ValueError(
            "copy_encoder_weights expects a built keras_hub.layers.TransformerEncoder and a "
            f"built notebook 05 TransformerEncoderLayer; got weights {sorted(theirs)} and "
            f"{sorted(ours)}.")
    for name, variable in ours.items():
        value = np.asarray(theirs[name])
        if value.size != int(np.prod(variable.shape)):
            raise ValueError(f"{name} has {value.size} numbers in keras-hub's layer, "
                             f"{int(np.prod(variable.shape))} in ours: are the sizes the same?")
        variable.assign(value.reshape(tuple(variable.shape)))
    return target
