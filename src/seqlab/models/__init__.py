"""Models assembled from :mod:`seqlab.layers`: the RNN and Transformer translators, word2vec and
the language models (the sentiment classifiers of notebooks 01-03 are their lessons' #@save
cells, :mod:`seqlab.lessons.nb01` and :mod:`seqlab.lessons.nb03`).

One module per model family: ``seq2seq`` (04; its encoder and
decoder layers in ``seq2seq_layers``), ``transformer`` (05), ``word2vec`` (06), ``language_model``
(07). Import from here:
``from seqlab.models import build_rnn_translator``. Compiling them is :mod:`seqlab.training`'s job.
"""

from seqlab.models import (
    bert,  # keras-hub's BERT, used as a namespace: bert.masked_lm_from_preset(...)
)
from seqlab.models.language_model import (
    MiniGPT,
    ResetStatesCallback,
    build_char_lstm,
    perplexity,
    reset_states,
    with_batch_size,
)
from seqlab.models.seq2seq import Seq2SeqTranslator, build_rnn_translator
from seqlab.models.seq2seq_layers import Seq2SeqDecoder, Seq2SeqEncoder
from seqlab.models.transformer import (
    TRANSFORMER_PRESETS,
    TransformerTranslator,
    build_transformer_translator,
)
from seqlab.models.word2vec import (
    SkipGram,
    analogy,
    analogy_rank,
    build_word2vec_classifier,
    nearest_neighbours,
    normalize_rows,
    pca_2d,
)

__all__ = [
    "bert",
    # translators (notebooks 04, 05)
    "Seq2SeqDecoder", "Seq2SeqEncoder", "Seq2SeqTranslator", "build_rnn_translator",
    "TRANSFORMER_PRESETS", "TransformerTranslator", "build_transformer_translator",
    # word2vec (notebook 06)
    "SkipGram", "analogy", "analogy_rank", "build_word2vec_classifier", "nearest_neighbours",
    "normalize_rows", "pca_2d",
    # language models (notebook 07)
    "MiniGPT", "ResetStatesCallback", "build_char_lstm", "perplexity", "reset_states",
    "with_batch_size",
]
