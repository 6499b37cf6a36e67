"""The tools of notebooks 06-08 (word vectors, perplexity and stateful LSTMs, keras-hub's BERT
presets); the taught models are in :mod:`seqlab.lessons`.
"""

from seqlab.models import bert  # a namespace: bert.masked_lm_from_preset(...)
from seqlab.models.language_model import ResetStatesCallback, perplexity, reset_states
from seqlab.models.word2vec import analogy, analogy_rank, nearest_neighbours, normalize_rows, pca_2d

__all__ = [
    "bert",
    # word vectors (notebook 06)
    "analogy", "analogy_rank", "nearest_neighbours", "normalize_rows", "pca_2d",
    # language models (notebook 07)
    "ResetStatesCallback", "perplexity", "reset_states",
]
