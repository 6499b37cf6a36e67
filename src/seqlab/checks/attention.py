"""Checks for notebook 04's exercises: Luong's "general" score and the attention weights.

* Exercise 1 — ``general_score(h, y, W)``: eq. (12), ``e_ti = h_t^T W y_i`` for every decoder
  step ``t`` and source position ``i``; ``h`` ``(batch, Tq, dq)``, ``y`` ``(batch, Tv, dv)``,
  ``W`` ``(dq, dv)`` -> ``e`` ``(batch, Tq, Tv)``.
* Exercise 2 — ``attention_weights(scores, mask)``: eq. (13), the softmax over the *source*
  positions, with padded positions (``mask`` false) given zero weight; ``scores``
  ``(batch, Tq, Tv)``, ``mask`` ``(batch, Tv)`` -> ``alpha`` ``(batch, Tq, Tv)``.

Both are compared with NumPy versions of the equations on random inputs; the messages name the
usual mistakes (``W`` left out or transposed, the softmax over the wrong axis, padding not
masked).
"""

from __future__ import annotations

import numpy as np

from seqlab.checks.core import CheckFailed, as_array, assert_close, passed, run_student_code

GENERAL_SCORE = "Exercise 1: Luong's general score"
ATTENTION_WEIGHTS = "Exercise 2: attention weights with a padding mask"


def _softmax(x, axis=-1):
    x = x - x.max(axis=axis, keepdims=True)
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


def general_score_reference(h, y, W):
    """``e[b, t, i] = h[b, t] . (W @ y[b, i])``."""
    return np.einsum("btq,qv,biv->bti", h, W, y)


def attention_weights_reference(scores, mask):
    """Softmax over the last (source) axis; padded positions exactly 0."""
    mask = np.asarray(mask, bool)[:, None, :]
    weights = _softmax(np.where(mask, scores, -1e9), axis=-1)
    return np.where(mask, weights, 0.0)


def check_luong_general_score(general_score) -> None:
    """Check ``general_score(h, y, W)`` against eq. (12)'s general score."""
    rng = np.random.default_rng(412)
    for dq, dv in ((3, 5), (4, 4)):  # a rectangular W, then a square one (W vs W^T)
        h = rng.normal(size=(2, 3, dq)).astype("float32")
        y = rng.normal(size=(2, 6, dv)).astype("float32")
        W = rng.normal(size=(dq, dv)).astype("float32")
        got = as_array(GENERAL_SCORE, run_student_code(GENERAL_SCORE, general_score, h, y, W),
                        "your score")
        expected = general_score_reference(h, y, W)
        if got.shape == expected.shape[:1] + expected.shape[:0:-1]:
            raise CheckFailed(GENERAL_SCORE, f"the scores have shape {got.shape}: (batch, Tv, Tq) "
                              "instead of (batch, Tq, Tv). Put the decoder steps first.")
        if dq == dv and got.shape == expected.shape:
            if np.allclose(got, np.einsum("btq,biq->bti", h, y), atol=1e-4):
                raise CheckFailed(GENERAL_SCORE, "this is the dot score h^T y: the general score "
                                  "multiplies by W in between, h^T W y.")
            if np.allclose(got, general_score_reference(h, y, W.T), atol=1e-4):
                raise CheckFailed(GENERAL_SCORE, "W is used transposed: with W of shape (dq, dv), "
                                  "compute h^T W y, i.e. h @ W then the dot with y.")
        assert_close(GENERAL_SCORE, got, expected, what="your score e", atol=1e-4, rtol=1e-4)
    passed(GENERAL_SCORE, "e_ti = h_t^T W y_i, eq. (12).")


def check_attention_weights(attention_weights) -> None:
    """Check ``attention_weights(scores, mask)`` against eq. (13) with padding masked."""
    rng = np.random.default_rng(413)
    scores = rng.normal(scale=2.0, size=(3, 4, 5)).astype("float32")
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 1, 0, 0, 0]], bool)
    got = as_array(ATTENTION_WEIGHTS,
                    run_student_code(ATTENTION_WEIGHTS, attention_weights, scores, mask),
                    "your weights")
    expected = attention_weights_reference(scores, mask)
    if got.shape != expected.shape:
        raise CheckFailed(ATTENTION_WEIGHTS, f"the weights have shape {got.shape}; expected "
                          f"{expected.shape}, the shape of the scores.")
    if np.allclose(got.sum(axis=1), 1.0, atol=1e-4) and not np.allclose(got.sum(-1), 1.0, atol=1e-4):
        raise CheckFailed(ATTENTION_WEIGHTS, "the weights sum to 1 over the decoder steps (axis 1); "
                          "eq. (13) normalises over the source positions i, the last axis.")
    padded = ~np.broadcast_to(mask[:, None, :], got.shape)
    if np.any(np.abs(got[padded]) > 1e-6):
        raise CheckFailed(ATTENTION_WEIGHTS, "padded source positions (mask False) get weight "
                          f"{float(np.abs(got[padded]).max()):.3g}; they must get exactly 0. "
                          "Give their scores a large negative value before the softmax.")
    assert_close(ATTENTION_WEIGHTS, got, expected, what="your weights alpha", atol=1e-5)
    passed(ATTENTION_WEIGHTS, "softmax over the source, padding at zero, eq. (13).")
