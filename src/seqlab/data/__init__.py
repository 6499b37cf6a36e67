"""Data loaders that end in ``tf.data`` pipelines, for full runs (TFDS, Anki) and FAST mode (data/)."""
