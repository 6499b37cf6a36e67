"""A WordPiece vocabulary learned from unlabelled text, for notebook 08's BERT tokenizer (keras-hub
is imported inside the functions: :mod:`seqlab.data` never needs it)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: BERT's special tokens, in the order the vocabulary starts with (``[PAD]`` must be id 0).
SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def import_keras_hub():
    """``keras_hub``, or one ImportError that says how to install it."""
    try:
        import keras_hub
    except ImportError as error:
        raise ImportError("Notebook 08 needs keras-hub (with tensorflow-text and kagglehub): "
                          'pip install "keras-hub>=0.25.1" (Colab has it preinstalled). '
                          f"Notebooks 01-07 do not need it. ({error})") from error
    return keras_hub


def build_wordpiece_vocabulary(texts: Sequence[str], vocabulary_size: int = 1000) -> list[str]:
    """Learn a lower-cased WordPiece vocabulary of at most ``vocabulary_size`` tokens (keras-hub).

    Args:
        texts: unlabelled documents (e.g. :func:`seqlab.data.corpus.load_review_corpus`).
        vocabulary_size: the most tokens to keep, special tokens included.

    Returns:
        The vocabulary as a list: :data:`SPECIAL_TOKENS` first (``[PAD]`` = 0), then the rest.

    Raises:
        ValueError: for an empty ``texts`` or a ``vocabulary_size`` of at most 5.
        ImportError: when keras-hub (or tensorflow-text) is not installed.

    Example:
        >>> vocabulary = build_wordpiece_vocabulary(["a dull film", "a dull plot"], 30)
        >>> vocabulary[:5], "dull" in vocabulary
        (['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'], True)
    """
    texts = list(texts)
    if not texts or not all(isinstance(text, str) for text in texts):
        raise ValueError("texts must be a non-empty sequence of strings (the unlabelled corpus).")
    if vocabulary_size <= len(SPECIAL_TOKENS):
        raise ValueError(f"vocabulary_size must be larger than the {len(SPECIAL_TOKENS)} special "
                         f"tokens; got {vocabulary_size}.")
    import tensorflow as tf

    keras_hub = import_keras_hub()
    data = tf.data.Dataset.from_tensor_slices(texts)
    return [str(token) for token in keras_hub.tokenizers.compute_word_piece_vocabulary(
        data, vocabulary_size, lowercase=True, reserved_tokens=list(SPECIAL_TOKENS))]


def split_into_pieces(vocabulary: Sequence[str], words: Sequence[str]) -> dict[str, list[str]]:
    """How a tokenizer with ``vocabulary`` splits each of ``words`` (for display).

    Example:
        >>> split_into_pieces(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "b", "a", "t", "s",
        ...                    "bat", "##s"], ["bats"])
        {'bats': ['bat', '##s']}
    """
    keras_hub = import_keras_hub()
    tokenizer = keras_hub.tokenizers.WordPieceTokenizer(vocabulary=list(vocabulary),
                                                         lowercase=True, oov_token="[UNK]")
    return {word: [tokenizer.id_to_token(int(i)) for i in np.asarray(tokenizer.tokenize(word))]
            for word in words}
