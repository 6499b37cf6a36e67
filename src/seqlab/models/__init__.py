"""Models assembled from :mod:`seqlab.layers`: sentiment classifier, RNN and Transformer translators."""

from seqlab.models.seq2seq import Seq2SeqDecoder as Seq2SeqDecoder
from seqlab.models.seq2seq import Seq2SeqEncoder as Seq2SeqEncoder
from seqlab.models.seq2seq import Seq2SeqTranslator as Seq2SeqTranslator
from seqlab.models.seq2seq import build_for_training as build_for_training
