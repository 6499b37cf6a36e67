"""Reusable Keras 3 layers: recurrent cells, attention, Transformer blocks, the TF-Hub embedding.

One topic per module, as keras-hub splits its layers: ``recurrent`` (eqs. 1-11) and
``recurrent_weights`` (Keras's fused weights copied into those cells), ``attention``
(eqs. 12-14), ``masking`` (the one masking rule, padding and causal masks, the mask names),
``positional_embedding`` (eq. 15), ``multi_head_attention`` (eq. 16, fig. 18, the decoding
cache), ``transformer_blocks`` (feed-forward, encoder and decoder layers), ``output`` (the
output layer, at the real tokens only), ``flat_dense`` (the blocks' faster projections),
``hub`` and ``text``.
Import from here: ``from seqlab.layers import MultiHeadAttention``.

Each layer computes with ``keras.ops`` (so it also runs on the JAX and PyTorch backends),
cites the slide equation it implements, registers as serializable and round-trips through
``model.save`` / ``keras.models.load_model``. The TF-Hub layer is TensorFlow-only by nature.

Layers only: importing this package loads neither the data code nor anything above it
(the offline stand-in module that ``HubTextEmbedding(STANDIN_HANDLE)`` loads is built by
:mod:`seqlab.data.standin`, imported when that handle is first used).
"""

from seqlab.layers.attention import BahdanauAttention, LuongAttention
from seqlab.layers.flat_dense import FastMultiHeadAttention, FlatDense
from seqlab.layers.hub import (
    NNLM_EN_DIM50,
    STANDIN_HANDLE,
    HubTextEmbedding,
    is_trusted_handle,
    trusted_handles,
)
from seqlab.layers.masking import causal_mask, masked_softmax, padding_mask
from seqlab.layers.multi_head_attention import (
    MultiHeadAttention,
    copy_keras_attention_weights,
    scaled_dot_product_attention,
)
from seqlab.layers.output import RealTokenDense
from seqlab.layers.positional_embedding import PositionalEmbedding, positional_encoding
from seqlab.layers.recurrent import GRUCell, LSTMCell, RecurrentCell, SimpleRNNCell
from seqlab.layers.recurrent_weights import copy_keras_cell_weights
from seqlab.layers.text import TextFromCodepoints, review_input
from seqlab.layers.transformer_blocks import (
    PositionwiseFeedForward,
    TransformerDecoderLayer,
    TransformerEncoderLayer,
)

__all__ = [
    # recurrent cells (eqs. 1-11)
    "GRUCell", "LSTMCell", "RecurrentCell", "SimpleRNNCell", "copy_keras_cell_weights",
    # attention for RNNs (eqs. 12-14) and the one masking rule
    "BahdanauAttention", "LuongAttention", "causal_mask", "masked_softmax", "padding_mask",
    # the Transformer (eqs. 15, 16)
    "MultiHeadAttention", "PositionalEmbedding", "PositionwiseFeedForward",
    "TransformerDecoderLayer", "TransformerEncoderLayer", "copy_keras_attention_weights",
    "positional_encoding", "scaled_dot_product_attention",
    # speed paths: the output layer at the real tokens only, Dense through a 2-D view
    "FastMultiHeadAttention", "FlatDense", "RealTokenDense",
    # pretrained embeddings and text input
    "NNLM_EN_DIM50", "STANDIN_HANDLE", "HubTextEmbedding", "TextFromCodepoints", "review_input",
    "is_trusted_handle", "trusted_handles",
]

# Bahdanau et al. (2015)'s decoder (query h(t-1), context fed into the cell), eqs. 12-14.
from seqlab.layers.bahdanau_decoder import BahdanauDecoder  # noqa: E402

__all__ += ["BahdanauDecoder"]
