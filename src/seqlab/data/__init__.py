"""Data loaders that end in ``tf.data`` pipelines, for full runs (TFDS, Anki) and FAST mode (data/)."""

from seqlab.data.dates import generate_date_pairs
from seqlab.data.download import BrokenInstallError, DownloadError
from seqlab.data.imdb import IMDBSplits, load_imdb, read_sample_split
from seqlab.data.translation import TranslationData, load_translation

__all__ = [
    "BrokenInstallError", "DownloadError", "IMDBSplits", "TranslationData", "generate_date_pairs",
    "load_imdb", "load_translation", "read_sample_split",
]
