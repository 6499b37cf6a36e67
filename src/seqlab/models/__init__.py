"""Models assembled from :mod:`seqlab.layers`: sentiment classifier, RNN and Transformer translators."""
