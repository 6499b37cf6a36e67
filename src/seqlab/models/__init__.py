"""Models assembled from :mod:`seqlab.layers`: sentiment classifier, RNN and Transformer translators."""

from seqlab.models.sentiment import SummedRowsAdam as SummedRowsAdam
from seqlab.models.sentiment import build_recurrent_classifier as build_recurrent_classifier
from seqlab.models.sentiment import build_sentiment_classifier as build_sentiment_classifier
from seqlab.models.sentiment import compile_sentiment_classifier as compile_sentiment_classifier
from seqlab.models.sentiment import count_parameters as count_parameters
from seqlab.models.sentiment import embedding_layer as embedding_layer
from seqlab.models.sentiment import predict_sentiment as predict_sentiment
from seqlab.models.sentiment import read_imdb_results as read_imdb_results
from seqlab.models.sentiment import stage_weights_path as stage_weights_path
from seqlab.models.sentiment import write_imdb_result as write_imdb_result
from seqlab.models.seq2seq import Seq2SeqDecoder as Seq2SeqDecoder
from seqlab.models.seq2seq import Seq2SeqEncoder as Seq2SeqEncoder
from seqlab.models.seq2seq import Seq2SeqTranslator as Seq2SeqTranslator
from seqlab.models.seq2seq import build_rnn_translator as build_rnn_translator
from seqlab.models.transformer import TRANSFORMER_PRESETS as TRANSFORMER_PRESETS
from seqlab.models.transformer import TransformerTranslator as TransformerTranslator
from seqlab.models.transformer import build_transformer_translator as build_transformer_translator
