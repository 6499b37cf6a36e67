"""Reusable Keras 3 layers: recurrent cells, attention, Transformer blocks, the TF-Hub embedding.

Each layer computes with ``keras.ops`` (so it also runs on the JAX and PyTorch backends),
cites the slide equation it implements, registers as serializable and round-trips through
``model.save`` / ``keras.models.load_model``. The TF-Hub layer is TensorFlow-only by nature.

Layers only: importing this package loads neither the data code nor anything above it
(the offline stand-in module that ``HubTextEmbedding(STANDIN_HANDLE)`` loads is built by
:mod:`seqlab.data.standin`, imported when that handle is first used).
"""

from seqlab.layers.attention import BahdanauAttention as BahdanauAttention
from seqlab.layers.attention import LuongAttention as LuongAttention
from seqlab.layers.hub import NNLM_EN_DIM50 as NNLM_EN_DIM50
from seqlab.layers.hub import STANDIN_HANDLE as STANDIN_HANDLE
from seqlab.layers.hub import HubTextEmbedding as HubTextEmbedding
from seqlab.layers.hub import is_trusted_handle as is_trusted_handle
from seqlab.layers.hub import trusted_handles as trusted_handles
from seqlab.layers.masking import masked_softmax as masked_softmax
from seqlab.layers.recurrent import GRUCell as GRUCell
from seqlab.layers.recurrent import LSTMCell as LSTMCell
from seqlab.layers.recurrent import RecurrentCell as RecurrentCell
from seqlab.layers.recurrent import SimpleRNNCell as SimpleRNNCell
from seqlab.layers.recurrent import copy_weights_from_keras as copy_weights_from_keras
from seqlab.layers.text import TextFromCodepoints as TextFromCodepoints
from seqlab.layers.transformer import MultiHeadAttention as MultiHeadAttention
from seqlab.layers.transformer import PositionalEmbedding as PositionalEmbedding
from seqlab.layers.transformer import TransformerDecoderLayer as TransformerDecoderLayer
from seqlab.layers.transformer import TransformerEncoderLayer as TransformerEncoderLayer
from seqlab.layers.transformer import causal_mask as causal_mask
from seqlab.layers.transformer import copy_keras_mha_weights as copy_keras_mha_weights
from seqlab.layers.transformer import padding_mask as padding_mask
from seqlab.layers.transformer import positional_encoding as positional_encoding
from seqlab.layers.transformer import (
    scaled_dot_product_attention as scaled_dot_product_attention,
)
