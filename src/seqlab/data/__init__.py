"""Data loaders that end in ``tf.data`` pipelines, for full runs and FAST mode (``data/``)."""

from seqlab.data.corpus import (
    load_review_corpus,
    log_uniform_probabilities,
    skipgram_dataset,
    subsampling_keep_probabilities,
    unigram_noise_probabilities,
    vectorize_ragged,
)
from seqlab.data.corpus_chars import CharVocabulary, load_char_corpus, split_text, tbptt_dataset
from seqlab.data.download import BrokenInstallError, DownloadError
from seqlab.data.imdb import IMDBSplits, load_imdb
from seqlab.data.length_buckets import bucket_by_length
from seqlab.data.translation import TranslationData, load_translation
from seqlab.data.translation_text import (
    standardize_reference,
    standardize_text,
    standardize_with_markers,
)
from seqlab.data.wordpiece import build_wordpiece_vocabulary, import_keras_hub, split_into_pieces

__all__ = [
    "BrokenInstallError", "DownloadError",
    # reviews (notebooks 01-03, 06)
    "IMDBSplits", "bucket_by_length", "load_imdb",
    # translation (notebooks 04, 05)
    "TranslationData", "load_translation", "standardize_reference",
    "standardize_text", "standardize_with_markers",
    # word2vec (notebook 06)
    "load_review_corpus", "log_uniform_probabilities", "skipgram_dataset",
    "subsampling_keep_probabilities", "unigram_noise_probabilities", "vectorize_ragged",
    # character language models (notebook 07)
    "CharVocabulary", "load_char_corpus", "split_text", "tbptt_dataset",
    # WordPiece for BERT (notebook 08; keras-hub is imported only when called)
    "build_wordpiece_vocabulary", "import_keras_hub", "split_into_pieces",
]
