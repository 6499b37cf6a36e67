"""Models assembled from :mod:`seqlab.layers`: the sentiment classifiers, the RNN and Transformer
translators, and the tools of notebooks 06 and 07 (word vectors, perplexity, stateful LSTMs).

One module per model family: ``sentiment`` (notebooks 01-03), ``seq2seq`` (04; its encoder and
decoder layers in ``seq2seq_layers``), ``transformer`` (05), ``word2vec`` (06: tools for word
vectors), ``language_model`` (07: perplexity, resetting states); 06's and 07's models are their
notebooks' ``#@save`` cells (:mod:`seqlab.lessons`). Import from here:
``from seqlab.models import build_rnn_translator``. Compiling them is :mod:`seqlab.training`'s job.
"""

from seqlab.models import (
    bert,  # keras-hub's BERT, used as a namespace: bert.masked_lm_from_preset(...)
)
from seqlab.models.language_model import ResetStatesCallback, perplexity, reset_states
from seqlab.models.sentiment import (
    build_recurrent_classifier,
    build_sentiment_classifier,
    count_parameters,
    embedding_layer,
    predict_sentiment,
    stage_weights_path,
)
from seqlab.models.seq2seq import Seq2SeqTranslator, build_rnn_translator
from seqlab.models.seq2seq_layers import Seq2SeqDecoder, Seq2SeqEncoder
from seqlab.models.transformer import (
    TRANSFORMER_PRESETS,
    TransformerTranslator,
    build_transformer_translator,
)
from seqlab.models.word2vec import (
    analogy,
    analogy_rank,
    nearest_neighbours,
    normalize_rows,
    pca_2d,
)

__all__ = [
    "bert",
    # sentiment (notebooks 01-03)
    "build_recurrent_classifier", "build_sentiment_classifier", "count_parameters",
    "embedding_layer", "predict_sentiment", "stage_weights_path",
    # translators (notebooks 04, 05)
    "Seq2SeqDecoder", "Seq2SeqEncoder", "Seq2SeqTranslator", "build_rnn_translator",
    "TRANSFORMER_PRESETS", "TransformerTranslator", "build_transformer_translator",
    # word vectors (notebook 06)
    "analogy", "analogy_rank", "nearest_neighbours", "normalize_rows", "pca_2d",
    # language models (notebook 07)
    "ResetStatesCallback", "perplexity", "reset_states",
]
