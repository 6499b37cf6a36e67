"""Reusable Keras 3 layers: recurrent cells (eqs. 1-11), attention (eqs. 12-14), the
Transformer (eqs. 15-16), the TF-Hub embedding. One topic per module, as keras-hub splits its
layers; import from here: ``from seqlab.layers import MultiHeadAttention``. Importing this
package loads neither the data code nor anything above it.
"""

from seqlab.layers.attention import BahdanauAttention, LuongAttention
from seqlab.layers.bahdanau_decoder import BahdanauDecoder
from seqlab.layers.flat_dense import FastMultiHeadAttention, FlatDense
from seqlab.layers.hub import NNLM_EN_DIM50, STANDIN_HANDLE, HubTextEmbedding, trusted_handles
from seqlab.layers.masking import causal_mask, masked_softmax, padding_mask
from seqlab.layers.multi_head_attention import (
    CachedMultiHeadAttention,
    MultiHeadAttention,
    copy_keras_attention_weights,
    scaled_dot_product_attention,
)
from seqlab.layers.output import RealTokenDense
from seqlab.layers.positional_embedding import PositionalEmbedding, positional_encoding
from seqlab.layers.recurrent import GRUCell, LSTMCell, RecurrentCell, SimpleRNNCell
from seqlab.layers.recurrent_weights import copy_keras_cell_weights
from seqlab.layers.transformer_blocks import PositionwiseFeedForward, TransformerDecoderLayer

__all__ = [
    # recurrent cells (eqs. 1-11)
    "GRUCell", "LSTMCell", "RecurrentCell", "SimpleRNNCell", "copy_keras_cell_weights",
    # attention for RNNs (eqs. 12-14) and the one masking rule
    "BahdanauAttention", "BahdanauDecoder", "LuongAttention", "causal_mask", "masked_softmax",
    "padding_mask",
    # the Transformer (eqs. 15, 16)
    "MultiHeadAttention", "PositionalEmbedding", "PositionwiseFeedForward",
    "TransformerDecoderLayer", "copy_keras_attention_weights", "positional_encoding",
    "scaled_dot_product_attention",
    # decoding one position at a time: the same attention with a key/value cache
    "CachedMultiHeadAttention",
    # speed paths: the output layer at the real tokens only, Dense through a 2-D view
    "FastMultiHeadAttention", "FlatDense", "RealTokenDense",
    # pretrained embeddings
    "NNLM_EN_DIM50", "STANDIN_HANDLE", "HubTextEmbedding", "trusted_handles",
]
