"""Data loaders that end in ``tf.data`` pipelines, for full runs (TFDS, Anki) and FAST mode (data/)."""

from seqlab.data.download import DownloadError
from seqlab.data.imdb import IMDBSplits, load_imdb, read_sample_split

__all__ = ["DownloadError", "IMDBSplits", "load_imdb", "read_sample_split"]
