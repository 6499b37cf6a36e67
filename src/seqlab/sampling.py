"""Sampling text from a language model (notebook 07) with temperature and top-k; NumPy draws,
so a seed gives the same text on every device."""

from __future__ import annotations

import numpy as np

from seqlab.decoding.greedy import compiled_for
from seqlab.models.language_model import reset_states

__all__ = ["generate", "next_token_probabilities", "sample_next_token"]


def next_token_probabilities(logits, temperature: float = 1.0,
                             top_k: int | None = None) -> np.ndarray:
    """The distribution :func:`sample_next_token` draws from: ``softmax(logits / T)``, top k.

    Args:
        logits: ``(vocab,)`` or ``(batch, vocab)`` scores of the next token.
        temperature: ``T`` divides the logits before the softmax: ``T < 1`` sharpens the
            distribution, ``T > 1`` flattens it; ``T = 0`` puts all probability on the most
            likely token (ties: the first).
        top_k: keep only the ``k`` most likely tokens and renormalise; None keeps all.

    Returns:
        Probabilities of the same shape as ``logits`` (float64, each row sums to 1).

    Example:
        >>> next_token_probabilities([2.0, 1.0, 0.0], temperature=0).tolist()
        [1.0, 0.0, 0.0]
        >>> next_token_probabilities([2.0, 1.0, 0.0], top_k=1).tolist()
        [1.0, 0.0, 0.0]
    """
    logits = np.asarray(logits, dtype="float64")
    if logits.ndim not in (1, 2) or logits.shape[-1] < 1:
        raise ValueError(f"logits must have shape (vocab,) or (batch, vocab); got {logits.shape}.")
    if temperature < 0 or not np.isfinite(temperature):
        raise ValueError(f"temperature must be a finite number >= 0; got {temperature}.")
    if top_k is not None and not 1 <= top_k:
        raise ValueError(f"top_k must be a positive integer or None; got {top_k}.")
    if temperature == 0:
        top_k, temperature = 1, 1.0
    scaled = logits / temperature
    if top_k is not None and top_k < scaled.shape[-1]:
        # k-th largest per row; ties at the boundary keep every tied token
        kth = np.sort(scaled, axis=-1)[..., -top_k][..., None]
        scaled = np.where(scaled >= kth, scaled, -np.inf)
        if top_k == 1:  # greedy: exactly one token, the first of any tie (as argmax)
            scaled = np.where(np.arange(scaled.shape[-1]) == np.argmax(scaled, axis=-1)[..., None],
                              0.0, -np.inf)
    scaled = scaled - scaled.max(axis=-1, keepdims=True)
    weights = np.exp(scaled)
    return weights / weights.sum(axis=-1, keepdims=True)


def sample_next_token(logits, temperature: float = 1.0, top_k: int | None = None, rng=None):
    """Draw the next token id from ``logits`` with :func:`next_token_probabilities`'s
    ``temperature`` and ``top_k`` (``temperature=0``: greedy decoding).

    Args:
        rng: a ``numpy.random.Generator`` (or a seed); None draws a fresh one.

    Returns:
        An int (for ``(vocab,)`` logits) or a ``(batch,)`` int64 array.

    Example:
        >>> sample_next_token([0.1, 3.0, 0.2], temperature=0)
        1
    """
    probabilities = next_token_probabilities(logits, temperature, top_k)
    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    rows = np.atleast_2d(probabilities)
    # inverse-CDF draw per row; the minimum guards against round-off at the top end
    cumulative = np.cumsum(rows, axis=-1)
    draws = rng.random((rows.shape[0], 1)) * cumulative[:, -1:]
    ids = np.minimum((cumulative <= draws).sum(axis=-1), rows.shape[-1] - 1)
    # never land on a zero-probability token because of round-off
    ids = np.where(rows[np.arange(len(ids)), ids] > 0, ids, np.argmax(rows, axis=-1))
    return int(ids[0]) if probabilities.ndim == 1 else ids.astype("int64")


def generate(model, prompt_ids, num_tokens: int, *, temperature: float = 1.0,
             top_k: int | None = None, seed: int = 0) -> np.ndarray:
    """Continue ``prompt_ids`` by ``num_tokens`` tokens sampled one at a time.

    A stateful LSTM built for batch 1 reads the prompt once, then each new token alone; any other
    model (e.g. ``MiniGPT``) sees the last ``context_length`` tokens, padded on the right.

    Args:
        model: a language model mapping ``(1, T)`` ids to ``(1, T, vocab)`` logits.
        prompt_ids: 1-D ids to start from (at least one).
        temperature, top_k: passed to :func:`sample_next_token`.
        seed: seeds the sampling (the same text for the same seed).

    Returns:
        The generated ids, ``(num_tokens,)`` int64 (the prompt not included).
    """
    prompt = np.asarray(prompt_ids, dtype="int32").reshape(-1)
    if prompt.size == 0:
        raise ValueError("generate needs a prompt of at least one token.")
    rng = np.random.default_rng(seed)
    # One traced forward pass per model: eager calls are slow.
    forward = compiled_for(model, "forward", lambda ids: model(ids, training=False))
    generated = []
    if any(getattr(layer, "stateful", False) for layer in getattr(model, "layers", [])):
        reset_states(model)
        logits = np.asarray(forward(prompt[None]))[0, -1]                   # (vocab,)
        for _ in range(num_tokens):
            token = int(sample_next_token(logits, temperature=temperature, top_k=top_k, rng=rng))
            generated.append(token)
            logits = np.asarray(forward(np.array([[token]], "int32")))[0, -1]
        return np.asarray(generated, dtype="int64")
    context = int(getattr(model, "context_length", 0))
    if context < 1:
        raise ValueError("generate needs a stateful LSTM (batch 1) or a model with a "
                         "context_length attribute (such as MiniGPT).")
    ids = list(prompt)
    for _ in range(num_tokens):
        window = ids[-context:]
        padded = np.zeros((1, context), "int32")                            # (1, context)
        padded[0, : len(window)] = window
        logits = np.asarray(forward(padded))[0, len(window) - 1]
        token = int(sample_next_token(logits, temperature=temperature, top_k=top_k, rng=rng))
        generated.append(token)
        ids.append(token)
    return np.asarray(generated, dtype="int64")
