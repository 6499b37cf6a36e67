"""Generated from notebooks/06_word_embeddings.ipynb (its #@save cells) by
``python -m seqlab_instructor.lessons``: edit the notebook, not this file."""


import keras
import numpy as np

from seqlab.lessons import ConfigFromArguments


@keras.saving.register_keras_serializable(package="seqlab.nb06")
class SkipGram(ConfigFromArguments, keras.Model):
    """Skip-gram with negative sampling: logits ``u_o · v_c`` for ``(centre, candidates)``.

    Args: ``vocab_size`` word ids, ``embedding_dim`` length of a vector. Call:
    ``(centre (batch,), candidates (batch, 1 + K))`` -> logits ``(batch, 1 + K)``; train with
    ``BinaryCrossentropy(from_logits=True)``. Example: ``SkipGram(50, 8)((c, o)).shape``.
    """

    def __init__(self, vocab_size, embedding_dim, **kwargs):
        super().__init__(**kwargs)
        self.vocab_size, self.embedding_dim = vocab_size, embedding_dim
        self.target_embedding = keras.layers.Embedding(vocab_size, embedding_dim)   # W: v_c
        self.context_embedding = keras.layers.Embedding(vocab_size, embedding_dim)  # U: u_o

    def build(self, input_shape=None):
        self.target_embedding.build((None,))
        self.context_embedding.build((None, None))

    def call(self, inputs):
        centre, candidates = inputs
        v = self.target_embedding(centre)                  # (batch, d)
        u = self.context_embedding(candidates)             # (batch, 1 + K, d)
        return keras.ops.sum(u * v[:, None, :], axis=-1)   # (batch, 1 + K): u_o · v_c

    @property
    def vectors(self):
        """The word vectors we keep, ``(vocab_size, embedding_dim)``: the centre table W."""
        return np.asarray(self.target_embedding.embeddings)


def build_word2vec_classifier(vectorizer, vectors, trainable=False, hidden_units=128):
    """Notebook 01's classifier on learned word vectors: strings ``(batch,)`` -> P(positive).

    Args: ``vectorizer`` a fitted ``TextVectorization``; ``vectors`` ``(its vocabulary, d)``;
    ``trainable`` whether the vectors are fine-tuned; ``hidden_units`` of the hidden layer.
    Example: ``build_word2vec_classifier(vectorizer, np.zeros((vocab, 8)))(np.array(["a b"]))``.
    """
    vectors = np.asarray(vectors, dtype="float32")
    return keras.Sequential([
        keras.Input(shape=(), dtype="string", name="review"),
        vectorizer,                                                           # (batch, T) ids
        keras.layers.Embedding(vectors.shape[0], vectors.shape[1], mask_zero=True,
                               embeddings_initializer=keras.initializers.Constant(vectors),
                               trainable=trainable, name="word_vectors"),    # (batch, T, d)
        keras.layers.GlobalAveragePooling1D(name="average"),                 # (batch, d)
        keras.layers.Dense(hidden_units, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),                         # P(positive)
    ], name="word2vec_classifier")
