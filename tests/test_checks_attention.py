"""Notebook 04's checks accept the reference answers and reject stubs and plausible mistakes."""

from __future__ import annotations

import numpy as np
import pytest
from keras import ops

from seqlab import checks
from seqlab.checks import CheckFailed
from seqlab.layers import masked_softmax


def general_score(h, y, W):
    return ops.matmul(ops.matmul(h, W), ops.transpose(y, (0, 2, 1)))


def attention_weights(scores, mask):
    return masked_softmax(scores, ops.expand_dims(mask, 1))


def test_reference_answers_pass(capsys):
    checks.check_luong_general_score(general_score)
    checks.check_attention_weights(attention_weights)
    assert capsys.readouterr().out.count("passed") == 2


def test_numpy_answers_pass_too():
    checks.check_luong_general_score(lambda h, y, W: np.einsum("btq,qv,biv->bti", h, W, y))


def stub(*args):
    raise NotImplementedError("replace this with your code")


@pytest.mark.parametrize("check", [checks.check_luong_general_score, checks.check_attention_weights])
def test_the_placeholder_is_not_accepted(check):
    with pytest.raises(CheckFailed, match="placeholder"):
        check(stub)


@pytest.mark.parametrize("wrong, message", [
    (lambda h, y, W: ops.matmul(h, ops.transpose(y, (0, 2, 1))), "raised|dot score"),  # no W
    (lambda h, y, W: ops.matmul(ops.matmul(h, ops.transpose(W)), ops.transpose(y, (0, 2, 1))),
     "raised|transposed"),
    (lambda h, y, W: ops.transpose(general_score(h, y, W), (0, 2, 1)), "Tv, Tq"),
    (lambda h, y, W: ops.tanh(general_score(h, y, W)), "differs"),
])
def test_plausible_wrong_scores_are_rejected(wrong, message):
    with pytest.raises(CheckFailed, match=message):
        checks.check_luong_general_score(wrong)


def test_missing_w_on_square_inputs_is_named():
    def dot_when_possible(h, y, W):
        if h.shape[-1] != y.shape[-1]:
            return general_score(h, y, W)  # right on the first inputs, dot on the square ones
        return ops.matmul(h, ops.transpose(y, (0, 2, 1)))
    with pytest.raises(CheckFailed, match="dot score"):
        checks.check_luong_general_score(dot_when_possible)


@pytest.mark.parametrize("wrong, message", [
    (lambda scores, mask: ops.softmax(scores, axis=1), "decoder steps"),  # wrong axis
    (lambda scores, mask: ops.softmax(scores, axis=-1), "padded"),  # mask ignored
    (lambda scores, mask: ops.softmax(scores, axis=-1) * ops.cast(mask[:, None, :], "float32"),
     "differs"),  # zeroed after the softmax without renormalising
    (lambda scores, mask: scores, "padded|differs"),  # no softmax at all
])
def test_plausible_wrong_weights_are_rejected(wrong, message):
    with pytest.raises(CheckFailed, match=message):
        checks.check_attention_weights(wrong)
