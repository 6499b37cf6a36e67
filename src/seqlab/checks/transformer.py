"""Checks for notebook 05's exercises: the causal mask and scaled dot-product attention.

* Exercise 1 — ``causal_mask(length)``: the look-ahead mask of the slides' "Masked Multi-Head
  Attention", ``(length, length)``, true (or 1) where query ``t`` may see key ``s``, i.e.
  ``s <= t`` (a token sees itself and what comes before it).
* Exercise 2 — ``attention(q, k, v, mask=None)``: eq. (16), ``softmax(Q K^T / sqrt(d_k)) V``
  with masked keys (``mask`` false) given a large negative score before the softmax; returns
  ``(output, weights)``. ``q`` ``(..., T, d_k)``, ``k`` ``(..., S, d_k)``, ``v`` ``(..., S,
  d_v)``, ``mask`` broadcastable to ``(..., T, S)``.

Answers are compared with NumPy versions of the equations; the messages name the usual
mistakes (the diagonal masked, the mask transposed, the √d_k scaling left out or squared, the
softmax over the wrong axis).
"""

from __future__ import annotations

import numpy as np

from seqlab.checks.core import CheckFailed, as_array, assert_close, passed, run_student_code

CAUSAL_MASK = "Exercise 1: the causal (look-ahead) mask"
ATTENTION = "Exercise 2: scaled dot-product attention"


def causal_mask_reference(length: int) -> np.ndarray:
    """Lower triangle, diagonal included: ``mask[t, s] = s <= t``."""
    return np.tril(np.ones((length, length), bool))


def _softmax(x, axis=-1):
    x = x - x.max(axis=axis, keepdims=True)
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


def attention_reference(q, k, v, mask=None, *, scale: bool = True):
    """Eq. (16) in NumPy; ``scale=False`` gives the usual mistake (no ``1/sqrt(d_k)``)."""
    scores = q @ np.swapaxes(k, -1, -2)
    if scale:
        scores = scores / np.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(np.asarray(mask, bool), scores, -1e9)
    weights = _softmax(scores, axis=-1)
    return weights @ v, weights


def check_causal_mask(causal_mask) -> None:
    """Check ``causal_mask(length)`` for several lengths."""
    for length in (4, 7, 1):
        got = as_array(CAUSAL_MASK, run_student_code(CAUSAL_MASK, causal_mask, length),
                        "your mask")
        expected = causal_mask_reference(length)
        if got.shape != expected.shape:
            raise CheckFailed(CAUSAL_MASK, f"causal_mask({length}) has shape {got.shape}; "
                              f"expected ({length}, {length}).")
        if not np.all(np.isin(got, (0.0, 1.0))):
            raise CheckFailed(CAUSAL_MASK, "the mask should hold booleans (or 0/1): True where "
                              "attention is allowed, False where it is masked.")
        got = got.astype(bool)
        if np.array_equal(got, expected):
            continue
        if np.array_equal(got, np.tril(np.ones((length, length), bool), -1)):
            raise CheckFailed(CAUSAL_MASK, "the diagonal is masked: a token must be allowed to "
                              "attend to itself (position t sees keys 0..t, t included).")
        if np.array_equal(got, expected.T):
            raise CheckFailed(CAUSAL_MASK, "the mask is transposed: row t (the query) may see "
                              "columns s <= t, so True on and *below* the diagonal.")
        if np.array_equal(got, ~expected):
            raise CheckFailed(CAUSAL_MASK, "the mask is inverted: True must mean 'may attend', "
                              "False 'masked' (the −∞ entries above the diagonal).")
        wrong = tuple(int(i) for i in np.argwhere(got != expected)[0])
        raise CheckFailed(CAUSAL_MASK, f"causal_mask({length}) is {got[wrong]} at (query, key) "
                          f"= {wrong}; expected {expected[wrong]}.")
    passed(CAUSAL_MASK, "token t sees tokens 0..t and never the future.")


def check_scaled_dot_product_attention(attention) -> None:
    """Check ``attention(q, k, v, mask=None) -> (output, weights)`` against eq. (16)."""
    rng = np.random.default_rng(516)
    q = rng.normal(size=(2, 3, 8)).astype("float32")
    k = rng.normal(size=(2, 5, 8)).astype("float32")
    v = rng.normal(size=(2, 5, 4)).astype("float32")
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)[:, None, :]  # (B, 1, S)
    for case_mask in (None, mask):
        result = run_student_code(ATTENTION, attention, q, k, v, case_mask)
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            raise CheckFailed(ATTENTION, "return a pair (output, weights).")
        output = as_array(ATTENTION, result[0], "your output")
        weights = as_array(ATTENTION, result[1], "your weights")
        expected_output, expected_weights = attention_reference(q, k, v, case_mask)
        if weights.shape != expected_weights.shape:
            raise CheckFailed(ATTENTION, f"the weights have shape {weights.shape}; expected "
                              f"{expected_weights.shape} (batch, queries, keys).")
        if not np.allclose(weights.sum(-1), 1.0, atol=1e-4):
            raise CheckFailed(ATTENTION, "the weights of each query do not sum to 1: take the "
                              "softmax over the keys, the last axis.")
        _, unscaled = attention_reference(q, k, v, case_mask, scale=False)
        if np.allclose(weights, unscaled, atol=1e-5):
            raise CheckFailed(ATTENTION, "the scores are not scaled: divide Q K^T by sqrt(d_k) "
                              "before the softmax (eq. 16).")
        _, squared = attention_reference(q / np.sqrt(8), k, v, case_mask)
        if np.allclose(weights, squared, atol=1e-5):
            raise CheckFailed(ATTENTION, "the scores are divided by d_k; divide by sqrt(d_k).")
        if case_mask is not None:
            hidden = ~np.broadcast_to(case_mask, weights.shape)
            if np.any(np.abs(weights[hidden]) > 1e-6):
                raise CheckFailed(ATTENTION, "masked keys (mask False) get weight "
                                  f"{float(np.abs(weights[hidden]).max()):.3g}; give their scores "
                                  "a large negative value before the softmax so it is 0.")
        assert_close(ATTENTION, weights, expected_weights, what="your weights", atol=1e-5)
        assert_close(ATTENTION, output, expected_output, what="your output", atol=1e-4)
    passed(ATTENTION, "softmax(Q K^T / sqrt(d_k)) V, masked keys at zero, eq. (16).")
