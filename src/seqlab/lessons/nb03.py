"""Generated from notebooks/03_recurrent_cells.ipynb (its #@save cells) by
``python -m seqlab_instructor.lessons``: edit the notebook, not this file."""


import keras


def build_recurrent_classifier(vocab_size, units=64, *, embedding_dim=32, lstm=keras.layers.LSTM,
                               name="deep_bidirectional_lstm"):
    """Word ids -> embedding -> two bidirectional LSTM layers -> P(positive), from scratch.

    Args: `vocab_size` ids (0 = padding, masked); `units` per direction of each LSTM layer;
    `embedding_dim` of the learned word vectors; `lstm(units, return_sequences=...)` makes a
    recurrent layer (Keras's fused `LSTM` by default). Returns the model, not compiled.
    Input (batch, time) int64 ids, output (batch, 1).
    Example: `build_recurrent_classifier(2_000, 16)(np.ones((2, 5), "int64")).shape == (2, 1)`.
    """
    return keras.Sequential([
        keras.Input((None,), dtype="int64"),                                # word ids, 0 = padding
        keras.layers.Embedding(vocab_size, embedding_dim, mask_zero=True),  # + the mask
        keras.layers.Bidirectional(lstm(units, return_sequences=True)),     # layer 1
        keras.layers.Bidirectional(lstm(units)),                            # layer 2: last step
        keras.layers.Dense(1, activation="sigmoid"),                        # P(positive)
    ], name=name)
