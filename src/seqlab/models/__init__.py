"""Models assembled from :mod:`seqlab.layers`: the sentiment classifiers, the RNN translator,
word2vec and the language models (notebook 05's Transformer is ``seqlab.lessons.nb05``).

One module per model family: ``sentiment`` (notebooks 01-03), ``seq2seq`` (04; its encoder and
decoder layers in ``seq2seq_layers``), ``word2vec`` (06), ``language_model`` (07). Import from here:
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
    # sentiment (notebooks 01-03)
    "build_recurrent_classifier", "build_sentiment_classifier", "count_parameters",
    "embedding_layer", "predict_sentiment", "stage_weights_path",
    # translator (notebook 04)
    "Seq2SeqDecoder", "Seq2SeqEncoder", "Seq2SeqTranslator", "build_rnn_translator",
    # word2vec (notebook 06)
    "SkipGram", "analogy", "analogy_rank", "build_word2vec_classifier", "nearest_neighbours",
    "normalize_rows", "pca_2d",
    # language models (notebook 07)
    "MiniGPT", "ResetStatesCallback", "build_char_lstm", "perplexity", "reset_states",
    "with_batch_size",
]
