"""Generated from notebooks/01_imdb_pretrained_embedding.ipynb (its #@save cells) by
``python -m seqlab_instructor.lessons``: edit the notebook, not this file."""


import keras
import tensorflow as tf

from seqlab.layers import NNLM_EN_DIM50, HubTextEmbedding


def build_sentiment_classifier(embedding=NNLM_EN_DIM50, hidden_units=128, *, trainable=False,
                               name="sentiment_classifier"):
    """The case study's model: review -> sentence embedding -> Dense(relu) -> P(positive).

    Args: `embedding`, a TF-Hub handle or a ready `HubTextEmbedding`; `hidden_units` of the
    hidden layer; `trainable`, whether a handle's module starts unfrozen.
    Returns the model, not compiled: (batch,) reviews -> (batch, 1) probabilities.
    Example: `build_sentiment_classifier(seqlab.layers.STANDIN_HANDLE).summary()`.
    """
    if not isinstance(embedding, keras.layers.Layer):
        embedding = HubTextEmbedding(embedding, trainable=trainable)
    return keras.Sequential([
        keras.Input(shape=(), dtype="string", name="review"),  # a batch of raw reviews
        embedding,                                            # review -> 50 numbers
        keras.layers.Dense(hidden_units, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),          # P(positive)
    ], name=name)


def predict_sentiment(model, reviews):
    """P(positive) of each review of a list of Python strings, as a 1-D NumPy array.

    `model.predict` takes a string tensor, not a list of strings (Keras's array adapters
    read numbers only).
    Example: `predict_sentiment(model, ["A wonderful film."])` -> array([0.93...]).
    """
    texts = tf.constant([reviews] if isinstance(reviews, str) else list(reviews), tf.string)
    return model.predict(texts, verbose=0).reshape(-1)
