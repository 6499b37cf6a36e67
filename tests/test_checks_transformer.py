"""Notebook 05's checks accept the reference answers and reject stubs and plausible mistakes."""

from __future__ import annotations

import numpy as np
import pytest
from keras import ops

from seqlab import checks
from seqlab.checks import CheckFailed
from seqlab.layers import causal_mask, scaled_dot_product_attention


def test_reference_answers_pass(capsys):
    checks.check_causal_mask(lambda n: causal_mask(n))
    checks.check_scaled_dot_product_attention(scaled_dot_product_attention)
    assert capsys.readouterr().out.count("passed") == 2


def test_numpy_answers_pass_too():
    checks.check_causal_mask(lambda n: np.tril(np.ones((n, n))))
    checks.check_causal_mask(lambda n: np.arange(n)[None, :] <= np.arange(n)[:, None])


def stub(*args):
    raise NotImplementedError("replace this with your code")


@pytest.mark.parametrize("check", [checks.check_causal_mask,
                                   checks.check_scaled_dot_product_attention])
def test_the_placeholder_is_not_accepted(check):
    with pytest.raises(CheckFailed, match="placeholder"):
        check(stub)


@pytest.mark.parametrize("wrong, message", [
    (lambda n: np.tril(np.ones((n, n), bool), -1), "diagonal is masked"),  # off by one
    (lambda n: np.triu(np.ones((n, n), bool)), "transposed"),
    (lambda n: ~np.tril(np.ones((n, n), bool)), "inverted"),
    (lambda n: np.ones((n, n), bool), "expected"),
    (lambda n: np.tril(np.ones((n, n + 1), bool)), "shape"),
    (lambda n: np.tril(np.full((n, n), 5.0)), "booleans"),
])
def test_plausible_wrong_masks_are_rejected(wrong, message):
    with pytest.raises(CheckFailed, match=message):
        checks.check_causal_mask(wrong)


def _attention(q, k, v, mask=None, *, scale=lambda d: d ** 0.5, axis=-1, masked=True):
    scores = ops.matmul(q, ops.swapaxes(k, -1, -2)) / scale(q.shape[-1])
    if mask is not None and masked:
        scores = ops.where(mask, scores, -1e9)
    weights = ops.softmax(scores, axis=axis)
    return ops.matmul(weights, v) if axis == -1 else ops.matmul(weights, v), weights


@pytest.mark.parametrize("wrong, message", [
    (lambda q, k, v, m=None: _attention(q, k, v, m, scale=lambda d: 1.0), "not scaled"),
    (lambda q, k, v, m=None: _attention(q, k, v, m, scale=lambda d: d), "divided by d_k"),
    (lambda q, k, v, m=None: _attention(q, k, v, m, axis=1), "sum to 1"),
    (lambda q, k, v, m=None: _attention(q, k, v, m, masked=False), "masked keys"),
    (lambda q, k, v, m=None: _attention(q, k, v, m)[0], "pair"),
    (lambda q, k, v, m=None: (_attention(q, k, v, m)[0] * 2, _attention(q, k, v, m)[1]),
     "output differs"),
    (lambda q, k, v, m=None: _attention(q, k, v, m)[::-1], "shape"),
])
def test_plausible_wrong_attention_is_rejected(wrong, message):
    with pytest.raises(CheckFailed, match=message):
        checks.check_scaled_dot_product_attention(wrong)
